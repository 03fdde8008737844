package eoscen

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/checker"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// checkI1: at every point of the history, at most one orchestrator per stage is Ready
// or Committed.
func checkI1(r *checker.Run) error {
	type key struct {
		s eo.StageID
		n sim.NodeID
	}
	state := map[key]eo.OrchState{}
	live := map[eo.StageID][]sim.NodeID{}
	changes := 0
	defer func() { r.Count(changes, 0) }()
	for _, o := range r.History() {
		v, ok := o.Value.(eo.OrchChange)
		if !ok {
			continue
		}
		changes++
		state[key{v.Stage, v.Node}] = v.State
		if v.State == eo.OrchUnknown {
			live[v.Stage] = slices.DeleteFunc(live[v.Stage], func(n sim.NodeID) bool { return n == v.Node })
			continue
		}
		if !slices.Contains(live[v.Stage], v.Node) {
			live[v.Stage] = append(live[v.Stage], v.Node)
		}
		if len(live[v.Stage]) > 1 {
			return fmt.Errorf("stage %v: orchestrators %s Ready/Committed at once (at %v)", v.Stage, nodeNames(r, live[v.Stage]), o.Time)
		}
	}
	return nil
}

// checkAtomic is the atomicity of stage transactions (EO-2, EO-3): every Put a
// participant commits belongs to a transaction its coordinator committed before, and
// no participant rolls back (ABORT) the Put of a transaction its coordinator
// committed, whenever either happens. A Put dropped on FORGET must belong to a stage
// that committed somewhere before (the FORGET's origin); it may be the Put of a
// committed transaction, as the stage it creates is over (see the package comment of
// the protocol).
func checkAtomic(r *checker.Run) error {
	committed := map[eo.Tid]sim.Time{}
	stageDone := map[eo.StageID]bool{}
	for _, o := range r.History() {
		if v, ok := o.Value.(eo.Committed); ok {
			committed[v.Tid] = o.Time
		}
	}
	puts := 0
	defer func() { r.Count(puts, 0) }()
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.Committed:
			stageDone[v.Stage] = true
		case eo.PutChange:
			puts++
			at, ok := committed[v.Tid]
			switch v.State {
			case eo.PutCommitted:
				if !ok || at > o.Time {
					return fmt.Errorf("%s committed the Put of stage %v (tid %v, coordinator %s) at %v, but the coordinator never committed it before",
						r.Final[v.Node].Name, v.Stage, v.Tid, r.Final[v.Coord].Name, o.Time)
				}
			case eo.PutAborted:
				if ok {
					return fmt.Errorf("%s aborted the Put of stage %v (tid %v) at %v, but its coordinator %s committed it at %v",
						r.Final[v.Node].Name, v.Stage, v.Tid, o.Time, r.Final[v.Coord].Name, at)
				}
			case eo.PutDropped:
				if !stageDone[v.Stage] {
					return fmt.Errorf("%s dropped the Put of stage %v (tid %v) at %v before that stage committed anywhere",
						r.Final[v.Node].Name, v.Stage, v.Tid, o.Time)
				}
			}
		}
	}
	return nil
}
