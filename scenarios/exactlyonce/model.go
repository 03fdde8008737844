package eoscen

import (
	"fmt"
	"reflect"
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
//	EO-5    always: an orchestrator decides as soon as its votes do (a COND_YES whose
//	        set all said YES counts, a majority with its own vote is Ready, half NO
//	        or its own NO gives up: an even stage's tie too), read from the nodes
//	EO-5    always: a Ready or Committed orchestrator stands on a majority of YES
//	        votes, as the voters' stable OrchSets show (a COND_YES(S) counts once all
//	        of S did), before any FORGET
//	EO-5    always: a COND_YES counts only once its whole set voted YES (where a
//	        COND_YES can exist)
//	EO-7    always: a voter holding votes has its INQUIRY timer pending, unless its
//	        re-send rounds are spent (not with -p recovery=false)
//	done    sometimes: the agent completes (the search reaches the protocol's goal)
//	compete sometimes: a voter answers COND_YES (two orchestrators competed; asked
//	        only where one can: three stage nodes and a second orchestrator)
//
// Every invariant says in which states it is about something (Property.When), so a
// coverage report tells an invariant that judged nothing. The defaults are explored
// exhaustively (4,077,594 distinct states; the number is pinned in model_test.go).
// Bounds and abstractions, each a parameter:
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
//   - inflight=auto: states with more messages in flight than twice the observers
//     (at least 4; one more with a third stage) are checked but not expanded (a state
//     constraint, like TLC's): the least that lets the crash-free run complete, since
//     stage 0's COMMITs and stage 1's VOTEs are in flight together.
//   - selectors=auto: every observer may select itself in a stage of up to three
//     nodes; in a larger one only the lowest-priority node (two orchestrators
//     compete), unless the parameter names them.
//   - recovery=auto: without crashes in a stage of four nodes or more, the STATUS and
//     INQUIRY timers are not armed (Config.NoRecoveryTimers: crash-free, they only ask
//     again, and firing at any moment they cost a hundredfold in states).
//   - selection=abstract: the selection protocol (EO-8) is replaced by its weakest
//     form, an observer may become a worker at any time (paper §3: "each observer
//     ... could select itself"). It allows every behaviour the real selection
//     protocol has and more, so voting (EO-5..EO-7) alone must keep EO-P1 and EO-I1;
//     -p selection=protocol checks EO-8 itself (a far larger space).
//
// Raising a bound enlarges the space quickly: with crashes=0, the defaults give
// 242,468 states, attempts=2 or resends=1 more than 2 million (not finished). The
// portfolio (Portfolio) picks small configurations that between them reach every
// rule the swarm does not: even and odd stages, four-node stages with two and three
// orchestrators, the real selection protocol in both variants, crash-recovery with
// crashes part-way through a broadcast (midsend), a third stage (then) and a second
// transaction per node.

// ModelParams are the parameters of the "exactlyonce" model.
var ModelParams = []model.Param{
	{Name: "observers", Default: "2", Help: "observers of stage 1 (stage 1 has 1+observers nodes)"},
	{Name: "home", Default: "worker", Help: "worker: the launch stage runs on stage 1's worker n0 (3 nodes); separate: on its own node n0 (stage 1 is n1..)"},
	{Name: "crashes", Default: "1", Help: "crash budget (0..3)"},
	{Name: "crashable", Default: "", Help: "nodes that may crash, comma-separated (default: every node)"},
	{Name: "attempts", Default: "1", Help: "stage transactions (and self-selections) a node may begin per stage"},
	{Name: "inflight", Default: "auto", Help: "do not expand states with more messages in flight (auto: the least that lets a crash-free run complete, 4 or twice the observers)"},
	{Name: "resends", Default: "-1", Help: "rounds of periodic re-sending per node (0 = unbounded, -1 = none)"},
	{Name: "pool", Default: "false", Help: "stage 1 reserves a seat (adds the resource service and EO-P2)"},
	{Name: "selection", Default: "abstract", Help: "abstract (an observer may become worker at any time, no selection messages) or protocol (EO-8 as specified)"},
	{Name: "majority-select", Default: "false", Help: "majority-ACK selection variant (selection=protocol)"},
	{Name: "selectors", Default: "auto", Help: "the only nodes that may select themselves (become workers other than the initial one), comma-separated, or none, or all (auto: all in a stage of up to 3 nodes, else the lowest-priority node only)"},
	{Name: "recovery", Default: "auto", Help: "arm the recovery timers (STATUS of an in-doubt participant, a voter's INQUIRY): true, false (only without crashes), or auto (false only without crashes in a stage of 4 nodes or more)"},
	{Name: "then", Default: "", Help: "a node for a third stage after stage 1 (stage 1's transaction then Puts the agent there, and its orchestrator is Ready before it commits); default: none"},
	{Name: "midsend", Default: "false", Help: "a crash may also cut a handler call's sends short (Crashes.MidSend: some of its messages leave, the rest never do)"},
	{Name: "bug", Default: "none", Help: "deliberately broken variant: " + joinBugs()},
}

func init() {
	model.Register(model.Model{
		Name:      "exactlyonce",
		Help:      "exactly-once agents: 1 agent, stages {n0} and {n0,n1,n2}, FIFO, crash budget 1; EO-P1 and EO-I1 invariants",
		Params:    ModelParams,
		Portfolio: Portfolio,
		Build: func(p *model.Params) (model.System, error) {
			o, err := modelOptions(p)
			if err != nil {
				return nil, err
			}
			return ModelSystem(o)
		},
	})
}

// modelOptions reads the model's parameters.
func modelOptions(p *model.Params) (ModelOptions, error) {
	o := ModelOptions{
		Observers: p.IntRange("observers", 0, 4),
		Crashes:   p.IntRange("crashes", 0, 3),
		Attempts:  p.IntRange("attempts", 1, 10),

		Resends:        p.IntRange("resends", -1, 10),
		Pool:           p.Bool("pool"),
		MajoritySelect: p.Bool("majority-select"),
		MidSend:        p.Bool("midsend"),
	}
	if v := p.String("inflight"); v != "auto" {
		o.InFlight = p.IntRange("inflight", 1, 64)
	}
	bug := p.String("bug")
	switch home := p.String("home"); home {
	case "separate":
	case "worker":
		o.HomeIsWorker = true
	default:
		return o, fmt.Errorf("parameter home=%q: want separate or worker", home)
	}
	switch sel := p.String("selection"); sel {
	case "abstract":
		o.AbstractSelection = true
	case "protocol":
	default:
		return o, fmt.Errorf("parameter selection=%q: want abstract or protocol", sel)
	}
	o.Crashable = p.List("crashable")
	o.Then = p.String("then")
	switch sel := p.List("selectors"); {
	case len(sel) == 1 && sel[0] == "none":
		o.Selectors = []string{} // no observer selects itself
	case len(sel) == 1 && sel[0] == "all":
	case len(sel) == 1 && sel[0] == "auto":
		if o.Observers >= 3 {
			o.Selectors = []string{fmt.Sprintf("n%d", o.Observers-btoi(o.HomeIsWorker)+1)}
		}
	default:
		o.Selectors = sel
	}
	switch rec := p.String("recovery"); rec {
	case "true":
	case "false":
		o.NoRecoveryTimers = true
	case "auto":
		o.NoRecoveryTimers = o.Crashes == 0 && o.Observers >= 3
	default:
		return o, fmt.Errorf("parameter recovery=%q: want true, false or auto", rec)
	}
	if o.NoRecoveryTimers && o.Crashes > 0 {
		return o, fmt.Errorf("parameter recovery=false: only without crashes (crashes=%d): a crash loses messages only the recovery timers ask again", o.Crashes)
	}
	if p.Err() != nil {
		return o, p.Err()
	}
	pol, err := BugPolicy(bug)
	if err != nil {
		return o, fmt.Errorf("parameter bug: %w", err)
	}
	o.Policy = pol
	return o, nil
}

// Portfolio is what `simrun check exactlyonce` runs with no -p: configurations that
// together with the default swarm (exactlyonce/swarm, seeds 1-2000) reach every rule
// of the protocol's rule map, each exhaustive within its bounds in well under a minute
// on one core (BFS). TestCoverage checks that every one passes and that with the
// swarm they reach every rule; TestPlantedBugsCaught, that one-line bugs of the rules
// the model reaches best are caught by them.
var Portfolio = []model.Config{
	{Name: "three-nodes", Help: "stage {n0,n1,n2}, no crash: two or three orchestrators compete (NO, COND_YES, HIGHER_PRIO, UN_VOTE)",
		Params: map[string]string{"crashes": "0"}},
	{Name: "home-apart", Help: "the launch node apart from stage {n1,n2,n3}: stage 0's Puts go to three remote participants, no crash",
		Params: map[string]string{"home": "separate", "crashes": "0"}},
	{Name: "observer-crash", Help: "stage {n0,n1,n2}; n1 may crash once, also part-way through a call's sends (recovery of a voter and a selected worker)",
		Params: map[string]string{"crashable": "n1", "midsend": "true"}},
	{Name: "coordinator-crash", Help: "launch node n0 apart from stage {n1,n2}; two crashes of any node, also part-way through a broadcast (COMMIT, VOTE, FORGET), with the resource service",
		Params: map[string]string{"home": "separate", "observers": "1", "crashes": "2", "midsend": "true", "pool": "true"}},
	{Name: "two-nodes", Help: "even stage {n0,n1} (a single NO is a tie), two crashes, part-way through sends too, with the resource service",
		Params: map[string]string{"observers": "1", "crashes": "2", "midsend": "true", "pool": "true"}},
	{Name: "four-nodes", Help: "even stage {n0,n1,n2,n3} without crashes, n3 competing with the worker (two NO are a tie)",
		Params: map[string]string{"observers": "3", "crashes": "0"}},
	{Name: "three-orchestrators", Help: "stage {n0,n1,n2,n3} without crashes, n2 and n3 competing with the worker: COND_YES over two orchestrators, converted only when both voted YES",
		Params: map[string]string{"observers": "3", "crashes": "0", "selectors": "n2,n3"}},
	{Name: "selection", Help: "the selection protocol of EO-8 in stage {n0,n1,n2}, no crash (ARE_YOU_THERE, I_AM_THERE, I_AM_SELECTED)",
		Params: map[string]string{"selection": "protocol", "crashes": "0"}},
	{Name: "majority-selection", Help: "EO-8's majority-ACK variant in stage {n0,n1,n2}, no crash",
		Params: map[string]string{"selection": "protocol", "majority-select": "true", "crashes": "0"}},
	{Name: "selection-crash", Help: "the selection protocol in stage {n0,n1} with a crash of either node",
		Params: map[string]string{"selection": "protocol", "observers": "1", "crashes": "1"}},
	{Name: "majority-selection-four", Help: "EO-8's majority-ACK variant in the even stage {n0,n1,n2,n3}, no crash",
		Params: map[string]string{"selection": "protocol", "majority-select": "true", "observers": "3", "crashes": "0"}},
	{Name: "retries", Help: "stage {n0,n1} without crashes, two stage transactions per node: a late UN_VOTE of a node's first transaction meets its second",
		Params: map[string]string{"observers": "1", "attempts": "2", "crashes": "0"}},
	{Name: "three-stages", Help: "stages {n0}, {n1,n2}, {n0} without crashes: stage 1's orchestrator stays Ready while its Put to n0 is prepared (INQUIRY and HIGHER_PRIO meet a Ready orchestrator)",
		Params: map[string]string{"home": "separate", "observers": "1", "then": "n0", "crashes": "0"}},
	{Name: "inquiry-rounds", Help: "stage {n0,n1} with a crash and two rounds of periodic re-sending per node (INQUIRY, VOTE, FORGET, COMMIT and STATUS repeated)",
		Params: map[string]string{"observers": "1", "resends": "2"}},
}

// ModelOptions configures ModelSystem.
type ModelOptions struct {
	Observers int
	Crashes   int
	Crashable []string // node names; nil = every node
	Selectors []string // node names that may select themselves; nil = every node
	MidSend   bool     // a crash may cut a call's sends short
	// Then, when set, names the node of a third stage (stage 1's transaction then
	// Puts the agent there: its orchestrator is Ready before it commits).
	Then string
	// NoRecoveryTimers: no STATUS or INQUIRY timer (crash-free only; see
	// eo.Config.NoRecoveryTimers).
	NoRecoveryTimers bool
	HomeIsWorker     bool // the launch stage runs on stage 1's worker (one node fewer)
	Attempts         int
	// InFlight bounds the messages in flight of an expanded state (0: the least
	// that lets a crash-free run complete, see AutoInFlight).
	InFlight          int
	Resends           int
	Pool              bool
	MajoritySelect    bool
	AbstractSelection bool
	// Policy plants a broken variant (the zero Policy: the protocol).
	Policy eo.Policy
	// plant, in tests, plants a broken variant from test code (planted_test.go).
	plant *planting
}

// Ghost is the model's monitor of what happened (folded over observations).
type Ghost struct {
	Commits  [3]uint8 // commits per stage
	OutOrder bool     // a stage committed before the one before it
	Returns  [3]uint8 // reservations committed, per stage
	Done     bool
	CondYes  bool
	// Put[h] is the Tid of stage h's committed transaction, the only one whose Puts
	// (to stage h+1's nodes) may commit; Torn records a participant that committed a
	// Put of another transaction, or aborted a Put of Put[h] after its commit
	// (EO-2/EO-3). With one stage 0 transaction per node (attempts=1), Put[0] adds no
	// state.
	Put  [2]eo.Tid
	Torn bool
}

func foldGhost(g any, o sim.Observation) any {
	x := g.(Ghost)
	switch v := o.Value.(type) {
	case eo.PutChange:
		h := v.Stage.Hop - 1 // the stage whose transaction Puts
		switch v.State {
		case eo.PutCommitted:
			x.Torn = x.Torn || x.Commits[h] == 0 || v.Tid != x.Put[h]
		case eo.PutAborted:
			x.Torn = x.Torn || (x.Commits[h] > 0 && v.Tid == x.Put[h])
		}
	case eo.Committed:
		if v.Stage.Hop > 0 && x.Commits[v.Stage.Hop-1] == 0 {
			x.OutOrder = true
		}
		if !v.Last {
			x.Put[v.Stage.Hop] = v.Tid
		}
		x.Commits[v.Stage.Hop]++
	case eo.ResReturn:
		x.Returns[v.Hop]++
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

// Names of the model's own properties.
const (
	// PropRunning is the EO-2/EO-6 invariant on running transactions.
	PropRunning = "EO-2/EO-6 transactions run only for Active stages"
	// PropDecide is EO-5's "the votes decide at once" invariant.
	PropDecide = "EO-5 an orchestrator decides as soon as its votes do"
	// PropCondYes is EO-5's conversion rule of conditional votes.
	PropCondYes = "EO-5 a COND_YES counts only once its whole set voted YES"
	// PropSupport is EO-5's majority of YES votes behind a Ready orchestrator.
	PropSupport = "EO-5 a Ready or Committed orchestrator stands on a majority of YES votes"
	// PropInquiryDue is EO-7's "a voter holding votes keeps asking" invariant.
	PropInquiryDue = "EO-7 a voter holding votes has an INQUIRY coming"
	// WitnessDone and WitnessCondYes are the model's sometimes-properties.
	WitnessDone    = "the agent completes"
	WitnessCondYes = "a voter answers COND_YES"
)

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
	route := "n0 | " + strings.Join(stage1, ",")
	if o.Then != "" {
		if !slices.Contains(names, o.Then) {
			return nil, fmt.Errorf("parameter then: unknown node %q (nodes: %s)", o.Then, strings.Join(names, ", "))
		}
		route += " | " + o.Then
	}
	it, err := eo.ParseItinerary(route, names, pool)
	if err != nil {
		return nil, err
	}
	var selectors []sim.NodeID
	for _, c := range o.Selectors {
		i := slices.Index(names, c)
		if i < 0 {
			return nil, fmt.Errorf("parameter selectors: unknown node %q (nodes: %s)", c, strings.Join(names, ", "))
		}
		selectors = append(selectors, sim.NodeID(i))
	}
	cfg := &eo.Config{
		Names: names, MajoritySelect: o.MajoritySelect, Capacity: 1,
		Timing: eo.DefaultTiming(), MaxAttempts: o.Attempts, Resends: o.Resends, Policy: o.Policy,
		AbstractSelection: o.AbstractSelection, Selectors: selectors, NoRecoveryTimers: o.NoRecoveryTimers,
	}
	if o.Selectors != nil && selectors == nil {
		cfg.Selectors = []sim.NodeID{} // none may select itself
	}
	nodes := eo.System(cfg)
	if pl := o.plant; pl != nil {
		if pl.policy != nil {
			pl.policy(&cfg.Policy)
		}
		if pl.wrap != nil {
			for i := range nodes {
				build := nodes[i].New
				nodes[i].New = func() sim.Node { return pl.wrap(build()) }
			}
		}
	}
	facts := newStoreFacts()
	ghost := func(s *model.State) Ghost { return model.GhostAs[Ghost](s) }
	anyNode := func(s *model.State, f func(i sim.NodeID) bool) bool {
		for i := 0; i < s.NumNodes(); i++ {
			if f(sim.NodeID(i)) {
				return true
			}
		}
		return false
	}
	props := []model.Property[*model.State]{
		model.Always(PropP1, func(s *model.State) bool {
			g := ghost(s)
			return g.Commits[0] <= 1 && g.Commits[1] <= 1 && g.Commits[2] <= 1 && !g.OutOrder
		}).When(func(s *model.State) bool { g := ghost(s); return g.Commits[0]+g.Commits[1]+g.Commits[2] > 0 }),
		model.Always(PropI1, func(s *model.State) bool {
			var live [3]int
			for i := 0; i < s.NumNodes(); i++ {
				f := facts.of(s.Stable(sim.NodeID(i)))
				for k, l := range f.live {
					if l {
						live[k]++
					}
				}
			}
			return live[0] <= 1 && live[1] <= 1 && live[2] <= 1
		}).When(func(s *model.State) bool {
			return anyNode(s, func(i sim.NodeID) bool { f := facts.of(s.Stable(i)); return f.live[0] || f.live[1] || f.live[2] })
		}),
		model.Always(PropA, func(s *model.State) bool { return !ghost(s).Torn }).
			When(func(s *model.State) bool { return ghost(s).Commits[0] > 0 }),
		// EO-2/EO-6: a node coordinates a stage transaction only for a stage Active in
		// its input queue; a stage forgotten (committed elsewhere: FORGET, GIVE_UP)
		// leaves no transaction running.
		model.Always(PropRunning, func(s *model.State) bool {
			return !anyNode(s, func(i sim.NodeID) bool {
				n, ok := s.Node(i).(inspector)
				if !ok {
					return false
				}
				_, orphan := n.OrphanTransaction()
				return orphan
			})
		}).When(func(s *model.State) bool {
			return anyNode(s, func(i sim.NodeID) bool { n, ok := s.Node(i).(inspector); return ok && n.Coordinating() > 0 })
		}),
		// EO-4: the agent a stage record (or a prepared Put) holds is at that stage's
		// hop, on every node, crashed ones included.
		model.Always(PropStored, func(s *model.State) bool {
			return !anyNode(s, func(i sim.NodeID) bool { return !facts.of(s.Stable(i)).atHop })
		}).When(func(s *model.State) bool {
			return anyNode(s, func(i sim.NodeID) bool { return facts.of(s.Stable(i)).agents })
		}),
		// EO-P5 at the model's end states: once the agent is done and nothing is left
		// to happen (no message in flight, no timer, every node up), no node keeps a
		// record of it. Only crash-free paths are judged: without periodic re-sending
		// (resends=-1) a message lost to a crash is never repeated, so a record may
		// legitimately wait for good; the witness below shows such end states exist.
		model.Always(PropP5, func(s *model.State) bool { return !endsDone(s) || len(leftovers(s)) == 0 }).When(endsDone),
		// EO-5: an orchestrator decides as soon as its votes do — a COND_YES counts
		// as YES once its whole set is in YesVotes, Ready with a majority of YES that
		// includes its own voter's, rm_no once at least half of the voters (or its own
		// voter) said NO — so no transaction still votes with something already
		// decided (an even stage's tie included). Its own computation, not the
		// protocol's CondYesHolds and CountVotes.
		model.Always(PropDecide, func(s *model.State) bool {
			return !anyNode(s, func(i sim.NodeID) bool {
				n, ok := s.Node(i).(inspector)
				return ok && slices.ContainsFunc(n.VotingNow(), func(v eo.Voting) bool { return decided(v, i) })
			})
		}).When(func(s *model.State) bool {
			return anyNode(s, func(i sim.NodeID) bool { n, ok := s.Node(i).(inspector); return ok && len(n.VotingNow()) > 0 })
		}),
		// EO-7: a voter holding votes has its next INQUIRY coming (the timer is
		// pending) until FORGET or every UN_VOTE, unless Config.Resends has no
		// re-send round left for it.
		// EO-5: an orchestrator Ready (or Committed) with transaction T has a majority
		// of the stage's voters behind it, its own included, as their stable OrchSets
		// show while every node still holds the stage (before any FORGET): a voter
		// supports T when its OrchSet holds (H, T) and every entry of lower priority
		// than H is itself a supporter (a COND_YES(S) counts once all of S said YES;
		// support is the least set closed under that rule).
		model.Always(PropSupport, func(s *model.State) bool {
			for _, c := range liveOrchs(s, facts) {
				if !c.judged {
					continue
				}
				if sup := support(s, facts, c); len(sup) < c.rec.Majority() || !slices.Contains(sup, c.orch) {
					return false
				}
			}
			return true
		}).When(func(s *model.State) bool {
			return slices.ContainsFunc(liveOrchs(s, facts), func(c liveOrch) bool { return c.judged })
		}),
		model.Sometimes(WitnessP5, endsDone),
		model.Sometimes(WitnessDone, func(s *model.State) bool { return ghost(s).Done }),
	}
	if !o.NoRecoveryTimers {
		// EO-7: a voter holding votes has its next INQUIRY coming (the timer is
		// pending) until FORGET or every UN_VOTE, unless Config.Resends has no
		// re-send round left for it.
		props = append(props, model.Always(PropInquiryDue, func(s *model.State) bool {
			return !anyNode(s, func(i sim.NodeID) bool { return inquiryOverdue(s, facts, i) })
		}).When(func(s *model.State) bool {
			return anyNode(s, func(i sim.NodeID) bool { return s.Up(i) && facts.of(s.Stable(i)).votes })
		}))
	}
	if condYesPossible(o) {
		props = append(props,
			// EO-5: a voter counted YES by an orchestrator had every orchestrator of
			// lower priority it holds a vote for vote YES too: a COND_YES(S) becomes a YES
			// only once all of S is in YesVotes. (After its vote for H, a voter answers NO
			// to every orchestrator below H, so the entries below H in its OrchSet are the
			// S of its COND_YES, or what UN_VOTE left of it.) A Ready orchestrator adds to
			// YesVotes the voters that INQUIRY (EO-7) without counting them; those still
			// hold their COND_YES in CondYesVotes, unless it was lost to a crash: Ready
			// orchestrators are judged on crash-free paths, on the voters not in
			// CondYesVotes.
			model.Always(PropCondYes, func(s *model.State) bool {
				crashFree := s.Faults().Crashes == 0
				return !anyNode(s, func(h sim.NodeID) bool {
					n, ok := s.Node(h).(inspector)
					if !ok {
						return false
					}
					for _, v := range n.Tallies() {
						if v.Ready && !crashFree {
							continue
						}
						for _, y := range v.Yes {
							if y == h || slices.ContainsFunc(v.Cond, func(c eo.CondVote) bool { return c.Voter == y }) {
								continue
							}
							for _, e := range facts.of(s.Stable(y)).orchSets[v.Stage.Hop] {
								if e.Orch != h && v.Record.Higher(h, e.Orch) && !slices.Contains(v.Yes, e.Orch) {
									return true
								}
							}
						}
					}
					return false
				})
			}).When(func(s *model.State) bool { return ghost(s).CondYes }), // a COND_YES was given
			model.Sometimes(WitnessCondYes, func(s *model.State) bool { return ghost(s).CondYes }))
	}
	if o.Pool {
		props = append(props, model.Always(PropP2, func(s *model.State) bool { r := ghost(s).Returns; return r[1] <= 1 && r[2] <= 1 }).
			When(func(s *model.State) bool { r := ghost(s).Returns; return r[1]+r[2] > 0 }))
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
	if limit == 0 {
		limit = AutoInFlight(o.Observers, o.Then != "")
	}
	return &model.Actors{
		Name:       "exactlyonce",
		Nodes:      nodes,
		Inject:     []model.Injection{{To: 0, Msg: eo.Launch{Agent: eo.Agent{ID: 1, Itinerary: it}}}},
		Crashes:    model.Crashes{Budget: o.Crashes, Nodes: crashable, MidSend: o.MidSend},
		Ghost:      model.Ghost{Init: Ghost{}, Fold: foldGhost},
		Properties: props,
		Boundary:   func(s *model.State) bool { return s.NumInFlight() <= limit },
		// The nodes draw random bits only for retry jitter (a timer's duration), which
		// untimed mode does not keep: their calls can be memoized.
		Memoize: true,
	}, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// AutoInFlight is the model's default bound on messages in flight for a stage 1 of
// 1+observers nodes: the least that lets a crash-free run complete, since stage 0's
// COMMITs and stage 1's VOTEs to the observers are in flight together (and, with a
// third stage, stage 1's PREPARE to it).
func AutoInFlight(observers int, third bool) int { return max(4, 2*observers) + btoi(third) }

// condYesPossible reports whether a voter can answer COND_YES in the configuration,
// so that the model asks for the witness only where one can exist: it needs a voter
// holding a vote for one orchestrator when a higher one asks, so three stage nodes
// (in a stage of two, the only voter that is not the higher orchestrator's node votes
// for itself first) and a second orchestrator — an observer that may select itself
// abstractly, or, under the basic selection protocol, only after a crash (without
// one, a live worker answers every ARE_YOU_THERE, and the bound on messages in
// flight cuts the interleavings where the There timer fires before the answer
// arrives; the majority variant's claims make room for them).
func condYesPossible(o ModelOptions) bool {
	if o.Observers < 2 || (o.Selectors != nil && !slices.ContainsFunc(o.Selectors, func(n string) bool { return n != stageOneWorker(o) })) {
		return false
	}
	return o.AbstractSelection || o.Crashes > 0 || o.MajoritySelect
}

// stageOneWorker names stage 1's initial worker.
func stageOneWorker(o ModelOptions) string {
	if o.HomeIsWorker {
		return "n0"
	}
	return "n1"
}

// liveOrch is an orchestrator in Ready or Committed state (stable storage), with the
// stage's record; judged when every node of the record still holds the stage Active
// (no FORGET has removed a vote yet).
type liveOrch struct {
	orch   sim.NodeID
	stage  eo.StageID
	tid    eo.Tid
	rec    eo.StageRecord
	judged bool
}

func liveOrchs(s *model.State, facts *factCache) []liveOrch {
	var out []liveOrch
	for i := 0; i < s.NumNodes(); i++ {
		f := facts.of(s.Stable(sim.NodeID(i)))
		for h, live := range f.live {
			if !live {
				continue
			}
			c := liveOrch{orch: sim.NodeID(i), stage: eo.StageID{Agent: 1, Hop: int32(h)}, tid: f.orchTid[h]}
			c.rec, c.judged = recordOf(s, facts, h, c.orch)
			out = append(out, c)
		}
	}
	return out
}

// recordOf returns stage h's record if every node of it holds the stage Active but
// orch, whose commit took the agent out of its queue (the Get).
func recordOf(s *model.State, facts *factCache, h int, orch sim.NodeID) (eo.StageRecord, bool) {
	var rec *eo.StageRecord
	for i := 0; i < s.NumNodes() && rec == nil; i++ {
		rec = facts.of(s.Stable(sim.NodeID(i))).active[h]
	}
	if rec == nil || len(rec.Nodes) < 2 {
		return eo.StageRecord{}, false
	}
	for _, n := range rec.NodeIDs() {
		if n != orch && facts.of(s.Stable(n)).active[h] == nil {
			return *rec, false
		}
	}
	return *rec, true
}

// support is the set of voters of c's stage that support c's transaction (see
// PropSupport).
func support(s *model.State, facts *factCache, c liveOrch) []sim.NodeID {
	h := c.stage.Hop
	var sup []sim.NodeID
	for changed := true; changed; {
		changed = false
		for _, n := range c.rec.NodeIDs() {
			f := facts.of(s.Stable(n))
			votes := f.orchSets[h]
			if n == c.orch && f.active[h] == nil {
				// Committed: the orchestrator's own voter forgot the stage in the
				// commit's own step (FORGET to itself); its vote was counted to be
				// Ready (EO-5 "decides as soon as its votes do" checks that).
				votes = []eo.VoteEntry{{Orch: c.orch, Tid: c.tid}}
			}
			if slices.Contains(sup, n) || !slices.Contains(votes, eo.VoteEntry{Orch: c.orch, Tid: c.tid}) {
				continue
			}
			ok := true
			for _, e := range votes {
				if e.Orch != c.orch && c.rec.Higher(c.orch, e.Orch) && !slices.Contains(sup, e.Orch) {
					ok = false
				}
			}
			if ok {
				sup = append(sup, n)
				changed = true
			}
		}
	}
	return sup
}

// inspector is what the model's invariants read of a running node. An interface
// rather than *eo.Node: the tests explore wrapped nodes (cow_test.go), which must
// not make the invariants vacuous.
type inspector interface {
	OrphanTransaction() (eo.StageID, bool)
	Coordinating() int
	VotingNow() []eo.Voting
	Tallies() []eo.Voting
	MayResend() bool
}

// decided reports whether transaction v of orchestrator self has something decided
// by its votes (EO-5): a COND_YES whose whole set is in YesVotes (it is a YES), a
// majority of YES with self's own, at least half NO, or NO from self's own voter.
func decided(v eo.Voting, self sim.NodeID) bool {
	n := len(v.Record.Nodes)
	if slices.ContainsFunc(v.Cond, func(c eo.CondVote) bool {
		return !slices.ContainsFunc(c.Set, func(x sim.NodeID) bool { return !slices.Contains(v.Yes, x) })
	}) {
		return true // a COND_YES whose whole set said YES counts as YES at once
	}
	return (2*len(v.Yes) > n && slices.Contains(v.Yes, self)) || 2*len(v.No) >= n || slices.Contains(v.No, self)
}

// inquiryOverdue reports whether up node i holds a vote (an OrchSet) for an Active
// stage without its INQUIRY timer pending while it may still re-send (EO-7).
func inquiryOverdue(s *model.State, facts *factCache, i sim.NodeID) bool {
	n, ok := s.Node(i).(inspector)
	if !ok || !n.MayResend() {
		return false
	}
	for h, votes := range facts.of(s.Stable(i)).orchSets {
		if len(votes) == 0 {
			continue
		}
		id := eo.InquiryTimer(eo.StageID{Agent: 1, Hop: int32(h)})
		if !slices.ContainsFunc(s.Timers(i), func(t model.PendingTimer) bool { return t.ID == id }) {
			return true
		}
	}
	return false
}

// storeFacts is what the invariants EO-I1 and EO-4 read of one node's stable storage:
// whether it holds a live (Ready or Committed) orchestrator record of stage 0 and of
// stage 1, whether its stored agents are at their stages' hops, whether it stores an
// agent at all (a stage record or a prepared Put) and whether it holds votes.
type storeFacts struct {
	live          [3]bool
	atHop         bool
	agents, votes bool
	// Per stage (the model's one agent, hops 0-2): the live orchestrator's Tid, the
	// stage's record when it is Active here, and the OrchSet.
	orchTid  [3]eo.Tid
	active   [3]*eo.StageRecord
	orchSets [3][]eo.VoteEntry
}

// orchKeys are the orchestrator records' keys of the model's stages.
var orchKeys = [3]string{eo.OrchKey(eo.StageID{Agent: 1, Hop: 0}), eo.OrchKey(eo.StageID{Agent: 1, Hop: 1}), eo.OrchKey(eo.StageID{Agent: 1, Hop: 2})}

func factsOf(st *sim.Storage) storeFacts {
	var f storeFacts
	for k, key := range orchKeys {
		f.live[k] = eo.OrchStateAt(st, key) != eo.OrchUnknown
	}
	f.atHop = eo.StoredAtHop(st)
	for _, it := range eo.Inspect(st) {
		h := it.Stage.Hop
		switch it.Kind {
		case eo.StableQueue:
			f.agents = true
			if rec, ok := eo.ActiveRecord(st, it.Stage); ok && h < 3 {
				f.active[h] = &rec
			}
		case eo.StablePrepared:
			f.agents = true
		case eo.StableOrchSet:
			f.votes = f.votes || len(it.Votes) > 0
			if h < 3 {
				f.orchSets[h] = it.Votes
			}
		case eo.StableOrch:
			if h < 3 {
				f.orchTid[h] = it.OrchTid
			}
		}
	}
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
		if verifyFacts && !reflect.DeepEqual(f, factsOf(st)) {
			panic(fmt.Sprintf("cached storage facts %+v, recomputed %+v", f, factsOf(st)))
		}
		return f
	}
	f := factsOf(st)
	c.m.Store(st, f)
	return f
}
