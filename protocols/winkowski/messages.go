package winkowski

import (
	"encoding/binary"
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// FormKind names the forms a task sends to the manager of a pool (paper §2, §3
// "Data"), plus Poll, which is not a form of the paper (choice K2).
type FormKind uint8

const (
	// Registration: the task's presence at the pool (WK-1).
	FormRegistration FormKind = iota + 1
	// Admission: the task is in the competition phase with Ticket (WK-1).
	FormAdmission
	// Request: a request of accessing a resource, appended to the queue once (WK-3).
	FormRequest
	// Order: the task is a potential winner at the pool (WK-4).
	FormOrder
	// Advancing: transpose the task's request with the one in front of it, unless
	// that one's task has an order form (WK-4).
	FormAdvancing
	// Withdrawal removes the task's request and order form (WK-2); with Final (sent
	// when the task starts accessing its resources) also its admission form (paper
	// §2: "it withdraws its admission forms and requests"; choice W1).
	FormWithdrawal
	// Winning: book a free resource for the task (WK-2).
	FormWinning
	// Releasing: free the task's resource and drop its registration (WK-2).
	FormReleasing
	// Poll asks for the pool's current state and changes nothing: a task that has
	// heard nothing from a pool for Config.Retry polls it, because the state that
	// would have told it something may have been lost (choice K2). Polls carry no
	// sequence number.
	FormPoll
)

var formNames = [...]string{"?", "Registration", "Admission", "Request", "Order", "Advance", "Withdrawal", "Winning", "Releasing", "Poll"}

func (k FormKind) String() string {
	if int(k) < len(formNames) {
		return formNames[k]
	}
	return "form?"
}

// MarshalText implements encoding.TextMarshaler (traces show names).
func (k FormKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Seq numbers the forms of one task to one pool: 1, 2, 3, … in sending order
// (choice K2). A manager applies a task's forms in that order, each exactly once.
type Seq uint32

// Form is a form of a task for the manager of one pool. Every form names its pool,
// its task and its sequence number; the forms the paper gives a ticket carry it
// (Admission, Request, Order, Advancing, Withdrawal, Winning); Agent is where the
// manager sends the pool's state to the task (set on Registration).
type Form struct {
	Type   FormKind
	Pool   PoolID
	Task   TaskID
	Seq    Seq
	Ticket Ticket
	Final  bool
	Agent  sim.NodeID
}

// Kind implements sim.Message: the form's name ("Registration", "Request", ...).
func (f Form) Kind() string { return f.Type.String() }

// AppendState implements sim.StateEncoder. Sequence numbers are encoded modulo
// seqModulus (see appendSeq).
func (f Form) AppendState(b []byte) []byte {
	b = append(b, byte(f.Type))
	b = binary.AppendVarint(b, int64(f.Pool))
	b = binary.AppendVarint(b, int64(f.Task))
	b = appendSeq(b, f.Seq)
	b = binary.AppendVarint(b, int64(f.Ticket))
	b = appendBool(b, f.Final)
	return binary.AppendVarint(b, int64(f.Agent))
}

// State carries the manager's local state of Pool to the registered task Task (WK-2:
// sent after every action to every registered task), and Seq, the sequence number of
// the last form of Task the manager has applied at Pool (choice K2: a state reflects
// all the forms Task has sent iff Seq is the number of its last one).
//
// Snap is shared by the copies of one broadcast and, from the task's side, kept as
// its knowledge: an exception to the rule that messages are plain values, safe
// because a PoolState is never modified in place (copy on write, see PoolState). It
// saves copying the pool's state once per registered task and per action.
type State struct {
	Pool PoolID
	Task TaskID
	Snap *PoolState
	Seq  Seq
}

// Kind implements sim.Message.
func (State) Kind() string { return "State" }

// Size implements sim.Sizer: a header plus the snapshot's entries.
func (m State) Size() int {
	s := m.Snap
	return 16 + 8*(len(s.Applications)+len(s.Admissions)+len(s.Requests)+len(s.InUse)) + 4*len(s.Orders)
}

// Reg is a registration form present at a pool.
type Reg struct {
	Task  TaskID
	Agent sim.NodeID
}

// Adm is an admission form present at a pool.
type Adm struct {
	Task   TaskID
	Ticket Ticket
}

// Req is a request in a pool's queue.
type Req struct {
	Task   TaskID
	Ticket Ticket
}

// Use records that Task uses resource Unit (user_P(Unit) = Task).
type Use struct {
	Unit Unit
	Task TaskID
}

// PoolState is the local state of the resource manager of one pool (paper §3, "Local
// states of resource managers"): Applications, Admissions, the Requests queue, Orders,
// InUse with user. Sets are kept sorted by task (InUse by unit).
//
// A PoolState's slices are never modified in place: every action builds new ones
// (copy on write). That is what lets one snapshot be broadcast to every registered
// task, kept by each of them as its knowledge, and shared by clones.
//
// Invariants (paper §3, consistency): every admission has a registration, every
// request an admission, every order form a request; units are in [0, capacity) and
// each has one user.
type PoolState struct {
	Applications []Reg
	Admissions   []Adm
	Requests     []Req
	Orders       []TaskID
	InUse        []Use
}

// Registered reports whether t has a registration form at the pool.
func (p *PoolState) Registered(t TaskID) bool {
	return slices.ContainsFunc(p.Applications, func(r Reg) bool { return r.Task == t })
}

// Admitted reports whether t has an admission form at the pool.
func (p *PoolState) Admitted(t TaskID) bool {
	return slices.ContainsFunc(p.Admissions, func(a Adm) bool { return a.Task == t })
}

// Position returns the index of t's request in the queue, -1 if none.
func (p *PoolState) Position(t TaskID) int { return reqIndex(p.Requests, t) }

// Ordered reports whether t has an order form at the pool.
func (p *PoolState) Ordered(t TaskID) bool { return slices.Contains(p.Orders, t) }

// UnitOf returns the resource t uses, if any.
func (p *PoolState) UnitOf(t TaskID) (Unit, bool) { return unitOf(p.InUse, t) }

// UserOf returns the task that uses resource u, if any (user_P(u)).
func (p *PoolState) UserOf(u Unit) (TaskID, bool) {
	if i, ok := slices.BinarySearchFunc(p.InUse, u, func(x Use, u Unit) int { return int(x.Unit - u) }); ok {
		return p.InUse[i].Task, true
	}
	return 0, false
}

func unitOf(use []Use, t TaskID) (Unit, bool) {
	if i := slices.IndexFunc(use, func(u Use) bool { return u.Task == t }); i >= 0 {
		return use[i].Unit, true
	}
	return 0, false
}

func reqIndex(rs []Req, t TaskID) int {
	return slices.IndexFunc(rs, func(r Req) bool { return r.Task == t })
}
