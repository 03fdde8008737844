package rpscen

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// maxLink is the longest link delay of the scenarios' network.
const maxLink = 8 * time.Millisecond

// env holds what the properties need.
type env struct {
	d             *deployment
	plan          faults.Plan
	period, lease time.Duration
	trig          []*trigger
	// moves are the crashes and restarts of the run's nodes as they happened (watch
	// reads them off the kernel after every event: a crash-send's instant, or a
	// trigger's, is known only then); up is each node's state after the last event.
	moves []change
	up    []bool
}

func newEnv(d *deployment, plan faults.Plan, period, lease time.Duration) *env {
	return &env{d: d, plan: plan, period: period, lease: lease}
}

// watch records the nodes that crashed or restarted in the event just processed.
func (e *env) watch(k *sim.Kernel) {
	if e.up == nil {
		e.up = make([]bool, len(e.d.nodes))
		for i := range e.up {
			e.up[i] = true
		}
	}
	for i, was := range e.up {
		if now := k.Up(sim.NodeID(i)); now != was {
			e.up[i] = now
			e.moves = append(e.moves, change{k.Now(), sim.NodeID(i), !now})
		}
	}
}

// crashedIn reports whether node n crashed at an instant in [from, to].
func (e *env) crashedIn(n sim.NodeID, from, to sim.Time) bool {
	return slices.ContainsFunc(e.moves, func(c change) bool { return c.node == n && c.crash && c.at >= from && c.at <= to })
}

// otherIn reports whether a fault other than a crash or restart (a partition or cut
// until its heal, a delay until its messages arrive, a clock skew from then on) was on
// at some instant of [from, to].
func (e *env) otherIn(from, to sim.Time) bool {
	evs := e.plan.Events
	for i, ev := range evs {
		if ev.IsCrash() || ev.Kind == "restart" || ev.Kind == "heal" || ev.Kind == "restore" {
			continue
		}
		start, end := sim.Time(ev.At), sim.Time(1<<62)
		switch ev.Kind {
		case "spike", "burst":
			end = sim.Time(ev.At + ev.For + ev.Extra)
		case "partition", "cut":
			for _, x := range evs[i+1:] {
				if x.Kind == "heal" || x.Kind == "restore" && x.From == ev.From && x.To == ev.To {
					end = sim.Time(x.At)
					break
				}
			}
		}
		if start <= to && end >= from {
			return true
		}
	}
	return slices.ContainsFunc(e.trig, func(t *trigger) bool {
		return len(t.slowed) > 0 && t.firedAt <= to && t.firedAt.Add(t.slow.extra+t.slow.span) >= from
	})
}

// downIn reports whether node n was down at some instant of [from, to].
func (e *env) downIn(n sim.NodeID, from, to sim.Time) bool {
	down := false
	for _, c := range e.moves {
		if c.at > to {
			break
		}
		if c.node != n {
			continue
		}
		if c.at >= from && c.crash {
			return true
		}
		if c.at < from {
			down = c.crash
		}
	}
	return down
}

