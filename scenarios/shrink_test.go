package scenarios_test

import (
	"testing"

	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/scenarios"
)

// Shrinking a failing run of the forgetful server keeps the property violated, ends
// with fewer faults and events, is a fixpoint (shrinking again changes nothing) and
// does not depend on the number of workers.
func TestShrinkForgetful(t *testing.T) {
	sc := mustLookup(t, "test/forgetful")
	for _, seed := range []uint64{1, 2, 5} {
		rep, err := scenarios.Run(sc, scenarios.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Failed() {
			continue
		}
		o := scenarios.ShrinkOptions{Scenario: sc.Name, Seed: seed, Faults: rep.Faults, Workers: 1}
		res, err := scenarios.Shrink(o)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Complete || res.Report == nil || !res.Verdict.Failed() || res.Verdict.Property != rep.Verdict.Property {
			t.Fatalf("seed %d: %+v", seed, res)
		}
		t.Logf("params %v plan %s", res.Params, res.Plan)
		if res.FaultsAfter > res.FaultsBefore || res.FaultsAfter > 3 {
			t.Fatalf("seed %d: %s (want at most 3 faults left)", seed, res.Summary())
		}
		t.Logf("seed %d: %s in %d runs: %s", seed, res.Summary(), res.Runs, res.Plan)
		// The shrunk run replays from its plan and parameters.
		again, err := scenarios.Run(sc, scenarios.Options{Seed: seed, Params: res.Params, Faults: &res.Plan})
		if err != nil || !again.Failed() || again.Result.Events != res.EventsAfter {
			t.Fatalf("seed %d: the shrunk run does not reproduce: %v %v", seed, err, again.Verdict)
		}
		// Idempotent.
		o2 := o
		o2.Faults, o2.Params, o2.Property = res.Plan, res.Params, res.Property
		res2, err := scenarios.Shrink(o2)
		if err != nil {
			t.Fatal(err)
		}
		if string(res2.Plan.JSON()) != string(res.Plan.JSON()) || res2.EventsAfter != res.EventsAfter || !mapsEqual(res2.Params, res.Params) {
			t.Fatalf("seed %d: shrinking again changed %s into %s", seed, res.Plan, res2.Plan)
		}
		// Workers do not change the result.
		o3 := o
		o3.Workers = 3
		res3, err := scenarios.Shrink(o3)
		if err != nil {
			t.Fatal(err)
		}
		if string(res3.Plan.JSON()) != string(res.Plan.JSON()) || !mapsEqual(res3.Params, res.Params) {
			t.Fatalf("seed %d: 3 workers shrank to %s, 1 worker to %s", seed, res3.Plan, res.Plan)
		}
		return
	}
	t.Fatal("no failing seed among 1, 2, 5")
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A passing run, or a property the run does not violate, is refused with a clear error.
func TestShrinkRefusesPassingRuns(t *testing.T) {
	if _, err := scenarios.Shrink(scenarios.ShrinkOptions{Scenario: "demo/happy", Seed: 1, Faults: faults.Plan{}}); err == nil || !scenarios.IsInputError(err) {
		t.Fatalf("err = %v", err)
	}
}

// A guided sweep is deterministic for any number of workers, and shards merge.
func TestGuidedSweepDeterministic(t *testing.T) {
	o := scenarios.SweepOptions{Scenario: "test/forgetful", From: 1, To: 100, Guided: true, Workers: 1}
	a := sweep(t, o)
	o.Workers = 3
	b := sweep(t, o)
	if string(a.JSON()) != string(b.JSON()) {
		t.Fatalf("1 and 3 workers differ:\n%s\n%s", a.JSON(), b.JSON())
	}
	if a.GuidedStats == nil || a.GuidedStats.Mutated == 0 || a.GuidedStats.Corpus == 0 || a.Runs != 100 || a.Coverage == nil {
		t.Fatalf("guided stats %+v runs %d", a.GuidedStats, a.Runs)
	}
	if a.Failed == 0 || a.GuidedStats.FirstFailure == 0 {
		t.Fatal("the guided sweep missed the forgetful server")
	}
	var parts []*scenarios.SweepResult
	for i := 1; i <= 2; i++ {
		o.Shard, o.Shards = i, 2
		parts = append(parts, sweep(t, o))
	}
	m, err := scenarios.MergeSweeps(parts, nil)
	if err != nil || m.Runs != 100 || !m.Guided {
		t.Fatalf("merge: %v %+v", err, m)
	}
}

// The comparison runs both sweeps on one budget; the uniform one is the plain seed
// sequence (its first failure is the lowest failing seed).
func TestCompareGuided(t *testing.T) {
	c, err := scenarios.CompareGuided("test/forgetful", nil, 64, true, 2)
	if err != nil {
		t.Fatal(err)
	}
	res := sweep(t, scenarios.SweepOptions{Scenario: "test/forgetful", From: 1, To: 64})
	if c.Uniform.FirstFailure != int(res.Failures[0].Seed) || c.Uniform.Mutated != 0 {
		t.Fatalf("uniform first failure %d, the sweep's lowest failing seed %d", c.Uniform.FirstFailure, res.Failures[0].Seed)
	}
	if c.Guided.FirstFailure == 0 {
		t.Fatal("guided found no failure")
	}
}
