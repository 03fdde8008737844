package rpscen

import (
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/checker"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/sim"
)

// RP-2 §5.2.2, the ping thread: "Every 5 periods, a verification is performed to
// verify that there is one and only one primary in the group" (and §5.4.2: "a
// verification periodically, e.g. every 5 ping periods ... the conflict is solved
// within 5 ping periods"); when the ping fails, handle_primary_failure looks the group
// up at once. So every passive replica that is up looks its group up in the
// registries at least every 5 ping periods — the primary too, whose ping thread runs
// like the others' (§5.3.4: "Its algorithm is exactly the same as the verify_primary
// of the replica manager class"). Without notifications (-p notify=false) nobody
// tells a primary that its backups changed, and it polls every period (doc.go, "a
// replica subscribes to membership events ...; without it the primary polls the
// registries every period"): while it holds the role, a period at most passes
// between its lookups (or from its taking the role to its first). Ticks are timers
// of exactly one period, so the bounds are exact, except that a gap in which the
// replica's role changed may last a sixth period: the tick that ends a claim takes
// the role instead of looking up (handle_primary_failure's last step, "register impl
// as primary"), and the counter of periods runs on. A replica whose clock the plan
// skews or pauses (outside the thesis' model) is exempt.
func (e *env) lookupCadence(r *checker.Run) error {
	period := sim.Time(e.period)
	exempt := map[sim.NodeID]bool{}
	for _, ev := range e.plan.Events {
		if n, ok := e.d.byName(ev.Node); ok && ev.Kind != "crash" && ev.Kind != "restart" && ev.Kind != "spike" {
			exempt[n] = true
		}
	}
	type node struct {
		last, since sim.Time // last lookup (-1: none yet), last role change
		up, primary bool
	}
	ns := map[sim.NodeID]*node{}
	var members []sim.NodeID
	skewed := 0
	for _, g := range e.d.groups {
		if g.active {
			continue
		}
		for _, m := range g.members {
			if exempt[m] {
				skewed++
				continue
			}
			ns[m] = &node{last: -1, up: true}
			members = append(members, m)
		}
	}
	slices.Sort(members)
	gaps, worst := 0, time.Duration(0)
	var fail error
	// due checks node m at instant t: no lookup for 5 periods, or a polling primary
	// for a period.
	due := func(m sim.NodeID, t sim.Time) {
		s := ns[m]
		if fail != nil || !s.up || s.last < 0 {
			return
		}
		worst = max(worst, t.Sub(s.last))
		limit, why := 5*period, "5 ping periods"
		if s.since > s.last {
			// A claim's last period ends in taking the role (§5.2.3 step 41) rather
			// than in a lookup; the verification counter runs on from there.
			limit, why = 6*period, "5 ping periods and the one in which its role changed"
		}
		if t-s.last > limit {
			fail = fmt.Errorf("%s looked its group up at %v and not again by %v: more than %s (%v) without a verification", r.Final[m].Name, s.last, t, why, time.Duration(limit))
			return
		}
		if !e.d.notify && !e.d.thesis && s.primary && t-max(s.last, s.since) > period { // the thesis' primary learns its backups from their pings
			fail = fmt.Errorf("%s, primary since %v and polling (notify=false), looked its group up at %v and not again by %v: more than a period (%v)", r.Final[m].Name, s.since, s.last, t, e.period)
		}
	}
	cs := e.changes()
	ci := 0
	apply := func(upTo sim.Time, incl bool) {
		for ; ci < len(cs) && (cs[ci].at < upTo || incl && cs[ci].at == upTo); ci++ {
			c := cs[ci]
			s := ns[c.node]
			if c.node < 0 || s == nil {
				continue
			}
			if c.crash {
				due(c.node, c.at)
				s.up, s.primary, s.last = false, false, -1
			} else {
				s.up = true
			}
		}
	}
	for _, o := range r.History() {
		s := ns[o.Node]
		if s == nil {
			continue
		}
		switch v := o.Value.(type) {
		case rp.Looked:
			apply(o.Time, false)
			due(o.Node, o.Time)
			if s.last >= 0 {
				gaps++
			}
			s.last = o.Time
		case rp.Role:
			apply(o.Time, false)
			due(o.Node, o.Time)
			s.primary = v.Primary
			s.since = o.Time
		}
		if fail != nil {
			return fail
		}
	}
	apply(r.Time, true)
	for _, m := range members {
		due(m, r.Time)
	}
	if fail != nil {
		return fail
	}
	r.Note(fmt.Sprintf("%d gaps between lookups checked over %d replicas (longest %v; bound 5 periods, a period for a polling primary), %d replicas exempt (clock skewed or paused)", gaps, len(members), worst, skewed))
	return nil
}

// refusedLooksAgain checks RP-2, §5.3.3 (the replica locator): an invocation that fails
// calls handle_failure, which looks the group up in the registries again, and then
// invokes again. A passive call whose request a replica answers "not primary" (it
// was listed, but is not or no longer the primary) looks its group up in the same
// step, the first time; a second refusal of the same call waits for its re-send
// timer (caller.go, Relooked: a primary just stepping down stays listed for a while),
// so only first refusals are checked. Active calls multicast and take the first
// reply: a refusal is not a failure there.
func refusedLooksAgain(r *checker.Run) error {
	type key struct {
		node sim.NodeID
		id   string
	}
	seen := map[key]bool{}
	h := r.History()
	checked, later := 0, 0
	for i, o := range h {
		v, ok := o.Value.(rp.CallEvent)
		if !ok || o.Kind != rp.ObsRefused || v.Active {
			continue
		}
		k := key{o.Node, v.ID}
		if seen[k] {
			later++
			continue
		}
		seen[k] = true
		checked++
		looked := false
		for _, p := range h[i+1:] {
			if p.Time != o.Time {
				break
			}
			if w, ok := p.Value.(rp.CallEvent); ok && p.Node == o.Node && p.Kind == rp.ObsRelook && w.ID == v.ID {
				looked = true
				break
			}
		}
		if !looked {
			return fmt.Errorf("%s's call %s to group %s was answered \"not primary\" at %v and did not look the group up again", r.Final[o.Node].Name, v.ID, v.Group, o.Time)
		}
	}
	r.Note(fmt.Sprintf("%d first refusals of a call checked (%d later ones wait for the re-send)", checked, later))
	return nil
}
