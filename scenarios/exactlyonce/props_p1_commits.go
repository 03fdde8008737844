package eoscen

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/checker"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// checkP1: for every StageId at most one stage transaction commits; per agent the
// committed hops are 0, 1, 2, ... in order, each committed by a node of the stage's
// record (the record the previous stage Put), the last one exactly once.
func (w *workload) checkP1(r *checker.Run) error {
	type agentState struct {
		next   int32        // next hop expected to commit
		record []sim.NodeID // the record of stage next
		done   bool
	}
	st := map[eo.AgentID]*agentState{}
	byID := map[eo.AgentID]eo.Agent{}
	for _, a := range w.agents {
		byID[a.agent.ID] = a.agent
	}
	name := func(n sim.NodeID) string { return r.Final[n].Name }
	commits := 0
	defer func() { r.Count(commits, 0) }()
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.Committed:
			commits++
			a, ok := byID[v.Stage.Agent]
			if !ok {
				return fmt.Errorf("commit of stage %v of an agent never launched", v.Stage)
			}
			s := st[v.Stage.Agent]
			if s == nil {
				s = &agentState{record: []sim.NodeID{a.Itinerary.Home()}}
				st[v.Stage.Agent] = s
			}
			switch {
			case v.Stage.Hop < s.next:
				return fmt.Errorf("stage %v committed twice (again by %s, tid %v at %v)", v.Stage, name(v.Node), v.Tid, o.Time)
			case v.Stage.Hop > s.next:
				return fmt.Errorf("stage %v committed at %v before stage %d of the agent", v.Stage, o.Time, s.next)
			case !slices.Contains(s.record, v.Node):
				return fmt.Errorf("stage %v committed by %s, not a node of its record %s", v.Stage, name(v.Node), nodeNames(r, s.record))
			case v.Agent.Hop != v.Stage.Hop+1 || len(v.Agent.Results) != int(v.Stage.Hop)+1:
				return fmt.Errorf("stage %v committed an agent at hop %d with %d results", v.Stage, v.Agent.Hop, len(v.Agent.Results))
			}
			last := int(v.Stage.Hop)+1 == a.Itinerary.Len()
			if v.Last != last {
				return fmt.Errorf("stage %v committed with last=%v, itinerary has %d stages", v.Stage, v.Last, a.Itinerary.Len())
			}
			if !last {
				if err := w.checkNext(a.Itinerary.Stages[v.Stage.Hop+1], v.Next); err != nil {
					return fmt.Errorf("stage %v committed with next record %s: %w", v.Stage, nodeNames(r, v.Next), err)
				}
			}
			s.next++
			s.record = v.Next
		case eo.Done:
			s := st[v.Agent]
			if s == nil || int(s.next) != byID[v.Agent].Itinerary.Len() {
				return fmt.Errorf("agent a%d reported done before its last stage committed", v.Agent)
			}
			if s.done {
				return fmt.Errorf("agent a%d completed twice", v.Agent)
			}
			s.done = true
		}
	}
	return nil
}

// checkNext checks the record a stage transaction Put (EO-1, EO-2): the next stage's
// highest-priority node alone in the simple protocol; in the extended one, its
// itinerary nodes, every one with static-next, else at least a majority of them (paper
// §3 fn. 4: suspected nodes may be left out), in priority order.
func (w *workload) checkNext(st eo.Stage, next []sim.NodeID) error {
	rec := make([]sim.NodeID, 0, len(st.Nodes))
	for _, sn := range slices.SortedFunc(slices.Values(st.Nodes), func(a, b eo.StageNode) int { return int(a.Rank - b.Rank) }) {
		rec = append(rec, sn.Node)
	}
	switch {
	case w.simple:
		if len(next) != 1 || next[0] != rec[0] {
			return fmt.Errorf("the simple protocol Puts to the highest-priority node only")
		}
	case w.static:
		if !slices.Equal(next, rec) {
			return fmt.Errorf("static-next Puts to every node of the stage")
		}
	default:
		if len(next) < len(rec)/2+1 {
			return fmt.Errorf("fewer than a majority of the stage's %d nodes", len(rec))
		}
		i := 0
		for _, n := range next {
			for i < len(rec) && rec[i] != n {
				i++
			}
			if i == len(rec) {
				return fmt.Errorf("not a sub-list of the stage's nodes in priority order")
			}
		}
	}
	return nil
}
