package rpscen

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/model"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/sim"
)

// The model-checked configurations (`simrun check replication`): lookup registries
// (1-2), a replica group and a front end, with a crash budget over the replicas
// (crash-stop, or crash-recovery with -p restart=true: a crashed replica restarts from
// its stable storage; -p midsend=true also lets a crash cut a call's sends short, the
// agreement stage of §3.6.1). Time is discrete: a tick is the ping period; the
// registration lease is 2 ticks, renewed every tick (a third of the lease, rounded up
// to the tick: the shortest lease with a renewal between expiries, so a failover fits
// in 5 ticks); the replicas subscribe to
// membership events (-p notify=false: they poll, the primary every tick); the front end
// re-sends after -p retry ticks; every message is delivered within the tick it was sent
// in (model.DiscreteTime.WithinTick: delays below a period), so each tick starts from
// an empty network and only its own messages and timers interleave.
//
// Three shapes (-p mode): passive, a group replicated primary-backup (RP-2) serving a
// client's writes; active, a group with a sequencer (RP-3); flow, a workflow hop
// (RP-4): a user creates an instance at a passive group A, whose primary runs its task
// and makes the transition to group B (one replica), which runs the last task.
//
// Invariants of passive and flow (relevant where said; a configuration checks those it
// can reach):
//   - RP-P1 exactly once: no primary runs a request again after a backup applied it,
//     while a replica holding it is up (§3.6.1: a crash during the agreement stage
//     may lose an unacknowledged request with every replica that held it);
//   - RP-P2 single primary: two replicas of a group are up and primary for at most 5
//     periods (§5.4.2: verify_primary solves the conflict within 5 ping periods; the
//     5 periods and a lease of the simulator's check less the lease: a primary cut off
//     steps down within a lease and a period, and the step-down invariant below
//     judges that sooner);
//   - RP-P4 no lost ack: every request the client got an answer for is in the
//     duplicate table of every replica of its group that is up and primary;
//   - RP-2 answered after it ran and its backups acknowledged: a response in flight
//     from a primary is for a request in its duplicate table, not the one it still
//     waits for a backup's acknowledgement of (§3.6.1 steps 4-5, §4.4 step 3);
//   - RP-2 a backup holds nothing its primary lacks (the fence: a backup follows one
//     primary's dones);
//   - RP-2 step down: a primary is primary at most a lease and a period after its
//     registration was last acknowledged;
//   - RP-1 a replica keeps its registration ID (crash-recovery), RP-2 no claim alone
//     before a renewal period, RP-2 a backup acknowledges only what it holds.
//
// Outside the thesis' assumptions (-p losses, -p cuts) RP-P1, RP-P4 and the backup's
// subset are not judged once a message was lost or a link cut: a lost registration
// lets a replica elect itself with no backup, answer, then crash (an acknowledged
// request lost within 46 steps), and a primary cut off from the registries runs
// requests a new primary runs again — fencing needs epochs (doc.go). RP-P2 is judged
// there: the primary cut off steps down within a lease.

// ModelParams are the parameters of the replication model.
var ModelParams = []model.Param{
	{Name: "mode", Default: "passive", Help: "passive (primary-backup, RP-2), active (a sequencer orders the requests, RP-3) or flow (a workflow hop between two passive groups, RP-4)"},
	{Name: "replicas", Default: "2", Help: "replicas in the group (1-3; flow: in the predecessor group)"},
	{Name: "registries", Default: "1", Help: "lookup registries (1-2)"},
	{Name: "requests", Default: "1", Help: "client writes (1-2; flow: one instance)"},
	{Name: "crashes", Default: "1", Help: "crash budget over the replicas"},
	{Name: "restart", Default: "false", Help: "a crashed replica may restart from its stable storage (crash-recovery; default crash-stop)"},
	{Name: "midsend", Default: "false", Help: "a crash may cut a call's sends short (§3.6.1's agreement stage; passive and flow)"},
	{Name: "notify", Default: "true", Help: "replicas subscribe to the registries' membership events (false: they poll, the primary every period)"},
	{Name: "retry", Default: "4", Help: "the client re-sends after this many ticks"},
	{Name: "losses", Default: "0", Help: "messages the network may drop along a path (outside the thesis' reliable links)"},
	{Name: "cuts", Default: "0", Help: "budget of one-way link cuts (outside the thesis' model: where a primary's registration lapses while it lives)"},
	{Name: "ticks", Default: "6", Help: "bound on the global clock, in ping periods"},
	{Name: "bug", Default: "none", Help: "plant a bug: none, no-dup, ack-early, no-stepdown, no-resume, no-retry"},
}

