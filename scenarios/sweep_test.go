package scenarios_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/scenarios/scenariotest"
	"github.com/simrun-dev/simrun/sim"
	"github.com/simrun-dev/simrun/sim/demo"
)

// forgetful is a deliberately broken demo server: it forgets a client's
// deduplication entry before each request, so a retried request is applied twice.
type forgetful struct{ *demo.Server }

func (f forgetful) Handle(in sim.Input, out *sim.Outbox) {
	if req, ok := in.Msg.(demo.Request); ok && in.Kind == sim.Receive {
		delete(f.Last, req.Client)
	}
	f.Server.Handle(in, out)
}

func forgetfulSystem(cfg *demo.Config, clients int) []sim.NodeSpec {
	specs := demo.System(cfg, clients)
	specs[0].New = func() sim.Node { return forgetful{demo.NewServer(cfg)().(*demo.Server)} }
	return specs
}

func init() {
	sc, err := scenarios.Lookup("demo/faults")
	if err != nil {
		panic(err)
	}
	// The broken server under demo/faults' own seeded plans: some seeds fail.
	scenarios.Register(&scenarios.Scenario{
		Name: "test/forgetful", Help: "demo with a server that forgets retried requests (broken on purpose)",
		Params: sc.Params, Build: scenarios.DemoBuild(scenarios.DemoFaults, sim.Network{}, forgetfulSystem),
	})
	// The same broken server, in a scenario that declares the at-most-once and
	// linearizability violations expected (as an outside-the-model scenario would).
	forgetfulBuild := scenarios.DemoBuild(scenarios.DemoFaults, sim.Network{}, forgetfulSystem)
	scenarios.Register(&scenarios.Scenario{
		Name: "test/forgetful-expected", Help: "test/forgetful with its violations declared expected",
		Params: sc.Params, Build: func(b *scenarios.Build) (*scenarios.Setup, error) {
			st, err := forgetfulBuild(b)
			if err == nil {
				st.Expected = map[string]string{
					"demo/at-most-once": "the server forgets retried requests", "demo/linearizable": "so do its replies",
					"demo/replies-match": "and its replies",
				}
			}
			return st, err
		},
	})
	scenarios.Register(&scenarios.Scenario{
		Name: "test/experiment", Help: "an experiment",
		Experiment: func(*scenarios.Exp) ([]*reports.Table, error) { return nil, nil },
	})
}

