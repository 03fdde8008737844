package winkowski

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/simrun-dev/simrun/sim"
)

// ---- the resource manager's actions on one pool (WK-2) ----
//
// Each action returns the pool's new state; the caller broadcasts it to every task with
// a registration form at the pool (WK-2: "it results also in sending messages
// containing information on the new local state p' to all the tasks with registration
// forms in Applications_P(p')"), including when the action had no effect.

// register adds T's registration form (WK-2: receiving a registration form).
func (p PoolState) register(r Reg) PoolState {
	if p.Registered(r.Task) {
		return p // a set: a repeated form (a restarted agent refreshing) changes nothing
	}
	i, _ := slices.BinarySearchFunc(p.Applications, r.Task, func(x Reg, t TaskID) int { return int(x.Task - t) })
	p.Applications = slices.Insert(slices.Clip(p.Applications), i, r)
	return p
}

// admit adds T's admission form (WK-2: receiving an admission form). A form without a
// registration would break the paper's consistency condition; links are FIFO and a
// task registers before it is admitted, so it cannot happen and is ignored.
func (p PoolState) admit(a Adm) PoolState {
	if !p.Registered(a.Task) || p.Admitted(a.Task) {
		return p
	}
	i, _ := slices.BinarySearchFunc(p.Admissions, a.Task, func(x Adm, t TaskID) int { return int(x.Task - t) })
	p.Admissions = slices.Insert(slices.Clip(p.Admissions), i, a)
	return p
}

// request appends T's request to the queue unless it is already there (WK-2:
// "executed in a local state p such that R does not occur in Requests_P(p)").
func (p PoolState) request(r Req) PoolState {
	if p.Position(r.Task) >= 0 || !p.Admitted(r.Task) {
		return p
	}
	p.Requests = append(slices.Clip(p.Requests), r)
	return p
}

// order adds T's order form (WK-2). An order form needs T's request in the queue
// (consistency); without one it is ignored.
func (p PoolState) order(t TaskID) PoolState {
	if p.Position(t) < 0 || p.Ordered(t) {
		return p
	}
	i, _ := slices.BinarySearch(p.Orders, t)
	p.Orders = slices.Insert(slices.Clip(p.Orders), i, t)
	return p
}

// advance transposes T's request with the request in front of it when that request's
// task has no order form (WK-2: receiving an advancing form; no effect if T has no
// request, the request has no predecessor, or the predecessor has an order form).
func (p PoolState) advance(s *System, t TaskID, out *sim.Outbox) PoolState {
	i := p.Position(t)
	if i <= 0 {
		out.Cover(ruleMgrAtFront)
		return p
	}
	if !s.transposes(&p, i) {
		out.Cover(ruleMgrNoSwap)
		return p
	}
	out.Cover(ruleMgrSwap)
	q := slices.Clone(p.Requests)
	q[i-1], q[i] = q[i], q[i-1]
	p.Requests = q
	return p
}

// withdraw removes T's request and order form, and with final also its admission
// form (WK-2: receiving a withdrawal; choice W1 in the package comment).
func (p PoolState) withdraw(t TaskID, final bool) PoolState {
	if i := p.Position(t); i >= 0 {
		p.Requests = slices.Delete(slices.Clone(p.Requests), i, i+1)
	}
	if i, ok := slices.BinarySearch(p.Orders, t); ok {
		p.Orders = slices.Delete(slices.Clone(p.Orders), i, i+1)
	}
	if final {
		if i := slices.IndexFunc(p.Admissions, func(a Adm) bool { return a.Task == t }); i >= 0 {
			p.Admissions = slices.Delete(slices.Clone(p.Admissions), i, i+1)
		}
	}
	return p
}

// win books a free resource for T (WK-2: receiving a winning form; no effect if no
// resource is free). It returns the unit booked and whether one was.
func (p PoolState) win(s *System, t TaskID, capacity int, out *sim.Outbox) (PoolState, Unit, bool) {
	if _, ok := p.UnitOf(t); ok {
		return p, 0, false
	}
	u, ok := s.freeUnit(&p, capacity)
	if !ok {
		return p, 0, false
	}
	out.Cover(ruleMgrBook)
	// user_P(u) = T: a function of the unit, so an entry for u (none: u is free) goes.
	use := slices.DeleteFunc(slices.Clone(p.InUse), func(x Use) bool { return x.Unit == u })
	i, _ := slices.BinarySearchFunc(use, u, func(x Use, u Unit) int { return int(x.Unit - u) })
	p.InUse = slices.Insert(use, i, Use{Unit: u, Task: t})
	if capacity > 1 && len(p.InUse) == capacity {
		out.Cover(ruleMgrLastUnit)
	}
	return p, u, true
}

