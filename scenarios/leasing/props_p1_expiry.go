package lsscen

import (
	"fmt"
	"math"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
)

// LS-P1: the service never processes a message that arrived at or after its lease's
// deadline, or after the lease ended at the grantor. The deadline is not the one the
// protocol reports: it is rebuilt from the grant and the accepted renewals (deadline =
// grant time + term, then max(deadline, renewal time + renewal) — the max rule), on
// the grantor's clock as the simulator read it for each observation (Local). A
// message taken live (the grantor accepted it) at or after that deadline breaks LS-P1
// even when the protocol's own bookkeeping agrees with itself (review item D); so does
// a message taken or processed after the grantor's side ended.
func (e *env) noDeliveryAfterExpiry(r *checker.Run) error {
	x := e.li.get(r)
	checked := 0 // messages taken live and messages processed, each judged
	defer func() { r.Count(checked, 0) }()
	for id, l := range x.eachLease {
		g := l.grant
		end := int64(math.MaxInt64)
		se, ended := l.firstEnd(ls.Server)
		if ended {
			end = se.Index
		}
		how := func() string { return fmt.Sprintf("%s (%s) at %v", se.V.How, se.V.Cause, se.Time) } // for an error only
		dl := g.Local.Add(g.V.Term)
		renews, recvs, fwds := l.renews, l.recvs, l.forwards
		// Walk the grantor's renewals, takes and forwards in history order.
		for ri, vi, fi := 0, 0, 0; vi < len(recvs) || fi < len(fwds); {
			next := int64(math.MaxInt64)
			if vi < len(recvs) {
				next = recvs[vi].Index
			}
			if fi < len(fwds) {
				next = min(next, fwds[fi].Index)
			}
			for ; ri < len(renews) && renews[ri].Index < next; ri++ {
				if rn := renews[ri]; rn.V.Ok {
					dl = max(dl, rn.Local.Add(rn.V.D))
				}
			}
			if vi < len(recvs) && recvs[vi].Index == next {
				rv := recvs[vi]
				vi++
				if !rv.V.Live {
					continue
				}
				checked++
				if rv.Local >= dl {
					return fmt.Errorf("lease %s: message #%d (%s %s) accepted at local %v, at or after the deadline %v (granted at %v for %v, renewals applied; the grantor reported %v)",
						id, rv.V.Seq, rv.V.Op, rv.V.Method, rv.Local, dl, g.Local, g.V.Term, rv.V.Deadline)
				}
				if rv.Index > end {
					return fmt.Errorf("lease %s: message #%d accepted at %v after the lease %s", id, rv.V.Seq, rv.Time, how())
				}
				continue
			}
			f := fwds[fi]
			fi++
			checked++
			if f.Local >= dl || f.V.At >= f.V.Deadline {
				return fmt.Errorf("lease %s: the service processed %s#%d at local %v, at or after the deadline %v", id, f.V.Method, f.V.Seq, f.Local, min(dl, f.V.Deadline))
			}
			if f.Index > end {
				return fmt.Errorf("lease %s: the service processed %s#%d at %v after the lease %s", id, f.V.Method, f.V.Seq, f.Time, how())
			}
		}
	}
	return nil
}
