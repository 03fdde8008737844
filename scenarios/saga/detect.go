package sagascen

import (
	"cmp"
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

// lossItem is one expected report: agent a must regard x as lost by at+window (plus
// hops relays of the news along the line, through the agents via, for an agent that
// is not x's neighbour); the outage lasts until until (-1: for good).
type lossItem struct {
	a, x      string
	at, until sim.Time
	hops      int
	via       []string
	// linked: until when the relay's agents stay up and hear each other (-1: for good)
	linked sim.Time
}

// lossItems lists what SG-4's detection rule requires of a run under plan ("lost
// connectivity is reported to all agents"). When a fault leaves agent c unable to
// hear its line neighbour x (x crashed, a partition or a cut between them) after c
// heard x for settle, and c stays up and cut off from any news of x (no chain of
// agents hearing each other from x to c) for window, c must regard x as lost by the
// window's end. The news then crosses the line away from x: an agent a further along,
// hops agents past c, must regard x as lost hops relays (hop each) later, when every
// agent from c to a stays up and hears its line neighbours both ways meanwhile, and
// a stays cut off from any news of x. With the all-to-all exchange every agent is
// every other's neighbour. An agent of the line that the relaying agent has surely
// given up on — cut off from it, with no news, for goneAfter before the loss (a loss
// noticed, a grace period, and a window) until the deadline — is skipped: the relay
// has re-arranged its exchange around it (goneAfter 0: no skipping). A crash-send counts as a crash at the end of its window
// for x (the latest it can be) and exempts the reports of an agent it may crash
// before their deadline. Other losses are exempt: a short outage may end before
// the deadline, a reporter that crashes forgets, and a neighbour heard only briefly
// may still be lost from an earlier fault.
func lossItems(plan faults.Plan, o *saga.Options, settle, window, hop, goneAfter time.Duration) (items []lossItem, exempt int) {
	line := slices.Sorted(slices.Values(o.Names))
	segs := latestCrashes(plan).Timeline() // the connectivity from each Settlement.At to the next
	mayCrash := func(a string, from, to sim.Time) bool { return mayCrash(plan, a, from, to) }
	// cutOff returns until when a stays up and cut off from any news of x from segment
	// k on (-1: for good).
	cutOff := func(a, x string, k int) sim.Time {
		for m := k + 1; m < len(segs); m++ {
			if slices.Contains(segs[m].Down, a) || reaches(segs[m], x, a, line) {
				return segs[m].At
			}
		}
		return -1
	}
	// linked returns from when on the agents of chain are no longer all up and
	// hearing their neighbours in it both ways, from from on (-1: never; from itself
	// if they are not linked at from).
	linked := func(chain []string, from sim.Time) sim.Time {
		for m := range segs {
			if m+1 < len(segs) && segs[m+1].At <= from {
				continue
			}
			for q := range chain {
				if slices.Contains(segs[m].Down, chain[q]) ||
					q > 0 && (!hears(segs[m], chain[q], chain[q-1]) || !hears(segs[m], chain[q-1], chain[q])) {
					return max(from, segs[m].At)
				}
			}
		}
		return -1
	}
	// longGone reports whether c has been up and cut off from any news of x over
	// [from-goneAfter, to].
	longGone := func(c, x string, from, to sim.Time) bool {
		start := from.Add(-goneAfter)
		if goneAfter <= 0 || start < 0 {
			return false
		}
		for m := range segs {
			if m+1 < len(segs) && segs[m+1].At <= start || segs[m].At > to {
				continue
			}
			if slices.Contains(segs[m].Down, c) || reaches(segs[m], x, c, line) {
				return false
			}
		}
		return true
	}
	for _, c := range line {
		for _, x := range line {
			i, j := slices.Index(line, c), slices.Index(line, x)
			if i == j {
				continue
			}
			// between: the agents between c and x on the line; c watches x when it has
			// re-arranged its line around all of them (all-to-all: always).
			var between []string
			if !o.AllToAll {
				for q := min(i, j) + 1; q < max(i, j); q++ {
					between = append(between, line[q])
				}
			}
			if len(between) > 0 && goneAfter <= 0 {
				continue
			}
			heardSince := sim.Time(0) // start of the current stretch in which c hears x
			for k := range segs {
				if hears(segs[k], c, x) {
					if k > 0 && !hears(segs[k-1], c, x) {
						heardSince = segs[k].At
					}
					continue
				}
				if k == 0 || !hears(segs[k-1], c, x) || slices.Contains(segs[k].Down, c) || reaches(segs[k], x, c, line) {
					continue // not a loss of c's: c did not hear x before, is down, or still hears of x
				}
				t, until := segs[k].At, cutOff(c, x, k)
				if slices.ContainsFunc(between, func(b string) bool { return !longGone(c, b, t, t.Add(window)) }) {
					continue // c does not watch x
				}
				// From the start every view is fresh: a neighbour heard since time 0
				// needs no settling.
				if (until >= 0 && until < t.Add(window)) || (heardSince > 0 && t-heardSince < sim.Time(settle)) || mayCrash(c, t, t.Add(window)) {
					exempt++
					continue
				}
				items = append(items, lossItem{a: c, x: x, at: t, until: until})
				if o.AllToAll {
					continue
				}
				// The news crosses the line away from x, one agent a beat.
				step := 1 // away from x
				if i < j {
					step = -1
				}
				chain := []string{c}
				skipped := false
				for q := i + step; q >= 0 && q < len(line); q += step {
					a := line[q]
					if last := chain[len(chain)-1]; !skipped && longGone(last, a, t, t.Add(window+time.Duration(len(chain))*hop)) {
						skipped = true // one gone agent at a time between two relays
						continue
					}
					skipped = false
					chain = append(chain, a)
					hops := len(chain) - 1
					deadline := t.Add(window + time.Duration(hops)*hop)
					lk := linked(chain, t)
					if lk >= 0 && lk < deadline {
						break
					}
					au := cutOff(a, x, k)
					if reaches(segs[k], x, a, line) || (au >= 0 && au < deadline) || slices.ContainsFunc(chain, func(n string) bool { return mayCrash(n, t, deadline) }) {
						exempt++
						continue
					}
					items = append(items, lossItem{a: a, x: x, at: t, until: au, hops: hops, via: slices.Clone(chain[:hops]), linked: lk})
				}
			}
		}
	}
	return items, exempt
}

// mayCrash reports whether a crash-send window of node a overlaps [from, to] (a may
// be down from some point of it that only the run knows).
func mayCrash(plan faults.Plan, a string, from, to sim.Time) bool {
	for _, e := range plan.Events {
		if e.Kind == "crash-send" && e.Node == a && sim.Time(e.At) <= to && sim.Time(e.At+e.For) >= from {
			return true
		}
	}
	return false
}

// latestCrashes returns plan with every crash-send made a crash at the end of its
// window: the latest its node can go down (it goes down at its first step that sends
// in the window, which only the run knows).
func latestCrashes(plan faults.Plan) faults.Plan {
	out := faults.Plan{Events: slices.Clone(plan.Events)}
	for i, e := range out.Events {
		if e.Kind == "crash-send" {
			out.Events[i] = faults.Event{At: e.At + e.For, Kind: "crash", Node: e.Node}
		}
	}
	slices.SortStableFunc(out.Events, func(a, b faults.Event) int { return cmp.Compare(a.At, b.At) })
	return out
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
//
// Hop is how long a relay takes: the news goes out with the relaying agent's next
// beat (one beat on its clock, slowed and stepped back as above) and arrives a
// latency later.
func lossWindows(o *saga.Options, maxLatency time.Duration, clock clockSlack) (settle, window, hop time.Duration, ok bool) {
	settle = 2*o.Beat + 2*maxLatency
	ppm := max(clock.ppm, 20_000)
	if ppm >= 1_000_000 {
		return settle, 0, 0, false
	}
	slow := func(d time.Duration) time.Duration { return time.Duration(float64(d) * 1e6 / float64(1_000_000-ppm)) }
	back := max(clock.back, 10*time.Millisecond)
	window = slow(o.Timeout+o.Beat) + 2*maxLatency + back
	hop = slow(o.Beat) + maxLatency + back
	return settle, window, hop, true
}

// goneBound is how long after an agent is cut off from another its neighbour surely
// regards it as gone (past the grace period): a loss noticed (a timeout and a beat)
// and a grace period, on the plan's slowest clock, plus latencies.
func goneBound(o *saga.Options, maxLatency time.Duration, clock clockSlack) time.Duration {
	ppm := max(clock.ppm, 20_000)
	return time.Duration(float64(o.Timeout+o.Beat+o.Grace)*1e6/float64(1_000_000-ppm)) + 2*maxLatency + max(clock.back, 10*time.Millisecond)
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
	settle, window, hop, ok := lossWindows(o, e.maxLatency, planClocks(e.plan))
	if !ok {
		r.Note("a clock slowed to a stop: no detection bound, nothing checked")
		return nil
	}
	items, exempt := lossItems(e.plan, o, settle, window, hop, window+goneBound(o, e.maxLatency, planClocks(e.plan)))
	type report struct {
		at   sim.Time
		lost bool
	}
	reports := map[[2]string][]report{}
	type rearrangement struct {
		at   sim.Time
		peer string
	}
	rearranged := map[string][]rearrangement{}
	for _, ob := range r.History() {
		switch ob.Kind {
		case saga.ObsLost, saga.ObsBack:
			v := ob.Value.(saga.ConnEv)
			k := [2]string{v.Agent, v.Peer}
			reports[k] = append(reports[k], report{ob.Time, ob.Kind == saga.ObsLost})
		case saga.ObsGraceOver:
			v := ob.Value.(saga.GraceEv)
			rearranged[v.Agent] = append(rearranged[v.Agent], rearrangement{ob.Time, v.Peer})
		}
	}
	checked, late, relayed := 0, 0, 0
	defer func() {
		r.Count(checked, exempt+late)
		r.Note(fmt.Sprintf("%d losses checked (%d relayed along the line), %d exempt (shorter than %v, the reporter down, the neighbour heard less than %v before, or a re-arrangement restarting the timeout until the loss ended)", checked, relayed, exempt+late, window, settle))
	}()
	for _, it := range items {
		// An agent of the relay (or the reporter) that re-arranges its line around
		// another agent gives its new neighbours a fresh timeout: the report may be
		// that much later.
		relay := time.Duration(it.hops) * hop
		deadline := it.at.Add(window + relay)
		for _, n := range append([]string{it.a}, it.via...) {
			for _, g := range rearranged[n] {
				if g.peer != it.x && g.at > it.at.Add(-window) && g.at <= deadline {
					deadline = max(deadline, g.at.Add(window+relay))
				}
			}
		}
		if it.until >= 0 && it.until < deadline || it.hops > 0 && it.linked >= 0 && it.linked < deadline || slices.ContainsFunc(append([]string{it.a}, it.via...), func(n string) bool {
			return mayCrash(e.plan, n, it.at, deadline)
		}) {
			late++
			continue
		}
		checked++
		if it.hops > 0 {
			relayed++
		}
		lost := false
		for _, rp := range reports[[2]string{it.a, it.x}] {
			if rp.at <= deadline {
				lost = rp.lost
			}
		}
		if !lost && it.hops == 0 {
			return fmt.Errorf("%s still regards its neighbour %s as connected at %v, %v after losing it at %v", it.a, it.x, deadline, time.Duration(deadline-it.at), it.at)
		}
		if !lost {
			return fmt.Errorf("the loss of %s is not reported to all agents: %s, %d along the line from %s (which lost it at %v), still regards it as connected at %v", it.x, it.a, it.hops, it.via[0], it.at, deadline)
		}
	}
	return nil
}

// quiet checks that SG-4's detection reports no loss that did not happen: once the
// faults have settled (on links that lose no message: lossy runs are not checked) (every agent that will restart is up, no partition, cut or
// spike left), an agent that reports another lost is wrong, apart from a crashed-for-
// good one. Settling takes a while: a loss noticed at the last fault (a timeout and a
// beat), a grace period, and after a re-arrangement a timeout and a beat more for
// the new neighbour (on the plan's slowest clock, plus latencies), and another beat
// for good measure.
func (e *env) quiet(r *checker.Run) error {
	o := e.sys.opts
	checked, exempt := 0, 0
	var after sim.Time
	defer func() {
		r.Count(checked, exempt)
		r.Note(fmt.Sprintf("%d agents checked quiet from %v, %d loss reports exempt (before then, or of an agent down for good)", checked, after, exempt))
	}()
	if o.Beat <= 0 {
		return nil
	}
	if len(r.Knobs) > 0 || slices.ContainsFunc(e.plan.Events, func(ev faults.Event) bool { return ev.Kind == "burst" }) {
		// lossy links (outside the paper's model) lose beats too: a loss may be real
		r.Note("lossy or duplicating links: nothing to check")
		return nil
	}
	clock := planClocks(e.plan)
	ppm := max(clock.ppm, 20_000)
	slow := func(d time.Duration) time.Duration { return time.Duration(float64(d) * 1e6 / float64(1_000_000-ppm)) }
	after = r.Settled.Add(slow(2*(o.Timeout+o.Beat)+o.Grace+o.Beat) + 4*e.maxLatency + max(clock.back, 10*time.Millisecond))
	if r.Time > after {
		for _, f := range r.Final {
			if f.Up {
				checked++
			}
		}
	}
	for _, ob := range r.History() {
		if ob.Kind != saga.ObsLost {
			continue
		}
		v := ob.Value.(saga.ConnEv)
		if ob.Time <= after || slices.Contains(r.Down, v.Peer) {
			exempt++
			continue
		}
		return fmt.Errorf("%s reported %s lost at %v, after the faults settled at %v: nothing cut it off", v.Agent, v.Peer, ob.Time, r.Settled)
	}
	return nil
}
