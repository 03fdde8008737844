package rpscen

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/checker"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/sim"
)

// RP-2 §3.6.1 step 4 ("each backup sends an acknowledgement"): a backup acknowledges
// to the primary that it holds every request up to an index only when it has applied
// them (rp.Ack: Index ≤ Applied).
func acksHeld(r *checker.Run) error {
	n := 0
	for _, o := range r.History() {
		v, ok := o.Value.(rp.Ack)
		if !ok {
			continue
		}
		n++
		if v.Index > v.Applied {
			return fmt.Errorf("%s acknowledged index %d to %s at %v holding %d", r.Final[o.Node].Name, v.Index, r.Final[v.To].Name, o.Time, v.Applied)
		}
	}
	r.Count(n, 0)
	r.Note(fmt.Sprintf("%d acknowledgements checked", n))
	return nil
}

// RP-2 §3.6.1 steps 3-5 (and RP-4 §4.4 steps 2-3, a transition being such a request):
// a primary answers a request only after some primary ran it (the first answer of any
// request follows its first execution: a transition is not acknowledged on receipt),
// and it answers a request it ran itself in its current term only once every backup
// it waited for (rp.Exec.Backups) acknowledged holding it (an rp.Ack to it with the
// request's index or more) — a re-send answered while the request is in progress
// breaks it. A backup down at some instant from a lease and a period before the run to
// the answer is exempt (the registries drop it, or have not listed it again yet, and
// the primary stops waiting: swarm seed 6001), and so is every backup when a registry crashed or came
// back within a lease and a period before the answer (a registry back from a crash
// lists only the replicas that renewed since: the primary stops waiting for those it
// no longer finds) or another kind of fault happened meanwhile (outside the model).
func (e *env) answeredAfterAcks(r *checker.Run) error {
	type run struct {
		node    sim.NodeID
		index   int64
		at      sim.Time
		backups []sim.NodeID
	}
	cs := e.changes()
	noisy := func(from, to sim.Time) bool {
		return slices.ContainsFunc(cs, func(c change) bool {
			return c.at >= from && c.at <= to && (c.node < 0 || slices.Contains(e.d.regs, c.node))
		})
	}
	ran := map[string]run{}
	acked := map[[2]sim.NodeID]int64{} // (primary, backup) → the highest index acknowledged
	checked, dups, exempt := 0, 0, 0
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case rp.Exec:
			if o.Kind == rp.ObsExec {
				ran[v.Group+" "+v.ID] = run{o.Node, v.Index, o.Time, v.Backups}
			}
		case rp.Ack:
			k := [2]sim.NodeID{v.To, o.Node}
			acked[k] = max(acked[k], v.Index)
		case rp.Answer:
			x, ok := ran[v.Group+" "+v.ID]
			if !ok {
				return fmt.Errorf("%s (%s) answered %s at %v before any primary ran it", r.Final[o.Node].Name, v.Group, v.ID, o.Time)
			}
			if x.node != o.Node || e.crashedIn(o.Node, x.at, o.Time) {
				dups++ // answered from a table another term filled
				continue
			}
			checked++
			for _, b := range x.backups {
				if acked[[2]sim.NodeID{o.Node, b}] >= x.index {
					continue
				}
				// down since a lease before the run: the registries may not list it
				if e.downIn(b, x.at.Add(-e.lease-e.period), o.Time) || noisy(x.at.Add(-e.lease-e.period), o.Time) || e.otherIn(x.at, o.Time) {
					exempt++
					continue
				}
				return fmt.Errorf("%s (%s) answered %s (index %d, run at %v) at %v before its backup %s acknowledged it", r.Final[o.Node].Name, v.Group, v.ID, x.index, x.at, o.Time, r.Final[b].Name)
			}
		}
	}
	r.Count(checked, exempt)
	r.Note(fmt.Sprintf("%d answers checked, %d backups exempt (crashed, or a registry crashed around it), %d answers from a table another term filled", checked, exempt, dups))
	return nil
}
