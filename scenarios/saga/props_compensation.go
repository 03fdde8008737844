package sagascen

import (
	"fmt"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/protocols/saga"
)

// Null compensation: a compensation reaching a section whose action never ran is a
// recorded no-op (the section becomes null), never a call of the compensation action.
func (e *env) null(r *checker.Run) error {
	h := e.h(r)
	n, comps := 0, 0
	defer func() { r.Count(comps, 0) }()
	for _, id := range h.trs() {
		ran := map[saga.SecKey]bool{}
		for _, o := range h.calls {
			c := o.Value.(saga.Return)
			if c.Call.Tr != id {
				continue
			}
			if !c.Call.Comp {
				ran[c.Call.Sec] = ran[c.Call.Sec] || c.Ok
				continue
			}
			comps++
			if !ran[c.Call.Sec] {
				return fmt.Errorf("transaction %s: compensation %s of %s called, but its incoming action never took effect", id, c.Call.Action, c.Call.Sec)
			}
		}
		for _, o := range h.sections[id] {
			if o.Value.(saga.SectionEv).State == saga.Null {
				n++
			}
		}
	}
	r.Note(fmt.Sprintf("%d compensation calls checked; %d null compensations recorded", comps, n))
	return nil
}

// Dangling action: an incoming action that takes effect after its section was
// compensated or closed as null (a delayed request, a re-send, a replay from the log).
func (e *env) dangling(r *checker.Run) error {
	h := e.h(r)
	checked := 0
	defer func() { r.Count(checked, 0) }()
	for _, id := range h.trs() {
		closed := map[saga.SecKey]int64{}
		for _, o := range h.sections[id] {
			v := o.Value.(saga.SectionEv)
			if v.State == saga.Null || v.State == saga.ProcessedCompensation {
				if _, ok := closed[v.Sec]; !ok {
					closed[v.Sec] = o.Index
				}
			}
		}
		for _, o := range h.calls {
			c := o.Value.(saga.Return)
			if c.Call.Tr != id || c.Call.Comp || !c.Ok {
				continue
			}
			checked++
			if at, ok := closed[c.Call.Sec]; ok && at < o.Index {
				return fmt.Errorf("transaction %s: %s ran %s after the section was closed (observation %d, closed at %d)", id, c.Call.Sec, c.Call.Action, o.Index, at)
			}
		}
	}
	return nil
}
