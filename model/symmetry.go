package model

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/simrun-dev/simrun/sim"
)

// Symmetry declares interchangeable nodes of an actor system (symmetry reduction, as
// TLC's SYMMETRY and Murφ's scalarsets): the checker explores one state per orbit of
// the permutations of Nodes.
//
// Renaming. A permutation renames node IDs everywhere in a state: node i's slot moves
// to p(i); node states, messages in flight, stable values and the ghost value are
// renamed by sim.RenameNodeIDs (every sim.NodeID value in them), or by their own
// RenameNodes method (NodeRenamer) when they have one — needed where the renamed value
// must be normalized, a sorted slice of IDs re-sorted, say. Link queues, cut links and
// the per-node workload, timers and clocks move with their nodes. Timer IDs and
// stable-storage keys are not renamed: they must not name nodes.
//
// Canonical. The fingerprint of a state is the least fingerprint among all its
// renamings (|Nodes|! of them, at most 7! = 5 040), so every member of an orbit has the
// same fingerprint whatever order the search finds them in and however many workers
// run; the checker keeps the first member it finds (paths are real paths, and
// counterexamples replay as usual) and counts orbits.
//
// Soundness. The reduction is exact when the declared nodes are truly interchangeable:
// the same node type and constructor, the same workload, crash and cut rights and clock
// drift up to renaming, and code that uses their IDs only as names. Compile checks what
// it can (node types; the initial state, the workload, crashable nodes, cut pairs and
// drift are invariant under renaming) and refuses otherwise, in one line; it refuses
// eventually-properties (a cycle up to symmetry is not a cycle of the system). It cannot
// check the properties: each must treat the declared nodes alike. Nor can it see a
// node whose behaviour depends on Input.Rand: the checker derives those bits from the
// state's fingerprint and the action, which renaming does not carry along, so such a
// node is not interchangeable; nor behaviour the canonical encoding skips (a function
// field that differs between the nodes). VerifySymmetry checks the rest on a small
// instance, by brute force. With DFS and a depth bound, the member of an orbit met
// first may lie deeper than another, so a bounded DFS may stop short where the
// unreduced one would not (BFS keeps the shallowest member).
type Symmetry struct {
	// Nodes are the interchangeable nodes (2..7 of them; none: no reduction).
	Nodes []sim.NodeID
}

// NodeRenamer is implemented by a node state, message, stable value or ghost value that
// renames the node IDs it holds itself (symmetry reduction); p is a permutation of the
// node IDs. It returns a new value of the same type and must not modify its receiver.
// A typical implementation calls sim.RenameNodeIDs and re-sorts what is kept sorted.
type NodeRenamer interface {
	RenameNodes(p func(sim.NodeID) sim.NodeID) any
}

// maxSymNodes bounds the declared interchangeable nodes (7! renamings a state).
const maxSymNodes = 7

// symSys is a compiled Symmetry: every permutation of the declared nodes (as a map
// old → new over all node IDs; the identity first) and caches of renamed hashes.
type symSys struct {
	set   []sim.NodeID // the declared nodes, sorted
	isSym []bool       // by node ID
	perms [][]sim.NodeID
	// Caches, keyed by (hash, permutation index): the hash of the renamed node slot
	// (keyed by the slot's pool key: hash and node index), message and ghost value;
	// keyed by hash: a storage's key set, a message's type.
	slots, msgs, ghosts, keys, kinds hcache
	scratch                          sync.Pool // *symScratch
}

// hcache is a concurrent map of 64-bit hashes to 64-bit hashes, sharded to keep the
// workers off each other's locks (sync.Map's interface keys cost a quarter of the
// reduction's time).
type hcache struct {
	shards [64]struct {
		mu sync.RWMutex
		m  map[uint64]uint64
	}
}

func (c *hcache) get(key uint64) (uint64, bool) {
	sh := &c.shards[key>>58]
	sh.mu.RLock()
	v, ok := sh.m[key]
	sh.mu.RUnlock()
	return v, ok
}

func (c *hcache) put(key, v uint64) {
	sh := &c.shards[key>>58]
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = map[uint64]uint64{}
	}
	sh.m[key] = v
	sh.mu.Unlock()
}

