package rpscen

import (
	"testing"
	"time"

	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/sim"
)

// RP-2 §5.2.3: a replica elects itself from the first answer to its lookup that
// lists anything (the registries answer one by one). When a later answer to the same
// lookup names a smaller registration ID, or a registered primary, the claim ends:
// only the minimum ID registers as primary, and an existing primary is adopted.
// Before, the claim went on and the replica took the role once the others had
// answered its state request: a second primary for verify_primary to resolve (with
// polling, 32 dual-primary windows on basic's first 200 seeds became 16).
func TestClaimEndsOnALaterAnswer(t *testing.T) {
	const self, other, smaller = sim.NodeID(3), sim.NodeID(4), sim.NodeID(2)
	id := func(n uint64) rp.RegID { return rp.RegID{Hi: n} }
	for _, c := range []struct {
		name  string
		later rp.Reg
	}{
		{"smaller ID", rp.Reg{Group: "g", ID: id(1), Node: smaller}},
		{"registered primary", rp.Reg{Group: "g", ID: id(9), Node: smaller, Primary: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &rp.Replica{O: &rp.Options{Group: "g", Registries: []sim.NodeID{0, 1}, Period: 50 * time.Millisecond, Lease: 300 * time.Millisecond}}
			r.S.ID, r.S.PrimaryNode = id(5), -1
			r.S.Store, r.S.Dup, r.S.Pending, r.S.SideDone = map[string]int64{}, map[string]int64{}, map[string]rp.Update{}, map[string]int{}
			r.S.LookupSeq, r.S.Purpose = 1, "failure"
			recv := func(from sim.NodeID, m sim.Message) {
				r.Handle(sim.Input{Kind: sim.Receive, Self: self, Now: sim.Time(time.Second), From: from, Msg: m}, &sim.Outbox{})
			}
			mine := rp.Reg{Group: "g", ID: r.S.ID, Node: self}
			recv(0, rp.Found{Seq: 1, Regs: []rp.Reg{mine, {Group: "g", ID: id(7), Node: other}}})
			if !r.S.Claiming {
				t.Fatal("the minimum ID of the first answer did not claim the role")
			}
			recv(1, rp.Found{Seq: 1, Regs: []rp.Reg{mine, c.later}})
			recv(other, rp.Snapshot{Store: map[string]int64{}, Dup: map[string]int64{}})
			if r.S.Claiming || r.S.Primary || r.S.PrimaryNode != smaller {
				t.Fatalf("after an answer naming %+v: claiming %v, primary %v, following %d; want a backup following %d", c.later, r.S.Claiming, r.S.Primary, r.S.PrimaryNode, smaller)
			}
		})
	}
}
