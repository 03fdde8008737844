package exactlyonce

import (
	"encoding/binary"
	"slices"
	"sync/atomic"

	"github.com/simrun-dev/simrun/sim"
)

// Clone implements sim.Cloner. Copy-on-write: the model checker clones a node for
// every step it explores, and a step writes one or two of the node's fifteen maps, so
// a clone shares all of n's maps (and the records they hold) and owns none of them: a
// handler copies a shared map on its first write (own, put, del). n, which may own
// maps (Node.owned: the maps its handler calls copied or created), must treat them
// as shared from now on too, but Clone must not write n (the checker clones stored
// nodes from several goroutines at once): it sets n's share mark instead, an atomic
// flag in a separate object that n's next write reads (exclusive). So neither n nor
// the clone ever sees the other's later changes. In the checker a stored node is
// never written again, and its clones copy only the maps they write. The records
// held by pointer are never modified in place once stored, except transactions and
// selection states, which are copied with their map (txsW, selW).
func (n *Node) Clone() sim.Node {
	c := *n
	c.owned, c.mark = 0, nil
	if n.owned != 0 && !n.mark.shared.Load() {
		n.mark.shared.Store(true)
	}
	return &c
}

// shareMark records that a node's maps have been shared by Clone (see there). Every
// node that owns a map has its own mark, created by its own first write.
type shareMark struct{ shared atomic.Bool }

// exclusive reports whether n references the map of bit exclusively (it may write it
// in place). A node cloned since its last write owns no map any more.
func (n *Node) exclusive(bit uint16) bool {
	if n.owned&bit == 0 {
		return false
	}
	if n.mark.shared.Load() {
		n.owned, n.mark = 0, nil
		return false
	}
	return true
}

// Maps a node references exclusively (Node.owned; see Clone).
const (
	ownQueue uint16 = 1 << iota
	ownOrchSet
	ownOrch
	ownPrepared
	ownCommitLog
	ownPools
	ownResPrep
	ownAttempts
	ownSelections
	ownTxs
	ownSel
	ownLocks
	ownWaiters
	ownSuspects
	ownInq
)

// copyMap copies m, values through cp when set (nil stays nil).
func copyMap[K comparable, V any](m map[K]V, cp func(V) V) map[K]V {
	if m == nil {
		return nil
	}
	c := make(map[K]V, len(m)+1)
	for k, v := range m {
		if cp != nil {
			v = cp(v)
		}
		c[k] = v
	}
	return c
}

// own returns *m ready to be written: copied first (values through cp, when set) if
// it may be shared with a clone, allocated if nil.
func own[K comparable, V any](n *Node, bit uint16, m *map[K]V, cp func(V) V) map[K]V {
	switch {
	case *m == nil:
		*m = make(map[K]V, 1)
	case !n.exclusive(bit):
		*m = copyMap(*m, cp)
	default:
		return *m
	}
	if n.mark == nil || n.mark.shared.Load() {
		n.owned, n.mark = 0, new(shareMark) // what n owned before is shared
	}
	n.owned |= bit
	return *m
}

// put sets (*m)[k] = v, copying the map first if this call has not (see own). For
// maps whose values are never modified in place; transactions and selections go
// through txsW and selW.
func put[K comparable, V any](n *Node, bit uint16, m *map[K]V, k K, v V) {
	own(n, bit, m, nil)[k] = v
}

// del deletes k from *m like put writes it; a map left empty becomes nil (a node
// whose maps are all empty and one that never wrote them are the same state).
func del[K comparable, V any](n *Node, bit uint16, m *map[K]V, k K) {
	delOwn(n, bit, m, k, nil)
}

func delOwn[K comparable, V any](n *Node, bit uint16, m *map[K]V, k K, cp func(V) V) {
	if _, ok := (*m)[k]; !ok {
		return
	}
	if len(*m) == 1 {
		*m = nil
		return
	}
	delete(own(n, bit, m, cp), k)
}

