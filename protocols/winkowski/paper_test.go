package winkowski

// One test per rule of the paper (Winkowski 2000, §2 and §3; digest WK-1…WK-4), in the
// spirit of etcd-io/raft's raft_paper_test.go. Each test drives nodes by hand (rig)
// and checks the effects of single actions.

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

func to(n sim.NodeID) func(sim.NodeID, sim.Message) bool {
	return func(t sim.NodeID, _ sim.Message) bool { return t == n }
}

func kind(k string) func(sim.NodeID, sim.Message) bool {
	return func(_ sim.NodeID, m sim.Message) bool { return m.Kind() == k }
}

func stateFor(task TaskID) func(sim.NodeID, sim.Message) bool {
	return func(_ sim.NodeID, m sim.Message) bool { s, ok := m.(State); return ok && s.Task == task }
}

func formOf(task TaskID) func(sim.NodeID, sim.Message) bool {
	return func(_ sim.NodeID, m sim.Message) bool { f, ok := m.(Form); return ok && f.Task == task }
}

// feed hands task id a crafted state of pool p: with ack, one that shows one more of
// the task's forms applied than the last state did; otherwise one that shows no more.
func (r *rig) feed(id TaskID, p PoolID, snap PoolState, ack bool) *sim.Outbox {
	a := r.agent(r.sys.Task(id).Agent)
	t := a.task(id)
	k := slices.Index(r.sys.Task(id).Pools, p)
	seq := t.Acked[k]
	if ack {
		seq++
	}
	return r.call(r.lay.Agent[a.Index], sim.Input{Kind: sim.Receive, From: r.lay.Manager(r.sys, p),
		Msg: State{Pool: p, Task: id, Snap: &snap, Seq: seq}})
}

func controlled(a *Agent) []TaskID {
	var ids []TaskID
	for _, t := range a.Tasks {
		ids = append(ids, t.ID)
	}
	return ids
}

func sentKinds(out *sim.Outbox) []string {
	var ks []string
	for _, e := range out.Sends() {
		ks = append(ks, e.Msg.Kind())
	}
	return ks
}

// §3 "Creation of a task T", WK-1: a created task is REGISTERING, without a ticket,
// with the alarm at ∞, in Controlled and Entering, and sends a registration form to
// the manager of every pool of its interest.
func TestWK1CreationSendsRegistrationForms(t *testing.T) {
	r := newRig(t, oneTaskCfg(2, []int{1, 1}, []PoolID{0, 1}))
	tk := r.task(1)
	if tk.Status != Registering || tk.Ticket != 0 || tk.AlarmSet {
		t.Fatalf("new task: status %v ticket %d alarm %v", tk.Status, tk.Ticket, tk.AlarmSet)
	}
	a := r.agent(0)
	if !slices.Equal(controlled(a), []TaskID{1}) || !slices.Equal(a.Entering, []TaskID{1}) || len(a.Competing) != 0 {
		t.Fatalf("agent: controlled %v entering %v competing %v", controlled(a), a.Entering, a.Competing)
	}
	regs := r.queued("Registration")
	if len(regs) != 2 {
		t.Fatalf("%d registration forms, want one per pool of interest (2)", len(regs))
	}
	for i, m := range regs {
		if f := m.(Form); f.Pool != PoolID(i) || f.Task != 1 || f.Agent != r.lay.Agent[0] || f.Seq != 1 {
			t.Fatalf("registration form %d: %+v", i, f)
		}
	}
	if len(r.observed(KindCreated)) != 1 {
		t.Fatal("creation not observed")
	}
}

// WK-1: a task records the tasks it finds in the competition phase at its pools as
// absolute predecessors, waits until they have left the game, then takes a ticket
// (ADMITTED), sends admission forms and, with all sent and a ticket held, is TRYING.
func TestWK1AbsolutePredecessors(t *testing.T) {
	cfg := oneTaskCfg(2, []int{1}, []PoolID{0}, []PoolID{0})
	cfg.Jobs[1].Start = 5 * time.Millisecond
	cfg.Entering = EnterLiteral
	r := newRig(t, cfg)
	m1, a1, a2 := r.lay.Host[0], r.lay.Agent[0], r.lay.Agent[1]
	r.deliver(to(m1)) // A's registration
	r.deliver(to(a1)) // A hears: no predecessor → ADMITTED → TRYING
	if r.status(1) != Trying || r.task(1).Ticket != 1 {
		t.Fatalf("A: status %v ticket %d, want TRYING with ticket 1 (agent 1 of K=3)", r.status(1), r.task(1).Ticket)
	}
	r.deliver(kind("Admission")) // A's admission arrives: A is in the competition phase
	r.fire(a2, "job/1")          // B is created
	r.deliver(formOf(2))         // B's registration
	r.deliver(stateFor(2))
	b := r.task(2)
	if b.Status != Registering || len(b.About[0].Predecessors) != 1 || b.About[0].Predecessors[0].Task != 1 {
		t.Fatalf("B: status %v predecessors %v, want REGISTERING waiting for A", b.Status, b.About[0].Predecessors)
	}
	// A wins, executes and leaves; B is admitted once A's admission form is gone.
	for r.status(1) != Accessing {
		if _, ok := r.deliver(nil); !ok {
			t.Fatal("A did not reach ACCESSING")
		}
		if r.status(2) != Registering {
			t.Fatalf("B left REGISTERING (%v) while A competes", r.status(2))
		}
	}
	r.settle()
	if r.status(2) < Trying || r.task(2).Ticket != 2 {
		t.Fatalf("B: status %v ticket %d after A left, want TRYING with ticket 2", r.status(2), r.task(2).Ticket)
	}
}

