package rpscen

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/faults"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/scenarios/scenariotest"
	"github.com/simrun-dev/simrun/sim"
)

// suite are the scenarios within the thesis' fault model (crash faults, reliable
// links).
var suite = []string{"basic", "crashes", "primary-crash", "backup-return", "registry-crash", "active-sequencer-crash", "active-follower-return", "minority-crash", "slow-claimer", "registry-restart", "swarm",
	"simpleflow", "case-4.5.1", "case-4.5.2", "case-4.5.3", "case-4.5.4", "case-4.5.5", "chapter6"}

// Every scenario of the thesis' fault model keeps RP-P1…P4 on 200 seeds.
func TestScenarioSeeds(t *testing.T) {
	for _, sc := range suite {
		t.Run(sc, func(t *testing.T) { scenariotest.Seeds(t, "replication/"+sc, 1, 200, nil) })
	}
	t.Run("basic-active", func(t *testing.T) {
		scenariotest.Seeds(t, "replication/basic", 1, 200, map[string]string{"mode": "active"})
	})
	// §5.3.3: the replica locator takes the primary an answer to any of its lookups
	// names. Clients re-sending every 3 ms, below a lookup's round trip (up to 16 ms),
	// complete every call (RP-P1 every operation returns); before, each re-send's new
	// lookup voided the answers to the older ones, and no call ever completed.
	for _, c := range []struct{ sc, mode string }{{"basic", "passive"}, {"basic", "active"}, {"swarm", ""}} {
		name, ps := c.sc+"-retry-below-round-trip", map[string]string{"retry": "3ms"}
		if c.mode != "" {
			name, ps["mode"] = name+"-"+c.mode, c.mode
		}
		t.Run(name, func(t *testing.T) {
			scenariotest.Seeds(t, "replication/"+c.sc, 1, 200, ps)
		})
	}
	// The thesis' own protocol polls: notification is its future work (RP-1). The
	// swarm and the sequencer's double crash also run with polling (-p notify=false),
	// where the replicas look the group up themselves (every period or every 5).
	for _, sc := range []string{"swarm", "active-sequencer-crash"} {
		t.Run(sc+"-polling", func(t *testing.T) {
			scenariotest.Seeds(t, "replication/"+sc, 1, 200, map[string]string{"notify": "false"})
		})
	}
	// registry-restart with polling (every registry crashes and comes back empty while
	// a backup claims the role; the replicas' views differ while the renewals refill
	// them): 5 of 1 000 seeds failed before (158 and 442 RP-P1 liveness, 754 RP-P4, 931
	// RP-P1 at most once, 942 RP-P3). In each, a backup answered the claimer's state
	// request while its ping to the crashed primary was unanswered; its next tick took
	// the claimer for failed, and a lookup of the refilling registries that did not
	// list the claimer yet made it claim too: two primaries at the same index. The five
	// seeds run under -short too; the full run sweeps 1 000 (about 3 s of CPU).
	t.Run("registry-restart-polling", func(t *testing.T) {
		scenariotest.Seeds(t, "replication/registry-restart", 1, 1000, map[string]string{"notify": "false"})
	})
	for _, seed := range []uint64{158, 442, 754, 931, 942} {
		t.Run(fmt.Sprintf("registry-restart-polling-seed-%d", seed), func(t *testing.T) {
			scenariotest.Seeds(t, "replication/registry-restart", seed, seed, map[string]string{"notify": "false"})
		})
	}
	// A replica back from a crash, behind, whose first lookup answer came from a
	// registry restarted empty (listing it alone) took the role at once, with nobody
	// to ask for the state, while the other registry listed the primary: swarm with
	// polling lost an acknowledged request on seeds 5730 and 18626 (of 20 000; beyond
	// the 200 swept above). It now waits for the other registries' answers.
	for _, seed := range []uint64{5730, 18626} {
		t.Run(fmt.Sprintf("swarm-polling-seed-%d", seed), func(t *testing.T) {
			scenariotest.Seeds(t, "replication/swarm", seed, seed, map[string]string{"notify": "false"})
		})
	}
	// Four clients: a request can queue behind three others (RP-2 latency without
	// faults then judges that nothing is dropped from the queue).
	for _, mode := range []string{"passive", "active"} {
		t.Run("basic-4-clients-"+mode, func(t *testing.T) {
			scenariotest.Seeds(t, "replication/basic", 1, 200, map[string]string{"mode": mode, "clients": "4"})
		})
	}
}

