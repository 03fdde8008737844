package lsscen

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
)

// LS-3 (the application side of a lease's end): whatever only a lease kept alive is
// dropped when the lease ends. At the end of a run, on every device that is up, a music
// player serves no session (In) whose lease is no longer exported there, and runs no
// exchange (Out) whose session lease it no longer imports: the runtime calls
// Released or Expired in the same step as it removes a lease, so an entry without its
// lease is one the application kept after being told. A pass says how many entries
// it checked.
func releasedDropped(r *checker.Run) error {
	checked := 0
	var errs []error
	for _, f := range r.Final {
		d, ok := f.State.(*ls.Device)
		if !ok || !f.Up {
			continue
		}
		apps := []ls.App{d.App}
		if m, ok := d.App.(*ls.Mux); ok {
			apps = m.Apps
		}
		for _, a := range apps {
			p, ok := a.(*ls.Player)
			if !ok {
				continue
			}
			for _, id := range slices.SortedFunc(maps.Keys(p.In), func(a, b ls.RefID) int { return strings.Compare(a.String(), b.String()) }) {
				checked++
				if d.RT.Exports[id] == nil {
					errs = append(errs, fmt.Errorf("%s still serves session %s, whose lease it no longer exports", f.Name, id))
				}
			}
			for _, peer := range slices.Sorted(maps.Keys(p.Out)) {
				o := p.Out[peer]
				if o.Session.IsZero() {
					continue
				}
				checked++
				if d.RT.Imports[o.Session] == nil {
					errs = append(errs, fmt.Errorf("%s still runs its exchange with %s over session %s, whose lease it no longer imports", f.Name, r.Final[peer].Name, o.Session))
				}
			}
		}
	}
	r.Note(fmt.Sprintf("%d exchange entries checked", checked))
	if len(errs) > 3 {
		errs = append(errs[:3], fmt.Errorf("… %d more", len(errs)-3))
	}
	return errors.Join(errs...)
}

// LS-3: no leasing pattern panicked (a broken custom pattern is reported here: the
// runtime contained it and expired the lease; the message was dropped unless the
// pattern had forwarded it first).
func (e *env) patterns(r *checker.Run) error {
	x := e.li.get(r)
	contained := 0
	for _, p := range x.perrors {
		if p.V.Pattern != ls.ProbeFaultyName {
			return fmt.Errorf("custom pattern %q panicked on lease %s at %v: %s (%d pattern errors; the lease expired at both sides)",
				p.V.Pattern, p.V.Lease, p.Time, p.V.Panic, len(x.perrors))
		}
		// The probe's deliberately faulty pattern: the runtime contains the panic by
		// expiring the lease's grantor side in the same step (the holder learns it
		// like any expiry).
		if !slices.ContainsFunc(x.lease(p.V.Lease).ends[sideIdx(ls.Server)], func(en obsOf[ls.ObsEnd]) bool {
			return en.V.How == ls.Expired && en.V.Cause == "pattern-panic" && en.Time == p.Time && en.Node == p.Node
		}) {
			return fmt.Errorf("the probe's faulty pattern panicked on lease %s at %v, but the lease did not expire there and then (containment, LS-3)", p.V.Lease, p.Time)
		}
		contained++
	}
	r.Note(fmt.Sprintf("%d deliberate pattern panics checked: contained", contained))
	return nil
}
