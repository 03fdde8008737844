package eoscen

import (
	"fmt"

	"github.com/simrun-dev/simrun/model"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
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
