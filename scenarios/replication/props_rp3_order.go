package rpscen

import (
	"fmt"

	"github.com/simrun-dev/simrun/checker"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/sim"
)

// RP-3: every replica of an active group delivers the same request at each index.
func (e *env) totalOrder(r *checker.Run) error {
	at := map[string]string{}
	n := 0
	for _, o := range r.History() {
		v, ok := o.Value.(rp.Exec)
		if !ok || o.Kind != rp.ObsDeliver {
			continue
		}
		n++
		k := fmt.Sprintf("%s %d", v.Group, v.Index)
		if id, ok := at[k]; ok && id != v.ID {
			return fmt.Errorf("%s delivered %s at index %d of %s, another replica %s", r.Final[o.Node].Name, v.ID, v.Index, v.Group, id)
		}
		at[k] = v.ID
	}
	r.Note(fmt.Sprintf("%d deliveries checked", n))
	return nil
}

// RP-3 sequencer failover by epochs (doc.go): a replica that follows a newer epoch's
// orders joins that epoch, so that it ignores the older epochs' orders from then on
// (fencing), and an epoch is never left (it is in stable storage). So at the end of a
// run, every replica that delivered an order the final sequencer made in its last
// term (its epoch's own orders) is in that epoch or a later one. Replicas that are
// down, and groups without one sequencer up at the end, are exempt.
func (e *env) joinedEpoch(r *checker.Run) error {
	checked, exempt := 0, 0
	for _, g := range e.d.groups {
		if !g.active {
			continue
		}
		_, _, _, sn, ok := e.final(r, g)
		if !ok {
			exempt += len(g.members)
			continue
		}
		seq := unwrap(r.Final[sn].State).(*rp.ActiveReplica)
		// The sequencer's last term begins at its last role change.
		var since sim.Time
		for _, o := range r.History() {
			if _, isRole := o.Value.(rp.Role); isRole && o.Node == sn {
				since = o.Time
			}
		}
		own := map[int64]string{}
		for _, o := range r.History() {
			if v, ok := o.Value.(rp.Exec); ok && o.Kind == rp.ObsOrder && o.Node == sn && o.Time >= since {
				own[v.Index] = v.ID
			}
		}
		for _, m := range g.members {
			f := r.Final[m]
			if m == sn {
				continue
			}
			if !f.Up {
				exempt++
				continue
			}
			a := unwrap(f.State).(*rp.ActiveReplica)
			delivered := 0
			for _, o := range r.History() {
				if v, ok := o.Value.(rp.Exec); ok && o.Kind == rp.ObsDeliver && o.Node == m && own[v.Index] == v.ID && v.ID != "" {
					delivered++
				}
			}
			if delivered == 0 {
				exempt++
				continue
			}
			checked++
			if a.S.Epoch < seq.S.Epoch {
				return fmt.Errorf("%s: %s delivered %d orders of sequencer %s's epoch %d and is still in epoch %d", g.name, f.Name, delivered, r.Final[sn].Name, seq.S.Epoch, a.S.Epoch)
			}
		}
	}
	r.Note(fmt.Sprintf("%d replicas checked, %d exempt (down at the end, no single sequencer up, or none of the final epoch's orders delivered)", checked, exempt))
	return nil
}