// symScratch holds the buffers of one canonicalization (reused through symSys.scratch).
type symScratch struct {
	order  []ranked
	blocks [][2]int
	pos    []int
	perm   []sim.NodeID
	slots  []uint64
	links  []rlink
	msgs   []envelope
	cut    []uint64
}

// ranked is a declared node with its signature.
type ranked struct {
	sig uint64
	id  sim.NodeID
}

// rlink is a renamed link queue: its ends and its messages, msgs[lo:hi] of the scratch.
type rlink struct {
	from, to sim.NodeID
	lo, hi   int
}

// renameValue renames v's node IDs by p.
func renameValue(v any, p []sim.NodeID) any {
	f := func(id sim.NodeID) sim.NodeID {
		if id >= 0 && int(id) < len(p) {
			return p[id]
		}
		return id
	}
	if r, ok := v.(NodeRenamer); ok {
		return r.RenameNodes(f)
	}
	return sim.RenameNodeIDs(v, f)
}

// identity returns the identity map over n node IDs, in buf's storage.
func identity(buf []sim.NodeID, n int) []sim.NodeID {
	buf = buf[:0]
	for i := 0; i < n; i++ {
		buf = append(buf, sim.NodeID(i))
	}
	return buf
}

func permKey(h uint64, k int) uint64 { return sim.Mix64(h ^ sim.Mix64(uint64(k)+0x3c6ef372fe94f82b)) }

// newSymSys validates the declaration against the system and compiles it.
func (x *actorSys) newSymSys() (*symSys, error) {
	sy := x.a.Symmetry
	set := sy.Nodes
	if len(set) < 2 || len(set) > maxSymNodes {
		return nil, fmt.Errorf("symmetry: %d interchangeable nodes (want 2..%d)", len(set), maxSymNodes)
	}
	in := map[sim.NodeID]bool{}
	for _, id := range set {
		if id < 0 || int(id) >= x.n {
			return nil, fmt.Errorf("symmetry names unknown node %d (there are %d)", id, x.n)
		}
		if in[id] {
			return nil, fmt.Errorf("symmetry names node %s twice", x.names[id])
		}
		in[id] = true
	}
	for _, p := range x.a.Properties {
		if p.Kind == EventuallyKind {
			return nil, fmt.Errorf("symmetry reduction preserves invariants and sometimes-witnesses only; it is refused with the eventually-property %q", p.Name)
		}
	}
	sorted := slices.Clone(set)
	slices.Sort(sorted)
	s := &symSys{set: sorted, isSym: make([]bool, x.n)}
	for _, id := range sorted {
		s.isSym[id] = true
	}
	// Every permutation of set, as a full map over the node IDs; identity first (in
	// lexicographic order of the images of the sorted set: rank computes the index).
	idx := make([]int, len(sorted))
	for i := range idx {
		idx[i] = i
	}
	for {
		p := identity(nil, x.n)
		for i, j := range idx {
			p[sorted[i]] = sorted[j]
		}
		s.perms = append(s.perms, p)
		if !nextPerm(idx) {
			break
		}
	}
	// What the checker can check: each transposition (set[0] set[k]) generates the
	// group together, so invariance under them is invariance under every renaming.
	init := x.initial(nil)
	if init.panic != nil {
		return s, nil // the panic is the verdict; nothing to reduce
	}
	typ := func(id sim.NodeID) reflect.Type { return reflect.TypeOf(init.nodes[id].node) }
	cutPair := map[[2]sim.NodeID]bool{}
	for _, q := range x.pairs {
		cutPair[q] = true
	}
	sc := &symScratch{}
	for _, b := range sorted[1:] {
		a := sorted[0]
		p := identity(nil, x.n)
		p[a], p[b] = b, a
		pair := fmt.Sprintf("symmetry: nodes %s and %s are not interchangeable", x.names[a], x.names[b])
		if typ(a) != typ(b) {
			return nil, fmt.Errorf("%s: node types %v and %v differ", pair, typ(a), typ(b))
		}
		if x.crashable[a] != x.crashable[b] {
			return nil, fmt.Errorf("%s: one may crash, the other not", pair)
		}
		if d := x.a.Time.Drift; d != nil && d[a] != d[b] {
			return nil, fmt.Errorf("%s: their drift bounds differ", pair)
		}
		for i := 0; i < x.n; i++ {
			mine, theirs := x.injBy[i], x.injBy[p[i]]
			if len(mine) != len(theirs) {
				return nil, fmt.Errorf("%s: the workload gives %s %d inputs and %s %d", pair, x.names[i], len(mine), x.names[p[i]], len(theirs))
			}
			for k := range mine {
				if mine[k].At != theirs[k].At || msgHash(renameValue(mine[k].Msg, p).(sim.Message)) != msgHash(theirs[k].Msg) {
					return nil, fmt.Errorf("%s: input %d of %s renamed is not input %d of %s", pair, k, x.names[i], k, x.names[p[i]])
				}
			}
		}
		if x.a.Cuts.Pairs != nil {
			for _, q := range x.pairs {
				r := [2]sim.NodeID{p[q[0]], p[q[1]]}
				if !cutPair[r] && !(!x.a.Cuts.OneWay && cutPair[[2]sim.NodeID{r[1], r[0]}]) {
					return nil, fmt.Errorf("%s: the cut pair %s-%s renamed is not a cut pair", pair, x.names[q[0]], x.names[q[1]])
				}
			}
		}
		if k := s.rank(p); x.renamedFP(init, s.perms[k], k, s, sc) != init.fingerprint() {
			return nil, fmt.Errorf("%s: the initial state renamed differs (their constructors or start handlers treat them differently, or a field holds a NodeID that names no node — a zero meaning \"none\", say — which needs a RenameNodes method)", pair)
		}
	}
	return s, nil
}

