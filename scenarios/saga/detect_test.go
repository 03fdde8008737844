package sagascen

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/protocols/saga"
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
	line := &saga.Options{Names: []string{"a3", "a1", "a4", "a2"}, Beat: 50 * time.Millisecond, Timeout: 200 * time.Millisecond}
	all := &saga.Options{Names: []string{"a1", "a2", "a3"}, Beat: 50 * time.Millisecond, Timeout: 200 * time.Millisecond, AllToAll: true}
	settle, window := lossWindows(line, 8*time.Millisecond, clockSlack{})
	for _, c := range []struct {
		name   string
		o      *saga.Options
		plan   string
		want   []string // "a<x@ms"
		exempt int
	}{
		{"crash in the middle: both line neighbours", line,
			`{"events":[{"at":"100ms","kind":"crash","node":"a2"},{"at":"2s","kind":"restart","node":"a2"}]}`,
			[]string{"a1<a2@100", "a3<a2@100"}, 0},
		{"partition: each side loses its neighbour across", line,
			`{"events":[{"at":"100ms","kind":"partition","groups":[["a1","a2"]]},{"at":"2s","kind":"heal"}]}`,
			[]string{"a2<a3@100", "a3<a2@100"}, 0},
		{"outage shorter than the window: exempt", line,
			`{"events":[{"at":"100ms","kind":"crash","node":"a2"},{"at":"150ms","kind":"restart","node":"a2"}]}`,
			nil, 2},
		{"the reporter crashes within the window: exempt", line,
			`{"events":[{"at":"100ms","kind":"partition","groups":[["a1"]]},{"at":"150ms","kind":"crash","node":"a2"},{"at":"2s","kind":"heal"}]}`,
			[]string{"a1<a2@100", "a3<a2@150"}, 1},
		{"a neighbour heard again only briefly: exempt", line,
			`{"events":[{"at":"100ms","kind":"crash","node":"a2"},{"at":"1s","kind":"restart","node":"a2"},{"at":"1010ms","kind":"crash","node":"a2"}]}`,
			[]string{"a1<a2@100", "a3<a2@100"}, 2},
		{"one-way cut relayed by a third agent: nothing to report", all,
			`{"events":[{"at":"100ms","kind":"cut","from":"a2","to":"a1"},{"at":"2s","kind":"heal"}]}`,
			nil, 0},
		{"all-to-all crash: everyone", all,
			`{"events":[{"at":"100ms","kind":"crash","node":"a3"}]}`,
			[]string{"a1<a3@100", "a2<a3@100"}, 0},
	} {
		items, exempt := lossItems(mustPlan(t, c.plan), c.o, settle, window)
		var got []string
		for _, it := range items {
			got = append(got, it.a+"<"+it.x+"@"+strings.TrimSuffix(time.Duration(it.at).String(), "ms"))
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

// The window grows with the plan's clock faults: a clock stepped back or drifting
// slow notices a silence late.
func TestLossWindowFollowsClockFaults(t *testing.T) {
	o := &saga.Options{Beat: 50 * time.Millisecond, Timeout: 200 * time.Millisecond}
	_, base := lossWindows(o, 8*time.Millisecond, clockSlack{})
	if base != 281*time.Millisecond {
		t.Fatalf("window %v, want 281ms (250ms + 2%% + 2 latencies + 10ms)", base)
	}
	plan := mustPlan(t, `{"events":[{"at":"1s","kind":"skew","node":"a1","step":"-40ms","drift_ppm":-100000}]}`)
	c := planClocks(plan)
	if c.step != 40*time.Millisecond || c.ppm != 100000 {
		t.Fatalf("clock slack %+v", c)
	}
	if _, w := lossWindows(o, 8*time.Millisecond, c); w != 250*time.Millisecond+25*time.Millisecond+16*time.Millisecond+40*time.Millisecond {
		t.Fatalf("window %v with a 40 ms step and 10%% drift", w)
	}
}
