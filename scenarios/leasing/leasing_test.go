package lsscen

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/scenarios/scenariotest"
	"github.com/simrun-dev/simrun/sim"
)

// TestScenarioSeeds: every leasing scenario holds all its properties (LS-P1…P6, the
// futures, patterns and misuse checks, and the scenario's own claims) on 200 seeds,
// each with its own generated faults (disconnections at random times, random mobility,
// drifting clocks, clock steps). leasing/swarm itself, seeds 1-2000, is TestCoverage's
// first part (every part must pass).
func TestScenarioSeeds(t *testing.T) {
	for _, sc := range []string{"leasing/music-stable", "leasing/music-transient", "leasing/music-permanent"} {
		t.Run(sc, func(t *testing.T) { scenariotest.Seeds(t, sc, 1, 200, nil) })
	}
	// Strong drift (5%): the bounds of LS-P2 and LS-P3 scale with it.
	t.Run("swarm-drift", func(t *testing.T) {
		scenariotest.Seeds(t, "leasing/swarm", 1001, 1100, map[string]string{"drift-ppm": "50000"})
	})
	// A duplicating network while the devices move (outside the paper's FIFO links):
	// stale acknowledgements arrive after newer ones, and the holder must take its
	// deadline from the newest only (LS-2). The generated plans' short bursts did not
	// catch a holder that accepts stale ones; this does, on about one seed in ten.
	t.Run("swarm-dup", func(t *testing.T) {
		scenariotest.Seeds(t, "leasing/swarm", 2001, 2100, map[string]string{"dup": "0.3"})
	})
}

// planLimits are the generic faults the swarm must survive: crashes (with restarts and
// one for good), partitions and one-way cuts, latency spikes, clock steps and drift
// changes, and loss/duplication bursts.
func planLimits() faults.Params {
	l := faults.DefaultParams(12 * time.Second)
	l.Crashes, l.Permanent, l.MaxDown = 3, 1, 2
	l.Partitions, l.MeanSplit, l.CutFrac = 3, 2*time.Second, 0.5
	l.Spikes, l.SpikeExtra = 2, 50*time.Millisecond
	l.Skews, l.MaxStep, l.MaxDriftPPM = 3, 10*time.Millisecond, 5000
	l.Bursts, l.BurstLoss, l.BurstDup = 2, 0.3, 0.2
	return l
}

// TestSwarmPlans: rapid draws generic fault plans (any failure shrinks to a minimal
// plan and prints the replay command).
func TestSwarmPlans(t *testing.T) {
	// Four devices (the swarm draws 2-5 per seed; a plan names the devices of one).
	scenariotest.Plans(t, "leasing/swarm", scenariotest.Options{Checks: 200, Limits: planLimits(), Params: map[string]string{"devices": "4"}})
}

// TestMusicPlans: the music player's claims are checked against the actual plan, so
// they hold under any generated plan too.
func TestMusicPlans(t *testing.T) {
	l := planLimits()
	l.Horizon = 4 * time.Second
	scenariotest.Plans(t, "leasing/music-stable", scenariotest.Options{Checks: 200, Limits: l})
}

