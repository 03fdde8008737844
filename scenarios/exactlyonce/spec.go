package eoscen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/checker"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// The sequential specification of one pool of one node's resource service (EO-P2):
// Reserve(agent, hop) returns the next free seat (1, 2, ...) while seats remain and 0
// once the pool is full, and each (AgentId, HopCount) operation occurs at most once —
// a second Reserve by the same stage is illegal in every state. That last clause is
// what makes a duplicated stage execution a linearizability violation.

// ReserveIn is the input of a Reserve operation.
type ReserveIn struct {
	Agent eo.AgentID
	Hop   int32
}

type seatState struct {
	taken int32
	done  []ReserveIn // sorted
}

func (s seatState) has(in ReserveIn) bool {
	_, ok := slices.BinarySearchFunc(s.done, in, cmpIn)
	return ok
}

func cmpIn(a, b ReserveIn) int {
	if a.Agent != b.Agent {
		return int(a.Agent - b.Agent)
	}
	return int(a.Hop - b.Hop)
}

// SeatModel is the porcupine model of a pool with capacity seats. A nil output is a
// pending Reserve (its transaction's outcome never became known): it may have taken
// effect or not (the checker package's convention: a pending operation is accepted in
// every state, applying its effect where it could have taken effect).
func SeatModel(capacity int32) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return seatState{} },
		Step: func(state, input, output any) (bool, any) {
			s := state.(seatState)
			in := input.(ReserveIn)
			if s.has(in) {
				// EO-P2: each (AgentId, HopCount) operation occurs once. A pending
				// call (its outcome never became known) that comes after the same
				// stage's operation simply did not take effect.
				return output == nil, s
			}
			want := int32(0)
			if s.taken < capacity {
				want = s.taken + 1
			}
			if output != nil && output.(int32) != want {
				return false, s
			}
			ns := seatState{taken: s.taken, done: slices.Clone(s.done)}
			if want > 0 {
				ns.taken++
			}
			i, _ := slices.BinarySearchFunc(ns.done, in, cmpIn)
			ns.done = slices.Insert(ns.done, i, in)
			return true, ns
		},
		Equal: func(a, b any) bool {
			x, y := a.(seatState), b.(seatState)
			return x.taken == y.taken && slices.Equal(x.done, y.done)
		},
		DescribeOperation: func(input, output any) string {
			in := input.(ReserveIn)
			if output == nil {
				return fmt.Sprintf("reserve(a%d/%d) pending", in.Agent, in.Hop)
			}
			return fmt.Sprintf("reserve(a%d/%d) -> seat %d", in.Agent, in.Hop, output.(int32))
		},
		DescribeState: func(state any) string {
			s := state.(seatState)
			parts := make([]string, len(s.done))
			for i, d := range s.done {
				parts[i] = fmt.Sprintf("a%d/%d", d.Agent, d.Hop)
			}
			return fmt.Sprintf("taken %d; done {%s}", s.taken, strings.Join(parts, " "))
		},
	}
}

// resOps extracts the resource operations of a run: one porcupine operation per
// Reserve call, keyed by node and pool; a call whose transaction committed returns at
// its ResReturn, one that rolled back is dropped (it did not happen), one with neither
// is pending.
func resOps(r *checker.Run) ([]checker.Operation, error) {
	type key struct {
		node sim.NodeID
		tid  eo.Tid
	}
	idx := map[key]int{}
	var ops []checker.Operation
	var aborted []bool
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.ResCall:
			k := key{v.Node, v.Tid}
			if _, dup := idx[k]; dup {
				return nil, fmt.Errorf("%s called Reserve twice in transaction %v", r.Final[v.Node].Name, v.Tid)
			}
			idx[k] = len(ops)
			ops = append(ops, checker.Operation{
				Key:     r.Final[v.Node].Name + "/" + v.Pool,
				Client:  int(v.Agent),
				Input:   ReserveIn{Agent: v.Agent, Hop: v.Hop},
				Call:    o.Index,
				Pending: true,
			})
			aborted = append(aborted, false)
		case eo.ResReturn:
			i, ok := idx[key{v.Node, v.Tid}]
			if !ok || !ops[i].Pending || aborted[i] {
				return nil, fmt.Errorf("%s committed reservation of transaction %v without a matching open call", r.Final[v.Node].Name, v.Tid)
			}
			ops[i].Pending, ops[i].Output, ops[i].Return = false, v.Seat, o.Index
		case eo.ResAbort:
			i, ok := idx[key{v.Node, v.Tid}]
			if !ok || !ops[i].Pending {
				return nil, fmt.Errorf("%s rolled back reservation of transaction %v without a matching open call", r.Final[v.Node].Name, v.Tid)
			}
			aborted[i] = true
		}
	}
	out := ops[:0]
	for i, op := range ops {
		if !aborted[i] {
			out = append(out, op)
		}
	}
	return out, nil
}
