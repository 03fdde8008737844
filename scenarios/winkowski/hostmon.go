package wkscen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/protocols/winkowski"
	"github.com/simrun-dev/simrun/sim"
)

// The manager monitor: every manager host of the game runs wrapped in a hostMonitor,
// which checks each handler call against the paper's actions of resource managers (§3
// "Actions of resource managers"; WK-2) and the sequence numbers of choice K2,
// recomputed here from the pool's state before the call and the form received:
//
//	WK-2/manager  a form that is T's next one (K2) changes the pool's state exactly as
//	              its action says — registration and admission forms join their sets
//	              (an admission only with a registration), a request is appended once
//	              (with an admission), an order form joins Orders (with a request), an
//	              advancing form swaps T's request with the one in front of it unless
//	              that one's task has an order form, a withdrawal removes T's request
//	              and order form (the final one also its admission form, W1), a winning
//	              form books one resource of the pool that is not in use (none if none
//	              is free, or T holds one), a releasing form frees T's resource and
//	              drops its registration (and every form of T left, W1) — the manager
//	              records the form's number as T's last applied one, and sends the new
//	              state to every registered task, each copy with the recipient's last
//	              applied number, and to T too when T is no longer registered (WK-2); any
//	              other form (a poll, a duplicate, one after a lost one) changes nothing
//	              and is answered to T alone with the current state (K2). A restarted
//	              manager resumes the pools' states and numbers it had (F2; checked in
//	              the simulator, which remembers them across the crash).
//
// Like the agent monitor it changes nothing and keeps no state of its own in the
// node; a broken rule is recorded as an observation of kind kindRule.
const ruleManager = "WK-2/manager"

// hostMonitor wraps a manager host node (a *winkowski.Host, or a test's wrapper around
// one that has a Host method).
type hostMonitor struct {
	sys   *winkowski.System
	inner sim.Node
	tally *ruleTally // nil in the model checker
}

// hostHolder is a node wrapping a manager host.
type hostHolder interface{ Host() *winkowski.Host }

func hostOf(n sim.Node) *winkowski.Host {
	switch x := n.(type) {
	case *winkowski.Host:
		return x
	case hostHolder:
		return x.Host()
	}
	return nil
}

// Host returns the monitored host.
func (m *hostMonitor) Host() *winkowski.Host { return hostOf(m.inner) }

// Clone implements sim.Cloner.
func (m *hostMonitor) Clone() sim.Node {
	c := *m
	if cl, ok := m.inner.(sim.Cloner); ok {
		c.inner = cl.Clone()
	} else {
		c.inner = sim.DeepCopy(m.inner)
	}
	return &c
}

// AppendState implements sim.StateEncoder: the host's encoding.
func (m *hostMonitor) AppendState(b []byte) []byte {
	if e, ok := m.inner.(sim.StateEncoder); ok {
		return e.AppendState(b)
	}
	return sim.AppendCanonical(b, m.inner)
}

// Handle implements sim.Node: the host's call, then the checks.
func (m *hostMonitor) Handle(in sim.Input, out *sim.Outbox) {
	h := m.Host()
	var st []winkowski.PoolState
	var applied [][]winkowski.Applied
	if h != nil {
		// The host replaces its pools' states, never modifies them in place
		// (PoolState's rule): shallow copies are a snapshot.
		st, applied = slices.Clone(h.St), slices.Clone(h.Applied)
	}
	m.inner.Handle(in, out)
	h = m.Host()
	if h == nil {
		return
	}
	t := m.tally
	if t == nil {
		t = &ruleTally{}
	}
	for _, b := range checkHostCall(m.sys, h, in, st, applied, out.Sends(), t) {
		out.Observe(kindRule, b)
		t.report(b.Rule)
	}
	if m.tally != nil {
		m.tally.rememberHost(h)
	}
}

// rememberHost keeps the encoding of h's pools (states and applied numbers) after a
// call, so that a restart can be compared with it (the simulator only).
func (t *ruleTally) rememberHost(h *winkowski.Host) {
	if t.hosts == nil {
		t.hosts = map[int][]byte{}
	}
	t.hosts[h.Computer] = encodePools(t.hosts[h.Computer][:0], h.St, h.Applied)
}

func encodePools(b []byte, st []winkowski.PoolState, applied [][]winkowski.Applied) []byte {
	for i := range st {
		b = st[i].AppendState(b)
		b = binary.AppendUvarint(b, uint64(len(applied[i])))
		for _, a := range applied[i] {
			b = binary.AppendVarint(b, int64(a.Task))
			b = binary.AppendUvarint(b, uint64(a.Seq))
		}
	}
	return b
}

func lastApplied(as []winkowski.Applied, t winkowski.TaskID) winkowski.Seq {
	for _, a := range as {
		if a.Task == t {
			return a.Seq
		}
	}
	return 0
}

func encodeState(p *winkowski.PoolState) []byte { return p.AppendState(nil) }

