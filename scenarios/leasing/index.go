package lsscen

import (
	"cmp"
	"time"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/sim"
)

// index is one run's observations, grouped by lease and reference, built once per run
// and shared by every property of that run.
type index struct {
	r *checker.Run
	// by finds each lease's (and each reference's) observations in obs: one map
	// lookup per observation and per lease a property visits (see lease).
	by      refSlots
	obs     leaseArray
	lastID  ls.RefID // lease's last answer
	last    *leaseObs
	futs    []futObs // by first observation
	perrors []obsOf[ls.ObsPatternError]
	// ups lists, per (device, peer), when the device's discovery layer saw the peer
	// come (back) in range.
	ups map[[2]sim.NodeID][]obsOf[ls.ObsPeer]
	// views lists, per (device, peer), every change of the device's view of the peer.
	views map[[2]sim.NodeID][]obsOf[ls.ObsPeer]
	// maxTerm is the longest lease period of the run: terms, renewal times, due times.
	maxTerm time.Duration
	leases  []ls.RefID // every granted lease, in order
	refs    []ls.RefID // every reference that carried a message, in order
	// leaseAt and refAt are the slots of leases and refs in obs (see eachLease).
	leaseAt, refAt []int32
	// scan lists, in order, the positions in the history of every observation the
	// properties that go through the whole history look at (see scanned), so that
	// they go through these instead.
	scan []int32
}

// scanned returns the observations that the whole-history properties look at, in
// history order: every value of type *ls.ObsSend, *ls.ObsListener, ls.ProbeView,
// ls.ProbeReleased, ls.ProbeMalformed or ls.MPEvent, and every observation of kind
// ls.KindProbeCtl, ls.KindProbeMisuse or ls.KindMPDone (whatever its value). A property that reads
// only these, in order, sees what a pass over the whole history sees.
func (x *index) scanned(yield func(*sim.Observation) bool) {
	h := x.r.History()
	for _, i := range x.scan {
		if !yield(&h[i]) {
			return
		}
	}
}

// leaseObs is one lease's (or reference's) observations.
type leaseObs struct {
	grant    obsOf[ls.ObsGrant]
	resolve  *sim.Observation // the holder's ls.ObsResolve (noObservation if none)
	resolved bool
	ends     [2][]obsOf[ls.ObsEnd] // by side (sideIdx)
	listens  [2][]string
	fired    [2][]obsOf[ls.ObsListener]
	sends    []obsOf[ls.ObsSend]
	recvs    []obsOf[ls.ObsRecv]
	drops    []obsOf[ls.ObsDrop]
	forwards []obsOf[ls.ObsForward]
	renews   []obsOf[ls.ObsRenew]
	// idle is when the application abandoned the lease on purpose (its first
	// KindIdle, or the holder's explicit expire); idled says there is one.
	idle  sim.Time
	idled bool
	// period is the lease's longest period: its term and every renewal time
	// requested or granted (a future's lease has its due time as term).
	period time.Duration
	seen   bool          // in refs
	n      [nLists]int32 // list lengths (buildIndex)
}

// noObs is what lease returns for a lease without observations (read only).
var noObs = newLeaseObs()

func newLeaseObs() *leaseObs {
	return &leaseObs{grant: obsOf[ls.ObsGrant]{noObservation, noGrant}, resolve: noObservation}
}

// lease returns the observations of a lease or reference (never nil; read only). The
// properties ask for one lease several times in a row: the last answer is kept (the
// properties of a run are checked one after another, never concurrently).
func (x *index) lease(id ls.RefID) *leaseObs {
	if x.last != nil && id == x.lastID {
		return x.last
	}
	l := noObs
	if s, ok := x.by.get(id); ok {
		l = x.obs.at(s)
	}
	x.lastID, x.last = id, l
	return l
}

// eachLease yields every granted lease in order with its observations (lease's
// answer for it: a call of lease(id) in the loop's body is answered from its cache).
func (x *index) eachLease(yield func(ls.RefID, *leaseObs) bool) { x.each(x.leases, x.leaseAt, yield) }

// eachRef is eachLease for every reference that carried a message.
func (x *index) eachRef(yield func(ls.RefID, *leaseObs) bool) { x.each(x.refs, x.refAt, yield) }

// each yields ids[i] with the observations in slot at[i].
func (x *index) each(ids []ls.RefID, at []int32, yield func(ls.RefID, *leaseObs) bool) {
	for i, id := range ids {
		l := x.obs.at(at[i])
		x.lastID, x.last = id, l
		if !yield(id, l) {
			return
		}
	}
}

