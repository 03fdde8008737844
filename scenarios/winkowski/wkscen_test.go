package wkscen

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/protocols/winkowski"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/scenarios/scenariotest"
	"github.com/simrun-dev/simrun/sim"
)

// single-run scenarios and the fault plans they draw on their own.
var singleRun = []string{
	"winkowski/dining", "winkowski/drinking", "winkowski/jobs", "winkowski/chain",
	"winkowski/poolcrash", "winkowski/swarm", "winkowski/custom", "winkowski/orders",
	"winkowski/rejoin",
}

// Every scenario, on 200 seeds, each with the fault plan its seed draws (agents crash
// and return, some for good in chain, swarm and orders, a manager host for good in
// poolcrash, partitions and one-way cuts that lose messages, latency spikes, clock
// skews): WK-P1…P4 and WK-booking hold on every run.
func TestScenariosSeeds(t *testing.T) {
	for _, name := range singleRun {
		t.Run(strings.TrimPrefix(name, "winkowski/"), func(t *testing.T) {
			scenariotest.Seeds(t, name, 1, 200, nil)
		})
	}
}

// The same under fault plans drawn by rapid (agents crash and restart, at most one for
// good; partitions and cuts over every node; spikes, skews), which shrink to a minimal
// plan on failure.
func TestScenariosPlans(t *testing.T) {
	for _, c := range []struct {
		name   string
		agents int
	}{{"winkowski/dining", 5}, {"winkowski/drinking", 6}, {"winkowski/jobs", 4}} {
		t.Run(strings.TrimPrefix(c.name, "winkowski/"), func(t *testing.T) {
			scenariotest.Plans(t, c.name, scenariotest.Options{Checks: 200, Limits: agentLimits(c.agents)})
		})
	}
}

func agentLimits(agents int) faults.Params {
	var names []string
	for i := range agents {
		names = append(names, winkowski.AgentName(i))
	}
	return faults.Params{
		Horizon: time.Second, Crashes: 4, MeanDown: 150 * time.Millisecond, Permanent: 1,
		Partitions: 3, MeanSplit: 120 * time.Millisecond, CutFrac: 0.3,
		Spikes: 3, SpikeExtra: 60 * time.Millisecond, Skews: 2, MaxStep: 20 * time.Millisecond, MaxDriftPPM: 20_000,
		Crashable: names,
	}
}

// The baselines and the restricted variant on the same workloads and fault plans
// (transient failures only, which they are meant to survive): all properties hold. The
// baselines assume reliable links, as the paper does, so they run without partitions
// here; TestBaselinesLoseMessages shows what a partition does to them.
func TestBaselinesAndRestrictedSeeds(t *testing.T) {
	for _, name := range []string{"winkowski/dining", "winkowski/drinking", "winkowski/jobs"} {
		for _, p := range []map[string]string{{"protocol": "ordered", "partitions": "0"}, {"protocol": "central", "partitions": "0"}, {"variant": "restricted"}} {
			t.Run(strings.TrimPrefix(name, "winkowski/")+"/"+paramString(p), func(t *testing.T) {
				scenariotest.Seeds(t, name, 1, 200, p)
			})
		}
	}
}

// The baselines repeat nothing that is lost: a partition that swallows an unlock (or a
// grant) stops tasks for good, where the game (TestScenariosSeeds, same plans) resends
// and goes on. Measured, not hidden.
func TestBaselinesLoseMessages(t *testing.T) {
	for _, proto := range []string{"ordered", "central"} {
		fs := sweepFailures(t, "winkowski/dining", 40, map[string]string{"protocol": proto})
		if len(fs) == 0 {
			t.Errorf("%s: no failure on 40 dining seeds with partitions", proto)
			continue
		}
		for _, v := range fs {
			if !strings.HasPrefix(v.Property, "WK-P3") && !strings.HasPrefix(v.Property, "WK-P4") {
				t.Errorf("%s seed %d: %s, want only liveness failures", proto, v.Seed, v)
			}
		}
		t.Logf("%s: %d of 40 dining seeds fail under the game's fault plans (partitions)", proto, len(fs))
	}
}