// nextPerm advances idx to the next permutation in lexicographic order; false after
// the last.
func nextPerm(idx []int) bool {
	i := len(idx) - 2
	for i >= 0 && idx[i] >= idx[i+1] {
		i--
	}
	if i < 0 {
		return false
	}
	j := len(idx) - 1
	for idx[j] <= idx[i] {
		j--
	}
	idx[i], idx[j] = idx[j], idx[i]
	slices.Reverse(idx[i+1:])
	return true
}

// canonical returns the least fingerprint among the renamings of t that put the
// declared nodes in the order of their signatures (t sealed, t.fp its plain
// fingerprint).
//
// Why this is canonical: a signature is invariant under renaming (node i's signature
// in t is node p(i)'s in p(t)), so the renamings of t that sort the signatures and
// those of p(t) that sort them give the same set of states, and so the same least
// fingerprint. Only nodes with equal signatures are permuted among themselves: a few
// renamings instead of |Nodes|! when the nodes are in different situations.
func (s *symSys) canonical(x *actorSys, t *State) uint64 {
	sc, _ := s.scratch.Get().(*symScratch)
	if sc == nil {
		sc = &symScratch{}
	}
	defer s.scratch.Put(sc)
	m := len(s.set)
	order := sc.order[:0]
	for _, id := range s.set {
		order = append(order, ranked{s.signature(x, t, id), id})
	}
	sc.order = order
	slices.SortStableFunc(order, func(a, b ranked) int { return cmp.Compare(a.sig, b.sig) })
	// Blocks of equal signatures; the candidates send the nodes of block [lo, hi)
	// onto s.set[lo:hi] in every order.
	blocks := sc.blocks[:0]
	for lo := 0; lo < m; {
		hi := lo + 1
		for hi < m && order[hi].sig == order[lo].sig {
			hi++
		}
		blocks = append(blocks, [2]int{lo, hi})
		lo = hi
	}
	sc.blocks = blocks
	pos := sc.pos[:0] // pos[j]: the node (index into order) sent onto s.set[j]
	for j := 0; j < m; j++ {
		pos = append(pos, j)
	}
	sc.pos = pos
	p := identity(sc.perm, x.n)
	sc.perm = p
	best := uint64(0)
	first := true
	for {
		for j, o := range pos {
			p[order[o].id] = s.set[j]
		}
		k := s.rank(p)
		f := t.fp
		if k > 0 {
			f = x.renamedFP(t, s.perms[k], k, s, sc)
		}
		if first || f < best {
			best, first = f, false
		}
		// Next combination: the first block (from the end) with a next order
		// advances, the blocks after it restart.
		b := len(blocks) - 1
		for ; b >= 0; b-- {
			lo, hi := blocks[b][0], blocks[b][1]
			if nextPerm(pos[lo:hi]) {
				break
			}
			slices.Sort(pos[lo:hi])
		}
		if b < 0 {
			return best
		}
	}
}

