package rpscen

import (
	"testing"

	"github.com/simrun-dev/simrun/model"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/scenarios/scenariotest"
	"github.com/simrun-dev/simrun/sim"
)

func checkModel(t *testing.T, params map[string]string, o model.Options) *model.Result {
	t.Helper()
	res, err := model.CheckNamed("replication", params, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// `simrun check replication`: 2 replicas, a registry, a client's write, a crash, 6
// ticks, explored exhaustively: every invariant holds and a failover after an answer
// is witnessed. The count is pinned for 1 and 2 workers.
func TestModelExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no exhaustive model check (TestModelCatchesNoDup and the planted bugs still explore)")
	}
	const distinct = 497613
	for _, w := range []int{1, 2} {
		res := checkModel(t, nil, model.Options{Workers: w, MaxStates: scenariotest.Bound(distinct)})
		if res.Outcome != model.Complete || res.Violation != nil {
			t.Fatalf("%d workers: outcome %v, violation %v", w, res.Outcome, res.Violation)
		}
		for _, p := range res.Properties {
			if p.Status != model.Holds && p.Status != model.Witnessed {
				t.Errorf("%s: %v", p.Name, p.Status)
			}
		}
		if res.Distinct != distinct && !scenariotest.Unpinned() {
			t.Errorf("%d workers: %d distinct states, pinned %d", w, res.Distinct, distinct)
		}
	}
}

// A primary without the duplicate check executes the client's re-sent request again
// after a failover: BFS finds it, the shortest counterexample pinned.
func TestModelCatchesNoDup(t *testing.T) {
	res := checkModel(t, map[string]string{"bug": "no-dup"}, model.Options{})
	if res.Violation == nil || res.Violation.Name != "RP-P1 exactly once" {
		t.Fatalf("violation %v, want RP-P1 exactly once", res.Violation)
	}
	if res.Violation.Depth != 63 {
		t.Errorf("counterexample depth %d, pinned 63", res.Violation.Depth)
	}
}

// Crash-recovery with three replicas is too large to explore exhaustively; seeded
// random walks over twelve ticks find no violation and reach a failover after an
// answer. So is active replication with crash-recovery: a bounded depth-first search
// finds no violation.
func TestModelWalksRestart(t *testing.T) {
	res := checkModel(t, map[string]string{"replicas": "3", "restart": "true", "ticks": "12"}, model.Options{Strategy: model.Random, Walks: 300, Seed: 1, MaxDepth: 600})
	if res.Violation != nil {
		t.Fatalf("violation: %v", res.Violation.Name)
	}
	// Active replication with crash-recovery (several million states): the first
	// 400 000 states a depth-first search reaches, where a replica back from a crash
	// must fetch what it missed, hold every invariant.
	if testing.Short() {
		t.Log("-short: the bounded DFS of active replication (about 10 s) runs in the full suite; the walks above ran")
		return
	}
	res = checkModel(t, map[string]string{"mode": "active", "restart": "true"}, model.Options{Strategy: model.DFS, MaxStates: 400_000})
	if res.Violation != nil {
		t.Fatalf("active, restart: violation: %v", res.Violation.Name)
	}
	if res.Distinct < 400_000 {
		t.Fatalf("active, restart: %d states explored, want the bound's 400 000", res.Distinct)
	}
}

// `simrun check replication -p mode=active`: the sequencer configuration, explored
// exhaustively (2 workers): one total order, ordered once, no lost ack and every
// replica catching up hold, and a failover after the answers is witnessed.
func TestModelActiveExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no exhaustive model check (TestModelCatchesNoDup and the planted bugs still explore)")
	}
	const distinct = 796409
	res := checkModel(t, map[string]string{"mode": "active"}, model.Options{Workers: 2, MaxStates: scenariotest.Bound(distinct)})
	if res.Outcome != model.Complete || res.Violation != nil {
		t.Fatalf("outcome %v, violation %v", res.Outcome, res.Violation)
	}
	for _, p := range res.Properties {
		if p.Status != model.Holds && p.Status != model.Witnessed {
			t.Errorf("%s: %v", p.Name, p.Status)
		}
	}
	if res.Distinct != distinct && !scenariotest.Unpinned() {
		t.Errorf("%d distinct states, pinned %d", res.Distinct, distinct)
	}
}

// Bugs planted from here in active replicas (every replica carries it; whichever has
// the minimum ID orders): a follower deaf to orders never catches up, one that
// garbles an order delivers another request at the index, and a sequencer that
// forgets a request it ordered orders it again.
func init() {
	bugs["t-active-deaf"] = bug{handle: func(n sim.Node, in *sim.Input, out *sim.Outbox) bool {
		if in.Kind == sim.Receive {
			switch in.Msg.(type) {
			case rp.Order, rp.Orders:
				return true // drops the sequencer's orders
			}
		}
		return false
	}}
	bugs["t-active-garbled"] = bug{handle: func(n sim.Node, in *sim.Input, out *sim.Outbox) bool {
		if o, ok := in.Msg.(rp.Order); ok && in.Kind == sim.Receive {
			o.Req.ID += "'"
			in.Msg = o
		}
		return false
	}}
	bugs["t-active-forgetful"] = bug{handle: func(n sim.Node, in *sim.Input, out *sim.Outbox) bool {
		a := n.(*rp.ActiveReplica)
		if m, ok := in.Msg.(rp.Request); ok && in.Kind == sim.Receive && a.S.IsSeq {
			a.Handle(*in, out) // orders it, forgets it did, and is given it again
			delete(a.S.Dup, m.ID)
		}
		return false
	}}
}

// Each active invariant catches a bug planted from here.
func TestModelActiveCatchesPlantedBugs(t *testing.T) {
	for _, c := range []struct{ bug, want string }{
		{"t-active-deaf", "RP-3 every replica executes every request"},
		{"t-active-garbled", "RP-3 one total order"},
		{"t-active-forgetful", "RP-P1 ordered once"},
	} {
		res := checkModel(t, map[string]string{"mode": "active", "crashes": "0", "bug": c.bug}, model.Options{})
		if res.Violation == nil || res.Violation.Name != c.want {
			t.Errorf("%s: violation %v, want %s", c.bug, res.Violation, c.want)
		}
	}
}
