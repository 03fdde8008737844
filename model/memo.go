package model

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/simrun-dev/simrun/sim"
)

// The handler-call memo (Actors.Memoize). A handler call sees only its node's part of
// the state — the node's volatile state, its stable storage, its local clock, its
// identity — and the input, plus Input.Rand, which the checker derives from the whole
// state. When the system declares that no effect depends on Input.Rand, the call's
// effects are a function of the node's slot (hashed with its pending timers and
// injections consumed, which the effects update) and the input: the memo keeps, per
// such pair, the slot after the call (sealed and interned) and the sends and
// observations, and replays them wherever the pair recurs — the handler, the node's
// copy, its encoding and hash, the storage update, the message hashes and the slot's
// hash are all skipped. What depends on the rest of the state is redone on replay:
// which sends are lost (receiver down, link cut), where they are queued, and the ghost
// fold (each entry remembers its last fold: from which ghost, by hash, to which).
//
// The declaration is tested on every call the memo would keep: the call is also made,
// into scratch copies of the state, with two other draws of random bits (their
// complement and a hash of them), and kept only if all three calls left the same slot,
// sends, observations, ghost and inertness (sameEffects). The first call that varies
// refutes the declaration: the memo is no longer used and the check ends with an error
// naming the node and the input (states explored through entries kept before it may be
// missing, so no count or verdict is reported). A handler that reads some of the bits
// as they are differs on the complement; one that hashes them or folds them by
// exclusive or differs on the hashed draw in about half of its calls, so over a search
// it is caught unless very few calls depend on the bits. It is a test, not a proof:
// the declaration must be true.
//
// Keys are 64-bit hashes of the slot and of the input (the assumption fingerprints
// and the hash-consing pools already make). Calls that panic are not kept; a record
// (trace) always calls the handler.

// memoKey identifies one handler call: node n's slot at the call (perNode-mixed) and
// the input.
type memoKey struct{ slot, in uint64 }

// memoEntry is what a call did.
type memoEntry struct {
	slot  *nodeSlot // the node's slot after the call (sealed, interned)
	sends []memoSend
	obs   []memoObs
	inert bool    // Network.Guarded: the call changed nothing and did nothing
	cover []int32 // the rules the call covered (Options.Coverage)
	// random: the call's effects depend on Input.Rand (its draws differed): it is
	// always made, never replayed.
	random bool
	// fold is the last ghost fold of obs on replay (most replays meet the same ghost).
	fold atomic.Pointer[foldMemo]
}

// foldMemo is one fold of a memoized call's observations: from the ghost with hash
// from at global clock clock (the observations carry it; the node's local clock is the
// key's), to ghost.
type foldMemo struct {
	from  uint64
	clock int32
	ghost any
	h     uint64
}

type memoSend struct {
	to  sim.NodeID
	msg sim.Message
	h   uint64
}

type memoObs struct {
	kind string
	v    any
}

// memoTable is the memo, shared by the workers: sharded, each shard read without a
// lock (memoShard), at most memoMax entries.
type memoTable struct {
	shards [64]memoShard
	// wrong is set by the first call whose effects differed between random draws:
	// the Memoize declaration is false, the memo is no longer used, and the check
	// ends with this error (Spec.failed).
	wrong atomic.Pointer[error]
	n     atomic.Int64 // entries kept
	// declared: the system declares Memoize (a call whose draws differ is an error);
	// otherwise such a call is marked random and always made.
	declared bool
}

// otherDraws are the random bits a call the memo would keep is also made with: the
// complement (every bit differs) and a hash (unrelated bits, for a handler that
// hashes or folds them).
var otherDraws = [...]func(uint64) uint64{
	func(r uint64) uint64 { return ^r },
	func(r uint64) uint64 { return sim.Mix64(r ^ 0x9e3779b97f4a7c15) },
}

