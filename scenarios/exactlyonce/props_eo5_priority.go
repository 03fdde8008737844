package eoscen

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/checker"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// checkAlreadyDone (EO-5): HIGHER_PRIO to an orchestrator that is Ready (or
// Committed) is answered ALREADY_DONE; only an orchestrator still Unknown gives up.
// So no transaction ends by giving up (TxEnded.Why "gave-up") in the handler that
// took its orchestrator out of Ready.
func checkAlreadyDone(r *checker.Run) error {
	type key struct {
		node  sim.NodeID
		stage eo.StageID
	}
	type left struct {
		tid eo.Tid
		at  sim.Time
	}
	ready := map[key]eo.Tid{}
	leftReady := map[key]left{}
	gaveUp := 0
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.OrchChange:
			k := key{v.Node, v.Stage}
			if v.State == eo.OrchReady {
				ready[k] = v.Tid
				continue
			}
			if t, ok := ready[k]; ok && t == v.Tid {
				leftReady[k] = left{v.Tid, o.Time}
			}
			delete(ready, k)
		case eo.TxEnded:
			if v.Why != "gave-up" {
				continue
			}
			gaveUp++
			if l, ok := leftReady[key{v.Node, v.Stage}]; ok && l.tid == v.Tid && l.at == o.Time {
				return fmt.Errorf("%s gave up transaction %v of stage %v at %v while its orchestrator was Ready (HIGHER_PRIO must be answered ALREADY_DONE)",
					r.Final[v.Node].Name, v.Tid, v.Stage, o.Time)
			}
		}
	}
	r.Count(gaveUp, 0)
	r.Note(fmt.Sprintf("%d give-ups checked", gaveUp))
	return nil
}

// checkStepDown (EO-5, EO-8): a worker leaves the worker role of a stage (becomes an
// observer without crashing in between) only for another worker: one of higher
// priority in the stage's record (it heard its I_AM_ALIVE or I_AM_SELECTED, or its
// voter voted for that node's orchestrator), or one whose orchestrator is Ready
// already (a Ready orchestrator is not overruled by priority: EO-5's NO from its
// voters ends this node's transaction). A node of higher priority counts once it has
// been a worker or has announced itself with I_AM_SELECTED: in the majority variant
// of EO-8 a claimant repeats I_AM_SELECTED before a majority has ACKed it, and a
// worker that hears it steps down (§5: "If it receives an I_AM_ALIVE or I_AM_SELECTED
// message from another node ... If W' has a higher priority than W, W sends
// HIGHER_PRIO"; exactlyonce/swarm seed 14078). Stage 0 has one node; the record of
// stage h is the Next of stage h-1's commit.
func (w *workload) checkStepDown(r *checker.Run) error {
	records := map[eo.StageID][]sim.NodeID{} // priority order
	workers := map[eo.StageID][]sim.NodeID{} // every node that has been a worker or announced itself
	ready := map[eo.StageID][]sim.NodeID{}   // every node whose orchestrator was Ready
	since := map[eo.StageID]map[sim.NodeID]sim.Time{}
	downs, exempt := 0, 0
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.Committed:
			records[eo.StageID{Agent: v.Stage.Agent, Hop: v.Stage.Hop + 1}] = v.Next
		case eo.OrchChange:
			if v.State == eo.OrchReady {
				ready[v.Stage] = append(ready[v.Stage], v.Node)
			}
		case eo.Sent:
			if v.Kind == "I_AM_SELECTED" && !slices.Contains(workers[v.Stage], o.Node) {
				workers[v.Stage] = append(workers[v.Stage], o.Node)
			}
		case eo.RoleChange:
			if since[v.Stage] == nil {
				since[v.Stage] = map[sim.NodeID]sim.Time{}
			}
			switch v.Role {
			case eo.RoleWorker:
				since[v.Stage][v.Node] = o.Time
				if !slices.Contains(workers[v.Stage], v.Node) {
					workers[v.Stage] = append(workers[v.Stage], v.Node)
				}
			case eo.RoleObserver:
				t, was := since[v.Stage][v.Node]
				delete(since[v.Stage], v.Node)
				if !was {
					continue
				}
				if w.crashedIn(r, v.Node, t, o.Time) {
					exempt++
					continue
				}
				downs++
				rec := records[v.Stage]
				me := slices.Index(rec, v.Node)
				higher := func(n sim.NodeID) bool { i := slices.Index(rec, n); return i >= 0 && i < me }
				other := func(n sim.NodeID) bool { return n != v.Node }
				if !slices.ContainsFunc(workers[v.Stage], higher) && !slices.ContainsFunc(ready[v.Stage], other) {
					return fmt.Errorf("%s stepped down as worker of stage %v at %v, but no higher-priority node of %s had been its worker or announced itself and no other orchestrator was Ready",
						r.Final[v.Node].Name, v.Stage, o.Time, nodeNames(r, rec))
				}
			}
		}
	}
	r.Count(downs, exempt)
	r.Note(fmt.Sprintf("%d step-downs checked, %d exempt (a crash in between)", downs, exempt))
	return nil
}
