package exactlyonce

import (
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// The orchestrator (paper §4): a resource manager at the worker that turns rm_prepare
// into a vote among the stage's voters, so that at most one stage transaction per
// stage commits. Its stable state is the transaction state Unknown / Ready / Committed
// (EO-4, key "o/A/H"); its vote sets are volatile (held in the tx).

type answer uint8

const (
	ansYes answer = iota + 1
	ansNo
	ansCond
)

// orchPrepare is rm_prepare at the orchestrator: phase 1 of the voting protocol
// begins (EO-5). VOTE goes to every voter of the stage, this node's included.
func (n *Node) orchPrepare(x *tx) {
	n.out.Cover(ruleVote)
	for _, v := range x.rec.NodeIDs() {
		n.send(v, Vote{Stage: x.stage, Tid: x.tid, Orch: n.id})
	}
	n.armResend(stageTimer(tVote, x.stage), n.cfg.Timing.VoteResend)
}

// orchOnVoteTimer re-sends VOTE to the voters without a definite answer (EO-5:
// "periodically resending the VOTE request to all stage nodes that have not yet
// answered"). Voters whose answer is a COND_YES not yet converted count as not
// answered: their OrchSet may have changed since.
func (n *Node) orchOnVoteTimer(s StageID) {
	x := n.txs[s]
	if x == nil || x.orchVote != 0 {
		return
	}
	n.out.Cover(ruleVoteResend)
	for _, v := range x.rec.NodeIDs() {
		if !slices.Contains(x.yes, v) && !slices.Contains(x.no, v) {
			n.send(v, Vote{Stage: s, Tid: x.tid, Orch: n.id})
		}
	}
	n.rearm(stageTimer(tVote, s), n.cfg.Timing.VoteResend)
}

// orchOnAnswer records a voter's YES, NO or COND_YES(set) for transaction t (EO-5).
func (n *Node) orchOnAnswer(s StageID, t Tid, voter sim.NodeID, a answer, set []sim.NodeID) {
	x := n.txs[s]
	if x == nil || x.tid != t {
		// A vote for a transaction this orchestrator no longer runs. Answer it as the
		// voter's INQUIRY would be answered (EO-7), at once.
		if a != ansNo {
			n.out.Cover(ruleStaleAnswer)
			n.orchOnInquiry(Inquiry{Stage: s, Tid: t, Voter: voter}, false)
		}
		return
	}
	x = n.txW(s) // modified below
	if x.orchVote != 0 {
		// Ready already. Keep later yes votes so phase 2 reaches those voters too.
		if a == ansYes {
			n.out.Cover(ruleLateYes)
			x.yes = addNode(x.yes, voter)
		} else if a == ansCond && !slices.Contains(x.yes, voter) {
			x.cond = setCond(x.cond, voter, set)
		}
		return
	}
	switch a {
	case ansYes:
		if slices.Contains(x.no, voter) {
			return
		}
		x.yes = addNode(x.yes, voter)
		x.cond = dropCond(x.cond, voter)
	case ansNo:
		if slices.Contains(x.yes, voter) {
			return // a YES is final for a Tid
		}
		x.cond = dropCond(x.cond, voter)
		x.no = addNode(x.no, voter)
	case ansCond:
		if slices.Contains(x.yes, voter) || slices.Contains(x.no, voter) {
			return
		}
		x.cond = setCond(x.cond, voter, set)
	}
	// EO-5: a COND_YES(V, S) becomes a YES once every node of S is in YesVotes;
	// checked whenever CondYesVotes or YesVotes change.
	for changed := true; changed; {
		changed = false
		for i, c := range x.cond {
			if n.cfg.Policy.condYesHolds(c.set, x.yes) {
				n.out.Cover(ruleCondConvert)
				x.yes = addNode(x.yes, c.voter)
				x.cond = slices.Delete(slices.Clone(x.cond), i, i+1)
				changed = true
				break
			}
		}
	}
	if a == ansCond && slices.ContainsFunc(x.cond, func(c condVote) bool { return c.voter == voter }) {
		n.out.Cover(ruleCondWait)
		if slices.ContainsFunc(set, func(v sim.NodeID) bool { return slices.Contains(x.yes, v) }) {
			n.out.Cover(ruleCondPartial) // some of its set voted YES, not all
		}
	}
	// The majority must include this node's own voter (see the package comment: the
	// paper's COND_YES conversion relies on a node's voter voting yes for a
	// higher-priority orchestrator only once its local orchestrator cannot become
	// Ready; an orchestrator Ready without its own voter breaks that).
	switch n.cfg.Policy.tally(Tally{Record: x.rec, Self: n.id, Yes: x.yes, No: x.no}) {
	case Ready:
		n.out.Cover(ruleReady)
		n.orchReady(x)
	case Impossible:
		// EO-5: a majority became impossible (at least half voted NO, or this node's
		// own voter, which holds a vote for a higher-priority orchestrator).
		switch {
		case 2*len(x.no) > len(x.rec.Nodes):
			n.out.Cover(ruleImpossible)
		case 2*len(x.no) == len(x.rec.Nodes):
			n.out.Cover(ruleTie)
		default:
			n.out.Cover(ruleOwnNo)
		}
		n.orchGiveUp(x, abortOrchNo)
	}
}

func setCond(cs []condVote, v sim.NodeID, set []sim.NodeID) []condVote {
	out := dropCond(cs, v)
	return append(out, condVote{voter: v, set: slices.Clone(set)})
}

func dropCond(cs []condVote, v sim.NodeID) []condVote {
	i := slices.IndexFunc(cs, func(c condVote) bool { return c.voter == v })
	if i < 0 {
		return cs
	}
	return slices.Delete(slices.Clone(cs), i, i+1)
}

// orchReady enters Ready and returns rm_yes to the TM (EO-5).
func (n *Node) orchReady(x *tx) {
	x.orchVote = 1
	put(n, ownOrch, &n.orch, x.stage, &orchRecord{State: OrchReady, Tid: x.tid, Voters: x.rec.NodeIDs()})
	n.storeOrch(x.stage)
	n.out.Observe(ObsOrch, OrchChange{Stage: x.stage, Node: n.id, Tid: x.tid, State: OrchReady})
	n.out.CancelTimer(stageTimer(tVote, x.stage))
	n.tmCheck(x)
}

// orchGiveUp returns rm_no: UN_VOTE to every voter in YesVotes ∪ CondYesVotes, forget
// the transaction (EO-5). The TM aborts it.
func (n *Node) orchGiveUp(x *tx, why abortReason) {
	n.orchUnVote(x)
	x.orchVote = -1
	n.tmAbort(x, why)
}

// orchUnVote sends UN_VOTE to the voters in YesVotes ∪ CondYesVotes (EO-5, EO-6) and
// empties the sets.
func (n *Node) orchUnVote(x *tx) {
	for _, v := range x.yes {
		n.sendUnVote(v, x.stage, x.tid)
	}
	for _, c := range x.cond {
		n.sendUnVote(c.voter, x.stage, x.tid)
	}
	x.yes, x.cond, x.no = nil, nil, nil
}

// orchRollback is rm_rollback (EO-6): Unknown, UN_VOTE to YesVotes ∪ CondYesVotes
// (unless the orchestrator itself gave up and did so already).
func (n *Node) orchRollback(x *tx) {
	if o := n.orch[x.stage]; o != nil && o.State == OrchReady && o.Tid == x.tid {
		n.out.Cover(ruleRollback)
		del(n, ownOrch, &n.orch, x.stage)
		n.storeOrch(x.stage)
		n.out.Observe(ObsOrch, OrchChange{Stage: x.stage, Node: n.id, Tid: x.tid, State: OrchUnknown})
	}
	if x.orchVote >= 0 {
		n.orchUnVote(x)
	}
	x.orchVote = -1
}

// orchCommit is rm_commit (EO-6): atomically Committed (and rm_ack), then FORGET to
// every voter of the stage, re-sent until each ACKs.
func (n *Node) orchCommit(x *tx) {
	n.out.Cover(ruleForgetSend)
	o := &orchRecord{State: OrchCommitted, Tid: x.tid, Pending: x.rec.NodeIDs()}
	put(n, ownOrch, &n.orch, x.stage, o)
	n.storeOrch(x.stage)
	n.out.Observe(ObsOrch, OrchChange{Stage: x.stage, Node: n.id, Tid: x.tid, State: OrchCommitted})
	for _, v := range o.Pending {
		n.send(v, Forget{Stage: x.stage, Orch: n.id})
	}
	n.armResend(stageTimer(tForget, x.stage), n.cfg.Timing.ForgetResend)
}

// orchOnForgetAck: once every voter ACKed, the transaction state becomes Unknown.
func (n *Node) orchOnForgetAck(m ForgetAck) {
	o := n.orch[m.Stage]
	if o == nil || o.State != OrchCommitted || !slices.Contains(o.Pending, m.Voter) {
		return
	}
	no := *o
	no.Pending = removeNode(o.Pending, m.Voter)
	if len(no.Pending) > 0 {
		put(n, ownOrch, &n.orch, m.Stage, &no)
		n.storeOrch(m.Stage)
		return
	}
	n.out.Cover(ruleForgetDone)
	del(n, ownOrch, &n.orch, m.Stage)
	n.storeOrch(m.Stage)
	n.out.CancelTimer(stageTimer(tForget, m.Stage))
	n.out.Observe(ObsOrch, OrchChange{Stage: m.Stage, Node: n.id, Tid: o.Tid, State: OrchUnknown})
}

func (n *Node) orchOnForgetTimer(s StageID) {
	o := n.orch[s]
	if o == nil || o.State != OrchCommitted {
		return
	}
	n.out.Cover(ruleForgetResend)
	for _, v := range o.Pending {
		n.send(v, Forget{Stage: s, Orch: n.id})
	}
	n.rearm(stageTimer(tForget, s), n.cfg.Timing.ForgetResend)
}

// orchOnInquiry answers a voter's INQUIRY (EO-7): Committed → FORGET; Ready with the
// voter's Tid → add it to YesVotes; voting still running for that Tid → ignore; no
// transaction with that Tid → UN_VOTE. asked is false when a stale vote, not an
// INQUIRY, is answered this way (orchOnAnswer).
func (n *Node) orchOnInquiry(m Inquiry, asked bool) {
	cover := func(r sim.Rule) {
		if asked {
			n.out.Cover(r)
		}
	}
	s := m.Stage
	o, x := n.orch[s], n.txs[s]
	q := InquiryQuery{Stage: s, Tid: m.Tid, Committed: o != nil && o.State == OrchCommitted,
		Running: x != nil && x.tid == m.Tid, Ready: x != nil && x.tid == m.Tid && x.orchVote > 0}
	switch n.cfg.Policy.inquiry(q) {
	case InquiryForget:
		cover(ruleInquiryCommitted)
		n.send(m.Voter, Forget{Stage: s, Orch: n.id})
	case InquiryJoin:
		cover(ruleInquiryReady)
		if x := n.txW(s); x != nil {
			x.yes = addNode(x.yes, m.Voter)
		}
	case InquiryIgnore:
		cover(ruleInquiryRunning)
	case InquiryUnVote:
		cover(ruleInquiryUnknown)
		n.sendUnVote(m.Voter, s, m.Tid)
	}
}

// sendUnVote sends UN_VOTE(stage, t) to voter v (and records it for the checkers).
func (n *Node) sendUnVote(v sim.NodeID, s StageID, t Tid) {
	if !n.cfg.Policy.withdrawsVote(v, s, t) {
		return
	}
	n.send(v, UnVote{Stage: s, Tid: t, Orch: n.id})
	n.out.Observe(ObsUnVote, UnVoteSent{Stage: s, Orch: n.id, Voter: v, Tid: t})
}

// orchHigherPrio is the local HIGHER_PRIO request (from this node's voter or
// selection monitor): ALREADY_DONE (true) if the stage's transaction is Ready or
// Committed; otherwise the orchestrator gives up — rm_no to the TM, UN_VOTE to its
// voters, forget — and the node becomes an observer (GAVE_UP, false). EO-5, EO-8.
func (n *Node) orchHigherPrio(s StageID) bool {
	if o := n.orch[s]; o != nil && (o.State == OrchReady || o.State == OrchCommitted) {
		return true
	}
	if x := n.txW(s); x != nil {
		n.out.Cover(ruleHigherPrioOut)
		n.orchGiveUp(x, abortGaveUp)
	}
	n.becomeObserver(s)
	return false
}

// orchGiveUpLocal is GIVE_UP from the local voter: another node committed the stage
// (EO-6). The orchestrator forgets its transaction and returns rm_no; no UN_VOTE is
// needed, every voter forgets the stage.
func (n *Node) orchGiveUpLocal(s StageID) {
	if x := n.txW(s); x != nil {
		n.out.Cover(ruleGiveUp)
		x.orchVote = -1
		x.yes, x.cond, x.no = nil, nil, nil
		if o := n.orch[s]; o != nil && o.State == OrchReady && o.Tid == x.tid {
			// Cannot happen while the protocol holds (only Unknown orchestrators get
			// GIVE_UP); handled like a rollback so the state stays consistent.
			del(n, ownOrch, &n.orch, s)
			n.storeOrch(s)
			n.out.Observe(ObsOrch, OrchChange{Stage: s, Node: n.id, Tid: x.tid, State: OrchUnknown})
		}
		n.tmAbort(x, abortGiveUp)
	}
}

// orchRecover is the orchestrator's restart (EO-7). Ready: the local TM has no logged
// commit for it (a logged commit would have made it Committed in the same step), so
// the outcome is abort: Unknown, and UN_VOTE to every voter of the stage (YesVotes
// was volatile). Committed: FORGET to the voters that have not ACKed.
func (n *Node) orchRecover() {
	for _, s := range sortedStages(n.orch) {
		o := n.orch[s]
		switch o.State {
		case OrchReady:
			n.out.Cover(ruleRecoverReady)
			del(n, ownOrch, &n.orch, s)
			n.storeOrch(s)
			n.out.Observe(ObsOrch, OrchChange{Stage: s, Node: n.id, Tid: o.Tid, State: OrchUnknown})
			for _, v := range o.Voters {
				n.sendUnVote(v, s, o.Tid)
			}
		case OrchCommitted:
			n.out.Cover(ruleRecoverCommitted)
			n.orchOnForgetTimer(s)
		}
	}
}
