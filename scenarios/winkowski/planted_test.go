package wkscen

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/protocols/winkowski"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// Every branched rule of the rule map (protocols/winkowski/rules.go) has a property
// that a one-line bug in its branch violates, and a system-level detector finds it:
// here each rule's bug is planted from test code — a Policy hook, or a wrapper that
// breaks the agent or manager node the way the bug would — and caught by the default
// swarm (winkowski/swarm seeds 1-2000, stopping at the first failure) or by a
// configuration of the model's portfolio (BFS, as `simrun check winkowski` runs it).

// plants names the planted bugs of the table below, for the test scenario
// "winkowski/planted" (the swarm with a plant).
var plants = map[string]plant{}

func init() {
	for _, b := range plantedBugs {
		plants[b.name] = b.plant
	}
	sc, err := scenarios.Lookup("winkowski/swarm")
	if err != nil {
		panic(err)
	}
	ps := append(slices.Clone(sc.Params), scenarios.Param{Name: "plant", Default: "", Help: "a planted bug of planted_test.go"})
	scenarios.Register(&scenarios.Scenario{Name: "winkowski/planted", Help: "winkowski/swarm with a bug planted from test code", Params: ps,
		Build: func(b *scenarios.Build) (*scenarios.Setup, error) {
			name := b.Params.String("plant")
			pl, ok := plants[name]
			if !ok && name != "" {
				return nil, fmt.Errorf("unknown plant %q", name)
			}
			s, _, err := buildRunWrapped(b, swarm, swarmPlan, pl)
			return s, err
		}})
}

// plantedBug is one rule's bug: detector is "swarm" or "model:CONFIG" (a portfolio
// configuration); want is the prefix of a property that must catch it (alternatives
// separated by "|": a sweep reports the worst verdict of the first failing seed).
type plantedBug struct {
	rule, name, what string
	plant            plant
	detector         string
	want             string
}

// ---- planting helpers ----

// copyOut replays the effects of tmp into out, leaving out the sends drop rejects.
func copyOut(tmp, out *sim.Outbox, drop func(e sim.Envelope) bool) {
	for _, e := range tmp.Sends() {
		if drop == nil || !drop(e) {
			out.Send(e.To, e.Msg)
		}
	}
	for _, op := range tmp.Timers() {
		if op.Cancel {
			out.CancelTimer(op.ID)
		} else {
			out.SetTimer(op.ID, op.After)
		}
	}
	for _, w := range tmp.Writes() {
		if w.Delete {
			out.Delete(w.Key)
		} else {
			out.Store(w.Key, w.Value)
		}
	}
	for i := range tmp.NumObservations() {
		k, v := tmp.Observation(i)
		out.Observe(k, v)
	}
}

// agentBreaker wraps an agent: pre rewrites its input, drop removes sends of the call,
// post changes the agent after the call (each nil: nothing).
type agentBreaker struct {
	inner *winkowski.Agent
	pre   func(a *winkowski.Agent, in sim.Input) sim.Input
	drop  func(a *winkowski.Agent, in sim.Input, before []taskSnap, e sim.Envelope) bool
	post  func(a *winkowski.Agent, in sim.Input, before []taskSnap, out *sim.Outbox)
}

func (s *agentBreaker) Agent() *winkowski.Agent { return s.inner }

func (s *agentBreaker) Handle(in sim.Input, out *sim.Outbox) {
	before := snapTasks(s.inner)
	got := in
	if s.pre != nil {
		got = s.pre(s.inner, in)
	}
	var tmp sim.Outbox
	s.inner.Handle(got, &tmp)
	copyOut(&tmp, out, func(e sim.Envelope) bool { return s.drop != nil && s.drop(s.inner, in, before, e) })
	if s.post != nil {
		s.post(s.inner, in, before, out)
	}
}

func (s *agentBreaker) Clone() sim.Node {
	c := *s
	c.inner = s.inner.Clone().(*winkowski.Agent)
	return &c
}

func (s *agentBreaker) AppendState(b []byte) []byte { return s.inner.AppendState(b) }

func breakAgent(b agentBreaker) func(*winkowski.System, sim.Node) sim.Node {
	return func(_ *winkowski.System, n sim.Node) sim.Node {
		c := b
		c.inner = n.(*winkowski.Agent)
		return &c
	}
}

// hostBreaker wraps a manager host likewise.
type hostBreaker struct {
	inner *winkowski.Host
	pre   func(h *winkowski.Host, in sim.Input) sim.Input
	drop  func(h *winkowski.Host, in sim.Input, e sim.Envelope) bool
	post  func(h *winkowski.Host, in sim.Input)
}

func (s *hostBreaker) Host() *winkowski.Host { return s.inner }