// E1: with the entering alarm, a task that has waited Γ without any absolute
// predecessor leaving enters with a ticket of lower priority than every remaining
// predecessor; with the literal entering phase it waits.
func TestE1EnteringAlarm(t *testing.T) {
	for _, mode := range []Entering{EnterAlarm, EnterLiteral} {
		cfg := oneTaskCfg(3, []int{1, 1, 1}, []PoolID{0}, []PoolID{0})
		cfg.K = 4
		// A is agent 1's task (tickets 2, 6, …); B is agent 0's (tickets 1, 5, …).
		cfg.Jobs[0].Agent, cfg.Jobs[1].Agent = 1, 0
		cfg.Jobs[1].Start = 5 * time.Millisecond
		cfg.Entering = mode
		r := newRig(t, cfg)
		r.deliver(formOf(1))
		r.deliver(stateFor(1))
		r.deliver(kind("Admission")) // A competes with ticket 2 and stays stuck there
		r.fire(r.lay.Agent[0], "job/1")
		r.deliver(formOf(2))
		r.deliver(stateFor(2))
		_, armed := r.timers[r.lay.Agent[0]]["alarm/2"]
		if mode == EnterLiteral {
			if armed || r.status(2) != Registering {
				t.Fatalf("literal: B armed %v status %v, want waiting without alarm", armed, r.status(2))
			}
			continue
		}
		if !armed {
			t.Fatal("alarm: B waits for A without its alarm set")
		}
		r.fire(r.lay.Agent[0], "alarm/2")
		if r.status(2) != Trying || r.task(2).Ticket != 5 {
			t.Fatalf("alarm: B status %v ticket %d, want TRYING with ticket 5 (above A's 2; not 1)", r.status(2), r.task(2).Ticket)
		}
	}
}

// §2, T1: agent i of K takes tickets nK+i — the lowest one it has not given out — and
// takes it back when the task starts accessing its resources.
func TestWK1TicketsNKPlusI(t *testing.T) {
	cfg := oneTaskCfg(2, []int{1, 1, 1}, []PoolID{0}, []PoolID{1}, []PoolID{2})
	cfg.K = 5
	for j := range cfg.Jobs {
		cfg.Jobs[j].Agent = 1 // residue i = 2
	}
	cfg.Jobs[2].Start = time.Second
	r := newRig(t, cfg)
	for _, id := range []TaskID{1, 2} {
		r.deliver(formOf(id))
		r.deliver(stateFor(id))
	}
	if r.task(1).Ticket != 2 || r.task(2).Ticket != 7 {
		t.Fatalf("tickets %d, %d; want 2 and 7 (nK+i with K=5, i=2)", r.task(1).Ticket, r.task(2).Ticket)
	}
	if !slices.Equal(r.agent(1).Distributed, []Ticket{2, 7}) {
		t.Fatalf("DistributedTickets %v", r.agent(1).Distributed)
	}
	for r.status(1) != Accessing {
		r.deliver(nil)
	}
	if r.task(1).Ticket != 0 || !slices.Equal(r.agent(1).Distributed, []Ticket{7}) {
		t.Fatalf("accessing task keeps ticket %d, distributed %v", r.task(1).Ticket, r.agent(1).Distributed)
	}
	r.fire(r.lay.Agent[1], "job/2")
	r.deliver(formOf(3))
	r.deliver(stateFor(3))
	if r.task(3).Ticket != 2 {
		t.Fatalf("third task got ticket %d, want the returned 2", r.task(3).Ticket)
	}
}