// TestBrokenVariantsCaught: each deliberately broken protocol is caught, by every
// property that names its fault, within the first brokenSeeds seeds (each variant's sweep stops
// as soon as all of them have failed on some seed; the variants run in parallel).
func TestBrokenVariantsCaught(t *testing.T) {
	const brokenSeeds = 100
	for _, c := range []struct {
		variant string
		params  map[string]string
		want    []string // properties that must fail on some seed
	}{
		{"accept-after-expiry", map[string]string{"drift-ppm": "50000"}, []string{"LS-P1/no-delivery-after-expiry", "LS-P6/linearizable", "LS-P4/reclamation"}},
		{"client-never-expires", nil, []string{"LS-P2/symmetric-expiry", "LS-P4/reclamation", "music/permanent-cleans-up"}},
		{"single-call-keeps", nil, []string{"LS-P5/single-call"}},
		{"renew-min", nil, []string{"LS-P6/linearizable"}},
		{"no-buffer", nil, []string{"LS-P3/transient-tolerance"}},
		{"listeners-on-revoke", nil, []string{"LS-P2/symmetric-expiry"}},
		{"ignore-piggyback", nil, []string{"LS-P3/transient-tolerance"}},
		// Review item C: a delivery is placed where the grantor takes it.
		{"take-after-revoke", nil, []string{"LS-P6/linearizable", "LS-P1/no-delivery-after-expiry"}},
		// Review item D: the deadline is rebuilt from grant and renewals, not trusted.
		{"grantor-late", map[string]string{"drift-ppm": "50000"}, []string{"LS-P1/no-delivery-after-expiry"}},
		{"grantor-lingers", nil, []string{"LS-P2/symmetric-expiry"}},
		// Review item E: both sides end the same way.
		{"expire-notice-revokes", nil, []string{"LS-P2/symmetric-expiry"}},
		{"no-tombstones", nil, []string{"LS-P2/symmetric-expiry"}},
		// Review item F: a holder timer that runs short (the quiet keepalive leases of
		// the swarm, per-lease false-expiry windows, and the holder never expiring
		// before the grantor's deadline it was told).
		{"holder-short", nil, []string{"LS-P2/symmetric-expiry", "LS-P3/transient-tolerance"}},
		{"holder-short-permanent", nil, []string{"LS-P2/symmetric-expiry"}},
	} {
		t.Run(c.variant, func(t *testing.T) {
			t.Parallel()
			caught := map[string]uint64{}
			for seed := uint64(1); seed <= brokenSeeds && len(caught) < len(c.want); seed++ {
				rep, err := scenarios.RunName("test/leasing-"+c.variant, scenarios.Options{Seed: seed, Params: c.params})
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range rep.Verdicts {
					if _, ok := caught[v.Property]; !ok && v.Class == checker.Safety && slices.Contains(c.want, v.Property) {
						caught[v.Property] = seed
					}
				}
			}
			for _, p := range c.want {
				if _, ok := caught[p]; !ok {
					t.Errorf("%s not caught by %s on seeds 1-%d (caught: %v)", c.variant, p, brokenSeeds, caught)
				}
			}
		})
	}
}

// TestBrokenShrinks: a broken variant found by rapid shrinks to a minimal plan. A
// holder whose timer stops while its grantor is out of range keeps its side of the
// lease forever once the grantor is gone for good: rapid finds it among every kind of
// fault and shrinks the plan to that single event.
func TestBrokenShrinks(t *testing.T) {
	l := planLimits()
	l.Horizon = 4 * time.Second
	f, err := scenariotest.Find("TestBrokenShrinks", "test/leasing-client-never-expires", scenariotest.Options{Checks: 100, Limits: l})
	if err != nil {
		t.Fatal(err)
	}
	if f == nil {
		t.Fatal("the client-never-expires variant was not caught")
	}
	// Pinned: the exact minimal counterexample (a tripwire for shrinking regressions).
	want := faults.Event{At: faults.Duration(9 * time.Millisecond), Kind: "crash", Node: "A"}
	if f.Plan.Len() != 1 || !reflect.DeepEqual(f.Plan.Events[0], want) || f.Verdict.Property != "LS-P4/reclamation" ||
		!strings.Contains(f.Verdict.Detail, "kept past its deadline") {
		t.Errorf("minimal case: %d events, verdict %s; want exactly [crash A at 9ms] and LS-P4 (holder keeps its side past the deadline):\n%s",
			f.Plan.Len(), f.Verdict, f.Message())
	}
}

