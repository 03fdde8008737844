package checker

// Sequential specifications for linearizability checking, as porcupine models.
//
// Conventions shared by every model below:
//   - Inputs are the value types documented with each model (not pointers); outputs
//     are the documented value types. A wrong type is a bug in the caller's extractor:
//     the model panics and CheckLinearizable reports the check as inconclusive.
//   - A nil output is a pending operation (Operation.Pending: the call never
//     returned), so a completed operation whose output the model ignores (a write, a
//     release) still needs a non-nil output, e.g. true. Every model accepts it from every state: it applies the operation's
//     effect if the operation could have taken effect there (a write writes, an
//     acquire that could be granted is granted, a dequeue removes the head), and
//     changes nothing otherwise. Because a pending operation's return is at +infinity,
//     porcupine may also place it after everything else, which covers "never took
//     effect".
//   - One model instance checks one object (one register, pool, queue, lease) per
//     partition; put several objects into one history by giving their operations
//     different Operation.Key values. KV and Counters also partition by the key in
//     their inputs themselves.
//   - Models are pure: Step never mutates its state argument.

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/sim"
)

// Refusals says when a model accepts a refused request (an acquire or allocate whose
// output says "not granted").
type Refusals uint8

const (
	// StrictRefusals: a refusal is legal only when the request could not have been
	// granted (try-acquire semantics; a refusal while enough is free is a violation).
	StrictRefusals Refusals = iota
	// AnyRefusals: a refusal is always legal; only grants are checked (the safety-only
	// view, for protocols that may refuse for reasons of their own, e.g. a timeout).
	AnyRefusals
)

// ---- register ----

// RegisterOp is the kind of a register operation.
type RegisterOp uint8

const (
	// RegRead returns the value.
	RegRead RegisterOp = iota + 1
	// RegWrite sets the value to Value.
	RegWrite
	// RegCAS sets the value to Value if it equals Old, and says whether it did.
	RegCAS
)

// RegisterInput is the input of a Register operation.
type RegisterInput[V comparable] struct {
	Op    RegisterOp
	Value V // RegWrite, RegCAS: the new value
	Old   V // RegCAS: the expected value
}

// Register is a single read/write/compare-and-swap register holding values of type V,
// starting at initial.
//
//	input:  RegisterInput[V]
//	output: RegRead → V (the value read); RegWrite → ignored (any non-nil value, e.g. true);
//	        RegCAS → bool (whether it swapped); nil → pending
func Register[V comparable](initial V) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return initial },
		Step: func(state, input, output any) (bool, any) {
			s, in := state.(V), input.(RegisterInput[V])
			switch in.Op {
			case RegRead:
				return output == nil || output.(V) == s, s
			case RegWrite:
				return true, in.Value
			case RegCAS:
				swap := s == in.Old
				if output != nil && output.(bool) != swap {
					return false, s
				}
				if swap {
					return true, in.Value
				}
				return true, s
			}
			panic(fmt.Sprintf("checker: Register: unknown op %d", in.Op))
		},
		DescribeOperation: func(input, output any) string {
			in := input.(RegisterInput[V])
			switch in.Op {
			case RegRead:
				return fmt.Sprintf("read() → %s", outStr(output))
			case RegWrite:
				return fmt.Sprintf("write(%v)", in.Value)
			default:
				return fmt.Sprintf("cas(%v, %v) → %s", in.Old, in.Value, outStr(output))
			}
		},
		DescribeState: func(state any) string { return fmt.Sprintf("%v", state) },
	}
}

func outStr(output any) string {
	if output == nil {
		return "pending"
	}
	return fmt.Sprintf("%v", output)
}

// ---- key-value map ----

// KVOp is the kind of a key-value operation.
type KVOp uint8

const (
	// KVGet returns the key's value and whether it is present.
	KVGet KVOp = iota + 1
	// KVPut sets the key to Value.
	KVPut
	// KVDelete removes the key.
	KVDelete
)

// KVInput is the input of a KV operation.
type KVInput[V comparable] struct {
	Op    KVOp
	Key   string
	Value V // KVPut
}

// KVOutput is the output of KVGet.
type KVOutput[V comparable] struct {
	Value V
	Found bool
}

type kvState[V comparable] struct {
	v     V
	found bool
}

