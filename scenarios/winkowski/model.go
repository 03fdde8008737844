package wkscen

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/protocols/winkowski"
	"github.com/simrun-dev/simrun/sim"
)

// The model-checked configuration: the game's own nodes — one agent running three
// tasks, the managers of two single-unit pools on two other computers (P1 on m1, P2 on
// m2; the second agent node idles) — explored exhaustively by package model with every
// order of the messages on the four links and every timer firing at any moment
// (untimed: Γ and the execution times may be anything relative to message delays).
//
//	winkowski  default: complete variant, tasks P1 | P1+P2 | P2 (a conflict chain);
//	           the first task is created at the start, the others by a job timer
//	           that may fire at any point, so that a task may register while another
//	           competes (the entering phase, WK-1/E1, is reached; with every task
//	           created at the start, on one agent with FIFO links, none ever has an
//	           absolute predecessor); invariants WK-P1 (no resource used by two
//	           tasks), WK-P2 (a task using its resources holds all of them at their
//	           managers), WK-booking (no winning form finds its pool full) and "K2
//	           window" (the canonical encoding of sequence numbers is exact, see
//	           winkowski.SeqModulus); and "all tasks done": every maximal path ends
//	           with every task having left the game (no deadlock; with --fair also no
//	           fair cycle that avoids it); "agent rules": the agent monitor
//	           (monitor.go, decisions.go: WK-agent-state, WK-T1/ticket,
//	           WK-1/predecessors, WK-1/enter, WK-3/regress, WK-3/progress,
//	           WK-4/alarm, WK-4/advance) saw no rule broken on any transition;
//	           "manager rules": nor did the manager monitor (hostmon.go, WK-2/manager).
//
// With no -p, `simrun check winkowski` runs the Portfolio below (chain, restricted,
// literal, capacity, agents, crash-send): together they reach every rule the swarm
// needs them for, and each property says where it is relevant (coverage).
//
// Why one agent: with three agents the links multiply and the exhaustive search did not
// end within 10 minutes; agents=3 is explored by random walks instead (the tests run
// 300 walks with a crash budget, and 30 with lossy links), or bounded with
// --max-states. With both pools on one host (hosts=1) the two managers' messages could
// never race, and the bugs below went unnoticed.
//
// The model assumes reliable links (retry=false, as the paper does) unless retry is set,
// which turns on the game's retry timer (choice K2) and lets the network lose up to
// `losses` messages; the timer may then ring at any moment and resend without bound,
// so that configuration is for random walks or --max-states.

// ModelParams are the parameters of the "winkowski" model.
var ModelParams = []model.Param{
	{Name: "variant", Default: "complete", Help: "complete or restricted"},
	{Name: "entering", Default: "alarm", Help: "alarm or literal"},
	{Name: "tasks", Default: "P1,P1+P2,P2", Help: "one task per agent: its pools joined by +"},
	{Name: "caps", Default: "1,1", Help: "capacities of P1, P2"},
	{Name: "agents", Default: "1", Help: "agents running the tasks (task i on agent i mod agents)"},
	{Name: "hosts", Default: "2", Help: "computers holding the pools: 1 (both on one) or 2"},
	{Name: "stagger", Default: "true", Help: "create tasks 2… by a job timer (may fire at any point) rather than at the start"},
	{Name: "crashes", Default: "0", Help: "crash budget over the agent nodes (a crashed agent may restart from stable storage)"},
	{Name: "midsend", Default: "false", Help: "with crashes: a crash may also cut a call's forms short (after j of its k sends)"},
	{Name: "retry", Default: "false", Help: "turn the retry timer on (choice K2) and let the network lose messages"},
	{Name: "losses", Default: "2", Help: "with retry: messages the network may lose along a path"},
	{Name: "maxflight", Default: "0", Help: "bound for larger configurations: do not explore past states with more messages in flight (0: none)"},
	{Name: "bug", Default: "none", Help: bugHelp()},
}

