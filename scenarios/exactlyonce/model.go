package eoscen

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/simrun-dev/simrun/model"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// The model-checked configuration "exactlyonce" (issue 5, item 7): one agent, two
// stages — the launch stage {n0} and stage 1 {n0 (worker), n1, n2} (three nodes; with
// -p home=separate the launch stage gets its own node and stage 1 is {n1,n2,n3}) —
// FIFO links, a crash budget of 1 (any node, restart always possible), and untimed
// timers: every pending timer may fire at any moment, which covers every timing
// (early and late timeouts, every interleaving with messages). Properties:
//
//	EO-P1   always: at most one commit per stage, stage 1 only after stage 0 (ghost)
//	EO-I1   always: at most one orchestrator per stage in Ready or Committed (stable
//	        storage of every node, crashed ones included)
//	EO-2/3  always: no stage 1 node commits a Put of a stage 0 transaction that did
//	        not commit, or aborts one of the transaction that did (ghost)
//	EO-P2   always: the stage's reservation takes effect at most once (ghost; only
//	        with -p pool=true)
//	EO-2/6  always: a node coordinates a transaction only for a stage Active in its
//	        queue (a forgotten stage leaves none running: GIVE_UP)
//	EO-4    always: a stored stage record or prepared Put holds the agent at the
//	        stage's hop (stable storage of every node)
//	EO-P5   always: a crash-free end state after completion (nothing in flight, no
//	        timer, every node up) holds no record of the agent (stable storage);
//	        with a witness that such end states are reached
//	done    sometimes: the agent completes (the search reaches the protocol's goal)
//	compete sometimes: a voter answers COND_YES (two orchestrators competed)
//
// The defaults are explored exhaustively (4,077,594 distinct states; the number is
// pinned in model_test.go). Bounds and abstractions, each a parameter:
//
//   - attempts=1: a node begins at most one stage transaction, and selects itself at
//     most once, per stage (Config.MaxAttempts; counted in stable storage, so a
//     restart does not renew them). Three nodes may still run three competing
//     transactions for stage 1. A retry or monitor timer that could only start what
//     the bound forbids is not armed (its firing would be a no-op).
//   - resends=-1: no periodic re-sending (Config.Resends): every message is sent
//     once; recovery actions taken at a restart (INQUIRY, STATUS, COMMIT and FORGET
//     of logged decisions) and first transmissions are not bounded. Re-sends exist
//     for lost messages, and in this model a message is lost only when its receiver
//     crashes; safety cannot depend on a message being sent twice.
//   - inflight=4: states with more than 4 messages in flight are checked but not
//     expanded (a state constraint, like TLC's). 4 is the least value that lets the
//     crash-free run complete: stage 0's COMMITs and stage 1's VOTEs are in flight
//     together.
//   - selection=abstract: the selection protocol (EO-8) is replaced by its weakest
//     form, an observer may become a worker at any time (paper §3: "each observer
//     ... could select itself"). It allows every behaviour the real selection
//     protocol has and more, so voting (EO-5..EO-7) alone must keep EO-P1 and EO-I1;
//     -p selection=protocol checks EO-8 itself (a far larger space).
//
// Raising a bound enlarges the space quickly: with crashes=0, the defaults give
// 242,468 states, attempts=2 or resends=1 more than 2 million (not finished).

// ModelParams are the parameters of the "exactlyonce" model.
var ModelParams = []model.Param{
	{Name: "observers", Default: "2", Help: "observers of stage 1 (stage 1 has 1+observers nodes)"},
	{Name: "home", Default: "worker", Help: "worker: the launch stage runs on stage 1's worker n0 (3 nodes); separate: on its own node n0 (stage 1 is n1..)"},
	{Name: "crashes", Default: "1", Help: "crash budget (0..3)"},
	{Name: "crashable", Default: "", Help: "nodes that may crash, comma-separated (default: every node)"},
	{Name: "attempts", Default: "1", Help: "stage transactions (and self-selections) a node may begin per stage"},
	{Name: "inflight", Default: "4", Help: "do not expand states with more messages in flight"},
	{Name: "resends", Default: "-1", Help: "rounds of periodic re-sending per node (0 = unbounded, -1 = none)"},
	{Name: "pool", Default: "false", Help: "stage 1 reserves a seat (adds the resource service and EO-P2)"},
	{Name: "selection", Default: "abstract", Help: "abstract (an observer may become worker at any time, no selection messages) or protocol (EO-8 as specified)"},
	{Name: "majority-select", Default: "false", Help: "majority-ACK selection variant (selection=protocol)"},
	{Name: "bug", Default: "none", Help: "deliberately broken variant: " + joinBugs()},
}

