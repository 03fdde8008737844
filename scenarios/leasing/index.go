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
	r *checker.Run
	// by holds each lease's (and each reference's) observations: one map lookup per
	// observation and per lease a property visits (see lease).
	by      map[ls.RefID]*leaseObs
	fcalls  map[futKey]obsOf[ls.ObsFuture]
	fdone   map[futKey][]obsOf[ls.ObsFuture]
	perrors []obsOf[ls.ObsPatternError]
	// ups lists, per (device, peer), when the device's discovery layer saw the peer
	// come (back) in range.
	ups map[[2]sim.NodeID][]obsOf[ls.ObsPeer]
	// maxTerm is the longest lease period of the run: terms, renewal times, due times.
	maxTerm time.Duration
	leases  []ls.RefID // every granted lease, in order
	refs    []ls.RefID // every reference that carried a message, in order
}

// leaseObs is one lease's (or reference's) observations.
type leaseObs struct {
	grant    obsOf[ls.ObsGrant]
	resolve  obsOf[ls.ObsResolve]
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
	seen   bool // in refs
}

// noObs is what lease returns for a lease without observations (read only).
var noObs = newLeaseObs()

func newLeaseObs() *leaseObs {
	return &leaseObs{grant: obsOf[ls.ObsGrant]{Observation: noObservation}, resolve: obsOf[ls.ObsResolve]{Observation: noObservation}}
}

// lease returns the observations of a lease or reference (never nil; read only).
func (x *index) lease(id ls.RefID) *leaseObs {
	if l := x.by[id]; l != nil {
		return l
	}
	return noObs
}

// sideIdx indexes leaseObs's per-side lists.
func sideIdx(s ls.Side) int {
	if s == ls.Client {
		return 1
	}
	return 0
}

// obsOf is an observation with its typed value. It points into the run's history
// (which no check changes) rather than copying the observation into every list.
type obsOf[T any] struct {
	*sim.Observation
	V T
}

// noObservation stands for a missing observation (a lease never granted, say), so
// an obsOf's fields read as zero instead of panicking.
var noObservation = &sim.Observation{}

type futKey struct {
	Node sim.NodeID
	ID   int64
	Boot uint32
}

func buildIndex(r *checker.Run) *index {
	x := &index{
		r:      r,
		by:     map[ls.RefID]*leaseObs{},
		fcalls: map[futKey]obsOf[ls.ObsFuture]{},
		fdone:  map[futKey][]obsOf[ls.ObsFuture]{},
		ups:    map[[2]sim.NodeID][]obsOf[ls.ObsPeer]{},
	}
	get := func(id ls.RefID) *leaseObs {
		l := x.by[id]
		if l == nil {
			l = newLeaseObs()
			x.by[id] = l
		}
		return l
	}
	ref := func(id ls.RefID, l *leaseObs) {
		if !l.seen {
			l.seen = true
			x.refs = append(x.refs, id)
		}
	}
	h := r.History()
	for i := range h {
		o := &h[i]
		switch v := o.Value.(type) {
		case ls.ObsGrant:
			l := get(v.Lease)
			l.grant = obsOf[ls.ObsGrant]{o, v}
			x.leases = append(x.leases, v.Lease)
			x.maxTerm = max(x.maxTerm, v.Term)
			l.period = max(l.period, v.Term)
		case ls.ObsResolve:
			l := get(v.Lease)
			l.resolve, l.resolved = obsOf[ls.ObsResolve]{o, v}, true
		case ls.ObsEnd:
			l := get(v.Lease)
			i := sideIdx(v.Side)
			l.ends[i] = append(l.ends[i], obsOf[ls.ObsEnd]{o, v})
			if !l.idled && v.Side == ls.Client && v.How == ls.Expired && v.Cause == "explicit" {
				// A client-side expire (LS-2) abandons the lease on purpose like
				// KindIdle: the grantor's side ends by its own timer.
				l.idle, l.idled = o.Time, true
			}
		case ls.ObsListener:
			l := get(v.Lease)
			i := sideIdx(v.Side)
			if o.Kind == ls.KindListen {
				l.listens[i] = append(l.listens[i], v.Tag)
			} else {
				l.fired[i] = append(l.fired[i], obsOf[ls.ObsListener]{o, v})
			}
		case ls.ObsSend:
			l := get(v.Ref)
			l.sends = append(l.sends, obsOf[ls.ObsSend]{o, v})
			ref(v.Ref, l)
			if v.Op == ls.OpRenew {
				x.maxTerm = max(x.maxTerm, v.D)
				l.period = max(l.period, v.D)
			}
		case ls.ObsRecv:
			l := get(v.Ref)
			l.recvs = append(l.recvs, obsOf[ls.ObsRecv]{o, v})
			ref(v.Ref, l)
		case ls.ObsDrop:
			l := get(v.Ref)
			l.drops = append(l.drops, obsOf[ls.ObsDrop]{o, v})
		case ls.ObsForward:
			l := get(v.Ref)
			l.forwards = append(l.forwards, obsOf[ls.ObsForward]{o, v})
		case ls.ObsRenew:
			l := get(v.Lease)
			l.renews = append(l.renews, obsOf[ls.ObsRenew]{o, v})
			if v.Ok {
				x.maxTerm = max(x.maxTerm, v.D)
				l.period = max(l.period, v.D)
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
			if l := get(v.Lease); !l.idled {
				l.idle, l.idled = o.Time, true
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
	es := x.lease(id).ends[sideIdx(s)]
	if len(es) == 0 {
		return obsOf[ls.ObsEnd]{Observation: noObservation}, false
	}
	return es[0], true
}

func sortedFutKeys(m map[futKey]obsOf[ls.ObsFuture]) []futKey {
	return slices.SortedFunc(maps.Keys(m), func(a, b futKey) int {
		return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Boot, b.Boot), cmp.Compare(a.ID, b.ID))
	})
}
