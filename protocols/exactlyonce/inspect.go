package exactlyonce

import (
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/sim"
)

// StableKind names a kind of protocol record in stable storage.
type StableKind string

// The kinds of stable records a node keeps.
const (
	StableSeq      StableKind = "tid-counter"      // the TM's Tid sequence number
	StableBounds   StableKind = "bounds"           // model-checking bound counters (Config.MaxAttempts, Resends)
	StableQueue    StableKind = "stage-record"     // an Active stage: record and agent in the input queue (EO-4)
	StableOrchSet  StableKind = "orchset"          // a voter's OrchSet (EO-4)
	StableOrch     StableKind = "orchestrator"     // an orchestrator's Ready/Committed state (EO-4)
	StablePrepared StableKind = "prepared-put"     // a next-stage queue manager's prepared Put (EO-3)
	StableCommit   StableKind = "commit-record"    // a coordinator's logged commit decision (EO-3)
	StablePool     StableKind = "resource-pool"    // a resource pool's committed seats
	StableResPrep  StableKind = "prepared-reserve" // a prepared reservation (EO-3)
)

// StableItem describes one record of a node's stable storage, for checkers (which
// must not depend on the storage layout).
type StableItem struct {
	Key  string
	Kind StableKind
	// Stage is the stage the record belongs to (zero for the counter and pools).
	Stage StageID
	// Orch is the orchestrator state (StableOrch only), OrchTid its transaction.
	Orch    OrchState
	OrchTid Tid
	// Waits lists the nodes whose answer the record is waiting for before it can go:
	// voters that have not ACKed FORGET (Committed orchestrator), participants that
	// have not ACKed COMMIT (commit record), the coordinator (prepared Put).
	Waits []sim.NodeID
	// AgentHop is the hop count of the agent the record holds (StableQueue and
	// StablePrepared; EO-4: the agent stored with stage (a, h) is at hop h).
	AgentHop int32
	// Votes is the OrchSet (StableOrchSet only).
	Votes []VoteEntry
	// PoolName and Pool are the committed pool (StablePool only).
	PoolName string
	Pool     *Pool
}

// Inspect lists the protocol records in a node's stable storage, in key order.
func Inspect(st *sim.Storage) []StableItem {
	var out []StableItem
	for _, k := range st.Keys() {
		v, _ := st.Peek(k)
		it := StableItem{Key: k}
		switch x := v.(type) {
		case uint32:
			it.Kind = StableSeq
		case boundRecord:
			it.Kind = StableBounds
		case queueEntry:
			it.Kind, it.Stage, it.AgentHop = StableQueue, x.Record.ID, x.Agent.Hop
		case []VoteEntry:
			it.Kind, it.Stage, it.Votes = StableOrchSet, parseStageKey(k, preOrchSet), x
		case orchRecord:
			it.Kind, it.Stage, it.Orch, it.OrchTid = StableOrch, parseStageKey(k, preOrch), x.State, x.Tid
			if x.State == OrchCommitted {
				it.Waits = x.Pending
			}
		case preparedPut:
			it.Kind, it.Stage, it.Waits, it.AgentHop = StablePrepared, x.Record.ID, []sim.NodeID{x.Coord}, x.Agent.Hop
		case commitRecord:
			it.Kind, it.Stage, it.Waits = StableCommit, x.Stage, x.Pending
		case Pool:
			p := x
			it.Kind, it.Pool, it.PoolName = StablePool, &p, strings.TrimPrefix(k, prePool)
		case resPrepared:
			it.Kind, it.Stage = StableResPrep, StageID{Agent: x.Agent, Hop: x.Hop}
		default:
			panic("exactlyonce: unknown stable record " + k)
		}
		out = append(out, it)
	}
	return out
}

// OrchStateOf returns the orchestrator state stage s has in a node's stable storage
// (OrchUnknown when there is no record). It reads one key, so model-checker invariants
// evaluated on every state (EO-I1) stay cheap.
func OrchStateOf(st *sim.Storage, s StageID) OrchState { return OrchStateAt(st, OrchKey(s)) }

// OrchKey returns the stable-storage key of stage s's orchestrator record.
func OrchKey(s StageID) string { return stageKey(preOrch, s) }