// KV is a key-value map from strings to values of type V, initially empty. It
// partitions the history by key (keys are independent), so its state is one key's.
//
//	input:  KVInput[V]
//	output: KVGet → KVOutput[V]; KVPut, KVDelete → ignored (any non-nil value); nil → pending
func KV[V comparable]() porcupine.Model {
	return porcupine.Model{
		Partition: partitionBy(func(in any) string { return in.(KVInput[V]).Key }),
		Init:      func() any { return kvState[V]{} },
		Step: func(state, input, output any) (bool, any) {
			s, in := state.(kvState[V]), input.(KVInput[V])
			switch in.Op {
			case KVGet:
				if output == nil {
					return true, s
				}
				o := output.(KVOutput[V])
				return o.Found == s.found && (!o.Found || o.Value == s.v), s
			case KVPut:
				return true, kvState[V]{v: in.Value, found: true}
			case KVDelete:
				return true, kvState[V]{}
			}
			panic(fmt.Sprintf("checker: KV: unknown op %d", in.Op))
		},
		DescribeOperation: func(input, output any) string {
			in := input.(KVInput[V])
			switch in.Op {
			case KVGet:
				if o, ok := output.(KVOutput[V]); ok && !o.Found {
					return fmt.Sprintf("get(%s) → absent", in.Key)
				} else if ok {
					return fmt.Sprintf("get(%s) → %v", in.Key, o.Value)
				}
				return fmt.Sprintf("get(%s) → pending", in.Key)
			case KVPut:
				return fmt.Sprintf("put(%s, %v)", in.Key, in.Value)
			default:
				return fmt.Sprintf("delete(%s)", in.Key)
			}
		},
		DescribeState: func(state any) string {
			s := state.(kvState[V])
			if !s.found {
				return "absent"
			}
			return fmt.Sprintf("%v", s.v)
		},
	}
}

// partitionBy splits a history by a string key of the inputs, in sorted key order.
func partitionBy(key func(input any) string) func([]porcupine.Operation) [][]porcupine.Operation {
	return func(h []porcupine.Operation) [][]porcupine.Operation {
		idx := map[string]int{}
		var keys []string
		var parts [][]porcupine.Operation
		for _, op := range h {
			k := key(op.Input)
			i, ok := idx[k]
			if !ok {
				i = len(parts)
				idx[k] = i
				keys = append(keys, k)
				parts = append(parts, nil)
			}
			parts[i] = append(parts[i], op)
		}
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
		out := make([][]porcupine.Operation, len(order))
		for i, j := range order {
			out[i] = parts[j]
		}
		return out
	}
}

// ---- counters ----

// CounterOp is the kind of a counter operation.
type CounterOp uint8

const (
	// CounterGet returns the counter's value.
	CounterGet CounterOp = iota + 1
	// CounterAdd adds Delta and returns the new value (fetch-and-add).
	CounterAdd
)

// CounterInput is the input of a Counters operation.
type CounterInput struct {
	Op    CounterOp
	Key   string
	Delta int64 // CounterAdd
}

// Counters is a map of int64 counters, each starting at 0, partitioned by key (the
// demo protocol's service).
//
//	input:  CounterInput
//	output: int64 — CounterGet: the value; CounterAdd: the value after adding; nil → pending
func Counters() porcupine.Model {
	return porcupine.Model{
		Partition: partitionBy(func(in any) string { return in.(CounterInput).Key }),
		Init:      func() any { return int64(0) },
		Step: func(state, input, output any) (bool, any) {
			s, in := state.(int64), input.(CounterInput)
			switch in.Op {
			case CounterGet:
				return output == nil || output.(int64) == s, s
			case CounterAdd:
				n := s + in.Delta
				return output == nil || output.(int64) == n, n
			}
			panic(fmt.Sprintf("checker: Counters: unknown op %d", in.Op))
		},
		DescribeOperation: func(input, output any) string {
			in := input.(CounterInput)
			if in.Op == CounterGet {
				return fmt.Sprintf("get(%s) → %s", in.Key, outStr(output))
			}
			return fmt.Sprintf("add(%s, %d) → %s", in.Key, in.Delta, outStr(output))
		},
		DescribeState: func(state any) string { return fmt.Sprintf("%d", state) },
	}
}

// ---- counting semaphore ----

// SemOp is the kind of a semaphore operation.
type SemOp uint8

const (
	// SemAcquire asks for N units for Holder.
	SemAcquire SemOp = iota + 1
	// SemRelease gives N units of Holder back.
	SemRelease
)

// SemInput is the input of a Semaphore operation.
type SemInput struct {
	Op     SemOp
	Holder string // who acquires or releases ("" is a holder like any other)
	N      int    // units; 0 means 1
}

