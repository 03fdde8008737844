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

// The model-checked configuration (`simrun check replication`): one passive group of
// 2-3 replicas, one lookup registry and one client making 1-2 writes, with a crash
// budget over the replicas (crash-stop by default; -p restart=true lets a crashed
// replica restart from its stable storage). Time is discrete: a tick is the ping
// period; the registration lease is 3 ticks, renewed every tick; the replicas
// subscribe to membership events; the client re-sends after 4 ticks; every message is
// delivered within the tick it was sent in (model.DiscreteTime.WithinTick: delays below
// a period), so each tick starts from an empty network and only its own messages and
// timers interleave. The lease makes safety time-dependent; every interleaving within
// the bound on ticks is explored.
//
// Invariants:
//   - RP-P1 exactly once: no request is executed by a primary after a backup applied
//     it (a ghost folds the executions and applications);
//   - RP-P2 single primary: two replicas are up and primary for at most 5 periods and
//     a lease (verify_primary's bound) — measured on the global clock;
//   - RP-P4 no lost ack: every request the client got an answer for is in the
//     duplicate table of every replica that is up and primary.
//
// Sometimes: a replica becomes primary after the client's first answer (a failover),
// and every request is answered.
//
// Outside the thesis' assumptions the checker shows what breaks: with a message loss
// (-p losses=1) or a cut link (-p cuts=1) an acknowledged request is lost within 46 and
// 41 steps (a primary answers while the registries' news of a new backup is still on
// its way, then crashes). The same holds for the planted bugs ack-early (under the
// thesis' reliable links and atomic handler steps, an early answer is never lost: the
// Done messages leave in the same step) and no-stepdown (a primary whose registration
// lapses needs a cut link): the sweeps catch no-stepdown under partitions.
//
// Before WithinTick, BFS with messages allowed to cross a tick found two startup
// races (a replica claiming the primary role from a lookup answered before another
// took it, losing an acknowledged request), both fixed in the protocol.

// ModelParams are the parameters of the replication model.
var ModelParams = []model.Param{
	{Name: "replicas", Default: "2", Help: "replicas in the group (2-3)"},
	{Name: "requests", Default: "1", Help: "client writes (1-2)"},
	{Name: "crashes", Default: "1", Help: "crash budget over the replicas"},
	{Name: "restart", Default: "false", Help: "a crashed replica may restart from its stable storage (crash-recovery; default crash-stop)"},
	{Name: "losses", Default: "0", Help: "messages the network may drop along a path (outside the thesis' reliable links)"},
	{Name: "cuts", Default: "0", Help: "budget of one-way link cuts (outside the thesis' model: where a primary's registration lapses while it lives)"},
	{Name: "ticks", Default: "6", Help: "bound on the global clock, in ping periods"},
	{Name: "bug", Default: "none", Help: "plant a bug: none, no-dup, ack-early, no-stepdown"},
	{Name: "mode", Default: "passive", Help: "passive (primary-backup, RP-2) or active (a sequencer orders the requests, RP-3)"},
}

const mcTick = 10 * time.Millisecond

func init() {
	model.Register(model.Model{
		Name:   "replication",
		Help:   "passive replication (RP-2; -p mode=active: RP-3's sequencer): 2-3 replicas, 1 registry, 1 client with 1-2 writes, crash budget 1, discrete time; RP-P1 exactly-once, RP-P2 single primary (bounded dual windows), RP-P4 no lost ack (active: one total order, every replica catches up)",
		Params: ModelParams,
		Build: func(p *model.Params) (model.System, error) {
			nr, nq, cr, ticks := p.IntRange("replicas", 2, 3), p.IntRange("requests", 1, 2), p.IntRange("crashes", 0, 1), p.IntRange("ticks", 1, 30)
			cuts := p.IntRange("cuts", 0, 2)
			restart := p.Bool("restart")
			losses := p.IntRange("losses", 0, 2)
			bug := p.String("bug")
			mode := p.String("mode")
			if p.Err() != nil {
				return nil, p.Err()
			}
			pol, err := Policy(bug)
			if err != nil {
				return nil, err
			}
			var sys *model.Actors
			switch mode {
			case "passive":
				sys = ModelSystem(nr, nq, cr, ticks, pol)
			case "active":
				sys = ModelActiveSystem(nr, nq, cr, ticks, pol)
			default:
				return nil, fmt.Errorf("parameter mode=%q: want passive or active", mode)
			}
			sys.Cuts = model.Cuts{Budget: cuts}
			sys.Crashes.NoRestart = !restart
			if losses > 0 {
				sys.Network = model.Network{Lossy: true, MaxLosses: losses}
			}
			return sys, nil
		},
	})
}

