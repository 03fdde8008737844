package lsscen

import (
	"math"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/sim"
)

// ground is the checkers' ground truth about a run's environment, computed from the
// fault plan, the clocks and the network (the nodes never see any of it: they learn
// about connectivity only from messages).
type ground struct {
	n int
	// impaired[pair(a,b)] lists the global-time intervals during which a and b could
	// not exchange messages reliably: either node down, either direction cut or
	// partitioned, or a loss burst on. A duplication-only burst loses nothing and is
	// not an impairment (the runtime ignores duplicates).
	impaired [][]span
	// apart[pair(a,b)] lists the intervals during which a and b could not exchange
	// messages at all: either node down, either direction cut or partitioned (loss
	// bursts excluded). A last interval that never ends is a parting for good.
	apart [][]span
	// deaf[a*n+b] lists the intervals during which a could not hear b at all: either
	// node down, b→a cut, or a partition between them (loss bursts excluded).
	deaf [][]span
	// down[n] lists the intervals during which node n was crashed.
	down [][]span
	// crashSend[n] lists node n's crash-send windows [At, At+For]: the node crashed at
	// some point of each (its first call there that sends), counted down from At.
	crashSend [][]span
	// lmax bounds one-way latency (link maximum plus the largest spike).
	lmax time.Duration
	// rho bounds every clock's drift rate (fraction), over the initial clocks and
	// every skew of the plan.
	rho float64
	// steps is the sum of the absolute clock steps of the plan.
	steps time.Duration
}

// span is [from, to) in global time; to == never for a state that lasts.
type span struct{ from, to sim.Time }

const never = sim.Time(math.MaxInt64)

func pairIndex(a, b, n int) int {
	if a > b {
		a, b = b, a
	}
	return a*n + b
}

// overlaps reports whether some interval of ss intersects [from, to].
func overlaps(ss []span, from, to sim.Time) bool {
	for _, s := range ss {
		if s.from <= to && from < s.to {
			return true
		}
	}
	return false
}

// covers reports whether one interval of ss contains [from, to].
func newGround(plan faults.Plan, names []string, clocks []sim.Clock, nw sim.Network) *ground {
	n := len(names)
	g := &ground{n: n, impaired: make([][]span, n*n), apart: make([][]span, n*n), deaf: make([][]span, n*n), down: make([][]span, n),
		crashSend: make([][]span, n)}
	idx := func(name string) int { return slices.Index(names, name) }
	switch nw.Latency.Dist {
	case "uniform":
		g.lmax = nw.Latency.Max
	case "exp":
		g.lmax = nw.Latency.Min + 100*nw.Latency.Mean
	default:
		g.lmax = nw.Latency.Min
	}
	for _, ll := range nw.Links {
		g.lmax = max(g.lmax, ll.Latency.Max, ll.Latency.Min)
	}
	var ppm int64
	for _, c := range clocks {
		ppm = max(ppm, abs(c.DriftPPM))
	}
	var spike time.Duration
	// Walk the plan in time order, tracking who is down, which links are cut, the
	// partition, and loss bursts; record the impaired intervals of every pair.
	down := make([]bool, n)
	cut := make([]bool, n*n)
	group := make([]int, n)
	partitioned := false
	var lossUntil []sim.Time // ends of the loss bursts so far
	apartNow := func(a, b int) bool {
		return down[a] || down[b] || cut[a*n+b] || cut[b*n+a] || (partitioned && group[a] != group[b])
	}
	deafNow := func(a, b int) bool { // a cannot hear b
		return down[a] || down[b] || cut[b*n+a] || (partitioned && group[a] != group[b])
	}
	impairedNow := func(t sim.Time, a, b int) bool {
		if apartNow(a, b) {
			return true
		}
		for _, until := range lossUntil {
			if t < until {
				return true
			}
		}
		return false
	}
	open := make([]sim.Time, n*n) // start of the current impaired interval, or -1
	apartOpen := make([]sim.Time, n*n)
	deafOpen := make([]sim.Time, n*n)
	for i := range open {
		open[i], apartOpen[i], deafOpen[i] = -1, -1, -1
	}
	track := func(on bool, open *sim.Time, spans *[]span, t sim.Time) {
		if on && *open < 0 {
			*open = t
		} else if !on && *open >= 0 {
			*spans = append(*spans, span{*open, t})
			*open = -1
		}
	}
	downOpen := make([]sim.Time, n)
	for i := range downOpen {
		downOpen[i] = -1
	}
	settle := func(t sim.Time) {
		for a := 0; a < n; a++ {
			if down[a] && downOpen[a] < 0 {
				downOpen[a] = t
			} else if !down[a] && downOpen[a] >= 0 {
				g.down[a] = append(g.down[a], span{downOpen[a], t})
				downOpen[a] = -1
			}
			for b := a + 1; b < n; b++ {
				p := pairIndex(a, b, n)
				track(impairedNow(t, a, b), &open[p], &g.impaired[p], t)
				track(apartNow(a, b), &apartOpen[p], &g.apart[p], t)
			}
			for b := 0; b < n; b++ {
				if b != a {
					track(deafNow(a, b), &deafOpen[a*n+b], &g.deaf[a*n+b], t)
				}
			}
		}
	}
	evs := plan.Events
	// Loss burst ends are points in time too.
	var ends []sim.Time
	for _, e := range evs {
		if e.Kind == "burst" && e.Loss > 0 {
			ends = append(ends, sim.Time(e.At+e.For))
		}
	}
	slices.Sort(ends)
	i, j := 0, 0
	for i < len(evs) || j < len(ends) {
		var t sim.Time
		if j >= len(ends) || (i < len(evs) && sim.Time(evs[i].At) <= ends[j]) {
			t = sim.Time(evs[i].At)
		} else {
			t = ends[j]
		}
		for ; j < len(ends) && ends[j] == t; j++ {
		}
		for ; i < len(evs) && sim.Time(evs[i].At) == t; i++ {
			e := evs[i]
			switch e.Kind {
			case "crash", "crash-send":
				// A crash-send crashes the node at its first call that sends within
				// [At, At+For] (a device beacons every period, so early): counted down
				// from At, which exempts at most that short while more.
				down[idx(e.Node)] = true
				if e.Kind == "crash-send" {
					g.crashSend[idx(e.Node)] = append(g.crashSend[idx(e.Node)], span{sim.Time(e.At), sim.Time(e.At + e.For)})
				}
			case "restart":
				down[idx(e.Node)] = false
			case "partition":
				partitioned = true
				for k := range group {
					group[k] = len(e.Groups)
				}
				for gi, members := range e.Groups {
					for _, m := range members {
						group[idx(m)] = gi
					}
				}
			case "cut":
				cut[idx(e.From)*n+idx(e.To)] = true
			case "restore":
				cut[idx(e.From)*n+idx(e.To)] = false
			case "heal":
				partitioned = false
				clear(cut)
			case "spike":
				spike = max(spike, time.Duration(e.Extra))
			case "skew":
				g.steps += abs(time.Duration(e.Step))
				if e.DriftPPM != nil {
					ppm = max(ppm, abs(*e.DriftPPM))
				}
			case "burst":
				if e.Loss > 0 {
					lossUntil = append(lossUntil, sim.Time(e.At+e.For))
				}
			}
		}
		settle(t)
	}
	for p := range open {
		track(false, &open[p], &g.impaired[p], never)
		track(false, &apartOpen[p], &g.apart[p], never)
		track(false, &deafOpen[p], &g.deaf[p], never)
	}
	for a, t := range downOpen {
		if t >= 0 {
			g.down[a] = append(g.down[a], span{t, never})
		}
	}
	g.lmax += spike
	g.rho = float64(ppm) / 1e6
	return g
}