// semState lists the holders with their units, sorted by holder.
type semState struct {
	used    int
	holders []semHolder
}

type semHolder struct {
	name  string
	units int
}

// Semaphore is a counting semaphore of capacity units, initially all free, that
// remembers who holds what (pool allocation of identical units).
//
//	input:  SemInput
//	output: SemAcquire → bool (true: granted, false: refused); SemRelease → ignored
//	        (any non-nil value); nil → pending
//
// A grant is legal iff the units held plus N fit in capacity. A refusal is legal iff
// they do not (StrictRefusals) or always (AnyRefusals). A release is legal iff Holder
// holds at least N units: releasing what one does not hold is a violation.
func Semaphore(capacity int, refusals Refusals) porcupine.Model {
	units := func(n int) int {
		if n <= 0 {
			return 1
		}
		return n
	}
	held := func(s semState, h string) (int, int) {
		i, ok := slices.BinarySearchFunc(s.holders, h, func(x semHolder, h string) int { return strings.Compare(x.name, h) })
		if !ok {
			return i, 0
		}
		return i, s.holders[i].units
	}
	with := func(s semState, h string, delta int) semState {
		i, cur := held(s, h)
		hs := slices.Clone(s.holders)
		switch {
		case cur == 0:
			hs = slices.Insert(hs, i, semHolder{h, delta})
		case cur+delta == 0:
			hs = slices.Delete(hs, i, i+1)
		default:
			hs[i].units += delta
		}
		return semState{used: s.used + delta, holders: hs}
	}
	return porcupine.Model{
		Init: func() any { return semState{} },
		Step: func(state, input, output any) (bool, any) {
			s, in := state.(semState), input.(SemInput)
			n := units(in.N)
			switch in.Op {
			case SemAcquire:
				fits := s.used+n <= capacity
				if output == nil {
					if fits {
						return true, with(s, in.Holder, n)
					}
					return true, s
				}
				if output.(bool) {
					if !fits {
						return false, s
					}
					return true, with(s, in.Holder, n)
				}
				return refusals == AnyRefusals || !fits, s
			case SemRelease:
				_, cur := held(s, in.Holder)
				if cur < n {
					return output == nil, s // a pending release of units not held: no effect
				}
				return true, with(s, in.Holder, -n)
			}
			panic(fmt.Sprintf("checker: Semaphore: unknown op %d", in.Op))
		},
		Equal: func(a, b any) bool {
			x, y := a.(semState), b.(semState)
			return x.used == y.used && slices.Equal(x.holders, y.holders)
		},
		Hash: func(state any) uint64 {
			h := fnv.New64a()
			for _, x := range state.(semState).holders {
				fmt.Fprintf(h, "%s\x00%d\x00", x.name, x.units)
			}
			return h.Sum64()
		},
		DescribeOperation: func(input, output any) string {
			in := input.(SemInput)
			verb := "acquire"
			if in.Op == SemRelease {
				verb = "release"
			}
			s := fmt.Sprintf("%s(%s, %d)", verb, in.Holder, units(in.N))
			if in.Op == SemAcquire {
				s += " → " + grantStr(output)
			}
			return s
		},
		DescribeState: func(state any) string {
			s := state.(semState)
			parts := make([]string, len(s.holders))
			for i, x := range s.holders {
				parts[i] = fmt.Sprintf("%s:%d", x.name, x.units)
			}
			return fmt.Sprintf("%d/%d used {%s}", s.used, capacity, strings.Join(parts, " "))
		},
	}
}

func grantStr(output any) string {
	switch output {
	case nil:
		return "pending"
	case true:
		return "granted"
	case false:
		return "refused"
	}
	return fmt.Sprintf("%v", output)
}

// ---- pool of named units ----

// PoolOp is the kind of a pool operation.
type PoolOp uint8

const (
	// PoolAllocate asks for a unit for Holder: Unit names the one wanted, "" any.
	PoolAllocate PoolOp = iota + 1
	// PoolRelease gives Unit back.
	PoolRelease
)

// PoolInput is the input of a Pool operation.
type PoolInput struct {
	Op     PoolOp
	Holder string
	Unit   string
}