// setup returns the scenario setup with the properties every run checks.
func (e *env) setup(bound time.Duration, until sim.Time) *scenarios.Setup {
	props := []checker.Property{
		{Name: "RP-P1 at most once", Class: checker.Safety, Check: e.atMostOnce},
	}
	if slices.ContainsFunc(e.d.groups, func(g *group) bool { return g.active }) {
		props = append(props, checker.Property{Name: "RP-3 one total order", Class: checker.Safety, Check: e.totalOrder},
			checker.Property{Name: "RP-3 a replica delivering an epoch's orders joined it", Class: checker.Safety, NeedsCompleteRun: true, Check: e.joinedEpoch})
	}
	props = append(props,
		checker.Property{Name: "RP-P2 single primary", Class: checker.Safety, NeedsCompleteRun: true, Check: e.singlePrimary},
		checker.Property{Name: "RP-2 no primary elected without a registry", Class: checker.Safety, Check: e.electedWithRegistry},
		checker.Property{Name: "RP-2 a replica verifies every 5 periods", Class: checker.Safety, NeedsCompleteRun: true, Check: e.lookupCadence},
		checker.Property{Name: "RP-2 a call refused by a non-primary looks again", Class: checker.Safety, Check: refusedLooksAgain},
		checker.Property{Name: "RP-1 a replica keeps its registration ID", Class: checker.Safety, Check: e.idsKept},
		checker.Property{Name: "RP-2 §5.2.3 no claim alone before a renewal period", Class: checker.Safety, Check: e.aloneClaims},
		checker.Property{Name: "RP-2 §3.6.1 a backup acknowledges only what it holds", Class: checker.Safety, Check: acksHeld},
		checker.Property{Name: "RP-2 §3.6.1 answered after it ran and its backups acknowledged", Class: checker.Safety, Check: e.answeredAfterAcks},
		e.linearizable(),
		checker.Property{Name: "RP-P4 no acknowledged request lost", Class: checker.Safety, NeedsCompleteRun: true, Check: e.noLostAck},
		checker.Property{Name: "RP-P4 backups equal the primary", Class: checker.Safety, NeedsCompleteRun: true, Check: e.backupsEqual},
		checker.Property{Name: "RP-2/RP-3 failover within a lease and 3 periods", Class: checker.Liveness, NeedsCompleteRun: true, Check: e.failover},
		scenarios.Bounded("RP-P1 every operation returns", bound, e.items),
	)
	if len(e.plan.Events) == 0 && len(e.trig) == 0 && e.d.flow == nil {
		// the key-value deployments (a workflow's latency is its route's, not a
		// request's)
		props = append(props, checker.Property{Name: "RP-2/RP-3 latency without faults", Class: checker.Liveness, NeedsCompleteRun: true, Check: e.latency})
	}
	s := &scenarios.Setup{
		Nodes: e.d.nodes, Network: sim.Network{Latency: sim.Uniform(time.Millisecond, maxLink)}, Faults: e.plan,
		Until: until, MaxTime: until + sim.Time(time.Second), Properties: props,
	}
	s.Stop = e.triggers()
	if slices.ContainsFunc(e.trig, func(t *trigger) bool { return t.label != "" }) {
		s.Summary = e.table
	}
	return s
}

func (e *env) groupName(n sim.NodeID) string {
	if g := e.d.group[n]; g != nil {
		return g.name
	}
	return "?"
}

// expectedNote says how many violations a property met where the run left the
// thesis' model (a replica paused or cut off past its lease: it acts on a lease it no
// longer holds, and its registrations lapse while it runs), and that it passes them.
func expectedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d expected violations passed: outside the thesis' model, a replica paused or cut off past its lease while they ran", n)
}

// change is a fault at an instant: a crash or restart of a node (-1: another kind of
// fault, or a node outside the deployment).
type change struct {
	at    sim.Time
	node  sim.NodeID
	crash bool
}

// changes returns the run's faults in time order: every crash and restart as it
// happened (watch), and the plan's and the fired triggers' other faults (node -1).
func (e *env) changes() []change {
	var cs []change
	for _, ev := range e.plan.Events {
		if !ev.IsCrash() && ev.Kind != "restart" {
			cs = append(cs, change{sim.Time(ev.At), -1, false})
			if ev.Kind == "spike" {
				// a delay lasts: its messages arrive until its end
				cs = append(cs, change{sim.Time(ev.At + ev.For + ev.Extra), -1, false})
			}
		}
	}
	for _, t := range e.trig {
		if len(t.slowed) > 0 {
			cs = append(cs, change{t.firedAt, -1, false}) // a delay: another kind of fault
		}
	}
	cs = append(cs, e.moves...)
	slices.SortStableFunc(cs, func(a, b change) int { return cmp.Compare(a.at, b.at) })
	return cs
}
