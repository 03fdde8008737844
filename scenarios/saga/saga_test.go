package sagascen

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/scenarios/scenariotest"
	"github.com/simrun-dev/simrun/sim"
)

var all = []string{"saga/order", "saga/parallel", "saga/crash", "saga/partition-short", "saga/partition-long", "saga/lossy", "saga/swarm"}

// Every scenario keeps every property on 200 seeds (its own faults, and for the swarm
// drawn graphs, failures and faults).
func TestScenarioSeeds(t *testing.T) {
	for _, sc := range all {
		t.Run(sc, func(t *testing.T) { scenariotest.Seeds(t, sc, 1, 200, nil) })
	}
	t.Run("order/insufficient", func(t *testing.T) {
		scenariotest.Seeds(t, "saga/order", 1, 200, map[string]string{"path": "insufficient"})
	})
	t.Run("swarm/all-to-all", func(t *testing.T) {
		scenariotest.Seeds(t, "saga/swarm", 1001, 1200, map[string]string{"exchange": "all"})
	})
}

// planLimits: crashes (one for good), partitions and one-way cuts longer and shorter
// than the grace period, latency spikes, clock steps and drift.
func planLimits() faults.Params {
	l := faults.DefaultParams(2 * time.Second)
	l.Crashes, l.Permanent, l.MaxDown = 3, 1, 2
	l.Partitions, l.MeanSplit, l.CutFrac = 3, 700*time.Millisecond, 0.3
	l.Spikes, l.SpikeExtra = 2, 50*time.Millisecond
	l.Skews, l.MaxStep, l.MaxDriftPPM = 2, 10*time.Millisecond, 5000
	return l
}

// Every scenario keeps every property under 200 fault plans rapid draws (a failure
// shrinks to a minimal plan and prints the command that replays it).
func TestGeneratedPlans(t *testing.T) {
	for _, sc := range []string{"saga/order", "saga/parallel", "saga/crash", "saga/partition-short", "saga/partition-long", "saga/lossy", "saga/swarm"} {
		t.Run(sc, func(t *testing.T) {
			var params map[string]string
			if sc == "saga/swarm" {
				params = map[string]string{"paper-rate": "0"} // one node set for every seed: a plan names them
			}
			scenariotest.Plans(t, sc, scenariotest.Options{Checks: 200, Limits: planLimits(), Params: params})
		})
	}
}

