package rpscen

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/checker"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/sim"
)

// RP-P2: per group, every interval during which two replicas both held the primary
// (sequencer) role is measured and reported; none lasts longer than 5 ping periods and
// a lease, and after stabilization (the faults settled, plus the same) there is none.
// A crash ends a replica's role.
func (e *env) singlePrimary(r *checker.Run) error {
	type span struct {
		node     int
		from, to sim.Time
	}
	endAt := func(node int, from, to sim.Time) sim.Time {
		for _, c := range e.moves {
			if c.node == sim.NodeID(node) && c.crash && c.at >= from && c.at < to {
				return c.at
			}
		}
		return to
	}
	open := map[int]sim.Time{}
	spans := map[string][]span{}
	for _, o := range r.History() {
		v, ok := o.Value.(rp.Role)
		if !ok {
			continue
		}
		n := int(o.Node)
		g := e.groupName(o.Node)
		if from, was := open[n]; was {
			spans[g] = append(spans[g], span{n, from, endAt(n, from, o.Time)})
			delete(open, n)
		}
		if v.Primary {
			open[n] = o.Time
		}
	}
	still := make([]int, 0, len(open))
	for n := range open {
		still = append(still, n)
	}
	slices.Sort(still) // map order must not reach the report
	for _, n := range still {
		g := e.groupName(sim.NodeID(n))
		spans[g] = append(spans[g], span{n, open[n], endAt(n, open[n], r.Time)})
	}
	settled := r.Settled
	for _, t := range e.trig {
		if t.fired {
			settled = max(settled, t.firedAt.Add(t.restart))
		}
	}
	stable := settled.Add(5*e.period + e.lease)
	var worst time.Duration
	windows, terms := 0, 0
	for _, g := range sortedKeys(spans) {
		ss := spans[g]
		terms += len(ss)
		slices.SortFunc(ss, func(a, b span) int { return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.node, b.node)) })
		for i, a := range ss {
			for _, b := range ss[i+1:] {
				lo, hi := max(a.from, b.from), min(a.to, b.to)
				if a.node == b.node || lo >= hi {
					continue
				}
				windows++
				worst = max(worst, hi.Sub(lo))
				if hi > stable {
					return fmt.Errorf("%s: %s and %s were both primary from %v to %v, after stabilization at %v", g, r.Final[a.node].Name, r.Final[b.node].Name, lo, hi, stable)
				}
				// verify_primary resolves a race within 5 periods (§5.2.4); a primary
				// cut off from the registries steps down within a lease: no dual
				// window lasts longer than both.
				if limit := 5*e.period + e.lease; hi.Sub(lo) > limit {
					return fmt.Errorf("%s: %s and %s were both primary for %v (from %v), longer than 5 ping periods and a lease (%v)", g, r.Final[a.node].Name, r.Final[b.node].Name, hi.Sub(lo), lo, limit)
				}
			}
		}
	}
	r.Count(terms, 0)
	r.Note(fmt.Sprintf("%d primary terms checked, %d dual-primary windows (longest %v)", terms, windows, worst))
	return nil
}