// sideIdx indexes leaseObs's per-side lists.
func sideIdx(s ls.Side) int {
	if s == ls.Client {
		return 1
	}
	return 0
}

// obsOf is an observation with its typed value (the runtime records pointers). It
// points into the run's history (which no check changes) rather than copying the
// observation into every list. V is never nil: a missing observation has the zero
// value (see noObservation).
type obsOf[T any] struct {
	*sim.Observation
	V *T
}

// noObservation stands for a missing observation (a lease never granted, say), so
// an obsOf's fields read as zero instead of panicking.
var noObservation = &sim.Observation{}

// noGrant and noEnd are the values of a missing grant and end (read only).
var (
	noGrant = &ls.ObsGrant{}
	noEnd   = &ls.ObsEnd{}
)

type futKey struct {
	Node sim.NodeID
	ID   int64
	Boot uint32
}

// The lists of a leaseObs an observation goes to (buildIndex's first pass records it,
// the second fills the lists, each allocated once at its final length).
const (
	listNone = iota
	listEnd  // + sideIdx
	_
	listListen // + sideIdx
	_
	listFired // + sideIdx
	_
	listSend
	listRecv
	listDrop
	listForward
	listRenew
	nLists
)

// buildIndex indexes a run's history in two passes: the first finds each
// observation's lease and list and does everything else (grants, periods, futures,
// peers), the second fills the per-lease lists, cut from one array per kind of
// observation.
func buildIndex(r *checker.Run) *index {
	x := &index{
		r:     r,
		ups:   map[[2]sim.NodeID][]obsOf[ls.ObsPeer]{},
		views: map[[2]sim.NodeID][]obsOf[ls.ObsPeer]{},
	}
	h := r.History()
	x.by = refSlots{m: map[ls.RefID]int32{}}
	obs := &x.obs
	// Futures by key, as RefIDs (grantor: node, boot, number: future) to use the
	// dense tables of refSlots.
	futSlots := refSlots{m: map[ls.RefID]int32{}}
	var total [nLists]int
	// where[i] is observation i's lease slot << 4 | list, 0 for none.
	where := make([]uint32, len(h))
	// Consecutive observations are often about one lease (a take and its forward).
	lastID, lastS := ls.RefID{}, int32(-1)
	get := func(id ls.RefID) int32 {
		if lastS >= 0 && id == lastID {
			return lastS
		}
		s, ok := x.by.get(id)
		if !ok {
			s = obs.add()
			x.by.put(id, s)
		}
		lastID, lastS = id, s
		return s
	}
	put := func(i int, s int32, list int) {
		where[i] = uint32(s)<<4 | uint32(list)
		obs.at(s).n[list]++
		total[list]++
	}
	ref := func(id ls.RefID, s int32) {
		if l := obs.at(s); !l.seen {
			l.seen = true
			x.refs = append(x.refs, id)
			x.refAt = append(x.refAt, s)
		}
	}
	for i := range h {
		o := &h[i]
		keep := false // in scan
		switch v := o.Value.(type) {
		case *ls.ObsGrant:
			s := get(v.Lease)
			l := obs.at(s)
			l.grant = obsOf[ls.ObsGrant]{o, v}
			x.leases = append(x.leases, v.Lease)
			x.leaseAt = append(x.leaseAt, s)
			x.maxTerm = max(x.maxTerm, v.Term)
			l.period = max(l.period, v.Term)
		case *ls.ObsResolve:
			s := get(v.Lease)
			l := obs.at(s)
			l.resolve, l.resolved = o, true
		case *ls.ObsEnd:
			s := get(v.Lease)
			put(i, s, listEnd+sideIdx(v.Side))
			if l := obs.at(s); !l.idled && v.Side == ls.Client && v.How == ls.Expired && v.Cause == "explicit" {
				// A client-side expire (LS-2) abandons the lease on purpose like
				// KindIdle: the grantor's side ends by its own timer.
				l.idle, l.idled = o.Time, true
			}
		case *ls.ObsListener:
			keep = true
			s := get(v.Lease)
			if o.Kind == ls.KindListen {
				put(i, s, listListen+sideIdx(v.Side))
			} else {
				put(i, s, listFired+sideIdx(v.Side))
			}
		case *ls.ObsSend:
			keep = true
			s := get(v.Ref)
			put(i, s, listSend)
			ref(v.Ref, s)
			if v.Op == ls.OpRenew {
				x.maxTerm = max(x.maxTerm, v.D)
				obs.at(s).period = max(obs.at(s).period, v.D)
			}
		case *ls.ObsRecv:
			s := get(v.Ref)
			put(i, s, listRecv)
			ref(v.Ref, s)
		case *ls.ObsDrop:
			put(i, get(v.Ref), listDrop)
		case *ls.ObsForward:
			put(i, get(v.Ref), listForward)
		case *ls.ObsRenew:
			s := get(v.Lease)
			put(i, s, listRenew)
			if v.Ok {
				x.maxTerm = max(x.maxTerm, v.D)
				obs.at(s).period = max(obs.at(s).period, v.D)
			}
		case *ls.ObsFuture:
			k := futKey{o.Node, v.Future, v.Lease.GBoot}
			fk := ls.RefID{Grantor: k.Node, GBoot: k.Boot, N: k.ID}
			f, ok := futSlots.get(fk)
			if !ok {
				f = int32(len(x.futs))
				futSlots.put(fk, f)
				x.futs = append(x.futs, futObs{key: k})
			}
			if fo := &x.futs[f]; o.Kind == ls.KindFutureCall {
				fo.call = o
				x.maxTerm = max(x.maxTerm, v.Due)
			} else {
				if fo.done == 0 {
					fo.first = o
				}
				fo.done++
			}
		case ls.ObsIdle:
			if l := obs.at(get(v.Lease)); !l.idled {
				l.idle, l.idled = o.Time, true
			}
		case *ls.ObsPatternError:
			x.perrors = append(x.perrors, obsOf[ls.ObsPatternError]{o, v})
		case *ls.ObsPeer:
			k := [2]sim.NodeID{o.Node, v.Peer}
			if v.Up {
				x.ups[k] = append(x.ups[k], obsOf[ls.ObsPeer]{o, v})
			}
			x.views[k] = append(x.views[k], obsOf[ls.ObsPeer]{o, v})
		case ls.ProbeView, ls.ProbeReleased, ls.ProbeMalformed, ls.MPEvent:
			keep = true
		}
		if keep || o.Kind == ls.KindProbeCtl || o.Kind == ls.KindProbeMisuse || o.Kind == ls.KindMPDone {
			x.scan = append(x.scan, int32(i))
		}
	}
	// Each list gets its exact length, cut from one array per kind.
	ends := make([]obsOf[ls.ObsEnd], 0, total[listEnd]+total[listEnd+1])
	fired := make([]obsOf[ls.ObsListener], 0, total[listFired]+total[listFired+1])
	listens := make([]string, 0, total[listListen]+total[listListen+1])
	sends := make([]obsOf[ls.ObsSend], 0, total[listSend])
	recvs := make([]obsOf[ls.ObsRecv], 0, total[listRecv])
	drops := make([]obsOf[ls.ObsDrop], 0, total[listDrop])
	forwards := make([]obsOf[ls.ObsForward], 0, total[listForward])
	renews := make([]obsOf[ls.ObsRenew], 0, total[listRenew])
	for s := range obs.n {
		l := obs.at(s)
		c := &l.n
		for k := range 2 {
			l.ends[k], ends = cut(ends, c[listEnd+k])
			l.fired[k], fired = cut(fired, c[listFired+k])
			l.listens[k], listens = cut(listens, c[listListen+k])
		}
		l.sends, sends = cut(sends, c[listSend])
		l.recvs, recvs = cut(recvs, c[listRecv])
		l.drops, drops = cut(drops, c[listDrop])
		l.forwards, forwards = cut(forwards, c[listForward])
		l.renews, renews = cut(renews, c[listRenew])
	}
	for i, w := range where {
		if w == 0 {
			continue
		}
		o := &h[i]
		l := obs.at(int32(w >> 4))
		switch list := int(w & 15); list {
		case listEnd, listEnd + 1:
			l.ends[list-listEnd] = append(l.ends[list-listEnd], obsOf[ls.ObsEnd]{o, o.Value.(*ls.ObsEnd)})
		case listListen, listListen + 1:
			l.listens[list-listListen] = append(l.listens[list-listListen], o.Value.(*ls.ObsListener).Tag)
		case listFired, listFired + 1:
			l.fired[list-listFired] = append(l.fired[list-listFired], obsOf[ls.ObsListener]{o, o.Value.(*ls.ObsListener)})
		case listSend:
			l.sends = append(l.sends, obsOf[ls.ObsSend]{o, o.Value.(*ls.ObsSend)})
		case listRecv:
			l.recvs = append(l.recvs, obsOf[ls.ObsRecv]{o, o.Value.(*ls.ObsRecv)})
		case listDrop:
			l.drops = append(l.drops, obsOf[ls.ObsDrop]{o, o.Value.(*ls.ObsDrop)})
		case listForward:
			l.forwards = append(l.forwards, obsOf[ls.ObsForward]{o, o.Value.(*ls.ObsForward)})
		case listRenew:
			l.renews = append(l.renews, obsOf[ls.ObsRenew]{o, o.Value.(*ls.ObsRenew)})
		}
	}
	return x
}

