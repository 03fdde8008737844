package rpscen

import (
	"fmt"

	"github.com/simrun-dev/simrun/checker"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/sim"
)

// RP-1 (§5.2.1: "the replica manager will use the same ID for all future
// registration"): a replica's registration ID never changes, across restarts too.
// Every lookup a replica makes carries its ID (rp.Looked), and so do its role
// changes; the final state's ID is the same.
func (e *env) idsKept(r *checker.Run) error {
	ids := map[sim.NodeID]rp.RegID{}
	restarted := map[sim.NodeID]bool{}
	for _, c := range e.moves {
		if !c.crash {
			restarted[c.node] = true
		}
	}
	see := func(n sim.NodeID, id rp.RegID, at sim.Time) error {
		if was, ok := ids[n]; ok && was != id {
			return fmt.Errorf("%s registered as %v and, at %v, as %v", r.Final[n].Name, was, at, id)
		}
		ids[n] = id
		return nil
	}
	for _, o := range r.History() {
		var err error
		switch v := o.Value.(type) {
		case rp.Looked:
			err = see(o.Node, v.ID, o.Time)
		case rp.Role:
			err = see(o.Node, v.ID, o.Time)
		}
		if err != nil {
			return err
		}
	}
	checked, again := 0, 0
	for _, g := range e.d.groups {
		for _, m := range g.members {
			f := r.Final[m]
			var id rp.RegID
			switch s := unwrap(f.State).(type) {
			case *rp.Replica:
				id = s.S.ID
			case *rp.ActiveReplica:
				id = s.S.ID
			default:
				continue // down at the end
			}
			if err := see(m, id, r.Time); err != nil {
				return err
			}
			checked++
			if restarted[m] {
				again++
			}
		}
	}
	r.Count(checked, 0)
	r.Note(fmt.Sprintf("%d replicas checked (%d restarted), 0 exempt", checked, again))
	return nil
}