// Portfolio is what `simrun check winkowski` runs with no -p: configurations that
// together reach every rule of the game's rule map the simulator's swarm does not
// need to (protocols/winkowski/rules.go; coverage_test.go), each exhaustive and
// under about 30 s on one core. MaxStates is about twice each one's state count, so
// that a broken variant that blows the space up ends as inconclusive instead of
// running for minutes.
var Portfolio = []model.Config{
	{Name: "chain", Help: "complete variant, tasks P1 | P1+P2 | P2 on one agent, two hosts, staggered: entering (WK-1/E1), ordering, alarm and advancing forms (WK-4)",
		Params: map[string]string{}, MaxStates: 320_000},
	{Name: "restricted", Help: "the restricted variant (p1) on the chain: WK-3's win and wait",
		Params: map[string]string{"variant": "restricted"}, MaxStates: 300_000},
	{Name: "literal", Help: "the literal entering phase (WK-1 as written) on the chain",
		Params: map[string]string{"entering": "literal"}, MaxStates: 240_000},
	{Name: "capacity", Help: "three tasks on a pool of two: the pool fills to its capacity while the third waits (WK-2 win-last, (p3) at the last unit)",
		Params: map[string]string{"caps": "2,1", "tasks": "P1,P1,P1"}, MaxStates: 230_000},
	{Name: "agents", Help: "two agents (two ticket residues) whose tasks, created at once, share a pool of two and find each other entering",
		Params: map[string]string{"agents": "2", "stagger": "false", "tasks": "P1+P2,P2", "caps": "1,2"}, MaxStates: 420_000},
	{Name: "crash-send", Help: "a task on two pools whose agent may crash, also part-way through a call's forms (MidSend), and restart from stable storage (F2)",
		Params: map[string]string{"tasks": "P1+P2", "crashes": "1", "midsend": "true"}, MaxStates: 20_000},
}

func init() {
	model.Register(model.Model{
		Name:      "winkowski",
		Help:      "the resource-management game, complete variant: 3 tasks on one agent, 2 single-unit pools on two hosts; WK-P1/WK-P2 invariants",
		Params:    ModelParams,
		Portfolio: Portfolio,
		Build: func(p *model.Params) (model.System, error) {
			o, mf := optionsOf(p)
			if p.Err() != nil {
				return nil, p.Err()
			}
			a, err := o.system()
			if err == nil && mf > 0 {
				a.Boundary = func(s *model.State) bool { return s.NumInFlight() <= mf }
			}
			return a, err
		},
	})
}

// optionsOf reads the model's parameters (and maxflight).
func optionsOf(p *model.Params) (modelOptions, int) {
	o := modelOptions{variant: p.String("variant"), entering: p.String("entering"), bug: p.String("bug"),
		tasks: p.List("tasks"), caps: p.List("caps"), agents: p.IntRange("agents", 1, 8), hosts: p.IntRange("hosts", 1, 2),
		stagger: p.Bool("stagger"), crashes: p.IntRange("crashes", 0, 8), midsend: p.Bool("midsend"), retry: p.Bool("retry"), losses: p.IntRange("losses", 0, 100)}
	return o, p.IntRange("maxflight", 0, 1000)
}

// modelOptions are the model's parameters, read.
type modelOptions struct {
	variant, entering, bug string
	tasks, caps            []string
	agents, hosts          int
	stagger                bool
	crashes                int
	midsend                bool
	retry                  bool
	losses                 int
}

