package winkowski

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// Status is a task's status (paper §3, "Local states of tasks").
type Status uint8

const (
	// Registering: entering phase; registration forms sent, waiting for the absolute
	// predecessors to leave the game (WK-1).
	Registering Status = iota + 1
	// Admitted: a ticket is taken, admission forms are being sent (WK-1).
	Admitted
	// Trying: competition phase; distributing or withdrawing requests (WK-3, WK-4).
	Trying
	// Advancing: sending advancing forms (WK-4).
	Advancing
	// Ordering: sending order forms and waiting to see them (WK-4).
	Ordering
	// Winning: winning forms sent, waiting for the bookings (WK-3).
	Winning
	// Accessing: executing with the booked resources (WK-3).
	Accessing
	// Releasing: releasing forms sent, waiting for the releases (WK-3).
	Releasing
)

var statusNames = [...]string{"?", "REGISTERING", "ADMITTED", "TRYING", "ADVANCING", "ORDERING", "WINNING", "ACCESSING", "RELEASING"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// MarshalText implements encoding.TextMarshaler (traces show names).
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Knowledge is what a task knows about one pool of its interest: the paper's
// AboutPredecessors, AboutRegistered, AboutRequests, AboutOrders, AboutUse (with the
// users, the paper's AboutUsers) and BlockingRequests for that pool. Every slice is
// either taken from a State snapshot or freshly built; none is modified in place.
type Knowledge struct {
	Predecessors []Adm
	Registered   []Reg
	Requests     []Req
	Orders       []TaskID
	Use          []Use
	Blocking     []Req
}

// Task is the local state of a task (paper §3): status, TicketsAt (Ticket, 0 for ∅),
// alarm-clock (Alarm, ∞ when !AlarmSet), Destinations (Dest, a bit per pool of
// interest, in the order of the task's sorted pool list) and the knowledge about each
// pool of interest (About, same order).
//
// The rest is bookkeeping the paper leaves implicit (bit k of a mask is T's k-th pool):
//
//   - Heard: pools whose state T has learned since its registration arrived there
//     (the first such state fixes T's absolute predecessors, WK-1).
//   - Sent[k], Acked[k]: the sequence number of T's last form to pool k, and of the
//     last one the manager has applied by the latest state T received; Unacked[k]
//     holds T's forms to pool k after Acked[k], for resending (choice K2). While
//     Acked[k] < Sent[k], what the latest state says about T's own request and order
//     form may be stale (choice K1).
//   - Quiet: pools that, since T's retry timer last rang, showed none of T's
//     outstanding forms applied or, with none outstanding, sent T nothing (choice K2).
//   - Fresh: pools whose state T has learned since its agent's last restart; T plays
//     only once it is full (choice F2).
//   - Seen: pools where T has seen its booking; ExecEnd: when T's execution ends on
//     the agent's clock.
type Task struct {
	ID       TaskID
	Status   Status
	Ticket   Ticket
	AlarmSet bool
	Alarm    sim.Time
	Dest     uint64
	About    []Knowledge

	Heard   uint64
	Sent    []Seq
	Acked   []Seq
	Unacked [][]Form
	Quiet   uint64
	Fresh   uint64
	Seen    uint64
	ExecEnd sim.Time
}

// UnitOf returns the resource of the pool that the knowledge shows t using, if any.
func (k *Knowledge) UnitOf(t TaskID) (Unit, bool) { return unitOf(k.Use, t) }

func bit(k int) uint64 { return 1 << uint(k) }

func full(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(n) - 1
}

// newTask returns a task in its initial state (paper §3, "Creation of a task T"):
// no status yet, no ticket, alarm at ∞, empty knowledge.
func newTask(id TaskID, pools int) *Task {
	return &Task{ID: id, About: make([]Knowledge, pools), Sent: make([]Seq, pools), Acked: make([]Seq, pools),
		Unacked: make([][]Form, pools), Quiet: full(pools), Fresh: full(pools)}
}

// heard reports whether T has learned the state of pool k since its registration
// arrived there.
func (t *Task) heard(k int) bool { return t.Heard&bit(k) != 0 }

// acked reports whether the latest state of pool k reflects every form T has sent
// there (choice K1).
func (t *Task) acked(k int) bool { return t.Acked[k] == t.Sent[k] }

// predecessors returns how many absolute predecessors T still waits for and the
// largest ticket among them.
func (t *Task) predecessors() (n int, maxTicket Ticket) {
	var seen []TaskID
	for k := range t.About {
		for _, a := range t.About[k].Predecessors {
			if !slices.Contains(seen, a.Task) {
				seen = append(seen, a.Task)
				n++
			}
			maxTicket = max(maxTicket, a.Ticket)
		}
	}
	return n, maxTicket
}

// poolView is T's reading of one pool of interest under its current knowledge.
type poolView struct {
	// count is the number of requests preceding T's actual or potential request that
	// come from tasks of priority not lower than T's or (complete variant) with an
	// order form: the left side of (p1)/(p3).
	count int
	// pos is the number of requests preceding T's request, -1 if T's request is not
	// known to be there (not sent, in flight, or being withdrawn).
	pos int
	// accessible is the number of resources of the pool not in AboutUse: the right
	// side of (p1)/(p3), and the free resources of the winning condition.
	accessible int
	// inFront: T's request is seen and preceded by fewer requests than accessible
	// resources (the winning condition at this pool).
	inFront bool
}

func (v poolView) seen() bool  { return v.pos >= 0 }
func (v poolView) p() bool     { return v.count < v.accessible }
func (v poolView) front() bool { return v.inFront }

// view evaluates pool k (index in T's interest) for T (choice P1).
func (t *Task) view(s *System, k int, pool PoolID, out *sim.Outbox) poolView {
	kn := &t.About[k]
	v := poolView{pos: -1, accessible: s.accessible(s.Pools[pool].Capacity, len(kn.Use))}
	// K1: T's own request is known to be there only if T has sent it (pool k is no
	// destination) and the state is current: it reflects all T's forms.
	if t.Dest&bit(k) == 0 {
		if s.current(t, k) {
			v.pos = reqIndex(kn.Requests, t.ID)
		} else {
			out.Cover(ruleStale)
		}
	}
	end := len(kn.Requests)
	if v.pos >= 0 {
		out.Cover(ruleActual)
		end = v.pos
	} else {
		out.Cover(rulePotential)
	}
	for _, r := range kn.Requests[:end] {
		if r.Task == t.ID {
			continue // T's own stale request is not a predecessor of its potential one
		}
		ordered := slices.Contains(kn.Orders, r.Task)
		if s.countsAhead(t, r, ordered) {
			if r.Ticket > t.Ticket {
				out.Cover(ruleCountOrder) // WK-4: counted for its order form alone
			}
			v.count++
		}
	}
	if v.pos >= 0 && s.inFront(v.pos, v.accessible) {
		v.inFront = true
	}
	return v
}

// blocking returns T's current blocking requests at pool k: the predecessors of its
// request without an order form, in queue order (paper §3 consistency condition on
// BlockingRequests). T's request must be seen.
func (t *Task) blocking(s *System, k int) []Req {
	kn := &t.About[k]
	pos := reqIndex(kn.Requests, t.ID)
	var out []Req
	for _, r := range kn.Requests[:max(pos, 0)] {
		if s.blocks(r, slices.Contains(kn.Orders, r.Task)) {
			out = append(out, r)
		}
	}
	return out
}

// blockersStay reports whether every blocking request T registered at pool k still
// precedes T's request: "none of the blocking requests is removed" (WK-4, choice G1).
func (t *Task) blockersStay(k int) bool {
	kn := &t.About[k]
	pos := reqIndex(kn.Requests, t.ID)
	if pos < 0 {
		return false
	}
	for _, b := range kn.Blocking {
		if !slices.Contains(kn.Requests[:pos], b) {
			return false
		}
	}
	return true
}

// ordersSeen reports whether T sees its own order form at every pool, in states that
// are current (choice O1: its order forms are distributed).
func (t *Task) ordersSeen(s *System) bool {
	for k := range t.About {
		if !s.current(t, k) || !slices.Contains(t.About[k].Orders, t.ID) {
			return false
		}
	}
	return true
}

// ---- canonical encodings (model checking) ----

// seqModulus: sequence numbers are encoded modulo it (appendSeq).
const seqModulus = 256

// appendSeq encodes a sequence number modulo seqModulus. Sequence numbers grow
// without bound along the game's cycles (a task that advances, withdraws and requests
// again sends new forms), so encoding them whole would make the model checker's state
// space infinite. The protocol only ever compares sequence numbers of one (task, pool)
// pair with each other (equal, one more, not above), so two states whose numbers
// differ by a common shift per pair behave alike; and as long as every (task, pool)
// pair's live numbers (the task's Sent and Acked and stored copies of them, the
// manager's last applied one, and those of forms and states in flight) lie within a
// window narrower than seqModulus, the residues determine every difference. The
// model checker checks that window as an invariant (scenarios/winkowski: "K2 window"),
// so the encoding is exact on every state it explores.
func appendSeq(b []byte, s Seq) []byte { return append(b, byte(s%seqModulus)) }

func appendBool(b []byte, x bool) []byte {
	if x {
		return append(b, 1)
	}
	return append(b, 0)
}

// appendState encodes what T's future behaviour depends on — and only that, so that
// the model checker identifies states that differ in knowledge T will never read:
// of AboutRegistered nothing (T reads Heard), of AboutUse only how many resources
// are in use and which one is T's, and nothing of the knowledge or the competition
// bookkeeping once T is WINNING (it then reads only its own bookings).
func (t *Task) appendState(b []byte) []byte {
	b = binary.AppendVarint(b, int64(t.ID))
	b = append(b, byte(t.Status))
	b = binary.AppendUvarint(b, t.Seen)
	b = binary.AppendUvarint(b, t.Fresh)
	b = binary.AppendUvarint(b, t.Quiet)
	for k := range t.About {
		b = appendSeq(b, t.Sent[k])
		b = appendSeq(b, t.Acked[k])
		b = binary.AppendUvarint(b, uint64(len(t.Unacked[k])))
		for _, f := range t.Unacked[k] {
			b = f.AppendState(b)
		}
	}
	if t.Status >= Winning {
		for k := range t.About {
			b = appendOwnUse(b, t.About[k].Use, t.ID)
		}
		return b
	}
	b = binary.AppendVarint(b, int64(t.Ticket))
	b = appendBool(b, t.AlarmSet)
	b = binary.AppendUvarint(b, t.Dest)
	b = binary.AppendUvarint(b, t.Heard)
	for k := range t.About {
		kn := &t.About[k]
		b = appendAdms(b, kn.Predecessors)
		b = appendReqs(b, kn.Requests)
		b = appendIDs(b, kn.Orders)
		b = appendOwnUse(b, kn.Use, t.ID)
		b = appendReqs(b, kn.Blocking)
	}
	return b
}

func appendAdms(b []byte, as []Adm) []byte {
	b = binary.AppendUvarint(b, uint64(len(as)))
	for _, a := range as {
		b = binary.AppendVarint(b, int64(a.Task))
		b = binary.AppendVarint(b, int64(a.Ticket))
	}
	return b
}

func appendReqs(b []byte, rs []Req) []byte {
	b = binary.AppendUvarint(b, uint64(len(rs)))
	for _, r := range rs {
		b = binary.AppendVarint(b, int64(r.Task))
		b = binary.AppendVarint(b, int64(r.Ticket))
	}
	return b
}

// appendOwnUse encodes how many resources are in use and which one t uses (-1: none).
func appendOwnUse(b []byte, use []Use, t TaskID) []byte {
	b = binary.AppendUvarint(b, uint64(len(use)))
	own := int64(-1)
	if u, ok := unitOf(use, t); ok {
		own = int64(u)
	}
	return binary.AppendVarint(b, own)
}

func appendIDs(b []byte, ids []TaskID) []byte {
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		b = binary.AppendVarint(b, int64(id))
	}
	return b
}

