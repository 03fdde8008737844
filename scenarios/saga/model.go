package sagascen

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/sim"
)

// The model-checked configuration (`simrun check saga`): the paper's two agents, order
// and customer, and two transactions started at order, each reserving 60 of a
// customer's 100 of credit — so whichever reserves second fails and is compensated,
// depending on the interleaving (the nondeterministically failing action). Every
// order of the messages on the four FIFO links and every crash of either agent
// (budget 1, with restart from the log at any later point) is explored. Re-sends are
// not timers here (they would make the space infinite): a restarted agent says hello
// and the other re-sends what it has not had acknowledged, as the simulator's agents
// also do. The connectivity layer (SG-4's exchange) is off: it is timed, and checked
// by the sweeps.
//
// Invariants over a ghost that folds the observations: SG-P3 (no action or
// compensation runs twice per section), SG-P2 (a section is compensated only after the
// processed sections after it), null compensation (no compensation action of a
// section whose action never ran), dangling action (no action after its section was
// closed), one outcome (each agent decides once, all alike); eventually: every
// transaction that began is decided by its initiator, every section settled
// consistently (SG-P1, SG-P4). A start injected while order is down is lost.

// ModelParams are the parameters of the saga model.
var ModelParams = []model.Param{
	{Name: "txs", Default: "2", Help: "transactions started at order (each reserves amount of the credit)"},
	{Name: "credit", Default: "100", Help: "the customer's credit"},
	{Name: "amount", Default: "60", Help: "credit each order reserves"},
	{Name: "crashes", Default: "1", Help: "crash budget over the agents (a crashed agent may restart from its log)"},
	{Name: "config", Default: "paper", Help: "paper (order and customer), or branch (3 agents: a1 runs on at a3, whose action fails, and links a side branch at a2)"},
	{Name: "bug", Default: "none", Help: "plant a bug (see saga scenarios' bug parameter)"},
}

func init() {
	model.Register(model.Model{
		Name:   "saga",
		Help:   "the paper's order example: 2 agents, 2 transactions competing for credit (one fails and is compensated), crash budget 1; SG-P2/SG-P3/null/dangling/one-outcome invariants, SG-P1/SG-P4 eventually",
		Params: ModelParams,
		Build: func(p *model.Params) (model.System, error) {
			txs, credit, amount := p.IntRange("txs", 1, 3), p.IntRange("credit", 0, 1000), p.IntRange("amount", 1, 1000)
			crashes := p.IntRange("crashes", 0, 2)
			bug, cfg := p.String("bug"), p.String("config")
			if p.Err() != nil {
				return nil, p.Err()
			}
			pol, err := Policy(bug)
			if err != nil {
				return nil, err
			}
			switch cfg {
			case "paper":
				return ModelSystem(txs, int64(credit), int64(amount), crashes, pol)
			case "branch":
				return BranchModel(txs, crashes, pol)
			}
			return nil, fmt.Errorf("parameter config=%q: want paper or branch", cfg)
		},
	})
}

// ModelGhost is the monitor folded over the observations.
type ModelGhost struct {
	Begun    map[string]bool
	Calls    map[string]int // "tr sec action" → runs
	Ran      map[string]bool
	Closed   map[string]bool // "tr sec": compensated or null
	Comp     map[string]bool // "tr sec": compensated
	Proc     map[string]bool // "tr sec": processed
	Outcome  map[string]saga.Outcome
	Decided  map[string]int // "tr agent" → decisions
	Breaches []string       // what an invariant found (the first few)
}

func (g ModelGhost) breach(s string) ModelGhost {
	if len(g.Breaches) < 3 {
		g.Breaches = append(slices.Clone(g.Breaches), s)
	}
	return g
}

func cloneMap[V any](m map[string]V) map[string]V {
	c := make(map[string]V, len(m)+1)
	for k, v := range m {
		c[k] = v
	}
	return c
}

