package rpscen

import (
	"fmt"
	"time"

	"github.com/simrun-dev/simrun/checker"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/sim"
)

// RP-2 and RP-3 without faults, nothing is dropped: a request waits at most for the
// requests queued before it, one per other client. Passive: the request travels to
// the primary (1 link delay), each request ahead of it and its own take the backups'
// Done/ACK round trip (2 each), the answer travels back (1), and the client's first
// call looks the group up first (2): (2·clients + 4) link delays. Active: the
// sequencer orders and answers at once: 4. A dropped request shows as a wait for the
// client's re-send timer. Requests called before the group settled — its first
// primary took the role three periods and a round trip ago — are exempt (the client's
// first lookup may find none, and a replica that lost the race for the role may hold
// a backup until its ping loop finds the primary).
func (e *env) latency(r *checker.Run) error {
	first := sim.Time(-1)
	calls := map[string]sim.Observation{}
	checked, exempt := 0, 0
	var worst time.Duration
	// A replica that lost the startup race for the role may hold a backup until its
	// ping loop finds the primary (up to two periods and a round trip, polling).
	settle := 3*e.period + 2*maxLink
	bounds := map[sim.NodeID]time.Duration{}
	for _, c := range e.d.clients {
		n := 4
		if !c.group.active {
			n = 2*len(e.d.clients) + 4
		}
		bounds[c.node] = time.Duration(n) * maxLink
	}
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case rp.Role:
			if v.Primary && first < 0 {
				first = o.Time
			}
		case rp.ClientOp:
			k := fmt.Sprintf("%d/%d", v.Client, v.Seq)
			switch o.Kind {
			case rp.ObsCall:
				calls[k] = o
			case rp.ObsReturn:
				c, ok := calls[k]
				if !ok {
					continue
				}
				if first < 0 || c.Time < first.Add(settle) {
					exempt++
					continue
				}
				checked++
				lat := o.Time.Sub(c.Time)
				worst = max(worst, lat)
				if b := bounds[o.Node]; lat > b {
					return fmt.Errorf("request %s of %s took %v without a fault, more than %v (every other client's request ahead of it)", k, r.Final[o.Node].Name, lat, b)
				}
			}
		}
	}
	r.Note(fmt.Sprintf("%d requests checked (slowest %v), %d exempt (called before the group settled)", checked, worst, exempt))
	return nil
}