// config builds the model's system: pools P1, P2 (on computers 1 and 2), task i on
// agent i mod agents, every task its own job.
func (o modelOptions) config() (winkowski.Config, error) {
	var cfg winkowski.Config
	v, err := winkowski.ParseVariant(o.variant)
	if err != nil {
		return cfg, fmt.Errorf("parameter variant: %w", err)
	}
	e, err := winkowski.ParseEntering(o.entering)
	if err != nil {
		return cfg, fmt.Errorf("parameter entering: %w", err)
	}
	pol, err := bugPolicy(o.bug)
	if err != nil {
		return cfg, fmt.Errorf("parameter bug: %w", err)
	}
	if len(o.tasks) == 0 {
		return cfg, fmt.Errorf("parameter tasks: at least one task")
	}
	computers := max(o.agents, o.hosts)
	cfg = winkowski.Config{Agents: computers, K: computers + 1, Gamma: 5 * time.Millisecond, Variant: v, Entering: e, Policy: pol,
		Durable: o.crashes > 0}
	if o.retry {
		cfg.Retry = 5 * time.Millisecond
	}
	names := []string{"P1", "P2"}
	if len(o.caps) != len(names) {
		return cfg, fmt.Errorf("parameter caps: want %d capacities (P1, P2), got %d", len(names), len(o.caps))
	}
	for i, n := range names {
		var c int
		if _, err := fmt.Sscanf(o.caps[i], "%d", &c); err != nil {
			return cfg, fmt.Errorf("parameter caps: %q is not a number", o.caps[i])
		}
		cfg.Pools = append(cfg.Pools, winkowski.Pool{Name: n, Capacity: c, Host: i % o.hosts})
	}
	for i, spec := range o.tasks {
		var ps []winkowski.PoolID
		for _, n := range strings.Split(spec, "+") {
			switch strings.TrimSpace(n) {
			case "P1":
				ps = append(ps, 0)
			case "P2":
				ps = append(ps, 1)
			default:
				return cfg, fmt.Errorf("parameter tasks: task %d (%q) is interested in unknown pool %q (pools: P1, P2)", i+1, spec, n)
			}
		}
		job := winkowski.Job{Agent: i % o.agents, Tasks: []winkowski.TaskSpec{{Pools: ps, Exec: 2 * time.Millisecond}}}
		if o.stagger && i > 0 {
			job.Start = time.Millisecond // untimed: the job timer fires at any point
		}
		cfg.Jobs = append(cfg.Jobs, job)
	}
	return cfg, nil
}

func (o modelOptions) system() (*model.Actors, error) { return o.systemWrapped(plant{}) }

// systemWrapped is system with a broken game planted by pl (tests; see plant).
func (o modelOptions) systemWrapped(pl plant) (*model.Actors, error) {
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	a, err := modelSystem(cfg, pl)
	if err != nil {
		return nil, err
	}
	if o.crashes > 0 {
		sys, _ := winkowski.NewSystem(cfg)
		a.Crashes = model.Crashes{Budget: o.crashes, Nodes: winkowski.NewLayout(sys).Agent, MidSend: o.midsend}
	}
	if o.retry {
		a.Network = model.Network{Lossy: true, MaxLosses: o.losses}
	}
	return a, nil
}

// modelGhost is the model's history variable: what the observations say that the
// node states forget.
type modelGhost struct {
	Done       uint8 // tasks that left the game
	BookFailed bool  // some winning form found no free resource
	// Broken is the first rule the agent monitor (monitor.go) saw broken, "" if none:
	// it stays "" on every path of a correct protocol, so it distinguishes no states
	// and the state counts are those of the unmonitored game. MgrBroken is the same
	// for the manager monitor (hostmon.go).
	Broken, MgrBroken string
}

// ModelSystem returns the actor system for cfg with the game's invariants.
func ModelSystem(cfg winkowski.Config) (*model.Actors, error) { return modelSystem(cfg, plant{}) }

