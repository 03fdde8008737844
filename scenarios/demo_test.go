package scenarios_test

import (
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/scenarios/scenariotest"
	"github.com/simrun-dev/simrun/sim"
)

// TestDemoSeeds: the demo protocol's properties (at-most-once, replies match,
// linearizable per key, every operation completes within the bound after the faults
// settle) hold on many seeds of every demo scenario, faults included.
func TestDemoSeeds(t *testing.T) {
	for _, sc := range []string{"demo/faults", "demo/swarm", "demo/lossy"} {
		t.Run(sc, func(t *testing.T) { scenariotest.Seeds(t, sc, 1, 2000, nil) })
	}
	// More clients and keys than the default, so operations overlap more.
	t.Run("busy", func(t *testing.T) {
		scenariotest.Seeds(t, "demo/swarm", 1, 500, map[string]string{"clients": "6", "keys": "a,b,c", "think": "5ms"})
	})
}

// TestDemoSuiteShowsLinearizability: the demo's default run checks linearizability.
func TestDemoSuiteShowsLinearizability(t *testing.T) {
	rep, err := scenarios.RunName("demo/faults", scenarios.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range rep.Verdicts {
		names = append(names, v.Property+"="+v.Class.String())
	}
	want := "demo/at-most-once=ok demo/replies-match=ok demo/linearizable=ok demo/completes=ok"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("verdicts %s, want %s", got, want)
	}
}

// TestForgetfulCaughtBySeeds: the broken server is caught by the seeded sweep too, by
// at-most-once and by linearizability (a duplicate add shifts later values).
func TestForgetfulCaughtBySeeds(t *testing.T) {
	res := sweep(t, scenarios.SweepOptions{Scenario: "test/forgetful", From: 1, To: 100})
	if res.ByProperty["demo/at-most-once"].Safety == 0 || res.ByProperty["demo/linearizable"].Safety == 0 {
		t.Fatalf("broken server not caught: %+v %+v", res.ByProperty["demo/at-most-once"], res.ByProperty["demo/linearizable"])
	}
}

// boundedRun is a finished run of tasks: each task is (start, done) in ms, done < 0
// for a task that never completed; the faults settled at heal ms.
func boundedRun(heal int64, tasks ...[2]int64) (*checker.Run, func(*checker.Run) []scenarios.Item) {
	ms := func(n int64) sim.Time { return sim.Time(n * int64(time.Millisecond)) }
	r := &checker.Run{Result: &sim.Result{Outcome: sim.Quiescent, Time: ms(10_000)}, Settled: ms(heal)}
	items := func(*checker.Run) []scenarios.Item {
		var out []scenarios.Item
		for i, tk := range tasks {
			it := scenarios.Item{Name: "task" + string(rune('A'+i)), Start: ms(tk[0])}
			if tk[1] >= 0 {
				it.Done, it.Completed = ms(tk[1]), true
			}
			out = append(out, it)
		}
		return out
	}
	return r, items
}

// TestBoundedLiveness: "after the heal at H every task completes by H+B", for tasks
// issued before the heal, and within B of their start for tasks issued after it.
func TestBoundedLiveness(t *testing.T) {
	const bound = 100 * time.Millisecond
	for _, c := range []struct {
		name  string
		heal  int64
		tasks [][2]int64
		want  checker.Class
		msg   string
	}{
		{"all complete in time", 500, [][2]int64{{0, 590}, {200, 600}, {700, 790}}, checker.OK, "3 checked"},
		{"slow during the faults is fine", 500, [][2]int64{{0, 599}}, checker.OK, "1 checked"},
		{"nothing to check is visible", 500, nil, checker.OK, "0 checked"},
		{"never completes after the heal", 500, [][2]int64{{0, 550}, {100, -1}}, checker.Liveness, "1 never completed"},
		{"completes after H+B", 500, [][2]int64{{0, 601}}, checker.Liveness, "taskA issued at 0s completed at 601ms"},
		{"issued after the heal, late", 500, [][2]int64{{800, 901}}, checker.Liveness, "taskA issued at 800ms"},
	} {
		r, items := boundedRun(c.heal, c.tasks...)
		v := checker.Evaluate(r, []checker.Property{scenarios.Bounded("tasks", bound, items)})[0]
		if v.Class != c.want || !strings.Contains(v.Detail, c.msg) {
			t.Errorf("%s: %s %q, want %s %q", c.name, v.Class, v.Detail, c.want, c.msg)
		}
	}
	// The note belongs to the property that made it: the next one starts without it,
	// and a failure's error replaces it.
	r, items := boundedRun(500, [2]int64{0, 590})
	vs := checker.Evaluate(r, []checker.Property{
		scenarios.Bounded("tasks", bound, items),
		{Name: "quiet", Check: func(*checker.Run) error { return nil }},
		scenarios.Bounded("late", 10*time.Millisecond, items),
	})
	if vs[0].Detail != "1 checked" || vs[1].Detail != "" || vs[2].Class != checker.Liveness || strings.Contains(vs[2].Detail, "checked") {
		t.Errorf("notes: %v", vs)
	}
	// A run cut short by a bound has no liveness verdict, only the bound.
	r, items = boundedRun(500, [2]int64{0, -1})
	r.Outcome = sim.TimeBound
	vs = checker.Evaluate(r, []checker.Property{scenarios.Bounded("tasks", bound, items)})
	if len(vs) != 1 || vs[0].Class != checker.Bound {
		t.Errorf("bounded run: %v", vs)
	}
}

// Issue 16, item 4: a thousand clients finish in well under a second and their
// history is proved linearizable by the server's apply order (before, the search over
// 30 000 concurrent operations on 2 keys timed out after 30 s at 18 GB, and each
// write copied every client's entry into stable storage).
func TestDemoThousandClients(t *testing.T) {
	rep, err := scenarios.RunName("demo/happy", scenarios.Options{Seed: 1, Params: map[string]string{"clients": "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() || rep.Verdict.Class != checker.OK {
		t.Fatalf("%v", rep.Verdict)
	}
}

// A hundred thousand clients start one by one over 100 virtual seconds; the run's
// limit counts from the last start (it used to end in a false "possible livelock").
func TestDemoHundredThousandClients(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 1 s and 600 MB")
	}
	rep, err := scenarios.RunName("demo/happy", scenarios.Options{Seed: 1, Params: map[string]string{"clients": "100000", "ops": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() || rep.Verdict.Class != checker.OK {
		t.Fatalf("%v", rep.Verdict)
	}
}

// Issue 34: the demo tells the kernel how many observations a run makes, so a long
// history holds exactly them (no slack from growing, no copy of it at its largest):
// 3 000 clients of 30 operations make more than sim.MaxReserved observations.
func TestDemoHistoryExact(t *testing.T) {
	rep, err := scenarios.RunName("demo/happy", scenarios.Options{Seed: 1, Params: map[string]string{"clients": "3000"}})
	if err != nil {
		t.Fatal(err)
	}
	h := rep.Result.History
	if want := 3000 * (1 + 3*30); len(h) != want || cap(h) != want || want <= sim.MaxReserved {
		t.Fatalf("%d observations in a history of capacity %d, want %d (more than %d)", len(h), cap(h), want, sim.MaxReserved)
	}
}
