package rpscen

import (
	"testing"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/scenarios/scenariotest"
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
	const distinct = 496877
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
// answer.
func TestModelWalksRestart(t *testing.T) {
	res := checkModel(t, map[string]string{"replicas": "3", "restart": "true", "ticks": "12"}, model.Options{Strategy: model.Random, Walks: 300, Seed: 1, MaxDepth: 600})
	if res.Violation != nil {
		t.Fatalf("violation: %v", res.Violation.Name)
	}
}
