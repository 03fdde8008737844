package exactlyonce

import (
	"encoding/binary"
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// Clone implements sim.Cloner: a deep copy sharing only the immutable configuration
// and the immutable values (agents, stage records, vote sets are never modified in
// place once stored).
func (n *Node) Clone() sim.Node {
	c := &Node{cfg: n.cfg, id: n.id, started: n.started, seq: n.seq, resends: n.resends}
	c.queue = cloneMap(n.queue, func(e *queueEntry) *queueEntry { x := *e; return &x })
	c.orchSet = cloneMap(n.orchSet, func(v []VoteEntry) []VoteEntry { return v })
	c.orch = cloneMap(n.orch, func(o *orchRecord) *orchRecord { x := *o; return &x })
	c.prepared = cloneMap(n.prepared, func(p *preparedPut) *preparedPut { x := *p; return &x })
	c.commitLog = cloneMap(n.commitLog, func(r *commitRecord) *commitRecord { x := *r; return &x })
	c.pools = cloneMap(n.pools, func(p *Pool) *Pool { x := *p; return &x })
	c.resPrep = cloneMap(n.resPrep, func(r *resPrepared) *resPrepared { x := *r; return &x })
	c.attempts = cloneMap(n.attempts, func(v int) int { return v })
	c.selections = cloneMap(n.selections, func(v int) int { return v })
	c.txs = cloneMap(n.txs, func(x *tx) *tx { return x.clone() })
	c.sel = cloneMap(n.sel, func(s *selection) *selection { x := *s; x.acks = slices.Clone(s.acks); return &x })
	c.locks = cloneMap(n.locks, func(t Tid) Tid { return t })
	c.waiters = cloneMap(n.waiters, func(w []StageID) []StageID { return slices.Clone(w) })
	c.suspects = cloneMap(n.suspects, func(b bool) bool { return b })
	c.inq = cloneMap(n.inq, func(b bool) bool { return b })
	return c
}

// cloneMap copies m with f applied to every value; an empty map becomes nil (see
// put).
func cloneMap[K comparable, V any](m map[K]V, f func(V) V) map[K]V {
	if len(m) == 0 {
		return nil
	}
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = f(v)
	}
	return c
}

func (x *tx) clone() *tx {
	c := *x
	c.remote = slices.Clone(x.remote)
	c.remoteYes = slices.Clone(x.remoteYes)
	c.yes = slices.Clone(x.yes)
	c.no = slices.Clone(x.no)
	c.cond = slices.Clone(x.cond)
	for i := range c.cond {
		c.cond[i].set = slices.Clone(x.cond[i].set)
	}
	return &c
}

// AppendState implements sim.StateEncoder. The encoding is injective — equal bytes
// mean equal nodes — because the model checker interns node objects by it (the walk
// test checks this on every state it sees). It covers the fields mirroring stable
// storage too, though the engines also fingerprint the storage itself.
func (n *Node) AppendState(b []byte) []byte {
	b = appendInt(appendInt(b, int64(n.id)), int64(n.resends))
	if !n.started {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(n.seq))
	b = appendInt(b, int64(len(n.queue)))
	for _, s := range sortedStages(n.queue) {
		b = n.queue[s].AppendState(appendStage(b, s))
	}
	b = appendInt(b, int64(len(n.orchSet)))
	for _, s := range sortedStages(n.orchSet) {
		b = appendStage(b, s)
		b = appendInt(b, int64(len(n.orchSet[s])))
		for _, v := range n.orchSet[s] {
			b = appendTid(appendInt(b, int64(v.Orch)), v.Tid)
		}
	}
	b = appendInt(b, int64(len(n.orch)))
	for _, s := range sortedStages(n.orch) {
		b = n.orch[s].AppendState(appendStage(b, s))
	}
	b = appendInt(b, int64(len(n.prepared)))
	for _, t := range sortedTids(n.prepared) {
		b = n.prepared[t].AppendState(appendTid(b, t))
	}
	b = appendInt(b, int64(len(n.commitLog)))
	for _, t := range sortedTids(n.commitLog) {
		b = n.commitLog[t].AppendState(appendTid(b, t))
	}
	pools := make([]string, 0, len(n.pools))
	for p := range n.pools {
		pools = append(pools, p)
	}
	slices.Sort(pools)
	b = appendInt(b, int64(len(pools)))
	for _, name := range pools {
		b = n.pools[name].AppendState(appendStr(b, name))
	}
	b = appendInt(b, int64(len(n.resPrep)))
	for _, t := range sortedTids(n.resPrep) {
		b = n.resPrep[t].AppendState(appendTid(b, t))
	}
	b = appendInt(b, int64(len(n.txs)))
	for _, s := range sortedStages(n.txs) {
		b = n.txs[s].appendState(b)
	}
	b = appendInt(b, int64(len(n.sel)))
	for _, s := range sortedStages(n.sel) {
		sl := n.sel[s]
		b = appendStage(b, s)
		b = append(b, byte(sl.role))
		b = appendNodes(b, sl.acks)
		b = appendInt(b, int64(sl.lastHeard))
	}
	b = appendInt(b, int64(len(n.attempts)))
	for _, s := range sortedStages(n.attempts) {
		b = appendStage(b, s)
		b = appendInt(b, int64(n.attempts[s]))
	}
	b = appendInt(b, int64(len(n.selections)))
	for _, s := range sortedStages(n.selections) {
		b = appendStage(b, s)
		b = appendInt(b, int64(n.selections[s]))
	}
	b = appendInt(b, int64(len(n.inq)))
	for _, s := range sortedStages(n.inq) {
		b = appendStage(b, s)
	}
	pools = make([]string, 0, len(n.locks)+len(n.waiters))
	for p := range n.locks {
		pools = append(pools, p)
	}
	for p := range n.waiters {
		if _, ok := n.locks[p]; !ok {
			pools = append(pools, p)
		}
	}
	slices.Sort(pools)
	b = appendInt(b, int64(len(pools)))
	for _, p := range pools {
		b = appendStr(b, p)
		t, ok := n.locks[p]
		b = appendBool(b, ok)
		b = appendTid(b, t)
		b = appendInt(b, int64(len(n.waiters[p])))
		for _, s := range n.waiters[p] {
			b = appendStage(b, s)
		}
	}
	sus := make([]sim.NodeID, 0, len(n.suspects))
	for s := range n.suspects {
		sus = append(sus, s)
	}
	slices.Sort(sus)
	return appendNodes(b, sus)
}

