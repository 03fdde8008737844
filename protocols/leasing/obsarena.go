package leasing

// The runtime records its observations' values as pointers (*ObsGrant, *ObsEnd, …;
// applications record theirs, ObsIdle included, as they like). A struct value stored in
// an interface is copied to the heap, one allocation per observation: two thirds of a
// swarm run's allocations (issue 16). The frequent ones are cut instead from arrays
// the runtime keeps per type (obsArena), which the history then points into. An
// element is written once and never changed, so a history can hold it for good; a
// new array is started when one is full, never reused. The arena is not device state:
// a copy of the runtime (Clone) starts its own, and Inspect leaves it out.

// obsChunk is the largest array the arena allocates at once (arrays start small and
// double: a model checker's copy records a few observations per step).
const obsChunk = 64

// chunk hands out the elements of its current array in order.
type chunk[T any] struct{ a []T }

// put stores v in the next free element and returns its address.
func (c *chunk[T]) put(v T) *T {
	if len(c.a) == cap(c.a) {
		c.a = make([]T, 0, min(max(2*cap(c.a), 1), obsChunk))
	}
	c.a = append(c.a, v)
	return &c.a[len(c.a)-1]
}

// obsArena holds the arrays of the runtime's frequent observation values.
type obsArena struct {
	grant    chunk[ObsGrant]
	resolve  chunk[ObsResolve]
	renew    chunk[ObsRenew]
	end      chunk[ObsEnd]
	listener chunk[ObsListener]
	send     chunk[ObsSend]
	recv     chunk[ObsRecv]
	forward  chunk[ObsForward]
	future   chunk[ObsFuture]
}