// modelSystem is ModelSystem with a broken game planted by pl (tests; see plant).
func modelSystem(cfg winkowski.Config, pl plant) (*model.Actors, error) {
	if pl.policy != nil {
		pl.policy(&cfg.Policy)
	}
	sys, err := winkowski.NewSystem(cfg)
	if err != nil {
		return nil, err
	}
	nodes, lay := winkowski.Nodes(sys)
	nodes = monitored(sys, nodes, lay, nil, pl)
	n := len(sys.Tasks)
	return &model.Actors{
		Name:  "winkowski",
		Nodes: nodes,
		Ghost: model.Ghost{Init: modelGhost{}, Fold: func(g any, o sim.Observation) any {
			mg := g.(modelGhost)
			switch o.Kind {
			case winkowski.KindDone:
				mg.Done++
			case winkowski.KindBookFailed:
				mg.BookFailed = true
			case kindRule:
				b := o.Value.(RuleBroken)
				switch {
				case b.Manager && mg.MgrBroken == "":
					mg.MgrBroken = b.Rule + ": " + b.String()
				case !b.Manager && mg.Broken == "":
					mg.Broken = b.Rule + ": " + b.String()
				}
			}
			return mg
		}},
		// Each property says in which states it is about something (coverage: a
		// property relevant nowhere is vacuous).
		Properties: []model.Property[*model.State]{
			model.Always("K2 window", func(s *model.State) bool { return seqWindow(s, sys) == "" }).
				When(func(s *model.State) bool { return s.NumInFlight() > 0 }),
			model.Always("WK-P1 mutual exclusion", func(s *model.State) bool { return modelExclusion(s, sys, lay) == "" }).
				When(func(s *model.State) bool { return len(accessing(s, sys, lay)) > 0 }),
			model.Always("WK-P2 all or nothing", func(s *model.State) bool { return modelAllOrNothing(s, sys, lay) == "" }).
				When(func(s *model.State) bool { return len(accessing(s, sys, lay)) > 0 }),
			model.Always("WK-booking", func(s *model.State) bool { return !model.GhostAs[modelGhost](s).BookFailed }).
				When(func(s *model.State) bool { return booked(s, lay) }),
			model.Always("agent rules", func(s *model.State) bool { return model.GhostAs[modelGhost](s).Broken == "" }).
				When(func(s *model.State) bool { return playing(s, sys, lay) }),
			model.Always("manager rules", func(s *model.State) bool { return model.GhostAs[modelGhost](s).MgrBroken == "" }).
				When(func(s *model.State) bool { return registered(s, lay) }),
			model.Eventually("all tasks done", func(s *model.State) bool { return int(model.GhostAs[modelGhost](s).Done) == n }).
				When(func(s *model.State) bool { return int(model.GhostAs[modelGhost](s).Done) == n }),
		},
	}, nil
}

// seqWindow checks that every (task, pool) pair's sequence numbers — in the nodes,
// their stable storage and the messages in flight — lie within a window narrower than
// winkowski.SeqModulus, so that the states' canonical encoding is exact (K2).
func seqWindow(s *model.State, sys *winkowski.System) string {
	type pair struct {
		t winkowski.TaskID
		p winkowski.PoolID
	}
	lo, hi := map[pair]winkowski.Seq{}, map[pair]winkowski.Seq{}
	add := func(t winkowski.TaskID, p winkowski.PoolID, q winkowski.Seq) {
		k := pair{t, p}
		if l, ok := lo[k]; !ok || q < l {
			lo[k] = q
		}
		hi[k] = max(hi[k], q)
	}
	for n := range s.NumNodes() {
		id := sim.NodeID(n)
		if s.Up(id) {
			// The monitors wrap the nodes: hand Seqs the agent or host inside.
			n, _ := model.NodeAs[sim.Node](s, id)
			if a := agentOf(n); a != nil {
				sys.Seqs(a, add)
			} else if h := hostOf(n); h != nil {
				sys.Seqs(h, add)
			}
		}
		if st := s.Stable(id); st != nil {
			for _, key := range st.Keys() {
				v, _ := st.Peek(key)
				sys.Seqs(v, add)
			}
		}
	}
	for _, m := range s.InFlight() {
		sys.Seqs(m.Msg, add)
	}
	worst, span := pair{}, winkowski.Seq(0)
	for k, h := range hi {
		if d := h - lo[k]; d > span || (d == span && (k.t < worst.t || (k.t == worst.t && k.p < worst.p))) {
			worst, span = k, d
		}
	}
	if span >= winkowski.SeqModulus {
		return fmt.Sprintf("task %d at %s: sequence numbers %d apart (encoding modulo %d)", worst.t, sys.PoolName(worst.p), span, winkowski.SeqModulus)
	}
	return ""
}