func (x *tx) appendState(b []byte) []byte {
	b = appendTid(b, x.tid)
	b = appendStage(b, x.stage)
	b = appendRecord(b, x.rec)
	b = appendBool(b, x.last)
	b = appendRecord(b, x.next)
	b = appendAgent(b, x.agent)
	b = appendNodes(b, x.remote)
	b = appendNodes(b, x.remoteYes)
	b = appendBool(b, x.remoteNo)
	b = appendBool(b, x.localPut)
	b = appendStr(b, x.pool)
	b = appendInt(b, int64(x.res.Hop))
	b = appendInt(b, int64(x.res.Node))
	b = appendStr(b, x.res.Pool)
	b = appendInt(b, int64(x.res.Seat))
	b = appendBool(b, x.executing)
	b = appendInt(b, int64(x.orchVote))
	b = appendNodes(b, x.yes)
	b = appendNodes(b, x.no)
	b = appendInt(b, int64(len(x.cond)))
	for _, c := range x.cond {
		b = appendInt(b, int64(c.voter))
		b = appendNodes(b, c.set)
	}
	return b
}

func appendInt(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStage(b []byte, s StageID) []byte {
	return appendInt(appendInt(b, int64(s.Agent)), int64(s.Hop))
}

func appendTid(b []byte, t Tid) []byte {
	return binary.AppendUvarint(appendInt(b, int64(t.Node)), uint64(t.Seq))
}

func appendNodes(b []byte, ns []sim.NodeID) []byte {
	b = appendInt(b, int64(len(ns)))
	for _, n := range ns {
		b = appendInt(b, int64(n))
	}
	return b
}

func appendRecord(b []byte, r StageRecord) []byte {
	b = appendStage(b, r.ID)
	b = appendInt(b, int64(len(r.Nodes)))
	for _, sn := range r.Nodes {
		b = appendInt(appendInt(b, int64(sn.Node)), int64(sn.Rank))
	}
	return b
}

func appendAgent(b []byte, a Agent) []byte {
	b = appendInt(appendInt(b, int64(a.ID)), int64(a.Hop))
	b = appendInt(b, int64(len(a.Itinerary.Stages)))
	for _, st := range a.Itinerary.Stages {
		b = appendStr(b, st.Pool)
		b = appendInt(b, int64(len(st.Nodes)))
		for _, sn := range st.Nodes {
			b = appendInt(appendInt(b, int64(sn.Node)), int64(sn.Rank))
		}
	}
	b = appendInt(b, int64(len(a.Results)))
	for _, r := range a.Results {
		b = appendInt(appendInt(appendInt(b, int64(r.Hop)), int64(r.Node)), int64(r.Seat))
		b = appendStr(b, r.Pool)
	}
	return b
}

// AppendState methods of the records kept in stable storage (sim.StateEncoder): the
// engines fingerprint every node's storage after each step, and these are several
// times faster than sim.AppendCanonical's reflection. Each encodes every field; the
// storage key fixes the record's type.

// AppendState implements sim.StateEncoder.
func (e queueEntry) AppendState(b []byte) []byte {
	return appendAgent(appendRecord(b, e.Record), e.Agent)
}

// AppendState implements sim.StateEncoder.
func (o orchRecord) AppendState(b []byte) []byte {
	return appendNodes(appendNodes(appendTid(append(b, byte(o.State)), o.Tid), o.Voters), o.Pending)
}

// AppendState implements sim.StateEncoder.
func (p preparedPut) AppendState(b []byte) []byte {
	return appendAgent(appendRecord(appendInt(b, int64(p.Coord)), p.Record), p.Agent)
}

// AppendState implements sim.StateEncoder.
func (c commitRecord) AppendState(b []byte) []byte {
	return appendNodes(appendStage(b, c.Stage), c.Pending)
}

// AppendState implements sim.StateEncoder.
func (r resPrepared) AppendState(b []byte) []byte {
	return appendInt(appendInt(appendInt(appendStr(b, r.Pool), int64(r.Agent)), int64(r.Hop)), int64(r.Seat))
}

// AppendState implements sim.StateEncoder.
func (p Pool) AppendState(b []byte) []byte {
	b = appendInt(appendInt(b, int64(p.Taken)), int64(len(p.Holders)))
	for _, h := range p.Holders {
		b = appendInt(appendInt(appendInt(b, int64(h.Agent)), int64(h.Hop)), int64(h.Seat))
	}
	return b
}

// AppendState implements sim.StateEncoder.
func (r boundRecord) AppendState(b []byte) []byte {
	for _, cs := range [][]stageCount{r.Attempts, r.Selections} {
		b = appendInt(b, int64(len(cs)))
		for _, c := range cs {
			b = appendInt(appendStage(b, c.Stage), int64(c.N))
		}
	}
	return appendInt(b, int64(r.Resends))
}
