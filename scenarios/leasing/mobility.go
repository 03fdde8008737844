package lsscen

import (
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/sim"
)

// MobilityParams draws devices moving in and out of each other's range. Every pair of
// devices alternates in-range periods (exponential, mean MeanUp) and out-of-range
// periods (exponential, mean MeanDown) until Horizon, when every pair is back in range
// — except pairs involving a device that left: with probability Leave each device
// leaves for good at a uniform time in [0, Horizon] (a permanent disconnection, which
// no device can tell apart from a long transient one). Skews clock steps of up to
// ±MaxStep (and drift changes up to ±MaxDriftPPM) hit random devices.
type MobilityParams struct {
	Horizon     time.Duration
	MeanUp      time.Duration
	MeanDown    time.Duration
	Leave       float64
	Skews       int
	MaxStep     time.Duration
	MaxDriftPPM int64
}

// SwarmMobility draws the mobility parameters themselves from the seed, each between
// a quarter of and the full limit (swarm testing: some seeds are calm, others churn).
func SwarmMobility(seed uint64, limits MobilityParams) MobilityParams {
	r := sim.Stream(seed, "swarm-mobility")
	p := limits
	frac := func(d time.Duration) time.Duration {
		return d/4 + time.Duration(r.Int64Range(0, int64(d-d/4)))
	}
	p.MeanUp = frac(limits.MeanUp)
	p.MeanDown = frac(limits.MeanDown)
	p.Leave = limits.Leave * r.Float64()
	if limits.Skews > 0 {
		p.Skews = r.IntN(limits.Skews + 1)
	}
	return p
}

// Mobility draws a valid fault plan (cut/restore pairs on both directions of a link,
// skews) for the named devices.
func Mobility(seed uint64, names []string, p MobilityParams) (faults.Plan, error) {
	if p.Horizon <= 0 || p.MeanUp <= 0 || p.MeanDown <= 0 {
		return faults.Plan{}, fmt.Errorf("mobility needs positive horizon and mean periods (horizon %v, up %v, down %v)", p.Horizon, p.MeanUp, p.MeanDown)
	}
	if p.Leave < 0 || p.Leave > 1 {
		return faults.Plan{}, fmt.Errorf("mobility: leave probability %v not in [0, 1]", p.Leave)
	}
	r := sim.Stream(seed, "mobility")
	n := len(names)
	type ev struct {
		at  time.Duration
		seq int
		e   faults.Event
	}
	var evs []ev
	add := func(at time.Duration, e faults.Event) {
		e.At = faults.Duration(at)
		evs = append(evs, ev{at, len(evs), e})
	}
	link := func(at time.Duration, kind string, a, b int) {
		add(at, faults.Event{Kind: kind, From: names[a], To: names[b]})
		add(at, faults.Event{Kind: kind, From: names[b], To: names[a]})
	}
	expo := func(mean time.Duration) time.Duration {
		return time.Millisecond + time.Duration(r.ExpFloat64()*float64(mean))
	}
	leave := make([]time.Duration, n)
	for i := range leave {
		leave[i] = -1
		if r.Bernoulli(p.Leave) {
			leave[i] = time.Duration(r.Int64Range(int64(time.Millisecond), int64(p.Horizon)))
		}
	}
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			end := p.Horizon // pair back in range for good at end ...
			gone := false
			for _, d := range []time.Duration{leave[a], leave[b]} {
				if d >= 0 && d < end {
					end, gone = d, true // ... unless one of them leaves first
				}
			}
			t := expo(p.MeanUp)
			up := true
			for t < end {
				d := expo(p.MeanDown)
				link(t, "cut", a, b)
				if t+d >= end {
					up = false
					if !gone {
						link(p.Horizon, "restore", a, b)
					}
					break
				}
				link(t+d, "restore", a, b)
				t += d + expo(p.MeanUp)
			}
			if gone && up {
				link(end, "cut", a, b) // a device left: out of range for good
			}
		}
	}
	for i := 0; i < p.Skews; i++ {
		e := faults.Event{Kind: "skew", Node: names[r.IntN(n)]}
		at := time.Duration(r.Int64Range(0, int64(p.Horizon)))
		if p.MaxStep > 0 {
			e.Step = faults.Duration(r.Int64Range(-int64(p.MaxStep), int64(p.MaxStep)))
		}
		if p.MaxDriftPPM > 0 {
			d := r.Int64Range(-p.MaxDriftPPM, p.MaxDriftPPM)
			e.DriftPPM = &d
		}
		if e.Step == 0 && e.DriftPPM == nil {
			e.Step = faults.Duration(time.Millisecond)
		}
		add(at, e)
	}
	slices.SortStableFunc(evs, func(x, y ev) int {
		if x.at != y.at {
			if x.at < y.at {
				return -1
			}
			return 1
		}
		return x.seq - y.seq
	})
	plan := faults.Plan{Events: make([]faults.Event, len(evs))}
	for i, e := range evs {
		plan.Events[i] = e.e
	}
	if err := plan.Validate(names); err != nil {
		return faults.Plan{}, fmt.Errorf("mobility produced an invalid plan (a bug): %w", err)
	}
	return plan, nil
}

// Clocks draws each device's clock: drift uniform in ±maxPPM, offset between 1s and 2s
// (the offset is irrelevant to leases, which measure intervals, §3; it keeps local
// clocks well away from 0, so no local reading is ever negative, even after steps).
func Clocks(seed uint64, n int, maxPPM int64) []sim.Clock {
	r := sim.Stream(seed, "clocks")
	cs := make([]sim.Clock, n)
	for i := range cs {
		cs[i].Offset = time.Duration(r.Int64Range(-int64(time.Second), int64(time.Second))).Abs() + time.Second
		if maxPPM > 0 {
			cs[i].DriftPPM = r.Int64Range(-maxPPM, maxPPM)
		}
	}
	return cs
}