func (s *hostBreaker) Handle(in sim.Input, out *sim.Outbox) {
	got := in
	if s.pre != nil {
		got = s.pre(s.inner, in)
	}
	var tmp sim.Outbox
	s.inner.Handle(got, &tmp)
	copyOut(&tmp, out, func(e sim.Envelope) bool { return s.drop != nil && s.drop(s.inner, in, e) })
	if s.post != nil {
		s.post(s.inner, in)
	}
}

func (s *hostBreaker) Clone() sim.Node {
	c := *s
	c.inner = s.inner.Clone().(*winkowski.Host)
	return &c
}

func (s *hostBreaker) AppendState(b []byte) []byte { return s.inner.AppendState(b) }

func breakHost(b hostBreaker) func(*winkowski.System, sim.Node) sim.Node {
	return func(_ *winkowski.System, n sim.Node) sim.Node {
		c := b
		c.inner = n.(*winkowski.Host)
		return &c
	}
}

// formIn returns the form of an input, if it is one of kind that is its task's next
// one at host h (an action, not a poll or duplicate).
func formIn(h *winkowski.Host, in sim.Input, kind winkowski.FormKind) (winkowski.Form, int, bool) {
	f, ok := in.Msg.(winkowski.Form)
	if in.Kind != sim.Receive || !ok || f.Type != kind {
		return f, 0, false
	}
	i := slices.Index(h.Pools, f.Pool)
	return f, i, f.Seq == lastApplied(h.Applied[i], f.Task)+1
}

// ignoring: the manager's action on forms of kind has no effect (its branch lost).
func ignoring(kind winkowski.FormKind, also func(winkowski.Form) bool) plant {
	return plant{host: breakHost(hostBreaker{pre: func(h *winkowski.Host, in sim.Input) sim.Input {
		if f, _, next := formIn(h, in, kind); next && (also == nil || also(f)) {
			f.Type = winkowski.FormPoll
			in.Msg = f
		}
		return in
	}})}
}

// dropAgentForms: the agent does not send the new forms of kind that which selects.
func dropAgentForms(kind winkowski.FormKind, which func(a *winkowski.Agent, in sim.Input, before []taskSnap, f winkowski.Form) bool) plant {
	return plant{agent: breakAgent(agentBreaker{drop: func(a *winkowski.Agent, in sim.Input, before []taskSnap, e sim.Envelope) bool {
		f, ok := e.Msg.(winkowski.Form)
		return ok && f.Type == kind && (which == nil || which(a, in, before, f))
	}})}
}

// newForm reports whether f is a new form (not a resend) of a task of the agent.
func newForm(a *winkowski.Agent, before []taskSnap, f winkowski.Form) bool {
	b := findSnap(before, f.Task)
	if b == nil {
		return true
	}
	k := slices.Index(a.System().Task(f.Task).Pools, f.Pool)
	return k >= 0 && f.Seq > b.sent[k]
}

// taskOf returns the agent's task id.
func taskOf(a *winkowski.Agent, id winkowski.TaskID) *winkowski.Task {
	for _, t := range a.Tasks {
		if t.ID == id {
			return t
		}
	}
	return nil
}

func policy(f func(p *winkowski.Policy)) plant { return plant{policy: f} }

// ---- the bugs ----

