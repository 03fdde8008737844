package exactlyonce

import (
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// The voter (paper §4): every stage node votes on the stage transactions of the
// stage's orchestrators. Its stable state is the stage state (Active = the stage
// record is in the input queue) and OrchSet, the orchestrators it voted (cond)yes for
// (EO-4, key "v/A/H", stored only when non-empty). Entries carry the Tid the vote was
// given for, so an UN_VOTE for an older transaction of the same orchestrator does not
// withdraw a newer vote.

// voterOnVote answers VOTE(StageId, Tid, OrchId) (EO-5).
func (n *Node) voterOnVote(m Vote) {
	s := m.Stage
	e := n.queue[s]
	if e == nil || !e.Record.Has(m.Orch) {
		// Only the voter of an Active stage votes. A stage not (yet) Active here is
		// either forgotten (it committed) or its Put is still in doubt; the
		// orchestrator re-sends VOTE.
		n.out.Cover(ruleVoteInactive)
		return
	}
	rec := e.Record
	var others []VoteEntry
	for _, v := range n.orchSet[s] {
		if v.Orch != m.Orch {
			others = append(others, v)
		}
	}
	d := n.cfg.Policy.vote(Ballot{Record: rec, Self: n.id, Orch: m.Orch, OrchSet: others})
	switch d.Answer {
	case AnswerNo:
		// EO-5: OrchId has a lower priority than N: NO.
		n.out.Cover(ruleNo)
		n.send(m.Orch, No{Stage: s, Tid: m.Tid, Voter: n.id})
		return
	case AnswerAskLocal:
		// EO-5: N is this node: HIGHER_PRIO to the local orchestrator.
		if n.orchHigherPrio(s) {
			n.out.Cover(ruleAlreadyDone)
			n.send(m.Orch, No{Stage: s, Tid: m.Tid, Voter: n.id}) // ALREADY_DONE → NO
			return
		}
		if len(d.Keep) == 0 {
			n.out.Cover(ruleGaveUpYes)
		} else {
			n.out.Cover(ruleGaveUpCond)
		}
		// GAVE_UP → COND_YES(OrchSet − {N}); the local orchestrator's vote is
		// withdrawn (with nothing else left, the answer is a plain YES).
	}
	n.voterRecord(s, rec, withVote(d.Keep, m.Orch, m.Tid, rec))
	if d.Answer == AnswerYes || len(d.Keep) == 0 {
		// EO-5: OrchSet empty (or holding only OrchId itself): YES.
		if d.Answer != AnswerAskLocal {
			n.out.Cover(ruleYes)
		}
		n.send(m.Orch, Yes{Stage: s, Tid: m.Tid, Voter: n.id})
		return
	}
	// EO-5: OrchId higher than N, N not this node: COND_YES(OrchSet), then add.
	if d.Answer != AnswerAskLocal {
		n.out.Cover(ruleCondYes)
	}
	cond := voteNodes(d.Keep)
	n.send(m.Orch, CondYes{Stage: s, Tid: m.Tid, OrchSet: cond, Voter: n.id})
	n.out.Observe(ObsCondYes, CondYesGiven{Stage: s, Voter: n.id, Orch: m.Orch, Cond: cond})
}

// withVote returns set plus (orch, t), sorted by priority (highest first).
func withVote(set []VoteEntry, orch sim.NodeID, t Tid, rec StageRecord) []VoteEntry {
	out := make([]VoteEntry, 0, len(set)+1)
	for _, v := range set {
		if v.Orch != orch {
			out = append(out, v)
		}
	}
	out = append(out, VoteEntry{Orch: orch, Tid: t})
	slices.SortFunc(out, func(a, b VoteEntry) int { return int(rec.Rank(a.Orch) - rec.Rank(b.Orch)) })
	return out
}

func voteNodes(set []VoteEntry) []sim.NodeID {
	out := make([]sim.NodeID, len(set))
	for i, v := range set {
		out[i] = v.Orch
	}
	return out
}

// voterRecord stores a new OrchSet and starts waiting for FORGET or UN_VOTE (EO-7).
func (n *Node) voterRecord(s StageID, rec StageRecord, set []VoteEntry) {
	put(n, ownOrchSet, &n.orchSet, s, set)
	n.storeOrchSet(s)
	if len(set) > 0 && !n.inq[s] && !n.cfg.NoRecoveryTimers {
		put(n, ownInq, &n.inq, s, true)
		n.out.SetTimer(stageTimer(tInquiry, s), n.cfg.Timing.Inquiry)
	}
}

// voterOnUnVote withdraws the vote given to OrchId for Tid (EO-6).
func (n *Node) voterOnUnVote(m UnVote) {
	set := n.orchSet[m.Stage]
	i := slices.IndexFunc(set, func(v VoteEntry) bool { return n.cfg.Policy.unVoteMatches(v, m) })
	if i < 0 {
		if slices.ContainsFunc(set, func(v VoteEntry) bool { return v.Orch == m.Orch }) {
			n.out.Cover(ruleUnVoteOther) // a vote of another transaction of OrchId
		}
		return
	}
	n.out.Cover(ruleUnVote)
	put(n, ownOrchSet, &n.orchSet, m.Stage, slices.Delete(slices.Clone(set), i, i+1))
	n.storeOrchSet(m.Stage)
	if len(n.orchSet[m.Stage]) == 0 {
		del(n, ownInq, &n.inq, m.Stage)
		n.out.CancelTimer(stageTimer(tInquiry, m.Stage))
	}
}

// voterOnForget handles FORGET(StageId, OrchId) (EO-6): atomically the stage becomes
// Unknown here — stage record and agent leave the input queue, OrchSet is dropped —
// ACK goes back, and a different local orchestrator gets GIVE_UP.
func (n *Node) voterOnForget(m Forget) {
	s := m.Stage
	// A Put of this stage still in doubt here is dropped: the stage is done, and a
	// later COMMIT must not bring it back (it finds nothing prepared and is only
	// ACKed).
	n.participantDropStage(s)
	_, active := n.queue[s]
	_, voted := n.orchSet[s]
	if active || voted {
		n.out.Cover(ruleForget)
		del(n, ownQueue, &n.queue, s)
		n.storeQueue(s)
		del(n, ownOrchSet, &n.orchSet, s)
		n.storeOrchSet(s)
		del(n, ownInq, &n.inq, s)
		n.out.CancelTimer(stageTimer(tInquiry, s))
		n.out.Observe(ObsForgot, Forgot{Stage: s, Node: n.id})
	}
	n.send(m.Orch, ForgetAck{Stage: s, Voter: n.id})
	if m.Orch != n.id {
		n.orchGiveUpLocal(s) // GIVE_UP
	}
	n.selStop(s)
}

// voterInquire sends INQUIRY to every orchestrator in OrchSet (EO-7) and arms the
// inquiry timer for the next round.
func (n *Node) voterInquire(s StageID, again bool) {
	for _, v := range n.orchSet[s] {
		n.send(v.Orch, Inquiry{Stage: s, Tid: v.Tid, Voter: n.id})
	}
	if again && !n.spend() {
		return
	}
	put(n, ownInq, &n.inq, s, true)
	n.out.SetTimer(stageTimer(tInquiry, s), n.cfg.Timing.Inquiry)
}

func (n *Node) voterOnInquiryTimer(s StageID) {
	del(n, ownInq, &n.inq, s)
	if len(n.orchSet[s]) > 0 {
		n.out.Cover(ruleInquiry)
		n.voterInquire(s, true)
	}
}
