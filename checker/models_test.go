package checker

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/sim"
)

// op builds an operation on key "" by client c over [call, ret].
func op(c int, call, ret int64, in, out any) Operation {
	return Operation{Client: c, Input: in, Output: out, Call: call, Return: ret}
}

// pending builds a call that never returned.
func pending(c int, call int64, in any) Operation {
	return Operation{Client: c, Input: in, Call: call, Pending: true}
}

type modelCase struct {
	name  string
	ops   []Operation
	legal bool
}

func runModelCases(t *testing.T, model porcupine.Model, cases []modelCase) {
	t.Helper()
	for _, c := range cases {
		res := CheckLinearizable(model, c.ops, 10*time.Second)
		if res.Err != nil {
			t.Errorf("%s: %v", c.name, res.Err)
			continue
		}
		want := porcupine.Illegal
		if c.legal {
			want = porcupine.Ok
		}
		if res.Result != want {
			t.Errorf("%s: %s, want %s", c.name, res.Result, want)
		}
		if want == porcupine.Illegal && !res.Located {
			t.Errorf("%s: illegal partition not located", c.name)
		}
	}
}

func TestRegisterModel(t *testing.T) {
	type in = RegisterInput[int]
	w := func(v int) in { return in{Op: RegWrite, Value: v} }
	r := in{Op: RegRead}
	cas := func(old, v int) in { return in{Op: RegCAS, Old: old, Value: v} }
	runModelCases(t, Register(0), []modelCase{
		{"sequential", []Operation{op(0, 0, 1, w(1), nil), op(1, 2, 3, r, 1)}, true},
		{"initial value", []Operation{op(0, 0, 1, r, 0)}, true},
		{"stale read after write returned", []Operation{op(0, 0, 1, w(1), nil), op(1, 2, 3, r, 0)}, false},
		{"concurrent read sees either", []Operation{op(0, 0, 5, w(1), nil), op(1, 1, 2, r, 0), op(2, 3, 4, r, 1)}, true},
		// The classic non-linearizable history: a read sees the new value, a later read
		// the old one, while the write is still in progress.
		{"new then old", []Operation{op(0, 0, 10, w(1), nil), op(1, 1, 2, r, 1), op(2, 3, 4, r, 0)}, false},
		{"read of a value never written", []Operation{op(0, 0, 1, r, 7)}, false},
		{"cas succeeds once", []Operation{op(0, 0, 3, cas(0, 1), true), op(1, 1, 4, cas(0, 2), false), op(2, 5, 6, r, 1)}, true},
		{"two cas on the same old value both succeed", []Operation{op(0, 0, 3, cas(0, 1), true), op(1, 1, 4, cas(0, 2), true)}, false},
		{"cas reported failing although it matched", []Operation{op(0, 0, 1, cas(0, 1), false), op(0, 2, 3, r, 0)}, false},
		{"pending write seen", []Operation{pending(0, 0, w(5)), op(1, 1, 2, r, 5)}, true},
		{"pending write not seen", []Operation{pending(0, 0, w(5)), op(1, 1, 2, r, 0)}, true},
		{"pending write cannot precede its call", []Operation{op(1, 0, 1, r, 5), pending(0, 2, w(5))}, false},
		{"pending read", []Operation{pending(0, 0, r), op(1, 1, 2, w(1), nil)}, true},
	})
}