var plantedBugs = []plantedBug{
	// WK-1, entering phase.
	{"WK-1 register", "no-register-last", "the registration form to the task's last pool is not sent",
		dropAgentForms(winkowski.FormRegistration, func(a *winkowski.Agent, _ sim.Input, _ []taskSnap, f winkowski.Form) bool {
			ps := a.System().Task(f.Task).Pools
			return len(ps) > 1 && f.Pool == ps[len(ps)-1]
		}), "swarm", "WK-P"},
	{"WK-1 first-news", "first-news-empty", "the first news sets no absolute predecessors",
		plant{agent: breakAgent(agentBreaker{post: func(a *winkowski.Agent, in sim.Input, before []taskSnap, _ *sim.Outbox) {
			for _, x := range a.Tasks {
				if b := findSnap(before, x.ID); b != nil && x.Heard != b.heard {
					for k := range x.About {
						if b.heard&bit(k) == 0 && x.Heard&bit(k) != 0 {
							x.About[k].Predecessors = nil
						}
					}
				}
			}
		}})}, "swarm", "WK-1/predecessors"},
	{"WK-1 pred-left", "preds-stay", "a predecessor whose admission form is gone is not dropped",
		plant{agent: breakAgent(agentBreaker{pre: func(a *winkowski.Agent, in sim.Input) sim.Input {
			m, ok := in.Msg.(winkowski.State)
			x := taskOf(a, m.Task)
			if in.Kind != sim.Receive || !ok || x == nil || x.Status != winkowski.Registering {
				return in
			}
			k := slices.Index(a.System().Task(x.ID).Pools, m.Pool)
			if k < 0 || x.Heard&bit(k) == 0 {
				return in
			}
			snap := *m.Snap
			snap.Admissions = slices.Clone(snap.Admissions)
			for _, p := range x.About[k].Predecessors {
				if !snap.Admitted(p.Task) {
					snap.Admissions = append(snap.Admissions, p)
				}
			}
			m.Snap = &snap
			in.Msg = m
			return in
		}})}, "swarm", "WK-1/enter"},
	{"WK-1 N1 wait-news", "no-news-wait", "a task counts a pool as heard before it answered",
		plant{agent: breakAgent(agentBreaker{post: func(a *winkowski.Agent, _ sim.Input, _ []taskSnap, _ *sim.Outbox) {
			for _, x := range a.Tasks {
				if x.Status == winkowski.Registering && x.Heard != 0 {
					x.Heard = 1<<uint(len(x.About)) - 1
				}
			}
		}})}, "swarm", "WK-1/enter"},
	{"WK-1 wait", "no-pred-wait", "a task takes a ticket while absolute predecessors remain",
		plant{agent: breakAgent(agentBreaker{pre: func(a *winkowski.Agent, in sim.Input) sim.Input {
			m, ok := in.Msg.(winkowski.State)
			x := taskOf(a, m.Task)
			if in.Kind != sim.Receive || !ok || x == nil || x.Status != winkowski.Registering {
				return in
			}
			snap := *m.Snap
			snap.Admissions = nil
			m.Snap = &snap
			in.Msg = m
			return in
		}})}, "swarm", "WK-1/"},
	{"WK-1 admit", "no-admission", "a task sends no admission forms",
		dropAgentForms(winkowski.FormAdmission, nil), "swarm", "WK-P"},
	{"E1 alarm-enter", "alarm-ticket-up", "entering by the alarm, a task gets the ticket one step above the right one",
		plant{agent: sabotage(ticketUp)}, "swarm", "WK-T1/ticket|WK-agent-state"},
	{"E1 rearm", "no-rearm", "a predecessor left, yet the entering alarm keeps its old time",
		plant{agent: breakAgent(agentBreaker{post: func(a *winkowski.Agent, in sim.Input, before []taskSnap, out *sim.Outbox) {
			for _, x := range a.Tasks {
				if b := findSnap(before, x.ID); b != nil && in.Kind == sim.Receive && x.Status == winkowski.Registering &&
					b.alarmSet && x.AlarmSet && x.Alarm != b.alarm {
					x.Alarm = b.alarm
					out.SetTimer(alarmTimer(x.ID), b.alarm.Sub(in.Now))
				}
			}
		}})}, "swarm", "WK-1/enter"},

	// WK-3/WK-4, the competition.
	{"P1 actual", "count-all", "(p3) counts every request in front, whatever its priority",
		policy(func(p *winkowski.Policy) {
			p.CountsAhead = func(*winkowski.System, *winkowski.Task, winkowski.Req, bool) bool { return true }
		}), "swarm", "WK-3/regress"},
	{"P1 potential", "potential-free", "with no request out, a task counts nothing in front of its potential one",
		policy(func(p *winkowski.Policy) {
			p.CountsAhead = func(s *winkowski.System, t *winkowski.Task, r winkowski.Req, ordered bool) bool {
				return t.Dest == 0 && (r.Ticket <= t.Ticket || ordered)
			}
		}), "swarm", "WK-3/regress"},
	{"K1 stale", "no-ack", "every state is taken as current (the -p bug=no-ack variant)",
		policy(func(p *winkowski.Policy) { p.Current = func(*winkowski.Task, int) bool { return true } }), "swarm", "WK-3/|WK-booking"},
	{"WK-4 p3-order", "ignore-orders", "(p3) does not count order forms (the -p bug=ignore-orders variant)",
		policy(func(p *winkowski.Policy) {
			p.CountsAhead = func(_ *winkowski.System, t *winkowski.Task, r winkowski.Req, _ bool) bool {
				return r.Ticket <= t.Ticket
			}
		}), "swarm", "WK-3/regress"},
	{"WK-3 request", "one-request", "requests go to the task's first destination only",
		dropAgentForms(winkowski.FormRequest, func(a *winkowski.Agent, _ sim.Input, _ []taskSnap, f winkowski.Form) bool {
			return f.Pool != a.System().Task(f.Task).Pools[0]
		}), "swarm", "WK-3/regress"},
	{"WK-3 regress", "no-withdraw", "a task that must regress sends no withdrawal",
		dropAgentForms(winkowski.FormWithdrawal, func(a *winkowski.Agent, _ sim.Input, before []taskSnap, f winkowski.Form) bool {
			return !f.Final && newForm(a, before, f)
		}), "swarm", "WK-3/regress"},
	{"WK-4 regress-ordering", "stays-ordering", "regressing from ORDERING, the task stays ORDERING",
		plant{agent: breakAgent(agentBreaker{post: func(a *winkowski.Agent, _ sim.Input, before []taskSnap, _ *sim.Outbox) {
			for _, x := range a.Tasks {
				if b := findSnap(before, x.ID); b != nil && b.status == winkowski.Ordering && x.Status == winkowski.Trying {
					x.Status = winkowski.Ordering
				}
			}
		}})}, "swarm", "WK-3/regress"},
	{"WK-3 win", "restricted-no-win", "restricted: a task that may win sends no winning form",
		dropAgentForms(winkowski.FormWinning, func(a *winkowski.Agent, _ sim.Input, before []taskSnap, f winkowski.Form) bool {
			return a.System().Variant == winkowski.Restricted && newForm(a, before, f)
		}), "swarm", "WK-3/progress"},
	{"WK-3 wait", "front-off-by-one", "a request preceded by as many requests as accessible resources counts as in front",
		policy(func(p *winkowski.Policy) { p.InFront = func(pos, acc int) bool { return pos <= acc } }), "swarm", "WK-3/progress|WK-booking"},
	{"WK-4 order", "no-order", "a task that may order sends no order form",
		dropAgentForms(winkowski.FormOrder, func(a *winkowski.Agent, _ sim.Input, before []taskSnap, f winkowski.Form) bool {
			return newForm(a, before, f)
		}), "swarm", "WK-3/progress|WK-3/regress"},
	{"WK-4 order-wait", "no-order-wait", "a task wins as soon as its order forms are sent (the -p bug=no-order-wait variant)",
		policy(func(p *winkowski.Policy) {
			p.OrdersDistributed = func(*winkowski.System, *winkowski.Task) bool { return true }
		}), "model:chain", "agent rules"},
	{"WK-4 win", "complete-no-win", "complete: a task whose order forms are distributed sends no winning form",
		dropAgentForms(winkowski.FormWinning, func(a *winkowski.Agent, _ sim.Input, before []taskSnap, f winkowski.Form) bool {
			return a.System().Variant == winkowski.Complete && newForm(a, before, f)
		}), "model:chain", "agent rules"},
	{"WK-4 alarm", "blocks-ordered", "the blocking requests registered include those with an order form",
		policy(func(p *winkowski.Policy) { p.Blocks = func(winkowski.Req, bool) bool { return true } }), "swarm", "WK-4/alarm"},
	{"O1 blocked-ordering", "no-alarm-ordering", "a task blocked in ORDERING sets no alarm",
		plant{agent: breakAgent(agentBreaker{post: func(a *winkowski.Agent, _ sim.Input, before []taskSnap, out *sim.Outbox) {
			for _, x := range a.Tasks {
				if b := findSnap(before, x.ID); b != nil && b.status == winkowski.Ordering && x.Status == winkowski.Ordering && !b.alarmSet && x.AlarmSet {
					x.AlarmSet = false
					out.CancelTimer(alarmTimer(x.ID))
				}
			}
		}})}, "swarm", "WK-4/alarm"},
	{"G1 rearm", "no-g1-rearm", "a blocking request was removed when the alarm rang, and the alarm is not set again",
		plant{agent: breakAgent(agentBreaker{post: func(a *winkowski.Agent, in sim.Input, before []taskSnap, out *sim.Outbox) {
			for _, x := range a.Tasks {
				if b := findSnap(before, x.ID); b != nil && in.Kind == sim.Timeout && in.Timer == alarmTimer(x.ID) &&
					(b.status == winkowski.Trying || b.status == winkowski.Ordering) && x.AlarmSet {
					x.AlarmSet = false
					out.CancelTimer(alarmTimer(x.ID))
				}
			}
		}})}, "swarm", "WK-4/advance"},
	{"WK-4 advance", "no-advance", "the alarm rang on a blocked task and it sends no advancing form",
		dropAgentForms(winkowski.FormAdvancing, func(a *winkowski.Agent, _ sim.Input, before []taskSnap, f winkowski.Form) bool {
			return newForm(a, before, f)
		}), "swarm", "WK-4/advance"},
	{"WK-3 booked", "no-seen-last", "a task never learns its booking at its last pool",
		plant{agent: breakAgent(agentBreaker{pre: func(a *winkowski.Agent, in sim.Input) sim.Input {
			m, ok := in.Msg.(winkowski.State)
			x := taskOf(a, m.Task)
			if in.Kind != sim.Receive || !ok || x == nil || x.Status != winkowski.Winning {
				return in
			}
			if ps := a.System().Task(x.ID).Pools; m.Pool == ps[len(ps)-1] {
				snap := *m.Snap
				snap.InUse = slices.DeleteFunc(slices.Clone(snap.InUse), func(u winkowski.Use) bool { return u.Task == x.ID })
				m.Snap = &snap
				in.Msg = m
			}
			return in
		}})}, "swarm", "WK-P"},
	{"WK-3 access", "no-final-withdrawal", "a task starting to access withdraws nothing",
		dropAgentForms(winkowski.FormWithdrawal, func(a *winkowski.Agent, _ sim.Input, before []taskSnap, f winkowski.Form) bool {
			return f.Final && newForm(a, before, f)
		}), "swarm", "WK-3/progress"},
	{"WK-3 release", "release-one", "a releasing form to any pool but the first is lost",
		dropAgentForms(winkowski.FormReleasing, func(a *winkowski.Agent, _ sim.Input, before []taskSnap, f winkowski.Form) bool {
			return f.Pool != a.System().Task(f.Task).Pools[0] && newForm(a, before, f)
		}), "swarm", "WK-3/leave|WK-P"},
	{"WK-3 leave", "leave-early", "a task in RELEASING takes a state for its release",
		plant{agent: breakAgent(agentBreaker{pre: func(a *winkowski.Agent, in sim.Input) sim.Input {
			m, ok := in.Msg.(winkowski.State)
			x := taskOf(a, m.Task)
			if in.Kind != sim.Receive || !ok || x == nil || x.Status != winkowski.Releasing {
				return in
			}
			if k := slices.Index(a.System().Task(x.ID).Pools, m.Pool); k >= 0 {
				m.Seq = x.Sent[k]
				in.Msg = m
			}
			return in
		}})}, "swarm", "WK-3/leave"},

	// K2 and F2, the task side.
	{"K2 resend", "no-resend", "the retry timer resends nothing",
		dropSends(func(a *winkowski.Agent, in sim.Input, before []taskSnap, e sim.Envelope) bool {
			f, ok := e.Msg.(winkowski.Form)
			return ok && in.Kind == sim.Timeout && f.Type != winkowski.FormPoll && !newForm(a, before, f)
		}), "swarm", "WK-P"},
	{"K2 poll", "no-poll", "the retry timer sends no poll",
		dropAgentForms(winkowski.FormPoll, func(_ *winkowski.Agent, in sim.Input, _ []taskSnap, _ winkowski.Form) bool {
			return in.Kind == sim.Timeout
		}), "swarm", "WK-P"},
	{"F2 agent-restart", "restart-forgets-tickets", "a restarted agent forgets the tickets its tasks hold",
		plant{agent: sabotage(forgetTickets)}, "swarm", "WK-agent-state|WK-T1/ticket"},
	{"F2 restart-waiting", "restart-forgets-predecessors", "a restarted agent forgets the absolute predecessors of its tasks in REGISTERING",
		forgetOnRestart(func(x *winkowski.Task) {
			if x.Status == winkowski.Registering {
				for k := range x.About {
					x.About[k].Predecessors = nil
				}
			}
		}), "swarm", "F2/agent-restart|WK-1/precedence"},
	{"F2 restart-competing", "restart-forgets-blocking", "a restarted agent forgets the blocking requests its competing tasks registered",
		forgetOnRestart(func(x *winkowski.Task) {
			if x.Ticket != 0 {
				for k := range x.About {
					x.About[k].Blocking = nil
				}
			}
		}), "swarm", "F2/agent-restart"},
	{"F2 not-fresh", "play-stale", "a restarted task plays before every pool answered again",
		plant{agent: breakAgent(agentBreaker{post: func(a *winkowski.Agent, in sim.Input, _ []taskSnap, _ *sim.Outbox) {
			if in.Kind == sim.Restart {
				for _, x := range a.Tasks {
					x.Fresh = 1<<uint(len(x.About)) - 1
				}
			}
		}})}, "swarm", "WK-"},

	// WK-2, the managers.
	{"WK-2 register", "mgr-no-register", "a registration form has no effect", ignoring(winkowski.FormRegistration, nil), "swarm", "WK-2/manager"},
	{"WK-2 admit", "mgr-no-admit", "an admission form has no effect", ignoring(winkowski.FormAdmission, nil), "swarm", "WK-2/manager"},
	{"WK-2 request", "mgr-no-request", "a request is not appended", ignoring(winkowski.FormRequest, nil), "swarm", "WK-2/manager"},
	{"WK-2 order", "mgr-no-order", "an order form has no effect", ignoring(winkowski.FormOrder, nil), "swarm", "WK-2/manager"},
	{"WK-2 advance", "mgr-no-advance", "an advancing form never transposes", ignoring(winkowski.FormAdvancing, nil), "swarm", "WK-2/manager"},
	{"WK-2 advance-ordered", "advance-past-orders", "an advancing form transposes past a request with an order form",
		policy(func(p *winkowski.Policy) {
			p.Transposes = func(*winkowski.PoolState, int) bool { return true }
		}), "swarm", "WK-2/manager"},
	{"WK-2 advance-none", "advance-first-to-back", "an advancing form of the first request moves it to the back",
		plant{host: breakHost(hostBreaker{post: func(h *winkowski.Host, in sim.Input) {
			f, i, _ := formIn(h, in, winkowski.FormAdvancing)
			if f.Type != winkowski.FormAdvancing {
				return
			}
			q := h.St[i].Requests
			if len(q) > 1 && q[0].Task == f.Task {
				h.St[i].Requests = append(slices.Clone(q[1:]), q[0])
			}
		}})}, "swarm", "WK-2/manager"},
	{"WK-2 withdraw", "mgr-no-withdraw", "a withdrawal has no effect",
		ignoring(winkowski.FormWithdrawal, func(f winkowski.Form) bool { return !f.Final }), "swarm", "WK-2/manager"},
	{"W1 withdraw-final", "final-keeps-admission", "the final withdrawal keeps the admission form",
		plant{host: breakHost(hostBreaker{pre: func(h *winkowski.Host, in sim.Input) sim.Input {
			if f, _, next := formIn(h, in, winkowski.FormWithdrawal); next && f.Final {
				f.Final = false
				in.Msg = f
			}
			return in
		}})}, "swarm", "WK-2/manager"},
	{"WK-2 win", "book-used", "a manager books resource 0 whoever uses it (the -p bug=book-used variant)",
		policy(func(p *winkowski.Policy) {
			p.FreeUnit = func(*winkowski.PoolState, int) (winkowski.Unit, bool) { return 0, true }
		}), "swarm", "WK-"},
	{"WK-2 win-last", "last-unit-lost", "a manager never books the last resource of a pool (u < capacity-1)",
		policy(func(p *winkowski.Policy) {
			p.FreeUnit = func(st *winkowski.PoolState, capacity int) (winkowski.Unit, bool) {
				for u := winkowski.Unit(0); int(u) < capacity-1; u++ {
					if _, used := st.UserOf(u); !used {
						return u, true
					}
				}
				return 0, false
			}
		}), "model:capacity", "manager rules|WK-booking"},
	{"WK-2 release", "mgr-no-release", "a releasing form has no effect", ignoring(winkowski.FormReleasing, nil), "swarm", "WK-2/manager"},
	{"WK-2 tell-released", "silent-release", "a manager does not tell a released task (the -p bug=silent-release variant)",
		policy(func(p *winkowski.Policy) {
			p.TellsUnregistered = func(winkowski.PoolID, winkowski.TaskID) bool { return false }
		}), "swarm", "WK-2/manager"},
	{"K2 answer", "no-answer", "a poll or a duplicate is not answered",
		plant{host: breakHost(hostBreaker{drop: func(h *winkowski.Host, in sim.Input, e sim.Envelope) bool {
			f, ok := in.Msg.(winkowski.Form)
			if !ok || in.Kind != sim.Receive {
				return false
			}
			i := slices.Index(h.Pools, f.Pool)
			return f.Type == winkowski.FormPoll || f.Seq <= lastApplied(h.Applied[i], f.Task)
		}})}, "swarm", "WK-2/manager"},
	{"F2 host-restart", "host-forgets-numbers", "a restarted manager forgets the forms it applied",
		plant{host: breakHost(hostBreaker{post: func(h *winkowski.Host, in sim.Input) {
			if in.Kind == sim.Restart {
				h.Applied = make([][]winkowski.Applied, len(h.Pools))
			}
		}})}, "swarm", "WK-2/manager"},
}