// rank returns the index of permutation p in s.perms.
func (s *symSys) rank(p []sim.NodeID) int {
	m := len(s.set)
	var img [maxSymNodes]int // img[i]: position in s.set of p(s.set[i])
	for i, id := range s.set {
		img[i], _ = slices.BinarySearch(s.set, p[id])
	}
	r := 0
	for i := 0; i < m; i++ {
		smaller := 0
		for j := i + 1; j < m; j++ {
			if img[j] < img[i] {
				smaller++
			}
		}
		r = r*(m-i) + smaller
	}
	return r
}

// signature summarizes node id's situation in t by what renaming leaves alone: up or
// down, clock, workload consumed, timers, stable keys (timer IDs and keys name no
// node), and the types of the messages and the cut links to and from it, with the
// other end named when it is not a declared node.
func (s *symSys) signature(x *actorSys, t *State, id sim.NodeID) uint64 {
	ns := t.nodes[id]
	h := newHasher(0x5167)
	h.word(ns.upLocal())
	h.word(uint64(ns.inj))
	ns.hashTimers(&h)
	keys, ok := s.keys.get(ns.sh)
	if !ok {
		k := newHasher(0x6b6579)
		for _, key := range ns.store.Keys() {
			k.word(hashString(key))
		}
		keys = k.sum()
		s.keys.put(ns.sh, keys)
	}
	h.word(keys)
	other := func(n sim.NodeID) uint64 {
		switch {
		case n == id:
			return 1 << 40
		case s.isSym[n]:
			return 2 << 40
		}
		return uint64(uint32(n))
	}
	var msgs uint64 // a multiset: a sum of the members' hashes
	for _, l := range t.links {
		if l.from != id && l.to != id {
			continue
		}
		for _, e := range l.msgs {
			// The message's type, not its Kind (a Kind may name a node).
			kind, ok := s.kinds.get(e.h)
			if !ok {
				kind = hashString(sim.TypeName(reflect.TypeOf(e.msg)))
				s.kinds.put(e.h, kind)
			}
			if l.to == id {
				msgs += sim.Mix64(kind ^ sim.Mix64(other(l.from)+0x1000))
			}
			if l.from == id {
				msgs += sim.Mix64(kind ^ sim.Mix64(other(l.to)+0x2000))
			}
		}
	}
	h.word(msgs)
	if t.cut != nil {
		var cuts uint64
		for j := 0; j < x.n; j++ {
			if t.Cut(id, sim.NodeID(j)) {
				cuts += sim.Mix64(other(sim.NodeID(j)) + 0x3000)
			}
			if t.Cut(sim.NodeID(j), id) {
				cuts += sim.Mix64(other(sim.NodeID(j)) + 0x4000)
			}
		}
		h.word(cuts)
	}
	return h.sum()
}

