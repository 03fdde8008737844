package lsscen

import (
	"fmt"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/sim"
)

// releasedAfterListeners (LS-2, the runtime's App contract): a side's Released runs
// after that side's expiry listeners ran (whenExpired listeners run asynchronously,
// and the objects the lease kept alive are dropped after them). Checked on the probe's
// leases, whose application records its Released calls.
func (e *env) releasedAfterListeners(r *checker.Run) error {
	type side struct {
		lease ls.RefID
		side  ls.Side
	}
	released := map[side]sim.Time{}
	checked := 0
	for o := range e.li.get(r).scanned {
		switch v := o.Value.(type) {
		case ls.ProbeReleased:
			checked++
			released[side{v.Lease, v.Side}] = o.Time
		case *ls.ObsListener:
			if o.Kind == ls.KindListen {
				continue
			}
			if at, ok := released[side{v.Lease, v.Side}]; ok {
				return fmt.Errorf("lease %s: %s listener %q ran at %v, after the side's Released (at %v)", v.Lease, v.Side, v.Tag, o.Time, at)
			}
		}
	}
	r.Note(fmt.Sprintf("%d releases checked", checked))
	return nil
}

// patternView (LS-2 leaseTimeLeft, isExpired): a pattern runs for a message that came
// through a live lease, so its control says the lease is live, with time left in
// (0, 2·term] (the probe's server renews to twice the term at most, the max rule).
func (e *env) patternView(r *checker.Run) error {
	checked := 0
	for o := range e.li.get(r).scanned {
		if o.Kind != ls.KindProbeCtl {
			continue
		}
		c := o.Value.(ls.ProbeCtl)
		checked++
		if c.Expired || c.Left <= 0 || c.Left > 2*c.Term {
			return fmt.Errorf("the pattern of lease %s, running for a message that came through it, was told expired=%v, time left %v (term %v)", c.Lease, c.Expired, c.Left, c.Term)
		}
	}
	r.Note(fmt.Sprintf("%d pattern views checked", checked))
	return nil
}

// LS-2: renewing a revoked or expired lease is refused, and so is a far reference to a
// device that is no discovered peer (the probe tries both on purpose).
func (e *env) misuse(r *checker.Run) error {
	checked := 0
	for o := range e.li.get(r).scanned {
		if o.Kind != ls.KindProbeMisuse {
			continue
		}
		m := o.Value.(ls.ProbeMisuse)
		checked++
		if !m.Rejected {
			return fmt.Errorf("%s of %s was accepted", m.Op, m.Ref)
		}
	}
	r.Note(fmt.Sprintf("%d misuses checked", checked))
	return nil
}