// txsW returns the transactions map ready to be modified, its transactions included:
// a transaction that will be modified must be looked up in it (txW), not in n.txs
// before the map is owned.
func (n *Node) txsW() map[StageID]*tx { return own(n, ownTxs, &n.txs, (*tx).clone) }

// txW returns stage s's transaction ready to be modified (nil if there is none).
func (n *Node) txW(s StageID) *tx {
	if n.txs[s] == nil {
		return nil
	}
	return n.txsW()[s]
}

// selW returns the selection states ready to be modified (see txsW).
func (n *Node) selW() map[StageID]*selection { return own(n, ownSel, &n.sel, (*selection).clone) }

func (s *selection) clone() *selection {
	c := *s
	c.acks = slices.Clone(s.acks)
	return &c
}

func (x *tx) clone() *tx {
	c := *x
	c.remote = slices.Clone(x.remote)
	c.remoteYes = slices.Clone(x.remoteYes)
	c.yes = slices.Clone(x.yes)
	c.no = slices.Clone(x.no)
	c.cond = slices.Clone(x.cond)
	for i := range c.cond {
		c.cond[i].set = slices.Clone(x.cond[i].set)
	}
	return &c
}

// AppendState implements sim.StateEncoder. The encoding is injective — equal bytes
// mean equal nodes — because the model checker interns node objects by it (the walk
// test checks this on every state it sees). It covers the fields mirroring stable
// storage too, though the engines also fingerprint the storage itself.
func (n *Node) AppendState(b []byte) []byte {
	b = appendInt(appendInt(b, int64(n.id)), int64(n.resends))
	if !n.started {
		return append(b, 0)
	}
	// Entries are sorted in buffers on the stack: the model checker encodes a node
	// after every step, and the maps hold a few entries (most are empty).
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(n.seq))
	b = appendInt(b, int64(len(n.queue)))
	for _, e := range inOrder(make([]kv[StageID, *queueEntry], 0, 8), n.queue, stageLess) {
		b = e.v.AppendState(appendStage(b, e.k))
	}
	b = appendInt(b, int64(len(n.orchSet)))
	for _, e := range inOrder(make([]kv[StageID, []VoteEntry], 0, 8), n.orchSet, stageLess) {
		b = appendStage(b, e.k)
		b = appendInt(b, int64(len(e.v)))
		for _, v := range e.v {
			b = appendTid(appendInt(b, int64(v.Orch)), v.Tid)
		}
	}
	b = appendInt(b, int64(len(n.orch)))
	for _, e := range inOrder(make([]kv[StageID, *orchRecord], 0, 8), n.orch, stageLess) {
		b = e.v.AppendState(appendStage(b, e.k))
	}
	b = appendInt(b, int64(len(n.prepared)))
	for _, e := range inOrder(make([]kv[Tid, *preparedPut], 0, 8), n.prepared, tidLess) {
		b = e.v.AppendState(appendTid(b, e.k))
	}
	b = appendInt(b, int64(len(n.commitLog)))
	for _, e := range inOrder(make([]kv[Tid, *commitRecord], 0, 8), n.commitLog, tidLess) {
		b = e.v.AppendState(appendTid(b, e.k))
	}
	b = appendInt(b, int64(len(n.pools)))
	for _, e := range inOrder(make([]kv[string, *Pool], 0, 8), n.pools, strLess) {
		b = e.v.AppendState(appendStr(b, e.k))
	}
	b = appendInt(b, int64(len(n.resPrep)))
	for _, e := range inOrder(make([]kv[Tid, *resPrepared], 0, 8), n.resPrep, tidLess) {
		b = e.v.AppendState(appendTid(b, e.k))
	}
	b = appendInt(b, int64(len(n.txs)))
	for _, e := range inOrder(make([]kv[StageID, *tx], 0, 8), n.txs, stageLess) {
		b = e.v.appendState(b)
	}
	b = appendInt(b, int64(len(n.sel)))
	for _, e := range inOrder(make([]kv[StageID, *selection], 0, 8), n.sel, stageLess) {
		b = appendStage(b, e.k)
		b = append(b, byte(e.v.role))
		b = appendNodes(b, e.v.acks)
		b = appendInt(b, int64(e.v.lastHeard))
	}
	b = appendInt(b, int64(len(n.attempts)))
	for _, e := range inOrder(make([]kv[StageID, int], 0, 8), n.attempts, stageLess) {
		b = appendStage(b, e.k)
		b = appendInt(b, int64(e.v))
	}
	b = appendInt(b, int64(len(n.selections)))
	for _, e := range inOrder(make([]kv[StageID, int], 0, 8), n.selections, stageLess) {
		b = appendStage(b, e.k)
		b = appendInt(b, int64(e.v))
	}
	b = appendInt(b, int64(len(n.inq)))
	for _, e := range inOrder(make([]kv[StageID, bool], 0, 8), n.inq, stageLess) {
		b = appendStage(b, e.k)
	}
	if len(n.locks) == 0 && len(n.waiters) == 0 {
		b = appendInt(b, 0)
	} else {
		pools := make([]string, 0, len(n.locks)+len(n.waiters))
		for p := range n.locks {
			pools = append(pools, p)
		}
		for p := range n.waiters {
			if _, ok := n.locks[p]; !ok {
				pools = append(pools, p)
			}
		}
		slices.Sort(pools)
		b = appendInt(b, int64(len(pools)))
		for _, p := range pools {
			b = appendStr(b, p)
			t, ok := n.locks[p]
			b = appendBool(b, ok)
			b = appendTid(b, t)
			b = appendInt(b, int64(len(n.waiters[p])))
			for _, s := range n.waiters[p] {
				b = appendStage(b, s)
			}
		}
	}
	b = appendInt(b, int64(len(n.suspects)))
	for _, e := range inOrder(make([]kv[sim.NodeID, bool], 0, 8), n.suspects, nodeLess) {
		b = appendInt(b, int64(e.k))
	}
	return b
}

