package eoscen

import (
	"slices"

	"github.com/simrun-dev/simrun/model"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// Names of the model's own properties.
const (
	// PropRunning is the EO-2/EO-6 invariant on running transactions.
	PropRunning = "EO-2/EO-6 transactions run only for Active stages"
	// PropDecide is EO-5's "the votes decide at once" invariant.
	PropDecide = "EO-5 an orchestrator decides as soon as its votes do"
	// PropCondYes is EO-5's conversion rule of conditional votes.
	PropCondYes = "EO-5 a COND_YES counts only once its whole set voted YES"
	// PropSupport is EO-5's majority of YES votes behind a Ready orchestrator.
	PropSupport = "EO-5 a Ready or Committed orchestrator stands on a majority of YES votes"
	// PropInquiryDue is EO-7's "a voter holding votes keeps asking" invariant.
	PropInquiryDue = "EO-7 a voter holding votes has an INQUIRY coming"
	// WitnessDone and WitnessCondYes are the model's sometimes-properties.
	WitnessDone    = "the agent completes"
	WitnessCondYes = "a voter answers COND_YES"
)

// PropStored names the model's EO-4 invariant.
const PropStored = "EO-4 stored agents are at their stage's hop"

// WitnessP5 names the model's witness that EO-P5 was judged on some state.
const WitnessP5 = "a crash-free run ends after completing (EO-P5 judged)"

// endsDone reports a crash-free end state after the agent completed: no message in
// flight, no pending timer or injection, every node up.
func endsDone(s *model.State) bool {
	if !model.GhostAs[Ghost](s).Done || s.Faults().Crashes > 0 || s.NumInFlight() > 0 {
		return false
	}
	for i := 0; i < s.NumNodes(); i++ {
		n := sim.NodeID(i)
		if !s.Up(n) || len(s.Timers(n)) > 0 || s.PendingInjections(n) > 0 {
			return false
		}
	}
	return true
}

// leftovers lists the agent's protocol records still in stable storage (EO-P5).
func leftovers(s *model.State) []string {
	var out []string
	for i := 0; i < s.NumNodes(); i++ {
		for _, it := range eo.Inspect(s.Stable(sim.NodeID(i))) {
			switch it.Kind {
			case eo.StableQueue, eo.StableOrchSet, eo.StableOrch, eo.StablePrepared, eo.StableCommit, eo.StableResPrep:
				out = append(out, s.Name(sim.NodeID(i))+" "+it.Key)
			}
		}
	}
	return out
}

// condYesPossible reports whether a voter can answer COND_YES in the configuration,
// so that the model asks for the witness only where one can exist: it needs a voter
// holding a vote for one orchestrator when a higher one asks, so three stage nodes
// (in a stage of two, the only voter that is not the higher orchestrator's node votes
// for itself first) and a second orchestrator — an observer that may select itself
// abstractly, or, under the basic selection protocol, only after a crash (without
// one, a live worker answers every ARE_YOU_THERE, and the bound on messages in
// flight cuts the interleavings where the There timer fires before the answer
// arrives; the majority variant's claims make room for them).
func condYesPossible(o ModelOptions) bool {
	if o.Observers < 2 || (o.Selectors != nil && !slices.ContainsFunc(o.Selectors, func(n string) bool { return n != stageOneWorker(o) })) {
		return false
	}
	return o.AbstractSelection || o.Crashes > 0 || o.MajoritySelect
}

// stageOneWorker names stage 1's initial worker.
func stageOneWorker(o ModelOptions) string {
	if o.HomeIsWorker {
		return "n0"
	}
	return "n1"
}

// liveOrch is an orchestrator in Ready or Committed state (stable storage), with the
// stage's record; judged when every node of the record still holds the stage Active
// (no FORGET has removed a vote yet).
type liveOrch struct {
	orch   sim.NodeID
	stage  eo.StageID
	tid    eo.Tid
	rec    eo.StageRecord
	judged bool
}

func liveOrchs(s *model.State, facts *factCache) []liveOrch {
	var out []liveOrch
	for i := 0; i < s.NumNodes(); i++ {
		f := facts.of(s.Stable(sim.NodeID(i)))
		for h, live := range f.live {
			if !live {
				continue
			}
			c := liveOrch{orch: sim.NodeID(i), stage: eo.StageID{Agent: 1, Hop: int32(h)}, tid: f.orchTid[h]}
			c.rec, c.judged = recordOf(s, facts, h, c.orch)
			out = append(out, c)
		}
	}
	return out
}

// recordOf returns stage h's record if every node of it holds the stage Active but
// orch, whose commit took the agent out of its queue (the Get).
func recordOf(s *model.State, facts *factCache, h int, orch sim.NodeID) (eo.StageRecord, bool) {
	var rec *eo.StageRecord
	for i := 0; i < s.NumNodes() && rec == nil; i++ {
		rec = facts.of(s.Stable(sim.NodeID(i))).active[h]
	}
	if rec == nil || len(rec.Nodes) < 2 {
		return eo.StageRecord{}, false
	}
	for _, n := range rec.NodeIDs() {
		if n != orch && facts.of(s.Stable(n)).active[h] == nil {
			return *rec, false
		}
	}
	return *rec, true
}

// support is the set of voters of c's stage that support c's transaction (see
// PropSupport).
func support(s *model.State, facts *factCache, c liveOrch) []sim.NodeID {
	h := c.stage.Hop
	var sup []sim.NodeID
	for changed := true; changed; {
		changed = false
		for _, n := range c.rec.NodeIDs() {
			f := facts.of(s.Stable(n))
			votes := f.orchSets[h]
			if n == c.orch && f.active[h] == nil {
				// Committed: the orchestrator's own voter forgot the stage in the
				// commit's own step (FORGET to itself); its vote was counted to be
				// Ready (EO-5 "decides as soon as its votes do" checks that).
				votes = []eo.VoteEntry{{Orch: c.orch, Tid: c.tid}}
			}
			if slices.Contains(sup, n) || !slices.Contains(votes, eo.VoteEntry{Orch: c.orch, Tid: c.tid}) {
				continue
			}
			ok := true
			for _, e := range votes {
				if e.Orch != c.orch && c.rec.Higher(c.orch, e.Orch) && !slices.Contains(sup, e.Orch) {
					ok = false
				}
			}
			if ok {
				sup = append(sup, n)
				changed = true
			}
		}
	}
	return sup
}

// inspector is what the model's invariants read of a running node. An interface
// rather than *eo.Node: the tests explore wrapped nodes (cow_test.go), which must
// not make the invariants vacuous.
type inspector interface {
	OrphanTransaction() (eo.StageID, bool)
	Coordinating() int
	VotingNow() []eo.Voting
	Tallies() []eo.Voting
	MayResend() bool
}

// decided reports whether transaction v of orchestrator self has something decided
// by its votes (EO-5): a COND_YES whose whole set is in YesVotes (it is a YES), a
// majority of YES with self's own, at least half NO, or NO from self's own voter.
func decided(v eo.Voting, self sim.NodeID) bool {
	n := len(v.Record.Nodes)
	if slices.ContainsFunc(v.Cond, func(c eo.CondVote) bool {
		return !slices.ContainsFunc(c.Set, func(x sim.NodeID) bool { return !slices.Contains(v.Yes, x) })
	}) {
		return true // a COND_YES whose whole set said YES counts as YES at once
	}
	return (2*len(v.Yes) > n && slices.Contains(v.Yes, self)) || 2*len(v.No) >= n || slices.Contains(v.No, self)
}

// inquiryOverdue reports whether up node i holds a vote (an OrchSet) for an Active
// stage without its INQUIRY timer pending while it may still re-send (EO-7).
func inquiryOverdue(s *model.State, facts *factCache, i sim.NodeID) bool {
	n, ok := s.Node(i).(inspector)
	if !ok || !n.MayResend() {
		return false
	}
	for h, votes := range facts.of(s.Stable(i)).orchSets {
		if len(votes) == 0 {
			continue
		}
		id := eo.InquiryTimer(eo.StageID{Agent: 1, Hop: int32(h)})
		if !slices.ContainsFunc(s.Timers(i), func(t model.PendingTimer) bool { return t.ID == id }) {
			return true
		}
	}
	return false
}