func init() {
	model.Register(model.Model{
		Name:   "exactlyonce",
		Help:   "exactly-once agents: 1 agent, stages {n0} and {n0,n1,n2}, FIFO, crash budget 1; EO-P1 and EO-I1 invariants",
		Params: ModelParams,
		Build: func(p *model.Params) (model.System, error) {
			o := ModelOptions{
				Observers:      p.IntRange("observers", 0, 4),
				Crashes:        p.IntRange("crashes", 0, 3),
				Attempts:       p.IntRange("attempts", 1, 10),
				InFlight:       p.IntRange("inflight", 1, 64),
				Resends:        p.IntRange("resends", -1, 10),
				Pool:           p.Bool("pool"),
				MajoritySelect: p.Bool("majority-select"),
			}
			bug := p.String("bug")
			switch home := p.String("home"); home {
			case "separate":
			case "worker":
				o.HomeIsWorker = true
			default:
				return nil, fmt.Errorf("parameter home=%q: want separate or worker", home)
			}
			switch sel := p.String("selection"); sel {
			case "abstract":
				o.AbstractSelection = true
			case "protocol":
			default:
				return nil, fmt.Errorf("parameter selection=%q: want abstract or protocol", sel)
			}
			o.Crashable = p.List("crashable")
			if p.Err() != nil {
				return nil, p.Err()
			}
			pol, err := BugPolicy(bug)
			if err != nil {
				return nil, fmt.Errorf("parameter bug: %w", err)
			}
			o.Policy = pol
			return ModelSystem(o)
		},
	})
}

// ModelOptions configures ModelSystem.
type ModelOptions struct {
	Observers         int
	Crashes           int
	Crashable         []string // node names; nil = every node
	HomeIsWorker      bool     // the launch stage runs on stage 1's worker (one node fewer)
	Attempts          int
	InFlight          int
	Resends           int
	Pool              bool
	MajoritySelect    bool
	AbstractSelection bool
	// Policy plants a broken variant (the zero Policy: the protocol).
	Policy eo.Policy
}

// Ghost is the model's monitor of what happened (folded over observations).
type Ghost struct {
	Commits  [2]uint8 // commits per stage
	OutOrder bool     // a stage committed before the one before it
	Returns  uint8    // stage 1 reservations committed
	Done     bool
	CondYes  bool
	// Put0 is the Tid of stage 0's committed transaction, the only one whose Puts
	// (to stage 1's nodes) may commit; Torn records a participant that committed a Put
	// of another transaction, or aborted a Put of Put0 after its commit (EO-2/EO-3).
	// With one stage 0 transaction per node (attempts=1), Put0 adds no state.
	Put0 eo.Tid
	Torn bool
}

func foldGhost(g any, o sim.Observation) any {
	x := g.(Ghost)
	switch v := o.Value.(type) {
	case eo.PutChange:
		switch v.State {
		case eo.PutCommitted:
			x.Torn = x.Torn || x.Commits[0] == 0 || v.Tid != x.Put0
		case eo.PutAborted:
			x.Torn = x.Torn || (x.Commits[0] > 0 && v.Tid == x.Put0)
		}
	case eo.Committed:
		if v.Stage.Hop > 0 && x.Commits[v.Stage.Hop-1] == 0 {
			x.OutOrder = true
		}
		if v.Stage.Hop == 0 {
			x.Put0 = v.Tid
		}
		x.Commits[v.Stage.Hop]++
	case eo.ResReturn:
		x.Returns++
	case eo.Done:
		x.Done = true
	case eo.CondYesGiven:
		x.CondYes = true
	}
	if x == g.(Ghost) {
		return g // unchanged: no new boxed value
	}
	return x
}

