package exactlyonce

import "slices"

// The resource service: every node offers seat reservations in named pools, each with
// Config.Capacity seats (paper §1: "make a flight and hotel reservation"). It is a
// transactional resource manager (EO-3): a stage's Execute calls Reserve inside the
// stage transaction; the reservation becomes durable on rm_commit and disappears on
// rm_rollback. Isolation is strict two-phase locking on the pool: a transaction holds
// the pool's lock from Reserve until its outcome, so the seat it was told at Execute is
// the seat it gets at commit. The service does not deduplicate: if a stage ran twice,
// two seats would be taken — exactly-once is the protocol's job, and EO-P2 checks it.

// Pool is one pool's committed state (stable, key "r/POOL").
type Pool struct {
	Taken   int32
	Holders []Holder
}

// Holder is one committed reservation: the stage that made it and its seat (0 = the
// pool was full; the attempt is still an operation that happened).
type Holder struct {
	Agent AgentID
	Hop   int32
	Seat  int32
}

// resPrepared is a prepared reservation (stable after rm_prepare, key "rp/N/S").
type resPrepared struct {
	Pool  string
	Agent AgentID
	Hop   int32
	Seat  int32
}

// resReserve performs Reserve for stage s in transaction t (EO-2 Execute): it takes
// the pool's lock and returns the seat the reservation will have if it commits. The
// caller checked the lock is free.
func (n *Node) resReserve(pool string, t Tid, s StageID) int32 {
	put(n, ownLocks, &n.locks, pool, t)
	n.out.Observe(ObsCall, ResCall{Node: n.id, Pool: pool, Agent: s.Agent, Hop: s.Hop, Tid: t})
	p := n.pools[pool]
	taken := int32(0)
	if p != nil {
		taken = p.Taken
	}
	if taken < n.cfg.Capacity {
		return taken + 1
	}
	return 0
}

// resPrepare is rm_prepare at the resource manager: the reservation goes to stable
// storage and the RM votes rm_yes.
func (n *Node) resPrepare(t Tid, r resPrepared) {
	put(n, ownResPrep, &n.resPrep, t, &r)
	n.out.Store(tidKey(preResPrep, t), r)
}

// resCommit is rm_commit: the reservation becomes part of the pool.
func (n *Node) resCommit(t Tid) {
	r := n.resPrep[t]
	if r == nil {
		panic("exactlyonce: rm_commit of an unprepared reservation")
	}
	p := n.pools[r.Pool]
	np := Pool{}
	if p != nil {
		np.Taken = p.Taken
		np.Holders = slices.Clone(p.Holders)
	}
	if r.Seat > 0 {
		np.Taken++
	}
	np.Holders = append(np.Holders, Holder{Agent: r.Agent, Hop: r.Hop, Seat: r.Seat})
	put(n, ownPools, &n.pools, r.Pool, &np)
	n.out.Store(prePool+r.Pool, np)
	del(n, ownResPrep, &n.resPrep, t)
	n.out.Delete(tidKey(preResPrep, t))
	n.out.Observe(ObsReturn, ResReturn{Node: n.id, Pool: r.Pool, Agent: r.Agent, Hop: r.Hop, Tid: t, Seat: r.Seat})
	n.resUnlock(r.Pool, t)
}

// resRollback is rm_rollback: a prepared reservation is removed from stable storage; an
// unprepared one only releases its lock.
func (n *Node) resRollback(pool string, t Tid) {
	if r := n.resPrep[t]; r != nil {
		pool = r.Pool
		del(n, ownResPrep, &n.resPrep, t)
		n.out.Delete(tidKey(preResPrep, t))
	}
	n.out.Observe(ObsAbort, ResAbort{Node: n.id, Pool: pool, Tid: t})
	n.resUnlock(pool, t)
}

// resUnlock releases t's lock on pool and lets the first waiting worker in.
func (n *Node) resUnlock(pool string, t Tid) {
	if l, ok := n.locks[pool]; !ok || l != t {
		return
	}
	del(n, ownLocks, &n.locks, pool)
	for len(n.waiters[pool]) > 0 {
		s := n.waiters[pool][0]
		put(n, ownWaiters, &n.waiters, pool, n.waiters[pool][1:])
		if n.maybeBegin(s) {
			n.out.Cover(ruleLockHandoff)
			break
		}
	}
	if len(n.waiters[pool]) == 0 {
		del(n, ownWaiters, &n.waiters, pool)
	}
}

// resForgetWaiter removes stage s from every wait list (it stopped being worker).
func (n *Node) resForgetWaiter(s StageID) {
	for pool, ws := range n.waiters {
		if i := slices.Index(ws, s); i >= 0 {
			put(n, ownWaiters, &n.waiters, pool, slices.Delete(slices.Clone(ws), i, i+1))
			if len(n.waiters[pool]) == 0 {
				del(n, ownWaiters, &n.waiters, pool)
			}
		}
	}
}
