// Package rpscen holds the replication scenarios (protocols/replication): replica
// groups (passive and active) with lookup registries serving clients, the SimpleFlow
// workflow over replicated components, the §4.5 failure cases, the chapter-6
// experiment, and the properties every run checks.
//
// The properties: props.go lists them (env.setup) beside what they read of a run (the
// crashes as they happened, the plan's other faults); each rule's checks are in a file
// of their own: props_p1_once.go (RP-P1 at most once, every operation returns),
// props_p2_single_primary.go (RP-P2), props_p3_linearizable.go (RP-P3),
// props_p4_state.go (RP-P4), props_rp1_ids.go (RP-1 registration IDs),
// props_rp2_election.go (RP-2 no election without a registry, no claim alone),
// props_rp2_lookups.go (RP-2 lookup cadence, a refused call looks again),
// props_rp2_acks.go (RP-2 §3.6.1 acknowledgements), props_rp3_order.go (RP-3 total
// order, epochs), props_failover.go (RP-2/RP-3 failover bound) and props_latency.go
// (RP-2/RP-3 latency without faults).
package rpscen

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/faults"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

var params = []scenarios.Param{
	{Name: "replicas", Default: "3", Help: "replicas in the group"},
	{Name: "registries", Default: "2", Help: "lookup registries"},
	{Name: "clients", Default: "2", Help: "clients"},
	{Name: "ops", Default: "20", Help: "operations per client"},
	{Name: "mode", Default: "passive", Help: "passive (primary-backup, RP-2) or active (sequencer, RP-3)"},
	{Name: "period", Default: "50ms", Help: "ping period (§5.2.2)"},
	{Name: "lease", Default: "300ms", Help: "registration lease (renewed every third)"},
	{Name: "notify", Default: "true", Help: "replicas subscribe to the registries' membership events (false: they poll, the primary every period)"},
	{Name: "retry", Default: "150ms", Help: "client re-send period"},
	{Name: "bound", Default: "5s", Help: "every operation returns within this after the faults settle"},
	{Name: "bug", Default: "none", Help: "plant a bug: none, no-dup, ack-early, no-stepdown, no-resume, no-retry"},
}

var flowParams = []scenarios.Param{
	{Name: "instances", Default: "6", Help: "SimpleFlow instances the user creates"},
	{Name: "every", Default: "300ms", Help: "time between two instances"},
	{Name: "replicas", Default: "3", Help: "replicas of each task scheduler group"},
	{Name: "period", Default: "50ms", Help: "ping period (§5.2.2)"},
	{Name: "lease", Default: "300ms", Help: "registration lease (renewed every third)"},
	{Name: "retry", Default: "150ms", Help: "client re-send period"},
	{Name: "bound", Default: "6s", Help: "every instance completes within this after it was created (and the faults settled)"},
	{Name: "bug", Default: "none", Help: "plant a bug: none, no-dup, ack-early, no-stepdown, no-resume, no-retry"},
}

// kind is one scenario.
type kind struct {
	name, help string
	suite      bool
	// plan draws the fault plan; trig adds triggered crashes.
	plan func(b *scenarios.Build, d *deployment) (faults.Plan, error)
	trig func(seed uint64, d *deployment) []*trigger
	// think is the clients' pause between calls (0: none).
	think time.Duration
}

func noFaults(*scenarios.Build, *deployment) (faults.Plan, error) { return faults.Plan{}, nil }

func names(d *deployment, ids []sim.NodeID) []string {
	var out []string
	for _, n := range ids {
		out = append(out, d.nodes[n].Name)
	}
	return out
}

// kvGroup is the replicated service of the key-value scenarios.
func kvGroup(d *deployment) *group { return d.groupNamed("worklist") }

