package rpscen

import (
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/checker"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/sim"
)

// failoverBound is how long a group may go without a primary after its primary
// crashed, when nothing else changes meanwhile: the crashed replica's last renewal may
// still be on its way (a link delay), so the registries drop its registration within
// a lease and a link delay of the crash, at their next expiry scan (every 10 ms); a
// backup hears of it at once (notification) or within two ping periods (polling:
// the ping that goes unanswered, then the lookup), and then three round trips run in
// series — the lookup or the notice, its answer, the state gathered from the others —
// with a period for a replica that does not answer (RP-2 §5.2.3; the sequencer's view
// change, RP-3, the same).
func (e *env) failoverBound() time.Duration {
	return e.lease + maxLink + 10*time.Millisecond + 3*e.period + 3*2*maxLink
}

// RP-2 §5.2.3 and RP-3: after a primary (sequencer) crashes, a replica of its group
// holds the role within failoverBound of the last crash in its group. Judged when
// nothing else happens meanwhile except more crashes of the group's replicas (each
// extends the bound: a replica that crashes during the claim is waited for until the
// registries drop it; so is the crashed primary if it restarts, registers again and
// crashes again) and the crashed one's restart (a takeover by it counts too),
// with a registry and another replica of the group up throughout, and the run
// lasting the bound; the rest are counted as exempt. A passive replica left alone
// (one of two) waits a renewal period and a period more before it claims. (The scenarios refuse a ping
// period under a round trip, for which the bound does not hold: checkPeriod.)
func (e *env) failover(r *checker.Run) error {
	bound := e.failoverBound()
	faultsAt := e.changes()
	type role struct {
		at      sim.Time
		node    sim.NodeID
		primary bool
	}
	var roles []role
	for _, o := range r.History() {
		if v, ok := o.Value.(rp.Role); ok {
			roles = append(roles, role{o.Time, o.Node, v.Primary})
		}
	}
	// primaryAt: n holds the role at instant at (a crash ends it).
	primaryAt := func(n sim.NodeID, at sim.Time) bool {
		p := false
		var since sim.Time
		for _, c := range roles {
			if c.at > at {
				break
			}
			if c.node == n {
				p, since = c.primary, c.at
			}
		}
		for _, c := range faultsAt {
			if c.node == n && c.crash && c.at >= since && c.at <= at {
				p = false
			}
		}
		return p
	}
	downAt := func(at sim.Time) map[sim.NodeID]bool {
		d := map[sim.NodeID]bool{}
		for _, c := range faultsAt {
			if c.at > at {
				break
			}
			if c.node >= 0 {
				d[c.node] = c.crash
			}
		}
		return d
	}
	checked, exempt := 0, 0
	var worst time.Duration
	for k, c := range faultsAt {
		g := e.d.group[c.node]
		if !c.crash || g == nil || !primaryAt(c.node, c.at-1) {
			continue
		}
		if slices.ContainsFunc(g.members, func(m sim.NodeID) bool { return m != c.node && primaryAt(m, c.at) }) {
			exempt++ // another primary was there already (a dual window, RP-P2's)
			continue
		}
		// The window: more crashes of the group's replicas extend it; anything else
		// within it exempts the failover.
		// A passive replica left alone waits a renewal period and a period before it
		// claims (§5.2.3, doc.go), and looks again each period meanwhile.
		b := bound
		if !g.active && len(slices.DeleteFunc(slices.Clone(g.members), func(m sim.NodeID) bool { return m == c.node || downAt(c.at)[m] })) == 1 {
			b += e.lease/3 + 2*e.period
		}
		last, quiet := c.at, true // the group's last crash
		for _, x := range faultsAt[k+1:] {
			if x.at > last.Add(b) {
				break
			}
			if x.node == c.node && !x.crash {
				continue // its own restart: a takeover by it counts as well
			}
			// A crash of the group's replicas, the crashed primary's own included:
			// restarted, it registered again, and a claim waits for it too.
			if !x.crash || e.d.group[x.node] != g {
				quiet = false
				break
			}
			last = x.at
		}
		end := last.Add(b)
		if e.otherIn(c.at, end) {
			quiet = false
		}
		down := downAt(end)
		regsUp := slices.ContainsFunc(e.d.regs, func(n sim.NodeID) bool { return !down[n] })
		other := slices.ContainsFunc(g.members, func(m sim.NodeID) bool { return m != c.node && !down[m] })
		if !quiet || !regsUp || !other || r.Time < end {
			exempt++
			continue
		}
		checked++
		i := slices.IndexFunc(roles, func(x role) bool { return x.at > c.at && x.primary && e.d.group[x.node] == g })
		if i < 0 || roles[i].at > end {
			return fmt.Errorf("%s: primary %s crashed at %v and no other replica took over by %v (%v after the group's last crash: a lease, 3 periods and round trips, and a renewal period and 2 periods for one left alone)", g.name, r.Final[c.node].Name, c.at, end, b)
		}
		worst = max(worst, roles[i].at.Sub(last))
	}
	r.Note(fmt.Sprintf("%d failovers checked (the longest %v after the group's last crash; bound %v), %d exempt (other faults meanwhile, every registry or every other replica down, another primary already, or the run ending)", checked, worst, bound, exempt))
	return nil
}