// PropRunning names the model's EO-2/EO-6 invariant on running transactions.
const PropRunning = "EO-2/EO-6 transactions run only for Active stages"

// orphaner is the node method PropRunning reads. An interface rather than *eo.Node:
// the tests explore wrapped nodes (cow_test.go), which must not make it vacuous.
type orphaner interface {
	OrphanTransaction() (eo.StageID, bool)
}

// PropStored names the model's EO-4 invariant.
const PropStored = "EO-4 stored agents are at their stage's hop"

// WitnessP5 names the model's witness that EO-P5 was judged on some state.
const WitnessP5 = "a crash-free run ends after completing (EO-P5 judged)"

// endsDone reports a crash-free end state after the agent completed: no message in
// flight, no pending timer or injection, every node up.
func endsDone(s *model.State) bool {
	if !model.GhostAs[Ghost](s).Done || s.Faults().Crashes > 0 || s.NumInFlight() > 0 {
		return false
	}
	for i := 0; i < s.NumNodes(); i++ {
		n := sim.NodeID(i)
		if !s.Up(n) || len(s.Timers(n)) > 0 || s.PendingInjections(n) > 0 {
			return false
		}
	}
	return true
}

// leftovers lists the agent's protocol records still in stable storage (EO-P5).
func leftovers(s *model.State) []string {
	var out []string
	for i := 0; i < s.NumNodes(); i++ {
		for _, it := range eo.Inspect(s.Stable(sim.NodeID(i))) {
			switch it.Kind {
			case eo.StableQueue, eo.StableOrchSet, eo.StableOrch, eo.StablePrepared, eo.StableCommit, eo.StableResPrep:
				out = append(out, s.Name(sim.NodeID(i))+" "+it.Key)
			}
		}
	}
	return out
}

