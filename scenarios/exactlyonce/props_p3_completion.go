package eoscen

import (
	"fmt"

	"github.com/simrun-dev/simrun/checker"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// p3Items lists the agents EO-P3 requires to complete: every agent whose home node was
// up when it was launched (the Launch injection reaches only a running node), unless
// permanent faults take a majority of one of the stages it had not yet committed.
func (w *workload) p3Items(r *checker.Run) []scenarios.Item {
	done := map[eo.AgentID]sim.Time{}
	records := map[eo.StageID][]sim.NodeID{}
	committed := map[eo.StageID]bool{}
	accepted := map[eo.AgentID]bool{}
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.Accepted:
			accepted[v.Agent] = true
		case eo.Done:
			done[v.Agent] = o.Time
		case eo.Committed:
			committed[v.Stage] = true
			if !v.Last {
				records[eo.StageID{Agent: v.Stage.Agent, Hop: v.Stage.Hop + 1}] = v.Next
			}
		}
	}
	var items []scenarios.Item
	blocked := w.blockedForGood(r)
	for _, ai := range w.agents {
		a := ai.agent
		records[eo.StageID{Agent: a.ID, Hop: 0}] = []sim.NodeID{a.Itinerary.Home()}
		if ai.lost || (ai.maybeLost && !accepted[a.ID]) {
			continue
		}
		if ok, _ := w.required(r, a, records, committed, blocked); !ok {
			continue
		}
		it := scenarios.Item{Name: fmt.Sprintf("agent a%d", a.ID), Start: ai.launch}
		if t, ok := done[a.ID]; ok {
			it.Done, it.Completed = t, true
		}
		items = append(items, it)
	}
	return items
}