func TestKVModel(t *testing.T) {
	type in = KVInput[string]
	get := func(k string) in { return in{Op: KVGet, Key: k} }
	put := func(k, v string) in { return in{Op: KVPut, Key: k, Value: v} }
	del := func(k string) in { return in{Op: KVDelete, Key: k} }
	found := func(v string) KVOutput[string] { return KVOutput[string]{Value: v, Found: true} }
	absent := KVOutput[string]{}
	runModelCases(t, KV[string](), []modelCase{
		{"absent at first", []Operation{op(0, 0, 1, get("x"), absent)}, true},
		{"put then get", []Operation{op(0, 0, 1, put("x", "a"), nil), op(1, 2, 3, get("x"), found("a"))}, true},
		{"keys independent", []Operation{op(0, 0, 1, put("x", "a"), nil), op(1, 2, 3, get("y"), absent)}, true},
		{"value from another key", []Operation{op(0, 0, 1, put("x", "a"), nil), op(1, 2, 3, get("y"), found("a"))}, false},
		{"delete", []Operation{op(0, 0, 1, put("x", "a"), nil), op(0, 2, 3, del("x"), nil), op(1, 4, 5, get("x"), absent)}, true},
		{"get after delete finds", []Operation{op(0, 0, 1, put("x", "a"), nil), op(0, 2, 3, del("x"), nil), op(1, 4, 5, get("x"), found("a"))}, false},
		{"pending put", []Operation{pending(0, 0, put("x", "b")), op(1, 1, 2, get("x"), found("b")), op(1, 3, 4, get("x"), found("b"))}, true},
		{"pending put seen then unseen", []Operation{pending(0, 0, put("x", "b")), op(1, 1, 2, get("x"), found("b")), op(1, 3, 4, get("x"), absent)}, false},
	})
}

func TestCountersModel(t *testing.T) {
	add := func(k string, d int64) CounterInput { return CounterInput{Op: CounterAdd, Key: k, Delta: d} }
	get := func(k string) CounterInput { return CounterInput{Op: CounterGet, Key: k} }
	runModelCases(t, Counters(), []modelCase{
		{"adds", []Operation{op(0, 0, 1, add("a", 2), int64(2)), op(1, 2, 3, add("a", 3), int64(5)), op(2, 4, 5, get("a"), int64(5))}, true},
		{"concurrent adds in either order", []Operation{op(0, 0, 5, add("a", 2), int64(5)), op(1, 1, 4, add("a", 3), int64(3))}, true},
		{"an add applied twice", []Operation{op(0, 0, 1, add("a", 2), int64(2)), op(1, 2, 3, get("a"), int64(4))}, false},
		{"keys independent", []Operation{op(0, 0, 1, add("a", 2), int64(2)), op(1, 2, 3, get("b"), int64(0))}, true},
		{"pending add may have happened", []Operation{pending(0, 0, add("a", 2)), op(1, 1, 2, add("a", 1), int64(3))}, true},
		{"pending add may not have happened", []Operation{pending(0, 0, add("a", 2)), op(1, 1, 2, add("a", 1), int64(1))}, true},
		{"a value no order explains", []Operation{pending(0, 0, add("a", 2)), op(1, 1, 2, add("a", 1), int64(4))}, false},
	})
}

func TestSemaphoreModel(t *testing.T) {
	acq := func(h string, n int) SemInput { return SemInput{Op: SemAcquire, Holder: h, N: n} }
	rel := func(h string, n int) SemInput { return SemInput{Op: SemRelease, Holder: h, N: n} }
	cases := []modelCase{
		{"within capacity", []Operation{op(0, 0, 1, acq("a", 1), true), op(1, 2, 3, acq("b", 1), true)}, true},
		{"over capacity", []Operation{op(0, 0, 1, acq("a", 1), true), op(1, 2, 3, acq("b", 1), true), op(2, 4, 5, acq("c", 1), true)}, false},
		{"multi-unit over capacity", []Operation{op(0, 0, 1, acq("a", 2), true), op(1, 2, 3, acq("b", 0), true)}, false},
		{"release frees", []Operation{op(0, 0, 1, acq("a", 2), true), op(0, 2, 3, rel("a", 2), true), op(1, 4, 5, acq("b", 2), true)}, true},
		{"release of units not held", []Operation{op(0, 0, 1, acq("a", 1), true), op(1, 2, 3, rel("b", 1), true)}, false},
		{"refused when full", []Operation{op(0, 0, 1, acq("a", 2), true), op(1, 2, 3, acq("b", 1), false)}, true},
		{"refused while free (strict)", []Operation{op(0, 0, 1, acq("a", 1), false)}, false},
		{"concurrent release lets a grant through", []Operation{op(0, 0, 1, acq("a", 2), true), op(0, 2, 6, rel("a", 1), true), op(1, 3, 5, acq("b", 1), true)}, true},
		{"pending acquire holds a unit", []Operation{pending(0, 0, acq("a", 1)), op(1, 1, 2, acq("b", 1), true), op(2, 3, 4, acq("c", 1), true)}, true},
		{"pending release", []Operation{op(0, 0, 1, acq("a", 2), true), pending(0, 2, rel("a", 2)), op(1, 3, 4, acq("b", 2), true)}, true},
	}
	runModelCases(t, Semaphore(2, StrictRefusals), cases)
	runModelCases(t, Semaphore(2, AnyRefusals), []modelCase{
		{"refused while free (any)", []Operation{op(0, 0, 1, acq("a", 1), false)}, true},
		{"over capacity (any)", cases[1].ops, false},
	})
}