func abs[T int64 | time.Duration](x T) T {
	if x < 0 {
		return -x
	}
	return x
}

// pair returns the impaired intervals of a and b.
func (g *ground) pair(a, b sim.NodeID) []span {
	if int(a) >= g.n || int(b) >= g.n || a < 0 || b < 0 || a == b {
		return nil
	}
	return g.impaired[pairIndex(int(a), int(b), g.n)]
}

// partedAt returns when a and b parted for good (the start of the last interval during
// which they could not exchange messages at all, if it never ends).
func (g *ground) partedAt(a, b sim.NodeID) (sim.Time, bool) {
	if int(a) >= g.n || int(b) >= g.n || a < 0 || b < 0 || a == b {
		return 0, false
	}
	sp := g.apart[pairIndex(int(a), int(b), g.n)]
	if len(sp) == 0 || sp[len(sp)-1].to != never {
		return 0, false
	}
	return sp[len(sp)-1].from, true
}

// restartsBy returns how many times node n crashed before t (each crash ends an
// incarnation; the next starts at the restart).
func (g *ground) restartsBy(n sim.NodeID, t sim.Time) int {
	k := 0
	for _, s := range g.down[n] {
		if s.from < t {
			k++
		}
	}
	return k
}

// crashedIn reports whether node n was down at some point of [from, to].
func (g *ground) crashedIn(n sim.NodeID, from, to sim.Time) bool {
	return overlaps(g.down[n], from, to)
}

// stretch bounds the global duration of a local duration d on any clock of the run:
// d/(1-rho).
func (g *ground) stretch(d time.Duration) time.Duration {
	return time.Duration(float64(d) / (1 - g.rho))
}

// skewOf bounds how far two clocks can disagree about a duration d that one measures
// and the other follows: d·2rho/(1-rho).
func (g *ground) skewOf(d time.Duration) time.Duration {
	return time.Duration(float64(d) * 2 * g.rho / (1 - g.rho))
}

// window reports whether [from, to] contains an interval of length d free of every
// interval of ss (a time when the pair was connected for at least d).
func window(ss []span, from, to sim.Time, d time.Duration) bool {
	t := from
	for _, s := range ss { // sorted by start, disjoint
		if s.to <= t {
			continue
		}
		if s.from > to {
			break
		}
		if s.from > t && s.from.Sub(t) >= d && t.Add(d) <= to {
			return true
		}
		t = max(t, s.to)
		if t > to {
			return false
		}
	}
	return t.Add(d) <= to
}

// incarnationEnd returns when node n's incarnation boot (1 for the first start, +1
// per restart, as the runtime counts in stable storage) ended: the boot-th crash.
func (g *ground) incarnationEnd(n sim.NodeID, boot uint32) sim.Time {
	if n < 0 || int(n) >= g.n || boot == 0 {
		return never
	}
	if ds := g.down[n]; int(boot) <= len(ds) {
		return ds[boot-1].from
	}
	return never
}
