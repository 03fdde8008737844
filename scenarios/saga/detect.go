package sagascen

import (
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/sim"
)

// PropLost is SG-4's detection rule as a property.
const PropLost = "SG-4 lost connectivity reported"

// hears reports whether a can hear x where the plan's connectivity is s: both up, a
// message from x reaching a.
func hears(s faults.Settlement, a, x string) bool {
	return !slices.Contains(s.Down, a) && !slices.Contains(s.Down, x) && s.Reachable(x, a)
}

// reaches reports whether news of x can reach a: a path of up agents, each hearing
// the one before, from x to a (the exchange relays views, so an agent cut off from x
// directly still learns it is alive through a third that hears it).
func reaches(s faults.Settlement, x, a string, agents []string) bool {
	seen := map[string]bool{x: true}
	todo := []string{x}
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if n == a {
			return true
		}
		for _, m := range agents {
			if !seen[m] && hears(s, m, n) {
				seen[m] = true
				todo = append(todo, m)
			}
		}
	}
	return false
}

// lossItem is one expected report: agent a must regard x as lost by at+window; the
// outage lasts until until (-1: for good).
type lossItem struct {
	a, x      string
	at, until sim.Time
}

// lossItems lists what SG-4's detection rule requires of a run under plan: when a
// fault leaves agent a unable to hear its line neighbour x (x crashed, a partition or
// a cut between them) after a heard x for settle, and a stays up and cut off from any
// news of x (no chain of agents hearing each other from x to a) for window, a must
// regard x as lost by the window's end. Other losses are exempt:
// a short outage may end before the timeout, a reporter that crashes forgets, and a
// neighbour heard only briefly may still be lost from an earlier fault.
func lossItems(plan faults.Plan, o *saga.Options, settle, window time.Duration) (items []lossItem, exempt int) {
	line := slices.Sorted(slices.Values(o.Names))
	segs := plan.Timeline() // the connectivity from each Settlement.At to the next
	for _, a := range line {
		for _, x := range line {
			i, j := slices.Index(line, a), slices.Index(line, x)
			if i == j || (!o.AllToAll && i-j != 1 && j-i != 1) {
				continue
			}
			heardSince := sim.Time(0) // start of the current stretch in which a hears x
			for k := range segs {
				if hears(segs[k], a, x) {
					if k > 0 && !hears(segs[k-1], a, x) {
						heardSince = segs[k].At
					}
					continue
				}
				if k == 0 || !hears(segs[k-1], a, x) || slices.Contains(segs[k].Down, a) || reaches(segs[k], x, a, line) {
					continue // not a loss of a's: a did not hear x before, is down, or still hears of x
				}
				t, until := segs[k].At, sim.Time(-1) // until: a up and cut off from any news of x
				for m := k + 1; m < len(segs); m++ {
					if slices.Contains(segs[m].Down, a) || reaches(segs[m], x, a, line) {
						until = segs[m].At
						break
					}
				}
				// From the start every view is fresh: a neighbour heard since time 0
				// needs no settling.
				if (until >= 0 && until < t.Add(window)) || (heardSince > 0 && t-heardSince < sim.Time(settle)) {
					exempt++
					continue
				}
				items = append(items, lossItem{a: a, x: x, at: t, until: until})
			}
		}
	}
	return items, exempt
}

// latencyBound is the longest a message can take under nw and plan: the
// distribution's largest delay plus the largest spike.
func latencyBound(nw sim.Network, plan faults.Plan) time.Duration {
	l := nw.Latency
	d := l.Min
	switch l.Dist {
	case "uniform":
		d = l.Max
	case "exp":
		d = l.Min + 100*l.Mean
	}
	var spike time.Duration
	for _, e := range plan.Events {
		if e.Kind == "spike" {
			spike = max(spike, time.Duration(e.Extra))
		}
	}
	return d + spike
}