func TestPoolModel(t *testing.T) {
	alloc := func(h, u string) PoolInput { return PoolInput{Op: PoolAllocate, Holder: h, Unit: u} }
	rel := func(h, u string) PoolInput { return PoolInput{Op: PoolRelease, Holder: h, Unit: u} }
	units := []string{"r1", "r2"}
	runModelCases(t, Pool(units, StrictRefusals), []modelCase{
		{"distinct units", []Operation{op(0, 0, 1, alloc("a", ""), "r1"), op(1, 2, 3, alloc("b", ""), "r2")}, true},
		{"one unit twice", []Operation{op(0, 0, 1, alloc("a", ""), "r1"), op(1, 2, 3, alloc("b", ""), "r1")}, false},
		{"unit not in the pool", []Operation{op(0, 0, 1, alloc("a", ""), "r9")}, false},
		{"the unit asked for", []Operation{op(0, 0, 1, alloc("a", "r2"), "r2"), op(1, 2, 3, alloc("b", "r2"), "")}, true},
		{"another unit than asked", []Operation{op(0, 0, 1, alloc("a", "r2"), "r1")}, false},
		{"refused while one is free", []Operation{op(0, 0, 1, alloc("a", ""), "r1"), op(1, 2, 3, alloc("b", ""), "")}, false},
		{"release and reuse", []Operation{op(0, 0, 1, alloc("a", ""), "r1"), op(0, 2, 3, rel("a", "r1"), true), op(1, 4, 5, alloc("b", "r1"), "r1")}, true},
		{"release by a non-holder", []Operation{op(0, 0, 1, alloc("a", ""), "r1"), op(1, 2, 3, rel("b", "r1"), true)}, false},
		{"pending allocate", []Operation{pending(0, 0, alloc("a", "")), op(1, 1, 2, alloc("b", ""), "r1"), op(2, 3, 4, alloc("c", ""), "r2")}, true},
	})
	runModelCases(t, Pool(units, AnyRefusals), []modelCase{
		{"refused while one is free (any)", []Operation{op(0, 0, 1, alloc("a", ""), "r1"), op(1, 2, 3, alloc("b", ""), "")}, true},
	})
}

func TestQueueModel(t *testing.T) {
	type in = QueueInput[int]
	enq := func(v int) in { return in{Op: Enqueue, Value: v} }
	deq := in{Op: Dequeue}
	got := func(v int) Dequeued[int] { return Dequeued[int]{Value: v, OK: true} }
	empty := Dequeued[int]{}
	runModelCases(t, Queue[int](), []modelCase{
		{"fifo", []Operation{op(0, 0, 1, enq(1), nil), op(0, 2, 3, enq(2), nil), op(1, 4, 5, deq, got(1)), op(1, 6, 7, deq, got(2))}, true},
		{"lifo is wrong", []Operation{op(0, 0, 1, enq(1), nil), op(0, 2, 3, enq(2), nil), op(1, 4, 5, deq, got(2))}, false},
		{"empty", []Operation{op(0, 0, 1, deq, empty)}, true},
		{"empty although enqueued", []Operation{op(0, 0, 1, enq(1), nil), op(1, 2, 3, deq, empty)}, false},
		{"concurrent enqueues either order", []Operation{op(0, 0, 4, enq(1), nil), op(1, 1, 3, enq(2), nil), op(2, 5, 6, deq, got(2)), op(2, 7, 8, deq, got(1))}, true},
		{"dequeued twice", []Operation{op(0, 0, 1, enq(1), nil), op(1, 2, 3, deq, got(1)), op(2, 4, 5, deq, got(1))}, false},
		{"pending dequeue took the head", []Operation{op(0, 0, 1, enq(1), nil), op(0, 2, 3, enq(2), nil), pending(1, 4, deq), op(2, 5, 6, deq, got(2))}, true},
		{"pending dequeue took nothing", []Operation{op(0, 0, 1, enq(1), nil), pending(1, 2, deq), op(2, 3, 4, deq, got(1))}, true},
	})
}

