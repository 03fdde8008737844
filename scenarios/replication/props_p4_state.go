package rpscen

import (
	"errors"
	"fmt"

	"github.com/simrun-dev/simrun/checker"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/sim"
)

// final is a group's state at the end of a run: the store and duplicate table of its
// one primary (passive) or sequencer (active), if it has exactly one up.
func (e *env) final(r *checker.Run, g *group) (store, dup map[string]int64, applied int64, node sim.NodeID, ok bool) {
	found := 0
	for _, n := range g.members {
		f := r.Final[n]
		if !f.Up {
			continue
		}
		switch s := unwrap(f.State).(type) {
		case *rp.Replica:
			if s.S.Primary {
				store, dup, applied, node = s.S.Store, s.S.Dup, s.S.Applied, n
				found++
			}
		case *rp.ActiveReplica:
			if s.S.IsSeq {
				store, dup, applied, node = s.S.Store, s.S.Dup, int64(len(s.S.Log)), n
				found++
			}
		}
	}
	return store, dup, applied, node, found == 1
}

// RP-P4: every acknowledged request is in the duplicate table of its group's final
// primary or sequencer (it survived every failover), with the response the client got.
func (e *env) noLostAck(r *checker.Run) error {
	n, skipped, expected := 0, 0, 0
	for _, c := range e.d.clients {
		_, dup, _, _, ok := e.final(r, c.group)
		for _, o := range r.History() {
			v, isOp := o.Value.(rp.ClientOp)
			if !isOp || o.Kind != rp.ObsReturn || o.Node != c.node {
				continue
			}
			if !ok {
				skipped++
				continue
			}
			n++
			k := rp.ClientID(v.Client, v.Seq)
			got, ok := dup[k]
			if (!ok || got != v.Val) && e.otherIn(o.Time.Add(-e.lease), r.Time) {
				expected++ // outside the model (see expectedNote)
				continue
			}
			if !ok {
				return fmt.Errorf("acknowledged request %s of %s (%+v) is not in the final primary's duplicate table: lost", k, c.group.name, v.Op)
			}
			if got != v.Val {
				return fmt.Errorf("acknowledged request %s of %s answered %d, the primary recorded %d", k, c.group.name, v.Val, got)
			}
		}
	}
	note := fmt.Sprintf("%d acknowledged requests checked", n-expected)
	if skipped > 0 {
		note += fmt.Sprintf(", %d skipped (their group has no single primary at the end)", skipped)
	}
	r.Count(n-expected, skipped+expected)
	r.Note(note + expectedNote(expected))
	return nil
}

// RP-P4: at quiescence every replica that is up holds its group primary's (or
// sequencer's) state: the same requests applied, the same store and (passive) the
// same duplicate table (a replica that applied a request the primary does not hold
// has a store that later writes may mend, but not its table).
func (e *env) backupsEqual(r *checker.Run) error {
	var errs []error
	n := 0
	for _, g := range e.d.groups {
		store, dup, applied, pn, ok := e.final(r, g)
		if !ok {
			continue
		}
		for _, m := range g.members {
			f := r.Final[m]
			if !f.Up || m == pn {
				continue
			}
			var st, dt map[string]int64
			var ap int64
			switch s := unwrap(f.State).(type) {
			case *rp.Replica:
				st, dt, ap = s.S.Store, s.S.Dup, s.S.Applied
			case *rp.ActiveReplica:
				st, dt, ap = s.S.Store, s.S.Dup, int64(len(s.S.Log))
			}
			n++
			if ap != applied || fmt.Sprint(st) != fmt.Sprint(store) {
				errs = append(errs, fmt.Errorf("%s holds %d requests %v, its primary %s %d %v", f.Name, ap, st, r.Final[pn].Name, applied, store))
			} else if fmt.Sprint(dt) != fmt.Sprint(dup) {
				errs = append(errs, fmt.Errorf("%s holds the primary %s's %d requests and store but another duplicate table: %v, the primary's %v", f.Name, r.Final[pn].Name, applied, dt, dup))
			}
		}
	}
	r.Note(fmt.Sprintf("%d replicas compared", n))
	return errors.Join(errs...)
}
