package lsscen

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/sim"
)

// index is one run's observations, grouped by lease and reference, built once per run
// and shared by every property of that run.
type index struct {
	r        *checker.Run
	grants   map[ls.RefID]obsOf[ls.ObsGrant]
	resolves map[ls.RefID]obsOf[ls.ObsResolve]
	ends     map[sideKey][]obsOf[ls.ObsEnd]
	listens  map[sideKey][]string
	fired    map[sideKey][]obsOf[ls.ObsListener]
	sends    map[ls.RefID][]obsOf[ls.ObsSend]
	recvs    map[ls.RefID][]obsOf[ls.ObsRecv]
	drops    map[ls.RefID][]obsOf[ls.ObsDrop]
	forwards map[ls.RefID][]obsOf[ls.ObsForward]
	renews   map[ls.RefID][]obsOf[ls.ObsRenew]
	fcalls   map[futKey]obsOf[ls.ObsFuture]
	fdone    map[futKey][]obsOf[ls.ObsFuture]
	// idle is when the application abandoned a lease on purpose (its first KindIdle,
	// or the holder's explicit expire).
	idle    map[ls.RefID]sim.Time
	perrors []obsOf[ls.ObsPatternError]
	// ups lists, per (device, peer), when the device's discovery layer saw the peer
	// come (back) in range.
	ups map[[2]sim.NodeID][]obsOf[ls.ObsPeer]
	// maxTerm is the longest lease period of the run: terms, renewal times, due times;
	// period is each lease's own longest period (its term and every renewal time
	// requested or granted; a future's lease has its due time as term).
	maxTerm time.Duration
	period  map[ls.RefID]time.Duration
	leases  []ls.RefID // every granted lease, in order
	refs    []ls.RefID // every reference that carried a message, in order
}

// obsOf is an observation with its typed value.
type obsOf[T any] struct {
	sim.Observation
	V T
}

type sideKey struct {
	Lease ls.RefID
	Side  ls.Side
}

type futKey struct {
	Node sim.NodeID
	ID   int64
	Boot uint32
}

func buildIndex(r *checker.Run) *index {
	x := &index{
		r:        r,
		grants:   map[ls.RefID]obsOf[ls.ObsGrant]{},
		resolves: map[ls.RefID]obsOf[ls.ObsResolve]{},
		ends:     map[sideKey][]obsOf[ls.ObsEnd]{},
		listens:  map[sideKey][]string{},
		fired:    map[sideKey][]obsOf[ls.ObsListener]{},
		sends:    map[ls.RefID][]obsOf[ls.ObsSend]{},
		recvs:    map[ls.RefID][]obsOf[ls.ObsRecv]{},
		drops:    map[ls.RefID][]obsOf[ls.ObsDrop]{},
		forwards: map[ls.RefID][]obsOf[ls.ObsForward]{},
		renews:   map[ls.RefID][]obsOf[ls.ObsRenew]{},
		fcalls:   map[futKey]obsOf[ls.ObsFuture]{},
		fdone:    map[futKey][]obsOf[ls.ObsFuture]{},
		idle:     map[ls.RefID]sim.Time{},
		period:   map[ls.RefID]time.Duration{},
		ups:      map[[2]sim.NodeID][]obsOf[ls.ObsPeer]{},
	}
	seenRef := map[ls.RefID]bool{}
	ref := func(id ls.RefID) {
		if !seenRef[id] {
			seenRef[id] = true
			x.refs = append(x.refs, id)
		}
	}
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case ls.ObsGrant:
			x.grants[v.Lease] = obsOf[ls.ObsGrant]{o, v}
			x.leases = append(x.leases, v.Lease)
			x.maxTerm = max(x.maxTerm, v.Term)
			x.period[v.Lease] = max(x.period[v.Lease], v.Term)
		case ls.ObsResolve:
			x.resolves[v.Lease] = obsOf[ls.ObsResolve]{o, v}
		case ls.ObsEnd:
			k := sideKey{v.Lease, v.Side}
			x.ends[k] = append(x.ends[k], obsOf[ls.ObsEnd]{o, v})
			if _, ok := x.idle[v.Lease]; !ok && v.Side == ls.Client && v.How == ls.Expired && v.Cause == "explicit" {
				// A client-side expire (LS-2) abandons the lease on purpose like
				// KindIdle: the grantor's side ends by its own timer.
				x.idle[v.Lease] = o.Time
			}
		case ls.ObsListener:
			k := sideKey{v.Lease, v.Side}
			if o.Kind == ls.KindListen {
				x.listens[k] = append(x.listens[k], v.Tag)
			} else {
				x.fired[k] = append(x.fired[k], obsOf[ls.ObsListener]{o, v})
			}
		case ls.ObsSend:
			x.sends[v.Ref] = append(x.sends[v.Ref], obsOf[ls.ObsSend]{o, v})
			ref(v.Ref)
			if v.Op == ls.OpRenew {
				x.maxTerm = max(x.maxTerm, v.D)
				x.period[v.Ref] = max(x.period[v.Ref], v.D)
			}
		case ls.ObsRecv:
			x.recvs[v.Ref] = append(x.recvs[v.Ref], obsOf[ls.ObsRecv]{o, v})
			ref(v.Ref)
		case ls.ObsDrop:
			x.drops[v.Ref] = append(x.drops[v.Ref], obsOf[ls.ObsDrop]{o, v})
		case ls.ObsForward:
			x.forwards[v.Ref] = append(x.forwards[v.Ref], obsOf[ls.ObsForward]{o, v})
		case ls.ObsRenew:
			x.renews[v.Lease] = append(x.renews[v.Lease], obsOf[ls.ObsRenew]{o, v})
			if v.Ok {
				x.maxTerm = max(x.maxTerm, v.D)
				x.period[v.Lease] = max(x.period[v.Lease], v.D)
			}
		case ls.ObsFuture:
			k := futKey{o.Node, v.Future, v.Lease.GBoot}
			if o.Kind == ls.KindFutureCall {
				x.fcalls[k] = obsOf[ls.ObsFuture]{o, v}
				x.maxTerm = max(x.maxTerm, v.Due)
			} else {
				x.fdone[k] = append(x.fdone[k], obsOf[ls.ObsFuture]{o, v})
			}
		case ls.ObsIdle:
			if _, ok := x.idle[v.Lease]; !ok {
				x.idle[v.Lease] = o.Time
			}
		case ls.ObsPatternError:
			x.perrors = append(x.perrors, obsOf[ls.ObsPatternError]{o, v})
		case ls.ObsPeer:
			if v.Up {
				k := [2]sim.NodeID{o.Node, v.Peer}
				x.ups[k] = append(x.ups[k], obsOf[ls.ObsPeer]{o, v})
			}
		}
	}
	return x
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
	es := x.ends[sideKey{id, s}]
	if len(es) == 0 {
		return obsOf[ls.ObsEnd]{}, false
	}
	return es[0], true
}

func sortedFutKeys(m map[futKey]obsOf[ls.ObsFuture]) []futKey {
	return slices.SortedFunc(maps.Keys(m), func(a, b futKey) int {
		return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Boot, b.Boot), cmp.Compare(a.ID, b.ID))
	})
}