// Pool is an allocator of distinct named units (resources), initially all free.
//
//	input:  PoolInput
//	output: PoolAllocate → string (the unit granted, "" for a refusal);
//	        PoolRelease → ignored (any non-nil value); nil → pending
//
// A grant of unit u is legal iff u is in the pool, free, and the one asked for (when
// Unit is set). A refusal is legal iff no acceptable unit is free (StrictRefusals) or
// always (AnyRefusals). A release is legal iff Holder holds Unit. A pending allocate
// takes the first acceptable free unit.
func Pool(units []string, refusals Refusals) porcupine.Model {
	units = slices.Clone(units)
	index := func(u string) int { return slices.Index(units, u) }
	// State: the holder of each unit ("" = free), as a string slice aligned with units.
	return porcupine.Model{
		Init: func() any { return make([]string, len(units)) },
		Step: func(state, input, output any) (bool, any) {
			s, in := state.([]string), input.(PoolInput)
			free := func(i int) bool { return i >= 0 && s[i] == "" && (in.Unit == "" || units[i] == in.Unit) }
			set := func(i int, h string) []string {
				c := slices.Clone(s)
				c[i] = h
				return c
			}
			switch in.Op {
			case PoolAllocate:
				if output == nil {
					for i := range units {
						if free(i) {
							return true, set(i, in.Holder)
						}
					}
					return true, s
				}
				got := output.(string)
				if got == "" {
					if refusals == AnyRefusals {
						return true, s
					}
					for i := range units {
						if free(i) {
							return false, s
						}
					}
					return true, s
				}
				i := index(got)
				if !free(i) {
					return false, s
				}
				return true, set(i, in.Holder)
			case PoolRelease:
				i := index(in.Unit)
				if i < 0 || s[i] != in.Holder || in.Holder == "" {
					return output == nil, s
				}
				return true, set(i, "")
			}
			panic(fmt.Sprintf("checker: Pool: unknown op %d", in.Op))
		},
		Equal: func(a, b any) bool { return slices.Equal(a.([]string), b.([]string)) },
		Hash: func(state any) uint64 {
			h := fnv.New64a()
			for _, x := range state.([]string) {
				h.Write([]byte(x))
				h.Write([]byte{0})
			}
			return h.Sum64()
		},
		DescribeOperation: func(input, output any) string {
			in := input.(PoolInput)
			if in.Op == PoolRelease {
				return fmt.Sprintf("release(%s, %s)", in.Holder, in.Unit)
			}
			want := in.Unit
			if want == "" {
				want = "any"
			}
			got := outStr(output)
			if output == "" {
				got = "refused"
			}
			return fmt.Sprintf("allocate(%s, %s) → %s", in.Holder, want, got)
		},
		DescribeState: func(state any) string {
			s := state.([]string)
			parts := make([]string, len(units))
			for i, u := range units {
				h := s[i]
				if h == "" {
					h = "free"
				}
				parts[i] = u + ":" + h
			}
			return "{" + strings.Join(parts, " ") + "}"
		},
	}
}

// ---- FIFO queue ----

// QueueOp is the kind of a queue operation.
type QueueOp uint8

const (
	// Enqueue appends Value.
	Enqueue QueueOp = iota + 1
	// Dequeue removes and returns the head.
	Dequeue
)

// QueueInput is the input of a Queue operation.
type QueueInput[V comparable] struct {
	Op    QueueOp
	Value V // Enqueue
}

// Dequeued is the output of Dequeue: the head, or OK false if the queue was empty.
type Dequeued[V comparable] struct {
	Value V
	OK    bool
}

// Queue is a FIFO queue of values of type V, initially empty.
//
//	input:  QueueInput[V]
//	output: Enqueue → ignored (any non-nil value); Dequeue → Dequeued[V]; nil → pending
func Queue[V comparable]() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return []V(nil) },
		Step: func(state, input, output any) (bool, any) {
			s, in := state.([]V), input.(QueueInput[V])
			switch in.Op {
			case Enqueue:
				c := make([]V, len(s), len(s)+1)
				copy(c, s)
				return true, append(c, in.Value)
			case Dequeue:
				if output == nil {
					if len(s) == 0 {
						return true, s
					}
					return true, s[1:]
				}
				o := output.(Dequeued[V])
				if !o.OK {
					return len(s) == 0, s
				}
				if len(s) == 0 || s[0] != o.Value {
					return false, s
				}
				return true, s[1:] // sharing the tail is safe: states are never mutated
			}
			panic(fmt.Sprintf("checker: Queue: unknown op %d", in.Op))
		},
		Equal: func(a, b any) bool { return slices.Equal(a.([]V), b.([]V)) },
		DescribeOperation: func(input, output any) string {
			in := input.(QueueInput[V])
			if in.Op == Enqueue {
				return fmt.Sprintf("enqueue(%v)", in.Value)
			}
			switch o := output.(type) {
			case nil:
				return "dequeue() → pending"
			case Dequeued[V]:
				if !o.OK {
					return "dequeue() → empty"
				}
				return fmt.Sprintf("dequeue() → %v", o.Value)
			}
			return fmt.Sprintf("dequeue() → %v", output)
		},
		DescribeState: func(state any) string { return fmt.Sprintf("%v", state) },
	}
}

