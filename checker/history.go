package checker

import "simrun/sim"

// History is a run's observations in order.
type History []sim.Observation

// Kind returns the observations of the given kinds, in order.
func (h History) Kind(kinds ...string) History {
	var out History
	for _, o := range h {
		for _, k := range kinds {
			if o.Kind == k {
				out = append(out, o)
				break
			}
		}
	}
	return out
}

// Values returns the values of the observations of one kind, asserted to T. An
// observation of that kind with another value type panics (a protocol bug).
func Values[T any](h History, kind string) []T {
	var out []T
	for _, o := range h {
		if o.Kind == kind {
			out = append(out, o.Value.(T))
		}
	}
	return out
}

// History returns the run's observations.
func (r *Run) History() History { return History(r.Result.History) }
