package lsscen

import (
	"fmt"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/sim"
)

// noCallbackRefused (LS-5): an openSession without callback is refused, and only the
// probe's deliberately malformed requests lack one (the player's own always carry
// it): per pair, the refusals for a missing callback are at most the malformed
// requests sent.
func (e *env) noCallbackRefused(r *checker.Run) error {
	sent := map[[2]sim.NodeID]int{}
	refused := 0
	for o := range e.li.get(r).scanned {
		switch v := o.Value.(type) {
		case ls.ProbeMalformed:
			sent[[2]sim.NodeID{o.Node, v.To}]++
		case ls.MPEvent:
			if o.Kind != ls.KindMPRefuse || v.Why != ls.WhyNoCallback {
				continue
			}
			k := [2]sim.NodeID{v.From, v.To}
			if sent[k] == 0 {
				return fmt.Errorf("%s refused an openSession from %s for lacking a callback that no probe sent malformed: the player's own request lacked it", r.Final[v.To].Name, r.Final[v.From].Name)
			}
			sent[k]--
			refused++
		}
	}
	r.Note(fmt.Sprintf("%d malformed requests checked: refused", refused))
	return nil
}