// SeqModulus is the modulus of the canonical encoding of sequence numbers (see
// appendSeq): exact as long as every (task, pool) pair's live sequence numbers lie
// within a window narrower than it.
const SeqModulus = seqModulus

// Seqs reports to add every sequence number v holds, with its task and pool, for the
// model checker's check of the window above. v may be a node (*Agent, *Host), a value
// one of them stores, or a message (Form, State); anything else holds none. Polls
// carry no sequence number.
func (s *System) Seqs(v any, add func(TaskID, PoolID, Seq)) {
	switch x := v.(type) {
	case *Agent:
		for _, t := range x.Tasks {
			s.taskSeqs(t.ID, t.Sent, t.Acked, t.Unacked, add)
		}
	case taskRecord:
		s.taskSeqs(x.ID, x.Sent, x.Acked, x.Unacked, add)
	case *Host:
		for i, p := range x.Pools {
			for _, a := range x.Applied[i] {
				add(a.Task, p, a.Seq)
			}
		}
	case hostStable:
		for _, a := range x.Applied {
			add(a.Task, x.Pool, a.Seq)
		}
	case Form:
		if x.Type != FormPoll {
			add(x.Task, x.Pool, x.Seq)
		}
	case State:
		add(x.Task, x.Pool, x.Seq)
	}
}

// taskSeqs reports task id's sequence numbers (a Task's or a stored taskRecord's).
func (s *System) taskSeqs(id TaskID, sent, acked []Seq, unacked [][]Form, add func(TaskID, PoolID, Seq)) {
	for k, p := range s.Task(id).Pools {
		add(id, p, sent[k])
		add(id, p, acked[k])
		for _, f := range unacked[k] {
			add(id, p, f.Seq)
		}
	}
}