// ModelSystem builds the model's actor system.
func ModelSystem(o ModelOptions) (*model.Actors, error) {
	first := 1 // stage 1's first node
	if o.HomeIsWorker {
		first = 0
	}
	n := first + 1 + o.Observers
	names := systemNames(n)
	stage1 := make([]string, 0, n-first)
	for i := first; i < n; i++ {
		stage1 = append(stage1, names[i])
	}
	pool := ""
	if o.Pool {
		pool = "seats"
	}
	it, err := eo.ParseItinerary("n0 | "+strings.Join(stage1, ","), names, pool)
	if err != nil {
		return nil, err
	}
	cfg := &eo.Config{
		Names: names, MajoritySelect: o.MajoritySelect, Capacity: 1,
		Timing: eo.DefaultTiming(), MaxAttempts: o.Attempts, Resends: o.Resends, Policy: o.Policy,
		AbstractSelection: o.AbstractSelection,
	}
	facts := newStoreFacts()
	props := []model.Property[*model.State]{
		model.Always(PropP1, func(s *model.State) bool {
			g := model.GhostAs[Ghost](s)
			return g.Commits[0] <= 1 && g.Commits[1] <= 1 && !g.OutOrder
		}),
		model.Always(PropI1, func(s *model.State) bool {
			var live [2]int
			for i := 0; i < s.NumNodes(); i++ {
				f := facts.of(s.Stable(sim.NodeID(i)))
				for k, l := range f.live {
					if l {
						live[k]++
					}
				}
			}
			return live[0] <= 1 && live[1] <= 1
		}),
		model.Always(PropA, func(s *model.State) bool { return !model.GhostAs[Ghost](s).Torn }),
		// EO-2/EO-6: a node coordinates a stage transaction only for a stage Active in
		// its input queue; a stage forgotten (committed elsewhere: FORGET, GIVE_UP)
		// leaves no transaction running.
		model.Always(PropRunning, func(s *model.State) bool {
			for i := 0; i < s.NumNodes(); i++ {
				if n, ok := s.Node(sim.NodeID(i)).(orphaner); ok {
					if _, orphan := n.OrphanTransaction(); orphan {
						return false
					}
				}
			}
			return true
		}),
		// EO-4: the agent a stage record (or a prepared Put) holds is at that stage's
		// hop, on every node, crashed ones included.
		model.Always(PropStored, func(s *model.State) bool {
			for i := 0; i < s.NumNodes(); i++ {
				if !facts.of(s.Stable(sim.NodeID(i))).atHop {
					return false
				}
			}
			return true
		}),
		// EO-P5 at the model's end states: once the agent is done and nothing is left
		// to happen (no message in flight, no timer, every node up), no node keeps a
		// record of it. Only crash-free paths are judged: without periodic re-sending
		// (resends=-1) a message lost to a crash is never repeated, so a record may
		// legitimately wait for good; the witness below shows such end states exist.
		model.Always(PropP5, func(s *model.State) bool { return !endsDone(s) || len(leftovers(s)) == 0 }),
		model.Sometimes(WitnessP5, endsDone),
		model.Sometimes("the agent completes", func(s *model.State) bool { return model.GhostAs[Ghost](s).Done }),
		model.Sometimes("a voter answers COND_YES", func(s *model.State) bool { return model.GhostAs[Ghost](s).CondYes }),
	}
	if o.Pool {
		props = append(props, model.Always(PropP2, func(s *model.State) bool { return model.GhostAs[Ghost](s).Returns <= 1 }))
	}
	var crashable []sim.NodeID
	for _, c := range o.Crashable {
		i := slices.Index(names, c)
		if i < 0 {
			return nil, fmt.Errorf("parameter crashable: unknown node %q (nodes: %s)", c, strings.Join(names, ", "))
		}
		crashable = append(crashable, sim.NodeID(i))
	}
	limit := o.InFlight
	return &model.Actors{
		Name:       "exactlyonce",
		Nodes:      eo.System(cfg),
		Inject:     []model.Injection{{To: 0, Msg: eo.Launch{Agent: eo.Agent{ID: 1, Itinerary: it}}}},
		Crashes:    model.Crashes{Budget: o.Crashes, Nodes: crashable},
		Ghost:      model.Ghost{Init: Ghost{}, Fold: foldGhost},
		Properties: props,
		Boundary:   func(s *model.State) bool { return s.NumInFlight() <= limit },
		// The nodes draw random bits only for retry jitter (a timer's duration), which
		// untimed mode does not keep: their calls can be memoized.
		Memoize: true,
	}, nil
}

// storeFacts is what the invariants EO-I1 and EO-4 read of one node's stable storage:
// whether it holds a live (Ready or Committed) orchestrator record of stage 0 and of
// stage 1, and whether its stored agents are at their stages' hops.
type storeFacts struct {
	live  [2]bool
	atHop bool
}

// orchKeys are the orchestrator records' keys of the model's two stages.
var orchKeys = [2]string{eo.OrchKey(eo.StageID{Agent: 1, Hop: 0}), eo.OrchKey(eo.StageID{Agent: 1, Hop: 1})}

func factsOf(st *sim.Storage) storeFacts {
	var f storeFacts
	for k, key := range orchKeys {
		f.live[k] = eo.OrchStateAt(st, key) != eo.OrchUnknown
	}
	f.atHop = eo.StoredAtHop(st)
	return f
}

// factCache remembers storeFacts per storage, for one model instance. The checker
// stores each distinct storage once and never modifies it (states share it), so a
// storage's address names its contents: the invariants, evaluated on every state,
// look each storage up instead of searching it.
type factCache struct{ m sync.Map } // *sim.Storage → storeFacts

func newStoreFacts() *factCache { return &factCache{} }

// verifyFacts makes every lookup recompute the facts and compare (tests).
var verifyFacts bool

func (c *factCache) of(st *sim.Storage) storeFacts {
	if v, ok := c.m.Load(st); ok {
		f := v.(storeFacts)
		if verifyFacts && f != factsOf(st) {
			panic(fmt.Sprintf("cached storage facts %+v, recomputed %+v", f, factsOf(st)))
		}
		return f
	}
	f := factsOf(st)
	c.m.Store(st, f)
	return f
}