// TestBadInput: non-positive terms are one clear input error; a custom pattern that
// panics is a reported failure of the run, never a crash of the tool.
func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		scenario string
		params   map[string]string
		msg      string
	}{
		{"leasing/music-stable", map[string]string{"term": "0s"}, "term"},
		{"leasing/music-stable", map[string]string{"callback-term": "-1s"}, "callback-term"},
		{"leasing/swarm", map[string]string{"term": "-2s"}, "term"},
		{"leasing/music-stable", map[string]string{"pattern": "nope"}, `parameter pattern="nope": want paper or panic`},
		{"leasing/swarm", map[string]string{"silence": "50ms"}, "silence"},
		{"leasing/swarm", map[string]string{"lat-min": "20ms", "lat-max": "10ms"}, "lat-min"},
	} {
		_, err := scenarios.RunName(c.scenario, scenarios.Options{Seed: 1, Params: c.params})
		if err == nil || !scenarios.IsInputError(err) || !strings.Contains(err.Error(), c.msg) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %v: err %v, want a one-line input error about %s", c.scenario, c.params, err, c.msg)
		}
	}
	rep, err := scenarios.RunName("leasing/music-stable", scenarios.Options{Seed: 1, Params: map[string]string{"pattern": "panic"}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Failed() || rep.Verdict.Property != "LS-3/patterns" || !strings.Contains(rep.Verdict.Detail, "custom pattern bug") {
		t.Errorf("panicking pattern: verdict %s, want an LS-3/patterns failure naming the panic", rep.Verdict)
	}
	for _, v := range rep.Verdicts {
		if v.Class == checker.Crash {
			t.Errorf("a pattern panic crashed the run: %s", v)
		}
	}
	sc, _ := scenarios.Lookup("leasing/detection")
	for _, bad := range []map[string]string{{"terms": "1s,0s"}, {"lambda": "-1"}, {"fe-means": "x"}, {"traffic-terms": ""}, {"runs": "0"},
		{"lat-min": "20ms", "lat-max": "10ms"}, {"silence": "10ms"}} {
		ps, _ := scenarios.NewParams(sc.Params, bad)
		if _, err := sc.Experiment(&scenarios.Exp{Seed: 1, Params: ps}); err == nil || !scenarios.IsInputError(err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("detection %v: err %v, want a one-line input error", bad, err)
		}
	}
}

// TestPermanentInterruptsExchanges: the permanent variant is not vacuous: on most
// seeds an exchange is cut off mid-way and cleaned up at both sides.
func TestPermanentInterruptsExchanges(t *testing.T) {
	interrupted := 0
	for seed := uint64(1); seed <= 50; seed++ {
		rep, err := scenarios.RunName("leasing/music-permanent", scenarios.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if m := rep.Metrics.(MusicMetrics); m.Cleanups > 0 && m.Stopped > 0 {
			interrupted++
		}
	}
	if interrupted < 45 {
		t.Errorf("only %d of 50 permanent runs interrupted an exchange", interrupted)
	}
}

func lin(ops ...checker.Operation) porcupine.CheckResult {
	return checker.CheckLinearizable(LeaseModel(), ops, time.Second).Result
}

func op(call, ret int64, in LinIn, out any) checker.Operation {
	o := checker.Operation{Key: "l", Input: in, Call: call, Return: ret, Output: out}
	if out == nil {
		o.Pending = true
	}
	return o
}

// TestLeaseModel: the LS-P6 specification accepts the protocol's legal histories and
// rejects each rule broken on its own.
func TestLeaseModel(t *testing.T) {
	ms := func(n int64) sim.Time { return sim.Time(n * int64(time.Millisecond)) }
	grant := op(1, 1, LinIn{Kind: LinGrant, Term: time.Second}, LinOut{At: ms(0), Ok: true, After: ms(1000)})
	for _, c := range []struct {
		name string
		ops  []checker.Operation
		want porcupine.CheckResult
	}{
		{"deliver, renew by max, timer expiry", []checker.Operation{grant,
			op(2, 4, LinIn{Kind: LinDeliver, Seq: 1}, LinOut{At: ms(500), Ok: true}),
			op(5, 5, LinIn{Kind: LinRenew, D: time.Second}, LinOut{At: ms(500), Ok: true, Before: ms(1000), After: ms(1500)}),
			op(6, 6, LinIn{Kind: LinRenew, D: 100 * time.Millisecond}, LinOut{At: ms(600), Ok: true, Before: ms(1500), After: ms(1500)}),
			op(7, 7, LinIn{Kind: LinEnd, How: ls.Expired, Cause: "timer"}, LinOut{At: ms(1500), Ok: true}),
			op(3, 8, LinIn{Kind: LinDeliver, Seq: 2}, LinOut{At: ms(1600)}),
			op(9, 0, LinIn{Kind: LinDeliver, Seq: 3}, nil)}, porcupine.Ok},
		{"renew without the max rule", []checker.Operation{grant,
			op(2, 2, LinIn{Kind: LinRenew, D: 100 * time.Millisecond}, LinOut{At: ms(500), Ok: true, Before: ms(1000), After: ms(600)})}, porcupine.Illegal},
		{"delivery after the deadline", []checker.Operation{grant,
			op(2, 3, LinIn{Kind: LinDeliver, Seq: 1}, LinOut{At: ms(1000), Ok: true})}, porcupine.Illegal},
		// The model alone cannot judge a delivery as an interval from the holder's send
		// to the grantor's take: placed before a revoke it overlaps, it is legal. This is
		// why leaseOps makes every delivery a point at the take (see
		// TestLeaseOpsDeliveryAfterRevoke).
		{"delivery as an interval spanning a revoke", []checker.Operation{grant,
			op(2, 4, LinIn{Kind: LinDeliver, Seq: 1}, LinOut{At: ms(200), Ok: true}),
			op(3, 3, LinIn{Kind: LinEnd, How: ls.Revoked, Cause: "explicit"}, LinOut{At: ms(100), Ok: true})}, porcupine.Ok},
		{"delivery after a revoke", []checker.Operation{grant,
			op(2, 2, LinIn{Kind: LinEnd, How: ls.Revoked, Cause: "explicit"}, LinOut{At: ms(100), Ok: true}),
			op(3, 4, LinIn{Kind: LinDeliver, Seq: 1}, LinOut{At: ms(200), Ok: true})}, porcupine.Illegal},
		{"timer expiry before the deadline", []checker.Operation{grant,
			op(2, 2, LinIn{Kind: LinEnd, How: ls.Expired, Cause: "timer"}, LinOut{At: ms(999), Ok: true})}, porcupine.Illegal},
		{"renewal accepted after expiry", []checker.Operation{grant,
			op(2, 2, LinIn{Kind: LinEnd, How: ls.Expired, Cause: "timer"}, LinOut{At: ms(1000), Ok: true}),
			op(3, 3, LinIn{Kind: LinRenew, D: time.Second}, LinOut{At: ms(1001), Ok: true, Before: ms(1000), After: ms(2001)})}, porcupine.Illegal},
		{"ended twice", []checker.Operation{grant,
			op(2, 2, LinIn{Kind: LinEnd, How: ls.Revoked, Cause: "explicit"}, LinOut{At: ms(10), Ok: true}),
			op(3, 3, LinIn{Kind: LinEnd, How: ls.Expired, Cause: "explicit"}, LinOut{At: ms(20), Ok: true})}, porcupine.Illegal},
		{"refused while live", []checker.Operation{grant,
			op(2, 3, LinIn{Kind: LinDeliver, Seq: 1}, LinOut{At: ms(10), Ok: false})}, porcupine.Illegal},
	} {
		if got := lin(c.ops...); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestMobilityPlans: generated mobility is valid and behaves as described: pairs
// disconnect and reconnect before the horizon, and leavers never come back.
func TestMobilityPlans(t *testing.T) {
	names := deviceNames(5)
	left := 0
	for seed := uint64(1); seed <= 300; seed++ {
		p := MobilityParams{Horizon: 10 * time.Second, MeanUp: 2 * time.Second, MeanDown: time.Second, Leave: 0.3, Skews: 2, MaxStep: 5 * time.Millisecond, MaxDriftPPM: 100}
		plan, err := Mobility(seed, names, p)
		if err != nil {
			t.Fatal(err)
		}
		g := newGround(plan, names, nil, sim.Network{Latency: sim.Constant(time.Millisecond)})
		for a := 0; a < 5; a++ {
			for b := a + 1; b < 5; b++ {
				sp := g.pair(sim.NodeID(a), sim.NodeID(b))
				for _, s := range sp {
					if s.to != never && s.to > sim.Time(p.Horizon) {
						t.Fatalf("seed %d: pair %d-%d disconnected past the horizon: %v", seed, a, b, s)
					}
				}
				if len(sp) > 0 && sp[len(sp)-1].to == never {
					left++
				}
			}
		}
		if st := plan.Settled(); st.At > sim.Time(p.Horizon) {
			t.Fatalf("seed %d: settles at %v", seed, st.At)
		}
	}
	if left == 0 {
		t.Error("no device ever left")
	}
	if _, err := Mobility(1, names, MobilityParams{Horizon: time.Second, MeanUp: 0, MeanDown: time.Second}); err == nil {
		t.Error("zero mean accepted")
	}
}

// TestGround: the impaired intervals of a hand-written plan.
func TestGround(t *testing.T) {
	plan := faults.Plan{Events: []faults.Event{
		{At: faults.Duration(time.Second), Kind: "cut", From: "A", To: "B"},
		{At: faults.Duration(2 * time.Second), Kind: "crash", Node: "B"},
		{At: faults.Duration(3 * time.Second), Kind: "restore", From: "A", To: "B"},
		{At: faults.Duration(4 * time.Second), Kind: "restart", Node: "B"},
		{At: faults.Duration(5 * time.Second), Kind: "partition", Groups: [][]string{{"C"}}},
		{At: faults.Duration(6 * time.Second), Kind: "heal"},
		{At: faults.Duration(7 * time.Second), Kind: "burst", Loss: 0.5, For: faults.Duration(time.Second)},
		{At: faults.Duration(9 * time.Second), Kind: "skew", Node: "A", Step: faults.Duration(-3 * time.Millisecond)},
		// A duplication-only burst loses nothing: not an impairment.
		{At: faults.Duration(9500 * time.Millisecond), Kind: "burst", Dup: 1, For: faults.Duration(time.Second)},
		// A loss burst, then A and C part for good in the middle of it: they parted when
		// the cut came, not when the burst began.
		{At: faults.Duration(10500 * time.Millisecond), Kind: "burst", Loss: 0.1, For: faults.Duration(time.Second)},
		{At: faults.Duration(11 * time.Second), Kind: "cut", From: "A", To: "C"},
		{At: faults.Duration(11 * time.Second), Kind: "cut", From: "C", To: "A"},
	}}
	g := newGround(plan, deviceNames(3), []sim.Clock{{DriftPPM: -200}}, sim.Network{Latency: sim.Uniform(0, 7*time.Millisecond)})
	s := func(a, b int64) span { return span{sim.Time(a * int64(time.Second)), sim.Time(b * int64(time.Second))} }
	half := func(a int64) sim.Time { return sim.Time(a * int64(time.Second) / 2) }
	if got := g.pair(0, 1); len(got) != 3 || got[0] != s(1, 4) || got[1] != s(7, 8) || got[2] != (span{half(21), half(23)}) {
		t.Errorf("A-B impaired %v", got)
	}
	if got := g.pair(0, 2); len(got) != 3 || got[0] != s(5, 6) || got[1] != s(7, 8) || got[2] != (span{half(21), never}) {
		t.Errorf("A-C impaired %v", got)
	}
	if at, ok := g.partedAt(0, 2); !ok || at != sim.Time(11*time.Second) {
		t.Errorf("A-C parted at %v %v, want 11s (the cut, not the loss burst before it)", at, ok)
	}
	if at, ok := g.partedAt(0, 1); ok {
		t.Errorf("A-B parted at %v, but they never did", at)
	}
	if g.lmax != 7*time.Millisecond || g.steps != 3*time.Millisecond || g.rho != 0.0002 {
		t.Errorf("lmax %v steps %v rho %v", g.lmax, g.steps, g.rho)
	}
	if !window(g.pair(0, 1), 0, sim.Time(5*time.Second), time.Second) || window(g.pair(0, 1), sim.Time(2*time.Second), sim.Time(7500*time.Millisecond), 4*time.Second) {
		t.Error("window")
	}
}
