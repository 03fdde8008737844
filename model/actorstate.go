package model

import (
	"slices"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// State is one global state of an actor system: what properties (and Boundary) read.
// It is immutable: every accessor returns values the caller must not modify (node
// states, stable storage and ghost values are shared between states).
type State struct {
	sys    *actorSys
	nodes  []*nodeSlot // shared between states: replace (mut), never modify in place
	links  []*link     // non-empty link queues, sorted by (from, to); shared likewise
	cut    []uint64    // bitset of cut directed links (from*n+to); nil when none is cut
	clock  int32       // global clock, ticks (discrete time)
	nmsgs  int32       // messages in flight (the lengths of the link queues summed)
	faults FaultsUsed
	ghost  any
	ghostH uint64
	panic  *sim.PanicError
	fp     uint64
	owned  uint64 // nodes (< 64) already copied by mut since derive
	// nodeBuf holds nodes for systems of up to four nodes (one allocation fewer per
	// derived state).
	nodeBuf [4]*nodeSlot
	// linkBuf holds the link list once owned, while it has fewer than six queues (one
	// allocation fewer per action on the network). A State value copied with its links
	// in linkBuf must not be modified through the copy (derive marks them shared).
	linkBuf [6]*link
	// linksOwned: links is this state's own array (copied by ownLinks since derive),
	// which it may modify; otherwise it is shared with the state derived from.
	linksOwned bool
	// inert: the last handler call changed nothing and did nothing (no effect, same
	// node state); transient, not part of the state (Network.Guarded reads it).
	inert bool
	// sends is how many messages the last handler call sent, and sendLimit, when > 0,
	// lets only the first sendLimit-1 of them leave (a mid-send crash): both
	// transient, not part of the state.
	sends     int32
	sendLimit int32
}

// nodeSlot is one node's part of a state. Slots are hash-consed (actorSys.seal): states
// that agree on a node share one slot, and slots that agree on the node state or the
// storage share those.
type nodeSlot struct {
	node   sim.Node // nil while down
	h      uint64   // hash of the node's canonical encoding (0 while down)
	store  *sim.Storage
	sh     uint64 // hash of the stable storage
	timers []timerSlot
	local  int32  // local clock, ticks (discrete time)
	inj    int32  // workload injections for this node consumed (delivered or lost)
	hs     uint64 // hash of the whole slot (set by seal)
}

// hash hashes the slot from its component hashes.
func (ns *nodeSlot) hash() uint64 {
	x := newHasher(0x510e)
	x.word(ns.upLocal())
	x.word(uint64(ns.inj))
	x.word(ns.h)
	x.word(ns.sh)
	ns.hashTimers(&x)
	return x.sum()
}

// upLocal packs whether the node is up with its local clock (one hash word).
func (ns *nodeSlot) upLocal() uint64 {
	up := uint64(0)
	if ns.node != nil {
		up = 1
	}
	return up | uint64(uint32(ns.local))<<32
}

// hashTimers adds the pending timers (IDs and deadlines) to a hash.
func (ns *nodeSlot) hashTimers(x *hasher) {
	x.word(uint64(len(ns.timers)))
	for _, tm := range ns.timers {
		x.word(tm.h)
		x.word(uint64(uint32(tm.deadline)))
	}
}

type timerSlot struct {
	id       sim.TimerID
	h        uint64 // hashString(id)
	deadline int32  // local ticks (discrete time), 0 untimed
}

type link struct {
	from, to sim.NodeID
	msgs     []envelope
}

type envelope struct {
	msg  sim.Message
	h    uint64 // hash of the message's canonical encoding (with its type)
	sent int32  // global tick it was sent (only with MaxDelay, else 0)
}

// FaultsUsed counts the faults taken along the path to a state.
type FaultsUsed struct {
	Crashes    int `json:"crashes"`
	Losses     int `json:"losses"`
	Duplicates int `json:"duplicates"`
	Cuts       int `json:"cuts"`
}

// InFlight is a message on the network.
type InFlight struct {
	From, To sim.NodeID
	Msg      sim.Message
}

// PendingTimer is an armed timer. Deadline is on the node's local clock (discrete time;
// 0 in untimed mode).
type PendingTimer struct {
	ID       sim.TimerID
	Deadline sim.Time
}

// NumNodes returns the number of nodes.
func (s *State) NumNodes() int { return len(s.nodes) }

// Name returns node n's name.
func (s *State) Name(n sim.NodeID) string { return s.sys.names[n] }

// Up reports whether node n is running.
func (s *State) Up(n sim.NodeID) bool { return s.nodes[n].node != nil }

// Node returns node n's state (nil while it is down). Read only.
func (s *State) Node(n sim.NodeID) sim.Node { return s.nodes[n].node }

// NodeAs returns node n's state as a T (typically a pointer to the protocol's node
// type); ok is false while the node is down or if it has another type.
func NodeAs[T any](s *State, n sim.NodeID) (T, bool) {
	t, ok := s.nodes[n].node.(T)
	return t, ok
}

// Stable returns node n's stable storage. Read only (use Peek, Keys; never Apply).
func (s *State) Stable(n sim.NodeID) *sim.Storage { return s.nodes[n].store }

// Timers returns node n's pending timers, sorted by ID.
func (s *State) Timers(n sim.NodeID) []PendingTimer {
	ts := s.nodes[n].timers
	out := make([]PendingTimer, len(ts))
	for i, t := range ts {
		out[i] = PendingTimer{ID: t.id, Deadline: s.sys.ticks(t.deadline)}
	}
	return out
}

// InFlight returns the messages in flight, link by link (sorted by sender, then
// receiver), each link's messages in queue order (FIFO) or canonical order (unordered).
func (s *State) InFlight() []InFlight {
	var out []InFlight
	for _, l := range s.links {
		for _, e := range l.msgs {
			out = append(out, InFlight{From: l.from, To: l.to, Msg: e.msg})
		}
	}
	return out
}

// NumInFlight returns len(s.InFlight()) without building the list (state
// constraints such as "at most k messages in flight" run on every state).
func (s *State) NumInFlight() int { return int(s.nmsgs) }

// PendingInjections returns how many workload injections for node n are not yet
// delivered (or lost).
func (s *State) PendingInjections(n sim.NodeID) int {
	return len(s.sys.injBy[n]) - int(s.nodes[n].inj)
}

// Cut reports whether the directed link from→to is cut.
func (s *State) Cut(from, to sim.NodeID) bool {
	if s.cut == nil {
		return false
	}
	i := int(from)*len(s.nodes) + int(to)
	return s.cut[i/64]&(1<<(i%64)) != 0
}

// Now returns the global clock (discrete time; 0 in untimed mode).
func (s *State) Now() sim.Time { return s.sys.ticks(s.clock) }

// Local returns node n's clock reading (discrete time; 0 in untimed mode).
func (s *State) Local(n sim.NodeID) sim.Time { return s.sys.ticks(s.nodes[n].local) }

// Ghost returns the ghost (monitor) value. Read only.
func (s *State) Ghost() any { return s.ghost }

// GhostAs returns the ghost value as a T (the zero T if it has another type).
func GhostAs[T any](s *State) T {
	t, _ := s.ghost.(T)
	return t
}

// Faults returns the faults used along the path to this state.
func (s *State) Faults() FaultsUsed { return s.faults }

// Panic returns the protocol panic that ended this state's path, if any.
func (s *State) Panic() *sim.PanicError { return s.panic }

// ---- copy-on-write ----

// derive returns a shallow copy of s that may be modified: the top-level slices are
// copied, the values they point to (node slots, link queues, node states, storages)
// are shared and must be replaced, not mutated (see mut).
func (s *State) derive() *State { return s.deriveInto(new(State)) }

// deriveInto is derive into t, a new State or one the search has discarded (recycle):
// every field is overwritten, and t's node array is reused when it has room.
func (s *State) deriveInto(t *State) *State {
	spare := t.nodes
	*t = *s
	switch n := len(s.nodes); {
	case n <= len(t.nodeBuf):
		t.nodes = t.nodeBuf[:n]
		copy(t.nodes, s.nodes)
	case cap(spare) >= n:
		t.nodes = append(spare[:0], s.nodes...)
	default:
		t.nodes = slices.Clone(s.nodes)
	}
	t.fp, t.owned, t.inert, t.linksOwned = 0, 0, false, false
	return t
}

// ownLinks makes t's link list its own (a copy, the first time since derive), ready
// to be modified; the queues it points to stay shared (replace, never modify).
func (t *State) ownLinks() {
	if !t.linksOwned {
		if len(t.links) < len(t.linkBuf) {
			t.links = append(t.linkBuf[:0], t.links...)
		} else {
			t.links = slices.Clone(t.links)
		}
		t.linksOwned = true
	}
}

// mut returns node n's slot, copied first if it may be shared with another state.
func (t *State) mut(n sim.NodeID) *nodeSlot {
	if n < 64 && t.owned&(1<<n) != 0 {
		return t.nodes[n]
	}
	c := *t.nodes[n]
	c.hs = 0 // to be rehashed by seal (the only mark a node >= 64 has of its change)
	t.nodes[n] = &c
	if n < 64 {
		t.owned |= 1 << n
	}
	return &c
}

func (t *State) setCut(from, to sim.NodeID, on bool) {
	n := len(t.nodes)
	if t.cut == nil {
		t.cut = make([]uint64, (n*n+63)/64)
	} else {
		t.cut = slices.Clone(t.cut)
	}
	i := int(from)*n + int(to)
	if on {
		t.cut[i/64] |= 1 << (i % 64)
	} else {
		t.cut[i/64] &^= 1 << (i % 64)
	}
	for _, w := range t.cut {
		if w != 0 {
			return
		}
	}
	t.cut = nil
}

// linkIndex finds the queue of from→to: its index and whether it exists.
func (t *State) linkIndex(from, to sim.NodeID) (int, bool) {
	return slices.BinarySearchFunc(t.links, [2]sim.NodeID{from, to}, func(l *link, k [2]sim.NodeID) int {
		if l.from != k[0] {
			return int(l.from - k[0])
		}
		return int(l.to - k[1])
	})
}

// enqueue appends e to the link from→to (in canonical position when unordered).
func (t *State) enqueue(from, to sim.NodeID, e envelope, unordered bool) {
	i, ok := t.linkIndex(from, to)
	t.ownLinks()
	t.nmsgs++
	if !ok {
		l := newLink(from, to, 1)
		l.msgs[0] = e
		t.links = slices.Insert(t.links, i, l)
		return
	}
	old := t.links[i].msgs
	l := newLink(from, to, len(old)+1)
	j := len(old)
	if unordered {
		j, _ = slices.BinarySearchFunc(old, e, cmpEnvelope)
	}
	copy(l.msgs, old[:j])
	l.msgs[j] = e
	copy(l.msgs[j+1:], old[j:])
	t.links[i] = l
}

// newLink returns a link queue of n messages (to be filled in), allocated with the
// link itself when short (most queues hold a message or two).
func newLink(from, to sim.NodeID, n int) *link {
	switch n {
	case 1:
		c := &struct {
			l   link
			buf [1]envelope
		}{l: link{from: from, to: to}}
		c.l.msgs = c.buf[:]
		return &c.l
	case 2:
		c := &struct {
			l   link
			buf [2]envelope
		}{l: link{from: from, to: to}}
		c.l.msgs = c.buf[:]
		return &c.l
	}
	return &link{from: from, to: to, msgs: make([]envelope, n)}
}

func cmpEnvelope(a, b envelope) int {
	switch {
	case a.h < b.h:
		return -1
	case a.h > b.h:
		return 1
	}
	return int(a.sent - b.sent)
}

// dequeue removes message j of link i.
func (t *State) dequeue(i, j int) {
	l := t.links[i]
	t.ownLinks()
	t.nmsgs--
	if len(l.msgs) == 1 {
		t.links = slices.Delete(t.links, i, i+1)
		return
	}
	c := newLink(l.from, l.to, len(l.msgs)-1)
	copy(c.msgs, l.msgs[:j])
	copy(c.msgs[j:], l.msgs[j+1:])
	t.links[i] = c
}

// dropTo removes every message in flight to node n (a crash) and returns how many.
func (t *State) dropTo(n sim.NodeID) int {
	lost := 0
	t.ownLinks()
	t.links = slices.DeleteFunc(t.links, func(l *link) bool {
		if l.to == n {
			lost += len(l.msgs)
			return true
		}
		return false
	})
	t.nmsgs -= int32(lost)
	return lost
}

// fingerprint hashes the whole state from the cached component hashes (the slots
// must be sealed).
func (t *State) fingerprint() uint64 {
	x := newHasher(0xac70)
	for _, ns := range t.nodes {
		x.word(ns.hs)
	}
	x.word(uint64(len(t.links)))
	for _, l := range t.links {
		hashLink(&x, l.from, l.to, l.msgs)
	}
	return t.fpTail(&x, t.cut, t.ghostH)
}

// hashLink adds one link queue to a fingerprint.
func hashLink(x *hasher, from, to sim.NodeID, msgs []envelope) {
	x.word(uint64(uint32(from))<<32 | uint64(uint32(to)))
	x.word(uint64(len(msgs)))
	for _, e := range msgs {
		x.word(e.h)
		x.word(uint64(uint32(e.sent)))
	}
}

// fpTail adds the cut links (as given: renamed, for symmetry), the clock, the faults
// used, the ghost's hash (as given) and the panic mark, and returns the fingerprint.
func (t *State) fpTail(x *hasher, cut []uint64, ghostH uint64) uint64 {
	x.word(uint64(len(cut)))
	for _, w := range cut {
		x.word(w)
	}
	x.word(uint64(uint32(t.clock)))
	f := t.faults
	x.word(uint64(f.Crashes) | uint64(f.Losses)<<16 | uint64(f.Duplicates)<<32 | uint64(f.Cuts)<<48)
	x.word(ghostH)
	if t.panic != nil {
		x.word(1)
	}
	return x.sum()
}

// ticks converts a tick count to virtual time.
func (x *actorSys) ticks(n int32) sim.Time { return sim.Time(time.Duration(n) * x.tick) }