// OrchStateAt is OrchStateOf for the key OrchKey returns, so that an invariant
// evaluated on every state builds its keys once.
func OrchStateAt(st *sim.Storage, key string) OrchState {
	v, ok := st.Peek(key)
	if !ok {
		return OrchUnknown
	}
	return v.(orchRecord).State
}

// StoredAtHop reports whether every stage record and prepared Put in st holds the
// agent at that stage's hop (EO-4), without building Inspect's list (model checkers
// evaluate it on every state).
func StoredAtHop(st *sim.Storage) bool {
	return st.All(func(_ string, v any) bool {
		switch x := v.(type) {
		case queueEntry:
			return x.Agent.Hop == x.Record.ID.Hop
		case preparedPut:
			return x.Agent.Hop == x.Record.ID.Hop
		}
		return true
	})
}

// OrphanTransaction returns a stage whose transaction this node coordinates although
// the stage is not Active in its input queue, if there is one (EO-2/EO-6 forbid it: a
// node runs a stage transaction only for an Active stage, and a stage forgotten on
// FORGET ends it by GIVE_UP). For checkers; the smallest such stage.
func (n *Node) OrphanTransaction() (StageID, bool) {
	var orphan StageID
	found := false
	for s := range n.txs { // the minimum: independent of the order
		if _, ok := n.queue[s]; !ok && (!found || stageLess(s, orphan)) {
			orphan, found = s, true
		}
	}
	return orphan, found
}

func stageLess(a, b StageID) bool {
	return a.Agent < b.Agent || (a.Agent == b.Agent && a.Hop < b.Hop)
}

// Voting is a stage transaction this node coordinates and its orchestrator's votes
// (EO-5). For checkers.
type Voting struct {
	Stage   StageID
	Tid     Tid
	Record  StageRecord
	Yes, No []sim.NodeID
	// Cond lists the COND_YES votes not yet counted as YES.
	Cond []CondVote
	// Ready: the orchestrator is Ready (phase 1 is over; YesVotes still gains the
	// voters phase 2 must reach).
	Ready bool
}

// CondVote is a COND_YES(Set) of Voter an orchestrator holds.
type CondVote struct {
	Voter sim.NodeID
	Set   []sim.NodeID
}

// VotingNow returns the node's transactions whose orchestrator still collects votes,
// by stage. For checkers (the slices are copies).
func (n *Node) VotingNow() []Voting {
	return slices.DeleteFunc(n.Tallies(), func(v Voting) bool { return v.Ready })
}

// Tallies returns the node's transactions whose orchestrator collects votes or is
// Ready, by stage. For checkers (the slices are copies).
func (n *Node) Tallies() []Voting {
	var out []Voting
	for _, s := range sortedStages(n.txs) {
		x := n.txs[s]
		if x.orchVote < 0 || x.executing || n.cfg.Simple {
			continue
		}
		v := Voting{Stage: s, Tid: x.tid, Record: x.rec, Yes: slices.Clone(x.yes), No: slices.Clone(x.no), Ready: x.orchVote > 0}
		for _, c := range x.cond {
			v.Cond = append(v.Cond, CondVote{Voter: c.voter, Set: slices.Clone(c.set)})
		}
		out = append(out, v)
	}
	return out
}

// Coordinating returns how many stage transactions the node coordinates now.
func (n *Node) Coordinating() int { return len(n.txs) }

// MayResend reports whether Config.Resends leaves the node a round of periodic
// re-sending (always, when unbounded). For checkers.
func (n *Node) MayResend() bool {
	return n.cfg.Resends == 0 || (n.cfg.Resends > 0 && n.resends < n.cfg.Resends)
}

// InquiryTimer is the timer of stage s's INQUIRY rounds (EO-7), for checkers that
// look at a node's pending timers.
func InquiryTimer(s StageID) sim.TimerID { return stageTimer(tInquiry, s) }

// ActiveRecord returns stage s's record if the stage is Active in st (its record and
// agent are in the input queue), for checkers.
func ActiveRecord(st *sim.Storage, s StageID) (StageRecord, bool) {
	v, ok := st.Peek(stageKey(preQueue, s))
	if !ok {
		return StageRecord{}, false
	}
	return v.(queueEntry).Record, true
}
