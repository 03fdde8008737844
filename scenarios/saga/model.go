package sagascen

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/sim"
)

// The model-checked configurations (`simrun check saga`; with no -p, the portfolio
// below runs them all). Untimed ones explore every order of the messages on the FIFO
// links and every crash within the budget (a crashed agent may restart from its log
// at any later point; with mid-send crashes, also part-way through a step's
// messages). Re-sends are not timers there (they would make the space infinite): a
// restarted agent says hello and the others re-send what it has not acknowledged, as
// the simulator's agents also do.
//
//   - paper: the paper's two agents, order and customer, and two transactions
//     started at order, each reserving 60 of a customer's 100 of credit — so whichever
//     reserves second fails and is compensated, depending on the interleaving;
//   - branch: a1 runs on at a3, whose action fails, and links a side branch at a2:
//     a1 and a2 are compensated while the others' messages are in flight — where
//     compensating too early and running a late request show;
//   - join: a1 starts two sub-transactions at a2, which both run on (next/2 and
//     next/3) into one section at a3: a join whose two requests come from one agent;
//     -p fail=a3:doJoin makes the join fail, compensating both branches;
//   - connectivity (-p conn=true): SG-4's layer on, in discrete time (a tick is a
//     beat; timeout 1 tick, grace period 2), over the paper's agents with one
//     transaction and one cut of their link (restored at any later tick): the loss
//     detected, the transaction paused, resumed if the link comes back within the
//     grace period, else the initiator gives up on the lost agent and the transaction
//     ends once it is back and has cleaned up. Re-sends are off here too (a re-send
//     timer every tick makes the space five times larger): a message lost to a cut
//     that its sender never noticed stays owed.
//
// Invariants, over a ghost that folds the observations: SG-P3 (no action or
// compensation runs twice per section), SG-P2 (a section is compensated only after
// the processed sections after it), null compensation (no compensation action of a
// section whose action never ran), dangling action (no action after its section was
// closed), one outcome (each agent decides once, all alike), unique tr_id (none
// begins twice), ends after every section (committed once every section is
// processed, compensated once every one is settled), and only a transaction's
// initiator stops it for a lost agent. Eventually: every transaction that began is
// decided by every participant, every section settled consistently (SG-P1, SG-P4);
// in discrete time, by the end of time, unless a link is still cut, an agent down,
// one still thought lost, one still owing a message (unacknowledged: it would re-send
// it), or connectivity changed less than two ticks before. A start injected while its
// agent is down is lost.

// ModelParams are the parameters of the saga model.
var ModelParams = []model.Param{
	{Name: "txs", Default: "2", Help: "transactions started (paper: each reserves amount of the credit)"},
	{Name: "credit", Default: "100", Help: "the customer's credit (paper)"},
	{Name: "amount", Default: "60", Help: "credit each order reserves (paper)"},
	{Name: "crashes", Default: "1", Help: "crash budget over the agents (a crashed agent may restart from its log)"},
	{Name: "crashable", Default: "all", Help: "the agents that may crash (comma-separated), or all"},
	{Name: "midsend", Default: "false", Help: "a crash may also cut a step's messages short (after some of them left)"},
	{Name: "config", Default: "paper", Help: "paper (order and customer), branch (3 agents: a1 runs on at a3, whose action fails, and links a side branch at a2) or join (a1 starts two sub-transactions at a2 that join at a3)"},
	{Name: "fail", Default: "none", Help: "join: the action that fails (agent:action, e.g. a3:doJoin), or none"},
	{Name: "conn", Default: "false", Help: "the connectivity layer (SG-4) on, in discrete time, with one cut of a link (paper: 1 transaction)"},
	{Name: "ticks", Default: "8", Help: "conn: the ticks (beats) time runs for"},
	{Name: "bug", Default: "none", Help: "plant a bug (see saga scenarios' bug parameter)"},
}

