package lsscen

import (
	"fmt"
	"strings"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/sim"
)

// LS-P4: at the end of the run no device keeps state for a lease that has ended.
func (e *env) reclamation(r *checker.Run) error {
	x := e.li.get(r)
	devices, exempt := 0, 0
	defer func() {
		r.Note(fmt.Sprintf("%d devices checked, %d leases exempt (asynchronous work for them still queued)", devices, exempt))
	}()
	for i, f := range r.Final {
		if !f.Up || f.State == nil {
			continue
		}
		d, ok := f.State.(*ls.Device)
		if !ok {
			continue
		}
		leaks, pending := d.Leaks()
		devices++
		exempt += pending
		busy := map[ls.RefID]bool{}
		for _, a := range d.RT.PendingLeases() {
			busy[a] = true
		}
		for id := range x.eachLease {
			if busy[id] {
				continue
			}
			if id.Grantor == sim.NodeID(i) && id.GBoot == d.RT.Boot && d.RT.Exports[id] != nil {
				if se, ok := x.firstEnd(id, ls.Server); ok {
					leaks = append(leaks, fmt.Sprintf("server side of %s kept after it %s at %v", id, se.V.How, se.Time))
				}
			}
			if id.Holder == sim.NodeID(i) && d.RT.Imports[id] != nil && !d.RT.Imports[id].Revoking {
				if ce, ok := x.firstEnd(id, ls.Client); ok {
					leaks = append(leaks, fmt.Sprintf("client side of %s kept after it %s at %v", id, ce.V.How, ce.Time))
				}
			}
		}
		if len(leaks) > 0 {
			more := ""
			if len(leaks) > 3 {
				more = fmt.Sprintf(" (and %d more)", len(leaks)-3)
				leaks = leaks[:3]
			}
			return fmt.Errorf("%s at the end: %s%s", f.Name, strings.Join(leaks, "; "), more)
		}
	}
	return nil
}
