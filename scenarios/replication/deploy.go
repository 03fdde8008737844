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

// deployment is a system of lookup registries, replica groups and clients.
type deployment struct {
	nodes     []sim.NodeSpec
	regs      []sim.NodeID
	regNames  []string
	groups    []*group
	clients   []client
	flow      *rp.Flow
	instances []string
	period    time.Duration
	lease     time.Duration
	policy    *rp.Policy
	notify    bool
	// thesis: the thesis' membership (rp.Options.BackupsRegister; NoBackupPing with
	// notify) instead of simrun's polling.
	thesis bool
	group  map[sim.NodeID]*group
	// plan is the run's fault plan (triggers read it to keep a minority down).
	plan faults.Plan
	// bug is the -p bug= value (a planted bug's handle wraps the nodes it is for).
	bug string
}

// group is one replica group.
type group struct {
	name    string
	active  bool
	o       *rp.Options
	members []sim.NodeID
	names   []string
}

// client is a front end of a group.
type client struct {
	node  sim.NodeID
	group *group
	// checked: its operations are checked for linearizability (RP-P3); a user
	// creating workflow instances is not (its writes are instance states).
	checked bool
}

func newDeployment(period, lease time.Duration, pol *rp.Policy) *deployment {
	return &deployment{period: period, lease: lease, policy: pol, notify: true, group: map[sim.NodeID]*group{}}
}

// deploymentFor returns a scenario's deployment once what every replication scenario
// reads is checked: the parameters read so far, the ping period against a round trip
// (checkPeriod) and the planted bug (-p bug).
func deploymentFor(p *scenarios.Params, period, lease time.Duration) (*deployment, error) {
	bug := p.String("bug")
	pol, err := Policy(bug)
	if err != nil {
		return nil, err
	}
	if p.Err() != nil {
		return nil, p.Err()
	}
	if err := checkPeriod(period); err != nil {
		return nil, err
	}
	if err := checkLease("lease", lease); err != nil {
		return nil, err
	}
	d := newDeployment(period, lease, pol)
	d.bug = bug
	return d, nil
}

func (d *deployment) registry(name string) {
	d.regs = append(d.regs, sim.NodeID(len(d.nodes)))
	d.regNames = append(d.regNames, name)
	d.nodes = append(d.nodes, sim.NodeSpec{Name: name, New: rp.NewRegistry()})
}

// replicas adds a group with one replica per node name (registries first).
func (d *deployment) replicas(name string, active bool, nodes ...string) *group {
	var flow *rp.Flow
	if d.flow != nil && slices.ContainsFunc(d.flow.Route, func(h rp.Hop) bool { return h.Group == name }) {
		flow = d.flow
	}
	g := &group{name: name, active: active, o: &rp.Options{Group: name, Registries: d.regs, Period: d.period, Lease: d.lease, Active: active, Flow: flow, Policy: d.policy, Notify: d.notify,
		BackupsRegister: d.thesis, NoBackupPing: d.thesis && d.notify}}
	for _, n := range nodes {
		id := sim.NodeID(len(d.nodes))
		g.members = append(g.members, id)
		g.names = append(g.names, n)
		d.group[id] = g
		nw := rp.NewReplica(g.o)
		if active {
			nw = rp.NewActiveReplica(g.o)
		}
		d.nodes = append(d.nodes, sim.NodeSpec{Name: n, New: plant(d.bug, false, nw)})
	}
	d.groups = append(d.groups, g)
	return g
}

func (d *deployment) client(name string, g *group, ops []rp.Op, retry, think time.Duration, checked bool) {
	id := sim.NodeID(len(d.nodes))
	d.clients = append(d.clients, client{node: id, group: g, checked: checked})
	c := rp.NewClient(g.o, ops, retry)
	if think > 0 {
		c = rp.NewThinkingClient(g.o, ops, retry, think)
	}
	d.nodes = append(d.nodes, sim.NodeSpec{Name: name, New: plant(d.bug, true, c)})
}

func (d *deployment) byName(n string) (sim.NodeID, bool) {
	i := slices.IndexFunc(d.nodes, func(s sim.NodeSpec) bool { return s.Name == n })
	return sim.NodeID(i), i >= 0
}