// release frees T's resource and drops T's registration form (WK-2: receiving a
// releasing form; no effect if T uses no resource). For the paper's consistency
// condition (every admission, request and order form has a registration) the
// admission, request and order form T may still have there go too.
func (p PoolState) release(t TaskID) (PoolState, Unit, bool) {
	u, ok := p.UnitOf(t)
	if !ok {
		return p, 0, false
	}
	p.InUse = slices.DeleteFunc(slices.Clone(p.InUse), func(x Use) bool { return x.Task == t })
	p = p.withdraw(t, true)
	if i := slices.IndexFunc(p.Applications, func(r Reg) bool { return r.Task == t }); i >= 0 {
		p.Applications = slices.Delete(slices.Clone(p.Applications), i, i+1)
	}
	return p, u, true
}

// apply performs the action of form f on the pool (WK-2). A winning form that finds
// no free resource, and the booking or freeing of a resource, are observed.
func (p PoolState) apply(s *System, f Form, out *sim.Outbox) PoolState {
	switch f.Type {
	case FormRegistration:
		out.Cover(ruleMgrRegister)
		return p.register(Reg{Task: f.Task, Agent: f.Agent})
	case FormAdmission:
		out.Cover(ruleMgrAdmit)
		return p.admit(Adm{Task: f.Task, Ticket: f.Ticket})
	case FormRequest:
		out.Cover(ruleMgrRequest)
		return p.request(Req{Task: f.Task, Ticket: f.Ticket})
	case FormOrder:
		out.Cover(ruleMgrOrder)
		return p.order(f.Task)
	case FormAdvancing:
		return p.advance(s, f.Task, out)
	case FormWithdrawal:
		out.Cover(ruleMgrWithdraw)
		if f.Final {
			out.Cover(ruleMgrFinal)
		}
		return p.withdraw(f.Task, f.Final)
	case FormWinning:
		np, u, ok := p.win(s, f.Task, s.Pools[f.Pool].Capacity, out)
		if ok {
			out.Observe(KindBook, Booked{Pool: f.Pool, Unit: u, Task: f.Task})
		} else if _, has := p.UnitOf(f.Task); !has {
			out.Observe(KindBookFailed, BookFailed{Pool: f.Pool, Task: f.Task})
		}
		return np
	case FormReleasing:
		np, u, ok := p.release(f.Task)
		if ok {
			out.Cover(ruleMgrRelease)
			out.Observe(KindFree, Freed{Pool: f.Pool, Unit: u, Task: f.Task})
		}
		return np
	}
	panic(fmt.Sprintf("winkowski: manager cannot apply a %s", f.Type))
}

// ---- the manager host node ----

// Applied records the sequence number of the last form of Task a manager has applied
// (choice K2).
type Applied struct {
	Task TaskID
	Seq  Seq
}

// Host is the resource-manager role of one computer: the managers of the pools on
// it. It is a separate simulator node from the computer's agent, so that an agent
// can fail while its pools stay (the paper's failure model; choice F1 in the package
// comment), and so that a crash of the manager role can be measured on its own.
//
// Besides each pool's state (the paper's), a manager keeps, per task that ever sent a
// form to the pool, the sequence number of the last form it applied (Applied[i],
// sorted by task, kept after the task left so that a late duplicate is recognized):
// a form is applied only if it is the task's next one (choice K2).
type Host struct {
	sys *System
	// Computer is the 0-based computer (agent) index.
	Computer int
	// Pools are the pools managed here; St[i] is the state of Pools[i] and Applied[i]
	// its table of applied sequence numbers.
	Pools   []PoolID
	St      []PoolState
	Applied [][]Applied
}

// hostStable is what a durable manager keeps for one pool (key "pool/<id>").
type hostStable struct {
	Pool    PoolID
	St      PoolState
	Applied []Applied
}

// NewHost returns the constructor of computer c's manager host.
func NewHost(s *System, c int) func() sim.Node {
	return func() sim.Node { return &Host{sys: s, Computer: c, Pools: s.HostPools[c]} }
}

// Handle implements sim.Node.
func (h *Host) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start:
		h.St = make([]PoolState, len(h.Pools))
		h.Applied = make([][]Applied, len(h.Pools))
	case sim.Restart:
		out.Cover(ruleHostRestart)
		h.St = make([]PoolState, len(h.Pools))
		h.Applied = make([][]Applied, len(h.Pools))
		for i, p := range h.Pools {
			if st, ok := sim.Load[hostStable](in.Stable, poolKey(p)); ok {
				h.St[i], h.Applied[i] = st.St, st.Applied
			}
		}
	case sim.Receive:
		f, ok := in.Msg.(Form)
		if !ok {
			panic(fmt.Sprintf("winkowski: manager host received unexpected %s", in.Msg.Kind()))
		}
		h.receive(f, in.From, out)
	}
}

func poolKey(p PoolID) string { return "pool/" + strconv.Itoa(int(p)) }

