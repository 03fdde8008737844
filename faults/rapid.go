package faults

import (
	"fmt"
	"slices"
	"time"

	"pgregory.net/rapid"
)

// PlanGen returns a rapid generator of valid fault plans for the named nodes within
// limits: the rapid counterpart of Generate, for property tests whose failing plans
// should shrink to minimal ones.
//
// Limits are read as maxima, with the same meaning as for Generate: at most
// limits.Crashes crash/restart pairs (each down for at most about 3×MeanDown), at most
// limits.Permanent permanent crashes, never more than MaxDown nodes down at once (0 = a
// minority of Crashable), at most limits.Partitions partition windows each closed by a
// heal (a window is a one-way cut only if CutFrac > 0), at most limits.Spikes latency
// spikes of up to SpikeExtra (default 50ms), at most limits.Skews clock skews (steps up
// to ±MaxStep, drift up to ±MaxDriftPPM), and loss/duplication bursts only when
// limits.Bursts > 0 (and BurstLoss or BurstDup is set). Crashes touch only Crashable
// nodes and partitions only split off Splittable nodes (nil: every node). Every event
// lies in [Start, Horizon] and, permanent crashes aside, the plan leaves the system
// whole by Horizon.
//
// Shrinking. Each fault is one element of a per-kind list of drawn "intents" (a crash
// intent becomes a crash and its restart, a partition intent a partition and its heal),
// so rapid's shrinker removes whole faults. Times are drawn as whole time units
// (milliseconds, or a twentieth of the window when it is shorter than 20ms) counted
// from Start, durations as units from 1, node choices as indices into the node lists,
// and optional features (a cut instead of a partition, a drift, a spike limited to one
// node) as booleans that are false by default: every drawn value shrinks toward the
// earliest time, the shortest fault, the first node and the plainest kind.
//
// Validity. Every drawn combination yields a valid plan: an intent that would conflict
// with an earlier one (a second crash of a node that is down, more than MaxDown nodes
// down, overlapping partition windows) is skipped, never retried, so generation never
// fails and never filters. Invalid limits (Horizon <= Start, a Crashable or Splittable
// name not in names, no names) are a programming error: PlanGen panics at once.
func PlanGen(names []string, limits Params) *rapid.Generator[Plan] {
	g, err := newPlanGen(names, limits)
	if err != nil {
		panic(err)
	}
	return rapid.Custom(g.draw)
}

// planGen holds the limits, resolved once.
type planGen struct {
	names, crashable, splittable []string
	p                            Params
	unit                         time.Duration
	slots                        int64 // window length in units
	maxDown                      int
}

func newPlanGen(names []string, p Params) (*planGen, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("faults: PlanGen needs at least one node")
	}
	if p.Start < 0 || p.Horizon <= p.Start {
		return nil, fmt.Errorf("faults: PlanGen needs 0 <= start < horizon (start %v, horizon %v)", p.Start, p.Horizon)
	}
	if err := p.bounded(); err != nil {
		return nil, err
	}
	g := &planGen{names: slices.Clone(names), crashable: p.Crashable, splittable: p.Splittable, p: p}
	if g.crashable == nil {
		g.crashable = g.names
	}
	if g.splittable == nil {
		g.splittable = g.names
	}
	for _, n := range append(slices.Clone(g.crashable), g.splittable...) {
		if !slices.Contains(names, n) {
			return nil, fmt.Errorf("faults: PlanGen: unknown node %q in Crashable or Splittable (nodes: %v)", n, names)
		}
	}
	span := p.Horizon - p.Start
	g.unit = time.Millisecond
	if span < 20*time.Millisecond {
		g.unit = max(span/20, 1)
	}
	g.slots = int64(span / g.unit)
	g.maxDown = p.MaxDown
	if g.maxDown == 0 {
		// The same default as Generate: a minority of the crashable nodes.
		g.maxDown = (len(g.crashable) - 1) / 2
		if len(g.crashable) == 1 {
			g.maxDown = 1
		}
	}
	return g, nil
}

// at draws a time slot in [0, last] (0 = Start).
func (g *planGen) at(t *rapid.T, last int64, label string) time.Duration {
	return g.p.Start + time.Duration(rapid.Int64Range(0, max(last, 0)).Draw(t, label))*g.unit
}

// length draws a duration of 1..most units.
func (g *planGen) length(t *rapid.T, most int64, label string) time.Duration {
	return time.Duration(rapid.Int64Range(1, max(most, 1)).Draw(t, label)) * g.unit
}

// units converts a duration to a count of units (at least 1).
func (g *planGen) units(d time.Duration) int64 { return max(int64(d/g.unit), 1) }

type interval struct {
	node     string
	from, to time.Duration // [from, to); to > Horizon for a permanent crash
}

type pendingEvent struct {
	at  time.Duration
	seq int
	e   Event
}

