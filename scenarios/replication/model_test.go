package rpscen

import (
	"slices"
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

// The portfolio's cheapest configuration (one replica, two registries: their answers
// come one by one, so the replica is listed alone and waits before it claims),
// explored exhaustively with 1 and 2 workers: the same state count, pinned. (The
// coverage test checks every configuration of the portfolio.)
func TestModelRegistriesPinned(t *testing.T) {
	m, err := model.Lookup("replication")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(m.Portfolio, func(c model.Config) bool { return c.Name == cheapest })
	if testing.Short() {
		t.Skip("-short: TestCoverage checks the configuration once")
	}
	const distinct = 47288
	for _, w := range []int{1, 2} {
		res := checkModel(t, m.Portfolio[i].Params, model.Options{Workers: w, MaxStates: scenariotest.Bound(distinct)})
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

// Larger systems than the portfolio's, by seeded random walks (what `simrun check
// replication --strategy random` does): three passive replicas with crash-recovery
// and crashes cutting sends short over twelve ticks, and active replication with
// crash-recovery; no violation.
func TestModelWalks(t *testing.T) {
	for _, ps := range []map[string]string{
		{"replicas": "3", "restart": "true", "midsend": "true", "requests": "2", "ticks": "12"},
		{"replicas": "2", "registries": "2", "notify": "false", "restart": "true", "ticks": "10"},
		{"mode": "active", "replicas": "3", "restart": "true", "requests": "2", "ticks": "12"},
		{"mode": "flow", "restart": "true", "midsend": "true", "ticks": "12"},
	} {
		if testing.Short() {
			t.Skip("-short: no random walks")
		}
		res := checkModel(t, ps, model.Options{Strategy: model.Random, Walks: 300, Seed: 1, MaxDepth: 600})
		if res.Violation != nil {
			t.Fatalf("%v: violation: %v", ps, res.Violation.Name)
		}
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