// kv is a map entry.
type kv[K comparable, V any] struct {
	k K
	v V
}

// inOrder appends m's entries to es in the order of their keys less gives (insertion
// sort for the usual few keys), without iterating an empty map.
func inOrder[K comparable, V any](es []kv[K, V], m map[K]V, less func(a, b K) bool) []kv[K, V] {
	if len(m) == 0 {
		return es
	}
	if len(m) > 16 {
		for k, v := range m {
			es = append(es, kv[K, V]{k, v})
		}
		slices.SortFunc(es, func(a, b kv[K, V]) int {
			if less(a.k, b.k) {
				return -1
			}
			if less(b.k, a.k) {
				return 1
			}
			return 0
		})
		return es
	}
	for k, v := range m {
		i := len(es)
		es = append(es, kv[K, V]{k, v})
		for ; i > 0 && less(k, es[i-1].k); i-- {
			es[i] = es[i-1]
		}
		es[i] = kv[K, V]{k, v}
	}
	return es
}

func strLess(a, b string) bool { return a < b }

func nodeLess(a, b sim.NodeID) bool { return a < b }

func tidLess(a, b Tid) bool { return a.Node < b.Node || (a.Node == b.Node && a.Seq < b.Seq) }

func (x *tx) appendState(b []byte) []byte {
	b = appendTid(b, x.tid)
	b = appendStage(b, x.stage)
	b = appendRecord(b, x.rec)
	b = appendBool(b, x.last)
	b = appendRecord(b, x.next)
	b = appendAgent(b, x.agent)
	b = appendNodes(b, x.remote)
	b = appendNodes(b, x.remoteYes)
	b = appendBool(b, x.remoteNo)
	b = appendBool(b, x.localPut)
	b = appendStr(b, x.pool)
	b = appendInt(b, int64(x.res.Hop))
	b = appendInt(b, int64(x.res.Node))
	b = appendStr(b, x.res.Pool)
	b = appendInt(b, int64(x.res.Seat))
	b = appendBool(b, x.executing)
	b = appendInt(b, int64(x.orchVote))
	b = appendNodes(b, x.yes)
	b = appendNodes(b, x.no)
	b = appendInt(b, int64(len(x.cond)))
	for _, c := range x.cond {
		b = appendInt(b, int64(c.voter))
		b = appendNodes(b, c.set)
	}
	return b
}

