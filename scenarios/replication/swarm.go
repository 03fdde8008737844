package rpscen

import (
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/faults"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// The default swarm (replication/swarm): every setting drawn from the seed, within the
// thesis' fault model (crash faults, reliable links). A third of the seeds run a
// workflow (RP-4: transitions between passive groups, tasks calling a passive monitor
// and a worklist, active or passive); the rest a key-value group, passive or active.
// Faults: crashes of a minority of each group at a time (transient or for good; one of
// a group of two, for good), some of them crash-sends in passive groups (the agreement
// stage, §3.6.1: the primary dies while it sends the update, some backups have it and
// some do not), a registry or all of them crashing and restarting empty (§5.4.1), a
// client crashing and resuming its request (§3.6.1: the front end re-sends with the
// same ID), and in some seeds the primary crash-sending at the very step in which it
// executes a client's request.
//
// Crash-sends hit passive groups only: RP-3 assumes a totally ordered, reliable
// multicast (§3.6.2: "uniform agreement"), and the sequencer's step is that multicast
// (doc.go); a crash cutting it short is outside what active replication assumes.
var swarmKind = kind{
	name: "swarm", suite: true, plan: swarmPlan, trig: swarmTriggers,
	help: "drawn from the seed: a third of the seeds a workflow (RP-4: manager → S1 → S2 → manager, tasks calling a passive monitor and a worklist, active or passive, 3 replicas a group), the rest a key-value group (passive or active, 2-5 replicas, 1-3 clients, half with a think time); 1-3 registries, polling or notification, a quarter of the seeds re-sending below a round trip; crashes of a minority of each group at a time (some for good, some crash-sends cutting a passive replica's sends short: the agreement stage), a registry or all of them crashing and restarting empty, a client crashing, and a passive primary crash-sending as it executes a request (the thesis' fault model: crash faults, reliable links)",
}

// kvShape is a key-value deployment drawn by the swarm.
type kvShape struct {
	active, notify                bool
	replicas, registries, clients int
	think, retry                  time.Duration
	notes                         []string
}

// drawKV draws a key-value swarm seed's deployment. -p notify and -p retry, when
// given, override the draws.
func drawKV(seed uint64, p *scenarios.Params) kvShape {
	r := sim.Stream(seed, "rp-swarm")
	sh := kvShape{active: r.Float64() < 0.5, notify: p.Bool("notify"), retry: p.PositiveDuration("retry")}
	sh.replicas, sh.registries, sh.clients = int(r.Int64Range(2, 5)), int(r.Int64Range(1, 3)), int(r.Int64Range(1, 3))
	mode := map[bool]string{false: "passive", true: "active"}[sh.active]
	sh.notes = append(sh.notes, fmt.Sprintf("%s replication, %d replicas, %d registries, %d clients", mode, sh.replicas, sh.registries, sh.clients))
	// Half the seeds' clients pause between calls (10-150 ms), so their requests go on
	// through the crashes (3 s of them) instead of ending in the first half second:
	// failovers then race with requests in flight.
	if t := sim.Stream(seed, "rp-swarm-think"); t.Float64() < 0.5 {
		sh.think = time.Duration(t.Int64Range(int64(10*time.Millisecond), int64(150*time.Millisecond)))
		sh.notes = append(sh.notes, fmt.Sprintf("clients think %v between calls", sh.think))
	}
	sh.notify, sh.retry = drawKnobs(seed, p, &sh.notes)
	return sh
}

// drawKnobs draws polling or notification (RP-1's future work against the thesis'
// own polling) and, for a quarter of the seeds, a client re-send period below a round
// trip (re-sends reach a primary while the request is queued or in progress).
func drawKnobs(seed uint64, p *scenarios.Params, notes *[]string) (bool, time.Duration) {
	x := sim.Stream(seed, "rp-swarm-knobs")
	notify, retry := p.Bool("notify"), p.PositiveDuration("retry")
	set := p.NonDefault()
	if polling := x.Float64() < 0.5; !slices.Contains(set, "notify") {
		notify = !polling
	}
	if fast := x.Float64() < 0.25; fast && !slices.Contains(set, "retry") {
		retry = time.Duration(x.Int64Range(int64(3*time.Millisecond), int64(20*time.Millisecond)))
	}
	if !notify {
		*notes = append(*notes, "polling")
	}
	if retry < 2*maxLink {
		*notes = append(*notes, fmt.Sprintf("re-send every %v", retry))
	}
	return notify, retry
}

// swarmPlan draws a key-value swarm seed's fault plan: crashes of a minority of the
// group at a time, then the registries' and a client's crashes.
func swarmPlan(b *scenarios.Build, d *deployment) (faults.Plan, error) {
	g := kvGroup(d)
	p, err := groupCrashes(b.Seed, "", g, 3*time.Second)
	if err != nil {
		return p, err
	}
	p.Events = append(p.Events, outerCrashes(b.Seed, d, 3*time.Second)...)
	p.Events = append(p.Events, cutOff(b.Seed, d, g)...)
	slices.SortStableFunc(p.Events, func(a, b faults.Event) int { return int(a.At - b.At) })
	return p, nil
}

// cutOff: in a sixth of the passive seeds, outside the thesis' model but within what
// the protocol claims (doc.go: a primary cut off steps down within a lease, and the
// terms fence off what it ran alone), a replica of the group is cut off from the
// registries and the other replicas for one to two leases, its clients staying with
// it, or (half of those) paused as long: every message to and from it held back, so
// that it acts, when it resumes, on a lease it no longer holds — and verify_primary
// (§5.2.4) meets two registered primaries. Drawn from a stream of its own (the other
// draws do not move).
func cutOff(seed uint64, d *deployment, g *group) []faults.Event {
	r := sim.Stream(seed, "rp-swarm-cut")
	if g.active || r.Float64() >= 1.0/6 {
		return nil
	}
	n := g.names[r.IntN(len(g.names))]
	at := faults.Duration(300*time.Millisecond + time.Duration(r.Int64Range(0, int64(1500*time.Millisecond))))
	span := faults.Duration(d.lease + time.Duration(r.Int64Range(0, int64(d.lease))))
	if r.Float64() < 0.5 {
		return []faults.Event{
			{At: at, Kind: "spike", From: n, To: "*", Extra: span, For: span},
			{At: at, Kind: "spike", From: "*", To: n, Extra: span, For: span},
		}
	}
	return []faults.Event{
		{At: at, Kind: "partition", Groups: [][]string{append([]string{n}, clientNames(d)...)}},
		{At: at + span, Kind: "heal"},
	}
}

// groupCrashes draws the crashes of one group's replicas over [200ms, horizon]: up to
// 4 (one of them, maybe, for good), a minority down at a time, some of them
// crash-sends in a passive group.
func groupCrashes(seed uint64, salt string, g *group, horizon time.Duration) (faults.Plan, error) {
	l := faults.DefaultParams(horizon)
	l.Partitions, l.Spikes = 0, 0
	l.Crashes, l.Permanent, l.MaxDown = 4, 1, (len(g.names)-1)/2
	if len(g.names) == 2 {
		// N+1 replicas survive N crashes (§3.6.1): one of two goes for good, and the
		// other carries on alone (a transient crash could take the one up to date
		// down while the other catches up)
		l.Crashes, l.MaxDown = 0, 1
	}
	l.MeanDown = 600 * time.Millisecond
	l.Start = 200 * time.Millisecond
	if !g.active {
		l.CrashSendFrac = 0.6
	}
	if l.MaxDown == 0 {
		return faults.Plan{}, nil
	}
	if salt != "" {
		seed = sim.StreamSeed(seed, "rp-swarm-group-"+salt)
	}
	return faults.Generate(seed, g.names, faults.Swarm(seed, l))
}

// outerCrashes draws the crashes outside the replica groups: half the seeds a registry
// crashes and restarts empty 100-700 ms later (a tenth: every registry at once, so no
// replica may become primary meanwhile, §5.4.1, and a primary whose registration
// lapses steps down), and three in ten a client crashes for 20-400 ms and resumes its
// pending request.
func outerCrashes(seed uint64, d *deployment, horizon time.Duration) []faults.Event {
	var evs []faults.Event
	r := sim.Stream(seed, "registry-crash")
	x := r.Float64()
	if x < 0.5 {
		at := 300*time.Millisecond + time.Duration(r.Int64Range(0, int64(horizon-time.Second)))
		down := time.Duration(r.Int64Range(int64(100*time.Millisecond), int64(700*time.Millisecond)))
		regs := []string{d.regNames[int(r.Int64Range(0, int64(len(d.regNames)-1)))]}
		if x < 0.1 {
			regs = d.regNames
		}
		for _, reg := range regs {
			evs = append(evs, faults.Event{At: faults.Duration(at), Kind: "crash", Node: reg},
				faults.Event{At: faults.Duration(at + down), Kind: "restart", Node: reg})
		}
	}
	c := sim.Stream(seed, "rp-client-crash")
	if c.Float64() < 0.3 && len(d.clients) > 0 {
		n := d.nodes[d.clients[c.IntN(len(d.clients))].node].Name
		at := 200*time.Millisecond + time.Duration(c.Int64Range(0, int64(horizon-time.Second)))
		down := time.Duration(c.Int64Range(int64(20*time.Millisecond), int64(400*time.Millisecond)))
		evs = append(evs, faults.Event{At: faults.Duration(at), Kind: "crash", Node: n},
			faults.Event{At: faults.Duration(at + down), Kind: "restart", Node: n})
	}
	return evs
}

// swarmTriggers: four in ten seeds, at a time drawn from the seed, the primary of a
// passive group crash-sends in its next call within two link delays of a client's
// call — most often the step in which it executes that request: Update, Done and
// (were it to answer early) the response cut short in a seeded order (§3.6.1, the
// agreement stage). It restarts 300-900 ms later. Skipped when it would take down a
// majority of its group with the plan's crashes.
func swarmTriggers(seed uint64, d *deployment) []*trigger {
	r := sim.Stream(seed, "rp-swarm-agreement")
	if r.Float64() >= 0.4 {
		return nil
	}
	var groups []*group
	for _, g := range d.groups {
		if !g.active && len(g.members) >= 3 {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return nil
	}
	g := groups[r.IntN(len(groups))]
	at := sim.Time(300*time.Millisecond + time.Duration(r.Int64Range(0, int64(2200*time.Millisecond))))
	back := time.Duration(r.Int64Range(int64(300*time.Millisecond), int64(900*time.Millisecond)))
	calls := func(o sim.Observation) bool {
		if o.Kind == rp.ObsCall {
			return true
		}
		v, ok := o.Value.(rp.Task)
		return ok && (o.Kind == rp.ObsTransition && d.groupNamed(v.To) == g || o.Kind == rp.ObsSideCall && d.groupNamed(v.To) == g)
	}
	return []*trigger{{at: at, on: calls, restart: back, crashSend: 2 * maxLink, groups: []string{g.name},
		victims: func(k *sim.Kernel, _ *sim.Observation) []sim.NodeID {
			p := d.primary(k, g)
			if p < 0 || d.downDuring(k, g, k.Now(), k.Now().Add(back+2*maxLink)) >= (len(g.members)-1)/2 {
				return nil
			}
			return []sim.NodeID{p}
		}}}
}

// downDuring counts the replicas of g down now or crashed by the plan within [from, to].
func (d *deployment) downDuring(k *sim.Kernel, g *group, from, to sim.Time) int {
	n := 0
	for i, m := range g.members {
		down := !k.Up(m)
		for _, ev := range d.plan.Events {
			if ev.IsCrash() && ev.Node == g.names[i] && sim.Time(ev.At) <= to && d.restartAfter(ev) >= from {
				down = true
			}
		}
		if down {
			n++
		}
	}
	return n
}

// restartAfter returns when the node crashed by ev restarts (the plan's next restart of
// it; far in the future if none).
func (d *deployment) restartAfter(ev faults.Event) sim.Time {
	for _, x := range d.plan.Events {
		if x.Kind == "restart" && x.Node == ev.Node && x.At > ev.At {
			return sim.Time(x.At)
		}
	}
	return sim.Time(1 << 62)
}

// swarmFlow is the workflow of the swarm's workflow seeds: a manager creating
// instances, two task schedulers, and back (RP-4: three transitions between passive
// groups); S1's task logs to a passive monitor, S2's puts the instance on the
// worklist, actively replicated or not.
func swarmFlow(active bool) *rp.Flow {
	return &rp.Flow{Route: []rp.Hop{
		{Group: "manager", Task: "create"},
		{Group: "S1", Task: "S1", Calls: []rp.Target{{Group: "monitor"}}},
		{Group: "S2", Task: "S2", Calls: []rp.Target{{Group: "worklist", Active: active}}},
		{Group: "manager", Task: "complete"},
	}}
}

// flowSwarm builds a workflow seed of the swarm: 1-2 registries, every group of 3
// replicas, 3-8 instances created 150-400 ms apart, each group's crashes drawn on its
// own (a minority at a time), and the registries' and a client's crashes.
func flowSwarm(b *scenarios.Build) (*scenarios.Setup, error) {
	p := b.Params
	period, lease, bound := p.PositiveDuration("period"), p.PositiveDuration("lease"), 6*time.Second
	d, err := deploymentFor(p, period, lease)
	if err != nil {
		return nil, err
	}
	r := sim.Stream(b.Seed, "rp-swarm-flow")
	ng, ni := int(r.Int64Range(1, 2)), int(r.Int64Range(3, 8))
	every := time.Duration(r.Int64Range(int64(150*time.Millisecond), int64(400*time.Millisecond)))
	active := r.Float64() < 0.5
	mode := map[bool]string{false: "passive", true: "active"}[active]
	notes := []string{fmt.Sprintf("workflow manager → S1 → S2 → manager, %d instances every %v, %d registries, a %s worklist", ni, every, ng, mode)}
	notify, retry := drawKnobs(b.Seed, p, &notes)
	d.notify, d.flow = notify, swarmFlow(active)
	for i := 1; i <= ng; i++ {
		d.registry(fmt.Sprintf("r%d", i))
	}
	for _, g := range []string{"manager", "S1", "S2", "monitor", "worklist"} {
		d.replicas(g, g == "worklist" && active, g+"1", g+"2", g+"3")
	}
	flowClients(b, d, ni, every, retry)
	horizon := min(3*time.Second, time.Duration(ni)*every+time.Second)
	plan, err := b.FaultPlan(func() (faults.Plan, error) {
		var plan faults.Plan
		for _, g := range d.groups {
			gp, err := groupCrashes(b.Seed, g.name, g, horizon)
			if err != nil {
				return plan, err
			}
			plan.Events = append(plan.Events, gp.Events...)
		}
		plan.Events = append(plan.Events, outerCrashes(b.Seed, d, horizon)...)
		slices.SortStableFunc(plan.Events, func(a, b faults.Event) int { return int(a.At - b.At) })
		return plan, nil
	})
	if err != nil {
		return nil, err
	}
	d.plan = plan
	e := newEnv(d, plan, period, lease)
	e.trig = swarmTriggers(b.Seed, d)
	s := e.flowSetup(ni, every, bound)
	s.Notes = notes
	return s, nil
}

// swarmIsFlow reports whether a swarm seed runs a workflow (a third of them).
func swarmIsFlow(seed uint64) bool { return sim.Stream(seed, "rp-swarm-shape").Float64() < 1.0/3 }