const (
	mcTick  = 10 * time.Millisecond
	mcLease = 2 * mcTick // renewed every tick (a third of it, rounded up to the tick)
)

// mcConfig is one configuration of the model.
type mcConfig struct {
	mode                                    string
	replicas, registries, requests, crashes int
	restart, midsend, notify                bool
	retry, losses, cuts, ticks              int
	pol                                     *rp.Policy
	bug                                     string
}

func init() {
	model.Register(model.Model{
		Name:   "replication",
		Help:   "replica groups with lookup registries and discrete time: passive (RP-2), active (RP-3) or a workflow hop (RP-4); crash-stop or crash-recovery, crashes cutting sends short; RP-P1 exactly once, RP-P2 single primary, RP-P4 no lost ack and the rules' own invariants",
		Params: ModelParams,
		Build: func(p *model.Params) (model.System, error) {
			c := mcConfig{
				mode: p.String("mode"), replicas: p.IntRange("replicas", 1, 3), registries: p.IntRange("registries", 1, 2),
				requests: p.IntRange("requests", 1, 2), crashes: p.IntRange("crashes", 0, 2), restart: p.Bool("restart"),
				midsend: p.Bool("midsend"), notify: p.Bool("notify"), retry: p.IntRange("retry", 1, 10),
				losses: p.IntRange("losses", 0, 2), cuts: p.IntRange("cuts", 0, 2), ticks: p.IntRange("ticks", 1, 30),
			}
			bug := p.String("bug")
			if p.Err() != nil {
				return nil, p.Err()
			}
			pol, err := Policy(bug)
			if err != nil {
				return nil, err
			}
			c.pol, c.bug = pol, bug
			var sys *model.Actors
			switch c.mode {
			case "passive", "flow":
				sys = c.passive()
			case "active":
				if c.midsend {
					return nil, fmt.Errorf("parameter midsend=true: RP-3 assumes a reliable, totally ordered multicast (the sequencer's step is it): passive and flow only")
				}
				sys = c.active()
			default:
				return nil, fmt.Errorf("parameter mode=%q: want passive, active or flow", c.mode)
			}
			return sys, nil
		},
		Portfolio: portfolio,
	})
}

// portfolio is what `simrun check replication` runs with no -p: configurations that
// together reach every rule the default swarm leaves to the model and pass on the
// protocol, each within about 30 s on one core.
var portfolio = []model.Config{
	{Name: "passive", Help: "2 replicas, a registry, a client's write, one crash that may cut a call's sends short (§3.6.1's agreement stage), 5 ticks: startup races, the failover to the survivor alone, every invariant",
		Params: map[string]string{"midsend": "true", "ticks": "5"}},
	{Name: "registries", Help: "2 registries answering one by one: the replica they list alone waits before it claims, 3 ticks",
		Params: map[string]string{"replicas": "1", "registries": "2", "crashes": "0", "ticks": "3"}},
	{Name: "polling", Help: "2 replicas polling the registry (the thesis' own protocol: the primary every period), 3 ticks",
		Params: map[string]string{"notify": "false", "crashes": "0", "ticks": "3"}},
	{Name: "recovery", Help: "crash-recovery: the replica crashes and restarts from its stable storage (its ID reused), the client re-sends every 2 ticks, 7 ticks",
		Params: map[string]string{"replicas": "1", "restart": "true", "retry": "2", "ticks": "7"}},
	{Name: "active", Help: "active replication (RP-3): 2 replicas and a sequencer failover, 4 ticks",
		Params: map[string]string{"mode": "active", "ticks": "4"}},
	{Name: "flow", Help: "a workflow hop (RP-4): the instance created at A, its task run, the transition to B acknowledged after B ran it, 3 ticks",
		Params: map[string]string{"mode": "flow", "replicas": "1", "crashes": "0", "ticks": "3"}},
	{Name: "cut", Help: "outside the model: a one-way cut between the registry and the primary, which must step down within a lease and a period of its last acknowledged registration, 8 ticks",
		Params: map[string]string{"replicas": "1", "cuts": "1", "crashes": "0", "ticks": "8"}},
}