// forgetOnRestart: a restarted agent loses what forget clears of each task it
// restores from stable storage (a stable field not written, or not read back: F2).
func forgetOnRestart(forget func(x *winkowski.Task)) plant {
	return plant{agent: breakAgent(agentBreaker{post: func(a *winkowski.Agent, in sim.Input, _ []taskSnap, _ *sim.Outbox) {
		if in.Kind == sim.Restart {
			for _, x := range a.Tasks {
				forget(x)
			}
		}
	}})}
}

// dropSends: the agent does not send what drop selects.
func dropSends(drop func(a *winkowski.Agent, in sim.Input, before []taskSnap, e sim.Envelope) bool) plant {
	return plant{agent: breakAgent(agentBreaker{drop: drop})}
}

// catchPlanted runs b's detector and returns what caught it ("" if nothing did).
func catchPlanted(t *testing.T, b plantedBug) (property, where string) {
	t.Helper()
	if cfg, ok := strings.CutPrefix(b.detector, "model:"); ok {
		m, err := model.Lookup("winkowski")
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(m.Portfolio, func(c model.Config) bool { return c.Name == cfg })
		if i < 0 {
			t.Fatalf("no portfolio configuration %s", cfg)
		}
		p, err := model.NewParams(m.Params, m.Portfolio[i].Params)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := optionsOf(p)
		a, err := o.systemWrapped(b.plant)
		if err != nil {
			t.Fatal(err)
		}
		res, err := model.Check(a, model.Options{Workers: 1, MaxStates: m.Portfolio[i].MaxStates})
		if err != nil {
			t.Fatal(err)
		}
		if res.Violation == nil {
			return "", fmt.Sprintf("%s: %d states, %v", cfg, res.Distinct, res.Outcome)
		}
		return res.Violation.Name, fmt.Sprintf("portfolio %s at depth %d", cfg, res.Violation.Depth)
	}
	if _, ok := plants[b.name]; !ok {
		plants[b.name] = b.plant // a plant of a test's own
	}
	res, err := scenarios.Sweep(scenarios.SweepOptions{Scenario: "winkowski/planted", Params: map[string]string{"plant": b.name},
		From: 1, To: 2000, Workers: 1, StopAtFailure: true, FailureLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) == 0 {
		return "", fmt.Sprintf("swarm: %d seeds passed", res.Runs)
	}
	v := res.Failures[0]
	return v.Property, fmt.Sprintf("swarm seed %d: %s", v.Seed, v)
}

// TestPlantedBugsCaught: each rule's planted bug is caught by its detector, by the
// property named (the first failing property of the first failing seed, or the
// model's violation).
//
// -short plants only the bugs the swarm catches within its first ten seeds.
func TestPlantedBugsCaught(t *testing.T) {
	for _, b := range plantedBugs {
		t.Run(strings.ReplaceAll(b.rule, " ", "_"), func(t *testing.T) {
			if testing.Short() && (b.detector != "swarm" || slices.Contains(slowPlants, b.name)) {
				t.Skip("-short: caught past the swarm's first ten seeds, or by the model")
			}
			prop, where := catchPlanted(t, b)
			if prop == "" || !slices.ContainsFunc(strings.Split(b.want, "|"), func(w string) bool { return strings.HasPrefix(prop, w) }) {
				t.Errorf("%s (%s): caught by %q, want %s… (%s)", b.rule, b.what, prop, b.want, where)
				return
			}
			t.Logf("%s: %s — %s", b.rule, b.what, where)
		})
	}
}

// slowPlants are caught past the swarm's tenth seed (O1 blocked-ordering at 150,
// WK-3 release at 178, K2 poll at 92, G1 rearm at 10, F2 restart-competing at 112).
var slowPlants = []string{"no-alarm-ordering", "release-one", "no-poll", "no-g1-rearm", "restart-forgets-blocking"}

// TestPlantedBugsCoverRules: the table has a planted bug for every branched rule of
// the rule map.
func TestPlantedBugsCoverRules(t *testing.T) {
	for _, r := range sim.Rules("winkowski") {
		if r.NoBranch != "" {
			continue
		}
		if !slices.ContainsFunc(plantedBugs, func(b plantedBug) bool { return b.rule == r.Tag }) {
			t.Errorf("rule %s has no planted bug", r.Tag)
		}
	}
}

// A broken variant that livelocks — tasks that count every request in front of
// theirs regress and request again for ever — ends at the run's event bound, a
// failed verdict, within 4 000 + 1 200 events per task (a correct swarm run takes at
// most 684 per task): a 2 000-seed sweep of such a variant ends in about a minute
// instead of running for hours (the bound was 5 000 000 events per run).
func TestLivelockEndsAtItsBound(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: thirty runs of a livelocking variant")
	}
	bounded := 0
	for seed := uint64(1); seed <= 30; seed++ {
		rep, err := scenarios.RunName("winkowski/planted", scenarios.Options{Seed: seed, Params: map[string]string{"plant": "count-all"}})
		if err != nil {
			t.Fatal(err)
		}
		tasks := rep.Metrics.(Metrics).Tasks
		if max := int64(4_000 + 1_200*tasks); rep.Result.Events > max {
			t.Errorf("seed %d: %d events, more than the bound %d", seed, rep.Result.Events, max)
		}
		if rep.Result.Outcome == sim.EventBound {
			bounded++
			if !slices.ContainsFunc(rep.Verdicts, func(v checker.Verdict) bool { return v.Class == checker.Bound }) || !rep.Failed() {
				t.Errorf("seed %d: ended at the event bound, verdicts %v", seed, rep.Verdicts)
			}
		}
	}
	if bounded < 5 {
		t.Errorf("%d of seeds 1-30 reached the event bound: the variant hardly livelocks here", bounded)
	}
	t.Logf("%d of 30 seeds ended at the event bound (a failed run)", bounded)
}