// WK-2: every action of a manager — also one without effect — is followed by its new
// state sent to every task registered at the pool, each copy carrying the sequence
// number of the recipient's last applied form (K2).
func TestWK2StateBroadcastAfterEveryAction(t *testing.T) {
	cfg := oneTaskCfg(1, []int{1})
	r := newRig(t, cfg)
	m := r.lay.Host[0]
	a := r.lay.Agent[0]
	seq := map[TaskID]Seq{}
	send := func(f Form) *sim.Outbox {
		seq[f.Task]++
		f.Pool, f.Seq, f.Agent = 0, seq[f.Task], a
		return r.call(m, sim.Input{Kind: sim.Receive, From: a, Msg: f})
	}
	check := func(out *sim.Outbox, want []TaskID) {
		t.Helper()
		var got []TaskID
		for _, e := range out.Sends() {
			s := e.Msg.(State)
			got = append(got, s.Task)
			if s.Seq != seq[s.Task] {
				t.Fatalf("state to task %d carries seq %d, want %d (its last form)", s.Task, s.Seq, seq[s.Task])
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("states to %v, want %v", got, want)
		}
	}
	check(send(Form{Type: FormRegistration, Task: 7}), []TaskID{7})
	check(send(Form{Type: FormRegistration, Task: 3}), []TaskID{3, 7})
	check(send(Form{Type: FormRegistration, Task: 3}), []TaskID{3, 7}) // no effect
	check(send(Form{Type: FormAdmission, Task: 3, Ticket: 4}), []TaskID{3, 7})
	check(send(Form{Type: FormRequest, Task: 3, Ticket: 4}), []TaskID{3, 7})
	check(send(Form{Type: FormRequest, Task: 3, Ticket: 4}), []TaskID{3, 7}) // appended once
	if q := r.pool(0).Requests; len(q) != 1 {
		t.Fatalf("queue %v: a request occurring in the queue must not be appended again", q)
	}
	check(send(Form{Type: FormOrder, Task: 3}), []TaskID{3, 7})
	check(send(Form{Type: FormWinning, Task: 3}), []TaskID{3, 7})
	check(send(Form{Type: FormWinning, Task: 7}), []TaskID{3, 7}) // none free: no effect
	// Releasing drops T's registration: T gets the state all the same.
	check(send(Form{Type: FormReleasing, Task: 3}), []TaskID{7, 3})
}

// K2: a manager applies each form of a task once, in the task's order. A duplicate, a
// form after a lost one, and a poll change nothing and are answered with the current
// state to the task alone.
func TestK2ManagerAppliesFormsOnceInOrder(t *testing.T) {
	r := newRig(t, oneTaskCfg(1, []int{1}))
	m, a := r.lay.Host[0], r.lay.Agent[0]
	send := func(f Form) *sim.Outbox {
		f.Pool, f.Agent = 0, a
		return r.call(m, sim.Input{Kind: sim.Receive, From: a, Msg: f})
	}
	answer := func(out *sim.Outbox, task TaskID, seq Seq) {
		t.Helper()
		if len(out.Sends()) != 1 {
			t.Fatalf("%d messages, want one state to task %d alone", len(out.Sends()), task)
		}
		if s := out.Sends()[0].Msg.(State); s.Task != task || s.Seq != seq || out.Sends()[0].To != a {
			t.Fatalf("answer %+v, want the state for task %d with seq %d", s, task, seq)
		}
	}
	send(Form{Type: FormRegistration, Task: 5, Seq: 1})
	send(Form{Type: FormRegistration, Task: 6, Seq: 1})
	send(Form{Type: FormAdmission, Task: 5, Seq: 2, Ticket: 1})
	// A request after a lost one (seq 4 before 3): not applied.
	answer(send(Form{Type: FormRequest, Task: 5, Seq: 4, Ticket: 1}), 5, 2)
	if len(r.pool(0).Requests) != 0 {
		t.Fatal("a form after a gap was applied")
	}
	out := send(Form{Type: FormRequest, Task: 5, Seq: 3, Ticket: 1})
	if len(out.Sends()) != 2 || len(r.pool(0).Requests) != 1 {
		t.Fatalf("the next form: %d states, queue %v; want a broadcast and the request queued", len(out.Sends()), r.pool(0).Requests)
	}
	// The resent withdrawal (seq 4) is applied; a duplicate of it is not.
	send(Form{Type: FormWithdrawal, Task: 5, Seq: 4, Ticket: 1})
	send(Form{Type: FormRequest, Task: 5, Seq: 5, Ticket: 1})
	answer(send(Form{Type: FormWithdrawal, Task: 5, Seq: 4, Ticket: 1}), 5, 5)
	if len(r.pool(0).Requests) != 1 {
		t.Fatalf("a duplicate withdrawal removed the request again: %v", r.pool(0).Requests)
	}
	answer(send(Form{Type: FormPoll, Task: 6}), 6, 1)
	// After T left, its late duplicates are still recognized.
	send(Form{Type: FormWithdrawal, Task: 5, Seq: 6, Ticket: 1, Final: true})
	send(Form{Type: FormWinning, Task: 5, Seq: 7, Ticket: 1})
	send(Form{Type: FormReleasing, Task: 5, Seq: 8})
	answer(send(Form{Type: FormRegistration, Task: 5, Seq: 1}), 5, 8)
	if r.pool(0).Registered(5) {
		t.Fatal("a late duplicate registration re-registered a task that left")
	}
}

// WK-2, manager actions on the pool state.
func TestWK2ManagerActions(t *testing.T) {
	var p PoolState
	sys, out := &System{}, &sim.Outbox{}
	for _, id := range []TaskID{1, 2, 3} {
		p = p.register(Reg{Task: id})
		p = p.admit(Adm{Task: id, Ticket: Ticket(10 * id)})
	}
	p = p.request(Req{Task: 1, Ticket: 10}).request(Req{Task: 2, Ticket: 20}).request(Req{Task: 3, Ticket: 30})
	order := func() []TaskID {
		var ts []TaskID
		for _, r := range p.Requests {
			ts = append(ts, r.Task)
		}
		return ts
	}
	// Advancing: transpose with the predecessor unless it has an order form; no effect
	// for the first request or a task without a request.
	p = p.advance(sys, 3, out)
	if !slices.Equal(order(), []TaskID{1, 3, 2}) {
		t.Fatalf("advance: %v, want [1 3 2]", order())
	}
	p = p.order(1)
	p = p.advance(sys, 3, out)
	if !slices.Equal(order(), []TaskID{1, 3, 2}) {
		t.Fatalf("advance past an order form: %v, want no effect", order())
	}
	p = p.advance(sys, 1, out).advance(sys, 9, out)
	if !slices.Equal(order(), []TaskID{1, 3, 2}) {
		t.Fatalf("advance of the first request / an absent one: %v", order())
	}
	// Withdrawal removes the request and the order form; the final one the admission.
	p = p.withdraw(1, false)
	if p.Position(1) >= 0 || p.Ordered(1) || !p.Admitted(1) {
		t.Fatalf("withdrawal: %+v", p)
	}
	p = p.withdraw(3, true)
	if p.Position(3) >= 0 || p.Admitted(3) || !p.Registered(3) {
		t.Fatalf("final withdrawal: %+v", p)
	}
	// An order form without a request is ignored (consistency).
	if o := p.order(1); o.Ordered(1) {
		t.Fatal("order form without a request accepted")
	}
	// Winning books the lowest free resource, no effect if none is free.
	p, u, ok := p.win(sys, 2, 2, out)
	if !ok || u != 0 {
		t.Fatalf("win: unit %d ok %v", u, ok)
	}
	p, u, ok = p.win(sys, 1, 2, out)
	if !ok || u != 1 {
		t.Fatalf("second win: unit %d ok %v", u, ok)
	}
	if _, _, ok := p.win(sys, 3, 2, out); ok {
		t.Fatal("win with no free resource had an effect")
	}
	// Releasing frees T's resource and drops its registration; no effect for a
	// task that uses none.
	p, u, ok = p.release(2)
	if !ok || u != 0 || p.Registered(2) || len(p.InUse) != 1 {
		t.Fatalf("release: unit %d ok %v state %+v", u, ok, p)
	}
	if _, _, ok := p.release(3); ok {
		t.Fatal("release of a task using nothing had an effect")
	}
}

// admitted drives task id (the rig's only task at its pools) to TRYING with its
// requests sent, by crafted states, and returns its ticket.
func (r *rig) admitted(id TaskID) Ticket {
	r.t.Helper()
	for _, p := range r.sys.Task(id).Pools {
		r.feed(id, p, PoolState{Applications: []Reg{{Task: id}}}, true)
	}
	tk := r.task(id)
	if tk.Status != Trying {
		r.t.Fatalf("task %d: %v after hearing from its pools", id, tk.Status)
	}
	return tk.Ticket
}

// snap is a pool state with task id's registration and admission and the given queue
// (tasks with tickets), order forms and users.
func snap(id TaskID, ticket Ticket, queue []Req, orders []TaskID, users []Use) PoolState {
	regs := []Reg{{Task: id}}
	adms := []Adm{{Task: id, Ticket: ticket}}
	for _, q := range queue {
		if q.Task != id {
			regs = append(regs, Reg{Task: q.Task})
			adms = append(adms, Adm(q))
		}
	}
	slices.SortFunc(regs, func(a, b Reg) int { return int(a.Task - b.Task) })
	slices.SortFunc(adms, func(a, b Adm) int { return int(a.Task - b.Task) })
	return PoolState{Applications: regs, Admissions: adms, Requests: queue, Orders: orders, InUse: users}
}

// ackAll answers the forms task id has pending at pool p with states showing snap,
// and returns the effects of the last answer.
func (r *rig) ackAll(id TaskID, p PoolID, s PoolState) *sim.Outbox {
	k := slices.Index(r.sys.Task(id).Pools, p)
	out := &sim.Outbox{}
	tk := r.task(id)
	for n := tk.Sent[k] - tk.Acked[k]; n > 0; n-- {
		out = r.feed(id, p, s, true)
	}
	return out
}

// WK-3 (p1): in the restricted variant a task distributes its requests while fewer
// requests of tasks of priority not lower than its own precede it than there are
// accessible resources, and must withdraw them otherwise; requests of lower-priority
// tasks do not count.
func TestWK3P1RestrictedCountsHigherPriorityOnly(t *testing.T) {
	cfg := oneTaskCfg(1, []int{1, 1}, []PoolID{0, 1})
	cfg.Variant = Restricted
	r := newRig(t, cfg)
	tk := r.admitted(1)
	if kinds := r.queued("Request"); len(kinds) != 2 {
		t.Fatalf("%d requests sent, want 2 (every pool)", len(kinds))
	}
	low := Req{Task: 9, Ticket: tk + 100}
	high := Req{Task: 8, Ticket: tk - 1}
	me := Req{Task: 1, Ticket: tk}
	// A lower-priority request in front: (p1) holds, T keeps its requests and waits
	// (no alarm in the restricted variant).
	r.ackAll(1, 0, snap(1, tk, []Req{low, me}, nil, nil))
	out := r.ackAll(1, 1, snap(1, tk, []Req{me}, nil, nil))
	if len(out.Sends()) != 0 || r.task(1).AlarmSet || r.status(1) != Trying {
		t.Fatalf("lower-priority predecessor: sent %v alarm %v status %v", sentKinds(out), r.task(1).AlarmSet, r.status(1))
	}
	// A higher-priority request in front: (p1) fails, T withdraws both requests.
	out = r.feed(1, 0, snap(1, tk, []Req{high, me}, nil, nil), false)
	if k := sentKinds(out); !slices.Equal(k, []string{"Withdrawal", "Withdrawal"}) || r.task(1).Dest != 3 {
		t.Fatalf("higher-priority predecessor: sent %v dest %b, want two withdrawals and both pools destinations", k, r.task(1).Dest)
	}
}

// WK-3: a task wins when all its requests are distributed and each is preceded by
// fewer requests than free resources: winning forms; booked everywhere → ACCESSING
// (withdraw admissions and requests, give the ticket back, execute); then RELEASING
// (releasing forms); released everywhere → it leaves the game.
func TestWK3WinAccessRelease(t *testing.T) {
	cfg := oneTaskCfg(1, []int{2, 1}, []PoolID{0, 1})
	cfg.Variant = Restricted
	r := newRig(t, cfg)
	tk := r.admitted(1)
	me := Req{Task: 1, Ticket: tk}
	other := Req{Task: 9, Ticket: tk + 100}
	r.ackAll(1, 0, snap(1, tk, []Req{other, me}, nil, nil)) // 1 before T < 2 free
	out := r.ackAll(1, 1, snap(1, tk, []Req{me}, nil, nil))
	if r.status(1) != Winning || !slices.Equal(sentKinds(out), []string{"Winning", "Winning"}) {
		t.Fatalf("status %v sent %v, want WINNING with winning forms", r.status(1), sentKinds(out))
	}
	r.ackAll(1, 0, snap(1, tk, []Req{other, me}, nil, []Use{{Unit: 1, Task: 1}}))
	out = r.ackAll(1, 1, snap(1, tk, []Req{me}, nil, []Use{{Unit: 0, Task: 1}}))
	if r.status(1) != Accessing || !slices.Equal(sentKinds(out), []string{"Withdrawal", "Withdrawal"}) {
		t.Fatalf("status %v sent %v, want ACCESSING after final withdrawals", r.status(1), sentKinds(out))
	}
	for _, m := range r.queued("Withdrawal")[len(r.queued("Withdrawal"))-2:] {
		if !m.(Form).Final {
			t.Fatal("the withdrawal at ACCESSING does not withdraw the admission form")
		}
	}
	if r.task(1).Ticket != 0 || len(r.agent(0).Distributed) != 0 || len(r.agent(0).Competing) != 0 {
		t.Fatal("ticket not given back at ACCESSING")
	}
	acc := r.observed(KindAccess)
	if len(acc) != 1 || !slices.Equal(acc[0].(Access).Units, []PoolUnit{{0, 1}, {1, 0}}) {
		t.Fatalf("access observed %v", acc)
	}
	r.fire(r.lay.Agent[0], "exec/1")
	if r.status(1) != Releasing || len(r.queued("Releasing")) != 2 {
		t.Fatalf("status %v, %d releasing forms", r.status(1), len(r.queued("Releasing")))
	}
	gone := PoolState{}
	r.ackAll(1, 0, gone)
	if r.task(1) == nil {
		t.Fatal("left the game with one pool not released")
	}
	r.ackAll(1, 1, gone)
	if r.task(1) != nil || len(r.observed(KindDone)) != 1 || len(r.agent(0).Tasks) != 0 {
		t.Fatal("did not leave the game when released everywhere")
	}
}

// WK-4 (p3): in the complete variant requests of tasks with an order form count as
// well, whatever their priority.
func TestWK4P3CountsOrderForms(t *testing.T) {
	for _, withOrder := range []bool{false, true} {
		r := newRig(t, oneTaskCfg(1, []int{1}, []PoolID{0}))
		tk := r.admitted(1)
		low := Req{Task: 9, Ticket: tk + 100}
		var orders []TaskID
		if withOrder {
			orders = []TaskID{9}
		}
		r.ackAll(1, 0, snap(1, tk, []Req{low, {Task: 1, Ticket: tk}}, orders, nil))
		withdrew := len(r.queued("Withdrawal")) > 0
		if withdrew != withOrder {
			t.Fatalf("order form %v: withdrew %v", withOrder, withdrew)
		}
	}
}

// WK-4: all requests distributed and in front → ORDERING with order forms; WINNING
// only once the order forms are seen everywhere (O1); (p3) failing in ORDERING →
// withdrawals and back to TRYING.
func TestWK4OrderingThenWinning(t *testing.T) {
	r := newRig(t, oneTaskCfg(1, []int{1, 1}, []PoolID{0, 1}))
	tk := r.admitted(1)
	me := Req{Task: 1, Ticket: tk}
	r.ackAll(1, 0, snap(1, tk, []Req{me}, nil, nil))
	out := r.ackAll(1, 1, snap(1, tk, []Req{me}, nil, nil))
	if r.status(1) != Ordering || !slices.Equal(sentKinds(out), []string{"Order", "Order"}) {
		t.Fatalf("status %v sent %v, want ORDERING with order forms", r.status(1), sentKinds(out))
	}
	out = r.ackAll(1, 0, snap(1, tk, []Req{me}, []TaskID{1}, nil))
	if r.status(1) != Ordering || len(out.Sends()) != 0 {
		t.Fatalf("won with one order form unseen (status %v)", r.status(1))
	}
	// A higher-priority task's request appears in front at pool 1: (p3) fails.
	high := Req{Task: 8, Ticket: tk - 1}
	out = r.ackAll(1, 1, snap(1, tk, []Req{high, me}, []TaskID{1}, nil))
	if r.status(1) != Trying || !slices.Equal(sentKinds(out), []string{"Withdrawal", "Withdrawal"}) {
		t.Fatalf("status %v sent %v, want TRYING after withdrawing from ORDERING", r.status(1), sentKinds(out))
	}
}

// WK-4: requests distributed but blocked by at least as many requests as accessible
// resources → alarm at now+Γ and the blocking requests (predecessors without order
// forms) registered. When it rings: if none of them was removed → ADVANCING with
// advancing forms, also when another request came in front meanwhile (G1: the paper
// waits "for some of these requests to be removed"); if one was removed → register
// the current blocking requests and wait another Γ.
func TestWK4AlarmAndAdvancingForms(t *testing.T) {
	for _, c := range []string{"unchanged", "removed", "added"} {
		r := newRig(t, oneTaskCfg(1, []int{1, 1}, []PoolID{0, 1}))
		tk := r.admitted(1)
		me := Req{Task: 1, Ticket: tk}
		low := Req{Task: 9, Ticket: tk + 100}
		low2 := Req{Task: 10, Ticket: tk + 200}
		r.ackAll(1, 0, snap(1, tk, []Req{low, me}, nil, nil))
		r.ackAll(1, 1, snap(1, tk, []Req{me}, nil, nil))
		tsk := r.task(1)
		if !tsk.AlarmSet || tsk.Alarm != r.now.Add(r.sys.Gamma) || !slices.Equal(tsk.About[0].Blocking, []Req{low}) {
			t.Fatalf("alarm %v at %v blocking %v, want set at now+Γ with [low]", tsk.AlarmSet, tsk.Alarm, tsk.About[0].Blocking)
		}
		switch c {
		case "removed":
			r.feed(1, 0, snap(1, tk, []Req{low2, me}, nil, nil), false)
		case "added":
			r.feed(1, 0, snap(1, tk, []Req{low2, low, me}, nil, nil), false)
		}
		before := len(r.queued("Advance"))
		r.fire(r.lay.Agent[0], "alarm/1")
		adv := r.queued("Advance")[before:]
		if c == "removed" {
			if len(adv) != 0 || !r.task(1).AlarmSet || !slices.Equal(r.task(1).About[0].Blocking, []Req{low2}) {
				t.Fatalf("%s: %d advancing forms, alarm %v, blocking %v; want the alarm re-armed with [low2]", c, len(adv), r.task(1).AlarmSet, r.task(1).About[0].Blocking)
			}
			continue
		}
		if len(adv) != 1 || adv[0].(Form).Pool != 0 {
			t.Fatalf("%s: advancing forms %v, want one to the blocked pool 0", c, adv)
		}
		var passed bool
		for _, v := range r.observed(KindStatus) {
			passed = passed || v.(StatusChange).To == Advancing
		}
		if !passed || r.status(1) != Trying {
			t.Fatalf("%s: ADVANCING observed %v, now %v", c, passed, r.status(1))
		}
	}
}

// K1: a state that does not reflect all the forms a task has sent (its
// acknowledgements are pending) tells nothing about the task's own request: here the
// task withdrew and requested again, and a state older than the withdrawal shows its
// old request in front; it must not order on it.
func TestK1StaleOwnRequestIgnored(t *testing.T) {
	r := newRig(t, oneTaskCfg(1, []int{1}, []PoolID{0}))
	tk := r.admitted(1)
	me := Req{Task: 1, Ticket: tk}
	high := Req{Task: 8, Ticket: tk - 1}
	r.ackAll(1, 0, snap(1, tk, []Req{high, me}, nil, nil)) // (p3) fails: withdraw
	r.feed(1, 0, snap(1, tk, []Req{me}, nil, nil), false)  // the high one left: request again
	if tk := r.task(1); tk.Sent[0]-tk.Acked[0] != 2 {
		t.Fatalf("%d forms not yet applied, want 2 (withdrawal and new request)", tk.Sent[0]-tk.Acked[0])
	}
	out := r.feed(1, 0, snap(1, tk, []Req{me}, nil, nil), false) // stale: own entry is old
	if r.status(1) != Trying || len(out.Sends()) != 0 {
		t.Fatalf("acted on a stale own request: status %v sent %v", r.status(1), sentKinds(out))
	}
	r.ackAll(1, 0, snap(1, tk, []Req{me}, nil, nil))
	if r.status(1) != Ordering {
		t.Fatalf("status %v once every form is acknowledged, want ORDERING", r.status(1))
	}
	// A state older than one already seen (possible only on a reordering network) is
	// ignored: here it shows a higher-priority request in front.
	old := snap(1, tk, []Req{high, me}, nil, nil)
	out = r.call(r.lay.Agent[0], sim.Input{Kind: sim.Receive, From: r.lay.Host[0], Msg: State{Pool: 0, Task: 1, Snap: &old, Seq: 2}})
	if r.status(1) != Ordering || len(out.Sends()) != 0 || len(r.task(1).About[0].Requests) != 1 {
		t.Fatalf("acted on an older state: status %v sent %v", r.status(1), sentKinds(out))
	}
}

// Without K1 (a policy that takes every state as current, the variant -p bug=no-ack)
// the task trusts the stale state above and orders on its old request.
func TestK1BrokenWithoutAcks(t *testing.T) {
	cfg := oneTaskCfg(1, []int{1}, []PoolID{0})
	cfg.Policy.Current = func(*Task, int) bool { return true }
	r := newRig(t, cfg)
	tk := r.admitted(1)
	me := Req{Task: 1, Ticket: tk}
	r.ackAll(1, 0, snap(1, tk, []Req{{Task: 8, Ticket: tk - 1}, me}, nil, nil))
	r.feed(1, 0, snap(1, tk, []Req{me}, nil, nil), false)
	r.feed(1, 0, snap(1, tk, []Req{me}, nil, nil), false)
	if r.status(1) != Ordering {
		t.Fatalf("status %v: the broken variant should have ordered on the stale state", r.status(1))
	}
}

// F2: a durable agent that crashes and restarts resumes its tasks, polls every pool of
// every task, and plays again only once every pool has answered. Its sequence numbers
// survive the crash (K2), so a state that does not reflect a form sent before the crash
// is not taken to: here T sent its order forms, crashed, and the first answers after
// the restart predate them.
func TestF2RestartResumesAndPolls(t *testing.T) {
	cfg := oneTaskCfg(1, []int{1, 1}, []PoolID{0, 1})
	cfg.Durable = true
	r := newRig(t, cfg)
	tk := r.admitted(1)
	me := Req{Task: 1, Ticket: tk}
	r.ackAll(1, 0, snap(1, tk, []Req{me}, nil, nil))
	r.ackAll(1, 1, snap(1, tk, []Req{me}, nil, nil))
	if r.status(1) != Ordering || r.task(1).Sent[0] != 4 {
		t.Fatalf("status %v sent %v, want ORDERING with the order forms (seq 4) sent", r.status(1), r.task(1).Sent)
	}
	n := r.lay.Agent[0]
	before := len(r.queue)
	r.crashRestart(n, NewAgent(r.sys, r.lay, 0))
	tsk := r.task(1)
	if tsk == nil || tsk.Status != Ordering || tsk.Ticket != tk || !slices.Equal(tsk.Sent, []Seq{4, 4}) || !slices.Equal(tsk.Acked, []Seq{3, 3}) {
		t.Fatalf("after restart: %+v", tsk)
	}
	if !slices.Equal(r.agent(0).Competing, []TaskID{1}) || !slices.Equal(r.agent(0).Distributed, []Ticket{tk}) {
		t.Fatalf("agent state not rebuilt: competing %v distributed %v", r.agent(0).Competing, r.agent(0).Distributed)
	}
	var polls []PoolID
	for _, e := range r.queue[before:] {
		if f := e.Msg.(Form); f.Type == FormPoll {
			polls = append(polls, f.Pool)
		}
	}
	if !slices.Equal(polls, []PoolID{0, 1}) {
		t.Fatalf("polls to %v, want one per pool", polls)
	}
	// A state from pool 0 that would make (p3) fail: not acted on before pool 1 answered.
	high := Req{Task: 8, Ticket: tk - 1}
	if out := r.feed(1, 0, snap(1, tk, []Req{high, me}, nil, nil), false); len(out.Sends()) != 0 {
		t.Fatalf("played before every pool answered the polls: sent %v", sentKinds(out))
	}
	// Answers that predate the order forms: T does not win on them.
	r.feed(1, 0, snap(1, tk, []Req{me}, []TaskID{1}, nil), false)
	out := r.feed(1, 1, snap(1, tk, []Req{me}, []TaskID{1}, nil), false)
	if r.status(1) != Ordering || len(out.Sends()) != 0 {
		t.Fatalf("won on states that predate its order forms: status %v sent %v", r.status(1), sentKinds(out))
	}
	r.feed(1, 0, snap(1, tk, []Req{me}, []TaskID{1}, nil), true)
	r.feed(1, 1, snap(1, tk, []Req{me}, []TaskID{1}, nil), true)
	if r.status(1) != Winning {
		t.Fatalf("status %v once the order forms are seen applied, want WINNING", r.status(1))
	}
}

// K2: with Retry, a task resends the forms a pool has not applied when the pool sent
// it nothing for a whole period, and polls a pool it needs news from; a pool that
// spoke in the meantime is left alone.
func TestK2RetryResendsAndPolls(t *testing.T) {
	cfg := oneTaskCfg(1, []int{1, 1}, []PoolID{0, 1})
	cfg.Retry = 50 * time.Millisecond
	r := newRig(t, cfg)
	a := r.lay.Agent[0]
	// The registration to pool 0 is lost; pool 1 answers.
	r.queue, r.from = r.queue[1:], r.from[1:]
	r.settle()
	r.fire(a, "retry/1")
	sent := r.queue
	if len(sent) != 1 || sent[0].Msg.(Form).Type != FormRegistration || sent[0].Msg.(Form).Pool != 0 || sent[0].Msg.(Form).Seq != 1 {
		t.Fatalf("first retry sent %v, want the lost registration to pool 0 again", sent)
	}
	r.settle()
	if r.status(1) != Accessing {
		t.Fatalf("status %v after the resent registration was answered, want ACCESSING (no conflict)", r.status(1))
	}
	for r.status(1) != Accessing {
		if _, ok := r.deliver(nil); !ok {
			t.Fatalf("stuck in %v", r.status(1))
		}
	}
	r.fire(a, "exec/1")
	// Both states answering the releasing forms are lost: the task resends its
	// releasing forms, the managers answer the duplicates, and the task leaves.
	for {
		if _, ok := r.deliver(func(to sim.NodeID, _ sim.Message) bool { return to != a }); !ok {
			break
		}
	}
	r.queue, r.from = nil, nil // drop the states
	r.fire(a, "retry/1")       // a state arrived since the last ring: quiet now
	r.fire(a, "retry/1")
	if ks := r.queued("Releasing"); len(ks) != 2 {
		t.Fatalf("resent %d releasing forms, want 2", len(ks))
	}
	r.settle()
	if r.task(1) != nil {
		t.Fatalf("task still in %v after its releasing forms were answered", r.status(1))
	}
	// A pool busy with other tasks' forms keeps sending states, none of which shows
	// T's lost form applied: T resends it all the same.
	cfg3 := oneTaskCfg(1, []int{1}, []PoolID{0})
	cfg3.Retry = 50 * time.Millisecond
	r3 := newRig(t, cfg3)
	r3.queue, r3.from = nil, nil // the registration is lost
	for range 2 {
		r3.feed(1, 0, PoolState{Applications: []Reg{{Task: 9}}}, false) // another task's action
		r3.fire(r3.lay.Agent[0], "retry/1")
	}
	if regs := r3.queued("Registration"); len(regs) != 2 {
		t.Fatalf("%d registrations resent, want 2 (one per ring: other tasks' states do not count)", len(regs))
	}
	// Polls: a task waiting with everything applied polls a quiet pool.
	cfg2 := oneTaskCfg(1, []int{1}, []PoolID{0})
	cfg2.Retry = 50 * time.Millisecond
	r2 := newRig(t, cfg2)
	r2.admitted(1)
	r2.ackAll(1, 0, snap(1, r2.task(1).Ticket, []Req{{Task: 9, Ticket: 100}, {Task: 1, Ticket: r2.task(1).Ticket}}, nil, nil))
	if r2.status(1) != Trying || !r2.task(1).AlarmSet {
		t.Fatalf("status %v alarm %v, want TRYING and blocked", r2.status(1), r2.task(1).AlarmSet)
	}
	r2.queue, r2.from = nil, nil
	r2.fire(r2.lay.Agent[0], "retry/1")
	r2.fire(r2.lay.Agent[0], "retry/1")
	if ps := r2.queued("Poll"); len(ps) != 1 {
		t.Fatalf("%d polls, want 1 (a state arrived before the first ring)", len(ps))
	}
}

// Bad input is rejected with one clear line before anything runs.
func TestNewSystemRejectsBadInput(t *testing.T) {
	good := oneTaskCfg(2, []int{1, 2}, []PoolID{0, 1})
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"unknown pool", func(c *Config) { c.Jobs[0].Tasks[0].Pools = []PoolID{0, 5} }, "unknown pool 5"},
		{"capacity 0", func(c *Config) { c.Pools[1].Capacity = 0 }, `pool "P1" has capacity 0`},
		{"K below agents", func(c *Config) { c.K = 1 }, "K=1 must exceed the number of agents (2)"},
		{"K equal to agents", func(c *Config) { c.K = 2 }, "K=2 must exceed"},
		{"gamma zero", func(c *Config) { c.Gamma = 0 }, "Γ must be positive"},
		{"gamma negative", func(c *Config) { c.Gamma = -time.Second }, "Γ must be positive"},
		{"no pool in task", func(c *Config) { c.Jobs[0].Tasks[0].Pools = nil }, "interested in no pool"},
		{"pool twice", func(c *Config) { c.Jobs[0].Tasks[0].Pools = []PoolID{1, 1} }, "names a pool twice"},
		{"pool host", func(c *Config) { c.Pools[0].Host = 7 }, "on computer 7"},
	} {
		cfg := good
		cfg.Pools = slices.Clone(good.Pools)
		cfg.Jobs = []Job{{Agent: 0, Tasks: []TaskSpec{{Pools: []PoolID{0, 1}}}}}
		c.edit(&cfg)
		_, err := NewSystem(cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
	if _, err := NewSystem(good); err != nil {
		t.Fatalf("good config rejected: %v", err)
	}
}
