package exactlyonce

import (
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// The transaction manager (EO-3): an X/Open-DTP-like TM running two-phase commit with
// presumed abort. The coordinator of a stage transaction is the worker's TM; its
// participants are the local resource managers — the input-queue manager (the Get),
// the resource service (the Execute's reservation) and the orchestrator — and the
// queue managers of the next stage's nodes (the Puts). Local RMs are called through
// the rm_prepare / rm_commit / rm_rollback functions of this file; remote ones through
// Prepare / Commit / Abort messages.
//
// Crash tolerance: the commit decision is logged (key "c/N/S") in the same atomic step
// as the local rm_commits and before any COMMIT leaves; it is re-sent until every
// remote participant ACKs, then deleted. Aborts are not logged: a participant that
// asks about a Tid the coordinator neither runs nor has a commit record for is told to
// abort (presumed abort). A coordinator crash in phase 1 therefore aborts the
// transaction.

// abortReason says why a stage transaction aborted, which decides what the worker
// does next.
type abortReason uint8

const (
	// abortTimeout: phase 1 did not finish within Timing.Prepare. Restart (EO-6).
	abortTimeout abortReason = iota + 1
	// abortRemoteNo: a next-stage queue manager voted rm_no. Restart.
	abortRemoteNo
	// abortOrchNo: the orchestrator returned rm_no because a majority became
	// impossible. The node becomes an observer (EO-5).
	abortOrchNo
	// abortGaveUp: the orchestrator gave up on HIGHER_PRIO. Observer (EO-5, EO-8).
	abortGaveUp
	// abortGiveUp: the local voter got FORGET from another orchestrator: the stage is
	// done elsewhere (EO-6).
	abortGiveUp
)

// String names the reason in observations (TxEnded.Why).
func (r abortReason) String() string {
	switch r {
	case abortTimeout:
		return "timeout"
	case abortRemoteNo:
		return "remote-no"
	case abortOrchNo:
		return "orch-no"
	case abortGaveUp:
		return "gave-up"
	case abortGiveUp:
		return "give-up"
	}
	return "?"
}

// tx is a stage transaction coordinated by this node (volatile). It also holds the
// orchestrator's volatile vote sets (EO-5), since the orchestrator runs one
// transaction per stage at a time.
type tx struct {
	tid   Tid
	stage StageID
	rec   StageRecord // this stage's record (the voters)
	last  bool        // the agent's last stage: no Put
	next  StageRecord // the next stage's record (the Put), unless last
	agent Agent       // the agent as Put onward

	remote    []sim.NodeID // remote participants (next-stage nodes other than this one)
	remoteYes []sim.NodeID
	remoteNo  bool
	localPut  bool // this node is a next-stage node too
	pool      string
	res       Result // what Execute produced
	executing bool   // Execute has not finished (Config.Work)

	// orchVote is the orchestrator's rm_prepare answer: 0 pending, +1 rm_yes (Ready),
	// -1 rm_no (it gave up and already sent its UN_VOTEs).
	orchVote int8
	yes      []sim.NodeID // YesVotes
	no       []sim.NodeID // NoVotes
	cond     []condVote   // CondYesVotes
}

type condVote struct {
	voter sim.NodeID
	set   []sim.NodeID
}

// kick asks for a stage transaction to begin for s once the current call's other work
// is done (so a begin never runs in the middle of another component's step).
func (n *Node) kick(s StageID) {
	n.local = append(n.local, localMsg{kickMsg{s}})
}

type kickMsg struct{ s StageID }

func (kickMsg) Kind() string { return "kick" }

// maybeBegin begins a stage transaction for s if this node is the stage's worker, is
// not running one, and the stage's pool is free (else it queues for the lock). It
// reports whether a transaction began.
func (n *Node) maybeBegin(s StageID) bool {
	e := n.queue[s]
	sl := n.sel[s]
	if e == nil || sl == nil || sl.role != RoleWorker || n.txs[s] != nil {
		return false
	}
	if n.bound(n.attempts, s) {
		return false
	}
	pool := e.Agent.Itinerary.Stages[s.Hop].Pool
	if pool != "" {
		if _, locked := n.locks[pool]; locked {
			n.out.Cover(ruleLockWait)
			if !slices.Contains(n.waiters[pool], s) {
				put(n, ownWaiters, &n.waiters, pool, append(slices.Clone(n.waiters[pool]), s))
			}
			return false
		}
	}
	n.begin(s, e, pool)
	return true
}

// begin runs a stage transaction (EO-2): Begin_Transaction; Get(Agent);
// Execute(Agent); Put(Agent, StageRecord) to all nodes of the next stage; Commit.
func (n *Node) begin(s StageID, e *queueEntry, pool string) {
	n.out.Cover(ruleBegin)
	put(n, ownAttempts, &n.attempts, s, n.attempts[s]+1)
	n.storeBounds()
	n.seq++
	n.out.Store(keySeq, n.seq)
	t := Tid{Node: n.id, Seq: n.seq}
	x := &tx{tid: t, stage: s, rec: e.Record, pool: pool}
	n.txsW()[s] = x
	n.out.Observe(ObsBegin, Began{Stage: s, Tid: t, Node: n.id})

	// Get: the agent is read from the input queue; the queue manager removes it when
	// the transaction commits (rm_commit) and leaves it on rollback.
	a := e.Agent
	// Execute: the stage's operation on the local resource service.
	res := Result{Hop: s.Hop, Node: n.id, Pool: pool, Seat: -1}
	if pool != "" {
		res.Seat = n.resReserve(pool, t, s)
	}
	x.agent = Agent{ID: a.ID, Itinerary: a.Itinerary, Hop: s.Hop + 1,
		Results: append(slices.Clone(a.Results), res)}
	x.res = res
	x.last = int(s.Hop)+1 >= len(a.Itinerary.Stages)
	if n.cfg.Work > 0 {
		// Execute takes time: the stage transaction holds its locks meanwhile, and a
		// crash loses it without a trace beyond the lock (it never voted).
		x.executing = true
		n.out.SetTimer(stageTimer(tExec, s), n.cfg.Work)
		return
	}
	n.putAndCommit(x)
}

func (n *Node) tmOnExecDone(s StageID) {
	if x := n.txs[s]; x != nil && x.executing {
		x = n.txW(s)
		x.executing = false
		n.putAndCommit(x)
	}
}

// putAndCommit ends Execute: Put (EO-2) the agent and the next stage's record to
// every next-stage node, then Commit (phase 1 of 2PC, EO-3).
func (n *Node) putAndCommit(x *tx) {
	s := x.stage
	if x.last {
		n.out.Cover(ruleLast)
	} else {
		n.out.Cover(rulePutAll)
		x.next = makeRecord(StageID{Agent: s.Agent, Hop: s.Hop + 1}, n.nextNodes(s, x.agent))
		for _, p := range x.next.NodeIDs() {
			if p == n.id {
				x.localPut = true
			} else {
				x.remote = append(x.remote, p)
			}
		}
	}
	n.tmPrepare(x, x.res)
}

// nextNodes chooses the Put targets for the stage after s (EO-1, EO-2; paper §3 fn. 4).
func (n *Node) nextNodes(s StageID, a Agent) []StageNode {
	all := a.Itinerary.Stages[s.Hop+1].Nodes
	q := PutQuery{Next: all, Simple: n.cfg.Simple, Static: n.cfg.StaticNext}
	if len(n.suspects) > 0 {
		for _, sn := range all {
			if n.suspects[sn.Node] {
				q.Suspects = append(q.Suspects, sn.Node)
			}
		}
		slices.Sort(q.Suspects)
	}
	got := n.cfg.Policy.putTargets(q)
	switch {
	case n.cfg.Simple:
		n.out.Cover(ruleSimplePut) // EO-1: one node per stage, the highest-priority one
	case len(got) < len(all):
		n.out.Cover(rulePutOnFly)
	case len(q.Suspects) > 0 && !n.cfg.StaticNext:
		n.out.Cover(rulePutAllAnd)
	}
	return got
}

// tmPrepare sends rm_prepare to every participant.
func (n *Node) tmPrepare(x *tx, res Result) {
	s, t := x.stage, x.tid
	n.out.Observe(ObsPrepare, Preparing{Stage: s, Tid: t, Node: n.id})
	for _, p := range x.remote {
		n.send(p, Prepare{Stage: s, Tid: t, Record: x.next, Agent: x.agent})
	}
	if x.localPut && !n.participantPrepare(n.id, t, x.next, x.agent) {
		x.remoteNo = true
	}
	if x.pool != "" {
		n.resPrepare(t, resPrepared{Pool: x.pool, Agent: s.Agent, Hop: s.Hop, Seat: res.Seat})
	}
	// The queue manager's Get is always preparable (rm_yes).
	if n.cfg.Simple {
		n.out.Cover(ruleSimpleCommit)
		x.orchVote = 1
	} else {
		n.orchPrepare(x) // EO-3: the orchestrator is one more resource manager
	}
	n.out.SetTimer(stageTimer(tPrepare, s), n.cfg.Timing.Prepare)
	n.tmCheck(x)
}

// tmCheck decides once every participant has voted.
func (n *Node) tmCheck(x *tx) {
	if n.txs[x.stage] != x || x.orchVote < 0 {
		return
	}
	if x.remoteNo {
		n.out.Cover(ruleRemoteNo)
		n.tmAbort(x, abortRemoteNo)
		return
	}
	if x.orchVote > 0 && len(x.remoteYes) == len(x.remote) {
		n.tmCommit(x)
	}
}

// tmCommit logs the commit decision and performs phase 2 (EO-3).
func (n *Node) tmCommit(x *tx) {
	s, t := x.stage, x.tid
	n.out.Cover(ruleCommit)
	if len(x.remote) > 0 {
		c := &commitRecord{Stage: s, Pending: slices.Clone(x.remote)}
		put(n, ownCommitLog, &n.commitLog, t, c)
		if n.cfg.Policy.logsCommit(t) {
			n.out.Store(tidKey(preCommit, t), *c)
		}
		n.armResend(tidTimer(tCommit, t), n.cfg.Timing.CommitResend)
	}
	obs := Committed{Stage: s, Tid: t, Node: n.id, Record: x.rec.NodeIDs(), Last: x.last, Agent: x.agent}
	if !x.last {
		obs.Next = x.next.NodeIDs()
	}
	n.out.Observe(ObsCommit, obs)
	// rm_commit at every local resource manager, atomically with the decision.
	if x.pool != "" {
		n.resCommit(t)
	}
	del(n, ownQueue, &n.queue, s) // the queue manager's Get: the agent leaves the input queue
	n.storeQueue(s)
	if !n.cfg.Simple {
		n.orchCommit(x) // EO-6
	}
	n.endTx(x, true, "")
	n.selStop(s)
	if x.localPut {
		n.participantCommit(t)
	}
	for _, p := range x.remote {
		n.send(p, Commit{Stage: s, Tid: t})
	}
	if x.last {
		n.out.Observe(ObsDone, Done{Agent: s.Agent, Node: n.id, Results: x.agent.Results})
	}
}

// tmAbort rolls the transaction back at every participant.
func (n *Node) tmAbort(x *tx, why abortReason) {
	s, t := x.stage, x.tid
	if n.txs[s] != x {
		return
	}
	for _, p := range x.remote {
		n.send(p, Abort{Stage: s, Tid: t}) // presumed abort: a courtesy
	}
	if x.pool != "" {
		n.resRollback(x.pool, t)
	}
	if x.localPut {
		n.participantAbort(t)
	}
	if !n.cfg.Simple {
		n.orchRollback(x)
	}
	n.endTx(x, false, why.String())
	switch why {
	case abortTimeout, abortRemoteNo:
		// EO-6: "Then the orchestrator's node restarts the transaction."
		if sl := n.sel[s]; sl != nil && sl.role == RoleWorker && !n.bound(n.attempts, s) {
			n.out.Cover(ruleRetry)
			d := n.cfg.Timing.Retry
			n.out.SetTimer(stageTimer(tRetry, s), d+n.jitter(d))
		}
	case abortOrchNo:
		n.becomeObserver(s) // EO-5: the node changes from the worker to the observer role
	}
}

func (n *Node) endTx(x *tx, committed bool, why string) {
	n.out.Observe(ObsTxEnd, TxEnded{Stage: x.stage, Tid: x.tid, Node: n.id, Committed: committed, Why: why})
	n.out.CancelTimer(stageTimer(tExec, x.stage))
	n.out.CancelTimer(stageTimer(tPrepare, x.stage))
	n.out.CancelTimer(stageTimer(tVote, x.stage))
	delOwn(n, ownTxs, &n.txs, x.stage, (*tx).clone)
}

func (n *Node) workerOnRetry(s StageID) { n.maybeBegin(s) }

func (n *Node) tmOnPrepareTimeout(s StageID) {
	x := n.txW(s)
	if x == nil {
		return
	}
	n.out.Cover(rulePrepTimeout)
	for _, p := range x.remote {
		if !slices.Contains(x.remoteYes, p) {
			put(n, ownSuspects, &n.suspects, p, true)
		}
	}
	n.tmAbort(x, abortTimeout)
}

func (n *Node) txByTid(t Tid) *tx {
	for _, x := range n.txs { // at most one match: the order does not matter
		if x.tid == t {
			return x
		}
	}
	return nil
}

// onPrepared collects a remote participant's vote.
func (n *Node) onPrepared(from sim.NodeID, m Prepared) {
	x := n.txByTid(m.Tid)
	if x == nil {
		if m.Yes && n.commitLog[m.Tid] == nil {
			// A late rm_yes for a transaction already aborted: tell the participant
			// at once instead of waiting for its STATUS.
			n.out.Cover(ruleLatePrepared)
			n.send(from, Abort{Stage: m.Stage, Tid: m.Tid})
		}
		return
	}
	if !slices.Contains(x.remote, from) {
		return
	}
	x = n.txW(x.stage) // modified below
	if m.Yes {
		x.remoteYes = addNode(x.remoteYes, from)
	} else {
		x.remoteNo = true
	}
	n.tmCheck(x)
}

func (n *Node) onCommitAck(from sim.NodeID, m CommitAck) {
	c := n.commitLog[m.Tid]
	if c == nil {
		return
	}
	nc := *c // records are not modified in place (see Clone)
	nc.Pending = removeNode(c.Pending, from)
	if len(nc.Pending) == 0 {
		n.out.Cover(ruleCommitAcked)
		del(n, ownCommitLog, &n.commitLog, m.Tid)
		n.out.Delete(tidKey(preCommit, m.Tid))
		n.out.CancelTimer(tidTimer(tCommit, m.Tid))
		return
	}
	put(n, ownCommitLog, &n.commitLog, m.Tid, &nc)
	n.out.Store(tidKey(preCommit, m.Tid), nc)
}

func (n *Node) tmOnCommitTimer(t Tid) {
	c := n.commitLog[t]
	if c == nil {
		return
	}
	n.out.Cover(ruleCommitResend)
	for _, p := range c.Pending {
		n.send(p, Commit{Stage: c.Stage, Tid: t})
	}
	n.rearm(tidTimer(tCommit, t), n.cfg.Timing.CommitResend)
}

// onStatus answers an in-doubt participant: commit if logged, nothing while phase 1
// runs, abort otherwise (presumed abort).
func (n *Node) onStatus(from sim.NodeID, m Status) {
	switch n.cfg.Policy.status(StatusQuery{Stage: m.Stage, Tid: m.Tid, Logged: n.commitLog[m.Tid] != nil, Running: n.txByTid(m.Tid) != nil}) {
	case StatusCommit:
		n.out.Cover(ruleStatusCommit)
		n.send(from, Commit(m))
	case StatusWait:
		n.out.Cover(ruleStatusWait)
	case StatusAbort:
		n.out.Cover(ruleStatusAbort)
		n.send(from, Abort(m))
	}
}

// tmRecover is the TM's restart: logged commits are re-sent; prepared local resource
// reservations without a logged commit roll back (presumed abort). (Local RMs commit
// in the same atomic step as the log write, so a logged commit never leaves a local RM
// prepared.)
func (n *Node) tmRecover() {
	for _, t := range sortedTids(n.commitLog) {
		n.out.Cover(ruleRecoverCommit)
		n.tmOnCommitTimer(t)
	}
	for _, t := range sortedTids(n.resPrep) {
		n.out.Cover(ruleRecoverRes)
		n.resRollback("", t)
	}
}

// ---- participant side: the next-stage queue manager (EO-2, EO-3) ----

// participantPrepare is rm_prepare of a Put at this node's queue manager: the agent
// and the stage record go to stable storage as a prepared Put. It votes rm_no only if
// the stage is already Active here (a second Put of one stage: impossible unless the
// protocol is broken).
func (n *Node) participantPrepare(coord sim.NodeID, t Tid, rec StageRecord, a Agent) bool {
	if _, ok := n.queue[rec.ID]; ok {
		n.out.Cover(rulePrepareNo)
		return false
	}
	if n.cfg.Policy.activatesOnPrepare(rec) {
		n.activate(rec, a)
		return true
	}
	n.out.Cover(rulePrepare)
	p := &preparedPut{Coord: coord, Record: rec, Agent: a}
	put(n, ownPrepared, &n.prepared, t, p)
	n.out.Store(tidKey(prePrep, t), *p)
	n.out.Observe(ObsPut, PutChange{Stage: rec.ID, Tid: t, Node: n.id, Coord: coord, State: PutPrepared})
	if !n.cfg.NoRecoveryTimers {
		n.out.SetTimer(tidTimer(tStatus, t), n.cfg.Timing.Status)
	}
	return true
}

func (n *Node) onPrepare(from sim.NodeID, m Prepare) {
	yes := n.participantPrepare(from, m.Tid, m.Record, m.Agent)
	n.send(from, Prepared{Stage: m.Stage, Tid: m.Tid, Yes: yes})
}

// participantCommit is rm_commit of a Put: the stage becomes Active here (EO-4).
func (n *Node) participantCommit(t Tid) {
	p := n.prepared[t]
	if p == nil {
		return
	}
	n.out.Cover(rulePutCommit)
	del(n, ownPrepared, &n.prepared, t)
	n.out.Delete(tidKey(prePrep, t))
	n.out.CancelTimer(tidTimer(tStatus, t))
	n.out.Observe(ObsPut, PutChange{Stage: p.Record.ID, Tid: t, Node: n.id, Coord: p.Coord, State: PutCommitted})
	n.activate(p.Record, p.Agent)
}

func (n *Node) participantAbort(t Tid) {
	if n.prepared[t] != nil {
		n.out.Cover(rulePutAbort)
	}
	n.participantEnd(t, PutAborted)
}

// participantEnd removes the prepared Put of t without activating it (rm_rollback,
// or a drop on FORGET), observed as state.
func (n *Node) participantEnd(t Tid, state string) {
	p := n.prepared[t]
	if p == nil {
		return
	}
	del(n, ownPrepared, &n.prepared, t)
	n.out.Delete(tidKey(prePrep, t))
	n.out.CancelTimer(tidTimer(tStatus, t))
	n.out.Observe(ObsPut, PutChange{Stage: p.Record.ID, Tid: t, Node: n.id, Coord: p.Coord, State: state})
}

func (n *Node) onCommit(from sim.NodeID, m Commit) {
	n.participantCommit(m.Tid)
	n.send(from, CommitAck(m))
}

func (n *Node) onAbort(m Abort) { n.participantAbort(m.Tid) }

func (n *Node) participantOnStatusTimer(t Tid) {
	p := n.prepared[t]
	if p == nil {
		return
	}
	n.out.Cover(ruleStatusAsk)
	prev := StageID{Agent: p.Record.ID.Agent, Hop: p.Record.ID.Hop - 1}
	n.send(p.Coord, Status{Stage: prev, Tid: t})
	n.rearm(tidTimer(tStatus, t), n.cfg.Timing.Status)
}

// participantDropStage drops every prepared Put of stage s (on FORGET: the stage
// committed elsewhere and is over).
func (n *Node) participantDropStage(s StageID) {
	for _, t := range sortedTids(n.prepared) {
		if n.prepared[t].Record.ID == s {
			n.out.Cover(ruleForgetDrop)
			n.participantEnd(t, PutDropped)
		}
	}
}

// activate makes a stage Active here: the record and the agent are in the input
// queue (EO-4). The highest-priority node becomes the worker, the others observers
// (EO-8); in the simple protocol the single node is the worker.
func (n *Node) activate(rec StageRecord, a Agent) {
	s := rec.ID
	if _, ok := n.queue[s]; ok {
		return
	}
	put(n, ownQueue, &n.queue, s, &queueEntry{Record: rec, Agent: a})
	n.storeQueue(s)
	n.out.Observe(ObsActive, Activated{Stage: s, Node: n.id})
	switch {
	case n.cfg.Simple:
		n.becomeWorker(s, false)
	case rec.Worker() == n.id:
		n.out.Cover(ruleInitialWorker)
		n.becomeWorker(s, false)
	default:
		n.out.Cover(ruleInitialObserver)
		n.becomeObserver(s)
	}
}

// onLaunch stores a launched agent in its home queue: stage 0 becomes Active and the
// home node, its only node, is its worker.
func (n *Node) onLaunch(m Launch) {
	a := m.Agent
	s := StageID{Agent: a.ID, Hop: 0}
	if len(a.Itinerary.Stages) == 0 || a.Itinerary.Home() != n.id {
		panic("exactlyonce: agent launched at a node other than its home")
	}
	if _, ok := n.queue[s]; ok {
		return
	}
	a.Hop = 0
	n.out.Cover(ruleLaunch)
	n.out.Observe(ObsAccepted, Accepted{Agent: a.ID, Stages: len(a.Itinerary.Stages)})
	n.activate(makeRecord(s, a.Itinerary.Stages[0].Nodes), a)
}
