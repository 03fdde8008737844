package eoscen

import (
	"fmt"
	"maps"
	"slices"

	"github.com/simrun-dev/simrun/checker"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// checkAliveByWorker (EO-8): I_AM_ALIVE comes from a stage's worker only, periodically
// or in answer to ARE_YOU_THERE: a node sends it for a stage only while its latest
// role there (since its latest crash) is worker. Needs the per-message observations
// (Config.CountMessages, on in every scenario).
func (w *workload) checkAliveByWorker(r *checker.Run) error {
	type key struct {
		node  sim.NodeID
		stage eo.StageID
	}
	since := map[key]sim.Time{} // the node became worker of the stage then
	alive, exempt := 0, 0
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.RoleChange:
			if v.Role == eo.RoleWorker {
				since[key{v.Node, v.Stage}] = o.Time
			} else {
				delete(since, key{v.Node, v.Stage})
			}
		case eo.Sent:
			if v.Kind != "I_AM_ALIVE" {
				continue
			}
			t, ok := since[key{o.Node, v.Stage}]
			if ok && !w.surelyCrashedIn(r, o.Node, t, o.Time) && w.crashedIn(r, o.Node, t, o.Time) {
				exempt++ // a crash-send's window: this may be the call it crashes in
				continue
			}
			alive++
			if !ok || w.crashedIn(r, o.Node, t, o.Time) {
				return fmt.Errorf("%s sent I_AM_ALIVE for stage %v at %v without being its worker", r.Final[o.Node].Name, v.Stage, o.Time)
			}
		}
	}
	r.Count(alive, exempt)
	r.Note(fmt.Sprintf("%d I_AM_ALIVE checked", alive))
	return nil
}

// checkSelectionWaits (EO-8): an observer that starts a selection asks every node of
// higher priority (ARE_YOU_THERE) and becomes worker only when none answers in time (or,
// with none above it, at once): never in the very step that asked. Needs the
// per-message observations (Config.CountMessages, on in every scenario).
func checkSelectionWaits(r *checker.Run) error {
	type key struct {
		node  sim.NodeID
		stage eo.StageID
	}
	asked := map[key]int{} // index of the step's last ARE_YOU_THERE observation
	selections := 0
	var last struct {
		node sim.NodeID
		t    sim.Time
	}
	step := 0 // observations of one node at one instant form one step
	for _, o := range r.History() {
		if o.Node != last.node || o.Time != last.t {
			step++
			last.node, last.t = o.Node, o.Time
		}
		switch v := o.Value.(type) {
		case eo.Sent:
			if v.Kind == "ARE_YOU_THERE" {
				asked[key{o.Node, v.Stage}] = step
			}
		case eo.RoleChange:
			if v.Role != eo.RoleWorker || !v.Selected {
				continue
			}
			selections++
			if asked[key{v.Node, v.Stage}] == step {
				return fmt.Errorf("%s asked the higher-priority nodes of stage %v (ARE_YOU_THERE) and selected itself in the same step, at %v, without waiting for their answers", r.Final[v.Node].Name, v.Stage, o.Time)
			}
		}
	}
	r.Count(selections, 0)
	r.Note(fmt.Sprintf("%d selections checked", selections))
	return nil
}

// checkVariant (EO-1, EO-8): a run sends only the messages of its protocol variant:
// the simple protocol (EO-1) has no voting and no selection, and only the majority
// variant of the selection protocol ACKs I_AM_SELECTED.
func (w *workload) checkVariant(r *checker.Run) error {
	simple := []string{"PREPARE", "PREPARED", "COMMIT", "COMMIT_ACK", "ABORT", "STATUS"}
	kinds := 0
	defer func() { r.Count(kinds, 0) }()
	for _, k := range slices.Sorted(maps.Keys(r.ByKind)) {
		if r.ByKind[k].Sent == 0 {
			continue
		}
		kinds++
		switch {
		case w.simple && !slices.Contains(simple, k):
			return fmt.Errorf("the simple protocol sent %d %s", r.ByKind[k].Sent, k)
		case k == "SELECTED_ACK" && !w.majority:
			return fmt.Errorf("%d SELECTED_ACK sent without the majority selection variant", r.ByKind[k].Sent)
		}
	}
	return nil
}

// checkNoSuspicion (EO-8): a worker's I_AM_ALIVE reaches its observers every Alive
// period, well inside their Monitor timeout, so in a run without any fault no
// observer ever starts a selection (sends ARE_YOU_THERE) and no node announces
// itself (I_AM_SELECTED). Runs with a fault are not judged (the note says which).
func (w *workload) checkNoSuspicion(r *checker.Run) error {
	if w.simple || !w.quiet {
		r.Count(0, 1)
		r.Note("not judged: the run has faults (or runs the simple protocol)")
		return nil
	}
	for _, kind := range []string{"ARE_YOU_THERE", "I_AM_SELECTED"} {
		if c := r.ByKind[kind]; c.Sent > 0 {
			return fmt.Errorf("%d %s sent in a run without faults: an observer suspected a live worker", c.Sent, kind)
		}
	}
	r.Count(1, 0)
	r.Note(fmt.Sprintf("judged: no fault, %d I_AM_ALIVE, no selection", r.ByKind["I_AM_ALIVE"].Sent))
	return nil
}