// MCGhost is the passive configurations' monitor, folded over the observations.
type MCGhost struct {
	Ran     []string // requests a primary ran
	Holds   []mcHold // requests a backup applied, and the replicas holding them
	Again   string   // the first request run again after a backup applied it
	AgainBy sim.NodeID
	Holders []sim.NodeID // who held it then

	Acked        []string   // requests the client got an answer for
	FirstAck     sim.Time   // when the client got its first answer (+1; 0: not yet)
	PrimarySince []sim.Time // per node: when it last became primary
	IDs          []rp.RegID // per node: the registration ID it used
	AloneClaims  int        // claims made alone
	Lapsed       bool       // a primary stepped down: its registration lapsed
	Done         bool       // the flow's instance ran its last task
	DoneAfter    bool       // ... after a replica took the primary role after the first answer

	BreachID, BreachAlone, BreachAck, BreachAnswer string
}

type mcHold struct {
	ID    string
	Nodes []sim.NodeID
}

// foldMC folds an observation into the passive monitor (wait: how long a replica
// listed alone waits before it claims).
func foldMC(wait time.Duration, last int) func(g any, o sim.Observation) any {
	return func(g any, o sim.Observation) any {
		x := g.(MCGhost)
		seeID := func(id rp.RegID) {
			if x.IDs[o.Node] != (rp.RegID{}) && x.IDs[o.Node] != id && x.BreachID == "" {
				x.BreachID = fmt.Sprintf("node %d registered as %v and as %v", o.Node, x.IDs[o.Node], id)
			}
			if x.IDs[o.Node] != id {
				x.IDs = slices.Clone(x.IDs)
				x.IDs[o.Node] = id
			}
		}
		switch v := o.Value.(type) {
		case rp.Exec:
			i := slices.IndexFunc(x.Holds, func(h mcHold) bool { return h.ID == v.ID })
			switch o.Kind {
			case rp.ObsApply:
				x.Holds = slices.Clone(x.Holds)
				if i < 0 {
					x.Holds = append(x.Holds, mcHold{ID: v.ID})
					i = len(x.Holds) - 1
				}
				x.Holds[i].Nodes = append(slices.Clone(x.Holds[i].Nodes), o.Node)
			case rp.ObsExec:
				if !slices.Contains(x.Ran, v.ID) {
					x.Ran = append(slices.Clone(x.Ran), v.ID)
				}
				if i >= 0 {
					if x.Again == "" {
						x.Again, x.AgainBy, x.Holders = v.ID, o.Node, slices.Clone(x.Holds[i].Nodes)
					}
					x.Holds = slices.Clone(x.Holds)
					x.Holds[i].Nodes = append(slices.Clone(x.Holds[i].Nodes), o.Node)
				}
			}
		case rp.ClientOp:
			if o.Kind == rp.ObsReturn {
				x.Acked = append(slices.Clone(x.Acked), rp.ClientID(v.Client, v.Seq))
				if x.FirstAck == 0 {
					x.FirstAck = o.Time + 1 // +1: an answer in tick 0 is not "none"
				}
			}
		case rp.Role:
			seeID(v.ID)
			if v.Primary {
				x.PrimarySince = slices.Clone(x.PrimarySince)
				x.PrimarySince[o.Node] = o.Time
			} else if v.Why == "registration lapsed" {
				x.Lapsed = true
			}
		case rp.Looked:
			seeID(v.ID)
		case rp.Failover:
			if v.Self && v.Listed == 1 {
				x.AloneClaims++
				if v.Alone < wait && x.BreachAlone == "" {
					x.BreachAlone = fmt.Sprintf("node %d claimed alone after %v", o.Node, v.Alone)
				}
			}
		case rp.Ack:
			if v.Index > v.Applied && x.BreachAck == "" {
				x.BreachAck = fmt.Sprintf("node %d acknowledged index %d holding %d", o.Node, v.Index, v.Applied)
			}
		case rp.Answer:
			if !slices.Contains(x.Ran, v.ID) && x.BreachAnswer == "" {
				x.BreachAnswer = fmt.Sprintf("node %d answered %s before any primary ran it", o.Node, v.ID)
			}
		case rp.Task:
			if o.Kind == rp.ObsTask && v.Hop == last {
				x.Done = true
				if x.FirstAck > 0 && slices.ContainsFunc(x.PrimarySince, func(t sim.Time) bool { return t+1 > x.FirstAck }) {
					x.DoneAfter = true
				}
			}
		}
		return x
	}
}