// refute records that node's handler had different effects for different random bits
// on input in (the first such call wins).
func (m *memoTable) refute(node string, in sim.Input) {
	what := in.Kind.String()
	if in.Kind == sim.Receive && in.Msg != nil {
		what += " of " + in.Msg.Kind()
	} else if in.Kind == sim.Timeout {
		what += " of timer " + string(in.Timer)
	}
	err := fmt.Errorf("the system declares Memoize, but node %s's handler had different effects for different random bits (Input.Rand) on a %s: the declaration is false; remove it", node, what)
	m.wrong.CompareAndSwap(nil, &err)
}

// failed returns the error refute recorded (nil while the declaration holds).
func (m *memoTable) failed() error {
	if e := m.wrong.Load(); e != nil {
		return *e
	}
	return nil
}

// memoShard is one shard of the memo, read without a lock or a shared write: ro is a
// published map that is never changed again, and entries put since its publication
// wait in dirty (under mu) until they are as many as half of ro, when a new ro holding
// both is published (each entry is copied O(1) times on average). A hit in ro, which
// is nearly every call once the memo has warmed up, costs one atomic load and a map
// lookup; workers do not pass a lock's cache line back and forth.
type memoShard struct {
	ro    atomic.Pointer[map[memoKey]*memoEntry]
	mu    sync.Mutex
	dirty map[memoKey]*memoEntry
	_     [40]byte // one shard per cache line
}

// memoMax bounds the memo's entries: once it holds that many, it keeps replaying them
// and adds no more (a model whose calls seldom recur gains little from the memo, and
// each entry holds a node slot alive).
var memoMax int64 = 1 << 20 // a variable for tests

func newMemoTable() *memoTable {
	m := &memoTable{}
	for i := range m.shards {
		empty := map[memoKey]*memoEntry{}
		m.shards[i].ro.Store(&empty)
		m.shards[i].dirty = map[memoKey]*memoEntry{}
	}
	return m
}

func (m *memoTable) shard(k memoKey) *memoShard { return &m.shards[(k.slot^k.in)>>58] }