// renamedFP returns the plain fingerprint of t renamed by p = s.perms[k], hashed as
// State.fingerprint hashes, from the scratch buffers sc.
func (x *actorSys) renamedFP(t *State, p []sim.NodeID, k int, s *symSys, sc *symScratch) uint64 {
	n := len(t.nodes)
	sc.slots = slices.Grow(sc.slots[:0], n)[:n]
	for i, ns := range t.nodes {
		key := permKey(perNode(ns.hs, i), k)
		h, ok := s.slots.get(key)
		if !ok {
			h = x.renamedSlot(ns, p)
			s.slots.put(key, h)
		}
		sc.slots[p[i]] = h
	}
	sc.links, sc.msgs = sc.links[:0], sc.msgs[:0]
	for _, l := range t.links {
		lo := len(sc.msgs)
		for _, e := range l.msgs {
			key := permKey(e.h, k)
			h, ok := s.msgs.get(key)
			if !ok {
				h = msgHash(renameValue(e.msg, p).(sim.Message))
				s.msgs.put(key, h)
			}
			sc.msgs = append(sc.msgs, envelope{h: h, sent: e.sent})
		}
		if x.a.Network.Unordered {
			slices.SortFunc(sc.msgs[lo:], cmpEnvelope)
		}
		sc.links = append(sc.links, rlink{from: p[l.from], to: p[l.to], lo: lo, hi: len(sc.msgs)})
	}
	slices.SortFunc(sc.links, func(a, b rlink) int {
		if a.from != b.from {
			return int(a.from - b.from)
		}
		return int(a.to - b.to)
	})
	var cut []uint64
	if t.cut != nil {
		sc.cut = slices.Grow(sc.cut[:0], len(t.cut))[:len(t.cut)]
		clear(sc.cut)
		for i := 0; i < n*n; i++ {
			if t.cut[i/64]&(1<<(i%64)) != 0 {
				j := int(p[i/n])*n + int(p[i%n])
				sc.cut[j/64] |= 1 << (j % 64)
			}
		}
		cut = sc.cut
	}
	ghostH := t.ghostH
	if x.a.Ghost.Fold != nil {
		key := permKey(t.ghostH, k)
		g, ok := s.ghosts.get(key)
		if !ok {
			g = ghostHash(renameValue(t.ghost, p))
			s.ghosts.put(key, g)
		}
		ghostH = g
	}
	h := newHasher(0xac70)
	for _, v := range sc.slots {
		h.word(v)
	}
	h.word(uint64(len(sc.links)))
	for _, l := range sc.links {
		hashLink(&h, l.from, l.to, sc.msgs[l.lo:l.hi])
	}
	return t.fpTail(&h, cut, ghostH)
}

// renamedSlot returns the hash of node slot ns renamed by p.
func (x *actorSys) renamedSlot(ns *nodeSlot, p []sim.NodeID) uint64 {
	r := *ns
	if ns.node != nil {
		r.h = nodeHash(renameValue(ns.node, p).(sim.Node))
	}
	if ns.store.Len() > 0 {
		st := sim.NewEncodedStorage()
		var ws []sim.Write
		for _, key := range ns.store.Keys() {
			v, _ := ns.store.Peek(key)
			ws = append(ws, sim.Write{Key: key, Value: renameValue(v, p)})
		}
		st.Apply(ws)
		r.sh = storageHash(st)
	}
	return r.hash()
}

// errNoSymmetry is returned by VerifySymmetry for a system without a declaration.
var errNoSymmetry = errors.New("model: VerifySymmetry: the system declares no symmetry")

// SymmetryReport is what VerifySymmetry found.
type SymmetryReport struct {
	States  int64 // distinct states of the unreduced system
	Orbits  int64 // orbits among them (by brute force: least renamed fingerprint)
	Reduced int64 // distinct states the reduced search explored
}