// booked reports whether some manager has a resource in use (a winning form was
// applied): where WK-booking is about something.
func booked(s *model.State, lay *winkowski.Layout) bool {
	for _, id := range lay.Host {
		if h, ok := model.NodeAs[sim.Node](s, id); ok {
			if x := hostOf(h); x != nil {
				for i := range x.St {
					if len(x.St[i].InUse) > 0 {
						return true
					}
				}
			}
		}
	}
	return false
}

// playing reports whether some agent controls a task: where the agent rules judge.
func playing(s *model.State, sys *winkowski.System, lay *winkowski.Layout) bool {
	for i := range sys.Agents {
		if n, ok := model.NodeAs[sim.Node](s, lay.Agent[i]); ok {
			if a := agentOf(n); a != nil && len(a.Tasks) > 0 {
				return true
			}
		}
	}
	return false
}

// registered reports whether some pool has a registration form: where the manager
// rules judge (every action after the first registration).
func registered(s *model.State, lay *winkowski.Layout) bool {
	for _, id := range lay.Host {
		if h, ok := model.NodeAs[sim.Node](s, id); ok {
			if x := hostOf(h); x != nil {
				for i := range x.St {
					if len(x.St[i].Applications) > 0 {
						return true
					}
				}
			}
		}
	}
	return false
}

// accessing lists, for every task in ACCESSING, the resources it believes it uses.
func accessing(s *model.State, sys *winkowski.System, lay *winkowski.Layout) map[winkowski.TaskID][]winkowski.PoolUnit {
	out := map[winkowski.TaskID][]winkowski.PoolUnit{}
	for i := range sys.Agents {
		n, ok := model.NodeAs[sim.Node](s, lay.Agent[i])
		a := agentOf(n)
		if !ok || a == nil {
			continue
		}
		for _, t := range a.Tasks {
			if t.Status != winkowski.Accessing {
				continue
			}
			for k, p := range sys.Task(t.ID).Pools {
				u, _ := t.About[k].UnitOf(t.ID)
				out[t.ID] = append(out[t.ID], winkowski.PoolUnit{Pool: p, Unit: u})
			}
		}
	}
	return out
}

// modelExclusion: no resource is used by two tasks (WK-P1).
func modelExclusion(s *model.State, sys *winkowski.System, lay *winkowski.Layout) string {
	user := map[winkowski.PoolUnit]winkowski.TaskID{}
	for _, t := range sortedTasks(accessing(s, sys, lay)) {
		for _, pu := range t.units {
			if u, ok := user[pu]; ok {
				return fmt.Sprintf("tasks %d and %d both use resource %d of %s", u, t.id, pu.Unit, sys.PoolName(pu.Pool))
			}
			user[pu] = t.id
		}
	}
	return ""
}

// modelAllOrNothing: a task that uses its resources holds every one of them, by its
// managers' bookings (WK-P2).
func modelAllOrNothing(s *model.State, sys *winkowski.System, lay *winkowski.Layout) string {
	for _, t := range sortedTasks(accessing(s, sys, lay)) {
		for _, pu := range t.units {
			c := sys.Pools[pu.Pool].Host
			n, ok := model.NodeAs[sim.Node](s, lay.Host[c])
			h := hostOf(n)
			if !ok || h == nil {
				continue // a crashed manager: its state is gone (not in the default model)
			}
			for i, p := range h.Pools {
				if p == pu.Pool {
					if u, ok := h.St[i].UnitOf(t.id); !ok || u != pu.Unit {
						return fmt.Sprintf("task %d uses resource %d of %s without holding it", t.id, pu.Unit, sys.PoolName(p))
					}
				}
			}
		}
	}
	return ""
}

type taskUnits struct {
	id    winkowski.TaskID
	units []winkowski.PoolUnit
}

func sortedTasks(m map[winkowski.TaskID][]winkowski.PoolUnit) []taskUnits {
	out := make([]taskUnits, 0, len(m))
	for id, us := range m {
		out = append(out, taskUnits{id, us})
	}
	slices.SortFunc(out, func(a, b taskUnits) int { return int(a.id - b.id) })
	return out
}