var kinds = []kind{
	{name: "basic", help: "a group of 3 replicas, 2 registries and 2 clients, no faults: the first replica to find no primary with the minimum ID becomes primary (-p mode=active: a sequencer orders the requests)", suite: true, plan: noFaults},
	{name: "crashes", help: "each replica crashes in turn and restarts (the primary among them): failover by minimum registration ID, duplicate table and backups carry every acknowledged request", suite: true,
		plan: func(b *scenarios.Build, d *deployment) (faults.Plan, error) {
			var p faults.Plan
			for i, n := range kvGroup(d).names {
				at := 300*time.Millisecond + time.Duration(i)*900*time.Millisecond
				p.Events = append(p.Events, faults.Event{At: faults.Duration(at), Kind: "crash", Node: n}, faults.Event{At: faults.Duration(at + 500*time.Millisecond), Kind: "restart", Node: n})
			}
			slices.SortStableFunc(p.Events, func(a, b faults.Event) int { return int(a.At - b.At) })
			return p, nil
		}},
	{name: "primary-crash", help: "the primary crashes while it executes a request (its 5th: the Done is on its way to the backups) and restarts 800ms later: the request completes once, through the new primary", suite: true, plan: noFaults,
		trig: func(_ uint64, d *deployment) []*trigger {
			n := 0
			return []*trigger{{label: "-", what: "the primary, during a request", groups: []string{"worklist"}, restart: 800 * time.Millisecond,
				on: func(o sim.Observation) bool {
					if o.Kind == rp.ObsExec || o.Kind == rp.ObsOrder {
						n++
					}
					return n == 5
				},
				victims: func(k *sim.Kernel, o *sim.Observation) []sim.NodeID { return []sim.NodeID{o.Node} }}}
		}},
	{name: "backup-return", help: "a backup crashes at 600ms and returns at 1.4s: it catches up (state transfer) and equals the primary at the end", suite: true, plan: noFaults,
		trig: func(_ uint64, d *deployment) []*trigger {
			return []*trigger{{label: "-", what: "a backup", at: sim.Time(600 * time.Millisecond), restart: 800 * time.Millisecond, groups: []string{"worklist"},
				victims: func(k *sim.Kernel, _ *sim.Observation) []sim.NodeID {
					g := kvGroup(d)
					p := d.primary(k, g)
					for _, n := range g.members {
						if n != p {
							return []sim.NodeID{n}
						}
					}
					return nil
				}}}
		}},
	{name: "registry-crash", help: "a lookup registry crashes for good: the replicas go on through the other", suite: true,
		plan: func(b *scenarios.Build, d *deployment) (faults.Plan, error) {
			return faults.Plan{Events: []faults.Event{{At: faults.Duration(200 * time.Millisecond), Kind: "crash", Node: d.regNames[0]}}}, nil
		}},
	{name: "active-sequencer-crash", help: "active replication (RP-3): the sequencer crashes at 800ms and restarts 700ms later, and the new one at 2.5s: each time the next minimum ID gathers the order and takes over (a new epoch); the clients pause 150ms between calls, so requests race each view change", suite: true, plan: noFaults, think: 150 * time.Millisecond,
		trig: func(_ uint64, d *deployment) []*trigger {
			seq := func(k *sim.Kernel, _ *sim.Observation) []sim.NodeID { return []sim.NodeID{d.primary(k, kvGroup(d))} }
			return []*trigger{
				{label: "-", what: "the sequencer", at: sim.Time(800 * time.Millisecond), restart: 700 * time.Millisecond, groups: []string{"worklist"}, victims: seq},
				{label: "-", what: "the sequencer", at: sim.Time(2500 * time.Millisecond), restart: 700 * time.Millisecond, groups: []string{"worklist"}, victims: seq},
			}
		}},
	{name: "active-follower-return", help: "active replication (RP-3), 5 replicas: a follower that is not next in line crashes, then the sequencer for good, and the follower returns after the view change (times drawn from the seed): it catches up from the new sequencer and joins its epoch while the clients go on calling", suite: true, plan: noFaults, think: 100 * time.Millisecond,
		trig: func(seed uint64, d *deployment) []*trigger {
			r := sim.Stream(seed, "rp-follower-return")
			t0 := 500*time.Millisecond + time.Duration(r.Int64Range(0, int64(200*time.Millisecond)))
			t1 := t0 + time.Duration(r.Int64Range(int64(50*time.Millisecond), int64(300*time.Millisecond)))
			back := t1 - t0 + d.lease + time.Duration(r.Int64Range(int64(200*time.Millisecond), int64(800*time.Millisecond)))
			g := kvGroup(d)
			// last: the up follower with the greatest registration ID (never the next
			// sequencer)
			last := func(k *sim.Kernel, _ *sim.Observation) []sim.NodeID {
				best := sim.NodeID(-1)
				var hi rp.RegID
				for _, n := range g.members {
					if a, ok := unwrap(k.NodeState(n)).(*rp.ActiveReplica); ok && k.Up(n) && !a.S.IsSeq && (best < 0 || hi.Less(a.S.ID)) {
						best, hi = n, a.S.ID
					}
				}
				return []sim.NodeID{best}
			}
			return []*trigger{
				{label: "-", what: "a follower", at: sim.Time(t0), restart: back, groups: []string{"worklist"}, victims: last},
				{label: "-", what: "the sequencer", at: sim.Time(t1), groups: []string{"worklist"},
					victims: func(k *sim.Kernel, _ *sim.Observation) []sim.NodeID { return []sim.NodeID{d.primary(k, g)} }},
			}
		}},
	{name: "minority-crash", help: "two of five replicas crash for good: the primary (or sequencer), then a replica the one taking over is waiting for, while the clients call (1 or 2 registries, passive or active, drawn from the seed in place of -p replicas, registries and mode): it must stop waiting once the registries drop the crashed one", suite: true, plan: noFaults,
		trig: func(seed uint64, d *deployment) []*trigger {
			r := sim.Stream(seed, "rp-minority")
			t0 := 700*time.Millisecond + time.Duration(r.Int64Range(0, int64(500*time.Millisecond)))
			t1 := t0 + time.Duration(r.Int64Range(int64(time.Millisecond), int64(d.lease+2*d.period)))
			g := kvGroup(d)
			// other: an up replica of the group other than the one taking over (-1:
			// the one with the least registration ID, the next sequencer)
			other := func(k *sim.Kernel, taking sim.NodeID) []sim.NodeID {
				if taking < 0 {
					var low rp.RegID
					for _, n := range g.members {
						if a, ok := unwrap(k.NodeState(n)).(*rp.ActiveReplica); ok && k.Up(n) && (taking < 0 || a.S.ID.Less(low)) {
							taking, low = n, a.S.ID
						}
					}
				}
				for _, n := range g.members {
					if n != taking && k.Up(n) {
						return []sim.NodeID{n}
					}
				}
				return nil
			}
			second := &trigger{label: "-", what: "a replica the claimer waits for", groups: []string{"worklist"}}
			if g.active {
				// a replica crashing around the view change (a time drawn within a
				// lease and two periods of the sequencer's crash)
				second.at = sim.Time(t1)
				second.victims = func(k *sim.Kernel, _ *sim.Observation) []sim.NodeID { return other(k, -1) }
			} else {
				// §5.2.3: a backup found no primary and claims the role: one of the
				// replicas it asked for their state crashes before answering
				second.at = sim.Time(t0)
				second.on = func(o sim.Observation) bool {
					v, ok := o.Value.(rp.Failover)
					return ok && v.Self
				}
				second.victims = func(k *sim.Kernel, o *sim.Observation) []sim.NodeID { return other(k, o.Node) }
			}
			return []*trigger{
				{label: "-", what: "the primary", at: sim.Time(t0), groups: []string{"worklist"},
					victims: func(k *sim.Kernel, _ *sim.Observation) []sim.NodeID { return []sim.NodeID{d.primary(k, g)} }},
				second,
			}
		}},
	// RP-1 and RP-2 §5.4.1: the registries are volatile and may all be down; while
	// none is up no replica becomes primary (checked on every run), and the views they
	// give while the renewals refill them differ.
	{name: "registry-restart", help: "passive, five replicas, 1 or 2 registries (drawn from the seed): the primary crashes for good, and as a backup claims the role (§5.2.3) a replica it waits for crashes for good, and every registry crashes and restarts empty one to three periods later (times drawn from the seed): no replica may become primary while no registry is up (§5.4.1), and the registries stay cold (answer no lookup) for a lease while the renewals refill them; the clients pause 100ms between calls, so requests race the failover", suite: true, plan: noFaults, think: 100 * time.Millisecond,
		trig: func(seed uint64, d *deployment) []*trigger {
			r := sim.Stream(seed, "rp-registry-restart")
			t0 := 700*time.Millisecond + time.Duration(r.Int64Range(0, int64(500*time.Millisecond)))
			down := d.period + time.Duration(r.Int64Range(0, int64(2*d.period)))
			g := kvGroup(d)
			claim := func(o sim.Observation) bool {
				v, ok := o.Value.(rp.Failover)
				return ok && v.Self
			}
			return []*trigger{
				{label: "-", what: "the primary", at: sim.Time(t0), groups: []string{"worklist"},
					victims: func(k *sim.Kernel, _ *sim.Observation) []sim.NodeID { return []sim.NodeID{d.primary(k, g)} }},
				{label: "-", what: "a replica the claimer waits for", at: sim.Time(t0), groups: []string{"worklist"}, on: claim,
					victims: func(k *sim.Kernel, o *sim.Observation) []sim.NodeID {
						for _, n := range g.members {
							if n != o.Node && k.Up(n) {
								return []sim.NodeID{n}
							}
						}
						return nil
					}},
				{label: "-", what: "every registry", at: sim.Time(t0), on: claim, restart: down,
					victims: func(*sim.Kernel, *sim.Observation) []sim.NodeID { return slices.Clone(d.regs) }},
			}
		}},
	// RP-2 §5.2.3 and RP-P4: the elected replica may be the one behind (back from a
	// crash); it takes over with the state the others acknowledged even when their
	// answers, and the registries', come late (reliable links, slow ones: the thesis
	// assumes reliable communication, not a bound on its delay).
	{name: "slow-claimer", help: "the backup next in line (the minimum registration ID after the primary's) crashes and returns a lease and more later, behind the requests acknowledged meanwhile; the primary crashes for good as it returns, and while it claims the role (§5.2.3) every message to it arrives two to three periods late (times drawn from the seed; the links stay reliable): it must take over with the state the others acknowledged, not its own; the clients pause 50ms between calls", suite: true, plan: noFaults, think: 50 * time.Millisecond,
		trig: func(seed uint64, d *deployment) []*trigger {
			r := sim.Stream(seed, "rp-slow-claimer")
			t0 := 500*time.Millisecond + time.Duration(r.Int64Range(0, int64(400*time.Millisecond)))
			back := d.lease + time.Duration(r.Int64Range(int64(100*time.Millisecond), int64(400*time.Millisecond)))
			extra := 2*d.period + 2*maxLink + time.Duration(r.Int64Range(0, int64(d.period-2*maxLink)))
			g := kvGroup(d)
			// next: the up backup with the least registration ID
			next := func(k *sim.Kernel, _ *sim.Observation) []sim.NodeID {
				best := sim.NodeID(-1)
				var lo rp.RegID
				for _, n := range g.members {
					if s, ok := unwrap(k.NodeState(n)).(*rp.Replica); ok && k.Up(n) && !s.S.Primary && (best < 0 || s.S.ID.Less(lo)) {
						best, lo = n, s.S.ID
					}
				}
				return []sim.NodeID{best}
			}
			return []*trigger{
				{label: "-", what: "the next backup in line", at: sim.Time(t0), restart: back, groups: []string{"worklist"}, victims: next},
				{label: "-", what: "the primary", at: sim.Time(t0 + back), groups: []string{"worklist"},
					victims: func(k *sim.Kernel, _ *sim.Observation) []sim.NodeID { return []sim.NodeID{d.primary(k, g)} }},
				{label: "-", what: "messages to the claimer (late)", at: sim.Time(t0 + back),
					on: func(o sim.Observation) bool {
						v, ok := o.Value.(rp.Failover)
						return ok && v.Self
					},
					victims: func(_ *sim.Kernel, o *sim.Observation) []sim.NodeID { return []sim.NodeID{o.Node} },
					slow:    &slowLinks{extra: extra, span: 3 * d.period}},
			}
		}},
	{name: "partition", help: "outside the thesis' model: each replica in turn is cut off from the registries and the other replicas for 1.5 s, longer than a lease (clients stay with it); the primary among them must step down",
		plan: func(b *scenarios.Build, d *deployment) (faults.Plan, error) {
			var p faults.Plan
			for i, n := range kvGroup(d).names {
				at := 300*time.Millisecond + time.Duration(i)*2500*time.Millisecond
				p.Events = append(p.Events, faults.Event{At: faults.Duration(at), Kind: "partition", Groups: [][]string{append([]string{n}, clientNames(d)...)}},
					faults.Event{At: faults.Duration(at + 1500*time.Millisecond), Kind: "heal"})
			}
			return p, nil
		}},
	{name: "drift-pause", help: "outside the thesis' model: every replica's clock drifts (up to 20% slow) and each in turn is paused for 600ms, twice the lease (all its messages held back); a paused primary acts on a lease it no longer holds",
		plan: func(b *scenarios.Build, d *deployment) (faults.Plan, error) {
			var p faults.Plan
			r := sim.Stream(b.Seed, "drift")
			for _, n := range kvGroup(d).names {
				ppm := -r.Int64Range(0, 200_000)
				p.Events = append(p.Events, faults.Event{At: faults.Duration(50 * time.Millisecond), Kind: "skew", Node: n, DriftPPM: &ppm})
			}
			for i, n := range kvGroup(d).names {
				at := faults.Duration(400*time.Millisecond + time.Duration(i)*1200*time.Millisecond)
				p.Events = append(p.Events, faults.Event{At: at, Kind: "spike", From: n, To: "*", Extra: faults.Duration(600 * time.Millisecond), For: faults.Duration(600 * time.Millisecond)},
					faults.Event{At: at, Kind: "spike", From: "*", To: n, Extra: faults.Duration(600 * time.Millisecond), For: faults.Duration(600 * time.Millisecond)})
			}
			return p, nil
		}},
	swarmKind,
}

