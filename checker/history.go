package checker

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// History is a run's observations in order: each carries its global virtual time, the
// node that recorded it, its kind and its payload (sim.Observation). Observation.Index
// is a total order consistent with time; checkers use it to order events that share a
// virtual time.
type History []sim.Observation

// Kind returns the observations of the given kinds, in order (in a slice of their
// number: a history of millions of observations is not copied twice over).
func (h History) Kind(kinds ...string) History {
	is := func(o *sim.Observation) bool { return slices.Contains(kinds, o.Kind) }
	n := 0
	for i := range h {
		if is(&h[i]) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make(History, 0, n)
	for i := range h {
		if is(&h[i]) {
			out = append(out, h[i])
		}
	}
	return out
}

// Node returns the observations recorded by node n, in order.
func (h History) Node(n sim.NodeID) History {
	var out History
	for _, o := range h {
		if o.Node == n {
			out = append(out, o)
		}
	}
	return out
}

// Between returns the observations with from <= Time < to, in order.
func (h History) Between(from, to sim.Time) History {
	var out History
	for _, o := range h {
		if o.Time >= from && o.Time < to {
			out = append(out, o)
		}
	}
	return out
}

// Kinds returns the distinct kinds in the history, sorted.
func (h History) Kinds() []string {
	var ks []string
	for _, o := range h {
		if !slices.Contains(ks, o.Kind) {
			ks = append(ks, o.Kind)
		}
	}
	slices.Sort(ks)
	return ks
}

// Values returns the values of the observations of one kind, asserted to T. An
// observation of that kind with another value type panics (a protocol bug).
func Values[T any](h History, kind string) []T {
	n := 0
	for i := range h {
		if h[i].Kind == kind {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]T, 0, n)
	for i := range h {
		if h[i].Kind == kind {
			out = append(out, h[i].Value.(T))
		}
	}
	return out
}

// History returns the run's observations.
func (r *Run) History() History { return History(r.Result.History) }

// Describe names an observation for a verdict: "#12 at 1.5s on c2: return {…}".
func (r *Run) Describe(o sim.Observation) string {
	node := fmt.Sprintf("node %d", o.Node)
	if int(o.Node) >= 0 && int(o.Node) < len(r.Final) {
		node = r.Final[o.Node].Name
	}
	return fmt.Sprintf("#%d at %v on %s: %s %+v", o.Index, o.Time, node, o.Kind, o.Value)
}

// ---- invariants ----

// Invariant returns a safety property checked at every observation: check returns an
// error at the first observation that breaks it, and the verdict names that
// observation (index, time, node, kind, payload). Kinds restricts the observations
// checked (none: all).
func Invariant(name string, check func(o sim.Observation) error, kinds ...string) Property {
	return Property{
		Name: name, Class: Safety,
		Check: func(r *Run) error {
			h := r.History()
			if len(kinds) > 0 {
				h = h.Kind(kinds...)
			}
			for _, o := range h {
				if err := check(o); err != nil {
					return fmt.Errorf("%v (at observation %s)", err, r.Describe(o))
				}
			}
			return nil
		},
	}
}

// Always returns a safety property that folds step over the history in order from the
// state init returns (a fresh state per run: runs are checked concurrently in sweeps).
// step returns the next state, or an error at the first observation where the
// invariant breaks; the verdict names that observation. Use it for invariants over
// the history so far ("never two holders at once", "stages commit in order").
func Always[S any](name string, init func(r *Run) S, step func(s S, o sim.Observation) (S, error)) Property {
	return Property{
		Name: name, Class: Safety,
		Check: func(r *Run) error {
			s := init(r)
			for _, o := range r.History() {
				var err error
				if s, err = step(s, o); err != nil {
					return fmt.Errorf("%v (at observation %s)", err, r.Describe(o))
				}
			}
			return nil
		},
	}
}

// FinalStates returns a safety property over the final state of every node that is up
// at the end of the run and whose state has type N (other nodes are skipped): check
// returns an error for a node whose state is wrong.
func FinalStates[N sim.Node](name string, check func(node string, n N) error) Property {
	return Property{
		Name: name, Class: Safety,
		Check: func(r *Run) error {
			for _, f := range r.Final {
				if !f.Up {
					continue
				}
				n, ok := f.State.(N)
				if !ok {
					continue
				}
				if err := check(f.Name, n); err != nil {
					return fmt.Errorf("final state of %s: %w", f.Name, err)
				}
			}
			return nil
		},
	}
}

// ---- call/return adapter ----

// CallReturn says how to pair call and return observations of one kind of operation
// into linearizability Operations. C and R are the payload types of the two
// observation kinds.
type CallReturn[C, R any] struct {
	// Call and Return are the observation kinds.
	Call, Return string
	// CallID and ReturnID give the identity that links a call to its return (e.g.
	// client and sequence number); it must be comparable and unique per call.
	CallID   func(C) any
	ReturnID func(R) any
	// Key partitions the operations (a key, agent, pool or lease); nil: one partition.
	Key func(C) string
	// Client names the visualization row; nil: the calling observation's node.
	Client func(C) int
	// Input builds the model's input from the call.
	Input func(C) any
	// Output builds the model's output from the call and its return.
	Output func(C, R) any
}

// Ops pairs calls with returns in h. A call with no return becomes a pending
// operation; a return without a call, a second return, or a repeated call identity is
// an error (the history itself is malformed). Call and Return times are observation
// indices. Operations come out in call order.
func Ops[C, R any](h History, s CallReturn[C, R]) ([]Operation, error) {
	type open struct {
		i    int
		call C
	}
	var ops []Operation
	byID := map[any]*open{}
	done := map[any]bool{}
	for _, o := range h {
		switch o.Kind {
		case s.Call:
			c, ok := o.Value.(C)
			if !ok {
				return nil, fmt.Errorf("observation #%d: %s payload is %T, want %T", o.Index, o.Kind, o.Value, c)
			}
			id := s.CallID(c)
			if _, dup := byID[id]; dup || done[id] {
				return nil, fmt.Errorf("observation #%d: second %s with identity %v", o.Index, s.Call, id)
			}
			op := Operation{Client: int(o.Node), Input: s.Input(c), Call: o.Index, Pending: true}
			if s.Key != nil {
				op.Key = s.Key(c)
			}
			if s.Client != nil {
				op.Client = s.Client(c)
			}
			byID[id] = &open{i: len(ops), call: c}
			ops = append(ops, op)
		case s.Return:
			rv, ok := o.Value.(R)
			if !ok {
				return nil, fmt.Errorf("observation #%d: %s payload is %T, want %T", o.Index, o.Kind, o.Value, rv)
			}
			id := s.ReturnID(rv)
			c, ok := byID[id]
			if !ok {
				if done[id] {
					return nil, fmt.Errorf("observation #%d: second %s for identity %v", o.Index, s.Return, id)
				}
				return nil, fmt.Errorf("observation #%d: %s for identity %v without a call", o.Index, s.Return, id)
			}
			delete(byID, id)
			done[id] = true
			op := &ops[c.i]
			op.Pending, op.Return, op.Output = false, o.Index, s.Output(c.call, rv)
		}
	}
	return ops, nil
}