func run(t *testing.T, sc string, seed uint64, params map[string]string) *scenarios.Report {
	t.Helper()
	rep, err := scenarios.RunName(sc, scenarios.Options{Seed: seed, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() {
		t.Fatalf("%s seed %d: %v", sc, seed, rep.Verdict)
	}
	return rep
}

func outcomes(rep *scenarios.Report) map[saga.TrID]map[string]saga.Outcome {
	m := map[saga.TrID]map[string]saga.Outcome{}
	for _, o := range rep.Result.History {
		if v, ok := o.Value.(saga.OutcomeEv); ok {
			if m[v.Tr] == nil {
				m[v.Tr] = map[string]saga.Outcome{}
			}
			m[v.Tr][v.Agent] = v.Outcome
		}
	}
	return m
}

// The paper's example takes both flows: with enough credit every order is approved
// (createPendingOrder, reserveCredit, approveOrder), without it each is compensated
// (deleteOrder after cancelReservation is never needed: the reservation failed, so
// only the pending order is deleted) and the credit is untouched.
func TestPaperPaths(t *testing.T) {
	for _, c := range []struct {
		path string
		want saga.Outcome
		acts string
	}{
		{"commit", saga.Committed, "createPendingOrder reserveCredit approveOrder"},
		{"insufficient", saga.Compensated, "createPendingOrder reserveCredit deleteOrder"},
	} {
		rep := run(t, "saga/order", 1, map[string]string{"path": c.path, "txs": "1"})
		outs := outcomes(rep)
		if len(outs) != 1 {
			t.Fatalf("%s: %d transactions decided", c.path, len(outs))
		}
		for id, by := range outs {
			if len(by) != 2 || by["order"] != c.want || by["customer"] != c.want {
				t.Fatalf("%s: %s decided %v, want %s at both agents", c.path, id, by, c.want)
			}
		}
		var acts []string
		for _, o := range rep.Result.History {
			if v, ok := o.Value.(saga.Return); ok {
				acts = append(acts, v.Call.Action)
			}
		}
		if got := strings.Join(acts, " "); got != c.acts {
			t.Fatalf("%s: actions %q, want %q", c.path, got, c.acts)
		}
	}
}

// Parallel sub-transactions: a failure in the payment branch compensates the booking
// branch too, each branch in the reverse of its order, and the configuration's two
// sub-transactions both end.
func TestParallelCompensatesBothBranches(t *testing.T) {
	rep := run(t, "saga/parallel", 1, map[string]string{"txs": "2"})
	var comps []string
	for _, o := range rep.Result.History {
		if v, ok := o.Value.(saga.SectionEv); ok && o.Kind == saga.ObsSection && v.Tr.Seq == 2 && v.State == saga.ProcessedCompensation {
			comps = append(comps, v.Sec.String())
		}
	}
	// a4/payment failed (doReceipt); booking ran a1 → a2 → a4, payment a1 → a3.
	got := strings.Join(comps, " ")
	if !strings.Contains(got, "a4/booking") || !strings.Contains(got, "a3/payment") || !strings.HasSuffix(got, "a1/booking") {
		t.Fatalf("compensations %q: want both branches undone, a1/booking last", got)
	}
	if strings.Index(got, "a4/booking") > strings.Index(got, "a2/booking") {
		t.Fatalf("compensations %q: a2/booking before a4/booking (not the reverse order)", got)
	}
	for id, by := range outcomes(rep) {
		want := saga.Committed
		if id.Seq == 2 {
			want = saga.Compensated
		}
		for a, o := range by {
			if o != want {
				t.Fatalf("%s at %s: %s, want %s", id, a, o, want)
			}
		}
	}
}

// A partition shorter than the grace period pauses the transactions that need the
// cut-off agent; they resume and commit after the heal. One longer than the grace
// period makes the initiator compensate, and the transaction ends only once the agent
// is back and has cleaned up.
func TestPartitionShortAndLong(t *testing.T) {
	for _, c := range []struct {
		sc   string
		want saga.Outcome
	}{{"saga/partition-short", saga.Committed}, {"saga/partition-long", saga.Compensated}} {
		paused, graceOver := 0, 0
		for seed := uint64(1); seed <= 10; seed++ {
			rep := run(t, c.sc, seed, nil)
			heal := sim.Time(0)
			for _, e := range rep.Faults.Events {
				if e.Kind == "heal" {
					heal = sim.Time(e.At)
				}
			}
			for _, o := range rep.Result.History {
				switch o.Kind {
				case saga.ObsLost:
					paused++
				case saga.ObsGraceOver:
					graceOver++
				}
			}
			affected := false
			for _, o := range rep.Result.History {
				v, ok := o.Value.(saga.OutcomeEv)
				if !ok || v.Agent != "a3" {
					continue
				}
				if o.Time > heal {
					affected = true
				}
				if c.want == saga.Compensated && o.Time > heal && v.Outcome == saga.Compensated {
					affected = true
				}
			}
			if !affected {
				t.Fatalf("%s seed %d: no transaction at a3 ended after the heal at %v", c.sc, seed, heal)
			}
		}
		if paused == 0 {
			t.Fatalf("%s: no agent ever saw a3 lost", c.sc)
		}
		if (graceOver > 0) != (c.want == saga.Compensated) {
			t.Fatalf("%s: grace period ran out %d times", c.sc, graceOver)
		}
	}
}

// A crash mid-transaction: the agent rebuilds itself from its log (the log-replay
// check compares it with before the crash), and every transaction ends.
func TestCrashReplays(t *testing.T) {
	checked := 0
	for seed := uint64(1); seed <= 20; seed++ {
		rep := run(t, "saga/crash", seed, nil)
		for _, v := range rep.Verdicts {
			if v.Property == PropReplay {
				var n int
				fmt.Sscanf(v.Detail, "%d restarts checked", &n)
				checked += n
			}
		}
	}
	if checked < 40 {
		t.Fatalf("%d restarts checked on 20 seeds, want 2 a seed", checked)
	}
}

// Each planted bug is caught by the sweeps alone (not by a hand-written test), by the
// property that names its rule.
func TestBrokenVariantsCaughtBySweep(t *testing.T) {
	for _, c := range []struct {
		bug, scenario string
		props         []string
	}{
		{"eager-compensation", "saga/parallel", []string{PropOrder}},
		{"rerun-duplicates", "saga/crash", []string{PropOnce}},
		{"compensate-never-run", "saga/parallel", []string{PropNull, PropOrder}},
		{"run-after-abort", "saga/parallel", []string{PropDangling}},
		{"forget-compensation", "saga/swarm", []string{PropReplay, PropOnce}},
	} {
		t.Run(c.bug, func(t *testing.T) {
			res, err := scenarios.Sweep(scenarios.SweepOptions{Scenario: c.scenario, Params: map[string]string{"bug": c.bug},
				From: 1, To: 100, StopAtFailure: true, FailureLimit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Failures) == 0 {
				t.Fatalf("%s on %s: 100 seeds pass", c.bug, c.scenario)
			}
			v := res.Failures[0]
			found := false
			for _, p := range c.props {
				found = found || v.Property == p
			}
			if !found {
				t.Fatalf("%s: caught by %q (%s), want one of %v", c.bug, v.Property, v.Detail, c.props)
			}
		})
	}
}

// Loss and duplication are outside the paper's model: the run says so, and re-sends
// with duplicate checks keep every property.
func TestLossyReported(t *testing.T) {
	rep := run(t, "saga/lossy", 3, nil)
	if len(rep.Result.Knobs) == 0 || rep.Result.Messages.Duplicated == 0 || rep.Result.Messages.Lost == 0 {
		t.Fatalf("knobs %v, %d lost, %d duplicated", rep.Result.Knobs, rep.Result.Messages.Lost, rep.Result.Messages.Duplicated)
	}
	dups := 0
	for _, o := range rep.Result.History {
		if o.Kind == saga.ObsDuplicate {
			dups++
		}
	}
	if dups == 0 {
		t.Fatal("no redelivered request met the duplicate check")
	}
}

// Bad parameters are one-line input errors.
func TestBadInput(t *testing.T) {
	for _, c := range []struct{ sc, p, v, want string }{
		{"saga/order", "path", "maybe", "want commit or insufficient"},
		{"saga/order", "bug", "typo", "want none, eager-compensation"},
		{"saga/swarm", "exchange", "ring", "want line or all"},
		{"saga/swarm", "agents", "100", "2..26"},
	} {
		_, err := scenarios.RunName(c.sc, scenarios.Options{Seed: 1, Params: map[string]string{c.p: c.v}})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s -p %s=%s: %v", c.sc, c.p, c.v, err)
		}
	}
}

// A user's configuration file: a good one runs; a bad one is one line naming the file
// and the line, and nothing runs.
func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	good := dir + "/trip.saga"
	os.WriteFile(good, []byte("// agent hotel\nincoming_action(trip, doRoom).\ncompensation_action(trip, undoRoom).\nnext(trip, car).\n// agent car\nincoming_action(trip, doCar).\ncompensation_action(trip, undoCar).\n"), 0o644)
	rep, err := scenarios.RunName("saga/config", scenarios.Options{Seed: 1, Params: map[string]string{"file": good, "start": "hotel/trip"}})
	if err != nil || rep.Failed() {
		t.Fatalf("good file: %v %v", err, rep)
	}
	bad := dir + "/bad.saga"
	os.WriteFile(bad, []byte("// agent hotel\nincoming_action(trip, doRoom).\nnext(trip, plane).\n"), 0o644)
	_, err = scenarios.RunName("saga/config", scenarios.Options{Seed: 1, Params: map[string]string{"file": bad, "start": "hotel/trip"}})
	if err == nil || !scenarios.IsInputError(err) || !strings.Contains(err.Error(), bad+":2: missing compensation") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("bad file: %v", err)
	}
}