func (m *memoTable) get(k memoKey) *memoEntry {
	s := m.shard(k)
	if e, ok := (*s.ro.Load())[k]; ok {
		return e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.dirty[k]; ok {
		return e
	}
	// A put may have published the key between the look at ro above and the lock.
	return (*s.ro.Load())[k]
}

// full reports whether the memo holds memoMax entries.
func (m *memoTable) full() bool { return m.n.Load() >= memoMax }

func (m *memoTable) put(k memoKey, e *memoEntry) {
	s := m.shard(k)
	s.mu.Lock()
	if _, ok := (*s.ro.Load())[k]; ok {
		s.mu.Unlock()
		return // another worker kept the same call first
	}
	filled := false
	if _, ok := s.dirty[k]; !ok {
		filled = m.n.Add(1) == memoMax
	}
	s.dirty[k] = e
	if len(s.dirty) >= max(8, len(*s.ro.Load())/2) {
		s.publish()
	}
	s.mu.Unlock()
	if filled {
		// No more puts: publish every shard's waiting entries, so that no hit on
		// them takes a lock for the rest of the search.
		for i := range m.shards {
			o := &m.shards[i]
			o.mu.Lock()
			o.publish()
			o.mu.Unlock()
		}
	}
}

// publish publishes a new read-only map holding ro and dirty (s.mu held).
func (s *memoShard) publish() {
	if len(s.dirty) == 0 {
		return
	}
	ro := *s.ro.Load()
	pub := make(map[memoKey]*memoEntry, len(ro)+len(s.dirty))
	maps.Copy(pub, ro)
	maps.Copy(pub, s.dirty)
	s.ro.Store(&pub)
	s.dirty = map[memoKey]*memoEntry{}
}

// memoKeyOf returns the key of handing in (with content hash inH: the message's hash,
// the timer's) to node n of t, whose slot is as the call will see it.
func (x *actorSys) memoKeyOf(t *State, n sim.NodeID, in sim.Input, inH uint64) memoKey {
	ns := t.nodes[n]
	sh := ns.hs
	if n >= 64 || t.owned&(1<<n) != 0 || sh == 0 {
		sh = ns.hash() // changed by this action (a timer removed, an injection consumed)
	}
	h := newHasher(0x6d656d6f)
	h.word(uint64(in.Kind))
	h.word(uint64(uint32(in.From)))
	h.word(inH)
	return memoKey{slot: perNode(sh, int(n)), in: h.sum()}
}

// handle hands input in to node n of t — a copy of its state, or a fresh node for a
// Restart — and applies the effects (call), through the memo when the system has one
// and no trace record is asked for. inH identifies the input's content (see
// memoKeyOf).
func (x *actorSys) handle(t *State, n sim.NodeID, in sim.Input, inH, rnd uint64, rec *sim.TraceRecord) {
	var k memoKey
	var m *memoEntry
	if x.memo != nil && rec == nil && x.memo.wrong.Load() == nil {
		k = x.memoKeyOf(t, n, in, inH)
		if e := x.memo.get(k); e != nil && e.random {
			x.cov.add(x.call(t, n, x.fresh(t, n, in), in, rnd, rec, nil))
			return
		} else if e != nil {
			if memoVerify {
				x.verifyReplay(t, n, in, e, rnd)
				return
			}
			if x.replay(t, n, e) {
				return
			}
		}
		if !x.memo.full() {
			m = &memoEntry{}
		}
	}
	// The declaration is tested, not trusted: the call is also made, into scratch
	// copies of t, with two other draws of random bits (their complement and a hash),
	// and compared with the real call below.
	var others [len(otherDraws)]*State
	var oms [len(otherDraws)]*memoEntry
	if m != nil {
		for i, d := range otherDraws {
			others[i], oms[i] = t.scratch(), &memoEntry{}
			x.call(others[i], n, x.fresh(t, n, in), in, d(rnd), nil, oms[i])
		}
	}
	cv := x.call(t, n, x.fresh(t, n, in), in, rnd, rec, m)
	x.cov.add(cv)
	if m == nil || t.panic != nil {
		return
	}
	m.cover = cv
	for i := range others {
		if !sameEffects(t, others[i], n, m, oms[i]) {
			if x.memo.declared {
				x.memo.refute(x.names[n], in)
				return // not memoized; the check ends with the error refute records
			}
			x.memo.put(k, &memoEntry{random: true}) // always made from now on
			return
		}
	}
	// Seal node n's slot now (seal skips a slot that is not owned and has its hash).
	ns := t.nodes[n]
	ns.hs = ns.hash()
	m.slot = intern(&x.slotPool, perNode(ns.hs, int(n)), ns)
	t.nodes[n] = m.slot
	if n < 64 {
		t.owned &^= 1 << n
	}
	m.inert = t.inert
	x.memo.put(k, m)
}

// fresh returns the node that handles in: a copy of node n's state in t, or a new
// node for a Restart.
func (x *actorSys) fresh(t *State, n sim.NodeID, in sim.Input) sim.Node {
	if in.Kind == sim.Restart {
		return x.a.Nodes[n].New()
	}
	return sim.CloneNode(t.nodes[n].node)
}

// scratch returns a copy of t that effects may change without changing t: its own
// node list, no slot or link list owned (so both are copied before a change).
func (t *State) scratch() *State {
	u := *t
	u.nodes = slices.Clone(t.nodes)
	u.links = t.links
	if t.linksOwned {
		u.links = slices.Clone(t.links) // t's may live in t.linkBuf
	}
	u.owned, u.linksOwned = 0, false
	return &u
}

// sameEffects reports whether two calls of node n with different random bits, into t
// (recorded in m) and into u (recorded in om), left the same slot, sent the same
// messages, made the same observations and left the same ghost.
func sameEffects(t, u *State, n sim.NodeID, m, om *memoEntry) bool {
	if u.panic != nil || u.nodes[n].hash() != t.nodes[n].hash() || u.ghostH != t.ghostH ||
		u.inert != t.inert || len(m.sends) != len(om.sends) || len(m.obs) != len(om.obs) {
		return false
	}
	for i, s := range m.sends {
		if s.to != om.sends[i].to || s.h != om.sends[i].h {
			return false
		}
	}
	for i, o := range m.obs {
		if o.kind != om.obs[i].kind || !reflect.DeepEqual(o.v, om.obs[i].v) {
			return false
		}
	}
	return true
}

// replay applies a memoized call's effects to t, as effects would have: it reports
// false, leaving t as it was, if the ghost fold panics (the handler is then called, and
// the panic reported as usual).
func (x *actorSys) replay(t *State, n sim.NodeID, e *memoEntry) bool {
	ghost, ghostH := t.ghost, t.ghostH
	if f := e.fold.Load(); f != nil && f.from == t.ghostH && f.clock == t.clock && len(e.obs) > 0 {
		ghost, ghostH = f.ghost, f.h
	} else if len(e.obs) > 0 && x.a.Ghost.Fold != nil {
		ok := false
		func() {
			defer func() {
				if recover() == nil {
					ok = true
				}
			}()
			local := x.ticks(t.nodes[n].local)
			ghost, ghostH = x.fold(t, n, local, len(e.obs), func(i int) (string, any) { return e.obs[i].kind, e.obs[i].v })
		}()
		if !ok {
			return false
		}
		e.fold.Store(&foldMemo{from: t.ghostH, clock: t.clock, ghost: ghost, h: ghostH})
	}
	t.nodes[n] = e.slot
	if n < 64 {
		t.owned &^= 1 << n
	}
	t.sends = int32(len(e.sends))
	for i, s := range e.sends {
		if t.sendLimit > 0 && int32(i) >= t.sendLimit-1 {
			break // a mid-send crash: the rest never leaves
		}
		x.send(t, n, s.to, s.msg, s.h)
	}
	t.ghost, t.ghostH = ghost, ghostH
	t.inert = e.inert
	x.cov.add(e.cover)
	return true
}

// send queues a message from n (lost at once to a receiver that is down or over a
// cut link) and returns why it was lost ("" when queued).
func (x *actorSys) send(t *State, n, to sim.NodeID, msg sim.Message, h uint64) string {
	switch {
	case t.nodes[to].node == nil && to != n:
		return "receiver down"
	case t.Cut(n, to):
		return "partition"
	}
	env := envelope{msg: msg, h: h}
	if x.a.Time.MaxDelay > 0 {
		env.sent = t.clock
	}
	t.enqueue(n, to, env, x.a.Network.Unordered)
	return ""
}

// memoVerify makes every memo hit call the handler too and compare (tests).
var memoVerify bool

// verifyReplay calls the handler into t and checks that replaying e into a copy of
// t gives the same node slot, links, ghost and inertness; it panics otherwise.
func (x *actorSys) verifyReplay(t *State, n sim.NodeID, in sim.Input, e *memoEntry, rnd uint64) {
	u := *t
	u.nodes = append([]*nodeSlot(nil), t.nodes...)
	u.links = append([]*link(nil), t.links...)
	u.linksOwned = true
	replayed := x.replay(&u, n, e)
	var node sim.Node
	if in.Kind == sim.Restart {
		node = x.a.Nodes[n].New()
	} else {
		node = sim.CloneNode(t.nodes[n].node)
	}
	x.call(t, n, node, in, rnd, nil, nil)
	if !replayed {
		return
	}
	linksHash := func(s *State) uint64 {
		h := newHasher(0)
		for _, l := range s.links {
			hashLink(&h, l.from, l.to, l.msgs)
		}
		return h.sum()
	}
	ns := t.nodes[n]
	switch {
	case t.panic != nil:
		panic("model: memo replayed a call that panics")
	case ns.hash() != e.slot.hs || ns.h != e.slot.h || ns.sh != e.slot.sh:
		panic("model: memo replayed another node slot than the call's")
	case linksHash(t) != linksHash(&u) || t.nmsgs != u.nmsgs:
		panic("model: memo replayed other sends than the call's")
	case t.ghostH != u.ghostH || t.inert != u.inert:
		panic("model: memo replayed another ghost than the call's")
	}
}