// ---- lease register ----

// LeaseOp is the kind of a lease operation.
type LeaseOp uint8

const (
	// LeaseAcquire asks for (or renews) the lease for Holder at time At for Term.
	LeaseAcquire LeaseOp = iota + 1
	// LeaseRelease gives the lease up (if Holder holds it).
	LeaseRelease
	// LeaseRead asks who holds a valid lease at time At.
	LeaseRead
)

// LeaseInput is the input of a LeaseRegister operation.
//
// At is the global virtual time at which the operation takes effect (e.g. the
// observation time of the server's grant or of the read); for a pending operation
// whose effect time is unknown, use its call time. The lease register is a register
// whose value expires: the lease granted at At for Term is valid during [At, At+Term).
type LeaseInput struct {
	Op     LeaseOp
	Holder string
	At     sim.Time
	Term   time.Duration // LeaseAcquire
}

// leaseState is the holder, the lease's expiry and the latest effect time linearized.
type leaseState struct {
	holder string
	expiry sim.Time
	clock  sim.Time
}

func (s leaseState) validAt(t sim.Time) bool { return s.holder != "" && t < s.expiry }

// LeaseRegister is a single lease, initially free.
//
//	input:  LeaseInput
//	output: LeaseAcquire → bool (true: granted until At+Term; false: refused);
//	        LeaseRelease → ignored (any non-nil value); LeaseRead → string (the holder of a valid
//	        lease at At, "" if none); nil → pending
//
// The linearization must respect the effect times: an operation cannot be placed
// before one with a later At (so the model is exact about expiry). A grant is legal iff
// at At the lease is free, expired, or already Holder's (a renewal). A refusal is legal
// iff someone else holds a valid lease at At (StrictRefusals) or always (AnyRefusals).
// A release frees the lease if Holder holds it and is otherwise a no-op (a stale
// release after the lease moved on). A read must name the valid holder at At. A pending
// operation placed out of time order has no effect.
func LeaseRegister(refusals Refusals) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return leaseState{} },
		Step: func(state, input, output any) (bool, any) {
			s, in := state.(leaseState), input.(LeaseInput)
			if in.At < s.clock {
				return output == nil, s // effect times must not go backwards
			}
			next := s
			next.clock = in.At
			free := !s.validAt(in.At) || s.holder == in.Holder
			switch in.Op {
			case LeaseAcquire:
				granted := free
				if output != nil {
					granted = output.(bool)
					if granted && !free {
						return false, s
					}
					if !granted && free && refusals == StrictRefusals {
						return false, s
					}
				}
				if granted {
					next.holder, next.expiry = in.Holder, in.At.Add(in.Term)
				}
				return true, next
			case LeaseRelease:
				if s.holder == in.Holder {
					next.holder, next.expiry = "", 0
				}
				return true, next
			case LeaseRead:
				want := ""
				if s.validAt(in.At) {
					want = s.holder
				}
				return output == nil || output.(string) == want, next
			}
			panic(fmt.Sprintf("checker: LeaseRegister: unknown op %d", in.Op))
		},
		DescribeOperation: func(input, output any) string {
			in := input.(LeaseInput)
			switch in.Op {
			case LeaseAcquire:
				return fmt.Sprintf("acquire(%s, at %v, for %v) → %s", in.Holder, in.At, in.Term, grantStr(output))
			case LeaseRelease:
				return fmt.Sprintf("release(%s, at %v)", in.Holder, in.At)
			default:
				h := outStr(output)
				if output == "" {
					h = "none"
				}
				return fmt.Sprintf("read(at %v) → %s", in.At, h)
			}
		},
		DescribeState: func(state any) string {
			s := state.(leaseState)
			if s.holder == "" {
				return fmt.Sprintf("free (t=%v)", s.clock)
			}
			return fmt.Sprintf("%s until %v (t=%v)", s.holder, s.expiry, s.clock)
		},
	}
}