// MCGhost is the monitor folded over the observations.
type MCGhost struct {
	Committed    []string   // requests a backup applied
	Acked        []string   // requests the client got an answer for
	PrimarySince []sim.Time // per node: when it last became primary
	FirstAck     sim.Time   // when the client got its first answer (0: not yet)
	Breach       string
}

func foldMC(g any, o sim.Observation) any {
	x := g.(MCGhost)
	switch v := o.Value.(type) {
	case rp.Exec:
		switch o.Kind {
		case rp.ObsApply:
			if !slices.Contains(x.Committed, v.ID) {
				x.Committed = append(slices.Clone(x.Committed), v.ID)
			}
		case rp.ObsExec:
			if slices.Contains(x.Committed, v.ID) && x.Breach == "" {
				x.Breach = "request " + v.ID + " executed again after it was committed"
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
		if v.Primary {
			x.PrimarySince = slices.Clone(x.PrimarySince)
			x.PrimarySince[o.Node] = o.Time
		}
	}
	return x
}

// modelNodes lays out a model's nodes: node 0 the registry, then the replicas (named
// prefix1, prefix2, ...), then a client making requests writes and re-sending after 4
// ticks.
func modelNodes(o *rp.Options, prefix string, replica func() sim.Node, replicas, requests int) (nodes []sim.NodeSpec, reps []sim.NodeID, client sim.NodeID) {
	nodes = []sim.NodeSpec{{Name: "registry", New: rp.NewRegistry()}}
	for i := 1; i <= replicas; i++ {
		reps = append(reps, sim.NodeID(len(nodes)))
		nodes = append(nodes, sim.NodeSpec{Name: fmt.Sprintf("%s%d", prefix, i), New: replica})
	}
	var ops []rp.Op
	for i := 1; i <= requests; i++ {
		ops = append(ops, rp.Op{Key: "k", Write: true, Val: int64(i)})
	}
	client = sim.NodeID(len(nodes))
	nodes = append(nodes, sim.NodeSpec{Name: "client", New: rp.NewClient(o, ops, 4*mcTick)})
	return nodes, reps, client
}

// ModelSystem builds the model's actor system: node 0 the registry, 1..replicas the
// replicas, then the client.
func ModelSystem(replicas, requests, crashes, ticks int, pol *rp.Policy) *model.Actors {
	o := &rp.Options{Group: "g", Registries: []sim.NodeID{0}, Period: mcTick, Lease: 3 * mcTick, Policy: pol, Notify: true}
	nodes, crashable, client := modelNodes(o, "p", rp.NewReplica(o), replicas, requests)
	limit := sim.Time(5*o.Period + o.Lease)
	return &model.Actors{
		Name:    "replication",
		Nodes:   nodes,
		Inject:  []model.Injection{{To: client, Msg: rp.Go{}, At: 1}},
		Crashes: model.Crashes{Budget: crashes, Nodes: crashable},
		Time:    model.DiscreteTime{Tick: mcTick, MaxTicks: ticks, WithinTick: true},
		Ghost:   model.Ghost{Init: MCGhost{PrimarySince: make([]sim.Time, len(nodes))}, Fold: foldMC},
		Properties: []model.Property[*model.State]{
			model.Always("RP-P1 exactly once", func(s *model.State) bool { return model.GhostAs[MCGhost](s).Breach == "" }),
			model.Always("RP-P2 single primary", func(s *model.State) bool {
				g := model.GhostAs[MCGhost](s)
				var since []sim.Time
				for _, n := range crashable {
					if r, ok := s.Node(n).(*rp.Replica); ok && s.Up(n) && r.S.Primary {
						since = append(since, g.PrimarySince[n])
					}
				}
				return len(since) < 2 || s.Now()-slices.Max(since) <= limit
			}),
			model.Always("RP-P4 no lost ack", func(s *model.State) bool {
				g := model.GhostAs[MCGhost](s)
				for _, n := range crashable {
					r, ok := s.Node(n).(*rp.Replica)
					if !ok || !s.Up(n) || !r.S.Primary {
						continue
					}
					for _, id := range g.Acked {
						if _, ok := r.S.Dup[id]; !ok {
							return false
						}
					}
				}
				return true
			}),
			model.Sometimes("a failover after an answer, and every request answered", func(s *model.State) bool {
				g := model.GhostAs[MCGhost](s)
				if len(g.Acked) < requests || s.Faults().Crashes == 0 || g.FirstAck == 0 {
					return false
				}
				for _, n := range crashable {
					if r, ok := s.Node(n).(*rp.Replica); ok && s.Up(n) && r.S.Primary && g.PrimarySince[n] >= g.FirstAck {
						return true
					}
				}
				return false
			}),
		},
	}
}

// The active configuration (`simrun check replication -p mode=active`): the same
// registry, client and discrete time, with a group replicated actively (RP-3): the
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
	}
	return x
}

