package lsscen

import (
	"fmt"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// Regressions found by review, each with the fault plan that showed it.

// part returns the two cut events of a permanent parting of A and B at at.
func part(at time.Duration) []faults.Event {
	return []faults.Event{
		{At: faults.Duration(at), Kind: "cut", From: "A", To: "B"},
		{At: faults.Duration(at), Kind: "cut", From: "B", To: "A"},
	}
}

// burst returns a loss/duplication burst.
func burst(at, dur time.Duration, loss, dup float64) faults.Event {
	return faults.Event{At: faults.Duration(at), Kind: "burst", Loss: loss, Dup: dup, For: faults.Duration(dur)}
}

// runPlan runs a scenario under plan and fails the test on any failed property.
func runPlan(t *testing.T, scenario string, seed uint64, params map[string]string, plan faults.Plan) {
	t.Helper()
	rep, err := scenarios.RunName(scenario, scenarios.Options{Seed: seed, Params: params, Faults: &plan, FaultsFile: "PLAN"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() {
		t.Errorf("seed %d: %s\n(plan %+v)", seed, rep.Verdict, plan.Events)
	}
}

// Review item A: a late duplicate of an old acknowledgement must not move the holder's
// timer. Every message duplicated (delivered again up to a latency later), then a
// permanent parting: the holder's side used to end up to two latencies after the
// grantor's (LS-P2), visible without clock drift.
func TestStaleDuplicateAckIgnored(t *testing.T) {
	plan := faults.Plan{Events: append([]faults.Event{burst(0, 30*time.Second, 0, 1)}, part(585*time.Millisecond)...)}
	for seed := uint64(1); seed <= 80; seed++ { // 12 of these failed
		runPlan(t, "leasing/music-stable", seed, map[string]string{"drift-ppm": "0"}, plan)
	}
	runPlan(t, "leasing/music-stable", 14, nil, plan) // and this one with the default drift
}

// Review item B: a loss or duplication burst before a permanent parting is not the
// parting: the music player's permanent claim takes the parting time from the cut
// that never heals.
func TestBurstBeforePartingIsNotTheParting(t *testing.T) {
	loss := faults.Plan{Events: append([]faults.Event{burst(time.Second, time.Second, 0.02, 0)}, part(2*time.Second)...)}
	for seed := uint64(1); seed <= 6; seed++ {
		runPlan(t, "leasing/music-stable", seed, nil, loss)
	}
	dup := faults.Plan{Events: append([]faults.Event{burst(0, 30*time.Second, 0, 1)}, part(1066*time.Millisecond)...)}
	runPlan(t, "leasing/music-stable", 18, nil, dup)
}

// history builds a run from observations (Index in order; Time and Local in ms).
type hobs struct {
	ms   int64
	node sim.NodeID
	kind string
	v    any
}

func history(os ...hobs) *checker.Run {
	res := &sim.Result{}
	for i, o := range os {
		t := sim.Time(o.ms * int64(time.Millisecond))
		res.History = append(res.History, sim.Observation{Index: int64(i + 1), Time: t, Local: t, Node: o.node, Kind: o.kind, Value: o.v})
	}
	return &checker.Run{Result: res}
}

// Review item C: LS-P6 places a delivery where the grantor takes the message. A
// message sent before a revoke and taken live after it is illegal, though its send
// precedes the revoke (as an interval from send to take, porcupine could place it
// before the revoke, where the model accepts it).
func TestLeaseOpsDeliveryAfterRevoke(t *testing.T) {
	id := ls.RefID{Grantor: 0, GBoot: 1, N: 1, Holder: 1}
	at := func(n int64) sim.Time { return sim.Time(n * int64(time.Millisecond)) }
	mk := func(live bool) *checker.Run {
		return history(
			hobs{0, 0, ls.KindGrant, &ls.ObsGrant{Lease: id, Object: "o", Pattern: "basic", Term: time.Second, At: 0, Deadline: at(1000)}},
			hobs{10, 1, ls.KindSend, &ls.ObsSend{Ref: id, Seq: 1, Op: ls.OpApp, Method: "m", At: at(10)}},
			hobs{12, 0, ls.KindEnd, &ls.ObsEnd{Lease: id, Side: ls.Server, How: ls.Revoked, Cause: "explicit", At: at(12), Deadline: at(1000)}},
			hobs{15, 0, ls.KindRecv, &ls.ObsRecv{Ref: id, Seq: 1, Op: ls.OpApp, Method: "m", Live: live, At: at(15), Deadline: at(1000)}},
		)
	}
	if got := lin(leaseOps(buildIndex(mk(true)))...); got != porcupine.Illegal {
		t.Errorf("a message taken live after the revoke: %v, want illegal", got)
	}
	if got := lin(leaseOps(buildIndex(mk(false)))...); got != porcupine.Ok {
		t.Errorf("a message refused after the revoke: %v, want ok", got)
	}
	// The property's replay without the generic operations agrees (an illegal one
	// falls back to the full check).
	if leasesReplay(buildIndex(mk(true))) {
		t.Error("leasesReplay accepted a message taken live after the revoke")
	}
	if !leasesReplay(buildIndex(mk(false))) {
		t.Error("leasesReplay refused a message refused after the revoke")
	}
}

// LS-P5 must be exercised, not only hold: across a few swarm seeds some single-call
// lease receives a second message at the grantor (the probe's back-to-back pings).
// A mutation pass found that a probe which never sends the second ping left LS-P5
// passing on thousands of single-call leases that had nothing to catch.
func TestSingleCallExercised(t *testing.T) {
	sc, err := scenarios.Lookup("leasing/swarm")
	if err != nil {
		t.Fatal(err)
	}
	leases, second := 0, 0
	for seed := uint64(1); seed <= 4; seed++ {
		rep, err := scenarios.Run(sc, scenarios.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range rep.Verdicts {
			if v.Property != "LS-P5/single-call" {
				continue
			}
			var n, m int
			if _, err := fmt.Sscanf(v.Detail, "%d single-call leases checked, %d received a second message", &n, &m); err != nil {
				t.Fatalf("seed %d: LS-P5 detail %q", seed, v.Detail)
			}
			leases, second = leases+n, second+m
		}
	}
	if leases == 0 || second == 0 {
		t.Fatalf("LS-P5 checked %d single-call leases, %d with a second message: the property was not exercised", leases, second)
	}
}