// mcGroup is a replica group of a model configuration.
type mcGroup struct {
	o     *rp.Options
	nodes []sim.NodeID
}

// layout adds the registries and returns their IDs.
func (c mcConfig) layout() ([]sim.NodeSpec, []sim.NodeID) {
	var nodes []sim.NodeSpec
	var regs []sim.NodeID
	for i := 1; i <= c.registries; i++ {
		regs = append(regs, sim.NodeID(len(nodes)))
		name := "registry"
		if c.registries > 1 {
			name = fmt.Sprintf("registry%d", i)
		}
		nodes = append(nodes, sim.NodeSpec{Name: name, New: rp.NewRegistry()})
	}
	return nodes, regs
}

// group adds a group of n replicas named prefix1, prefix2, ...
func (c mcConfig) group(nodes *[]sim.NodeSpec, regs []sim.NodeID, name, prefix string, n int, flow *rp.Flow, active bool) mcGroup {
	g := mcGroup{o: &rp.Options{Group: name, Registries: regs, Period: mcTick, Lease: mcLease, Policy: c.pol, Notify: c.notify, Flow: flow, Active: active}}
	nw := rp.NewReplica(g.o)
	if active {
		nw = rp.NewActiveReplica(g.o)
	}
	for i := 1; i <= n; i++ {
		g.nodes = append(g.nodes, sim.NodeID(len(*nodes)))
		*nodes = append(*nodes, sim.NodeSpec{Name: fmt.Sprintf("%s%d", prefix, i), New: plant(c.bug, false, nw)})
	}
	return g
}

// client adds a front end of g making the operations, re-sending after c.retry ticks.
func (c mcConfig) client(nodes *[]sim.NodeSpec, g mcGroup, name string, ops []rp.Op) sim.NodeID {
	id := sim.NodeID(len(*nodes))
	*nodes = append(*nodes, sim.NodeSpec{Name: name, New: plant(c.bug, true, rp.NewClient(g.o, ops, time.Duration(c.retry)*mcTick))})
	return id
}

// network sets the configuration's faults: crashes (the builders set which nodes),
// losses, and cuts — one-way, between a registry and a replica (where a primary's
// registration lapses while it lives).
func (c mcConfig) network(sys *model.Actors, regs, reps []sim.NodeID) *model.Actors {
	var pairs [][2]sim.NodeID
	for _, g := range regs {
		for _, r := range reps {
			pairs = append(pairs, [2]sim.NodeID{g, r}, [2]sim.NodeID{r, g})
		}
	}
	sys.Cuts = model.Cuts{Budget: c.cuts, Pairs: pairs, OneWay: true}
	sys.Crashes.NoRestart = !c.restart
	sys.Crashes.MidSend = c.midsend
	if c.losses > 0 {
		sys.Network = model.Network{Lossy: true, MaxLosses: c.losses}
	}
	return sys
}

// mcFlow is the flow configuration's workflow: group A creates the instance and makes
// the transition to group B, which runs the last task.
var mcFlow = &rp.Flow{Route: []rp.Hop{{Group: "A", Task: "create"}, {Group: "B", Task: "run"}}}

