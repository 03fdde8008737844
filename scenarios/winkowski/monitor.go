package wkscen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/protocols/winkowski"
	"github.com/simrun-dev/simrun/sim"
)

// The agent monitor: every agent node of the game runs wrapped in an agentMonitor,
// which compares the agent's state before and after each handler call (and the forms
// the call sent) with the paper's rules for agents and tasks (§2, §3). It changes
// nothing: it calls the agent, then records an observation of kind kindRule for each
// rule broken. It keeps no state between calls (so that the model checker, which wraps
// its agents the same way, sees the same states), and its encoding is the agent's.
//
// The rules (the property names of props.go; the model's "agent rules" checks all;
// decisions.go has the task's decisions: WK-1/enter, WK-3/progress, WK-4/alarm,
// WK-4/advance; hostmon.go the managers' WK-2/manager; restartmon.go the two that
// need memory across calls, in the simulator only: WK-1/precedence and
// F2/agent-restart):
//
//	WK-agent-state     §3 "Local states of agents": DistributedTickets_A is the set of
//	                   the tickets A's tasks hold (giving N adds it and sets TicketsAt_T
//	                   = {N}; taking removes both), no two of them equal (a ticket is at
//	                   the disposal of one task), each of the form nK+i (§2); Entering_A
//	                   is the tasks in REGISTERING, Competing_A those holding a ticket.
//	                   After every handler call — also after a restart from stable
//	                   storage (F2), where the agent rebuilds these sets.
//	WK-T1/ticket       §3 "Giving a numbered ticket N to T" (N at the disposal of A: no
//	                   task of A holds it), given at the end of T's entering phase, and
//	                   choice T1 with E1: N is the lowest nK+i that no other task of A
//	                   holds and that lies above the floor — 0 when T's absolute
//	                   predecessors have left, the largest ticket of the remaining ones
//	                   when T enters by the alarm (E1: a newcomer never outranks a task
//	                   it found competing).
//	WK-1/predecessors  §3 "Receiving a message m": the first news of P after T
//	                   registered sets AboutPredecessors_{T,P} to Admissions_P (without
//	                   T); every later one intersects it with Admissions_P — so the
//	                   absolute predecessors never gain a member after the first news.
//	WK-3/regress       §2/§3, conditions (p1)/(p3): "the regressive behaviour is
//	                   obligatory when ... not satisfied", and a withdrawal is sent only
//	                   in a state where (p3) is not satisfied. On every state received by
//	                   a task in TRYING or ORDERING, the monitor evaluates (p1)/(p3) on the
//	                   task's knowledge itself (choice P1: the requests in front of T's
//	                   actual request, or of its potential one at the end of the queue
//	                   when T's request is not known to be there — K1 — from tasks with a
//	                   ticket not above T's or, complete variant, an order form, against
//	                   capacity − |AboutUse|): if it fails, T withdraws every request it
//	                   has out and sends no request, order or winning form; if it holds,
//	                   T's first form is no withdrawal. A state older than one T has
//	                   seen, and a state to a restarted task that has not yet heard from
//	                   every pool (F2), make T play nothing: those are exempt (counted).
const kindRule = "wk.rule"

// Rule names (RuleBroken.Rule), the property names of props.go.
const (
	ruleAgentState = "WK-agent-state"
	ruleTicket     = "WK-T1/ticket"
	rulePreds      = "WK-1/predecessors"
	ruleEnter      = "WK-1/enter"
	ruleRegress    = "WK-3/regress"
	ruleProgress   = "WK-3/progress"
	ruleAlarm      = "WK-4/alarm"
	ruleAdvance    = "WK-4/advance"
)

// monitorRules lists the rules in the order props.go checks them.
var monitorRules = []string{ruleAgentState, ruleAgentRestart, ruleTicket, rulePreds, rulePrecedence, ruleEnter, ruleRegress, ruleProgress, ruleAlarm, ruleAdvance, ruleManager}

// RuleBroken is what the monitor records (kind wk.rule) when an agent's handler call
// breaks one of its rules.
type RuleBroken struct {
	Rule  string
	Agent int
	Task  winkowski.TaskID // 0: the agent's own state
	// Manager: the manager host of computer Agent broke the rule (WK-2/manager).
	Manager bool `json:",omitempty"`
	Detail  string
}

