package sagascen

import (
	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/scenarios"
)

// SG-P4: every transaction ends at every participant (each decides its outcome)
// within the bound after the faults settle; excused ones (a participant down for
// good, a lasting split) are exempt, every participant of them.
func (e *env) liveItems(r *checker.Run) (items []scenarios.Item, exempt int) {
	h := e.h(r)
	for _, id := range h.trs() {
		agents := e.sys.opts.Graph(h.begins[id].Value.(saga.Begin).Start).Agents
		if e.excused(r, id) {
			exempt += len(agents)
			continue
		}
		for _, a := range agents {
			it := scenarios.Item{Name: "transaction " + id.String() + " at " + a, Start: h.begins[id].Time}
			for _, o := range h.outcomes[id] {
				if o.Value.(saga.OutcomeEv).Agent == a && !it.Completed {
					it.Completed, it.Done = true, o.Time
				}
			}
			items = append(items, it)
		}
	}
	return items, exempt
}