func TestLeaseModel(t *testing.T) {
	ms := func(n int64) sim.Time { return sim.Time(n * int64(time.Millisecond)) }
	acq := func(h string, at int64) LeaseInput {
		return LeaseInput{Op: LeaseAcquire, Holder: h, At: ms(at), Term: 10 * time.Millisecond}
	}
	rel := func(h string, at int64) LeaseInput { return LeaseInput{Op: LeaseRelease, Holder: h, At: ms(at)} }
	read := func(at int64) LeaseInput { return LeaseInput{Op: LeaseRead, At: ms(at)} }
	runModelCases(t, LeaseRegister(StrictRefusals), []modelCase{
		{"grant", []Operation{op(0, 0, 1, acq("a", 0), true), op(1, 2, 3, read(5), "a")}, true},
		{"two holders at once", []Operation{op(0, 0, 1, acq("a", 0), true), op(1, 2, 3, acq("b", 5), true)}, false},
		{"grant after expiry", []Operation{op(0, 0, 1, acq("a", 0), true), op(1, 2, 3, acq("b", 10), true), op(2, 4, 5, read(12), "b")}, true},
		{"read after expiry", []Operation{op(0, 0, 1, acq("a", 0), true), op(1, 2, 3, read(10), "")}, true},
		{"expired lease still read as held", []Operation{op(0, 0, 1, acq("a", 0), true), op(1, 2, 3, read(11), "a")}, false},
		{"renewal by the holder", []Operation{op(0, 0, 1, acq("a", 0), true), op(0, 2, 3, acq("a", 8), true), op(1, 4, 5, read(15), "a")}, true},
		{"release then grant", []Operation{op(0, 0, 1, acq("a", 0), true), op(0, 2, 3, rel("a", 2), true), op(1, 4, 5, acq("b", 3), true)}, true},
		{"stale release is a no-op", []Operation{op(0, 0, 1, acq("a", 0), true), op(1, 2, 3, rel("b", 2), true), op(1, 4, 5, acq("b", 3), true)}, false},
		{"refused while held", []Operation{op(0, 0, 1, acq("a", 0), true), op(1, 2, 3, acq("b", 5), false)}, true},
		{"refused while free", []Operation{op(1, 0, 1, acq("b", 5), false)}, false},
		// Effect times order the linearization: b's grant at 20 cannot come before a's
		// at 5, even though b's call came first.
		{"effect times order grants", []Operation{op(1, 0, 10, acq("b", 20), true), op(0, 1, 9, acq("a", 5), true), op(2, 11, 12, read(21), "b")}, true},
		{"pending acquire may be granted", []Operation{pending(0, 0, acq("a", 0)), op(1, 1, 2, acq("b", 5), false)}, true},
		{"pending acquire may have failed", []Operation{pending(0, 0, acq("a", 0)), op(1, 1, 2, acq("b", 5), true)}, true},
	})
	runModelCases(t, LeaseRegister(AnyRefusals), []modelCase{
		{"refused while free (any)", []Operation{op(1, 0, 1, acq("b", 5), false)}, true},
	})
}

// TestPartitionByOperationKey: operations on different Operation.Keys are independent
// objects, and the first illegal key (in sorted order) is the one reported.
func TestPartitionByOperationKey(t *testing.T) {
	type in = RegisterInput[int]
	w := func(key string, c int, call, ret int64, v int) Operation {
		o := op(c, call, ret, in{Op: RegWrite, Value: v}, nil)
		o.Key = key
		return o
	}
	r := func(key string, c int, call, ret int64, v int) Operation {
		o := op(c, call, ret, in{Op: RegRead}, v)
		o.Key = key
		return o
	}
	ok := []Operation{w("x", 0, 0, 1, 1), w("y", 1, 0, 1, 2), r("x", 2, 2, 3, 1), r("y", 3, 2, 3, 2)}
	if res := CheckLinearizable(Register(0), ok, time.Second); res.Result != porcupine.Ok || res.Keys != 2 || res.Ops != 4 {
		t.Fatalf("independent keys: %+v", res.Result)
	}
	bad := append(ok, r("z", 4, 4, 5, 9), r("w", 4, 4, 5, 8))
	res := CheckLinearizable(Register(0), bad, time.Second)
	if res.Result != porcupine.Illegal || res.Key != "w" {
		t.Fatalf("got %s at key %q, want illegal at key w", res.Result, res.Key)
	}
}