func (d *deployment) groupNamed(n string) *group {
	for _, g := range d.groups {
		if g.name == n {
			return g
		}
	}
	return nil
}

// primary returns the group's replica that is primary (passive) or sequencer
// (active) and up, or -1.
func (d *deployment) primary(k *sim.Kernel, g *group) sim.NodeID {
	for _, n := range g.members {
		if !k.Up(n) {
			continue
		}
		switch s := unwrap(k.NodeState(n)).(type) {
		case *rp.Replica:
			if s.S.Primary {
				return n
			}
		case *rp.ActiveReplica:
			if s.S.IsSeq {
				return n
			}
		}
	}
	return -1
}

// kvOps draws a client's operations on keys k1, k2.
func kvOps(seed uint64, i, n int) []rp.Op {
	r := sim.Stream(seed, "rp-ops", int64(i))
	var os []rp.Op
	for j := 0; j < n; j++ {
		op := rp.Op{Key: fmt.Sprintf("k%d", r.Int64Range(1, 2))}
		if r.Float64() < 0.5 {
			op.Write, op.Val = true, int64(i*1000+j+1)
		}
		os = append(os, op)
	}
	return os
}

// trigger crashes nodes when a condition on the run holds (once): a failure at a
// precise point of the protocol (§4.5's cases), or a component found at run time (the
// primary of a group).
type trigger struct {
	// label and what: the section it reproduces and what it kills, for the table
	label, what string
	// at: fire at or after this time (0: no time condition)
	at sim.Time
	// on: fire on the first observation for which it returns true (nil: none)
	on func(o sim.Observation) bool
	// victims returns the nodes to crash when it fires
	victims func(k *sim.Kernel, o *sim.Observation) []sim.NodeID
	// restart after this long (0: never)
	restart time.Duration
	// slow: instead of crashing the victims, delay every message sent to them by
	// slow.extra for slow.span (the links stay reliable: the messages arrive late)
	slow *slowLinks
	// crashSend: crash the victims part-way through their next call that sends
	// anything within this window (a crash-send; 0: a crash at once)
	crashSend time.Duration
	groups    []string // the groups whose failover the table reports

	fired   bool
	firedAt sim.Time
	crashed []sim.NodeID
	slowed  []sim.NodeID
}

// slowLinks is a delay on every link into a node, for a while.
type slowLinks struct{ extra, span time.Duration }

// triggers returns a Setup.Stop hook that records the nodes' crashes and restarts
// (watch) and fires the triggers (it never stops the run).
func (e *env) triggers() func(k *sim.Kernel) bool {
	seen := 0
	return func(k *sim.Kernel) bool {
		e.watch(k)
		h := k.History()
		for _, t := range e.trig {
			if t.fired || (t.at > 0 && k.Now() < t.at) {
				continue
			}
			var hit *sim.Observation
			if t.on != nil {
				for i := seen; i < len(h); i++ {
					if t.on(h[i]) {
						hit = &h[i]
						break
					}
				}
				if hit == nil {
					continue
				}
			}
			t.fired, t.firedAt = true, k.Now()
			for _, n := range t.victims(k, hit) {
				if n < 0 || !k.Up(n) {
					continue
				}
				if t.slow != nil {
					t.slowed = append(t.slowed, n)
					k.Schedule(k.Now(), sim.Fault{Kind: sim.FaultSpike, From: sim.Any, To: n, Extra: t.slow.extra, For: t.slow.span})
					continue
				}
				t.crashed = append(t.crashed, n)
				if t.crashSend > 0 {
					// the victim's next call that sends anything within the window is
					// cut short: a prefix of its sends leaves, then it crashes
					k.Schedule(k.Now(), sim.Fault{Kind: sim.FaultCrashSend, Node: n, For: t.crashSend})
				} else {
					k.Schedule(k.Now(), sim.Fault{Kind: sim.FaultCrash, Node: n})
				}
				if t.restart > 0 {
					k.Schedule(k.Now().Add(t.restart), sim.Fault{Kind: sim.FaultRestart, Node: n})
				}
			}
		}
		seen = len(h)
		return false
	}
}