// checkHostCall checks one handler call of manager host h: st and applied are its
// pools' states and applied numbers before the call, sends what it sent.
func checkHostCall(sys *winkowski.System, h *winkowski.Host, in sim.Input, st []winkowski.PoolState, applied [][]winkowski.Applied, sends []sim.Envelope, t *ruleTally) []RuleBroken {
	var out []RuleBroken
	broken := func(task winkowski.TaskID, format string, args ...any) {
		out = append(out, RuleBroken{Rule: ruleManager, Agent: h.Computer, Task: task, Manager: true, Detail: t.detail(ruleManager, format, args...)})
	}
	switch in.Kind {
	case sim.Restart:
		if t.hosts == nil {
			return nil // the model checker: nothing remembered
		}
		t.restarts++
		if prev, ok := t.hosts[h.Computer]; ok && sys.Durable && !bytes.Equal(prev, encodePools(nil, h.St, h.Applied)) {
			broken(0, "restarted without the pools' states and applied numbers it had before the crash (F2)")
		}
		return out
	case sim.Receive:
	default:
		return nil
	}
	f, ok := in.Msg.(winkowski.Form)
	if !ok {
		return nil
	}
	i := slices.Index(h.Pools, f.Pool)
	if i < 0 || i >= len(st) {
		return nil
	}
	pool := sys.PoolName(f.Pool)
	before, after := &st[i], &h.St[i]
	last := lastApplied(applied[i], f.Task)
	if f.Type == winkowski.FormPoll || f.Seq != last+1 {
		// K2: nothing changes; T alone gets the current state.
		t.answers++
		if !bytes.Equal(encodeState(before), encodeState(after)) || !slices.Equal(applied[i], h.Applied[i]) {
			broken(f.Task, "a %v of task %d (number %d, last applied %d) changed the state of %s", f.Type, f.Task, f.Seq, last, pool)
		}
		if len(sends) != 1 {
			broken(f.Task, "answered a %v of task %d at %s with %d messages, want its state to the task alone", f.Type, f.Task, pool, len(sends))
			return out
		}
		if m, ok := sends[0].Msg.(winkowski.State); !ok || sends[0].To != in.From || m.Task != f.Task || m.Pool != f.Pool || m.Seq != last ||
			!bytes.Equal(encodeState(m.Snap), encodeState(after)) {
			broken(f.Task, "answered a %v of task %d at %s with %v, want the current state with number %d", f.Type, f.Task, pool, sends[0].Msg, last)
		}
		return out
	}
	t.forms++
	want, choice := specAction(sys, *before, f)
	got := *after
	if choice {
		// A winning form books some free resource: take the one the manager took, if
		// it was free.
		u, ok := got.UnitOf(f.Task)
		if !ok {
			broken(f.Task, "a winning form of task %d booked nothing though %d of the %d resources of %s are free", f.Task,
				sys.Pools[f.Pool].Capacity-len(before.InUse), sys.Pools[f.Pool].Capacity, pool)
			return out
		}
		{
			if user, used := before.UserOf(u); used || int(u) < 0 || int(u) >= sys.Pools[f.Pool].Capacity {
				broken(f.Task, "booked resource %d of %s (capacity %d) for task %d, used by %v (used: %v)", u, pool, sys.Pools[f.Pool].Capacity, f.Task, user, used)
				return out
			}
			want.InUse = insertUse(before.InUse, winkowski.Use{Unit: u, Task: f.Task})
		}
	}
	if !bytes.Equal(encodeState(&want), encodeState(&got)) {
		broken(f.Task, "applied a %v of task %d at %s: state %s, want %s (before: %s)", f.Type, f.Task, pool, showPool(&got), showPool(&want), showPool(before))
	}
	if n := lastApplied(h.Applied[i], f.Task); n != f.Seq {
		broken(f.Task, "applied form %d of task %d at %s but records %d as its last applied one", f.Seq, f.Task, pool, n)
	}
	// WK-2: the new state to every registered task, and to T when it is not.
	var to []winkowski.TaskID
	for _, r := range got.Applications {
		to = append(to, r.Task)
	}
	if !got.Registered(f.Task) {
		to = append(to, f.Task)
	}
	enc := encodeState(&got)
	var told []winkowski.TaskID
	for _, e := range sends {
		m, ok := e.Msg.(winkowski.State)
		if !ok || m.Pool != f.Pool {
			broken(f.Task, "sent %v while applying a %v at %s", e.Msg, f.Type, pool)
			continue
		}
		told = append(told, m.Task)
		if !bytes.Equal(encodeState(m.Snap), enc) {
			broken(m.Task, "sent task %d a state of %s that is not the new one", m.Task, pool)
		}
		if want := lastApplied(h.Applied[i], m.Task); m.Seq != want {
			broken(m.Task, "sent task %d the state of %s with number %d, want %d", m.Task, pool, m.Seq, want)
		}
		if agent, ok := agentFor(&got, m.Task, f, in.From); !ok || e.To != agent {
			broken(m.Task, "sent task %d's state of %s to node %d", m.Task, pool, e.To)
		}
	}
	slices.Sort(told)
	slices.Sort(to)
	if !slices.Equal(told, to) {
		broken(f.Task, "after a %v of task %d at %s told tasks %v, want every registered task%s: %v", f.Type, f.Task, pool, told,
			map[bool]string{true: "", false: " and the released task"}[got.Registered(f.Task)], to)
	}
	return out
}

