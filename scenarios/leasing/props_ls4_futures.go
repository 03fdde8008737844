package lsscen

import (
	"fmt"
	"time"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
)

// LS-4: every future completes exactly once: resolved before its due time, or ruined
// with a timeout at or after it.
func (e *env) futures(r *checker.Run) error {
	x := e.li.get(r)
	// Every future is judged; the error reported is the one of the first failing
	// future in (node, boot, number) order.
	var first *futObs
	var firstErr error
	checked := 0
	for i := range x.futs {
		f := &x.futs[i]
		if f.call == nil {
			continue
		}
		checked++
		if first != nil && futKeyCompare(f.key, first.key) >= 0 {
			continue
		}
		if err := e.future(r, f); err != nil {
			first, firstErr = f, err
		}
	}
	r.Count(checked, 0)
	return firstErr
}

// future judges one called future (LS-4).
func (e *env) future(r *checker.Run, f *futObs) error {
	k, c := f.key, obsOf[ls.ObsFuture]{f.call, f.call.Value.(*ls.ObsFuture)}
	due := c.V.At.Add(c.V.Due)
	switch {
	case f.done > 1:
		return fmt.Errorf("future %d of %s completed %d times", k.ID, r.Final[k.Node].Name, f.done)
	case f.done == 0:
		by := c.Time.Add(e.g.stretch(c.V.Due) + e.g.steps + 2*time.Millisecond)
		if by <= r.Time && !e.g.crashedIn(k.Node, c.Time, by) {
			return fmt.Errorf("future %d (%s) of %s called at %v with due %v never completed", k.ID, c.V.Tag, r.Final[k.Node].Name, c.Time, c.V.Due)
		}
		return nil
	}
	switch d := f.first.Value.(*ls.ObsFuture); {
	case d.Ok && d.At >= due:
		return fmt.Errorf("future %d (%s) resolved at local %v, at or after its due time %v", k.ID, c.V.Tag, d.At, due)
	case !d.Ok && d.Err == "timeout" && d.At < due:
		return fmt.Errorf("future %d (%s) ruined by a timeout at local %v, before its due time %v", k.ID, c.V.Tag, d.At, due)
	}
	return nil
}