// cut takes the next n elements' room from a (length 0, capacity n) and returns it and
// the rest.
func cut[T any](a []T, n int32) ([]T, []T) {
	if n == 0 {
		return nil, a
	}
	return a[:0:n], a[n:n]
}

// refSlots numbers references. A lease's RefID is found through its grantor
// incarnation's table, indexed by the lease number (a grantor numbers its leases 1, 2,
// …): a few comparisons instead of hashing the whole RefID for every observation. Far
// references, and a RefID whose table entry holds another one (the same number with
// another holder, in a malformed history), go to the map.
type refSlots struct {
	m      map[ls.RefID]int32
	tables []slotTable
}

type slotTable struct {
	grantor sim.NodeID
	boot    uint32
	ids     []ls.RefID // by lease number; the zero RefID where none
	slots   []int32
}

// maxDense bounds the lease numbers kept in tables (larger ones use the map).
const maxDense = 1 << 20

func (t *refSlots) table(id ls.RefID, add bool) *slotTable {
	for i := range t.tables {
		if tb := &t.tables[i]; tb.grantor == id.Grantor && tb.boot == id.GBoot {
			return tb
		}
	}
	if !add {
		return nil
	}
	t.tables = append(t.tables, slotTable{grantor: id.Grantor, boot: id.GBoot})
	return &t.tables[len(t.tables)-1]
}