// lossWindows returns how long a neighbour must have been heard before a loss counts
// and the window by whose end it must be regarded as lost. A neighbour is lost at the
// first beat after Timeout of silence, and the silence starts at the last message
// heard, at the fault at the latest; so Timeout + Beat on the reporter's clock. A
// clock that runs slow by p ppm takes (T+B)/(1-p) of real time for that, and every
// step back delays it by the step (the plan's largest drift, 2 % at least, and the
// largest sum of one node's backward steps, 10 ms at least); plus twice the largest
// latency for a beat in flight. A clock slowed to a stop leaves no window (ok false).
// Settle: a neighbour heard for two beats has had its beats through (an earlier loss
// of it is over: heard again, it is back).
func lossWindows(o *saga.Options, maxLatency time.Duration, clock clockSlack) (settle, window time.Duration, ok bool) {
	settle = 2*o.Beat + 2*maxLatency
	ppm := max(clock.ppm, 20_000)
	if ppm >= 1_000_000 {
		return settle, 0, false
	}
	onClock := float64(o.Timeout + o.Beat)
	window = time.Duration(onClock*1e6/float64(1_000_000-ppm)) + 2*maxLatency + max(clock.back, 10*time.Millisecond)
	return settle, window, true
}

// clockSlack is the most a plan slows a clock: its largest drift (ppm, either sign
// counted as slow) and the largest total of one node's backward steps.
type clockSlack struct {
	ppm  int64
	back time.Duration
}

func planClocks(plan faults.Plan) clockSlack {
	var c clockSlack
	back := map[string]time.Duration{}
	for _, e := range plan.Events {
		if e.Kind != "skew" {
			continue
		}
		if e.Step < 0 {
			back[e.Node] -= time.Duration(e.Step)
			c.back = max(c.back, back[e.Node])
		}
		if e.DriftPPM != nil {
			c.ppm = max(c.ppm, *e.DriftPPM, -*e.DriftPPM)
		}
	}
	return c
}

// lossReported checks SG-4's detection rule ("lost connectivity is reported"): for
// every item of lossItems, the agent's last report about the neighbour by the window's
// end says lost (saga/lost, not a later saga/back). An agent that re-arranges its line
// (saga/grace-over: a neighbour gone past the grace period) gives its new neighbours
// a fresh timeout, so a re-arrangement in the window starts it again; a loss that
// then ends before the window does is exempt. It says how many it checked and how many
// losses it exempted.
func (e *env) lossReported(r *checker.Run) error {
	o := e.sys.opts
	if o.Beat <= 0 {
		r.Note("no connectivity layer (beat 0): nothing to check")
		return nil
	}
	settle, window, ok := lossWindows(o, e.maxLatency, planClocks(e.plan))
	if !ok {
		r.Note("a clock slowed to a stop: no detection bound, nothing checked")
		return nil
	}
	items, exempt := lossItems(e.plan, o, settle, window)
	type report struct {
		at   sim.Time
		lost bool
	}
	reports := map[[2]string][]report{}
	rearranged := map[string][]sim.Time{}
	for _, ob := range r.History() {
		switch ob.Kind {
		case saga.ObsLost, saga.ObsBack:
			v := ob.Value.(saga.ConnEv)
			k := [2]string{v.Agent, v.Peer}
			reports[k] = append(reports[k], report{ob.Time, ob.Kind == saga.ObsLost})
		case saga.ObsGraceOver:
			a := ob.Value.(saga.ConnEv).Agent
			rearranged[a] = append(rearranged[a], ob.Time)
		}
	}
	checked, late := 0, 0
	defer func() {
		r.Note(fmt.Sprintf("%d losses checked, %d exempt (shorter than %v, the reporter down, the neighbour heard less than %v before, or a re-arrangement restarting the timeout until the loss ended)", checked, exempt+late, window, settle))
	}()
	for _, it := range items {
		deadline := it.at.Add(window)
		for _, g := range rearranged[it.a] {
			if g > it.at.Add(-window) && g <= deadline {
				deadline = max(deadline, g.Add(window))
			}
		}
		if it.until >= 0 && it.until < deadline {
			late++
			continue
		}
		checked++
		lost := false
		for _, rp := range reports[[2]string{it.a, it.x}] {
			if rp.at <= deadline {
				lost = rp.lost
			}
		}
		if !lost {
			return fmt.Errorf("%s still regards its neighbour %s as connected at %v, %v after losing it at %v", it.a, it.x, deadline, time.Duration(deadline-it.at), it.at)
		}
	}
	return nil
}