// agentFor is the node a state for task x goes to: its registration's agent, or the
// sender of the form for T itself when it is no longer registered.
func agentFor(p *winkowski.PoolState, x winkowski.TaskID, f winkowski.Form, from sim.NodeID) (sim.NodeID, bool) {
	for _, r := range p.Applications {
		if r.Task == x {
			return r.Agent, true
		}
	}
	if x == f.Task {
		return from, true
	}
	return 0, false
}

// specAction is the paper's action of form f on pool state p (§3, WK-2; consistency
// kept as the package comment of protocols/winkowski says), written afresh from the
// text. choice reports a winning form that books some free resource (which one is
// the manager's choice; want then lacks it).
func specAction(sys *winkowski.System, p winkowski.PoolState, f winkowski.Form) (want winkowski.PoolState, choice bool) {
	w := winkowski.PoolState{Applications: slices.Clone(p.Applications), Admissions: slices.Clone(p.Admissions),
		Requests: slices.Clone(p.Requests), Orders: slices.Clone(p.Orders), InUse: slices.Clone(p.InUse)}
	T := f.Task
	hasReq := slices.ContainsFunc(w.Requests, func(r winkowski.Req) bool { return r.Task == T })
	switch f.Type {
	case winkowski.FormRegistration:
		if !w.Registered(T) {
			w.Applications = append(w.Applications, winkowski.Reg{Task: T, Agent: f.Agent})
			slices.SortFunc(w.Applications, func(a, b winkowski.Reg) int { return int(a.Task - b.Task) })
		}
	case winkowski.FormAdmission:
		if w.Registered(T) && !w.Admitted(T) {
			w.Admissions = append(w.Admissions, winkowski.Adm{Task: T, Ticket: f.Ticket})
			slices.SortFunc(w.Admissions, func(a, b winkowski.Adm) int { return int(a.Task - b.Task) })
		}
	case winkowski.FormRequest:
		if !hasReq && w.Admitted(T) {
			w.Requests = append(w.Requests, winkowski.Req{Task: T, Ticket: f.Ticket})
		}
	case winkowski.FormOrder:
		if hasReq && !slices.Contains(w.Orders, T) {
			w.Orders = append(w.Orders, T)
			slices.Sort(w.Orders)
		}
	case winkowski.FormAdvancing:
		i := slices.IndexFunc(w.Requests, func(r winkowski.Req) bool { return r.Task == T })
		if i >= 1 && !slices.Contains(w.Orders, w.Requests[i-1].Task) {
			w.Requests[i-1], w.Requests[i] = w.Requests[i], w.Requests[i-1]
		}
	case winkowski.FormWithdrawal:
		w = dropForms(w, T, f.Final)
	case winkowski.FormWinning:
		if _, holds := w.UnitOf(T); holds || len(w.InUse) >= sys.Pools[f.Pool].Capacity {
			return w, false
		}
		return w, true
	case winkowski.FormReleasing:
		if _, holds := w.UnitOf(T); holds {
			w.InUse = slices.DeleteFunc(w.InUse, func(u winkowski.Use) bool { return u.Task == T })
			w = dropForms(w, T, true)
			w.Applications = slices.DeleteFunc(w.Applications, func(r winkowski.Reg) bool { return r.Task == T })
		}
	}
	return w, false
}

// dropForms removes T's request and order form, and with final its admission form.
func dropForms(w winkowski.PoolState, T winkowski.TaskID, final bool) winkowski.PoolState {
	w.Requests = slices.DeleteFunc(w.Requests, func(r winkowski.Req) bool { return r.Task == T })
	w.Orders = slices.DeleteFunc(w.Orders, func(x winkowski.TaskID) bool { return x == T })
	if final {
		w.Admissions = slices.DeleteFunc(w.Admissions, func(a winkowski.Adm) bool { return a.Task == T })
	}
	return w
}

func insertUse(use []winkowski.Use, u winkowski.Use) []winkowski.Use {
	out := append(slices.Clone(use), u)
	slices.SortFunc(out, func(a, b winkowski.Use) int { return int(a.Unit - b.Unit) })
	return out
}

// showPool renders a pool state briefly for a violation.
func showPool(p *winkowski.PoolState) string {
	var reqs, use []string
	for _, r := range p.Requests {
		mark := ""
		if slices.Contains(p.Orders, r.Task) {
			mark = "*"
		}
		reqs = append(reqs, fmt.Sprintf("%d%s", r.Task, mark))
	}
	for _, u := range p.InUse {
		use = append(use, fmt.Sprintf("r%d:%d", u.Unit, u.Task))
	}
	return fmt.Sprintf("{reg %d adm %d queue %v use %v}", len(p.Applications), len(p.Admissions), reqs, use)
}