func (t *refSlots) get(id ls.RefID) (int32, bool) {
	if id.N > 0 && id.N < maxDense {
		tb := t.table(id, false)
		if tb == nil || id.N >= int64(len(tb.ids)) {
			return 0, false
		}
		switch e := &tb.ids[id.N]; {
		case *e == id:
			return tb.slots[id.N], true
		case e.IsZero():
			return 0, false // put fills a free table entry first: never put
		}
	}
	s, ok := t.m[id]
	return s, ok
}

func (t *refSlots) put(id ls.RefID, s int32) {
	if id.N > 0 && id.N < maxDense {
		tb := t.table(id, true)
		for int64(len(tb.ids)) <= id.N {
			tb.ids, tb.slots = append(tb.ids, ls.RefID{}), append(tb.slots, 0)
		}
		if tb.ids[id.N].IsZero() {
			tb.ids[id.N], tb.slots[id.N] = id, s
			return
		}
	}
	t.m[id] = s
}

// lazyIndex builds the index on first use; the properties of one run share it.
type lazyIndex struct {
	r *checker.Run
	x *index
}

func (l *lazyIndex) get(r *checker.Run) *index {
	if l.r != r || l.x == nil {
		l.r, l.x = r, buildIndex(r)
	}
	return l.x
}

// firstEnd returns the first end of a lease side.
func (x *index) firstEnd(id ls.RefID, s ls.Side) (obsOf[ls.ObsEnd], bool) {
	return x.lease(id).firstEnd(s)
}

// firstEnd returns the first end of a side of the lease.
func (l *leaseObs) firstEnd(s ls.Side) (obsOf[ls.ObsEnd], bool) {
	es := l.ends[sideIdx(s)]
	if len(es) == 0 {
		return obsOf[ls.ObsEnd]{noObservation, noEnd}, false
	}
	return es[0], true
}

// futObs is one future's observations (values ls.ObsFuture): its call (nil if none),
// and its completions (the first and how many).
type futObs struct {
	key   futKey
	call  *sim.Observation
	first *sim.Observation
	done  int
}

// futKeyCompare orders futures by (node, boot, number).
func futKeyCompare(a, b futKey) int {
	return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Boot, b.Boot), cmp.Compare(a.ID, b.ID))
}

// leaseArray holds the leases' observations in chunks (no copying as it grows; a
// slot's address never changes).
type leaseArray struct {
	chunks []*[256]leaseObs
	n      int32
}

func (a *leaseArray) at(s int32) *leaseObs { return &a.chunks[s>>8][s&255] }

// add appends a lease without observations and returns its slot.
func (a *leaseArray) add() int32 {
	if a.n&255 == 0 {
		a.chunks = append(a.chunks, new([256]leaseObs))
	}
	s := a.n
	a.n++
	l := a.at(s) // zero: a chunk is new and its slots are used once
	l.grant, l.resolve = obsOf[ls.ObsGrant]{noObservation, noGrant}, noObservation
	return s
}
