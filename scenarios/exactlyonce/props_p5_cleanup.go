package eoscen

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/checker"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// cleanupGrace is how long EO-P5 gives the cleanup (FORGET and COMMIT re-sends, their
// ACKs) after an agent completed and the faults settled, whichever is later. It is a
// liveness property with its own bound: an agent completing near the end of a run is
// not required to be clean yet (every scenario's run lasts one second beyond the
// EO-P3 bound, so an agent that completes within that bound always gets the grace).
const cleanupGrace = time.Second

// checkP5: once cleanupGrace has passed since an agent completed (and the faults
// settled), no node keeps a stage record, an OrchSet, a prepared Put, a commit record, a prepared reservation or a
// Ready/Committed orchestrator state for it. Nodes down for good are not inspected,
// and leftovers that wait only for nodes down for good are allowed: FORGET or COMMIT
// not ACKed by them, a Put in doubt whose coordinator is down, and the stage record,
// OrchSet and the doomed transactions of a stage whose committing orchestrator is
// down (nobody else may send its FORGET). Under a partition or cut the plan never
// heals, the side that is whole is still checked: a leftover is allowed only if one of
// the nodes it waits for is on another side (the request or its ACK cannot cross), or
// the stage it belongs to was committed on another side. A link left cut (one way or
// both) may hold up more than its two ends: a coordinator that cannot reach one
// participant keeps every other participant's prepared Put in doubt. So a leftover is
// also exempt when its node, a node it waits for, or its stage's committer is an end
// of a link left cut (and only then: every other leftover is checked). A pass says how
// many agents it checked and how many leftovers it exempted.
func (w *workload) checkP5(r *checker.Run) error {
	agents, exempt := 0, 0
	defer func() {
		r.Count(agents, exempt)
		r.Note(fmt.Sprintf("%d completed agents checked, %d leftovers exempt (waiting on nodes down for good or across a lasting partition or cut)", agents, exempt))
	}()
	cutEnd := map[string]bool{}
	for _, c := range w.settle.Cuts {
		cutEnd[c[0]], cutEnd[c[1]] = true, true
	}
	apart := func(a, b sim.NodeID) bool {
		na, nb := r.Final[a].Name, r.Final[b].Name
		return cutEnd[na] || cutEnd[nb] || !w.settle.Reachable(na, nb) || !w.settle.Reachable(nb, na)
	}
	done := map[eo.AgentID]bool{}
	committedBy := map[eo.StageID]sim.NodeID{}
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.Done:
			// At quiescence nothing is left to clean up: every leftover is final.
			done[v.Agent] = r.Outcome == sim.Quiescent || max(o.Time, r.Settled).Add(cleanupGrace) <= r.Time
		case eo.Committed:
			committedBy[v.Stage] = v.Node
		}
	}
	for _, d := range done {
		if d {
			agents++
		}
	}
	isDown := func(n sim.NodeID) bool { return slices.Contains(r.Down, r.Final[n].Name) }
	allDown := func(ns []sim.NodeID) bool {
		for _, n := range ns {
			if !isDown(n) {
				return false
			}
		}
		return len(ns) > 0
	}
	var errs []error
	for i, f := range r.Final {
		if isDown(sim.NodeID(i)) {
			continue
		}
		for _, it := range eo.Inspect(f.Stable) {
			switch it.Kind {
			case eo.StableQueue, eo.StableOrchSet, eo.StableOrch, eo.StablePrepared, eo.StableCommit, eo.StableResPrep:
			default:
				continue
			}
			if !done[it.Stage.Agent] {
				continue
			}
			if allDown(it.Waits) {
				exempt++
				continue
			}
			if r.Split && (slices.ContainsFunc(it.Waits, func(n sim.NodeID) bool { return apart(sim.NodeID(i), n) })) {
				exempt++ // waits across the lasting split
				continue
			}
			// The stage the record's transaction belongs to: a prepared Put belongs to
			// the transaction of the stage before the one it Puts.
			txStage := it.Stage
			if it.Kind == eo.StablePrepared {
				txStage.Hop--
			}
			if c, ok := committedBy[txStage]; ok && (isDown(c) || (r.Split && apart(sim.NodeID(i), c))) {
				exempt++
				// Its FORGET will never come: the stage's other nodes keep it, and
				// keep trying (and failing) to run it.
				continue
			}
			errs = append(errs, fmt.Errorf("%s keeps %s %s of completed agent a%d", f.Name, it.Kind, it.Key, it.Stage.Agent))
		}
	}
	if len(errs) > 3 {
		errs = append(errs[:3], fmt.Errorf("… %d more", len(errs)-3))
	}
	return errors.Join(errs...)
}
