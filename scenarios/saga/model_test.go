package sagascen

import (
	"maps"
	"testing"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/scenarios/scenariotest"
)

func checkModel(t *testing.T, params map[string]string, o model.Options) *model.Result {
	t.Helper()
	res, err := model.CheckNamed("saga", params, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// `simrun check saga`: the paper's example with two transactions competing for credit
// (one is compensated) and a crash of either agent, explored exhaustively under weak
// fairness: every invariant holds, every transaction that began ends consistently.
// The counts are pinned for 1 and 2 workers (a change means the protocol or the
// checker explores something else now).
func TestModelExhaustive(t *testing.T) {
	for _, c := range []struct {
		params   map[string]string
		distinct int64
	}{
		{nil, 3792},
		{map[string]string{"crashes": "0"}, 95},
		{map[string]string{"config": "branch", "txs": "1", "crashes": "0"}, 1058},
	} {
		for _, w := range []int{1, 2} {
			res := checkModel(t, c.params, model.Options{Workers: w, MaxStates: scenariotest.Bound(c.distinct), Fair: true})
			if res.Outcome != model.Complete || res.Violation != nil {
				t.Fatalf("%v, %d workers: outcome %v, violation %v", c.params, w, res.Outcome, res.Violation)
			}
			for _, p := range res.Properties {
				if p.Status != model.Holds && p.Status != model.Witnessed {
					t.Errorf("%v: %s %v", c.params, p.Name, p.Status)
				}
			}
			if res.Distinct != c.distinct && !scenariotest.Unpinned() {
				t.Errorf("%v, %d workers: %d distinct states, pinned %d", c.params, w, res.Distinct, c.distinct)
			}
		}
	}
}

// Every planted bug is caught by the model checker, with the shortest counterexample
// pinned (BFS), on the branch configuration (a1 runs on at a3, whose action fails,
// and links a side branch at a2) with a crash budget of 1. The counterexamples replay
// in the simulator's trace format.
func TestModelCatchesBugs(t *testing.T) {
	for _, c := range []struct {
		bug   string
		depth int
	}{
		{"eager-compensation", 9},
		{"rerun-duplicates", 8},
		{"compensate-never-run", 5},
		{"run-after-abort", 7},
		{"forget-compensation", 9},
	} {
		res := checkModel(t, map[string]string{"config": "branch", "txs": "1", "bug": c.bug}, model.Options{Workers: 1})
		v := res.Violation
		if v == nil || v.Kind != model.AlwaysKind {
			t.Fatalf("%s: not caught (%v)", c.bug, res.Outcome)
		}
		if v.Depth != c.depth {
			t.Errorf("%s: counterexample of depth %d, pinned %d", c.bug, v.Depth, c.depth)
		}
		if _, err := res.Steps(v); err != nil {
			t.Fatalf("%s: %v", c.bug, err)
		}
	}
}

// The portfolio (`simrun check saga` with no -p): every configuration completes with
// every invariant holding, every eventually-property holding and every witness
// found, in the pinned number of states. Short: the paper configuration.
func TestPortfolio(t *testing.T) {
	m, err := model.Lookup("saga")
	if err != nil {
		t.Fatal(err)
	}
	pins := map[string]int64{"paper": 6574, "branch": 170071, "join": 168809, "connectivity": 137037}
	for _, c := range m.Portfolio {
		if testing.Short() && c.Name != "paper" {
			continue
		}
		res := checkModel(t, c.Params, model.Options{Workers: 1, MaxStates: scenariotest.Bound(pins[c.Name])})
		if res.Outcome != model.Complete || res.Violation != nil {
			t.Fatalf("%s: outcome %v, violation %v", c.Name, res.Outcome, res.Violation)
		}
		for _, p := range res.Properties {
			if p.Status != model.Holds && p.Status != model.Witnessed {
				t.Errorf("%s: %s %v", c.Name, p.Name, p.Status)
			}
		}
		if res.Distinct != pins[c.Name] && !scenariotest.Unpinned() {
			t.Errorf("%s: %d distinct states, pinned %d", c.Name, res.Distinct, pins[c.Name])
		}
	}
}

// `simrun check saga` at its defaults (the portfolio) catches every -p bug= variant:
// each is caught by the configuration and the invariant named here, at the pinned
// depth (BFS: the shortest counterexample). eager-compensation and run-after-abort
// need a failing section with a parallel branch (the paper's example has none).
func TestPortfolioCatchesBugs(t *testing.T) {
	m, err := model.Lookup("saga")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		bug, config, prop string
		depth             int
	}{
		{"eager-compensation", "branch", mOrder, 9},
		{"rerun-duplicates", "paper", mOnce, 8},
		{"compensate-never-run", "paper", mNull, 11},
		{"run-after-abort", "branch", mDangling, 7},
		{"forget-compensation", "paper", mOnce, 15},
	} {
		var res *model.Result
		for _, pc := range m.Portfolio {
			params := maps.Clone(pc.Params)
			params["bug"] = c.bug
			res = checkModel(t, params, model.Options{Workers: 1, MaxStates: 2_000_000})
			if res.Violation != nil {
				if pc.Name != c.config || res.Violation.Name != c.prop || res.Violation.Depth != c.depth {
					t.Errorf("%s: caught by %s, %s at depth %d; pinned %s, %s at depth %d", c.bug, pc.Name, res.Violation.Name, res.Violation.Depth, c.config, c.prop, c.depth)
				}
				break
			}
		}
		if res.Violation == nil {
			t.Errorf("%s: the portfolio does not catch it", c.bug)
		}
	}
}