// passive builds the passive and flow configurations.
func (c mcConfig) passive() *model.Actors {
	nodes, regs := c.layout()
	var groups []mcGroup
	var client sim.NodeID
	var crashable []sim.NodeID
	var ops []rp.Op
	if c.mode == "flow" {
		a := c.group(&nodes, regs, "A", "a", c.replicas, mcFlow, false)
		b := c.group(&nodes, regs, "B", "b", 1, mcFlow, false)
		groups, crashable = []mcGroup{a, b}, a.nodes
		ops = []rp.Op{rp.TransitionRequest("i", 0, -1).Op}
		client = c.client(&nodes, a, "user", ops)
	} else {
		g := c.group(&nodes, regs, "g", "p", c.replicas, nil, false)
		groups, crashable = []mcGroup{g}, g.nodes
		for i := 1; i <= c.requests; i++ {
			ops = append(ops, rp.Op{Key: "k", Write: true, Val: int64(i)})
		}
		client = c.client(&nodes, g, "client", ops)
	}
	o := groups[0].o
	wait := o.Lease/3 + o.Period
	var reps []sim.NodeID
	for _, g := range groups {
		reps = append(reps, g.nodes...)
	}
	replica := func(s *model.State, n sim.NodeID) (*rp.Replica, bool) {
		if !s.Up(n) {
			return nil, false
		}
		r, ok := unwrap(s.Node(n)).(*rp.Replica)
		return r, ok
	}
	outside := func(s *model.State) bool { f := s.Faults(); return f.Losses+f.Cuts > 0 }
	// primaries returns the group's replicas that are up and primary.
	primaries := func(s *model.State, g mcGroup) []sim.NodeID {
		var ps []sim.NodeID
		for _, n := range g.nodes {
			if r, ok := replica(s, n); ok && r.S.Primary {
				ps = append(ps, n)
			}
		}
		return ps
	}
	anyPrimary := func(s *model.State) bool {
		return slices.ContainsFunc(groups, func(g mcGroup) bool { return len(primaries(s, g)) > 0 })
	}
	ghost := func(s *model.State) MCGhost { return model.GhostAs[MCGhost](s) }
	limit := sim.Time(5 * o.Period)
	props := []model.Property[*model.State]{
		model.Always("RP-P4 no lost ack", func(s *model.State) bool {
			if outside(s) {
				return true
			}
			for _, n := range primaries(s, groups[0]) {
				r, _ := replica(s, n)
				for _, id := range ghost(s).Acked {
					if _, ok := r.S.Dup[id]; !ok {
						return false
					}
				}
			}
			return true
		}).When(func(s *model.State) bool { return len(ghost(s).Acked) > 0 && len(primaries(s, groups[0])) > 0 }),
		model.Always("RP-2 answered after it ran and its backups acknowledged", func(s *model.State) bool {
			if ghost(s).BreachAnswer != "" {
				return false
			}
			for _, m := range s.InFlight() {
				resp, ok := m.Msg.(rp.Response)
				if !ok || resp.NotPrimary {
					continue
				}
				r, up := replica(s, m.From)
				if !up {
					continue
				}
				if _, ran := r.S.Dup[resp.ID]; !ran {
					return false
				}
				if cur := r.S.Current; cur != nil && cur.Req.ID == resp.ID && len(cur.Waiting) > 0 {
					return false
				}
			}
			return true
		}).When(func(s *model.State) bool {
			return slices.ContainsFunc(s.InFlight(), func(m model.InFlight) bool {
				_, ok := m.Msg.(rp.Response)
				return ok && slices.Contains(reps, m.From)
			})
		}),
		model.Always("RP-2 step down within a lease and a period", func(s *model.State) bool {
			for _, n := range reps {
				if r, ok := replica(s, n); ok && r.S.Primary && s.Now()-r.S.LastAck > sim.Time(o.Lease+o.Period) {
					return false
				}
			}
			return true
		}).When(anyPrimary),
	}
	if c.replicas > 1 {
		// what needs backups
		props = append(props,
			model.Always("RP-P1 exactly once", func(s *model.State) bool {
				g := ghost(s)
				if g.Again == "" || outside(s) {
					return true
				}
				if slices.Contains(g.Holders, g.AgainBy) {
					return false
				}
				return !slices.ContainsFunc(g.Holders, func(h sim.NodeID) bool {
					r, ok := replica(s, h)
					if !ok {
						return false
					}
					_, holds := r.S.Dup[g.Again]
					return holds
				})
			}).When(func(s *model.State) bool { return len(ghost(s).Holds) > 0 }),
			model.Always("RP-P2 single primary", func(s *model.State) bool {
				g := ghost(s)
				for _, grp := range groups {
					ps := primaries(s, grp)
					if len(ps) < 2 {
						continue
					}
					since := make([]sim.Time, len(ps))
					for i, n := range ps {
						since[i] = g.PrimarySince[n]
					}
					if s.Now()-slices.Max(since) > limit {
						return false
					}
				}
				return true
			}).When(anyPrimary),
			model.Always("RP-2 a backup holds nothing its primary lacks", func(s *model.State) bool {
				if outside(s) {
					return true
				}
				for _, n := range reps {
					b, ok := replica(s, n)
					if !ok || b.S.Primary || b.S.PrimaryNode < 0 {
						continue
					}
					p, ok := replica(s, b.S.PrimaryNode)
					if !ok || !p.S.Primary {
						continue
					}
					for id := range b.S.Dup {
						if _, ok := p.S.Dup[id]; !ok {
							return false
						}
					}
				}
				return true
			}).When(func(s *model.State) bool {
				return slices.ContainsFunc(reps, func(n sim.NodeID) bool {
					b, ok := replica(s, n)
					if !ok || b.S.Primary || b.S.PrimaryNode < 0 || len(b.S.Dup) == 0 {
						return false
					}
					p, ok := replica(s, b.S.PrimaryNode)
					return ok && p.S.Primary
				})
			}),
			model.Always("RP-2 a backup acknowledges only what it holds", func(s *model.State) bool { return ghost(s).BreachAck == "" }).
				When(func(s *model.State) bool { return len(ghost(s).Holds) > 0 }),
		)
	}
	if c.restart {
		props = append(props, model.Always("RP-1 a replica keeps its registration ID", func(s *model.State) bool { return ghost(s).BreachID == "" }).
			When(func(s *model.State) bool { return s.Faults().Crashes > 0 }))
	}
	if c.replicas == 1 || c.replicas == 2 && c.crashes > 0 && c.mode == "passive" {
		// a group of one is alone, the survivor of two too
		props = append(props, model.Always("RP-2 no claim alone before a renewal period", func(s *model.State) bool { return ghost(s).BreachAlone == "" }).
			When(func(s *model.State) bool { return ghost(s).AloneClaims > 0 }))
	}
	switch {
	case c.mode == "flow":
		props = append(props, model.Sometimes("the instance completes", func(s *model.State) bool { return ghost(s).Done }))
		if c.crashes > 0 && c.ticks >= 6 {
			props = append(props, model.Sometimes("the instance completes after a failover", func(s *model.State) bool { return ghost(s).DoneAfter }))
		}
	case c.crashes > 0 && c.replicas > 1 && c.ticks >= 5:
		// a crash at tick 1, the registry drops it 2 ticks later, the survivor of two
		// waits 2 more (alone)
		props = append(props, model.Sometimes("a failover after an answer, and every request answered", func(s *model.State) bool {
			g := ghost(s)
			if len(g.Acked) < c.requests || s.Faults().Crashes == 0 || g.FirstAck == 0 {
				return false
			}
			return slices.ContainsFunc(primaries(s, groups[0]), func(n sim.NodeID) bool { return g.PrimarySince[n] >= g.FirstAck })
		}))
	}
	if c.cuts > 0 {
		props = append(props, model.Sometimes("a primary steps down, its registration lapsed", func(s *model.State) bool { return ghost(s).Lapsed }))
	}
	last := len(mcFlow.Route) - 1
	if c.mode != "flow" {
		last = -1
	}
	return c.network(&model.Actors{
		Name:       "replication-" + c.mode,
		Nodes:      nodes,
		Inject:     []model.Injection{{To: client, Msg: rp.Go{}, At: 1}},
		Crashes:    model.Crashes{Budget: c.crashes, Nodes: crashable},
		Time:       model.DiscreteTime{Tick: mcTick, MaxTicks: c.ticks, WithinTick: true},
		Ghost:      model.Ghost{Init: MCGhost{PrimarySince: make([]sim.Time, len(nodes)), IDs: make([]rp.RegID, len(nodes))}, Fold: foldMC(wait, last)},
		Properties: props,
	}, regs, reps)
}

