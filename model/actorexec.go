package model

import (
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// actorSys is a validated Actors system compiled for the checker.
type actorSys struct {
	a         *Actors
	n         int
	names     []string
	injBy     [][]Injection
	crashable []bool
	pairs     [][2]sim.NodeID
	tick      time.Duration
	discrete  bool

	// Hash-consing pools (hash → value), shared by the workers: node states, storages
	// and node slots that are equal (by their canonical encodings' 64-bit hashes, the
	// same assumption the fingerprint makes) are stored once. Node states and slots
	// are pooled per node (keyed by hash and node index): a node's behaviour may live in
	// what the encoding skips (functions, its dynamic type), so equal encodings of two
	// different nodes must not be merged. Storages are plain data, shared by all.
	nodePool, storePool, slotPool sync.Map

	// sym is the compiled symmetry declaration (nil: none): fingerprints are the
	// least among a state's renamings.
	sym *symSys

	// memo is the handler-call memo (Actors.Memoize; nil without it).
	memo *memoTable

	// cov counts the rules handler calls cover (Options.Coverage; nil when off).
	cov *ruleCounts
}

// ruleCounts counts, per declared rule, the transitions whose handler call covered it.
type ruleCounts struct{ fired []atomic.Int64 }

func (rc *ruleCounts) add(ids []int32) {
	if rc == nil {
		return
	}
	for _, id := range ids {
		if int(id) < len(rc.fired) {
			rc.fired[id].Add(1)
		}
	}
}

// startCoverage implements Spec.cover.
func (x *actorSys) startCoverage() func() *sim.Coverage {
	x.cov = &ruleCounts{fired: make([]atomic.Int64, sim.NumRules())}
	return func() *sim.Coverage {
		c := &sim.Coverage{Fired: make([]int64, len(x.cov.fired))}
		for i := range x.cov.fired {
			c.Fired[i] = x.cov.fired[i].Load()
		}
		x.cov = nil
		return c
	}
}

// freeList holds successors a search worker discarded (Spec.worker), for derive to
// reuse: one per worker, so no state crosses between workers.
type freeList []*State

// freeMax bounds a free list (a batch of duplicates is reused by the next batch).
const freeMax = 1 << 13

// derive derives a successor of s, into a discarded state from fl when there is one.
func (x *actorSys) derive(s *State, fl *freeList) *State {
	if fl != nil && len(*fl) > 0 {
		t := (*fl)[len(*fl)-1]
		*fl = (*fl)[:len(*fl)-1]
		return s.deriveInto(t)
	}
	return s.derive()
}

// worker returns a search worker's own successor function and the function that
// takes back the successors it discards (a duplicate, a self-loop): nothing refers to
// them any more (states are only ever derived from states the search keeps).
func (x *actorSys) worker() (func(*State, func(Action, *State)), func(*State)) {
	fl := &freeList{}
	next := func(s *State, emit func(Action, *State)) { x.nextFrom(s, emit, fl) }
	recycle := func(t *State) { fl.give(t) }
	return next, recycle
}

// give takes back a discarded successor t.
func (fl *freeList) give(t *State) {
	if recyclePoison {
		nodes := t.nodes
		clear(nodes) // its own (derive copies them); kept for deriveInto to reuse
		if t.linksOwned {
			clear(t.links) // otherwise the array of the state it was derived from
		}
		*t = State{nodes: nodes}
	}
	if len(*fl) < freeMax {
		*fl = append(*fl, t)
	}
}

// recyclePoison makes give wipe the state it takes back (tests: a search that still
// used it would go wrong).
var recyclePoison bool

// perNode keys a pool entry by hash and node index.
func perNode(h uint64, n int) uint64 { return sim.Mix64(h ^ sim.Mix64(uint64(n)+0x6a09e667f3bcc909)) }

func intern[T any](pool *sync.Map, h uint64, v T) T {
	if old, ok := pool.Load(h); ok {
		return old.(T)
	}
	old, _ := pool.LoadOrStore(h, v)
	return old.(T)
}

// seal hashes and interns the node slots an action changed (all of them when the system
// has more than 64 nodes), then fingerprints the state.
func (x *actorSys) seal(t *State) {
	for n, ns := range t.nodes {
		if ns.hs != 0 && (n >= 64 || t.owned&(1<<n) == 0) {
			continue // shared with other states (mut copies a slot before changing it)
		}
		ns.hs = ns.hash()
		t.nodes[n] = intern(&x.slotPool, perNode(ns.hs, n), ns)
	}
	t.owned = 0
	t.fp = t.fingerprint()
	if x.sym != nil {
		t.fp = x.sym.canonical(x, t)
	}
}

// compile implements System.
func (a *Actors) compile() (runner, error) {
	if a == nil {
		return nil, fmt.Errorf("model: nil actor system")
	}
	if err := a.validate(); err != nil {
		name := a.Name
		if name == "" {
			name = "actor system"
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	x := &actorSys{a: a, n: len(a.Nodes), tick: a.Time.Tick, discrete: a.Time.Tick > 0}
	for _, s := range a.Nodes {
		x.names = append(x.names, s.Name)
	}
	x.injBy = make([][]Injection, x.n)
	for _, in := range a.Inject {
		x.injBy[in.To] = append(x.injBy[in.To], in)
	}
	x.crashable = make([]bool, x.n)
	for i := range x.crashable {
		x.crashable[i] = a.Crashes.Nodes == nil
	}
	for _, id := range a.Crashes.Nodes {
		x.crashable[id] = true
	}
	if a.Cuts.Pairs != nil {
		x.pairs = a.Cuts.Pairs
	} else if a.Cuts.Budget > 0 {
		for i := 0; i < x.n; i++ {
			for j := 0; j < x.n; j++ {
				if i != j && (a.Cuts.OneWay || i < j) {
					x.pairs = append(x.pairs, [2]sim.NodeID{sim.NodeID(i), sim.NodeID(j)})
				}
			}
		}
	}
	if !a.NoMemo {
		x.memo = newMemoTable()
		x.memo.declared = a.Memoize
	}
	if len(a.Symmetry.Nodes) > 0 {
		sym, err := x.newSymSys()
		if err != nil {
			name := a.Name
			if name == "" {
				name = "actor system"
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		x.sym = sym
	}
	props := []Property[*State]{Always(noPanic, func(s *State) bool { return s.panic == nil })}
	props = append(props, a.Properties...)
	name := a.Name
	if name == "" {
		name = "actors"
	}
	sp := &Spec[*State]{
		Name:        name,
		Init:        func() []*State { return []*State{x.initial(nil)} },
		Next:        x.next,
		Fingerprint: func(s *State) uint64 { return s.fp },
		Properties:  props,
		Boundary:    a.Boundary,
		Fairness:    x.fairness,
		record:      x,
		worker:      x.worker,
		cover:       x.startCoverage,
		weight:      x.walkWeight,
	}
	if x.memo != nil {
		sp.failed = x.memo.failed
	}
	if err := sp.validate(); err != nil {
		return nil, err
	}
	return &checker[*State]{sp: sp}, nil
}

// walkWeight weighs an actor system's actions for random walks: the protocol's own
// steps (deliveries, injections) come first, then what fault recovery needs (restarts,
// restores, the clock), then timeouts, and faults (crashes, mid-send crashes, cuts,
// losses, duplicates, drift) are rare — a walk still meets them, but one that picks
// uniformly spends most of its steps on them and on timers and seldom reaches a
// decision of the protocol.
func (x *actorSys) walkWeight(s *State, a Action) float64 {
	kind, _, _ := unact(a)
	if kind&aMidSend != 0 {
		return 0.25
	}
	switch kind {
	case aDeliver, aInject, aLoseCut, aInjectLost:
		return 16
	case aRestart, aRestore, aTick:
		return 4
	case aTimer:
		return 2
	}
	return 0.5 // aCrash, aCut, aDrop, aDup, aLag, aLead
}

// fairness is the weak-fairness assumption of actor systems (Options.Fair): the network
// eventually delivers what stays deliverable on a link (FIFO: the link's head; unordered:
// each message) — or loses it, if the link is cut; the environment eventually hands over
// its next injection; a pending timer eventually fires (a due one, in discrete time);
// the clock eventually ticks; a crashed node eventually restarts; a cut link is
// eventually restored. Faults are not fair: crashes, cuts, losses, duplicates and clock
// drift may happen, or not, forever.
func (x *actorSys) fairness(s *State, a Action) (uint64, bool) {
	kind, p1, p2 := unact(a)
	switch kind {
	case aDeliver, aLoseCut:
		l := s.links[p1]
		h := newHasher(aDeliver)
		h.word(uint64(uint32(l.from))<<32 | uint64(uint32(l.to)))
		if x.a.Network.Unordered {
			h.word(l.msgs[p2].h)
		}
		return h.sum(), true
	case aInject, aInjectLost:
		return sim.Mix64(uint64(aInject)<<32 | uint64(p1)), true
	case aTimer:
		h := newHasher(aTimer)
		h.word(uint64(p1))
		h.word(s.nodes[p1].timers[p2].h)
		return h.sum(), true
	case aRestart, aRestore:
		return sim.Mix64(uint64(kind)<<32 | uint64(p1)), true
	case aTick:
		return sim.Mix64(aTick), true
	}
	return 0, false
}

// Action labels: kind in the top byte, then two parameters.
const (
	aDeliver    = iota + 1 // link, message
	aLoseCut               // delivery over a cut link: the message is lost
	aDrop                  // lossy network drops a message
	aDup                   // duplicating network copies a message
	aInject                // node
	aInjectLost            // node (down)
	aTimer                 // node, timer
	aCrash                 // node
	aRestart               // node
	aCut                   // pair
	aRestore               // pair
	aTick
	aLag  // node
	aLead // node
)

// aMidSend marks a handler action (deliver, inject, timer, restart) cut short by a
// crash (Crashes.MidSend): the low 16 bits of p2 hold the action's own p2, the high 16
// bits how many of the call's sends leave.
const aMidSend = 0x40

func midSend(ac Action, leave int) Action {
	kind, p1, p2 := unact(ac)
	return act(kind|aMidSend, p1, p2|leave<<16)
}

func act(kind, p1, p2 int) Action {
	return Action(uint64(kind)<<56 | uint64(uint32(p1)&0xffffff)<<32 | uint64(uint32(p2)))
}

func unact(a Action) (kind, p1, p2 int) {
	return int(a >> 56), int((a >> 32) & 0xffffff), int(uint32(a))
}

var outboxes = sync.Pool{New: func() any { return new(sim.Outbox) }}

// initial builds the initial state: every node built, then Start handed to each in
// node order (the system starts atomically). rec, when set, receives the start records.
func (x *actorSys) initial(rec *[]sim.TraceRecord) *State {
	t := &State{sys: x, nodes: make([]*nodeSlot, x.n)}
	empty := sim.NewEncodedStorage()
	emptyH := storageHash(empty)
	empty = intern(&x.storePool, emptyH, empty)
	for i, spec := range x.a.Nodes {
		t.nodes[i] = &nodeSlot{node: spec.New(), store: empty, sh: emptyH}
	}
	if x.a.Ghost.Fold != nil {
		t.ghost = x.a.Ghost.Init
		t.ghostH = ghostHash(t.ghost)
	}
	for i := range t.nodes {
		var r *sim.TraceRecord
		if rec != nil {
			r = &sim.TraceRecord{}
		}
		node := t.nodes[i].node
		x.cov.add(x.call(t, sim.NodeID(i), node, sim.Input{Kind: sim.Start}, sim.Mix64(uint64(i)+0x57a7), r, nil))
		if r != nil {
			*rec = append(*rec, *r)
		}
		if t.panic != nil {
			break
		}
	}
	for i, ns := range t.nodes {
		if ns.node != nil && ns.h == 0 {
			ns = t.mut(sim.NodeID(i))
			ns.h = nodeHash(ns.node)
			ns.node = intern(&x.nodePool, perNode(ns.h, i), ns.node)
		}
		ns.hs = 0 // seal every slot
	}
	x.seal(t)
	return t
}

func (x *actorSys) initRecords(*State) []sim.TraceRecord {
	var recs []sim.TraceRecord
	x.initial(&recs)
	return recs
}

func (x *actorSys) stepRecord(s *State, a Action, _ *State) sim.TraceRecord {
	var r sim.TraceRecord
	x.apply(s, a, &r, nil)
	return r
}

// next enumerates the enabled actions of s in a fixed order: deliveries (links in
// (from, to) order, with drop and duplicate variants), injections, timers, crashes,
// restarts, cuts and restores, clock actions.
func (x *actorSys) next(s *State, emit func(Action, *State)) { x.nextFrom(s, emit, nil) }

// nextFrom is next, deriving the successors into fl's discarded states (nil: none).
func (x *actorSys) nextFrom(s *State, emit func(Action, *State), fl *freeList) {
	if s.panic != nil {
		return
	}
	a := x.a
	nw := a.Network
	try := func(ac Action) { emit(ac, x.apply(s, ac, nil, fl)) }
	// call tries a handler action of node n and, with Crashes.MidSend, the crashes
	// that cut its sends short.
	mid := a.Crashes.MidSend && s.faults.Crashes < a.Crashes.Budget
	call := func(ac Action, n int, t *State) {
		k, ok := t.sends, t.panic == nil
		emit(ac, t)
		if !mid || !x.crashable[n] || !ok {
			return
		}
		for j := 0; j < int(min(k, 0xffff)); j++ {
			mac := midSend(ac, j)
			emit(mac, x.apply(s, mac, nil, fl))
		}
	}
	for li, l := range s.links {
		cut := s.Cut(l.from, l.to)
		last := len(l.msgs)
		if !nw.Unordered {
			last = 1
		}
		for j := 0; j < last; j++ {
			if j > 0 && l.msgs[j].h == l.msgs[j-1].h && l.msgs[j].sent == l.msgs[j-1].sent {
				continue // an identical copy: same successors
			}
			if cut {
				try(act(aLoseCut, li, j))
				continue
			}
			if nw.Guarded {
				// A delivery that changes nothing and sends nothing is not a transition:
				// the message stays in flight for later (Stateright's rule).
				if t := x.apply(s, act(aDeliver, li, j), nil, fl); !t.inert {
					call(act(aDeliver, li, j), int(l.to), t)
				} else if fl != nil {
					fl.give(t) // never emitted
				}
			} else if j < 0xffff {
				call(act(aDeliver, li, j), int(l.to), x.apply(s, act(aDeliver, li, j), nil, fl))
			} else {
				try(act(aDeliver, li, j))
			}
			if nw.Lossy && (nw.MaxLosses == 0 || s.faults.Losses < nw.MaxLosses) {
				try(act(aDrop, li, j))
			}
			if nw.Duplicating && s.faults.Duplicates < nw.MaxDuplicates {
				try(act(aDup, li, j))
			}
		}
	}
	for n := 0; n < x.n; n++ {
		k := int(s.nodes[n].inj)
		if k >= len(x.injBy[n]) || (x.discrete && int32(x.injBy[n][k].At) > s.clock) {
			continue
		}
		if s.nodes[n].node != nil {
			call(act(aInject, n, 0), n, x.apply(s, act(aInject, n, 0), nil, fl))
		} else {
			try(act(aInjectLost, n, 0))
		}
	}
	anyDue := false
	for n := range s.nodes {
		ns := s.nodes[n]
		if ns.node == nil {
			continue
		}
		for i, tm := range ns.timers {
			if !x.discrete || tm.deadline <= ns.local {
				anyDue = anyDue || x.discrete
				call(act(aTimer, n, i), n, x.apply(s, act(aTimer, n, i), nil, fl))
			}
		}
	}
	if s.faults.Crashes < a.Crashes.Budget {
		for n := range s.nodes {
			if x.crashable[n] && s.nodes[n].node != nil {
				try(act(aCrash, n, 0))
			}
		}
	}
	if !a.Crashes.NoRestart {
		for n := range s.nodes {
			if s.nodes[n].node == nil {
				call(act(aRestart, n, 0), n, x.apply(s, act(aRestart, n, 0), nil, fl))
			}
		}
	}
	for pi, p := range x.pairs {
		if s.Cut(p[0], p[1]) {
			try(act(aRestore, pi, 0))
		} else if s.faults.Cuts < a.Cuts.Budget {
			try(act(aCut, pi, 0))
		}
	}
	if !x.discrete {
		return
	}
	// Global time may pass only when nothing is due: no timer (urgent) and, with
	// MaxDelay, no message that has been in flight for MaxDelay ticks.
	if !anyDue && !x.messageDue(s) && s.clock < int32(a.Time.MaxTicks) {
		try(act(aTick, 0, 0))
		for n := range s.nodes {
			if d := x.drift(n); d > 0 && s.clock+1-s.nodes[n].local <= d {
				try(act(aLag, n, 0))
			}
		}
	}
	// A node's clock leading takes no global time, so only the node's own due timers
	// hold it back (its local clock must not pass them); other nodes' due timers and
	// due messages do not.
	for n := range s.nodes {
		if d := x.drift(n); d > 0 && s.nodes[n].local+1-s.clock <= d && !x.timerDue(s, n) {
			try(act(aLead, n, 0))
		}
	}
}

// midSendNode is the node whose call a handler action of kind (with first parameter
// p1) makes.
func (x *actorSys) midSendNode(s *State, kind, p1 int) sim.NodeID {
	if kind == aDeliver {
		return s.links[p1].to
	}
	return sim.NodeID(p1)
}

// messageDue reports whether a message has been in flight for MaxDelay ticks (it must
// be delivered or lost before global time passes).
func (x *actorSys) messageDue(s *State) bool {
	if x.a.Time.WithinTick {
		for _, l := range s.links {
			if len(l.msgs) > 0 {
				return true
			}
		}
		return false
	}
	md := x.a.Time.MaxDelay
	if md <= 0 {
		return false
	}
	for _, l := range s.links {
		for _, e := range l.msgs {
			if s.clock-e.sent >= int32(md) {
				return true
			}
		}
	}
	return false
}

// timerDue reports whether node n, up, has a timer due on its local clock.
func (x *actorSys) timerDue(s *State, n int) bool {
	ns := s.nodes[n]
	if ns.node == nil {
		return false
	}
	for _, tm := range ns.timers {
		if tm.deadline <= ns.local {
			return true
		}
	}
	return false
}

func (x *actorSys) drift(n int) int32 {
	if x.a.Time.Drift == nil {
		return 0
	}
	return int32(x.a.Time.Drift[n])
}

// apply performs action ac from s and returns the successor, derived into a state from
// fl when it has one; rec, when set, receives the action's trace record.
func (x *actorSys) apply(s *State, ac Action, rec *sim.TraceRecord, fl *freeList) *State {
	t := x.derive(s, fl)
	kind, p1, p2 := unact(ac)
	// A mid-send crash runs the action's call with the same random bits as the
	// action itself, letting only its first leave sends out, then crashes the node.
	rnd := sim.Mix64(s.fp ^ sim.Mix64(uint64(ac)+0x2545f4914f6cdd1d))
	t.sends, t.sendLimit = 0, 0
	leave := -1
	if kind&aMidSend != 0 {
		kind, leave, p2 = kind&^aMidSend, p2>>16, p2&0xffff
		base := act(kind, p1, p2)
		rnd = sim.Mix64(s.fp ^ sim.Mix64(uint64(base)+0x2545f4914f6cdd1d))
		t.sendLimit = int32(leave) + 1
	}
	msgRec := func(ev string, l *link, e envelope, why string) {
		if rec != nil {
			*rec = sim.TraceRecord{Ev: ev, Node: x.names[l.to], From: x.names[l.from], Kind: e.msg.Kind(), Msg: e.msg, Why: why}
		}
	}
	switch kind {
	case aDeliver:
		l := s.links[p1]
		e := l.msgs[p2]
		t.dequeue(p1, p2)
		x.handle(t, l.to, sim.Input{Kind: sim.Receive, From: l.from, Msg: e.msg}, e.h, rnd, rec)
	case aLoseCut, aDrop:
		l := s.links[p1]
		e := l.msgs[p2]
		t.dequeue(p1, p2)
		why := "partition"
		if kind == aDrop {
			why = "loss"
			if x.a.Network.MaxLosses > 0 {
				t.faults.Losses++
			}
		}
		msgRec("lost", l, e, why)
	case aDup:
		l := s.links[p1]
		e := l.msgs[p2]
		t.enqueue(l.from, l.to, e, x.a.Network.Unordered)
		t.faults.Duplicates++
		msgRec("dup", l, e, "duplicate")
	case aInject:
		in := x.injBy[p1][s.nodes[p1].inj]
		t.mut(sim.NodeID(p1)).inj++
		x.handle(t, sim.NodeID(p1), sim.Input{Kind: sim.Receive, From: sim.Env, Msg: in.Msg}, 0, rnd, rec) // the slot's injection count names the message
	case aInjectLost:
		in := x.injBy[p1][s.nodes[p1].inj]
		t.mut(sim.NodeID(p1)).inj++
		if rec != nil {
			*rec = sim.TraceRecord{Ev: "lost", Node: x.names[p1], From: "env", Kind: in.Msg.Kind(), Msg: in.Msg, Why: "receiver down"}
		}
	case aTimer:
		ns := t.mut(sim.NodeID(p1))
		id, h := ns.timers[p2].id, ns.timers[p2].h
		ns.timers = slices.Delete(slices.Clone(ns.timers), p2, p2+1)
		x.handle(t, sim.NodeID(p1), sim.Input{Kind: sim.Timeout, Timer: id}, h, rnd, rec)
	case aCrash:
		ns := t.mut(sim.NodeID(p1))
		ns.node, ns.h, ns.timers = nil, 0, nil
		lost := t.dropTo(sim.NodeID(p1))
		t.faults.Crashes++
		if rec != nil {
			*rec = sim.TraceRecord{Ev: "crash", Node: x.names[p1]}
			if lost > 0 {
				rec.Why = fmt.Sprintf("%d message(s) in flight to it lost", lost)
			}
		}
	case aRestart:
		x.handle(t, sim.NodeID(p1), sim.Input{Kind: sim.Restart}, 0, rnd, rec)
	case aCut, aRestore:
		p := x.pairs[p1]
		on := kind == aCut
		t.setCut(p[0], p[1], on)
		arrow := "-/-"
		if !on {
			arrow = "---"
		}
		if !x.a.Cuts.OneWay {
			t.setCut(p[1], p[0], on)
		} else {
			arrow += ">"
		}
		if on {
			t.faults.Cuts++
		}
		if rec != nil {
			ev := "restore"
			if on {
				ev = "cut"
			}
			*rec = sim.TraceRecord{Ev: ev, Why: x.names[p[0]] + " " + arrow + " " + x.names[p[1]]}
		}
	case aTick, aLag:
		t.clock++
		for n := range t.nodes {
			if kind == aLag && n == p1 {
				continue
			}
			t.mut(sim.NodeID(n)).local++
		}
		if rec != nil {
			*rec = sim.TraceRecord{Ev: "tick"}
			if kind == aLag {
				*rec = sim.TraceRecord{Ev: "skew", Node: x.names[p1], Why: "clock lags one tick"}
			}
		}
	case aLead:
		t.mut(sim.NodeID(p1)).local++
		if rec != nil {
			*rec = sim.TraceRecord{Ev: "skew", Node: x.names[p1], Why: "clock leads one tick"}
		}
	default:
		panic(fmt.Sprintf("model: unknown action %#x", uint64(ac)))
	}
	if leave >= 0 {
		t.sendLimit = 0
		if t.panic == nil {
			n := x.midSendNode(s, kind, p1)
			total := t.sends
			ns := t.mut(n)
			ns.node, ns.h, ns.timers = nil, 0, nil
			t.dropTo(n)
			t.faults.Crashes++
			if rec != nil {
				rec.Why = fmt.Sprintf("crash-send: crashed after %d of its %d sends", leave, total)
			}
		}
	}
	if rec != nil {
		rec.T = x.ticks(t.clock)
	}
	x.seal(t)
	return t
}

// call hands input in to node n (node is the private copy that will handle it) and
// applies its effects to t in the kernel's order: stable writes, timers, sends,
// observations. A panic in the handler, or an invalid effect, leaves t as it was
// before the call and marks it with the panic. m, when set, receives the sends and
// observations (for the memo).
//
// It returns the rules the call covered (a copy; nil unless coverage is on).
func (x *actorSys) call(t *State, n sim.NodeID, node sim.Node, in sim.Input, rnd uint64, rec *sim.TraceRecord, m *memoEntry) []int32 {
	ns := t.nodes[n]
	in.Self = n
	in.Now = x.ticks(ns.local)
	in.Rand = rnd
	in.Stable = ns.store.View()
	out := outboxes.Get().(*sim.Outbox)
	out.Reset()
	out.TrackCoverage(x.cov != nil)
	defer outboxes.Put(out)
	if rec != nil {
		local := in.Now
		*rec = sim.TraceRecord{Ev: in.Kind.String(), Node: x.names[n], Local: &local}
		switch in.Kind {
		case sim.Receive:
			rec.From = "env"
			if in.From != sim.Env {
				rec.From = x.names[in.From]
			} else {
				rec.Ev = "inject"
			}
			rec.Kind, rec.Msg = in.Msg.Kind(), in.Msg
		case sim.Timeout:
			rec.Timer = string(in.Timer)
		}
	}
	if pe := safeHandle(node, in, out); pe != nil {
		x.markPanic(t, pe, rec)
		return nil
	}
	if x.a.Network.Guarded && in.Kind == sim.Receive && len(out.Sends()) == 0 && len(out.Timers()) == 0 &&
		len(out.Writes()) == 0 && out.NumObservations() == 0 {
		t.inert = nodeHash(node) == ns.h
	}
	// What effects may change, to undo it if an effect turns out invalid: node n's
	// slot (mut may modify it in place), the link list (only sends change it), the
	// ghost.
	slot, ghost, ghostH, nmsgs := *t.nodes[n], t.ghost, t.ghostH, t.nmsgs
	links := t.links // not modified in place unless owned (ownLinks)
	if len(out.Sends()) > 0 && t.linksOwned {
		links = slices.Clone(t.links)
	}
	if pe := x.effects(t, n, node, in, out, rec, m); pe != nil {
		undo := slot // slot itself stays on the stack
		t.nodes[n], t.links, t.ghost, t.ghostH, t.nmsgs = &undo, links, ghost, ghostH, nmsgs
		t.linksOwned = false
		x.markPanic(t, pe, rec)
		return nil
	}
	if cv := out.Covered(); len(cv) > 0 {
		return slices.Clone(cv)
	}
	return nil
}

func (x *actorSys) markPanic(t *State, pe *sim.PanicError, rec *sim.TraceRecord) {
	t.panic = pe
	if rec != nil {
		*rec = sim.TraceRecord{Ev: "panic", Node: x.names[pe.Node], Why: fmt.Sprint(pe.Value)}
	}
}

func safeHandle(node sim.Node, in sim.Input, out *sim.Outbox) (pe *sim.PanicError) {
	defer func() {
		if r := recover(); r != nil {
			pe = &sim.PanicError{Node: in.Self, Input: in.Kind, Value: r, Stack: string(debug.Stack())}
		}
	}()
	node.Handle(in, out)
	return nil
}

func (x *actorSys) effects(t *State, n sim.NodeID, node sim.Node, in sim.Input, out *sim.Outbox, rec *sim.TraceRecord, m *memoEntry) (pe *sim.PanicError) {
	defer func() {
		if r := recover(); r != nil {
			pe = &sim.PanicError{Node: n, Input: in.Kind, Value: r, Stack: string(debug.Stack())}
		}
	}()
	ns := t.mut(n)
	if ws := out.Writes(); len(ws) > 0 {
		st := ns.store.Clone()
		st.Apply(ws)
		ns.sh = storageHash(st)
		ns.store = intern(&x.storePool, ns.sh, st)
		if rec != nil {
			for _, w := range ws {
				if w.Delete {
					rec.Out = append(rec.Out, sim.TraceEffect{Op: "delete", Key: w.Key})
				} else {
					rec.Out = append(rec.Out, sim.TraceEffect{Op: "store", Key: w.Key, Value: w.Value})
				}
			}
		}
	}
	if ops := out.Timers(); len(ops) > 0 {
		ts := slices.Clone(ns.timers)
		for _, op := range ops {
			i, found := slices.BinarySearchFunc(ts, op.ID, func(a timerSlot, id sim.TimerID) int {
				switch {
				case a.id < id:
					return -1
				case a.id > id:
					return 1
				}
				return 0
			})
			if op.Cancel {
				if found {
					ts = slices.Delete(ts, i, i+1)
				}
				if rec != nil {
					rec.Out = append(rec.Out, sim.TraceEffect{Op: "cancel", Timer: string(op.ID)})
				}
				continue
			}
			tm := timerSlot{id: op.ID, h: hashString(string(op.ID))}
			if x.discrete {
				tm.deadline = ns.local + int32((op.After+x.tick-1)/x.tick)
			}
			if found {
				ts[i] = tm
			} else {
				ts = slices.Insert(ts, i, tm)
			}
			if rec != nil {
				rec.Out = append(rec.Out, sim.TraceEffect{Op: "set", Timer: string(op.ID), After: op.After})
			}
		}
		ns.timers = ts
	}
	t.sends = int32(len(out.Sends()))
	for i, e := range out.Sends() {
		if e.To < 0 || int(e.To) >= x.n {
			panic(fmt.Sprintf("send of %s to unknown node %d", e.Msg.Kind(), e.To))
		}
		h := msgHash(e.Msg)
		lost := "sender crashed"
		if t.sendLimit == 0 || int32(i) < t.sendLimit-1 {
			lost = x.send(t, n, e.To, e.Msg, h)
		}
		if m != nil {
			m.sends = append(m.sends, memoSend{to: e.To, msg: e.Msg, h: h})
		}
		if rec != nil {
			rec.Out = append(rec.Out, sim.TraceEffect{Op: "send", To: x.names[e.To], Kind: e.Msg.Kind(), Msg: e.Msg, Lost: lost})
		}
	}
	if k := out.NumObservations(); k > 0 {
		if x.a.Ghost.Fold != nil {
			t.ghost, t.ghostH = x.fold(t, n, in.Now, k, out.Observation)
		}
		for i := 0; i < k; i++ {
			kind, v := out.Observation(i)
			if rec != nil {
				rec.Out = append(rec.Out, sim.TraceEffect{Op: "obs", Kind: kind, Value: v})
			}
			if m != nil {
				m.obs = append(m.obs, memoObs{kind: kind, v: v})
			}
		}
	}
	ns.h = nodeHash(node)
	ns.node = intern(&x.nodePool, perNode(ns.h, int(n)), node)
	return nil
}

// fold folds k observations of node n (at local time local) into t's ghost and
// returns the new ghost and its hash.
func (x *actorSys) fold(t *State, n sim.NodeID, local sim.Time, k int, obs func(int) (string, any)) (any, uint64) {
	g := t.ghost
	for i := 0; i < k; i++ {
		kind, v := obs(i)
		o := sim.Observation{Index: -1, Time: x.ticks(t.clock), Local: local, Node: n, Kind: kind, Value: v}
		g = x.a.Ghost.Fold(copyGhost(g), o)
	}
	if sameGhost(g, t.ghost) {
		return g, t.ghostH
	}
	return g, ghostHash(g)
}

// encBufs holds scratch buffers for the canonical encodings that are hashed and
// dropped (nodes, storages, ghosts, messages), one hash at a time.
var encBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// hashEncoding hashes what enc appends to an empty scratch buffer.
func hashEncoding[T any](domain uint64, enc func([]byte, T) []byte, v T) uint64 {
	bp := encBufs.Get().(*[]byte)
	b := enc((*bp)[:0], v)
	h := hashBytes(domain, b)
	*bp = b
	encBufs.Put(bp)
	return h
}

func nodeHash(n sim.Node) uint64 { return hashEncoding(0x6e6f6465, sim.EncodeNode, n) }

func storageHash(s *sim.Storage) uint64 {
	return hashEncoding(0x73746f72, func(b []byte, s *sim.Storage) []byte { return s.AppendState(b) }, s)
}

func ghostHash(g any) uint64 { return hashEncoding(0x67686f73, sim.AppendCanonical, g) }

func msgHash(m sim.Message) uint64 {
	return hashEncoding(0x6d736721, func(b []byte, m sim.Message) []byte {
		b = append(append(b, sim.TypeName(reflect.TypeOf(m))...), 0)
		return sim.AppendCanonical(b, m)
	}, m)
}

// sameGhost reports whether ghost values a and b are equal, as far as it can tell
// cheaply: both nil, or of one type with no reference and no float inside
// (sim.FlatExact: == then agrees with the encoding) and ==.
// Observations often leave the ghost as it was, and then its hash need not be
// computed again (equal values encode alike).
func sameGhost(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	t := reflect.TypeOf(a)
	return t == reflect.TypeOf(b) && sim.FlatExact(t) && a == b
}

// copyGhost deep-copies a ghost value for Fold (which may modify what it is given),
// unless its type holds no reference (sim.Flat: an interface holding one cannot be
// changed through it).
func copyGhost(g any) any {
	if g == nil || sim.Flat(reflect.TypeOf(g)) {
		return g
	}
	return sim.DeepCopy(g)
}