// The gaps, each caught by both the default swarm and the portfolio: the
// capacity accounting at the last unit of a pool of two (the manager's and the
// task's side), the manager's check of an advancing form against the order forms it
// holds, and the winning condition ("front") and the count of predecessors of (p3).
func TestGapsCaughtBySwarmAndPortfolio(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: twelve detections (TestPlantedBugsCaught plants most of these bugs)")
	}
	byName := func(name string) plant {
		i := slices.IndexFunc(plantedBugs, func(b plantedBug) bool { return b.name == name })
		return plantedBugs[i].plant
	}
	accessiblePlus := policy(func(p *winkowski.Policy) {
		p.Accessible = func(capacity, inUse int) int { return capacity - inUse + 1 }
	})
	successors := plant{agent: sabotage(countSuccessors)}
	for _, c := range []struct {
		what   string
		plant  plant
		config string
		want   string
	}{
		{"manager: the last unit is never booked (u < capacity-1)", byName("last-unit-lost"), "capacity", "WK-2/manager|manager rules|WK-booking"},
		{"task: one resource more accessible than free", accessiblePlus, "capacity", "WK-3/|agent rules|WK-booking"},
		{"manager: an advancing form transposes past an order form", byName("advance-past-orders"), "chain", "WK-2/manager|manager rules"},
		{"task: in front with as many requests before it as free resources", byName("front-off-by-one"), "chain", "WK-3/progress|agent rules|WK-booking"},
		{"task: (p3) counts every request in front", byName("count-all"), "chain", "WK-3/regress|agent rules"},
		{"task: (p3) counts higher-priority requests behind its own", successors, "chain", "WK-3/regress|agent rules"},
	} {
		for _, det := range []string{"swarm", "model:" + c.config} {
			prop, where := catchPlanted(t, plantedBug{name: c.what, plant: c.plant, detector: det})
			if prop == "" || !slices.ContainsFunc(strings.Split(c.want, "|"), func(w string) bool { return strings.HasPrefix(prop, w) }) {
				t.Errorf("%s: %s caught by %q, want %s (%s)", c.what, det, prop, c.want, where)
				continue
			}
			t.Logf("%s: %s — %s", c.what, prop, where)
		}
	}
}

