package rpscen

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/checker"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/sim"
)

// RP-2 §5.4.1: "If there is no registry in the system, then no replica can become the
// primary. The ping threads will keep replicas alive, and once a registry enters the
// system, all replicas register themselves and then a primary replica is established"
// (and handle_primary_failure, §5.2.3: when the lookups find no replica, "stay alive
// for new lookup to appear"). A passive replica takes the primary role only through a
// claim made on a registry's answer: some registry was up between a link delay before
// the claim (the answer's way) and the takeover (a registry may crash while the
// claimer gathers the others' state).
func (e *env) electedWithRegistry(r *checker.Run) error {
	if len(e.d.regs) == 0 {
		return nil
	}
	cs := e.changes()
	// upIn: some registry was up at an instant of [from, to]
	upIn := func(from, to sim.Time) bool {
		down := map[sim.NodeID]bool{}
		some := func() bool { return slices.ContainsFunc(e.d.regs, func(n sim.NodeID) bool { return !down[n] }) }
		for _, c := range cs {
			if c.at > to {
				break
			}
			if c.at >= from && some() {
				return true // up at from, or since a change in [from, to]
			}
			if c.node >= 0 {
				down[c.node] = c.crash
			}
		}
		return some()
	}
	claims := map[sim.NodeID]sim.Time{}
	checked, exempt := 0, 0
	for _, o := range r.History() {
		if v, ok := o.Value.(rp.Failover); ok && v.Self {
			claims[o.Node] = o.Time
		}
		v, ok := o.Value.(rp.Role)
		if !ok || !v.Primary {
			continue
		}
		if g := e.d.group[o.Node]; g == nil || g.active {
			continue
		}
		at, claimed := claims[o.Node]
		if !claimed {
			return fmt.Errorf("%s became primary at %v without a claim", r.Final[o.Node].Name, o.Time)
		}
		delete(claims, o.Node)
		checked++
		if !upIn(at.Add(-maxLink), o.Time) {
			return fmt.Errorf("%s claimed the primary role at %v and took it at %v while every registry was down", r.Final[o.Node].Name, at, o.Time)
		}
	}
	r.Count(checked, exempt)
	r.Note(fmt.Sprintf("%d elections checked", checked))
	return nil
}

// RP-2 §5.2.3 ("the lookup service may fail, too. Try every lookup registry") and
// §5.4.1 (a registry back from a crash lists only the replicas that renewed since,
// within a renewal period): a replica whose lookups list it alone claims the primary
// role only once they have done so for a renewal period (a third of the lease) and a
// period (rp.Failover.Alone); a claim from a lookup listing others is judged by the
// at-most-once and no-lost-ack properties.
func (e *env) aloneClaims(r *checker.Run) error {
	wait := e.lease/3 + e.period
	checked, others := 0, 0
	for _, o := range r.History() {
		v, ok := o.Value.(rp.Failover)
		if !ok || !v.Self {
			continue
		}
		if v.Listed != 1 {
			others++
			continue
		}
		checked++
		if v.Alone < wait {
			return fmt.Errorf("%s claimed the primary role alone at %v after its lookups had listed it alone for %v, less than a renewal period and a period (%v)", r.Final[o.Node].Name, o.Time, v.Alone, wait)
		}
	}
	r.Count(checked, others)
	r.Note(fmt.Sprintf("%d claims alone checked, %d exempt (the lookup listed others)", checked, others))
	return nil
}