func clientNames(d *deployment) []string {
	var cs []string
	for _, c := range d.clients {
		cs = append(cs, d.nodes[c.node].Name)
	}
	return cs
}

func init() {
	for _, k := range kinds {
		k := k
		scenarios.Register(&scenarios.Scenario{Name: "replication/" + k.name, Help: k.help, Params: params, Suite: k.suite,
			Build: func(b *scenarios.Build) (*scenarios.Setup, error) { return kvSetup(b, k) }})
	}
	for _, k := range flowKinds {
		k := k
		ps := flowParams
		if k.table61 {
			// instances flow until after the last kill (at 6s)
			ps = slices.Clone(flowParams)
			ps[0].Default = "22"
			ps = append(ps, scenarios.Param{Name: "notify", Default: "false", Help: "the thesis' future work (§7): the registries notify the replicas of membership changes and backups stop pinging the primary (false: the thesis' polling, §5.2.2)"})
		}
		scenarios.Register(&scenarios.Scenario{Name: "replication/" + k.name, Help: k.help, Params: ps, Suite: k.suite,
			Build: func(b *scenarios.Build) (*scenarios.Setup, error) { return flowSetup(b, k) }})
	}
}

// checkPeriod refuses a ping period shorter than a round trip over the scenarios'
// links: the protocol's timeouts are one period (a lookup, a ping, a view change's
// wait), so with a shorter one a replica acts on answers that cannot have arrived —
// a sequencer installs a new epoch before the others' orders reach it, and an
// acknowledged request is lost. The thesis' periods are seconds.
func checkPeriod(period time.Duration) error {
	if period < 2*maxLink {
		return fmt.Errorf("parameter period=%v: at least %v (a round trip over the scenarios' links of up to %v; the protocol's timeouts are one period)", period, 2*maxLink, maxLink)
	}
	return nil
}