// A durable agent's restart that loses any stable field of a task (choice F2) is a
// class of bugs, not one bug: each variant below forgets one field of the restored
// tasks, and the default swarm catches each — F2/agent-restart compares the agent
// rebuilt from stable storage with the one the crash stopped, in runs whose
// contention crashes (contend.go) restart tasks mid-protocol. Forgetting the
// absolute predecessors is also caught by its consequence alone: WK-1/precedence
// sees a task take a ticket ahead of a predecessor it found competing.
func TestForgetOnRestartCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: sweeps of broken variants")
	}
	clearAbout := func(f func(k *winkowski.Knowledge)) func(x *winkowski.Task) {
		return func(x *winkowski.Task) {
			for k := range x.About {
				f(&x.About[k])
			}
		}
	}
	for _, c := range []struct {
		name   string
		forget func(x *winkowski.Task)
	}{
		{"forget-predecessors", clearAbout(func(k *winkowski.Knowledge) { k.Predecessors = nil })},
		{"forget-blocking", clearAbout(func(k *winkowski.Knowledge) { k.Blocking = nil })},
		{"forget-heard", func(x *winkowski.Task) { x.Heard = 0 }},
		{"forget-destinations", func(x *winkowski.Task) { x.Dest = 0 }},
		{"forget-alarm", func(x *winkowski.Task) { x.AlarmSet = false }},
		{"forget-seen", func(x *winkowski.Task) { x.Seen = 0 }},
		{"forget-unapplied", func(x *winkowski.Task) { x.Unacked = make([][]winkowski.Form, len(x.Unacked)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			prop, where := catchPlanted(t, plantedBug{name: "restart-" + c.name, plant: forgetOnRestart(c.forget), detector: "swarm"})
			if !strings.HasPrefix(prop, "F2/agent-restart") {
				t.Errorf("caught by %q, want F2/agent-restart (%s)", prop, where)
				return
			}
			t.Logf("%s", where)
		})
	}
	t.Run("precedence", func(t *testing.T) {
		name := "restart-forget-predecessors"
		if _, ok := plants[name]; !ok {
			plants[name] = forgetOnRestart(clearAbout(func(k *winkowski.Knowledge) { k.Predecessors = nil }))
		}
		res, err := scenarios.Sweep(scenarios.SweepOptions{Scenario: "winkowski/planted", Params: map[string]string{"plant": name},
			From: 1, To: 400, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		c := res.ByProperty["WK-1/precedence"]
		if c == nil || c.Safety == 0 {
			t.Fatalf("WK-1/precedence failed on no seed of 400 (%d seeds failed)", res.Failed)
		}
		t.Logf("WK-1/precedence failed on %d of 400 seeds (%d failed in all)", c.Safety, res.Failed)
	})
}