func sweep(t *testing.T, o scenarios.SweepOptions) *scenarios.SweepResult {
	t.Helper()
	res, err := scenarios.Sweep(o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSweepWorkersIdentical: 1, 2 and 3 workers give byte-identical JSON, failures
// included.
func TestSweepWorkersIdentical(t *testing.T) {
	o := scenarios.SweepOptions{Scenario: "test/forgetful", From: 1, To: 80, FailureLimit: 5}
	var first []byte
	for _, w := range []int{1, 2, 3} {
		o.Workers = w
		res := sweep(t, o)
		b := res.JSON()
		if first == nil {
			first = b
			if res.Failed == 0 || res.Failed == res.Runs || len(res.Failures) != 5 {
				t.Fatalf("want some but not all of 80 seeds to fail (5 listed): %d failed, %d listed", res.Failed, len(res.Failures))
			}
			for i := 1; i < len(res.Failures); i++ {
				if res.Failures[i].Seed <= res.Failures[i-1].Seed {
					t.Fatalf("failures not in seed order: %v", res.Failures)
				}
			}
			continue
		}
		if !bytes.Equal(b, first) {
			t.Fatalf("%d workers: JSON differs from 1 worker:\n%s\nvs\n%s", w, b, first)
		}
	}
}

// TestShardsMergeToUnsharded: the merge of every shard equals the unsharded result,
// byte for byte, whatever the order of the parts and even with empty shards.
func TestShardsMergeToUnsharded(t *testing.T) {
	base := scenarios.SweepOptions{Scenario: "test/forgetful", From: 3, To: 42, Workers: 2, FailureLimit: 3}
	whole := sweep(t, base).JSON()
	for _, n := range []int{1, 2, 3, 7, 45} {
		var parts []*scenarios.SweepResult
		for i := n; i >= 1; i-- { // reverse order on purpose
			o := base
			o.Shard, o.Shards = i, n
			// Round-trip through JSON like shard files do.
			var r scenarios.SweepResult
			if err := json.Unmarshal(sweep(t, o).JSON(), &r); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, &r)
		}
		m, err := scenarios.MergeSweeps(parts, nil)
		if err != nil {
			t.Fatalf("%d shards: %v", n, err)
		}
		if got := m.JSON(); !bytes.Equal(got, whole) {
			t.Fatalf("%d shards merged:\n%s\nunsharded:\n%s", n, got, whole)
		}
		var a, b bytes.Buffer
		_ = m.WriteSummary(&a)
		var u scenarios.SweepResult
		_ = json.Unmarshal(whole, &u)
		_ = u.WriteSummary(&b)
		if a.String() != b.String() {
			t.Fatalf("%d shards: summaries differ:\n%s\nvs\n%s", n, a.String(), b.String())
		}
	}
}

func TestShardRange(t *testing.T) {
	r := scenarios.SeedRange{From: 10, To: 19} // 10 seeds
	var got []string
	for i := 1; i <= 3; i++ {
		s, ok := scenarios.ShardRange(r, i, 3)
		if !ok {
			t.Fatalf("shard %d/3 empty", i)
		}
		got = append(got, s.String())
	}
	if strings.Join(got, " ") != "10-12 13-15 16-19" {
		t.Fatalf("shards %v", got)
	}
	if _, ok := scenarios.ShardRange(scenarios.SeedRange{From: 1, To: 2}, 1, 4); ok {
		t.Fatal("shard 1/4 of 2 seeds is not empty")
	}
}

// TestSweepStopAtFailure: the lowest failing seed is found whatever the worker count.
func TestSweepStopAtFailure(t *testing.T) {
	full := sweep(t, scenarios.SweepOptions{Scenario: "test/forgetful", From: 1, To: 80, Workers: 1})
	for _, w := range []int{1, 2, 4} {
		res := sweep(t, scenarios.SweepOptions{Scenario: "test/forgetful", From: 1, To: 80, Workers: w, StopAtFailure: true})
		if len(res.Failures) == 0 || res.Failures[0].Seed != full.Failures[0].Seed {
			t.Fatalf("%d workers: first failure %v, want seed %d", w, res.Failures, full.Failures[0].Seed)
		}
		if !strings.Contains(res.Failures[0].Repro, "simrun run test/forgetful --seed ") {
			t.Fatalf("repro %q", res.Failures[0].Repro)
		}
	}
}

func TestSweepBadInput(t *testing.T) {
	for _, c := range []struct {
		o    scenarios.SweepOptions
		want string
	}{
		{scenarios.SweepOptions{Scenario: "nope", From: 1, To: 2}, "unknown scenario"},
		{scenarios.SweepOptions{Scenario: "test/experiment", From: 1, To: 2}, "experiment"},
		{scenarios.SweepOptions{Scenario: "demo/faults", From: 5, To: 1}, "empty"},
		{scenarios.SweepOptions{Scenario: "demo/faults", From: 1, To: 2, Workers: -1}, "workers"},
		{scenarios.SweepOptions{Scenario: "demo/faults", From: 1, To: 2, Shard: 3, Shards: 2}, "shard 3/2"},
		{scenarios.SweepOptions{Scenario: "demo/faults", From: 1, To: 2, Shard: 1, Shards: 0}, "shard 1/0"},
		{scenarios.SweepOptions{Scenario: "demo/faults", From: 1, To: 2, Params: map[string]string{"x": "1"}}, "unknown parameter"},
		{scenarios.SweepOptions{Scenario: "demo/faults", From: 1, To: 2, Params: map[string]string{"ops": "x"}}, "ops"},
	} {
		_, err := scenarios.Sweep(c.o)
		if err == nil || !scenarios.IsInputError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want an input error about %q", c.o, err, c.want)
		}
	}
}

func TestMergeRejects(t *testing.T) {
	shard := func(o scenarios.SweepOptions, i, n int) *scenarios.SweepResult {
		o.Shard, o.Shards = i, n
		return sweep(t, o)
	}
	o := scenarios.SweepOptions{Scenario: "demo/happy", From: 1, To: 6}
	a, b := shard(o, 1, 2), shard(o, 2, 2)
	other := o
	other.Params = map[string]string{"ops": "3"}
	otherSeeds := o
	otherSeeds.To = 7
	edited := *b
	edited.Runs++
	recount := *b
	recount.ByClass.OK--
	recount.ByClass.Safety++
	for _, c := range []struct {
		name  string
		parts []*scenarios.SweepResult
		want  string
	}{
		{"nothing", nil, "no results"},
		{"missing shard", []*scenarios.SweepResult{a}, "missing shard 2/2"},
		{"duplicate shard", []*scenarios.SweepResult{a, a, b}, "both shard 1/2"},
		{"other parameters", []*scenarios.SweepResult{a, shard(other, 2, 2)}, "parameters"},
		{"other seeds", []*scenarios.SweepResult{a, shard(otherSeeds, 2, 2)}, "seeds"},
		{"other shard count", []*scenarios.SweepResult{a, shard(o, 2, 3)}, "shard count"},
		{"other scenario", []*scenarios.SweepResult{a, shard(scenarios.SweepOptions{Scenario: "demo/faults", From: 1, To: 6}, 2, 2)}, "scenario"},
		{"unsharded among shards", []*scenarios.SweepResult{a, sweep(t, o)}, "not a shard"},
		{"edited run count", []*scenarios.SweepResult{a, &edited}, "runs"},
		{"edited verdict counts", []*scenarios.SweepResult{a, &recount}, "do not add up"},
		{"format", []*scenarios.SweepResult{a, {Format: "x"}}, "format"},
	} {
		_, err := scenarios.MergeSweeps(c.parts, nil)
		if err == nil || !scenarios.IsInputError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want an input error about %q", c.name, err, c.want)
		}
	}
}