func appendInt(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStage(b []byte, s StageID) []byte {
	return appendInt(appendInt(b, int64(s.Agent)), int64(s.Hop))
}

func appendTid(b []byte, t Tid) []byte {
	return binary.AppendUvarint(appendInt(b, int64(t.Node)), uint64(t.Seq))
}

func appendNodes(b []byte, ns []sim.NodeID) []byte {
	b = appendInt(b, int64(len(ns)))
	for _, n := range ns {
		b = appendInt(b, int64(n))
	}
	return b
}

func appendRecord(b []byte, r StageRecord) []byte {
	b = appendStage(b, r.ID)
	b = appendInt(b, int64(len(r.Nodes)))
	for _, sn := range r.Nodes {
		b = appendInt(appendInt(b, int64(sn.Node)), int64(sn.Rank))
	}
	return b
}

func appendAgent(b []byte, a Agent) []byte {
	b = appendInt(appendInt(b, int64(a.ID)), int64(a.Hop))
	b = appendInt(b, int64(len(a.Itinerary.Stages)))
	for _, st := range a.Itinerary.Stages {
		b = appendStr(b, st.Pool)
		b = appendInt(b, int64(len(st.Nodes)))
		for _, sn := range st.Nodes {
			b = appendInt(appendInt(b, int64(sn.Node)), int64(sn.Rank))
		}
	}
	b = appendInt(b, int64(len(a.Results)))
	for _, r := range a.Results {
		b = appendInt(appendInt(appendInt(b, int64(r.Hop)), int64(r.Node)), int64(r.Seat))
		b = appendStr(b, r.Pool)
	}
	return b
}

// AppendState methods of the records kept in stable storage (sim.StateEncoder): the
// engines fingerprint every node's storage after each step, and these are several
// times faster than sim.AppendCanonical's reflection. Each encodes every field; the
// storage key fixes the record's type.

// AppendState implements sim.StateEncoder.
func (e queueEntry) AppendState(b []byte) []byte {
	return appendAgent(appendRecord(b, e.Record), e.Agent)
}

// AppendState implements sim.StateEncoder.
func (o orchRecord) AppendState(b []byte) []byte {
	return appendNodes(appendNodes(appendTid(append(b, byte(o.State)), o.Tid), o.Voters), o.Pending)
}

// AppendState implements sim.StateEncoder.
func (p preparedPut) AppendState(b []byte) []byte {
	return appendAgent(appendRecord(appendInt(b, int64(p.Coord)), p.Record), p.Agent)
}

// AppendState implements sim.StateEncoder.
func (c commitRecord) AppendState(b []byte) []byte {
	return appendNodes(appendStage(b, c.Stage), c.Pending)
}

// AppendState implements sim.StateEncoder.
func (r resPrepared) AppendState(b []byte) []byte {
	return appendInt(appendInt(appendInt(appendStr(b, r.Pool), int64(r.Agent)), int64(r.Hop)), int64(r.Seat))
}

// AppendState implements sim.StateEncoder.
func (p Pool) AppendState(b []byte) []byte {
	b = appendInt(appendInt(b, int64(p.Taken)), int64(len(p.Holders)))
	for _, h := range p.Holders {
		b = appendInt(appendInt(appendInt(b, int64(h.Agent)), int64(h.Hop)), int64(h.Seat))
	}
	return b
}

// AppendState implements sim.StateEncoder.
func (r boundRecord) AppendState(b []byte) []byte {
	for _, cs := range [][]stageCount{r.Attempts, r.Selections} {
		b = appendInt(b, int64(len(cs)))
		for _, c := range cs {
			b = appendInt(appendStage(b, c.Stage), int64(c.N))
		}
	}
	return appendInt(b, int64(r.Resends))
}