func (b RuleBroken) String() string {
	who := winkowski.AgentName(b.Agent)
	if b.Manager {
		return winkowski.HostName(b.Agent) + ": " + b.Detail
	}
	if b.Task != 0 {
		who = fmt.Sprintf("task %d of %s", b.Task, who)
	}
	return who + ": " + b.Detail
}

// ruleTally counts what the monitor checked in one run (the properties' notes). Only
// the simulator's runs keep one (the model checker explores states in parallel and
// counts nothing).
type ruleTally struct {
	calls              int // handler calls whose agent state was checked
	grants, floored    int // tickets given; of those, above an E1 floor
	firsts, updates    int // first news (predecessors set) and later news (only shrink)
	decisions, exempts int // states received in TRYING/ORDERING: decided, exempt
	entries            int // entering decisions (states in REGISTERING, tickets given)
	progress           int // decisions to order or win checked (made or due)
	alarms             int // blocked tasks whose alarm was checked
	rings              int // alarms that rang on a competing task, checked
	forms, answers     int // manager: forms applied, polls and duplicates answered
	restarts           int // manager restarts compared with the state before
	// hosts: each manager's pools after its last call (the simulator only), for the
	// restart check.
	hosts map[int][]byte
	// memory: what the agent monitor keeps across calls (restartmon.go).
	memory *memory
	// reported: rules already broken in the run. A property shows the first violation
	// and counts the rest, so later ones are recorded without their (costly) detail:
	// a broken variant that breaks a rule on every call stays cheap to run.
	reported map[string]bool
}

// report notes that rule was broken in the run.
func (t *ruleTally) report(rule string) {
	if t.reported == nil {
		t.reported = map[string]bool{}
	}
	t.reported[rule] = true
}