func foldGhost(conf *saga.Config, start saga.SecKey) func(g any, o sim.Observation) any {
	graph, _ := conf.Graph(start)
	return func(gv any, o sim.Observation) any {
		g := gv.(ModelGhost)
		switch v := o.Value.(type) {
		case saga.Begin:
			g.Begun = cloneMap(g.Begun)
			g.Begun[v.Tr.String()] = true
		case saga.Return:
			key := fmt.Sprintf("%s %s %s", v.Call.Tr, v.Call.Sec, v.Call.Action)
			g.Calls = cloneMap(g.Calls)
			g.Calls[key]++
			if g.Calls[key] > 1 {
				g = g.breach("duplicate effect: " + key)
			}
			sec := fmt.Sprintf("%s %s", v.Call.Tr, v.Call.Sec)
			if v.Call.Comp && !g.Ran[sec] {
				g = g.breach("null compensation with an effect: " + sec)
			}
			if !v.Call.Comp && v.Ok {
				if g.Closed[sec] {
					g = g.breach("dangling action: " + sec)
				}
				g.Ran = cloneMap(g.Ran)
				g.Ran[sec] = true
			}
		case saga.SectionEv:
			if o.Kind != saga.ObsSection {
				break
			}
			sec := fmt.Sprintf("%s %s", v.Tr, v.Sec)
			switch v.State {
			case saga.Processed:
				g.Proc = cloneMap(g.Proc)
				g.Proc[sec] = true
			case saga.ProcessedCompensation:
				for _, n := range graph.Succs[v.Sec] {
					ns := fmt.Sprintf("%s %s", v.Tr, n)
					if g.Proc[ns] && !g.Comp[ns] {
						g = g.breach("order: " + sec + " compensated before " + ns)
					}
				}
				g.Comp = cloneMap(g.Comp)
				g.Comp[sec] = true
				g.Closed = cloneMap(g.Closed)
				g.Closed[sec] = true
			case saga.Null:
				g.Closed = cloneMap(g.Closed)
				g.Closed[sec] = true
			}
		case saga.OutcomeEv:
			key := fmt.Sprintf("%s %s", v.Tr, v.Agent)
			g.Decided = cloneMap(g.Decided)
			g.Decided[key]++
			if g.Decided[key] > 1 {
				g = g.breach("decided twice: " + key)
			}
			tr := v.Tr.String()
			if prev, ok := g.Outcome[tr]; ok && prev != v.Outcome {
				g = g.breach("two outcomes: " + tr)
			}
			g.Outcome = cloneMap(g.Outcome)
			g.Outcome[tr] = v.Outcome
		}
		return g
	}
}

// ModelSystem builds the model's actor system for the paper's example.
func ModelSystem(txs int, credit, amount int64, crashes int, pol *saga.Policy) (*model.Actors, error) {
	s, err := build("paper.saga", saga.PaperConfig, credit, timing{}, pol)
	if err != nil {
		return nil, err
	}
	start := saga.SecKey{Agent: "order", St: "orderCreation"}
	return actors(s, start, txs, saga.Data{Customer: "alice", Amount: amount}, crashes), nil
}

// branchConfig: a1's section runs on at a3 (whose action fails) and links a side
// branch at a2: both a1 and a2 are compensated while the others' messages are in
// flight — where compensating too early and running a late request show.
const branchConfig = `// agent a1
incoming_action(main, doA).
compensation_action(main, undoA).
next(main, a3).
next(main, side, a2).

// agent a2
incoming_action(side, doSide).
compensation_action(side, undoSide).

// agent a3
incoming_action(main, doLast).
compensation_action(main, undoLast).
`

// BranchModel is the branch configuration (branchConfig); a3's doLast fails.
func BranchModel(txs, crashes int, pol *saga.Policy) (*model.Actors, error) {
	s, err := build("branch.saga", branchConfig, 0, timing{}, pol)
	if err != nil {
		return nil, err
	}
	return actors(s, saga.SecKey{Agent: "a1", St: "main"}, txs, saga.Data{Fail: "a3:doLast"}, crashes), nil
}

func actors(s *system, start saga.SecKey, txs int, in saga.Data, crashes int) *model.Actors {
	init := start.Agent
	var inject []model.Injection
	for i := 0; i < txs; i++ {
		inject = append(inject, model.Injection{To: sim.NodeID(slices.Index(s.opts.Names, init)), Msg: saga.StartTx{Start: start, Input: in}})
	}
	g := s.opts.Graph(start)
	return &model.Actors{
		Name:    "saga",
		Nodes:   s.nodes,
		Inject:  inject,
		Crashes: model.Crashes{Budget: crashes},
		Ghost:   model.Ghost{Init: ModelGhost{}, Fold: foldGhost(s.conf, start)},
		Properties: []model.Property[*model.State]{
			model.Always("SG-P3/P2/null/dangling/one-outcome", func(st *model.State) bool { return len(model.GhostAs[ModelGhost](st).Breaches) == 0 }),
			model.Sometimes("a transaction is compensated", func(st *model.State) bool {
				for _, o := range model.GhostAs[ModelGhost](st).Outcome {
					if o == saga.Compensated {
						return true
					}
				}
				return false
			}),
			model.Eventually("SG-P1/SG-P4 every transaction decided, sections consistent", func(st *model.State) bool {
				gh := model.GhostAs[ModelGhost](st)
				// a start injected while the initiator is down is lost with it: only
				// the transactions that began must end
				for seq := 1; seq <= txs; seq++ {
					tr := saga.TrID{Init: init, Seq: int64(seq)}
					if !gh.Begun[tr.String()] {
						continue
					}
					out, ok := gh.Outcome[tr.String()]
					if !ok || gh.Decided[tr.String()+" "+init] == 0 {
						return false
					}
					for _, k := range g.Sections {
						sec := fmt.Sprintf("%s %s", tr, k)
						if out == saga.Committed && (!gh.Proc[sec] || gh.Comp[sec]) {
							return false
						}
						if out == saga.Compensated && gh.Ran[sec] && !gh.Comp[sec] {
							return false
						}
					}
				}
				return true
			}),
		},
	}
}
