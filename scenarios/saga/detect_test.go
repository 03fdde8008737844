package sagascen

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

func mustPlan(t *testing.T, js string) faults.Plan {
	t.Helper()
	p, err := faults.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// SG-4's detection items: who must report whom, for crashes, partitions and cuts,
// and what is exempt.
func TestLossItems(t *testing.T) {
	line := &saga.Options{Names: []string{"a3", "a1", "a4", "a2"}, Beat: 50 * time.Millisecond, Timeout: 200 * time.Millisecond, Grace: 300 * time.Millisecond}
	all := &saga.Options{Names: []string{"a1", "a2", "a3"}, Beat: 50 * time.Millisecond, Timeout: 200 * time.Millisecond, AllToAll: true}
	settle, window, hop, _ := lossWindows(line, 8*time.Millisecond, clockSlack{})
	for _, c := range []struct {
		name   string
		o      *saga.Options
		plan   string
		want   []string // "a<x@ms"
		exempt int
	}{
		{"crash in the middle: both line neighbours", line,
			`{"events":[{"at":"100ms","kind":"crash","node":"a2"},{"at":"2s","kind":"restart","node":"a2"}]}`,
			[]string{"a1<a2@100", "a3<a2@100", "a4<a2@100 via a3"}, 0},
		{"partition: each side loses its neighbour across, and tells its side", line,
			`{"events":[{"at":"100ms","kind":"partition","groups":[["a1","a2"]]},{"at":"2s","kind":"heal"}]}`,
			[]string{"a1<a3@100 via a2", "a2<a3@100", "a3<a2@100", "a4<a2@100 via a3"}, 0},
		{"a relay down: no report past it", line,
			`{"events":[{"at":"100ms","kind":"crash","node":"a1"},{"at":"100ms","kind":"crash","node":"a3"}]}`,
			[]string{"a2<a1@100", "a2<a3@100", "a4<a3@100"}, 0},
		{"a link of the relay cut: no report past it", line,
			`{"events":[{"at":"100ms","kind":"crash","node":"a1"},{"at":"100ms","kind":"cut","from":"a3","to":"a4"},{"at":"2s","kind":"restart","node":"a1"}]}`,
			[]string{"a2<a1@100", "a3<a1@100 via a2"}, 0},
		{"a crash-send: the loss counts from the window's end, and the reporter it may crash is exempt", line,
			`{"events":[{"at":"100ms","kind":"crash","node":"a2"},{"at":"150ms","kind":"crash-send","node":"a3","for":"100ms"},{"at":"2s","kind":"restart","node":"a2"},{"at":"2s","kind":"restart","node":"a3"}]}`,
			[]string{"a1<a2@100", "a4<a3@250"}, 1},
		{"the news skips an agent the relay gave up on long before", line,
			`{"events":[{"at":"100ms","kind":"crash","node":"a2"},{"at":"1500ms","kind":"crash","node":"a1"}]}`,
			[]string{"a1<a2@100", "a3<a1@1.5s", "a3<a2@100", "a4<a1@1.5s via a3", "a4<a2@100 via a3"}, 0},
		{"outage shorter than the window: exempt", line,
			`{"events":[{"at":"100ms","kind":"crash","node":"a2"},{"at":"150ms","kind":"restart","node":"a2"}]}`,
			nil, 2},
		{"the reporter crashes within the window: exempt", line,
			`{"events":[{"at":"100ms","kind":"partition","groups":[["a1"]]},{"at":"150ms","kind":"crash","node":"a2"},{"at":"2s","kind":"heal"}]}`,
			[]string{"a1<a2@100", "a3<a2@150", "a4<a2@150 via a3"}, 1},
		{"a neighbour heard again only briefly: exempt", line,
			`{"events":[{"at":"100ms","kind":"crash","node":"a2"},{"at":"1s","kind":"restart","node":"a2"},{"at":"1010ms","kind":"crash","node":"a2"}]}`,
			[]string{"a1<a2@100", "a3<a2@100", "a4<a2@100 via a3"}, 2},
		{"one-way cut relayed by a third agent: nothing to report", all,
			`{"events":[{"at":"100ms","kind":"cut","from":"a2","to":"a1"},{"at":"2s","kind":"heal"}]}`,
			nil, 0},
		{"all-to-all crash: everyone", all,
			`{"events":[{"at":"100ms","kind":"crash","node":"a3"}]}`,
			[]string{"a1<a3@100", "a2<a3@100"}, 0},
	} {
		items, exempt := lossItems(mustPlan(t, c.plan), c.o, settle, window, hop, window+goneBound(c.o, 8*time.Millisecond, clockSlack{}))
		var got []string
		for _, it := range items {
			g := it.a + "<" + it.x + "@" + strings.TrimSuffix(time.Duration(it.at).String(), "ms")
			if it.hops > 0 {
				g += " via " + strings.Join(it.via, ",")
			}
			got = append(got, g)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) || exempt != c.exempt {
			t.Errorf("%s: items %v exempt %d, want %v exempt %d", c.name, got, exempt, c.want, c.exempt)
		}
	}
}

// The check fails a run in which a loss is not reported, or is taken back before the
// window ends, and passes one that reports it.
func TestLossReported(t *testing.T) {
	o := &saga.Options{Names: []string{"a1", "a2"}, Beat: 50 * time.Millisecond, Timeout: 200 * time.Millisecond}
	e := &env{sys: &system{opts: o}, maxLatency: 8 * time.Millisecond,
		plan: mustPlan(t, `{"events":[{"at":"100ms","kind":"crash","node":"a2"}]}`)}
	ms := func(n int) sim.Time { return sim.Time(time.Duration(n) * time.Millisecond) }
	obs := func(kind string, at sim.Time, a, x string) sim.Observation {
		if kind == saga.ObsGraceOver {
			return sim.Observation{Kind: kind, Time: at, Value: saga.GraceEv{Agent: a, Peer: x}}
		}
		return sim.Observation{Kind: kind, Time: at, Value: saga.ConnEv{Agent: a, Peer: x}}
	}
	for _, c := range []struct {
		name string
		h    []sim.Observation
		ok   bool
	}{
		{"reported", []sim.Observation{obs(saga.ObsLost, ms(330), "a1", "a2")}, true},
		{"never reported", nil, false},
		{"reported too late", []sim.Observation{obs(saga.ObsLost, ms(500), "a1", "a2")}, false},
		{"taken back", []sim.Observation{obs(saga.ObsLost, ms(300), "a1", "a2"), obs(saga.ObsBack, ms(320), "a1", "a2")}, false},
		{"someone else reported", []sim.Observation{obs(saga.ObsLost, ms(300), "a2", "a1")}, false},
		{"late after a re-arrangement that restarts the timeout", []sim.Observation{obs(saga.ObsGraceOver, ms(250), "a1", "a3"), obs(saga.ObsLost, ms(500), "a1", "a2")}, true},
		{"never, re-arrangement or not", []sim.Observation{obs(saga.ObsGraceOver, ms(250), "a1", "a3")}, false},
		{"a re-arrangement just before the loss does not shorten the window", []sim.Observation{obs(saga.ObsGraceOver, ms(50), "a1", "a3"), obs(saga.ObsLost, ms(370), "a1", "a2")}, true},
	} {
		r := &checker.Run{Result: &sim.Result{History: c.h}}
		if err := e.lossReported(r); (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok=%v", c.name, err, c.ok)
		}
	}
}

// The window grows with the plan's clock faults: a clock that runs slow or steps back
// notices a silence late (the two plans an adversarial review found failing correct
// runs: four steps back of 100 ms, and a clock at half speed).
func TestLossWindowFollowsClockFaults(t *testing.T) {
	o := &saga.Options{Beat: 50 * time.Millisecond, Timeout: 200 * time.Millisecond}
	_, base, _, _ := lossWindows(o, 8*time.Millisecond, clockSlack{})
	if want := 250*time.Millisecond*1e6/980000 + 16*time.Millisecond + 10*time.Millisecond; base != want {
		t.Fatalf("window %v, want %v (250ms at 2%% slow + 2 latencies + 10ms)", base, want)
	}
	steps := mustPlan(t, `{"events":[{"at":"100ms","kind":"skew","node":"a2","step":"-100ms"},{"at":"150ms","kind":"skew","node":"a2","step":"-100ms"},
		{"at":"200ms","kind":"skew","node":"a1","step":"-150ms"},{"at":"250ms","kind":"skew","node":"a2","step":"30ms"}]}`)
	if c := planClocks(steps); c.back != 200*time.Millisecond {
		t.Fatalf("backward steps %v, want a2's 200ms (a1's 150ms is less; forward steps do not count)", c.back)
	}
	slow := mustPlan(t, `{"events":[{"at":"10ms","kind":"skew","node":"a2","drift_ppm":-500000}]}`)
	if _, w, _, _ := lossWindows(o, 8*time.Millisecond, planClocks(slow)); w != 500*time.Millisecond+26*time.Millisecond {
		t.Fatalf("window %v at half speed, want 526ms", w)
	}
	if _, _, _, ok := lossWindows(o, 8*time.Millisecond, clockSlack{ppm: 1_000_000}); ok {
		t.Fatal("a stopped clock has no window") // plans bound drift to 50 %; kept for safety
	}
	for _, plan := range []string{
		`{"events":[{"at":"90ms","kind":"partition","groups":[["a3"]]},{"at":"100ms","kind":"skew","node":"a2","step":"-100ms"},{"at":"150ms","kind":"skew","node":"a2","step":"-100ms"},{"at":"200ms","kind":"skew","node":"a2","step":"-100ms"},{"at":"250ms","kind":"skew","node":"a2","step":"-100ms"},{"at":"2s","kind":"heal"}]}`,
		`{"events":[{"at":"10ms","kind":"skew","node":"a2","drift_ppm":-500000},{"at":"130ms","kind":"partition","groups":[["a3"]]},{"at":"3s","kind":"heal"}]}`,
	} {
		rep := runWithPlan(t, "saga/partition-short", mustPlan(t, plan))
		for _, v := range rep.Verdicts {
			if v.Property == PropLost && v.Failed() {
				t.Errorf("%s: %v", plan, v)
			}
		}
	}
}

// runWithPlan runs a scenario on seed 1 under plan.
func runWithPlan(t *testing.T, name string, plan faults.Plan) *scenarios.Report {
	t.Helper()
	sc, err := scenarios.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := scenarios.Run(sc, scenarios.Options{Seed: 1, Faults: &plan})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