// Outside the thesis' model, two scenarios were measured clean on 1 000 seeds (the
// README reports it): clocks drifting up to 20% slow with each replica paused for two
// leases, and a scheduler group's primary partitioned while instances flow. They keep
// it on 200.
func TestOutsideTheModelMeasuredClean(t *testing.T) {
	for _, sc := range []string{"drift-pause", "case-partition"} {
		t.Run(sc, func(t *testing.T) { scenariotest.Seeds(t, "replication/"+sc, 1, 200, nil) })
	}
}

// Each §4.5 case depends on the rule it exercises: with the rule removed (a planted
// bug), the same scenario fails on every one of the first seeds, and the property
// that fails is the one the rule keeps.
func TestCasesDependOnTheirRule(t *testing.T) {
	for _, c := range []struct{ sc, bug, prop string }{
		{"case-4.5.1", "no-resume", "RP-P1 every instance completes"},
		{"case-4.5.2", "no-retry", "RP-P1 every instance completes"},
		{"case-4.5.3", "no-resume", "RP-P1 every instance completes"},
		{"case-4.5.4", "no-dup", "RP-P1 at most once"},
		{"case-4.5.5", "no-dup", "RP-P1 at most once"},
	} {
		res, err := scenarios.Sweep(scenarios.SweepOptions{Scenario: "replication/" + c.sc, Params: map[string]string{"bug": c.bug}, From: 1, To: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) != 10 {
			t.Errorf("%s with %s: %d of 10 seeds failed, want all", c.sc, c.bug, len(res.Failures))
			continue
		}
		for _, f := range res.Failures {
			if f.Property != c.prop {
				t.Errorf("%s with %s, seed %d: %s failed, want %s", c.sc, c.bug, f.Seed, f.Property, c.prop)
			}
		}
	}
}

// The trigger of each §4.5 case fires in every run (the case is forced, not hoped for),
// and the instance it hits is taken over by another replica of its group.
func TestCasesAreForced(t *testing.T) {
	for _, sc := range []string{"case-4.5.1", "case-4.5.2", "case-4.5.3", "case-4.5.4", "case-4.5.5"} {
		for seed := uint64(1); seed <= 20; seed++ {
			rep, err := scenarios.RunName("replication/"+sc, scenarios.Options{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Failed() {
				t.Fatalf("%s seed %d: %v", sc, seed, rep.Verdict)
			}
			row := ""
			for _, l := range strings.Split(rep.Summary, "\n") {
				if strings.Contains(l, sc[len("case-"):]) {
					row = l
				}
			}
			if row == "" || strings.Contains(row, "not reached") || !strings.Contains(row, ".scd") {
				t.Fatalf("%s seed %d: the case's crash did not happen:\n%s", sc, seed, rep.Summary)
			}
		}
	}
}

// RP-5: the chapter-6 experiment kills the six components in order, each group that
// lost its primary elects another, and every instance completes.
func TestChapter6(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		rep, err := scenarios.RunName("replication/chapter6", scenarios.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Failed() {
			t.Fatalf("seed %d: %v", seed, rep.Verdict)
		}
		for _, want := range []string{"6.3", "6.4", "6.5", "6.6", "6.7", "6.8", "instances  22 created, 22 completed"} {
			if !strings.Contains(rep.Summary, want) {
				t.Fatalf("seed %d: no %q in\n%s", seed, want, rep.Summary)
			}
		}
		if strings.Contains(rep.Summary, "not reached") || strings.Contains(rep.Summary, "no primary") {
			t.Fatalf("seed %d: a kill did not happen or a group was left without a primary:\n%s", seed, rep.Summary)
		}
	}
}

// 200 crash plans rapid draws: a minority of the replicas and of the registries down at
// a time, with restarts.
func TestGeneratedPlans(t *testing.T) {
	l := faults.DefaultParams(3 * time.Second)
	l.Partitions, l.Spikes, l.CutFrac = 0, 1, 0
	l.Crashes, l.MaxDown, l.MeanDown = 4, 1, 600*time.Millisecond
	l.SpikeExtra = 30 * time.Millisecond
	scenariotest.Plans(t, "replication/basic", scenariotest.Options{Checks: 200, Limits: l})
	scenariotest.Plans(t, "replication/basic", scenariotest.Options{Checks: 200, Limits: l, Params: map[string]string{"mode": "active"}})
	scenariotest.Plans(t, "replication/simpleflow", scenariotest.Options{Checks: 200, Limits: l})
}

// Failover: when the primary crashes, a backup takes over (minimum registration ID)
// and the clients' requests go on; every acknowledged request survives (RP-P4).
func TestFailover(t *testing.T) {
	failovers := 0
	for seed := uint64(1); seed <= 20; seed++ {
		rep, err := scenarios.RunName("replication/crashes", scenarios.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Failed() {
			t.Fatalf("seed %d: %v", seed, rep.Verdict)
		}
		terms := 0
		for _, o := range rep.Result.History {
			if v, ok := o.Value.(rp.Role); ok && v.Primary {
				terms++
			}
		}
		if terms >= 2 {
			failovers++
		}
	}
	if failovers < 15 {
		t.Fatalf("only %d of 20 runs failed over (the primary crashes in every run)", failovers)
	}
}

// Each planted bug is caught by a sweep: a primary without the duplicate check executes
// a re-sent request again (RP-P1); a primary that does not step down when its
// registration lapses is primary alongside the new one (RP-P2, under the partition
// scenario: outside the thesis' model, the one place a registration lapses while its
// primary lives).
func TestBrokenVariantsCaught(t *testing.T) {
	for _, c := range []struct{ bug, sc, prop string }{
		{"no-dup", "replication/crashes", "RP-P1 at most once"},
		{"no-stepdown", "replication/partition", "RP-P2 single primary"},
		// a client re-sending faster than a round trip: duplicates reach the sequencer
		{"no-dup", "replication/active-sequencer-crash", "RP-P1 at most once"},
	} {
		ps := map[string]string{"bug": c.bug}
		if strings.Contains(c.sc, "active") {
			ps["retry"] = "5ms"
		}
		res, err := scenarios.Sweep(scenarios.SweepOptions{Scenario: c.sc, Params: ps, From: 1, To: 100, StopAtFailure: true, FailureLimit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) == 0 || res.Failures[0].Property != c.prop {
			t.Fatalf("%s on %s: %v, want a %s failure", c.bug, c.sc, res.Failures, c.prop)
		}
	}
}

// RP-1: a registration ID is 128 random bits, drawn once and reused after a restart.
func TestRegistrationIDReused(t *testing.T) {
	rep, err := scenarios.RunName("replication/crashes", scenarios.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]map[string]bool{}
	for _, o := range rep.Result.History {
		if v, ok := o.Value.(rp.Role); ok {
			n := rep.Result.Final[o.Node].Name
			if ids[n] == nil {
				ids[n] = map[string]bool{}
			}
			ids[n][v.ID.String()] = true
		}
	}
	for n, s := range ids {
		if len(s) != 1 {
			t.Fatalf("%s used %d registration IDs", n, len(s))
		}
		for id := range s {
			if len(id) != 32 || id == strings.Repeat("0", 32) {
				t.Fatalf("%s: ID %q", n, id)
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct{ p, v, want string }{{"bug", "x", "want none, no-dup"}, {"replicas", "0", "1..9"}, {"period", "10ms", "at least 16ms"}} {
		_, err := scenarios.RunName("replication/basic", scenarios.Options{Seed: 1, Params: map[string]string{c.p: c.v}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("-p %s=%s: %v", c.p, c.v, err)
		}
	}
	// The failover experiment refuses the same periods, as the user's input.
	sc, err := scenarios.Lookup("replication/failover")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := scenarios.NewParams(sc.Params, map[string]string{"periods": "10ms"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Experiment(&scenarios.Exp{Seed: 1, Params: ps}); !scenarios.IsInputError(err) || !strings.Contains(err.Error(), "at least 16ms") {
		t.Errorf("-p periods=10ms: %v", err)
	}
}

// RP-3 failover with a registry back from a crash, which lists only the replicas that
// renewed since: a follower that finds itself the minimum there starts a new epoch and
// must ask the sequencer it follows too, listed or not (left out, the sequencer went on
// ordering and answering while the others fenced its orders off: seeds 42 and 223
// lost or repeated requests, found by review).
func TestActiveRegistryRestart(t *testing.T) {
	plan := &faults.Plan{Events: []faults.Event{
		{At: faults.Duration(250 * time.Millisecond), Kind: "crash", Node: "r1"},
		{At: faults.Duration(255 * time.Millisecond), Kind: "restart", Node: "r1"},
	}}
	seeds := []uint64{42, 223}
	for s := uint64(1); s <= 60; s++ {
		seeds = append(seeds, s)
	}
	for _, seed := range seeds {
		rep, err := scenarios.RunName("replication/basic", scenarios.Options{Seed: seed, Faults: plan,
			Params: map[string]string{"mode": "active", "registries": "1", "ops": "200"}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Failed() {
			t.Fatalf("seed %d: %v", seed, rep.Verdict)
		}
	}
}

// RP-2 §5.2.3: a primary that crashes, restarts (registering again, as a backup) and
// crashes again is waited for like any replica that crashes during the claim, so the
// failover bound runs from its second crash. Found by swarm -p notify=false seed 4881
// (before the swarm drew more): p1 crashed at 1.93 s, restarted at 2.28 s and crashed
// at 2.294 s; p2 took over 356 ms after the second crash and 719 ms after the first
// (the check used to count from the first). Here the same plan hits basic's primary.
func TestFailoverAfterPrimaryRestartsAndCrashes(t *testing.T) {
	ps := map[string]string{"notify": "false", "registries": "1", "clients": "3", "ops": "200"}
	rep, err := scenarios.RunName("replication/basic", scenarios.Options{Seed: 1, Params: ps})
	if err != nil {
		t.Fatal(err)
	}
	var primary string
	for _, o := range rep.Result.History {
		if v, ok := o.Value.(rp.Role); ok && v.Primary && o.Time < sim.Time(1930*time.Millisecond) {
			primary = rep.Result.Final[o.Node].Name
		}
	}
	plan := &faults.Plan{Events: []faults.Event{
		{At: faults.Duration(1930 * time.Millisecond), Kind: "crash", Node: primary},
		{At: faults.Duration(2280 * time.Millisecond), Kind: "restart", Node: primary},
		{At: faults.Duration(2294 * time.Millisecond), Kind: "crash", Node: primary},
		{At: faults.Duration(2646 * time.Millisecond), Kind: "restart", Node: primary},
	}}
	rep, err = scenarios.RunName("replication/basic", scenarios.Options{Seed: 1, Params: ps, Faults: plan})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() {
		t.Fatalf("%v", rep.Verdict)
	}
	for _, v := range rep.Verdicts {
		if strings.Contains(v.Property, "failover within") {
			if !strings.HasPrefix(v.Detail, "1 failovers checked") {
				t.Fatalf("failover detail %q: want the one failover checked", v.Detail)
			}
			return
		}
	}
	t.Fatal("no failover verdict")
}

// Swarm seeds that failed on the protocol or a property, each fixed (the seeds of the
// default swarm as it draws now):
//   - 40, 88: a backup that applied a done and crashed before its ack left came back
//     before the registries dropped it; the primary waited for its ack forever (its
//     queue, and the workflow, stopped). The primary now sends an unacknowledged done
//     again every period.
//   - 216: the only registry was down for more than a lease (the primary stepped
//     down); back, it listed first the replica that registered first, a stale one,
//     which took over alone and ran a committed transition again. A replica listed
//     alone now waits a renewal period and a period.
//   - 4931, 5736: a primary ran a request, crashed before its done left, came back with
//     it at the index the next primary filled with another: same length, another
//     history (backups equal the primary, their duplicate tables compared). States
//     now carry the term of their history; a later term is fresher.
//   - 1599: the agreement stage cut short: the one backup that applied a request
//     crashed with the primary, and the request ran again on its re-send (allowed:
//     RP-P1 now exempts a request whose holders all went down).
//   - 6, 13: a registry crashed while a claim gathered the others' state (RP-2 no
//     primary without a registry now judges the claim's window).
//   - 788: an instance completed before the user, back from a crash, heard of its
//     creation (the completion now counts whenever it came).
//   - 218, 732: one of two replicas crashed for good: the survivor alone waits the
//     renewal period before it claims (the failover bound now includes it).
//   - 260, 17048: a replica back from a crash took itself for the minimum ID from a
//     registry refilling after a crash (two sequencers; two primaries, a backup
//     fencing off the older term's): registries now stay cold for a lease.
//   - 10428: two replicas took over at once in the same term count: terms carry the
//     claimer's ID, and the primary a backup follows is the authority on its history.
//   - 10130: two concurrent claims both took over and ran one workflow step twice: a
//     claimer asked by one with a smaller ID yields.
//   - 6001: an answer after the registries had not yet listed a backup back from a
//     crash (the answered-after-acks check exempts a backup down within a lease).
//   - 1070, 6296, 12160, 17450: a replica paused past its lease (outside the model):
//     exempt from the failover bound; its RP-P1 and RP-P4 violations are expected.
func TestSwarmRegressions(t *testing.T) {
	for _, seed := range []uint64{40, 88, 216, 4931, 5736, 1599, 6, 13, 788, 218, 732, 260, 17048, 10428, 10130, 6001, 1070, 6296, 12160, 17450} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			scenariotest.Seeds(t, "replication/swarm", seed, seed, nil)
		})
	}
}
