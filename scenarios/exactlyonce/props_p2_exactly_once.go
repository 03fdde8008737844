package eoscen

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/checker"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// p2 is EO-P2: every Reserve history is linearizable against SeatModel (partitioned
// by node and pool); beyond porcupine's partitions, no (AgentId, HopCount) operation
// took effect at two services; the pools' final stable state holds exactly the
// committed operations; and each completed agent's results are the seats its stages
// committed.
func (w *workload) p2() checker.Property {
	lin := checker.Linearizable(PropP2, SeatModel(w.capacity), resOps, 0)
	return checker.Property{
		Name:  PropP2,
		Class: checker.Safety,
		Check: func(r *checker.Run) error {
			if err := w.checkEffects(r); err != nil {
				return err
			}
			if err := lin.Check(r); err != nil {
				return err
			}
			r.Count(len(checker.Values[eo.ResCall](r.History(), eo.ObsCall)), 0)
			return nil
		},
	}
}

func (w *workload) checkEffects(r *checker.Run) error {
	type opKey struct {
		agent eo.AgentID
		hop   int32
	}
	type where struct {
		node sim.NodeID
		pool string
		seat int32
	}
	took := map[opKey]where{}
	perPool := map[string][]eo.Holder{}
	for _, o := range r.History() {
		v, ok := o.Value.(eo.ResReturn)
		if !ok {
			continue
		}
		k := opKey{v.Agent, v.Hop}
		if prev, dup := took[k]; dup {
			return fmt.Errorf("the operation of stage a%d/%d took effect twice: at %s (seat %d) and at %s (seat %d)",
				v.Agent, v.Hop, r.Final[prev.node].Name, prev.seat, r.Final[v.Node].Name, v.Seat)
		}
		took[k] = where{v.Node, v.Pool, v.Seat}
		pk := r.Final[v.Node].Name + "/" + v.Pool
		perPool[pk] = append(perPool[pk], eo.Holder{Agent: v.Agent, Hop: v.Hop, Seat: v.Seat})
	}
	// The durable state of every pool is exactly its committed operations.
	for _, f := range r.Final {
		for _, it := range eo.Inspect(f.Stable) {
			if it.Kind != eo.StablePool {
				continue
			}
			pk := f.Name + "/" + it.PoolName
			if !slices.Equal(it.Pool.Holders, perPool[pk]) {
				return fmt.Errorf("pool %s holds %v in stable storage, but the committed operations were %v", pk, it.Pool.Holders, perPool[pk])
			}
			delete(perPool, pk)
		}
	}
	for _, pk := range sortedKeys(perPool) {
		return fmt.Errorf("pool %s committed %d operations but has no stable state", pk, len(perPool[pk]))
	}
	// A completed agent carries the seats its stages committed.
	for _, d := range checker.Values[eo.Done](r.History(), eo.ObsDone) {
		for _, res := range d.Results {
			got, ok := took[opKey{d.Agent, res.Hop}]
			if res.Seat < 0 {
				if ok {
					return fmt.Errorf("agent a%d: stage %d reserved a seat the agent does not know of", d.Agent, res.Hop)
				}
				continue
			}
			if !ok || got.node != res.Node || got.pool != res.Pool || got.seat != res.Seat {
				return fmt.Errorf("agent a%d: stage %d result %+v does not match the committed reservation", d.Agent, res.Hop, res)
			}
		}
	}
	return nil
}