// ModelSystem builds the passive configuration's actor system (the registry, the
// replicas, the client), as `simrun check replication -p replicas=… -p requests=… -p
// crashes=… -p ticks=…` does with the other parameters at their defaults.
func ModelSystem(replicas, requests, crashes, ticks int, pol *rp.Policy) *model.Actors {
	return mcConfig{mode: "passive", replicas: replicas, registries: 1, requests: requests, crashes: crashes, notify: true, retry: 4, ticks: ticks, pol: pol}.passive()
}

// The active configuration (`simrun check replication -p mode=active`): the same
// registries, client and discrete time, with a group replicated actively (RP-3): the
// registered replica with the minimum ID orders the requests, and a failover is a new
// epoch that gathers the longest order first. A crash (with -p restart=true, crash and
// restart) may hit any replica, the sequencer included.
//
// Invariants:
//   - RP-3 one total order: no two deliveries at the same index of the order carry
//     different requests (every replica, every epoch);
//   - RP-P1 ordered once: no request gets two indexes (the sequencers' duplicate check
//     survives failover);
//   - RP-P4 no lost ack: every request the client got an answer for is in the duplicate
//     table of the sequencer, whenever one is up and not taking over;
//   - RP-3 every replica executes every request: when no view change is under way
//     and the sequencer has held the role and ordered nothing for two ticks, a
//     replica that is up, follows it and has run its ping loop twice since it started
//     has delivered the sequencer's whole order (its ping reports how far it got, and
//     a fetch fills the gap within the tick) and is in no epoch past the sequencer's
//     (whose orders it would ignore).
//
// Sometimes: the client's requests are all answered after a sequencer failover.