// detail formats a violation's detail, unless rule was broken before in the run.
func (t *ruleTally) detail(rule, format string, args ...any) string {
	if t.reported[rule] {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

// note says what a rule's property checked.
func (t *ruleTally) note(rule string) string {
	switch rule {
	case ruleAgentState:
		return fmt.Sprintf("%d agent handler calls checked", t.calls)
	case ruleTicket:
		return fmt.Sprintf("%d tickets given checked (%d above an E1 floor)", t.grants, t.floored)
	case rulePreds:
		return fmt.Sprintf("%d first news and %d later news checked", t.firsts, t.updates)
	case rulePrecedence:
		m := t.mem()
		return fmt.Sprintf("%d tickets given checked against the recorded absolute predecessors, %d of them with one still competing", m.grants, m.contested)
	case ruleAgentRestart:
		m := t.mem()
		return fmt.Sprintf("%d agent restarts compared, %d tasks restored", m.restarts, m.restored)
	case ruleRegress:
		return fmt.Sprintf("%d decisions checked, %d exempt (stale state, or restarted task not yet fresh)", t.decisions, t.exempts)
	case ruleEnter:
		return fmt.Sprintf("%d entering decisions checked", t.entries)
	case ruleProgress:
		return fmt.Sprintf("%d order and win decisions checked", t.progress)
	case ruleAlarm:
		return fmt.Sprintf("%d blocked tasks' alarms checked", t.alarms)
	case ruleAdvance:
		return fmt.Sprintf("%d alarm rings checked", t.rings)
	case ruleManager:
		return fmt.Sprintf("%d forms and %d answers checked, %d restarts compared", t.forms, t.answers, t.restarts)
	}
	return ""
}

// agentMonitor wraps an agent node (a *winkowski.Agent, or a test's wrapper around
// one that has an Agent method).
type agentMonitor struct {
	sys   *winkowski.System
	inner sim.Node
	tally *ruleTally // nil in the model checker
}

// agentHolder is a node wrapping an agent (the monitor, or a test's saboteur).
type agentHolder interface{ Agent() *winkowski.Agent }

// agentOf returns the agent inside n, nil if there is none.
func agentOf(n sim.Node) *winkowski.Agent {
	switch x := n.(type) {
	case *winkowski.Agent:
		return x
	case agentHolder:
		return x.Agent()
	}
	return nil
}

// Agent returns the monitored agent.
func (m *agentMonitor) Agent() *winkowski.Agent { return agentOf(m.inner) }

// Handle implements sim.Node: the agent's call, then the checks.
func (m *agentMonitor) Handle(in sim.Input, out *sim.Outbox) {
	before := snapTasks(m.Agent())
	m.inner.Handle(in, out)
	t := m.tally
	var mem *memory // the simulator only: checks across calls (restartmon.go)
	if t == nil {
		t = &ruleTally{}
	} else {
		mem = t.mem()
	}
	a := m.Agent()
	for _, b := range checkCall(m.sys, a, in, before, out.Sends(), t, mem) {
		out.Observe(kindRule, b)
		t.report(b.Rule)
	}
	if mem != nil && a != nil {
		mem.remember(a)
	}
}

// Clone implements sim.Cloner.
func (m *agentMonitor) Clone() sim.Node {
	c := *m
	if cl, ok := m.inner.(sim.Cloner); ok {
		c.inner = cl.Clone()
	} else {
		c.inner = sim.DeepCopy(m.inner)
	}
	return &c
}

// AppendState implements sim.StateEncoder: the agent's encoding, nothing of its own.
func (m *agentMonitor) AppendState(b []byte) []byte {
	if e, ok := m.inner.(sim.StateEncoder); ok {
		return e.AppendState(b)
	}
	return sim.AppendCanonical(b, m.inner)
}

// plant breaks the game from test code: policy changes the configuration's Policy
// hooks (a broken decision point), agent and host wrap every agent and manager host
// node before the monitors wrap them (a broken node). The zero plant is the game.
type plant struct {
	policy func(*winkowski.Policy)
	agent  func(*winkowski.System, sim.Node) sim.Node
	host   func(*winkowski.System, sim.Node) sim.Node
}

// monitored returns nodes with every agent of the game wrapped in an agentMonitor and
// every manager host in a hostMonitor; pl's wrappers, when set, wrap them first.
func monitored(sys *winkowski.System, nodes []sim.NodeSpec, lay *winkowski.Layout, tally *ruleTally, pl plant) []sim.NodeSpec {
	out := slices.Clone(nodes)
	for _, id := range lay.Agent {
		newAgent := out[id].New
		out[id].New = func() sim.Node {
			n := newAgent()
			if pl.agent != nil {
				n = pl.agent(sys, n)
			}
			return &agentMonitor{sys: sys, inner: n, tally: tally}
		}
	}
	for _, id := range lay.Host {
		newHost := out[id].New
		out[id].New = func() sim.Node {
			n := newHost()
			if pl.host != nil {
				n = pl.host(sys, n)
			}
			return &hostMonitor{sys: sys, inner: n, tally: tally}
		}
	}
	return out
}

// taskSnap is what the checks need of a task's state before a handler call. The
// slices are shared with the task: the agent replaces them, never modifies them in
// place (Agent.Clone's rule).
type taskSnap struct {
	id          winkowski.TaskID
	status      winkowski.Status
	ticket      winkowski.Ticket
	dest, heard uint64
	sent, acked []winkowski.Seq
	preds       [][]winkowski.Adm
	alarmSet    bool
	alarm       sim.Time
	blocking    [][]winkowski.Req
}

func snapTasks(a *winkowski.Agent) []taskSnap {
	if a == nil {
		return nil
	}
	n := 0
	for _, t := range a.Tasks {
		n += len(t.About)
	}
	out := make([]taskSnap, len(a.Tasks))
	preds := make([][]winkowski.Adm, n) // one allocation for every task's
	blocking := make([][]winkowski.Req, n)
	for i, t := range a.Tasks {
		s := taskSnap{id: t.ID, status: t.Status, ticket: t.Ticket, dest: t.Dest, heard: t.Heard, sent: t.Sent, acked: t.Acked,
			preds: preds[:len(t.About):len(t.About)], alarmSet: t.AlarmSet, alarm: t.Alarm, blocking: blocking[:len(t.About):len(t.About)]}
		preds, blocking = preds[len(t.About):], blocking[len(t.About):]
		for k := range t.About {
			s.preds[k] = t.About[k].Predecessors
			s.blocking[k] = t.About[k].Blocking
		}
		out[i] = s
	}
	return out
}

func findSnap(ss []taskSnap, id winkowski.TaskID) *taskSnap {
	for i := range ss {
		if ss[i].id == id {
			return &ss[i]
		}
	}
	return nil
}

func bit(k int) uint64 { return 1 << uint(k) }

// checkCall checks one handler call of agent a: before is the tasks' state before it,
// a the agent after it, sends what it sent. It counts what it checked in t.
//
// mem, nil in the model checker, is the simulator's memory across calls, for
// WK-1/precedence and F2/agent-restart (restartmon.go).
func checkCall(sys *winkowski.System, a *winkowski.Agent, in sim.Input, before []taskSnap, sends []sim.Envelope, t *ruleTally, mem *memory) []RuleBroken {
	if a == nil {
		return nil
	}
	var out []RuleBroken
	broken := func(rule string, task winkowski.TaskID, format string, args ...any) {
		out = append(out, RuleBroken{Rule: rule, Agent: a.Index, Task: task, Detail: t.detail(rule, format, args...)})
	}
	residue := winkowski.Ticket(a.Index + 1)
	K := winkowski.Ticket(sys.K)

	// WK-agent-state (§3, local states of agents).
	t.calls++
	var held []winkowski.Ticket
	var entering, competing []winkowski.TaskID
	for _, x := range a.Tasks {
		if x.Status == winkowski.Registering {
			entering = append(entering, x.ID)
		}
		if x.Ticket != 0 {
			held = append(held, x.Ticket)
			competing = append(competing, x.ID)
			if x.Ticket%K != residue {
				broken(ruleAgentState, x.ID, "holds ticket %d, not of the form nK+%d (K=%d)", x.Ticket, residue, K)
			}
		}
	}
	slices.Sort(held)
	slices.Sort(entering)
	slices.Sort(competing)
	for i := 1; i < len(held); i++ {
		if held[i] == held[i-1] {
			broken(ruleAgentState, 0, "two of its tasks hold ticket %d", held[i])
		}
	}
	if !slices.Equal(held, a.Distributed) {
		broken(ruleAgentState, 0, "DistributedTickets %v, but its tasks hold %v", a.Distributed, held)
	}
	if !slices.Equal(entering, a.Entering) {
		broken(ruleAgentState, 0, "Entering %v, but its tasks in REGISTERING are %v", a.Entering, entering)
	}
	if !slices.Equal(competing, a.Competing) {
		broken(ruleAgentState, 0, "Competing %v, but its tasks holding a ticket are %v", a.Competing, competing)
	}
	if mem != nil {
		// F2/agent-restart: the agent rebuilt from stable storage against the agent
		// the crash stopped.
		if prev := mem.agents[a.Index]; prev != nil && isRestart(in) && sys.Durable {
			mem.checkRestart(sys, a, prev, broken)
		}
		mem.noteTickets(a)
	}

	for _, x := range a.Tasks {
		b := findSnap(before, x.ID)
		if b == nil {
			continue // created or restored by this call
		}
		// WK-T1/ticket (§3 giving a ticket; choices T1, E1).
		if b.ticket == 0 && x.Ticket != 0 {
			t.grants++
			var floor winkowski.Ticket
			if in.Kind == sim.Timeout {
				// Only T's alarm gives a ticket in a timeout (E1): above every
				// remaining absolute predecessor.
				floor = maxTicket(b.preds)
			}
			if floor > 0 {
				t.floored++
			}
			if b.status != winkowski.Registering {
				broken(ruleTicket, x.ID, "given ticket %d in status %v, not at the end of its entering phase", x.Ticket, b.status)
			}
			var others []winkowski.Ticket
			for _, y := range a.Tasks {
				if y.ID != x.ID && y.Ticket != 0 {
					others = append(others, y.Ticket)
				}
			}
			if want := lowestTicket(K, residue, floor, others); x.Ticket != want {
				broken(ruleTicket, x.ID, "given ticket %d, want %d: the lowest nK+%d above %d that no other task of the agent holds (held: %v)",
					x.Ticket, want, residue, floor, others)
			}
		}
		// WK-1/predecessors (§3 receiving a message).
		m, isState := in.Msg.(winkowski.State)
		isState = isState && in.Kind == sim.Receive && m.Task == x.ID
		for k, p := range sys.Task(x.ID).Pools {
			if k >= len(x.About) || k >= len(b.preds) {
				break
			}
			now := x.About[k].Predecessors
			switch {
			case b.heard&bit(k) != 0:
				t.updates++
				for _, q := range now {
					if !slices.ContainsFunc(b.preds[k], func(r winkowski.Adm) bool { return r.Task == q.Task }) {
						broken(rulePreds, x.ID, "task %d became an absolute predecessor at %s after the first news (was %v, now %v)",
							q.Task, sys.PoolName(p), tasksOf(b.preds[k]), tasksOf(now))
						break
					}
				}
			case x.Heard&bit(k) != 0 && isState && m.Pool == p:
				t.firsts++
				if mem != nil {
					mem.recordFirstNews(x.ID, p, m.Snap.Admissions)
				}
				var want []winkowski.TaskID
				for _, q := range m.Snap.Admissions {
					if q.Task != x.ID {
						want = append(want, q.Task)
					}
				}
				if got := tasksOf(now); !slices.Equal(got, want) {
					broken(rulePreds, x.ID, "absolute predecessors at %s are %v after the first news, which shows the admissions of %v", sys.PoolName(p), got, want)
				}
			}
		}
		// WK-1/precedence (§2: a newcomer never outranks a task it found competing).
		if mem != nil && b.ticket == 0 && x.Ticket != 0 {
			mem.checkPrecedence(sys, x.ID, x.Ticket, broken)
		}
		// WK-1/enter (the end of the entering phase, E1).
		out = append(out, checkEnter(sys, a.Index, x, b, in, t)...)
		// WK-3/regress ((p1)/(p3) on the task's knowledge).
		if isState && (b.status == winkowski.Trying || b.status == winkowski.Ordering) {
			out = append(out, checkDecision(sys, a.Index, x, b, m, sends, t)...)
		}
		// WK-3/progress, WK-4/alarm, WK-4/advance.
		out = append(out, checkCompetition(sys, a.Index, x, b, in, sends, t)...)
	}
	return out
}

// checkDecision checks what task x (b before the call) did on receiving m in TRYING
// or ORDERING: withdraw everything when (p1)/(p3) fails, never withdraw first when it
// holds.
func checkDecision(sys *winkowski.System, agent int, x *winkowski.Task, b *taskSnap, m winkowski.State, sends []sim.Envelope, t *ruleTally) []RuleBroken {
	pools := sys.Task(x.ID).Pools
	k := slices.Index(pools, m.Pool)
	full := uint64(1)<<uint(len(pools)) - 1
	if k < 0 || m.Seq < b.acked[k] || m.Seq > b.sent[k] || x.Fresh != full {
		t.exempts++
		return nil
	}
	t.decisions++
	var forms []winkowski.Form
	for _, e := range sends {
		if f, ok := e.Msg.(winkowski.Form); ok && f.Task == x.ID && f.Type != winkowski.FormPoll {
			forms = append(forms, f)
		}
	}
	failing := conditionP(sys, x, b)
	holds := failing < 0
	name := "(p3)"
	if sys.Variant == winkowski.Restricted {
		name = "(p1)"
	}
	var out []RuleBroken
	broken := func(format string, args ...any) {
		if t.reported[ruleRegress] {
			out = append(out, RuleBroken{Rule: ruleRegress, Agent: agent, Task: x.ID})
			return
		}
		why := explainP(sys, x, b, failing)
		out = append(out, RuleBroken{Rule: ruleRegress, Agent: agent, Task: x.ID, Detail: fmt.Sprintf(format, append([]any{why}, args...)...)})
	}
	if holds {
		if len(forms) > 0 && forms[0].Type == winkowski.FormWithdrawal && !forms[0].Final {
			broken("%[2]s holds by its knowledge (%[1]s), yet it withdrew its request at %[3]s (%[4]v)", name, sys.PoolName(forms[0].Pool), b.status)
		}
		if b.status == winkowski.Trying {
			// WK-3: distribute the requests while the condition holds: one to every
			// destination, none elsewhere.
			for k, p := range pools {
				sent := slices.ContainsFunc(forms, func(f winkowski.Form) bool { return f.Pool == p && f.Type == winkowski.FormRequest })
				if want := b.dest&bit(k) != 0; sent != want {
					broken("%[2]s holds by its knowledge (%[1]s), yet it sent %[3]s request to %[4]s, %[5]s", name,
						map[bool]string{true: "a", false: "no"}[sent], sys.PoolName(p), map[bool]string{true: "a destination", false: "not a destination"}[want])
				}
			}
		}
		return out
	}
	if b.status == winkowski.Ordering && x.Status != winkowski.Trying {
		broken("%[2]s fails by its knowledge (%[1]s) in ORDERING, yet it is %[3]v after, not TRYING", name, x.Status)
	}
	for k, p := range pools {
		if b.dest&bit(k) != 0 {
			continue // no request out there
		}
		if !slices.ContainsFunc(forms, func(f winkowski.Form) bool {
			return f.Pool == p && f.Type == winkowski.FormWithdrawal && !f.Final
		}) {
			broken("%[2]s fails by its knowledge (%[1]s), yet it kept its request at %[3]s (%[4]v)", name, sys.PoolName(p), b.status)
		}
	}
	for _, f := range forms {
		switch f.Type {
		case winkowski.FormRequest, winkowski.FormOrder, winkowski.FormWinning:
			broken("%[2]s fails by its knowledge (%[1]s), yet it sent a %[3]v form to %[4]s (%[5]v)", name, f.Type, sys.PoolName(f.Pool), b.status)
		}
	}
	return out
}

// conditionP evaluates (p1) (restricted variant) or (p3) (complete) for task x with
// its knowledge after the call and its destinations and sent forms before it (the
// state the task's first step decided in): for every pool of interest, the requests in
// front of x's actual request — or its potential one at the end of the queue, if the
// knowledge is not known to show x's request (the pool is a destination, or the state
// predates some of x's forms: choices P1, K1) — from tasks with a ticket not above x's
// or (complete) an order form number fewer than the resources not in AboutUse. It
// returns the first pool (index in x's interest) where the condition fails, -1 if it
// holds everywhere.
func conditionP(sys *winkowski.System, x *winkowski.Task, b *taskSnap) (failing int) {
	for k := range sys.Task(x.ID).Pools {
		if n, free, _ := countP(sys, x, b, k); n >= free {
			return k
		}
	}
	return -1
}

// countP is the left side (n) and the right side (free) of the condition at x's k-th
// pool, and the requests it looked at.
func countP(sys *winkowski.System, x *winkowski.Task, b *taskSnap, k int) (n, free int, front []winkowski.Req) {
	kn := &x.About[k]
	end := len(kn.Requests)
	if b.dest&bit(k) == 0 && x.Acked[k] == b.sent[k] {
		if i := slices.IndexFunc(kn.Requests, func(r winkowski.Req) bool { return r.Task == x.ID }); i >= 0 {
			end = i
		}
	}
	for _, r := range kn.Requests[:end] {
		if r.Task == x.ID {
			continue
		}
		if r.Ticket <= b.ticket || (sys.Variant == winkowski.Complete && slices.Contains(kn.Orders, r.Task)) {
			n++
		}
	}
	return n, sys.Pools[sys.Task(x.ID).Pools[k]].Capacity - len(kn.Use), kn.Requests[:end]
}

// explainP renders the condition's counts for a violation: at the failing pool, or at
// every pool when it holds.
func explainP(sys *winkowski.System, x *winkowski.Task, b *taskSnap, failing int) string {
	var parts []string
	for k, p := range sys.Task(x.ID).Pools {
		if failing >= 0 && k != failing {
			continue
		}
		n, free, front := countP(sys, x, b, k)
		parts = append(parts, fmt.Sprintf("%s: %d of %v in front count, %d free", sys.PoolName(p), n, front, free))
	}
	return strings.Join(parts, "; ")
}

// lowestTicket is the lowest n·K+i (n ≥ 0) above floor not in held.
func lowestTicket(K, i, floor winkowski.Ticket, held []winkowski.Ticket) winkowski.Ticket {
	for n := i; ; n += K {
		if n > floor && !slices.Contains(held, n) {
			return n
		}
	}
}

func maxTicket(preds [][]winkowski.Adm) winkowski.Ticket {
	var m winkowski.Ticket
	for _, ps := range preds {
		for _, p := range ps {
			m = max(m, p.Ticket)
		}
	}
	return m
}

func tasksOf(as []winkowski.Adm) []winkowski.TaskID {
	out := make([]winkowski.TaskID, 0, len(as))
	for _, a := range as {
		out = append(out, a.Task)
	}
	slices.Sort(out)
	return out
}

// ruleProperties are the monitor's properties (game runs only): each fails with the
// first violation of its rule the monitor recorded, and says what it checked.
func ruleProperties(tally *ruleTally) []checker.Property {
	var props []checker.Property
	for _, rule := range monitorRules {
		props = append(props, checker.Property{Name: rule, Class: checker.Safety, Check: func(cr *checker.Run) error {
			n := 0
			var first *sim.Observation
			for i := range cr.Result.History {
				o := &cr.Result.History[i]
				if b, ok := o.Value.(RuleBroken); ok && o.Kind == kindRule && b.Rule == rule {
					if n == 0 {
						first = o
					}
					n++
				}
			}
			if n > 0 {
				return fmt.Errorf("at %v %s (%d violations)", first.Time, first.Value.(RuleBroken), n)
			}
			cr.Note(tally.note(rule))
			return nil
		}})
	}
	return props
}