// TestModelPanicIsInconclusive: a wrong input type makes the model panic on one of
// porcupine's goroutines; the check reports it instead of crashing the process.
func TestModelPanicIsInconclusive(t *testing.T) {
	ops := []Operation{op(0, 0, 1, "not a register input", nil), op(1, 2, 3, "neither", nil)}
	res := CheckLinearizable(Register(0), ops, time.Second)
	if res.Err == nil || res.Result != porcupine.Unknown {
		t.Fatalf("got %s, err %v; want unknown with an error", res.Result, res.Err)
	}
}

// TestKeyedModels: each key is checked against its own model (pools of different
// capacities), and the model reported is the failing key's.
func TestKeyedModels(t *testing.T) {
	capacity := map[string]int{"p1": 1, "p2": 2}
	modelFor := func(k string) porcupine.Model { return Semaphore(capacity[k], StrictRefusals) }
	acq := func(key, h string, c int, call, ret int64) Operation {
		o := op(c, call, ret, SemInput{Op: SemAcquire, Holder: h}, true)
		o.Key = key
		return o
	}
	ok := []Operation{acq("p2", "a", 0, 0, 1), acq("p2", "b", 1, 2, 3), acq("p1", "c", 2, 0, 1)}
	if res := CheckLinearizableKeyed(modelFor, ok, time.Second); res.Result != porcupine.Ok || res.Err != nil {
		t.Fatalf("within each capacity: %s %v", res.Result, res.Err)
	}
	bad := append(ok, acq("p1", "d", 3, 4, 5))
	res := CheckLinearizableKeyed(modelFor, bad, time.Second)
	if res.Result != porcupine.Illegal || res.Key != "p1" || !res.Located {
		t.Fatalf("p1 over capacity: %s at %q", res.Result, res.Key)
	}
	if d := res.Model.DescribeState(res.Model.Init()); d != "0/1 used {}" {
		t.Fatalf("reported model is not p1's: %q", d)
	}
	if res := CheckLinearizableKeyed(modelFor, nil, time.Second); res.Result != porcupine.Ok {
		t.Fatalf("empty history: %s", res.Result)
	}
}