// MCAGhost is the active configuration's monitor.
type MCAGhost struct {
	At        []string   // At[i]: the request delivered at index i+1
	Ordered   []string   // requests a sequencer ordered
	Acked     []string   // requests the client got an answer for
	SeqSince  []sim.Time // per node: when it last became sequencer (+1; 0: never)
	LastOrder sim.Time   // when a sequencer last ordered a request (+1; 0: never)
	Terms     int        // sequencer terms begun
	IDs       []rp.RegID // per node: the registration ID it used
	Breach    string
}

func foldActive(g any, o sim.Observation) any {
	x := g.(MCAGhost)
	switch v := o.Value.(type) {
	case rp.Exec:
		switch o.Kind {
		case rp.ObsOrder:
			if slices.Contains(x.Ordered, v.ID) && x.Breach == "" {
				x.Breach = "request " + v.ID + " ordered again"
			}
			x.Ordered = append(slices.Clone(x.Ordered), v.ID)
			x.LastOrder = o.Time + 1
		case rp.ObsDeliver:
			i := int(v.Index) - 1
			switch {
			case i < len(x.At):
				if x.At[i] != v.ID && x.Breach == "" {
					x.Breach = fmt.Sprintf("index %d delivered as %s and as %s", v.Index, x.At[i], v.ID)
				}
			case i == len(x.At):
				x.At = append(slices.Clone(x.At), v.ID)
			default:
				if x.Breach == "" {
					x.Breach = fmt.Sprintf("index %d delivered before index %d", v.Index, len(x.At)+1)
				}
			}
		}
	case rp.ClientOp:
		if o.Kind == rp.ObsReturn {
			x.Acked = append(slices.Clone(x.Acked), rp.ClientID(v.Client, v.Seq))
		}
	case rp.Role:
		x.SeqSince = slices.Clone(x.SeqSince)
		x.SeqSince[o.Node] = 0
		if v.Primary {
			x.SeqSince[o.Node] = o.Time + 1
			x.Terms++
		}
	case rp.Looked:
		if x.IDs[o.Node] != (rp.RegID{}) && x.IDs[o.Node] != v.ID && x.Breach == "" {
			x.Breach = fmt.Sprintf("id: node %d registered as %v and as %v", o.Node, x.IDs[o.Node], v.ID)
		}
		if x.IDs[o.Node] != v.ID {
			x.IDs = slices.Clone(x.IDs)
			x.IDs[o.Node] = v.ID
		}
	}
	return x
}

// activeAt returns node n's active replica if it is up; a node that wraps one (a
// test's planted bug) says so with Unwrap.
func activeAt(s *model.State, n sim.NodeID) (*rp.ActiveReplica, bool) {
	r, ok := unwrap(s.Node(n)).(*rp.ActiveReplica)
	return r, ok
}

// ModelActiveSystem builds the active configuration with one registry: node 0 the
// registry, 1..replicas the active replicas, then the client.
func ModelActiveSystem(replicas, requests, crashes, ticks int, pol *rp.Policy) *model.Actors {
	return mcConfig{mode: "active", replicas: replicas, registries: 1, requests: requests, crashes: crashes, notify: true, retry: 4, ticks: ticks, pol: pol}.active()
}