func paramString(p map[string]string) string {
	var parts []string
	for k, v := range p {
		parts = append(parts, k+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// sweepFailures runs seeds 1..n and returns the failing seeds' worst verdicts.
func sweepFailures(t *testing.T, name string, n uint64, params map[string]string) []checker.Verdict {
	t.Helper()
	res, err := scenarios.Sweep(scenarios.SweepOptions{Scenario: name, Params: params, From: 1, To: n, FailureLimit: int(n)})
	if err != nil {
		t.Fatal(err)
	}
	return res.Failures
}

// WK-P4 tells the protocols apart: with a task failed for good in the middle of a
// conflict chain, ordered locking blocks tasks far from it, and so does the game with
// the entering phase read literally (choice E1); the game as implemented never does
// (TestScenariosSeeds), nor does the central manager on this workload.
func TestLocalityTellsProtocolsApart(t *testing.T) {
	for _, c := range []struct {
		params map[string]string
		fails  bool
	}{
		{map[string]string{"protocol": "ordered"}, true},
		{map[string]string{"entering": "literal"}, true},
		{map[string]string{"protocol": "central"}, false},
	} {
		c.params["partitions"] = "0" // the baselines assume reliable links
		fs := sweepFailures(t, "winkowski/chain", 200, c.params)
		if (len(fs) > 0) != c.fails {
			t.Errorf("chain %v: %d failing seeds, want failures: %v", c.params, len(fs), c.fails)
			continue
		}
		for _, v := range fs {
			if v.Property != "WK-P4/locality" && v.Property != "WK-P3/starvation" {
				t.Errorf("chain %v seed %d: %s, want only liveness failures", c.params, v.Seed, v)
			}
		}
		if len(fs) > 0 {
			t.Logf("chain %v: %d of 200 seeds miss WK-P4, first: seed %d %s", c.params, len(fs), fs[0].Seed, fs[0])
		}
	}
}

// Broken variants are caught by the sweep: a manager that books a resource without
// checking it is free breaks mutual exclusion; a task that ignores order forms in (p3)
// keeps its requests behind a failed winner — the agent monitor's WK-3/regress sees
// that at once — and blocks a task that shares no pool with the failure (WK-P4;
// winkowski/orders is the configuration where that happens, on every seed); a task
// that wins without waiting for its order forms sends winning forms that find no free
// resource (WK-booking; the monitor's WK-3/progress sees the early winning forms
// first); a task that trusts states older than its last forms (without K1) acts on a
// view in which (p3) fails (WK-3/regress; before the decision rules it was caught on
// 13 of 2000 swarm seeds, by WK-booking, now on most); a manager that never tells a
// released task it was released breaks WK-2 (the manager monitor), and starves the
// task (the liveness properties).
func TestBrokenVariantsCaught(t *testing.T) {
	for _, c := range []struct {
		scenario   string
		params     map[string]string
		from, to   uint64
		property   string
		minFailing int
	}{
		{"winkowski/jobs", map[string]string{"bug": "book-used"}, 1, 20, "WK-P1", 20},
		{"winkowski/orders", map[string]string{"bug": "ignore-orders"}, 1, 40, "WK-3/regress", 40},
		// A short Γ makes tasks advance past each other often: the race shows.
		{"winkowski/dining", map[string]string{"bug": "no-order-wait", "gamma": "5ms"}, 1, 40, "WK-3/progress", 20},
		{"winkowski/swarm", map[string]string{"bug": "no-ack"}, 1, 20, "WK-3/", 10},
		{"winkowski/dining", map[string]string{"bug": "silent-release"}, 1, 20, "WK-2/manager", 20},
	} {
		res, err := scenarios.Sweep(scenarios.SweepOptions{Scenario: c.scenario, Params: c.params, From: c.from, To: c.to, FailureLimit: int(c.to - c.from + 1)})
		if err != nil {
			t.Fatal(err)
		}
		var hit []uint64
		for _, v := range res.Failures {
			if strings.HasPrefix(v.Property, c.property) {
				hit = append(hit, v.Seed)
			}
		}
		if len(hit) < c.minFailing {
			t.Errorf("%v: %s fails on %d of seeds %d-%d of %s, want at least %d (failures: %v)", c.params, c.property, len(hit), c.from, c.to, c.scenario, c.minFailing, res.Failures)
			continue
		}
		t.Logf("%v: %s fails on %d of seeds %d-%d of %s", c.params, c.property, len(hit), c.from, c.to, c.scenario)
	}
	// Ignoring order forms also starves U, which shares no pool with F (WK-P4): the
	// sweep above reports each seed's worst verdict, the monitor's WK-3/regress (T
	// keeps its request at P though (p3), counting F's order form, fails).
	if rep, err := scenarios.RunName("winkowski/orders", scenarios.Options{Seed: 1, Params: map[string]string{"bug": "ignore-orders"}}); err != nil {
		t.Fatal(err)
	} else if fs := failed(rep); !slices.Contains(fs, "WK-P4/locality") || !slices.Contains(fs, "WK-3/regress") {
		t.Errorf("orders seed 1, ignore-orders: failed %v, want WK-P4/locality and WK-3/regress", fs)
	}
	// Without the decision rules, no-order-wait still sends winning forms that find no
	// free resource, and silent-release still starves the released task.
	for _, c := range []struct {
		scenario string
		params   map[string]string
		property string
	}{
		{"winkowski/dining", map[string]string{"bug": "no-order-wait", "gamma": "5ms"}, "WK-booking"},
		{"winkowski/dining", map[string]string{"bug": "silent-release"}, "WK-P3/starvation"},
	} {
		hit := 0
		for seed := uint64(1); seed <= 40 && hit == 0; seed++ {
			rep, err := scenarios.RunName(c.scenario, scenarios.Options{Seed: seed, Params: c.params})
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(failed(rep), c.property) {
				hit++
			}
		}
		if hit == 0 {
			t.Errorf("%v: %s never fails on %s seeds 1-40", c.params, c.property, c.scenario)
		}
	}
}

// A slowdown is caught by the bound: an alarm period longer than the bound (Γ =
// 3.5s, 35 times the default) makes a task that waits for a blocked absolute
// predecessor (E1) miss the 3s bound on some chain seeds; with a bound of 10s every
// seed passes. (Γ = 1.5s used to fail some seeds only because the run ended before
// tasks created late had their 3s: each task meets its bound, and a task is judged
// once its deadline passed — TestLateTasksNotYetDue.)
func TestBoundCatchesSlowdown(t *testing.T) {
	slow := sweepFailures(t, "winkowski/chain", 40, map[string]string{"gamma": "3500ms"})
	if len(slow) == 0 {
		t.Fatal("Γ = 3.5s: no chain seed of 40 misses the 3s bound")
	}
	for _, v := range slow {
		if v.Property != "WK-P4/locality" {
			t.Errorf("seed %d: %s, want WK-P4 only", v.Seed, v)
		}
	}
	if loose := sweepFailures(t, "winkowski/chain", 40, map[string]string{"gamma": "3500ms", "bound": "10s"}); len(loose) != 0 {
		t.Errorf("Γ = 3.5s with a 10s bound: %d failures; the point of this test is that the loose bound hid the slowdown", len(loose))
	}
	t.Logf("Γ = 3.5s: %d of 40 chain seeds miss the 3s bound", len(slow))
}

// Must-fix 1 (review): a job's later tasks are exempt from WK-P3/WK-P4 past an exempt
// task only while it never completed. On swarm seed 208 (complete variant; seed 171
// before the swarm drew host crashes and crash-sends) the literal entering phase (E1)
// blocks a task that follows, in its job, a completed task sharing a pool with the
// failed one: the rule that exempted every later task of such a job hid it (it hid 19
// of the 26 failing literal seeds in 1-3000 then). The default entering passes the
// seed.
func TestJobExemptionStopsAtCompletedTask(t *testing.T) {
	complete := map[string]string{"variant": "complete"}
	rep, err := scenarios.RunName("winkowski/swarm", scenarios.Options{Seed: 208, Params: map[string]string{"entering": "literal", "variant": "complete"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict.Property != "WK-P4/locality" || !strings.Contains(rep.Verdict.Detail, "task 12 (a2, job 2 #4)") {
		t.Fatalf("literal swarm seed 208: %s, want WK-P4 naming task 12 (job 2 #4)", rep.Verdict)
	}
	if rep, err := scenarios.RunName("winkowski/swarm", scenarios.Options{Seed: 208, Params: complete}); err != nil || rep.Failed() {
		t.Fatalf("default swarm seed 208: %v %v", err, rep.Verdict)
	}
	// The rule itself on a crafted run: job A = [P0] then [P2], F on P0 fails for
	// good; A's first task (exempt: it shares P0 with F) completed, so its second is
	// checked; B's first task (on P0) never completed, so B's second is not.
	cfg := winkowski.Config{Agents: 3, K: 4, Gamma: time.Millisecond, Pools: []winkowski.Pool{
		{Name: "P0", Capacity: 1}, {Name: "P1", Capacity: 1}, {Name: "P2", Capacity: 1}}, Jobs: []winkowski.Job{
		{Agent: 0, Tasks: []winkowski.TaskSpec{{Pools: []winkowski.PoolID{0}}, {Pools: []winkowski.PoolID{2}}}},
		{Agent: 1, Tasks: []winkowski.TaskSpec{{Pools: []winkowski.PoolID{0}}, {Pools: []winkowski.PoolID{1}}}},
		{Agent: 2, Tasks: []winkowski.TaskSpec{{Pools: []winkowski.PoolID{0}}}},
	}}
	sys, err := winkowski.NewSystem(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &run{sys: sys, proto: game, plan: faults.Plan{Events: []faults.Event{{At: faults.Duration(time.Millisecond), Kind: "crash", Node: "a3"}}},
		agentOf: map[string]int{"a1": 0, "a2": 1, "a3": 2}, hostOf: map[string][]int{}}
	obs := func(at time.Duration, v any) sim.Observation { return sim.Observation{Time: sim.Time(at), Value: v} }
	h := []sim.Observation{
		obs(0, winkowski.Created{Task: 1, Agent: 0}), obs(0, winkowski.Created{Task: 3, Agent: 1}), obs(0, winkowski.Created{Task: 5, Agent: 2}),
		obs(5*time.Millisecond, winkowski.Done{Task: 1}), obs(6*time.Millisecond, winkowski.Created{Task: 2, Agent: 0}),
	}
	cr := &checker.Run{Result: &sim.Result{History: h, Time: sim.Time(10 * time.Second)}, Settled: sim.Time(time.Millisecond), Down: []string{"a3"}}
	for _, direct := range []bool{true, false} {
		var names []string
		items, _ := r.items(cr, direct)
		for _, it := range items {
			names = append(names, it.Name)
		}
		if len(names) != 1 || !strings.HasPrefix(names[0], "task 2 ") {
			t.Errorf("direct=%v: items %q, want task 2 alone (task 1 exempt but done; 3 exempt, not done, so 4 never created)", direct, names)
		}
	}
}

// Must-fix 3 (review): the liveness properties check something. In runs without a
// failure for good WK-P3 requires every task; over the chain's runs (a task fails for
// good in every run) WK-P4 requires most tasks; the metrics say how many each checked.
func TestLivenessChecksAreNotVacuous(t *testing.T) {
	for _, c := range []struct {
		scenario string
		full     bool // WK-P3 must cover every task on every run
	}{
		{"winkowski/dining", true}, {"winkowski/drinking", true}, {"winkowski/jobs", true}, {"winkowski/custom", true},
		{"winkowski/chain", false}, {"winkowski/swarm", false},
	} {
		var p3, p4, tasks int
		for seed := uint64(1); seed <= 10; seed++ {
			rep, err := scenarios.RunName(c.scenario, scenarios.Options{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			m := rep.Metrics.(Metrics)
			p3, p4, tasks = p3+m.Liveness.P3Tasks, p4+m.Liveness.P4Tasks, tasks+m.Tasks
			if c.full && (m.Liveness.P3Tasks != m.Tasks || m.Liveness.P4Tasks != m.Tasks) {
				t.Errorf("%s seed %d: WK-P3 checked %d and WK-P4 %d of %d tasks, want all", c.scenario, seed, m.Liveness.P3Tasks, m.Liveness.P4Tasks, m.Tasks)
			}
		}
		if !c.full && 2*p4 < tasks {
			t.Errorf("%s: WK-P4 checked %d of %d tasks over 10 seeds, want most", c.scenario, p4, tasks)
		}
		t.Logf("%s, seeds 1-10: WK-P3 checked %d, WK-P4 %d of %d tasks", c.scenario, p3, p4, tasks)
	}
}

// Bad input is rejected before anything runs, with one line naming what is wrong.
func TestBadInputRejected(t *testing.T) {
	for _, c := range []struct {
		scenario string
		params   map[string]string
		want     string
	}{
		{"winkowski/custom", map[string]string{"tasks": "A+C"}, `unknown pool "C"`},
		{"winkowski/custom", map[string]string{"pools": "A:0,B:1"}, `pool "A" has capacity 0`},
		{"winkowski/custom", map[string]string{"pools": "A,B:1"}, `"A" is not name:capacity`},
		{"winkowski/dining", map[string]string{"k": "3"}, "K=3 must exceed the number of agents (5)"},
		{"winkowski/dining", map[string]string{"gamma": "0s"}, `parameter gamma="0s": want a duration from 1ms`},
		{"winkowski/dining", map[string]string{"gamma": "-5ms"}, `parameter gamma="-5ms": want a duration from 1ms`},
		{"winkowski/jobs", map[string]string{"protocol": "paxos"}, "want winkowski, ordered or central"},
		{"winkowski/jobs", map[string]string{"variant": "p9"}, `parameter variant: unknown variant "p9"`},
		{"winkowski/jobs", map[string]string{"bug": "typo"}, `unknown bug "typo"`},
		{"winkowski/jobs", map[string]string{"maxcap": "0"}, "maxcap"},
	} {
		_, err := scenarios.RunName(c.scenario, scenarios.Options{Seed: 1, Params: c.params})
		if err == nil || !scenarios.IsInputError(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %v: error %v, want a one-line input error containing %q", c.scenario, c.params, err, c.want)
		}
	}
}

// TestSwarmShowsDrawnGamma: the swarm's report says which Γ it drew (its params line
// only says gamma=seed); scenarios with a given Γ print no drawn line.
func TestSwarmShowsDrawnGamma(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		rep, err := scenarios.RunName("winkowski/swarm", scenarios.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("gamma=%v ", rep.Metrics.(Metrics).Gamma)
		if len(rep.Notes) != 1 || !strings.HasPrefix(rep.Notes[0], want) {
			t.Fatalf("seed %d: notes %q, want prefix %q", seed, rep.Notes, want)
		}
	}
	if rep, err := scenarios.RunName("winkowski/dining", scenarios.Options{Seed: 1}); err != nil || rep.Notes != nil {
		t.Fatalf("dining: %v %q", err, rep.Notes)
	}
}

// Swarm seeds 7007 and 17016 (found by the 20 000-seed sweep): 60 tasks on three or
// four single-unit pools, most needing all of them, run one after another; the last
// tasks of some jobs are created late and are still competing when the run ends,
// before their bound ran out. WK-P3/WK-P4 judged them "never completed"; a task is
// now judged once its deadline, max(creation, settled) + bound, has passed, and the
// ones the run ended before are counted exempt (not yet due). Since the swarm draws
// contention crashes (contend.go), seed 7007's tasks all finish before its end, and
// 17016 is the only seed of 1-20000 with late tasks.
func TestLateTasksNotYetDue(t *testing.T) {
	for _, seed := range []uint64{17016} {
		rep, err := scenarios.RunName("winkowski/swarm", scenarios.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Failed() {
			t.Errorf("swarm seed %d: %s", seed, rep.Verdict)
		}
		for _, v := range rep.Verdicts {
			if strings.HasPrefix(v.Property, "WK-P3") && (v.Exempt == 0 || v.Checked < 50) {
				t.Errorf("swarm seed %d: %s checked %d, exempt %d: want late tasks exempt and the rest checked", seed, v.Property, v.Checked, v.Exempt)
			}
		}
	}
}