// TestSweepSummary pins the text summary of a small failing sweep.
func TestSweepSummary(t *testing.T) {
	res := sweep(t, scenarios.SweepOptions{Scenario: "test/forgetful", From: 1, To: 40, Workers: 2, FailureLimit: 2})
	var b bytes.Buffer
	if err := res.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{
		"sweep     test/forgetful seeds 1-40\n",
		"runs      40 seeds: ",
		"seeds by worst verdict\n",
		"verdicts per property (checked: ",
		"demo/at-most-once",
		// demo/completes says how many operations it checked: 40 runs × 3 clients × 30.
		"demo/completes            0        0        0        0        0       40      3600\n",
		"failing seeds (first 2 of ",
		"reproduce: simrun run test/forgetful --seed ",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if res.ByClass.Get(checker.Safety) == 0 {
		t.Errorf("no safety failures counted: %+v", res.ByClass)
	}
}

// BenchmarkSweep runs 32 seeds of the CPU-bound demo/swarm scenario per op, with 1 and
// 2 workers. Target: workers=2 at least 1.8× faster than workers=1.
func BenchmarkSweep(b *testing.B) {
	b.Run("workers=1", scenariotest.SweepBenchmark(1))
	b.Run("workers=2", scenariotest.SweepBenchmark(2))
}

// An interrupted sweep stops starting seeds, reports the prefix that ran as a partial
// result, and cannot be merged.
func TestSweepInterrupt(t *testing.T) {
	var stop atomic.Bool
	var n atomic.Int64
	res, err := scenarios.Sweep(scenarios.SweepOptions{Scenario: "demo/happy", From: 1, To: 400, Workers: 2, Shard: 1, Shards: 1,
		Interrupt: &stop, OnRun: func(uint64, *scenarios.Report) {
			if n.Add(1) == 5 {
				stop.Store(true)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Runs < 5 || res.Runs > 10 {
		t.Fatalf("interrupted %v after %d runs", res.Interrupted, res.Runs)
	}
	var b strings.Builder
	_ = res.WriteSummary(&b)
	if !strings.Contains(b.String(), "interrupted: only the first") {
		t.Fatalf("summary:\n%s", b.String())
	}
	if _, err := scenarios.MergeSweeps([]*scenarios.SweepResult{res}, nil); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("merge of an interrupted sweep: %v", err)
	}
}

// Violations a scenario declares expected are counted apart and are not failures: the
// sweep passes, says how many runs had only expected violations, and keeps the other
// classes (a bound, a crash) as failures.
func TestExpectedViolations(t *testing.T) {
	res := sweep(t, scenarios.SweepOptions{Scenario: "test/forgetful-expected", From: 1, To: 40})
	if res.Failed != 0 || res.ByClass.Expected == 0 || !res.Passed() {
		t.Fatalf("failed %d, expected %d: the declared violations should pass as expected", res.Failed, res.ByClass.Expected)
	}
	if res.ByProperty["demo/at-most-once"].Expected == 0 || res.ByProperty["demo/completes"].Expected != 0 {
		t.Fatalf("per property: %+v %+v", res.ByProperty["demo/at-most-once"], res.ByProperty["demo/completes"])
	}
	var b strings.Builder
	if err := res.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "with only expected violations") || !strings.Contains(b.String(), " expected ") {
		t.Fatalf("summary does not show the expected violations:\n%s", b.String())
	}
	rep, err := scenarios.Run(mustLookup(t, "test/forgetful-expected"), scenarios.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() || rep.Verdict.Class != checker.Expected || !strings.Contains(rep.Verdict.Detail, "expected here (the server forgets retried requests)") {
		t.Fatalf("run verdict %v: want an expected violation that says why", rep.Verdict)
	}
}

func mustLookup(t *testing.T, name string) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