// activeAt returns node n's active replica if it is up; a node that wraps one (a
// test's planted bug) says so with Unwrap.
func activeAt(s *model.State, n sim.NodeID) (*rp.ActiveReplica, bool) {
	x := s.Node(n)
	if w, ok := x.(interface{ Unwrap() sim.Node }); ok {
		x = w.Unwrap()
	}
	r, ok := x.(*rp.ActiveReplica)
	return r, ok
}

// ModelActiveSystem builds the active configuration: node 0 the registry,
// 1..replicas the active replicas, then the client.
func ModelActiveSystem(replicas, requests, crashes, ticks int, pol *rp.Policy) *model.Actors {
	o := &rp.Options{Group: "g", Registries: []sim.NodeID{0}, Period: mcTick, Lease: 3 * mcTick, Policy: pol, Notify: true, Active: true}
	nodes, reps, client := modelNodes(o, "a", rp.NewActiveReplica(o), replicas, requests)
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
	const settle = sim.Time(2 * mcTick)
	return &model.Actors{
		Name:    "replication-active",
		Nodes:   nodes,
		Inject:  []model.Injection{{To: client, Msg: rp.Go{}, At: 1}},
		Crashes: model.Crashes{Budget: crashes, Nodes: reps},
		Time:    model.DiscreteTime{Tick: mcTick, MaxTicks: ticks, WithinTick: true},
		Ghost:   model.Ghost{Init: MCAGhost{SeqSince: make([]sim.Time, len(nodes))}, Fold: foldActive},
		Properties: []model.Property[*model.State]{
			model.Always("RP-3 one total order", func(s *model.State) bool {
				return !strings.HasPrefix(model.GhostAs[MCAGhost](s).Breach, "index")
			}),
			model.Always("RP-P1 ordered once", func(s *model.State) bool {
				return !strings.HasSuffix(model.GhostAs[MCAGhost](s).Breach, "ordered again")
			}),
			model.Always("RP-P4 no lost ack", func(s *model.State) bool {
				_, sr := sequencer(s)
				if sr == nil {
					return true
				}
				for _, id := range model.GhostAs[MCAGhost](s).Acked {
					if _, ok := sr.S.Dup[id]; !ok {
						return false
					}
				}
				return true
			}),
			model.Always("RP-3 every replica executes every request", func(s *model.State) bool {
				seq, sr := sequencer(s)
				if sr == nil {
					return true
				}
				g := model.GhostAs[MCAGhost](s)
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
			}),
			model.Sometimes("every request answered after a sequencer failover", func(s *model.State) bool {
				g := model.GhostAs[MCAGhost](s)
				if len(g.Acked) < requests || g.Terms < 2 {
					return false
				}
				seq, _ := sequencer(s)
				return seq >= 0
			}),
		},
	}
}
