package model

import (
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

var testRules = sim.NewRuleMap("model-test")
var (
	ruleBroadcast = testRules.Rule("T-1 broadcast", "the workload's go: an update to every backup")
	ruleApply     = testRules.Rule("T-2 apply", "a backup applies the update")
	ruleNever     = testRules.Rule("T-3 never", "a branch no input reaches")
)

// updater broadcasts one update to nodes 1..3 when the workload says go (covering
// T-1); backups apply it (T-2).
func updater(n *scripted, in sim.Input, out *sim.Outbox) {
	switch {
	case in.Kind == sim.Receive && in.From == sim.Env:
		out.Cover(ruleBroadcast)
		out.Store("sent", true)
		for p := 1; p <= 3; p++ {
			out.Send(sim.NodeID(p), msg{N: 7})
		}
		out.Observe("broadcast", 7)
	case in.Kind == sim.Receive:
		out.Cover(ruleApply)
		n.Got = append(n.Got, in.Msg.(msg).N)
	case in.Kind == sim.Timeout && in.Timer == "never":
		out.Cover(ruleNever)
	}
}

func updaterSystem(midSend, memo bool) *Actors {
	nodes := []sim.NodeSpec{node("p", updater), node("b1", updater), node("b2", updater), node("b3", updater)}
	return &Actors{
		Name: "updater", Nodes: nodes, Inject: goInput(), Memoize: memo,
		Crashes: Crashes{Budget: 1, Nodes: []sim.NodeID{0}, NoRestart: true, MidSend: midSend},
		Properties: []Property[*State]{
			Sometimes("the primary is down, with b1 updated and b3 not", func(s *State) bool {
				b1, _ := NodeAs[*scripted](s, 1)
				b3, _ := NodeAs[*scripted](s, 3)
				return !s.Up(0) && len(b1.Got) == 1 && len(b3.Got) == 0 && len(s.InFlight()) == 0
			}),
			Always("no backup applies twice", func(s *State) bool {
				for p := 1; p <= 3; p++ {
					if b, _ := NodeAs[*scripted](s, sim.NodeID(p)); b != nil && len(b.Got) > 1 {
						return false
					}
				}
				return true
			}).When(func(s *State) bool {
				b1, _ := NodeAs[*scripted](s, 1)
				return b1 != nil && len(b1.Got) > 0
			}),
		},
	}
}

// A mid-send crash reaches the agreement-stage case that an atomic call never does:
// the primary down, one backup updated and another not, nothing in flight. Its stable
// write survives it. Memoized and plain searches agree on counts and coverage.
func TestMidSendCrashSplitsABroadcast(t *testing.T) {
	plain, err := Check(updaterSystem(false, false), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Properties[1].Status != Failed {
		t.Fatalf("without MidSend the split broadcast is %v, want unreachable (failed sometimes)", plain.Properties[1].Status)
	}
	var first *Result
	for _, memo := range []bool{false, true} {
		res, err := Check(updaterSystem(true, memo), Options{Coverage: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Properties[1].Status != Witnessed {
			t.Fatalf("memo %v: with MidSend the split broadcast is %v, want witnessed", memo, res.Properties[1].Status)
		}
		if res.Distinct <= plain.Distinct {
			t.Fatalf("memo %v: MidSend explored %d states, no more than the %d without it", memo, res.Distinct, plain.Distinct)
		}
		cov := res.Coverage
		if cov == nil || cov.Count("model-test", "T-1 broadcast") == 0 || cov.Count("model-test", "T-2 apply") == 0 {
			t.Fatalf("memo %v: coverage %v misses T-1 or T-2", memo, cov.ByTag("model-test"))
		}
		if cov.Count("model-test", "T-3 never") != 0 {
			t.Fatalf("memo %v: T-3 fired", memo)
		}
		if r := res.Properties[2].Relevant; r <= 0 {
			t.Fatalf("memo %v: the invariant was relevant in %d states", memo, r)
		}
		if res.Properties[0].Relevant != -1 {
			t.Fatalf("memo %v: no-panic declares no relevance but reports %d", memo, res.Properties[0].Relevant)
		}
		if first == nil {
			first = res
			continue
		}
		if res.Distinct != first.Distinct || res.Total != first.Total {
			t.Fatalf("memo changed the counts: %d/%d vs %d/%d", res.Distinct, res.Total, first.Distinct, first.Total)
		}
		for tag, n := range first.Coverage.ByTag("model-test") {
			if m := res.Coverage.Count("model-test", tag); m != n {
				t.Fatalf("memo changed the coverage of %s: %d vs %d", tag, m, n)
			}
		}
	}
	// The witness replays, and its last step says where the crash cut the sends.
	res, _ := Check(updaterSystem(true, false), Options{Coverage: true})
	steps, err := res.Steps(res.Properties[1])
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range steps {
		if contains(s, "crash-send") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no step of the witness names the mid-send crash: %q", steps)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// An unwitnessed sometimes-property after a Boundary cut is undecided, not failed.
func TestSometimesAfterBoundaryCutIsUndecided(t *testing.T) {
	sys := updaterSystem(false, false)
	sys.Boundary = func(s *State) bool { return len(s.InFlight()) < 2 }
	res, err := Check(sys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pr := res.Properties[1]
	if pr.Status != Unknown || pr.Why == "" {
		t.Fatalf("after a Boundary cut the unwitnessed property is %v (%q), want unknown with a reason", pr.Status, pr.Why)
	}
	if res.Outcome != Complete || res.Violation != nil {
		t.Fatalf("outcome %v violation %v", res.Outcome, res.Violation)
	}
}
