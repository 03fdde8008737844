package wkscen

import (
	"slices"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/protocols/winkowski"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// ---- the checks on synthetic handler calls ----

// monitorSystem: agents a1, a2 (K=3: a1 takes 1, 4, 7, …); pools P (one resource)
// and Q (two); task 1 on P+Q, task 2 on P, task 3 on Q (all a1's).
func monitorSystem(t *testing.T, v winkowski.Variant) *winkowski.System {
	t.Helper()
	ps := func(ids ...winkowski.PoolID) []winkowski.PoolID { return ids }
	sys, err := winkowski.NewSystem(winkowski.Config{Agents: 2, K: 3, Gamma: time.Millisecond, Variant: v,
		Pools: []winkowski.Pool{{Name: "P", Capacity: 1}, {Name: "Q", Capacity: 2, Host: 1}},
		Jobs:  []winkowski.Job{{Agent: 0, Tasks: []winkowski.TaskSpec{{Pools: ps(0, 1)}, {Pools: ps(0)}, {Pools: ps(1)}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return sys
}

// task returns a task of sys in status s with ticket n, fresh, every form applied.
func task(sys *winkowski.System, id winkowski.TaskID, s winkowski.Status, n winkowski.Ticket) *winkowski.Task {
	k := len(sys.Task(id).Pools)
	all := uint64(1)<<uint(k) - 1
	x := &winkowski.Task{ID: id, Status: s, Ticket: n, About: make([]winkowski.Knowledge, k), Sent: make([]winkowski.Seq, k),
		Acked: make([]winkowski.Seq, k), Unacked: make([][]winkowski.Form, k), Fresh: all, Heard: all}
	for i := range k {
		x.Sent[i], x.Acked[i] = 3, 3
	}
	return x
}

// agent returns agent 0 holding tasks, with the agent's sets consistent with them.
func agent(tasks ...*winkowski.Task) *winkowski.Agent {
	a := &winkowski.Agent{Index: 0, Tasks: tasks}
	for _, x := range tasks {
		if x.Status == winkowski.Registering {
			a.Entering = append(a.Entering, x.ID)
		}
		if x.Ticket != 0 {
			a.Competing = append(a.Competing, x.ID)
			a.Distributed = append(a.Distributed, x.Ticket)
		}
	}
	slices.Sort(a.Distributed)
	return a
}

func rules(bs []RuleBroken) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Rule+": "+b.String())
	}
	return out
}

// only keeps the violations of the rules a synthetic call is about (the others judge
// a crafted "after" state the agent would never reach).
func only(bs []RuleBroken, rules ...string) []RuleBroken {
	return slices.DeleteFunc(bs, func(b RuleBroken) bool { return !slices.Contains(rules, b.Rule) })
}

func wantRule(t *testing.T, what string, bs []RuleBroken, rule string) {
	t.Helper()
	if rule == "" {
		if len(bs) > 0 {
			t.Errorf("%s: %q, want no rule broken", what, rules(bs))
		}
		return
	}
	if len(bs) == 0 || !slices.ContainsFunc(bs, func(b RuleBroken) bool { return b.Rule == rule }) {
		t.Errorf("%s: %q, want %s broken", what, rules(bs), rule)
		return
	}
	t.Logf("%s: %s", what, rules(bs)[0])
}

func stateOf(pool winkowski.PoolID, task winkowski.TaskID, seq winkowski.Seq, snap *winkowski.PoolState) sim.Input {
	return sim.Input{Kind: sim.Receive, Msg: winkowski.State{Pool: pool, Task: task, Seq: seq, Snap: snap}}
}

// WK-agent-state: the agent's sets against its tasks.
func TestMonitorAgentState(t *testing.T) {
	sys := monitorSystem(t, winkowski.Complete)
	in := sim.Input{Kind: sim.Timeout}
	ok := agent(task(sys, 1, winkowski.Trying, 1), task(sys, 2, winkowski.Registering, 0), task(sys, 3, winkowski.Accessing, 0))
	wantRule(t, "consistent", checkCall(sys, ok, in, snapTasks(ok), nil, &ruleTally{}, nil), "")

	forgot := agent(task(sys, 1, winkowski.Trying, 1))
	forgot.Distributed = nil // a restart that lost the tickets (mutant e)
	wantRule(t, "DistributedTickets forgotten", checkCall(sys, forgot, in, nil, nil, &ruleTally{}, nil), ruleAgentState)

	dup := agent(task(sys, 1, winkowski.Trying, 1), task(sys, 2, winkowski.Trying, 1))
	wantRule(t, "two tasks, one ticket", checkCall(sys, dup, in, nil, nil, &ruleTally{}, nil), ruleAgentState)

	foreign := agent(task(sys, 1, winkowski.Trying, 2)) // a2's residue
	wantRule(t, "another agent's ticket", checkCall(sys, foreign, in, nil, nil, &ruleTally{}, nil), ruleAgentState)

	notEntering := agent(task(sys, 2, winkowski.Registering, 0))
	notEntering.Entering = nil
	wantRule(t, "Entering", checkCall(sys, notEntering, in, nil, nil, &ruleTally{}, nil), ruleAgentState)
}

// WK-T1/ticket: the lowest free ticket above the floor (E1 when entering by the alarm).
func TestMonitorTicket(t *testing.T) {
	sys := monitorSystem(t, winkowski.Complete)
	// Task 2 registering, its remaining absolute predecessor holds a2's ticket 5;
	// task 1 holds 1.
	reg := task(sys, 2, winkowski.Registering, 0)
	reg.About[0].Predecessors = []winkowski.Adm{{Task: 9, Ticket: 5}}
	before := snapTasks(agent(task(sys, 1, winkowski.Trying, 1), reg))
	grant := func(kind sim.InputKind, n winkowski.Ticket) []RuleBroken {
		after := agent(task(sys, 1, winkowski.Trying, 1), task(sys, 2, winkowski.Trying, n))
		return only(checkCall(sys, after, sim.Input{Kind: kind}, before, nil, &ruleTally{}, nil), ruleTicket, ruleAgentState)
	}
	// By the alarm (a timeout): above 5, so 7.
	wantRule(t, "alarm, ticket 7", grant(sim.Timeout, 7), "")
	wantRule(t, "alarm, ticket 10 (one step too high: mutant c)", grant(sim.Timeout, 10), ruleTicket)
	wantRule(t, "alarm, ticket 4 (below the floor)", grant(sim.Timeout, 4), ruleTicket)
	// On news that the predecessors left (a receive): the lowest free one, 4.
	wantRule(t, "news, ticket 4", grant(sim.Receive, 4), "")
	wantRule(t, "news, ticket 7", grant(sim.Receive, 7), ruleTicket)
	// A ticket given to a task not in its entering phase.
	before = snapTasks(agent(task(sys, 1, winkowski.Trying, 1), task(sys, 2, winkowski.Accessing, 0)))
	wantRule(t, "ticket to an ACCESSING task", grant(sim.Receive, 4), ruleTicket)
}

// WK-1/predecessors: set by the first news, only intersected afterwards.
func TestMonitorPredecessors(t *testing.T) {
	sys := monitorSystem(t, winkowski.Complete)
	snap := &winkowski.PoolState{Applications: []winkowski.Reg{{Task: 2}, {Task: 7}, {Task: 8}},
		Admissions: []winkowski.Adm{{Task: 7, Ticket: 2}, {Task: 8, Ticket: 5}}}
	// First news: the admissions there.
	b := task(sys, 2, winkowski.Registering, 0)
	b.Heard = 0
	before := snapTasks(agent(b))
	first := func(preds ...winkowski.Adm) []RuleBroken {
		x := task(sys, 2, winkowski.Registering, 0)
		x.About[0].Predecessors = preds
		return only(checkCall(sys, agent(x), stateOf(0, 2, 3, snap), before, nil, &ruleTally{}, nil), rulePreds)
	}
	wantRule(t, "first news, both", first(snap.Admissions...), "")
	wantRule(t, "first news, one missing", first(snap.Admissions[0]), rulePreds)
	// Later news: T's predecessors may only shrink.
	b = task(sys, 2, winkowski.Registering, 0)
	b.About[0].Predecessors = snap.Admissions[:1]
	before = snapTasks(agent(b))
	later := func(s winkowski.Status, preds ...winkowski.Adm) []RuleBroken {
		x := task(sys, 2, s, 0)
		x.About[0].Predecessors = preds
		return only(checkCall(sys, agent(x), stateOf(0, 2, 3, snap), before, nil, &ruleTally{}, nil), rulePreds)
	}
	wantRule(t, "later news, same", later(winkowski.Registering, snap.Admissions[0]), "")
	wantRule(t, "later news, left", later(winkowski.Registering), "")
	wantRule(t, "later news, re-read (mutant d)", later(winkowski.Registering, snap.Admissions...), rulePreds)
}

// WK-3/regress: withdraw exactly when (p1)/(p3) fails by the task's knowledge.
func TestMonitorRegress(t *testing.T) {
	for _, v := range []winkowski.Variant{winkowski.Complete, winkowski.Restricted} {
		sys := monitorSystem(t, v)
		// Task 2 (ticket 4, pool P of one resource) has its request out; task 9 holds
		// ticket 2 (higher priority), task 8 ticket 5 (lower).
		b := task(sys, 2, winkowski.Trying, 4)
		before := snapTasks(agent(b))
		call := func(queue []winkowski.Req, orders []winkowski.TaskID, sends ...winkowski.FormKind) []RuleBroken {
			snap := &winkowski.PoolState{Requests: queue, Orders: orders}
			x := task(sys, 2, winkowski.Trying, 4)
			x.About[0].Requests, x.About[0].Orders = queue, orders
			var env []sim.Envelope
			for _, f := range sends {
				x.Sent = []winkowski.Seq{4}
				env = append(env, sim.Envelope{Msg: winkowski.Form{Type: f, Pool: 0, Task: 2, Seq: 4}})
			}
			return only(checkCall(sys, agent(x), stateOf(0, 2, 3, snap), before, env, &ruleTally{}, nil), ruleRegress)
		}
		own, high, low := winkowski.Req{Task: 2, Ticket: 4}, winkowski.Req{Task: 9, Ticket: 2}, winkowski.Req{Task: 8, Ticket: 5}
		name := v.String() + ": "
		wantRule(t, name+"first, stays", call([]winkowski.Req{own, high}, nil), "")
		wantRule(t, name+"first, a higher-priority request behind, withdraws (mutant a)", call([]winkowski.Req{own, high}, nil, winkowski.FormWithdrawal), ruleRegress)
		wantRule(t, name+"behind a higher-priority request, withdraws", call([]winkowski.Req{high, own}, nil, winkowski.FormWithdrawal), "")
		wantRule(t, name+"behind a higher-priority request, stays", call([]winkowski.Req{high, own}, nil), ruleRegress)
		wantRule(t, name+"behind a lower-priority request, stays", call([]winkowski.Req{low, own}, nil), "")
		// An order form makes a lower-priority request count in (p3), not in (p1).
		withOrder := call([]winkowski.Req{low, own}, []winkowski.TaskID{8})
		if v == winkowski.Complete {
			wantRule(t, name+"behind an ordered lower-priority request, stays", withOrder, ruleRegress)
		} else {
			wantRule(t, name+"behind an ordered lower-priority request, stays", withOrder, "")
		}
	}
}

// ---- broken agents planted from test code, in runs ----

// saboteur wraps an agent and breaks it: pre rewrites the input the agent gets and
// returns what to fix in the agent after the call (nil: nothing); post changes the
// agent after the call (nil: nothing; in is the original input, before the tasks'
// state before the call).
type saboteur struct {
	inner *winkowski.Agent
	pre   func(a *winkowski.Agent, in sim.Input) (sim.Input, func(*winkowski.Agent))
	post  func(a *winkowski.Agent, in sim.Input, before []taskSnap)
}

func (s *saboteur) Agent() *winkowski.Agent { return s.inner }

func (s *saboteur) Handle(in sim.Input, out *sim.Outbox) {
	before := snapTasks(s.inner)
	got, fix := in, func(*winkowski.Agent) {}
	if s.pre != nil {
		if g, f := s.pre(s.inner, in); f != nil {
			got, fix = g, f
		}
	}
	s.inner.Handle(got, out)
	fix(s.inner)
	if s.post != nil {
		s.post(s.inner, in, before)
	}
}

func (s *saboteur) Clone() sim.Node {
	c := *s
	c.inner = s.inner.Clone().(*winkowski.Agent)
	return &c
}

func (s *saboteur) AppendState(b []byte) []byte { return s.inner.AppendState(b) }

// sabotage wraps every agent in the saboteur mk returns for the system.
func sabotage(mk func(sys *winkowski.System) saboteur) func(*winkowski.System, sim.Node) sim.Node {
	return func(sys *winkowski.System, n sim.Node) sim.Node {
		c := mk(sys)
		c.inner = n.(*winkowski.Agent)
		return &c
	}
}

// ticketUp: a task entering by the alarm past remaining predecessors (E1) gets the
// ticket one step (K) above the one the agent chose, the agent's DistributedTickets
// kept consistent, so that only T1 can tell (mutant c).
func ticketUp(sys *winkowski.System) saboteur {
	K := sys.K
	return saboteur{post: func(a *winkowski.Agent, in sim.Input, before []taskSnap) {
		if in.Kind != sim.Timeout {
			return
		}
		for _, x := range a.Tasks {
			if b := findSnap(before, x.ID); b != nil && b.ticket == 0 && x.Ticket != 0 && maxTicket(b.preds) > 0 {
				d := slices.DeleteFunc(slices.Clone(a.Distributed), func(n winkowski.Ticket) bool { return n == x.Ticket })
				x.Ticket += winkowski.Ticket(K)
				a.Distributed = append(d, x.Ticket)
				slices.Sort(a.Distributed)
			}
		}
	}}
}

// forgetTickets: a restarted agent forgets which tickets its tasks hold (mutant e).
func forgetTickets(*winkowski.System) saboteur {
	return saboteur{post: func(a *winkowski.Agent, in sim.Input, _ []taskSnap) {
		if in.Kind == sim.Restart {
			a.Distributed = nil
		}
	}}
}

// rereadPredecessors: every state re-reads the absolute predecessors, in any status
// (mutant d).
func rereadPredecessors(sys *winkowski.System) saboteur {
	return saboteur{post: func(a *winkowski.Agent, in sim.Input, _ []taskSnap) {
		m, ok := in.Msg.(winkowski.State)
		if in.Kind != sim.Receive || !ok {
			return
		}
		for _, x := range a.Tasks {
			if k := slices.Index(sys.Task(x.ID).Pools, m.Pool); x.ID == m.Task && k >= 0 && m.Snap.Registered(x.ID) {
				x.About[k].Predecessors = slices.DeleteFunc(slices.Clone(m.Snap.Admissions), func(q winkowski.Adm) bool { return q.Task == x.ID })
			}
		}
	}}
}

// countSuccessors: a task decides on a queue in which the requests of higher priority
// behind its own are moved in front of it — it counts them as predecessors of its
// request (mutant a) — and then keeps the true queue as its knowledge.
func countSuccessors(sys *winkowski.System) saboteur {
	return saboteur{pre: func(a *winkowski.Agent, in sim.Input) (sim.Input, func(*winkowski.Agent)) {
		m, ok := in.Msg.(winkowski.State)
		if in.Kind != sim.Receive || !ok {
			return in, nil
		}
		i := slices.IndexFunc(a.Tasks, func(x *winkowski.Task) bool { return x.ID == m.Task })
		own := m.Snap.Position(m.Task)
		if i < 0 || a.Tasks[i].Ticket == 0 || own < 0 {
			return in, nil
		}
		var front, back []winkowski.Req
		for _, r := range m.Snap.Requests[own+1:] {
			if r.Ticket < a.Tasks[i].Ticket {
				front = append(front, r)
			} else {
				back = append(back, r)
			}
		}
		if len(front) == 0 {
			return in, nil
		}
		snap := *m.Snap
		snap.Requests = slices.Concat(m.Snap.Requests[:own], front, m.Snap.Requests[own:own+1], back)
		truth := m.Snap.Requests
		m.Snap = &snap
		in.Msg = m
		k := slices.Index(sys.Task(m.Task).Pools, m.Pool)
		return in, func(a *winkowski.Agent) {
			for _, x := range a.Tasks {
				if x.ID == m.Task && len(x.About[k].Requests) > 0 && &x.About[k].Requests[0] == &snap.Requests[0] {
					x.About[k].Requests = truth
				}
			}
		}
	}}
}

// runSabotaged runs scenario name (workload wl, planner pl) with every agent wrapped
// by wrap, then the monitor.
func runSabotaged(t *testing.T, name string, wl workload, pl planner, seed uint64, params map[string]string, wrap func(*winkowski.System, sim.Node) sim.Node) *scenarios.Report {
	t.Helper()
	sc, err := scenarios.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	c := *sc
	c.Build = func(b *scenarios.Build) (*scenarios.Setup, error) {
		s, _, err := buildRunWrapped(b, wl, pl, plant{agent: wrap})
		return s, err
	}
	rep, err := scenarios.Run(&c, scenarios.Options{Seed: seed, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// failed returns the properties that failed in rep.
func failed(rep *scenarios.Report) []string {
	var out []string
	for _, v := range rep.Verdicts {
		if v.Failed() {
			out = append(out, v.Property)
		}
	}
	return out
}

// Every monitor rule catches an agent broken from here (each like one of the mutants
// that survived the mutation passes before the monitor existed), in the scenarios'
// runs; the unbroken agent passes the same seeds (TestScenariosSeeds).
func TestMonitorCatchesBrokenAgents(t *testing.T) {
	for _, c := range []struct {
		what     string
		scenario string
		wl       workload
		pl       planner
		seeds    uint64
		brk      func(*winkowski.System) saboteur
		rule     string
		all      bool // every seed must fail
	}{
		// E1 entries happen on the chain (its middle task fails for good).
		{"ticket one step above the lowest free one (E1)", "winkowski/chain", chain, chainPlan, 10, ticketUp, ruleTicket, false},
		{"restart forgets the tickets its tasks hold", "winkowski/rejoin", rejoin, rejoinPlan, 10, forgetTickets, ruleAgentState, true},
		{"restart forgets the tickets its tasks hold", "winkowski/rejoin", rejoin, rejoinPlan, 10, forgetTickets, ruleTicket, true},
		{"absolute predecessors re-read on every state", "winkowski/jobs", randomJobs, generated, 5, rereadPredecessors, rulePreds, true},
		{"successors of higher priority counted", "winkowski/dining", dining, generated, 5, countSuccessors, ruleRegress, true},
	} {
		hit := 0
		for seed := uint64(1); seed <= c.seeds; seed++ {
			rep := runSabotaged(t, c.scenario, c.wl, c.pl, seed, nil, sabotage(c.brk))
			if fs := failed(rep); slices.Contains(fs, c.rule) {
				hit++
			} else if c.all {
				t.Errorf("%s, %s seed %d: failed %v, want %s", c.what, c.scenario, seed, fs, c.rule)
			}
		}
		if hit == 0 {
			t.Errorf("%s: %s never fails on %s seeds 1-%d", c.what, c.rule, c.scenario, c.seeds)
		}
		t.Logf("%s: %s fails on %d of %s seeds 1-%d", c.what, c.rule, hit, c.scenario, c.seeds)
	}
}

// The model checker's "agent rules" catches broken agents too: a ticket above the
// lowest free one when entering by the alarm (the default model reaches E1), and, on
// random walks with a crash budget, a restart that forgets the tickets.
func TestModelMonitorCatchesBrokenAgents(t *testing.T) {
	for _, c := range []struct {
		what string
		opts modelOptions
		brk  func(*winkowski.System) saboteur
		o    model.Options
	}{
		{"ticket one step up", modelOptions{variant: "complete", entering: "alarm", bug: "none", tasks: []string{"P1", "P1+P2", "P2"}, caps: []string{"1", "1"}, agents: 1, hosts: 2, stagger: true},
			ticketUp, model.Options{Strategy: model.DFS, MaxStates: 400_000}},
		{"restart forgets tickets", modelOptions{variant: "complete", entering: "alarm", bug: "none", tasks: []string{"P1", "P1+P2", "P2"}, caps: []string{"1", "1"}, agents: 3, hosts: 2, stagger: true, crashes: 1},
			forgetTickets, model.Options{Strategy: model.Random, Seed: 1, Walks: 300}},
	} {
		a, err := c.opts.systemWrapped(plant{agent: sabotage(c.brk)})
		if err != nil {
			t.Fatal(err)
		}
		res, err := model.Check(a, c.o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Violation == nil || res.Violation.Name != "agent rules" {
			t.Errorf("%s: violation %v, want agent rules", c.what, res.Violation)
			continue
		}
		t.Logf("%s: %s violated at depth %d", c.what, res.Violation.Name, res.Violation.Depth)
	}
}
