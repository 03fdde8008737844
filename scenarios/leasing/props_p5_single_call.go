package lsscen

import (
	"fmt"

	"github.com/simrun-dev/simrun/checker"
)

// LS-P5: at most one message is processed through a single-call lease. A pass says how
// many single-call leases it checked and how many of them received a second message at
// the grantor (the ones the property could have caught: a sweep in which none did
// tested nothing).
func (e *env) singleCall(r *checker.Run) error {
	x := e.li.get(r)
	checked, second := 0, 0
	defer func() {
		r.Note(fmt.Sprintf("%d single-call leases checked, %d received a second message", checked, second))
	}()
	for id, l := range x.eachLease {
		if l.grant.V.Pattern != "single-call" {
			continue
		}
		checked++
		if len(l.recvs)+len(l.drops) > 1 { // received (processed or not) or dropped at the grantor
			second++
		}
		if fs := l.forwards; len(fs) > 1 {
			return fmt.Errorf("single-call lease %s (%s) processed %d messages (%s#%d at %v, then %s#%d at %v)",
				id, l.grant.V.Object, len(fs), fs[0].V.Method, fs[0].V.Seq, fs[0].Time, fs[1].V.Method, fs[1].V.Seq, fs[1].Time)
		}
	}
	return nil
}
