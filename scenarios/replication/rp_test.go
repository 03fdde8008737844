package rpscen

import (
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/faults"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/scenarios/scenariotest"
)

// The thesis' fault model (crash faults, reliable links): every scenario keeps RP-P1…P4
// on 200 seeds.
func TestScenarioSeeds(t *testing.T) {
	for _, sc := range []string{"replication/basic", "replication/crashes", "replication/registry-crash", "replication/swarm"} {
		t.Run(sc, func(t *testing.T) { scenariotest.Seeds(t, sc, 1, 200, nil) })
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
	} {
		res, err := scenarios.Sweep(scenarios.SweepOptions{Scenario: c.sc, Params: map[string]string{"bug": c.bug}, From: 1, To: 100, StopAtFailure: true, FailureLimit: 1})
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
	for _, c := range []struct{ p, v, want string }{{"bug", "x", "want none, no-dup"}, {"replicas", "0", "1..9"}} {
		_, err := scenarios.RunName("replication/basic", scenarios.Options{Seed: 1, Params: map[string]string{c.p: c.v}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("-p %s=%s: %v", c.p, c.v, err)
		}
	}
}
