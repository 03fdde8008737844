package exactlyonce

import (
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// Policy names the protocol's decision points as hooks: each field is consulted where
// the paper's rule decides something, and a nil field means the rule as specified
// (the exported function named in its comment). The zero Policy is the protocol.
// Setting a hook plants a deliberately broken variant, so tests can show that the
// checkers catch it; the scenario package's -p bug=NAME variants are built this way
// (scenarios/exactlyonce/bugs.go). Hooks must be deterministic functions of their
// arguments (the model checker memoizes handler calls).
type Policy struct {
	// Vote decides a voter's answer to VOTE from its OrchSet (EO-5); nil: DecideVote.
	Vote func(b Ballot) Decision
	// Tally decides from an orchestrator's YesVotes and NoVotes whether it is Ready,
	// gives up, or waits (EO-5); nil: CountVotes.
	Tally func(t Tally) Outcome
	// CondYesHolds reports whether a COND_YES(set) counts as a YES, given YesVotes
	// (EO-5); nil: CondYesHolds.
	CondYesHolds func(set, yes []sim.NodeID) bool
	// WithdrawsVote reports whether an orchestrator sends UN_VOTE(stage, tid) to voter
	// when the rules say it withdraws that vote (EO-5, EO-6, EO-7); nil: always.
	WithdrawsVote func(voter sim.NodeID, stage StageID, tid Tid) bool
	// UnVoteMatches reports whether UN_VOTE m withdraws the OrchSet entry e (EO-6);
	// nil: UnVoteMatches.
	UnVoteMatches func(e VoteEntry, m UnVote) bool
	// ActivatesOnPrepare reports whether a next-stage queue manager activates a Put at
	// rm_prepare instead of rm_commit (EO-2, EO-3); nil: never.
	ActivatesOnPrepare func(rec StageRecord) bool
	// Status decides a coordinator's answer to an in-doubt participant's STATUS
	// (EO-3); nil: AnswerStatus.
	Status func(q StatusQuery) StatusAnswer
	// LogsCommit reports whether a coordinator writes its commit decision to stable
	// storage before COMMIT leaves (EO-3); nil: always.
	LogsCommit func(t Tid) bool
	// InquiresAtRestart reports whether a restarted voter holding votes of stage s
	// sends INQUIRY at once (EO-7); nil: always.
	InquiresAtRestart func(s StageID) bool
	// Inquiry decides an orchestrator's answer to a voter's INQUIRY (EO-7); nil:
	// AnswerInquiry.
	Inquiry func(q InquiryQuery) InquiryAnswer
	// PutTargets chooses the next-stage nodes a stage transaction Puts the agent to
	// (EO-1, EO-2); nil: ChoosePutTargets.
	PutTargets func(q PutQuery) []StageNode
	// Ask chooses the stage nodes a selecting node sends ARE_YOU_THERE (EO-8); none
	// selects it at once; nil: HigherNodes.
	Ask func(rec StageRecord, self sim.NodeID) []sim.NodeID
}

// InquiryQuery is what an orchestrator knows of the transaction an INQUIRY is about
// (EO-7).
type InquiryQuery struct {
	Stage StageID
	Tid   Tid
	// Committed: the orchestrator is Committed for the stage (any Tid); Running: it
	// runs the transaction Tid; Ready: that transaction is Ready.
	Committed, Running, Ready bool
}

// InquiryAnswer is an orchestrator's answer to INQUIRY.
type InquiryAnswer uint8

const (
	// InquiryForget: send FORGET.
	InquiryForget InquiryAnswer = iota + 1
	// InquiryJoin: add the voter to YesVotes (phase 2 will reach it).
	InquiryJoin
	// InquiryIgnore: nothing; the voting goes on.
	InquiryIgnore
	// InquiryUnVote: send UN_VOTE.
	InquiryUnVote
)

// AnswerInquiry is EO-7's rule (paper §4): Committed → FORGET; Ready → the voter joins
// YesVotes; Unknown with the transaction still voting → ignore; no such transaction →
// UN_VOTE.
func AnswerInquiry(q InquiryQuery) InquiryAnswer {
	switch {
	case q.Committed:
		return InquiryForget
	case q.Running && q.Ready:
		return InquiryJoin
	case q.Running:
		return InquiryIgnore
	}
	return InquiryUnVote
}

// PutQuery is what a worker chooses its Put targets from.
type PutQuery struct {
	// Next lists the itinerary's nodes of the next stage.
	Next []StageNode
	// Suspects lists the nodes that missed a PREPARE deadline and have been silent
	// since, sorted.
	Suspects []sim.NodeID
	// Simple: the simple protocol (EO-1); Static: Config.StaticNext.
	Simple, Static bool
}

// ChoosePutTargets is the Put rule: the simple protocol Puts to the next stage's
// highest-priority node only (EO-1); the extended one to every node of the next stage
// (EO-2), leaving suspected nodes out as long as a majority of them remains (paper §3
// fn. 4) unless Static.
func ChoosePutTargets(q PutQuery) []StageNode {
	all := q.Next
	if q.Simple {
		best := all[0]
		for _, sn := range all[1:] {
			if sn.Rank < best.Rank {
				best = sn
			}
		}
		return []StageNode{best}
	}
	if q.Static || len(q.Suspects) == 0 {
		return all
	}
	var keep []StageNode
	for _, sn := range all {
		if !slices.Contains(q.Suspects, sn.Node) {
			keep = append(keep, sn)
		}
	}
	if len(keep) >= len(all)/2+1 {
		return keep
	}
	return all
}

// HigherNodes lists the nodes of rec with a higher priority than self, highest first:
// whom a selecting node asks (EO-8, paper §5, after the bully algorithm).
func HigherNodes(rec StageRecord, self sim.NodeID) []sim.NodeID {
	var out []sim.NodeID
	for _, sn := range rec.Nodes {
		if rec.Higher(sn.Node, self) {
			out = append(out, sn.Node)
		}
	}
	return out
}

// Ballot is what a voter decides a VOTE on (EO-5).
type Ballot struct {
	Record StageRecord
	// Self is the voter; Orch the orchestrator asking (OrchId).
	Self, Orch sim.NodeID
	// OrchSet is the voter's OrchSet without Orch's own entry (a re-sent VOTE, or a
	// new transaction of the same orchestrator), highest priority first.
	OrchSet []VoteEntry
}

// Answer is a voter's answer to a VOTE.
type Answer uint8

const (
	// AnswerYes: YES; the vote is added to the kept entries.
	AnswerYes Answer = iota + 1
	// AnswerNo: NO; the OrchSet stays as it is.
	AnswerNo
	// AnswerCondYes: COND_YES(kept entries' orchestrators); the vote is added.
	AnswerCondYes
	// AnswerAskLocal: HIGHER_PRIO to the local orchestrator, N = this node (EO-5):
	// ALREADY_DONE → NO; GAVE_UP → YES if no entry is kept, else COND_YES(kept).
	AnswerAskLocal
)

// Decision is a voter's answer to a Ballot and the entries of Ballot.OrchSet it keeps
// besides the new vote (for COND_YES, the set it names).
type Decision struct {
	Answer Answer
	Keep   []VoteEntry
}

// DecideVote is the voter's rule of EO-5 (paper §4): OrchSet empty → YES; OrchId of
// lower priority than N, the highest-priority node in OrchSet → NO; N not this node →
// COND_YES(OrchSet); N this node → ask the local orchestrator (HIGHER_PRIO), whose
// GAVE_UP turns the answer into COND_YES(OrchSet − {N}).
func DecideVote(b Ballot) Decision {
	if len(b.OrchSet) == 0 {
		return Decision{Answer: AnswerYes}
	}
	top := b.OrchSet[0].Orch // N (entries sorted by rank)
	switch {
	case b.Record.Higher(top, b.Orch):
		return Decision{Answer: AnswerNo}
	case top != b.Self:
		return Decision{Answer: AnswerCondYes, Keep: b.OrchSet}
	}
	return Decision{Answer: AnswerAskLocal, Keep: b.OrchSet[1:]}
}

// Tally is an orchestrator's count of one transaction's votes (EO-5).
type Tally struct {
	Record StageRecord
	// Self is the orchestrator's node.
	Self    sim.NodeID
	Yes, No []sim.NodeID
}

// Outcome is what a Tally decides.
type Outcome uint8

const (
	// Waiting: neither a majority nor its impossibility yet.
	Waiting Outcome = iota
	// Ready: a majority voted yes (rm_yes).
	Ready
	// Impossible: a majority cannot be reached any more (rm_no, give up).
	Impossible
)

// CountVotes is the orchestrator's majority rule (EO-5): Ready with a majority of YES
// that includes its own node's voter; a majority is impossible once at least half of
// the voters said NO (so a tie in an even stage gives up), or its own voter did (see
// the package comment: a node's YES for a higher orchestrator must certify that its
// own orchestrator cannot become Ready).
func CountVotes(t Tally) Outcome {
	switch {
	case len(t.Yes) >= t.Record.Majority() && slices.Contains(t.Yes, t.Self):
		return Ready
	case 2*len(t.No) >= len(t.Record.Nodes) || slices.Contains(t.No, t.Self):
		return Impossible
	}
	return Waiting
}

// CondYesHolds is EO-5's conversion rule: COND_YES(V, S) counts as YES once every
// node of S is in YesVotes.
func CondYesHolds(set, yes []sim.NodeID) bool {
	for _, x := range set {
		if !slices.Contains(yes, x) {
			return false
		}
	}
	return true
}

// UnVoteMatches is EO-6's withdrawal rule, made exact with the Tid (see the package
// comment): UN_VOTE withdraws the entry of the same orchestrator and transaction.
func UnVoteMatches(e VoteEntry, m UnVote) bool { return e.Orch == m.Orch && e.Tid == m.Tid }

// StatusQuery is what a coordinator knows when an in-doubt participant asks (EO-3).
type StatusQuery struct {
	Stage StageID
	Tid   Tid
	// Logged: the commit decision is in the coordinator's log; Running: the
	// transaction is still in phase 1 here.
	Logged, Running bool
}

// StatusAnswer is a coordinator's answer to STATUS.
type StatusAnswer uint8

const (
	// StatusCommit: send COMMIT.
	StatusCommit StatusAnswer = iota + 1
	// StatusWait: send nothing; the outcome is not decided yet.
	StatusWait
	// StatusAbort: send ABORT (presumed abort).
	StatusAbort
)

// AnswerStatus is presumed abort's answer (EO-3): COMMIT when the decision is logged,
// nothing while phase 1 runs, ABORT otherwise.
func AnswerStatus(q StatusQuery) StatusAnswer {
	switch {
	case q.Logged:
		return StatusCommit
	case q.Running:
		return StatusWait
	}
	return StatusAbort
}

// The hooks with their defaults, as the protocol consults them.

func (p *Policy) vote(b Ballot) Decision {
	if p.Vote != nil {
		return p.Vote(b)
	}
	return DecideVote(b)
}

func (p *Policy) tally(t Tally) Outcome {
	if p.Tally != nil {
		return p.Tally(t)
	}
	return CountVotes(t)
}

func (p *Policy) condYesHolds(set, yes []sim.NodeID) bool {
	if p.CondYesHolds != nil {
		return p.CondYesHolds(set, yes)
	}
	return CondYesHolds(set, yes)
}

func (p *Policy) withdrawsVote(v sim.NodeID, s StageID, t Tid) bool {
	return p.WithdrawsVote == nil || p.WithdrawsVote(v, s, t)
}

func (p *Policy) unVoteMatches(e VoteEntry, m UnVote) bool {
	if p.UnVoteMatches != nil {
		return p.UnVoteMatches(e, m)
	}
	return UnVoteMatches(e, m)
}

func (p *Policy) activatesOnPrepare(rec StageRecord) bool {
	return p.ActivatesOnPrepare != nil && p.ActivatesOnPrepare(rec)
}

func (p *Policy) status(q StatusQuery) StatusAnswer {
	if p.Status != nil {
		return p.Status(q)
	}
	return AnswerStatus(q)
}

func (p *Policy) logsCommit(t Tid) bool { return p.LogsCommit == nil || p.LogsCommit(t) }

func (p *Policy) inquiresAtRestart(s StageID) bool {
	return p.InquiresAtRestart == nil || p.InquiresAtRestart(s)
}

func (p *Policy) inquiry(q InquiryQuery) InquiryAnswer {
	if p.Inquiry != nil {
		return p.Inquiry(q)
	}
	return AnswerInquiry(q)
}

func (p *Policy) putTargets(q PutQuery) []StageNode {
	if p.PutTargets != nil {
		return p.PutTargets(q)
	}
	return ChoosePutTargets(q)
}

func (p *Policy) ask(rec StageRecord, self sim.NodeID) []sim.NodeID {
	if p.Ask != nil {
		return p.Ask(rec, self)
	}
	return HigherNodes(rec, self)
}