func (c mcConfig) active() *model.Actors {
	nodes, regs := c.layout()
	g := c.group(&nodes, regs, "g", "a", c.replicas, nil, true)
	reps := g.nodes
	var ops []rp.Op
	for i := 1; i <= c.requests; i++ {
		ops = append(ops, rp.Op{Key: "k", Write: true, Val: int64(i)})
	}
	client := c.client(&nodes, g, "client", ops)
	// sequencer returns the replica that is up and ordering (not taking over), if
	// exactly one is.
	sequencer := func(s *model.State) (sim.NodeID, *rp.ActiveReplica) {
		var seq sim.NodeID = -1
		var sr *rp.ActiveReplica
		for _, n := range reps {
			if r, ok := activeAt(s, n); ok && r.S.IsSeq && !r.S.Syncing {
				if seq >= 0 {
					return -1, nil
				}
				seq, sr = n, r
			}
		}
		return seq, sr
	}
	hasSeq := func(s *model.State) bool { _, sr := sequencer(s); return sr != nil }
	ghost := func(s *model.State) MCAGhost { return model.GhostAs[MCAGhost](s) }
	const settle = sim.Time(2 * mcTick)
	props := []model.Property[*model.State]{
		model.Always("RP-3 one total order", func(s *model.State) bool {
			return !strings.HasPrefix(ghost(s).Breach, "index")
		}).When(func(s *model.State) bool { return len(ghost(s).At) > 0 }),
		model.Always("RP-P1 ordered once", func(s *model.State) bool {
			return !strings.HasSuffix(ghost(s).Breach, "ordered again")
		}).When(func(s *model.State) bool { return len(ghost(s).Ordered) > 0 }),
		model.Always("RP-P4 no lost ack", func(s *model.State) bool {
			_, sr := sequencer(s)
			if sr == nil {
				return true
			}
			for _, id := range ghost(s).Acked {
				if _, ok := sr.S.Dup[id]; !ok {
					return false
				}
			}
			return true
		}).When(func(s *model.State) bool { return len(ghost(s).Acked) > 0 && hasSeq(s) }),
		model.Always("RP-3 every replica executes every request", func(s *model.State) bool {
			seq, sr := sequencer(s)
			if sr == nil {
				return true
			}
			g := ghost(s)
			now := s.Now()
			if g.SeqSince[seq] == 0 || now+1-g.SeqSince[seq] < settle || now+1-g.LastOrder < settle {
				return true
			}
			for _, n := range reps {
				if r, ok := activeAt(s, n); ok && r.S.Syncing {
					return true // a view change under way
				}
			}
			for _, n := range reps {
				r, ok := activeAt(s, n)
				if !ok || n == seq || r.S.Seqr != seq || r.S.Counter < 2 {
					continue
				}
				// Behind, or in an epoch past the sequencer's (its orders fenced
				// off here for good).
				if len(r.S.Log) < len(sr.S.Log) || r.S.Epoch > sr.S.Epoch {
					return false
				}
			}
			return true
		}).When(func(s *model.State) bool { return len(ghost(s).Ordered) > 0 && hasSeq(s) }),
	}
	if c.restart {
		props = append(props, model.Always("RP-1 a replica keeps its registration ID", func(s *model.State) bool {
			return !strings.HasPrefix(ghost(s).Breach, "id:")
		}).When(func(s *model.State) bool { return s.Faults().Crashes > 0 }))
	}
	if c.crashes > 0 {
		props = append(props, model.Sometimes("every request answered after a sequencer failover", func(s *model.State) bool {
			g := ghost(s)
			if len(g.Acked) < c.requests || g.Terms < 2 {
				return false
			}
			seq, _ := sequencer(s)
			return seq >= 0
		}))
	}
	return c.network(&model.Actors{
		Name:       "replication-active",
		Nodes:      nodes,
		Inject:     []model.Injection{{To: client, Msg: rp.Go{}, At: 1}},
		Crashes:    model.Crashes{Budget: c.crashes, Nodes: reps},
		Time:       model.DiscreteTime{Tick: mcTick, MaxTicks: c.ticks, WithinTick: true},
		Ghost:      model.Ghost{Init: MCAGhost{SeqSince: make([]sim.Time, len(nodes)), IDs: make([]rp.RegID, len(nodes))}, Fold: foldActive},
		Properties: props,
	}, regs, reps)
}