// Witnessed linearization points (Operation.At): a highly concurrent counter history
// that a search cannot finish in time is proved by replaying the points; a wrong point
// never changes a verdict (the key is searched instead): a linearizable history with
// points out of order still passes, one no order explains still fails, and so does one
// whose witness replays but breaks real time (a point outside [Call, Return]).
func TestWitnessedPoints(t *testing.T) {
	add := func(d int64) CounterInput { return CounterInput{Op: CounterAdd, Key: "a", Delta: d} }
	// 4 000 adds of 1, all concurrent (every call before every return), applied in
	// reverse client order: the i-th returns n-i. Porcupine tries operations in call
	// order, so without the points it searches (quadratically many model steps).
	const n = 4000
	// steps counts the model's steps: a replayed witness takes one per operation, a
	// search many more (the work done, not the time taken, tells them apart); past
	// maxSteps the model panics, which ends the check at once (Err set).
	const maxSteps = 4 * n
	var steps atomic.Int64
	modelFor := func(string) porcupine.Model {
		m := Counters()
		step := m.Step
		m.Step = func(s, in, out any) (bool, any) {
			if steps.Add(1) > maxSteps {
				panic("more model steps than a replay of the witness takes: the check searched")
			}
			return step(s, in, out)
		}
		return m
	}
	var big []Operation
	for i := 0; i < n; i++ {
		o := op(i, int64(i+1), int64(2*n+i+1), add(1), int64(n-i))
		o.Key, o.At = "a", int64(2*n-i)
		big = append(big, o)
	}
	if !witnessed(Counters(), big, allIdx(big)) {
		t.Fatal("the points do not replay")
	}
	if res := CheckLinearizableKeyed(modelFor, big, time.Hour); res.Result != porcupine.Ok || res.Ops != n || res.Keys != 1 || res.Err != nil {
		t.Fatalf("witnessed history: %s, %d ops, %d keys, %v (%d model steps)", res.Result, res.Ops, res.Keys, res.Err, steps.Load())
	}
	// a call that never returned but took effect (the server applied it at 3) is part
	// of the witness: the get at 5 sees it
	get := CounterInput{Op: CounterGet, Key: "a"}
	pend := pending(0, 1, add(2))
	pend.Key, pend.At = "a", 3
	seen := op(1, 4, 6, get, int64(2))
	seen.Key, seen.At = "a", 5
	if two := []Operation{pend, seen}; !witnessed(Counters(), two, allIdx(two)) {
		t.Fatal("a pending operation's point does not replay")
	}
	withAt := func(ops []Operation, at ...int64) []Operation {
		out := slices.Clone(ops)
		for i := range out {
			out[i].Key, out[i].At = "a", at[i]
		}
		return out
	}
	// linearizable (2 then 5), but the points say 5 first: searched, still OK
	two := []Operation{op(0, 1, 6, add(2), int64(2)), op(1, 2, 7, add(3), int64(5))}
	if res := CheckLinearizableKeyed(modelFor, withAt(two, 5, 3), time.Second); res.Result != porcupine.Ok {
		t.Fatalf("points out of order: %s", res.Result)
	}
	// not linearizable (an add applied twice): no point can hide it
	dup := []Operation{op(0, 1, 2, add(2), int64(2)), op(1, 3, 4, CounterInput{Op: CounterGet, Key: "a"}, int64(4))}
	if res := CheckLinearizableKeyed(modelFor, withAt(dup, 1, 3), time.Second); res.Result != porcupine.Illegal {
		t.Fatalf("illegal history with points: %s", res.Result)
	}
	// the replay works only with a point outside its operation: 3 then 2 would need
	// the second add (called at 5) to take effect before the first returned (at 2)
	late := []Operation{op(0, 1, 2, add(2), int64(5)), op(1, 5, 6, add(3), int64(3))}
	if res := CheckLinearizableKeyed(modelFor, withAt(late, 7, 1), time.Second); res.Result != porcupine.Illegal {
		t.Fatalf("points outside their operations: %s", res.Result)
	}
}

// allIdx indexes every operation of ops.
func allIdx(ops []Operation) []int32 {
	idx := make([]int32, len(ops))
	for i := range idx {
		idx[i] = int32(i)
	}
	return idx
}

// witnessedKeys groups operations by key whether each key's operations are contiguous
// or interleaved: the same keys proved, the same operations left to search, in the
// same order.
func TestWitnessedKeysGrouping(t *testing.T) {
	modelFor := func(string) porcupine.Model { return Counters() }
	mk := func(key string, i int64, ret int64) Operation {
		o := op(int(i), 10*i, 10*i+1, CounterInput{Op: CounterAdd, Key: key, Delta: 1}, ret)
		o.Key, o.At = key, 10*i
		return o
	}
	// keys a and b replay (each add returns its running count); c does not (its
	// second add returns 5).
	contiguous := []Operation{mk("a", 1, 1), mk("a", 2, 2), mk("b", 3, 1), mk("c", 4, 1), mk("c", 5, 5), mk("b", 6, 2)}
	for _, ops := range [][]Operation{
		contiguous,
		{mk("a", 1, 1), mk("a", 2, 2), mk("b", 3, 1), mk("b", 6, 2), mk("c", 4, 1), mk("c", 5, 5)},
	} {
		search, proved := witnessedKeys(modelFor, ops)
		if proved != 2 || len(search) != 2 || search[0].Key != "c" || search[1].Key != "c" || search[1].Call != 50 {
			t.Fatalf("%d proved, search %+v: want a and b proved, c's two operations in order", proved, search)
		}
	}
}
