package rpscen

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/checker"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// RP-P1: no request executed twice with effect. Passive groups: once a backup applied
// a request's result (it was committed), no primary executes it again (the duplicate
// table survives failover) — unless every replica holding it (that ran or applied it)
// was down at some instant of the lease before: §3.6.1's agreement stage cut short
// ("if it crashed during the agreement stage, then they may have processed the
// request"), its holders gone, the front end's re-send runs it anew. A primary that
// holds it itself never runs it again. Active groups: the sequencers order each
// request once, across epochs.
func (e *env) atMostOnce(r *checker.Run) error {
	holders := map[string][]sim.NodeID{}
	since := map[string]sim.Time{} // when a replica first held it
	committed := map[string]bool{}
	ordered := map[string]bool{}
	n, exempt, expected := 0, 0, 0
	for _, o := range r.History() {
		v, ok := o.Value.(rp.Exec)
		if !ok {
			continue
		}
		k := v.Group + " " + v.ID
		switch o.Kind {
		case rp.ObsApply:
			committed[k] = true
			holders[k] = append(holders[k], o.Node)
		case rp.ObsExec:
			n++
			hs := holders[k]
			holders[k] = append(hs, o.Node)
			if _, ok := since[k]; !ok {
				since[k] = o.Time
			}
			if !committed[k] {
				continue
			}
			self := slices.Contains(hs, o.Node)
			if !self && !slices.ContainsFunc(hs, func(h sim.NodeID) bool { return !e.downIn(h, o.Time.Add(-e.lease), o.Time) }) {
				exempt++
				continue
			}
			if e.otherIn(since[k], o.Time) {
				expected++ // outside the model (see expectedNote)
				continue
			}
			return fmt.Errorf("request %s executed again by %s after it was committed", k, r.Final[o.Node].Name)
		case rp.ObsOrder:
			n++
			if ordered[k] {
				return fmt.Errorf("request %s ordered again by %s (index %d)", k, r.Final[o.Node].Name, v.Index)
			}
			ordered[k] = true
		}
	}
	r.Count(n-expected, exempt+expected)
	r.Note(fmt.Sprintf("%d executions checked, %d exempt (run again after every replica holding them went down: the agreement stage cut short)", n-expected, exempt) + expectedNote(expected))
	return nil
}

func (e *env) items(r *checker.Run) []scenarios.Item {
	var items []scenarios.Item
	open := map[string]int{}
	for _, o := range r.History() {
		v, ok := o.Value.(rp.ClientOp)
		if !ok {
			continue
		}
		k := fmt.Sprintf("%s/%d", r.Final[o.Node].Name, v.Seq)
		switch o.Kind {
		case rp.ObsCall:
			open[k] = len(items)
			items = append(items, scenarios.Item{Name: "request " + k, Start: o.Time})
		case rp.ObsReturn:
			if i, ok := open[k]; ok {
				items[i].Completed, items[i].Done = true, o.Time
			}
		}
	}
	return items
}