// VerifySymmetry checks a symmetry declaration by brute force on a small instance: it
// explores sys without the reduction (at most maxStates states), checks that every
// renaming of every reachable state is reachable (the declared nodes really are
// interchangeable, and every renamed value is normalized as the protocol would have
// it), counts the orbits, and checks that the reduced search explores exactly one
// state per orbit with the same verdict on every property. Use it in a test of your
// own system (the 2pc model's tests do).
func VerifySymmetry(sys *Actors, maxStates int64) (SymmetryReport, error) {
	var rep SymmetryReport
	if sys == nil || len(sys.Symmetry.Nodes) == 0 {
		return rep, errNoSymmetry
	}
	plain := *sys
	plain.Symmetry = Symmetry{}
	r, err := plain.compile()
	if err != nil {
		return rep, err
	}
	x := r.(*checker[*State]).sp.Init()[0].sys
	red, err := sys.compile()
	if err != nil {
		return rep, err
	}
	sym := red.(*checker[*State]).sp.Init()[0].sys.sym
	// Unreduced reachable states (plain fingerprints), by a plain search.
	seen := map[uint64]*State{}
	var queue []*State
	init := x.initial(nil)
	seen[init.fp] = init
	queue = append(queue, init)
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s.panic != nil || (x.a.Boundary != nil && !x.a.Boundary(s)) {
			continue
		}
		x.next(s, func(_ Action, t *State) {
			if _, ok := seen[t.fp]; !ok {
				seen[t.fp] = t
				queue = append(queue, t)
			}
		})
		if int64(len(seen)) > maxStates {
			return rep, fmt.Errorf("model: VerifySymmetry: more than %d states; try a smaller instance", maxStates)
		}
	}
	orbits := map[uint64]bool{}
	sc := &symScratch{}
	for fp, s := range seen {
		least := fp
		canon := sym.canonical(x, s)
		for k, p := range sym.perms[1:] {
			q := x.renamedFP(s, p, k+1, sym, sc)
			r, ok := seen[q]
			if ok && sym.canonical(x, r) != canon {
				return rep, fmt.Errorf("model: VerifySymmetry: a state and its renaming by %s have different representatives (a NodeRenamer that is not a permutation's action?)", x.permString(p))
			}
			if !ok {
				return rep, fmt.Errorf("model: VerifySymmetry: a reachable state renamed by %s is not reachable: the nodes are not interchangeable, or a renamed value needs normalizing (a RenameNodes method); the state:\n%s", x.permString(p), x.stateText(s))
			}
			least = min(least, q)
		}
		orbits[least] = true
	}
	rep.States, rep.Orbits = int64(len(seen)), int64(len(orbits))
	for _, o := range []Options{{Workers: 1}, {Workers: 2}, {Strategy: DFS}} {
		res, err := Check(sys, o)
		if err != nil {
			return rep, err
		}
		full, err := Check(&plain, o)
		if err != nil {
			return rep, err
		}
		rep.Reduced = res.Distinct
		if res.Outcome != full.Outcome {
			return rep, fmt.Errorf("model: VerifySymmetry: the reduced search (%s) ends %v, the unreduced one %v", o.Strategy, res.Outcome, full.Outcome)
		}
		// The counts compare when the unreduced search saw every state (it stops at
		// an invariant's violation).
		if full.Distinct == rep.States && res.Distinct != rep.Orbits {
			return rep, fmt.Errorf("model: VerifySymmetry: the reduced search (%s) explored %d states; there are %d orbits", o.Strategy, res.Distinct, rep.Orbits)
		}
		// Per-property verdicts compare when both searches saw everything, and under
		// BFS on one worker (which meets each orbit first at its shallowest member): a
		// search that stops at its first violation otherwise meets them in an order
		// the reduction may change.
		if (res.Outcome == Complete && full.Outcome == Complete) || (o.Strategy == BFS && o.Workers <= 1) {
			for i, pr := range res.Properties {
				if pr.Status != full.Properties[i].Status {
					return rep, fmt.Errorf("model: VerifySymmetry: %q is %v with the reduction and %v without (%s)", pr.Name, pr.Status, full.Properties[i].Status, o.Strategy)
				}
			}
		}
	}
	return rep, nil
}

// permString renders a permutation as its non-trivial moves: "p1→p2 p2→p1".
func (x *actorSys) permString(p []sim.NodeID) string {
	var b []byte
	for i, j := range p {
		if int(j) != i {
			if len(b) > 0 {
				b = append(b, ' ')
			}
			b = fmt.Appendf(b, "%s→%s", x.names[i], x.names[j])
		}
	}
	return string(b)
}

// stateText renders a state's nodes and links for an error message.
func (x *actorSys) stateText(s *State) string {
	var b []byte
	for i, ns := range s.nodes {
		b = fmt.Appendf(b, "  %s: %+v store=%v\n", x.names[i], ns.node, ns.store.Keys())
	}
	for _, l := range s.links {
		for _, e := range l.msgs {
			b = fmt.Appendf(b, "  %s → %s: %#v\n", x.names[l.from], x.names[l.to], e.msg)
		}
	}
	if s.ghost != nil {
		b = fmt.Appendf(b, "  ghost: %+v\n", s.ghost)
	}
	return string(b)
}