func (g *planGen) draw(t *rapid.T) Plan {
	p := g.p
	gap := g.unit // keeps a restart and the next crash (a heal and the next split) apart
	var evs []pendingEvent
	add := func(at time.Duration, e Event) {
		e.At = Duration(at)
		evs = append(evs, pendingEvent{at: at, seq: len(evs), e: e})
	}
	last := g.slots - 1 // latest start slot of a fault that must end by Horizon
	drew := false

	// Crashes. Permanent ones first (as Generate does), then transient pairs; an intent
	// that overlaps another crash of the same node, or would put more than maxDown
	// nodes down together, is skipped.
	var downs []interval
	conflicts := func(n string, from, to time.Duration) bool {
		count := 0
		for _, d := range downs {
			if d.from < to+gap && from < d.to+gap {
				if d.node == n {
					return true
				}
				count++
			}
		}
		return count >= g.maxDown
	}
	forever := p.Horizon + time.Hour
	type permIntent struct {
		node int
		at   time.Duration
	}
	if p.Permanent > 0 && len(g.crashable) > 0 {
		perms := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) permIntent {
			return permIntent{
				node: rapid.IntRange(0, len(g.crashable)-1).Draw(t, "node"),
				at:   g.at(t, g.slots, "at"),
			}
		}), 0, p.Permanent).Draw(t, "permanent")
		drew = true
		for _, c := range perms {
			n := g.crashable[c.node]
			if conflicts(n, c.at, forever) {
				continue
			}
			downs = append(downs, interval{n, c.at, forever})
			add(c.at, Event{Kind: "crash", Node: n})
		}
	}
	type crashIntent struct {
		node     int
		at, down time.Duration
	}
	if p.Crashes > 0 && len(g.crashable) > 0 && last >= 0 {
		meanDown := p.MeanDown
		if meanDown <= 0 {
			meanDown = (p.Horizon - p.Start) / 10
		}
		crashes := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) crashIntent {
			return crashIntent{
				node: rapid.IntRange(0, len(g.crashable)-1).Draw(t, "node"),
				at:   g.at(t, last, "at"),
				down: g.length(t, 3*g.units(meanDown), "down"),
			}
		}), 0, p.Crashes).Draw(t, "crashes")
		drew = true
		for _, c := range crashes {
			n := g.crashable[c.node]
			end := min(c.at+c.down, p.Horizon)
			if conflicts(n, c.at, end) {
				continue
			}
			downs = append(downs, interval{n, c.at, end})
			add(c.at, Event{Kind: "crash", Node: n})
			add(end, Event{Kind: "restart", Node: n})
		}
	}

	// Partition windows: disjoint (a heal ends every partition and cut), each closed by
	// a heal. A partition splits off a group of at most a minority of all nodes, taken
	// from Splittable; a cut drops one directed link with a Splittable end.
	type window struct {
		at, span time.Duration
		cut      bool
		members  []int // indices into splittable (duplicates collapse)
		from, to int   // cut: from in splittable, to in the other names
		flip     bool
	}
	if p.Partitions > 0 && len(g.splittable) > 0 && len(g.names) > 1 && last >= 0 {
		meanSplit := p.MeanSplit
		if meanSplit <= 0 {
			meanSplit = (p.Horizon - p.Start) / 10
		}
		maxGroup := max(1, min(len(g.splittable), (len(g.names)-1)/2))
		wins := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) window {
			w := window{at: g.at(t, last, "at"), span: g.length(t, 3*g.units(meanSplit), "for")}
			if p.CutFrac > 0 {
				w.cut = rapid.Bool().Draw(t, "cut")
			}
			if w.cut {
				w.from = rapid.IntRange(0, len(g.splittable)-1).Draw(t, "from")
				w.to = rapid.IntRange(0, len(g.names)-2).Draw(t, "to")
				w.flip = rapid.Bool().Draw(t, "flip")
			} else {
				k := rapid.IntRange(1, maxGroup).Draw(t, "size")
				w.members = rapid.SliceOfN(rapid.IntRange(0, len(g.splittable)-1), k, k).Draw(t, "members")
			}
			return w
		}), 0, p.Partitions).Draw(t, "partitions")
		drew = true
		var taken [][2]time.Duration
		for _, w := range wins {
			end := min(w.at+w.span, p.Horizon)
			if slices.ContainsFunc(taken, func(x [2]time.Duration) bool { return x[0] < end+gap && w.at < x[1]+gap }) {
				continue
			}
			var e Event
			if w.cut {
				from := g.splittable[w.from]
				others := slices.DeleteFunc(slices.Clone(g.names), func(x string) bool { return x == from })
				to := others[w.to]
				if w.flip {
					from, to = to, from
				}
				e = Event{Kind: "cut", From: from, To: to}
			} else {
				var group []string
				for _, i := range w.members {
					if n := g.splittable[i]; !slices.Contains(group, n) {
						group = append(group, n)
					}
				}
				slices.SortFunc(group, func(a, b string) int { return slices.Index(g.names, a) - slices.Index(g.names, b) })
				if len(group) == len(g.names) {
					continue // cannot happen with a minority, kept as a guard
				}
				e = Event{Kind: "partition", Groups: [][]string{group}}
			}
			taken = append(taken, [2]time.Duration{w.at, end})
			add(w.at, e)
			add(end, Event{Kind: "heal"})
		}
	}

	// Latency spikes: on every link (the plainest), or on the links from or to one node.
	type spike struct {
		at, span, extra time.Duration
		mode, node      int
	}
	if p.Spikes > 0 && last >= 0 {
		most := p.SpikeExtra
		if most <= 0 {
			most = 50 * time.Millisecond
		}
		least := max(most/4, 1)
		spikes := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) spike {
			s := spike{at: g.at(t, last, "at"), span: g.length(t, max(g.slots/10, 1), "for")}
			// Extra latency in whole units above least, shrinking toward least.
			s.extra = least + time.Duration(rapid.Int64Range(0, int64((most-least)/g.unit)).Draw(t, "extra"))*g.unit
			s.mode = rapid.IntRange(0, 2).Draw(t, "mode")
			if s.mode != 0 {
				s.node = rapid.IntRange(0, len(g.names)-1).Draw(t, "node")
			}
			return s
		}), 0, p.Spikes).Draw(t, "spikes")
		drew = true
		for _, s := range spikes {
			from, to := "*", "*"
			switch s.mode {
			case 1:
				from = g.names[s.node]
			case 2:
				to = g.names[s.node]
			}
			dur := min(s.span, p.Horizon-s.at)
			add(s.at, Event{Kind: "spike", From: from, To: to, Extra: Duration(s.extra), For: Duration(dur)})
		}
	}

	// Clock skews: a step (in whole units) and, optionally, a new drift rate.
	type skew struct {
		at       time.Duration
		node     int
		step     int64
		drift    bool
		driftPPM int64
	}
	if p.Skews > 0 {
		maxStep := int64(p.MaxStep / g.unit)
		skews := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) skew {
			s := skew{at: g.at(t, g.slots, "at"), node: rapid.IntRange(0, len(g.names)-1).Draw(t, "node")}
			s.step = rapid.Int64Range(-maxStep, maxStep).Draw(t, "step")
			if p.MaxDriftPPM > 0 {
				s.drift = rapid.Bool().Draw(t, "drift")
				if s.drift {
					s.driftPPM = rapid.Int64Range(-p.MaxDriftPPM, p.MaxDriftPPM).Draw(t, "ppm")
				}
			}
			return s
		}), 0, p.Skews).Draw(t, "skews")
		drew = true
		for _, s := range skews {
			e := Event{Kind: "skew", Node: g.names[s.node], Step: Duration(time.Duration(s.step) * g.unit)}
			if s.drift {
				d := min(max(s.driftPPM, -MaxDriftPPM), MaxDriftPPM) // Validate's bound
				e.DriftPPM = &d
			}
			if e.Step == 0 && e.DriftPPM == nil {
				e.Step = Duration(g.unit) // repair: a skew must change something
			}
			add(s.at, e)
		}
	}

	// Loss/duplication bursts: only when asked for (they break the papers' network
	// assumption).
	type burst struct{ at, span time.Duration }
	if p.Bursts > 0 && (p.BurstLoss > 0 || p.BurstDup > 0) && last >= 0 {
		bursts := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) burst {
			return burst{at: g.at(t, last, "at"), span: g.length(t, max(g.slots/10, 1), "for")}
		}), 0, p.Bursts).Draw(t, "bursts")
		drew = true
		for _, b := range bursts {
			add(b.at, Event{Kind: "burst", Loss: min(p.BurstLoss, 1), Dup: min(p.BurstDup, 1), For: Duration(min(b.span, p.Horizon-b.at))})
		}
	}

	if !drew {
		// rapid requires a custom generator to draw something; with every limit at zero
		// the plan is empty whatever this says.
		rapid.Bool().Draw(t, "nothing")
	}

	slices.SortStableFunc(evs, func(a, b pendingEvent) int {
		if a.at != b.at {
			if a.at < b.at {
				return -1
			}
			return 1
		}
		return a.seq - b.seq
	})
	plan := Plan{Events: make([]Event, len(evs))}
	for i, e := range evs {
		plan.Events[i] = e.e
	}
	if err := plan.Validate(g.names); err != nil {
		panic(fmt.Sprintf("faults: PlanGen produced an invalid plan (a bug): %v\n%s", err, plan.JSON()))
	}
	return plan
}