func init() {
	model.Register(model.Model{
		Name:   "saga",
		Help:   "the paper's order example (2 agents, 2 transactions competing for credit, a crash), a failing branch, a join, and SG-4's connectivity layer in discrete time; SG-P2/SG-P3/null/dangling/one-outcome/tr_id/SG-4 invariants, SG-P1/SG-P4 eventually",
		Params: ModelParams,
		Portfolio: []model.Config{
			{Name: "paper", Help: "the paper's example: two orders competing for credit (one is compensated), a crash of either agent, part-way through a step's messages or between steps, with restart from the log",
				Params: map[string]string{"midsend": "true"}},
			{Name: "branch", Help: "a failing section with a parallel branch: compensations in reverse order while requests are in flight; the failing agent may crash part-way through telling the others",
				Params: map[string]string{"config": "branch", "txs": "1", "crashable": "a3", "midsend": "true"}},
			{Name: "join", Help: "a join whose two requests come from one agent, failing: both branches compensated; the join's agent may crash",
				Params: map[string]string{"config": "join", "txs": "1", "fail": "a3:doJoin", "crashable": "a3"}},
			{Name: "connectivity", Help: "SG-4 in discrete time: a cut link, detection, pause, resume within the grace period or the initiator's give-up after it, the cleanup once the link is back",
				Params: map[string]string{"conn": "true", "txs": "1", "crashes": "0"}},
		},
		Build: func(p *model.Params) (model.System, error) {
			txs, credit, amount := p.IntRange("txs", 1, 3), p.IntRange("credit", 0, 1000), p.IntRange("amount", 1, 1000)
			crashes := p.IntRange("crashes", 0, 2)
			mid, conn, ticks := p.Bool("midsend"), p.Bool("conn"), p.IntRange("ticks", 4, 40)
			crashable := p.List("crashable")
			bug, cfg, fail := p.String("bug"), p.String("config"), p.String("fail")
			if p.Err() != nil {
				return nil, p.Err()
			}
			pol, err := Policy(bug)
			if err != nil {
				return nil, err
			}
			m := modelConf{txs: txs, crashes: crashes, midSend: mid, pol: pol}
			if !slices.Equal(crashable, []string{"all"}) {
				m.crashable = crashable
			}
			if conn {
				if cfg != "paper" {
					return nil, fmt.Errorf("parameter conn=true: only with config=paper")
				}
				m.ticks = ticks
			}
			switch cfg {
			case "paper":
				m.file, m.src, m.credit = "paper.saga", saga.PaperConfig, int64(credit)
				m.start, m.input = saga.SecKey{Agent: "order", St: "orderCreation"}, saga.Data{Customer: "alice", Amount: int64(amount)}
			case "branch":
				m.file, m.src = "branch.saga", branchConfig
				m.start, m.input = saga.SecKey{Agent: "a1", St: "main"}, saga.Data{Fail: "a3:doLast"}
			case "join":
				m.file, m.src = "join.saga", joinConfig
				m.start = saga.SecKey{Agent: "a1", St: "main"}
				if fail != "none" {
					m.input.Fail = fail
				}
			default:
				return nil, fmt.Errorf("parameter config=%q: want paper, branch or join", cfg)
			}
			a, err := m.actors()
			if err != nil {
				return nil, err
			}
			a.Nodes = wrapped(bug, a.Nodes)
			return a, nil
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
	Settled  map[string]bool // "tr sec": compensated, null or failed
	Outcome  map[string]saga.Outcome
	Decided  map[string]int  // "tr agent" → decisions
	GaveUp   bool            // an initiator gave up on a lost agent (SG-4)
	Gone     map[string]bool // "agent peer": agent's grace period for peer ran out
	Resumed  bool            // a lost agent was heard again before the grace period ran out
	LastConn sim.Time        // discrete time: when connectivity last changed at an agent
	Breaches []string        // what an invariant found (the first few)
}

// breach records what invariant prop (one of the model's property names) found.
func (g ModelGhost) breach(prop, s string) ModelGhost {
	if len(g.Breaches) < 3 {
		g.Breaches = append(slices.Clone(g.Breaches), prop+": "+s)
	}
	return g
}

// The model's invariants, each a kind of breach the ghost records.
const (
	mTrID     = "SG-2 unique tr_id"
	mOnce     = "SG-P3 duplicate effect"
	mNull     = "null compensation"
	mDangling = "dangling action"
	mOrder    = "SG-P2 compensation order"
	mOneOut   = "one outcome"
	mFinished = "SG-2/SG-3 ends after every section"
	mGiveUp   = "SG-4 only the initiator gives up"
	mFlow     = "SG-2 sections run after their predecessors"
)

// modelInvariants lists the invariants with the states where each is about something
// (its relevance: a property relevant nowhere is vacuous).
var modelInvariants = []struct {
	name     string
	relevant func(g ModelGhost) bool
}{
	{mTrID, func(g ModelGhost) bool { return len(g.Begun) > 0 }},
	{mOnce, func(g ModelGhost) bool { return len(g.Calls) > 0 }},
	{mFlow, func(g ModelGhost) bool { return len(g.Calls) > 0 }},
	{mNull, func(g ModelGhost) bool { return len(g.Comp) > 0 }},
	{mDangling, func(g ModelGhost) bool { return len(g.Closed) > 0 }},
	{mOrder, func(g ModelGhost) bool { return len(g.Comp) > 0 }},
	{mOneOut, func(g ModelGhost) bool { return len(g.Outcome) > 0 }},
	{mFinished, func(g ModelGhost) bool { return len(g.Outcome) > 0 }},
	{mGiveUp, func(g ModelGhost) bool { return len(g.Gone) > 0 || g.GaveUp }},
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
			if g.Begun[v.Tr.String()] {
				g = g.breach(mTrID, "made twice: "+v.Tr.String())
			}
			g.Begun = cloneMap(g.Begun)
			g.Begun[v.Tr.String()] = true
		case saga.Return:
			key := fmt.Sprintf("%s %s %s", v.Call.Tr, v.Call.Sec, v.Call.Action)
			g.Calls = cloneMap(g.Calls)
			g.Calls[key]++
			if g.Calls[key] > 1 {
				g = g.breach(mOnce, key)
			}
			sec := fmt.Sprintf("%s %s", v.Call.Tr, v.Call.Sec)
			if v.Call.Comp && !g.Ran[sec] {
				g = g.breach(mNull, "a compensation with an effect: "+sec)
			}
			if !v.Call.Comp {
				for _, p := range graph.Preds[v.Call.Sec] {
					if !g.Proc[fmt.Sprintf("%s %s", v.Call.Tr, p)] {
						g = g.breach(mFlow, sec+" ran before "+p.String())
					}
				}
			}
			if !v.Call.Comp && v.Ok {
				if g.Closed[sec] {
					g = g.breach(mDangling, sec)
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
					// SG-4: an agent gone past the grace period is not waited for
					ns := fmt.Sprintf("%s %s", v.Tr, n)
					if g.Proc[ns] && !g.Comp[ns] && !g.Gone[v.Sec.Agent+" "+n.Agent] {
						g = g.breach(mOrder, sec+" compensated before "+ns)
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
			if settled(v.State) {
				g.Settled = cloneMap(g.Settled)
				g.Settled[sec] = true
			}
		case saga.OutcomeEv:
			key := fmt.Sprintf("%s %s", v.Tr, v.Agent)
			g.Decided = cloneMap(g.Decided)
			g.Decided[key]++
			if g.Decided[key] > 1 {
				g = g.breach(mOneOut, "decided twice: "+key)
			}
			tr := v.Tr.String()
			if prev, ok := g.Outcome[tr]; ok && prev != v.Outcome {
				g = g.breach(mOneOut, "two outcomes: "+tr)
			}
			g.Outcome = cloneMap(g.Outcome)
			g.Outcome[tr] = v.Outcome
			for _, k := range graph.Sections {
				sec := fmt.Sprintf("%s %s", v.Tr, k)
				if (v.Outcome == saga.Committed && !g.Proc[sec]) || (v.Outcome == saga.Compensated && !g.Settled[sec]) {
					g = g.breach(mFinished, fmt.Sprintf("%s ended %s at %s before %s", tr, v.Outcome, v.Agent, k))
				}
			}
		case saga.AbortEv:
			if strings.HasSuffix(v.Why, graceSuffix) {
				if v.Agent != v.Tr.Init {
					g = g.breach(mGiveUp, v.Tr.String()+" stopped for a lost agent by "+v.Agent+", not its initiator")
				}
				g.GaveUp = true
			}
		case saga.ConnEv:
			if key := v.Agent + " " + v.Peer; o.Kind == saga.ObsBack {
				if g.Gone[key] {
					g.Gone = cloneMap(g.Gone)
					delete(g.Gone, key)
				} else {
					g.Resumed = true
				}
			}
			g.LastConn = o.Time
		case saga.GraceEv:
			g.Gone = cloneMap(g.Gone)
			g.Gone[v.Agent+" "+v.Peer] = true
			g.LastConn = o.Time
		case saga.Replayed:
			for k := range g.Gone {
				if strings.HasPrefix(k, v.Agent+" ") {
					g.Gone = cloneMap(g.Gone)
					delete(g.Gone, k)
				}
			}
			g.LastConn = o.Time
		}
		return g
	}
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

// joinConfig: a1 starts main at a2 and a side sub-transaction at a2 too (next/3);
// both run on into a3's main section (next/2, next/3): a join whose two predecessors
// are at one agent.
const joinConfig = `// agent a1
incoming_action(main, doStart).
compensation_action(main, undoStart).
next(main, a2).
next(main, side, a2).

// agent a2
incoming_action(main, doLeft).
compensation_action(main, undoLeft).
next(main, a3).
incoming_action(side, doRight).
compensation_action(side, undoRight).
next(side, main, a3).

// agent a3
incoming_action(main, doJoin).
compensation_action(main, undoJoin).
`

// modelConf is one configuration of the model.
type modelConf struct {
	file, src string
	credit    int64
	start     saga.SecKey
	input     saga.Data
	txs       int
	crashes   int
	midSend   bool
	crashable []string // nil: every agent
	// ticks > 0: the connectivity layer on, in discrete time, for that many ticks
	ticks int
	pol   *saga.Policy
}

// modelTick is a tick of the connectivity configuration: one beat.
const modelTick = 50 * time.Millisecond

// ModelSystem builds the model's actor system for the paper's example.
func ModelSystem(txs int, credit, amount int64, crashes int, pol *saga.Policy) (*model.Actors, error) {
	return modelConf{file: "paper.saga", src: saga.PaperConfig, credit: credit, txs: txs, crashes: crashes, pol: pol,
		start: saga.SecKey{Agent: "order", St: "orderCreation"}, input: saga.Data{Customer: "alice", Amount: amount}}.actors()
}

// BranchModel is the branch configuration (branchConfig); a3's doLast fails.
func BranchModel(txs, crashes int, pol *saga.Policy) (*model.Actors, error) {
	return modelConf{file: "branch.saga", src: branchConfig, txs: txs, crashes: crashes, pol: pol,
		start: saga.SecKey{Agent: "a1", St: "main"}, input: saga.Data{Fail: "a3:doLast"}}.actors()
}

func (m modelConf) actors() (*model.Actors, error) {
	tm := timing{}
	if m.ticks > 0 {
		tm = timing{beat: modelTick, timeout: modelTick, grace: 2 * modelTick}
	}
	s, err := build(m.file, m.src, m.credit, tm, m.pol)
	if err != nil {
		return nil, err
	}
	init := m.start.Agent
	at := 0
	if m.ticks > 0 {
		at = 1
	}
	var inject []model.Injection
	for i := 0; i < m.txs; i++ {
		inject = append(inject, model.Injection{To: sim.NodeID(slices.Index(s.opts.Names, init)), Msg: saga.StartTx{Start: m.start, Input: m.input}, At: at})
	}
	var crashable []sim.NodeID
	for _, n := range m.crashable {
		i := slices.Index(s.opts.Names, n)
		if i < 0 {
			return nil, fmt.Errorf("parameter crashable: no agent %s in %s", n, m.file)
		}
		crashable = append(crashable, sim.NodeID(i))
	}
	g := s.opts.Graph(m.start)
	ghost := func(st *model.State) ModelGhost { return model.GhostAs[ModelGhost](st) }
	begun := func(st *model.State) bool { return len(ghost(st).Begun) > 0 }
	// decided: every start has been handed to the initiator (one handed over while
	// it was down is lost with it), every transaction that began is decided by every
	// participant, and its sections are consistent with the outcome (SG-P1). (Without
	// the first, the initial state, where nothing has begun, would satisfy it.)
	initNode := sim.NodeID(slices.Index(s.opts.Names, init))
	decided := func(st *model.State) bool {
		if st.PendingInjections(initNode) > 0 {
			return false
		}
		gh := ghost(st)
		for seq := 1; seq <= m.txs; seq++ {
			tr := saga.TrID{Init: init, Seq: int64(seq)}
			if !gh.Begun[tr.String()] {
				continue
			}
			out, ok := gh.Outcome[tr.String()]
			if !ok {
				return false
			}
			for _, a := range g.Agents {
				if gh.Decided[tr.String()+" "+a] == 0 {
					return false
				}
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
	}
	a := &model.Actors{
		Name:    "saga",
		Nodes:   s.nodes,
		Inject:  inject,
		Crashes: model.Crashes{Budget: m.crashes, Nodes: crashable, MidSend: m.midSend},
		Memoize: true, // no handler reads Input.Rand
		Ghost:   model.Ghost{Init: ModelGhost{}, Fold: foldGhost(s.conf, m.start)},
	}
	for _, inv := range modelInvariants {
		if inv.name == mGiveUp && m.ticks == 0 {
			continue // no connectivity layer: nobody is lost
		}
		a.Properties = append(a.Properties, model.Always(inv.name, func(st *model.State) bool {
			return !slices.ContainsFunc(ghost(st).Breaches, func(b string) bool { return strings.HasPrefix(b, inv.name+": ") })
		}).When(func(st *model.State) bool { return inv.relevant(ghost(st)) }))
	}
	// owes: an agent that is up keeps a message for another that is up, unacknowledged
	owes := func(st *model.State) bool {
		for i := range s.nodes {
			ag, ok := agentAt(st, sim.NodeID(i))
			if !ok || !st.Up(sim.NodeID(i)) {
				continue
			}
			for _, p := range ag.S.Pending {
				if st.Up(sim.NodeID(slices.Index(s.opts.Names, p.To))) {
					return true
				}
			}
		}
		return false
	}
	if m.ticks == 0 {
		a.Properties = append(a.Properties, model.Eventually("SG-P1/SG-P4 every transaction decided at every participant, sections consistent, nothing owed", func(st *model.State) bool {
			return decided(st) && !owes(st)
		}).When(begun))
		if m.input.Fail != "" || m.src == saga.PaperConfig && m.txs > 1 {
			a.Properties = append(a.Properties, model.Sometimes("a transaction is compensated", func(st *model.State) bool {
				return slices.Contains(mapValues(ghost(st).Outcome), saga.Compensated)
			}))
		} else {
			a.Properties = append(a.Properties, model.Sometimes("a transaction commits", func(st *model.State) bool {
				return slices.Contains(mapValues(ghost(st).Outcome), saga.Committed)
			}))
		}
		return a, nil
	}
	// Discrete time: the connectivity layer beats every tick; messages arrive within
	// their tick; one cut of the agents' link, restored at any later tick.
	a.Time = model.DiscreteTime{Tick: modelTick, MaxTicks: m.ticks, WithinTick: true}
	a.Cuts = model.Cuts{Budget: 1}
	end := sim.Time(m.ticks) * sim.Time(modelTick)
	// excused: at the end of time, a transaction may still run where the network or
	// an agent has not recovered, or recovered less than two ticks before.
	excused := func(st *model.State) bool {
		if st.Now() < end {
			return false
		}
		for i := range s.nodes {
			n := sim.NodeID(i)
			if !st.Up(n) {
				return true
			}
			for j := range s.nodes {
				if i != j && st.Cut(n, sim.NodeID(j)) {
					return true
				}
			}
			if ag, ok := agentAt(st, n); ok {
				if len(ag.S.Pending) > 0 {
					return true // a message still owed (lost to the cut: its re-send would end it)
				}
				for p, e := range ag.S.View {
					if e.Lost && p != ag.S.Name {
						return true
					}
				}
			}
		}
		return end-ghost(st).LastConn < sim.Time(2*modelTick)
	}
	a.Properties = append(a.Properties,
		model.Eventually("SG-P1/SG-P4 every transaction decided at every participant once the link is back (by the end of time)", func(st *model.State) bool {
			return decided(st) || excused(st)
		}).When(begun),
		model.Sometimes("SG-4 the initiator gives up on a lost agent, and the transaction ends", func(st *model.State) bool {
			return ghost(st).GaveUp && decided(st) && begun(st)
		}),
		model.Sometimes("SG-4 a lost agent is back within the grace period, and the transaction commits", func(st *model.State) bool {
			gh := ghost(st)
			return gh.Resumed && !gh.GaveUp && slices.Contains(mapValues(gh.Outcome), saga.Committed) && decided(st)
		}),
	)
	return a, nil
}

// agentAt returns node n's agent (a test's planted bug wraps it and says so with
// Unwrap).
func agentAt(st *model.State, n sim.NodeID) (*saga.Agent, bool) {
	x := st.Node(n)
	if w, ok := x.(interface{ Unwrap() sim.Node }); ok {
		x = w.Unwrap()
	}
	a, ok := x.(*saga.Agent)
	return a, ok
}

func mapValues[V any](m map[string]V) []V {
	out := make([]V, 0, len(m))
	for _, k := range sortedStrings(m) {
		out = append(out, m[k])
	}
	return out
}