func (h *Host) index(p PoolID) int {
	i := slices.Index(h.Pools, p)
	if i < 0 {
		panic(fmt.Sprintf("winkowski: %s received a form for pool %d it does not manage", HostName(h.Computer), p))
	}
	return i
}

// last returns the sequence number of the last form of t applied at pool index i.
func (h *Host) last(i int, t TaskID) Seq {
	if j, ok := slices.BinarySearchFunc(h.Applied[i], t, cmpApplied); ok {
		return h.Applied[i][j].Seq
	}
	return 0
}

func cmpApplied(a Applied, t TaskID) int { return int(a.Task - t) }

// receive handles a form from node from. A form that is T's next one is the paper's
// action (WK-2): the pool's state changes and is broadcast. Any other — a poll, a
// duplicate of a form already applied (a task resends what it has not seen applied),
// a form after a lost one (it will be resent after the lost one) — changes nothing and
// is answered with the current state to T alone (choice K2).
func (h *Host) receive(f Form, from sim.NodeID, out *sim.Outbox) {
	i := h.index(f.Pool)
	last := h.last(i, f.Task)
	if f.Type == FormPoll || f.Seq != last+1 {
		if !h.St[i].Registered(f.Task) && !h.sys.tellsUnregistered(f.Pool, f.Task) {
			return
		}
		out.Cover(ruleMgrAnswer)
		snap := h.St[i]
		out.Send(from, State{Pool: f.Pool, Task: f.Task, Snap: &snap, Seq: last})
		return
	}
	h.St[i] = h.St[i].apply(h.sys, f, out)
	j, ok := slices.BinarySearchFunc(h.Applied[i], f.Task, cmpApplied)
	if ok {
		h.Applied[i] = slices.Clone(h.Applied[i]) // never in place: clones share it
		h.Applied[i][j].Seq = f.Seq
	} else {
		h.Applied[i] = slices.Insert(slices.Clip(h.Applied[i]), j, Applied{Task: f.Task, Seq: f.Seq})
	}
	if h.sys.Durable {
		out.Store(poolKey(f.Pool), hostStable{Pool: f.Pool, St: h.St[i], Applied: h.Applied[i]})
	}
	h.broadcast(i, f.Task, from, out)
}

// broadcast sends the state of pool index i to every registered task (WK-2), each copy
// with the recipient's last applied sequence number. If t, whose form caused the
// action, is not registered (its releasing form dropped its registration: WK-2 sends
// the state "to T" as well) it goes to t's agent node from.
func (h *Host) broadcast(i int, t TaskID, from sim.NodeID, out *sim.Outbox) {
	pool := h.Pools[i]
	snap := new(PoolState)
	*snap = h.St[i]
	for _, r := range snap.Applications {
		out.Send(r.Agent, State{Pool: pool, Task: r.Task, Snap: snap, Seq: h.last(i, r.Task)})
	}
	if !snap.Registered(t) && h.sys.tellsUnregistered(pool, t) {
		out.Cover(ruleMgrTellT)
		out.Send(from, State{Pool: pool, Task: t, Snap: snap, Seq: h.last(i, t)})
	}
}

// Clone implements sim.Cloner. Pool states and tables share their (never modified)
// slices.
func (h *Host) Clone() sim.Node {
	c := *h
	c.St = slices.Clone(h.St)
	c.Applied = slices.Clone(h.Applied)
	return &c
}

// AppendState implements sim.StateEncoder.
func (h *Host) AppendState(b []byte) []byte {
	for i := range h.St {
		b = h.St[i].AppendState(b)
		b = appendApplied(b, h.Applied[i])
	}
	return b
}

// AppendState implements sim.StateEncoder (for stable storage).
func (s hostStable) AppendState(b []byte) []byte {
	b = binary.AppendVarint(b, int64(s.Pool))
	return appendApplied(s.St.AppendState(b), s.Applied)
}

func appendApplied(b []byte, as []Applied) []byte {
	b = binary.AppendUvarint(b, uint64(len(as)))
	for _, a := range as {
		b = binary.AppendVarint(b, int64(a.Task))
		b = appendSeq(b, a.Seq)
	}
	return b
}

// AppendState appends a canonical encoding of the pool state.
func (p *PoolState) AppendState(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p.Applications)))
	for _, r := range p.Applications {
		b = binary.AppendVarint(b, int64(r.Task))
		b = binary.AppendVarint(b, int64(r.Agent))
	}
	b = appendAdms(b, p.Admissions)
	b = appendReqs(b, p.Requests)
	b = appendIDs(b, p.Orders)
	b = binary.AppendUvarint(b, uint64(len(p.InUse)))
	for _, u := range p.InUse {
		b = binary.AppendVarint(b, int64(u.Unit))
		b = binary.AppendVarint(b, int64(u.Task))
	}
	return b
}