// checkLease refuses a registration lease the protocol cannot hold: a replica renews
// every third of the lease and a primary whose renewal is not acknowledged within the
// lease steps down, so a renewal and its acknowledgement (a round trip over links of
// up to maxLink) must fit in the rest of the lease. A shorter lease ended in a
// liveness violation that read as a protocol bug (lease=1ms).
func checkLease(name string, lease time.Duration) error {
	if lease <= 3*maxLink {
		return fmt.Errorf("parameter %s=%v: more than %v (a renewal every third of the lease, then a round trip of up to %v to acknowledge it, must fit in the lease)", name, lease, 3*maxLink, 2*maxLink)
	}
	return nil
}

func kvSetup(b *scenarios.Build, k kind) (*scenarios.Setup, error) {
	if k.name == "swarm" && swarmIsFlow(b.Seed) {
		return flowSwarm(b)
	}
	p := b.Params
	nr, ng, nc := p.IntRange("replicas", 1, 9), p.IntRange("registries", 1, 5), p.IntRange("clients", 1, 50)
	ops := p.IntRange("ops", 0, 10_000)
	period, lease, retry, bound := p.PositiveDuration("period"), p.PositiveDuration("lease"), p.PositiveDuration("retry"), p.PositiveDuration("bound")
	mode := p.String("mode")
	notify := p.Bool("notify")
	d, err := deploymentFor(p, period, lease)
	if err != nil {
		return nil, err
	}
	if mode != "passive" && mode != "active" {
		return nil, fmt.Errorf("parameter mode=%q: want passive or active", mode)
	}
	var notes []string
	active := mode == "active" || strings.HasPrefix(k.name, "active-")
	if k.name == "active-follower-return" {
		nr = 5
	}
	if strings.HasPrefix(k.name, "active-") {
		notes = append(notes, fmt.Sprintf("active replication, %d replicas", nr))
	}
	think := k.think
	if k.name == "minority-crash" {
		r := sim.Stream(b.Seed, "rp-minority-shape")
		active = r.Float64() < 0.5
		nr, ng = 5, int(r.Int64Range(1, 2))
		mode = map[bool]string{false: "passive", true: "active"}[active]
		notes = append(notes, fmt.Sprintf("%s replication, %d replicas, %d registries", mode, nr, ng))
	}
	if k.name == "registry-restart" {
		active, mode = false, "passive"
		nr, ng = 5, int(sim.Stream(b.Seed, "rp-registry-restart-shape").Int64Range(1, 2))
		notes = append(notes, fmt.Sprintf("passive replication, %d replicas, %d registries", nr, ng))
	}
	if k.name == "slow-claimer" {
		// §5.2.3's claim is passive replication's (-p mode is ignored)
		active, mode = false, "passive"
	}
	if k.name == "swarm" {
		sh := drawKV(b.Seed, p)
		active, nr, ng, nc, think, notify, retry = sh.active, sh.replicas, sh.registries, sh.clients, sh.think, sh.notify, sh.retry
		notes = append(notes, sh.notes...)
	}
	d.notify = notify
	for i := 1; i <= ng; i++ {
		d.registry(fmt.Sprintf("r%d", i))
	}
	var reps []string
	for i := 1; i <= nr; i++ {
		reps = append(reps, fmt.Sprintf("p%d", i))
	}
	g := d.replicas("worklist", active, reps...)
	for i := 1; i <= nc; i++ {
		d.client(fmt.Sprintf("c%d", i), g, kvOps(b.Seed, i, ops), retry, think, true)
	}
	plan, err := b.FaultPlan(func() (faults.Plan, error) { return k.plan(b, d) })
	if err != nil {
		return nil, err
	}
	d.plan = plan
	e := newEnv(d, plan, period, lease)
	if k.trig != nil {
		e.trig = k.trig(b.Seed, d)
	}
	until := max(sim.Time(3*time.Second), plan.Settled().At).Add(bound + time.Second)
	s := e.setup(bound, until)
	s.Notes = notes
	s.Workload = func(kk *sim.Kernel) {
		for _, c := range d.clients {
			kk.Inject(sim.Time(100*time.Millisecond), c.node, rp.Go{})
		}
	}
	return s, nil
}
