package replication

import (
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Policy replaces decisions of the protocol at named points; a nil Policy, and a nil
// field, is the protocol. Tests and -p bug=… plant broken variants through it
// (scenarios/replication/bugs.go), so the broken code lives outside this package.
type Policy struct {
	// Duplicate is the duplicate check (§3.6.1 step 2): the stored response of the
	// request with this ID if it was executed (nil: the duplicate table dup).
	Duplicate func(dup map[string]int64, id string) (int64, bool)
	// Answer says whether the primary may answer a request's client while the
	// backups in waiting have not acknowledged its Done (§3.6.1 steps 4-5; nil: only
	// once none is left).
	Answer func(waiting []sim.NodeID) bool
	// Lapsed says whether a primary whose registration was last acknowledged since
	// ago has lost it (nil: since > lease): it steps down.
	Lapsed func(since, lease time.Duration) bool
	// CallRetry is the period after which a call (a transition or a task's call) left
	// unanswered is made again to the primary found anew (§4.5.2; nil: a third of the
	// lease; 0: never).
	CallRetry func(lease time.Duration) time.Duration
	// Became is told when the replica took the primary role, before it resumes what
	// its predecessor left (§5.1.2: set_primary calls recover); Moves says whether the
	// primary moves a workflow instance (its store key) on (nil: every one). What a
	// hook needs between calls it keeps in the replica's Hooked field.
	Became func(r *Replica)
	Moves  func(r *Replica, key string) bool
	// AloneWait is how long the lookups must list a replica alone before it claims
	// the primary role alone (§5.2.3; nil: a renewal period, a third of the lease, and
	// a period).
	AloneWait func(lease, period time.Duration) time.Duration
}

func (p *Policy) duplicate(dup map[string]int64, id string) (int64, bool) {
	if p != nil && p.Duplicate != nil {
		return p.Duplicate(dup, id)
	}
	v, ok := dup[id]
	return v, ok
}

func (p *Policy) answer(waiting []sim.NodeID) bool {
	if p != nil && p.Answer != nil {
		return p.Answer(waiting)
	}
	return len(waiting) == 0
}

func (p *Policy) lapsed(since, lease time.Duration) bool {
	if p != nil && p.Lapsed != nil {
		return p.Lapsed(since, lease)
	}
	return since > lease
}

func (p *Policy) callRetry(lease time.Duration) time.Duration {
	if p != nil && p.CallRetry != nil {
		return p.CallRetry(lease)
	}
	return lease / 3
}

func (p *Policy) aloneWait(lease, period time.Duration) time.Duration {
	if p != nil && p.AloneWait != nil {
		return p.AloneWait(lease, period)
	}
	return lease/3 + period
}

func (p *Policy) moves(r *Replica, key string) bool {
	return p == nil || p.Moves == nil || p.Moves(r, key)
}
