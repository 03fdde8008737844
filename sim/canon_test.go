package sim_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

type inner struct {
	xs []int
	m  map[string]int
}

type state struct {
	Name    string
	private int
	ptr     *inner
	list    []inner
	any     any
	byID    map[sim.NodeID][]string
	arr     [2]*int
}

func sample() *state {
	one := 1
	return &state{
		Name: "s", private: 7,
		ptr:  &inner{xs: []int{1, 2}, m: map[string]int{"a": 1, "b": 2}},
		list: []inner{{xs: []int{3}}},
		any:  []string{"x"},
		byID: map[sim.NodeID][]string{2: {"q"}, 1: {"p"}},
		arr:  [2]*int{&one, nil},
	}
}

func TestDeepCopyIsIndependentIncludingUnexportedFields(t *testing.T) {
	a := sample()
	before := sim.AppendCanonical(nil, a)
	b := sim.DeepCopy(a)
	if !bytes.Equal(before, sim.AppendCanonical(nil, b)) {
		t.Fatal("copy encodes differently from the original")
	}
	b.private = 8
	b.ptr.xs[0] = 99
	b.ptr.m["a"] = 42
	b.list[0].xs[0] = 99
	b.any.([]string)[0] = "y"
	b.byID[1][0] = "z"
	*b.arr[0] = 5
	if !bytes.Equal(before, sim.AppendCanonical(nil, a)) {
		t.Fatal("mutating the copy changed the original")
	}
}

func TestCanonicalEncodingIgnoresMapOrderAndCapacity(t *testing.T) {
	a := sample()
	b := sample()
	b.ptr.m = map[string]int{}
	b.ptr.m["b"] = 2
	b.ptr.m["a"] = 1
	b.ptr.xs = append(make([]int, 0, 64), 1, 2)
	for i := 0; i < 20; i++ { // map iteration order is randomised per range
		if !bytes.Equal(sim.AppendCanonical(nil, a), sim.AppendCanonical(nil, b)) {
			t.Fatal("equal states encode differently")
		}
	}
	b.ptr.m["a"] = 3
	if bytes.Equal(sim.AppendCanonical(nil, a), sim.AppendCanonical(nil, b)) {
		t.Fatal("different states encode the same")
	}
	// nil and empty slices differ (a protocol may rely on the difference).
	c, d := sample(), sample()
	c.list, d.list = nil, []inner{}
	if bytes.Equal(sim.AppendCanonical(nil, c), sim.AppendCanonical(nil, d)) {
		t.Fatal("nil and empty slice encode the same")
	}
	// Interface values are tagged with their type.
	c.any, d.any = int32(1), int64(1)
	if bytes.Equal(sim.AppendCanonical(nil, c), sim.AppendCanonical(nil, d)) {
		t.Fatal("int32(1) and int64(1) in an interface encode the same")
	}
}

// The sequence of a stream is part of every pinned trace hash: it must not change.
func TestRandSequencePinned(t *testing.T) {
	r := sim.NewRand(1)
	// Pinned values (xoshiro256** seeded by splitmix64(1)).
	for i, want := range []uint64{0xb3f2af6d0fc710c5, 0x853b559647364cea, 0x92f89756082a4514} {
		if got := r.Uint64(); got != want {
			t.Fatalf("draw %d = %#x, want %#x: the random stream changed, every trace changes with it", i, got, want)
		}
	}
	if sim.StreamSeed(1, "link", 0, 1) == sim.StreamSeed(1, "link", 1, 0) {
		t.Fatal("streams of opposite links coincide")
	}
	if sim.StreamSeed(1, "a") == sim.StreamSeed(1, "b") || sim.StreamSeed(1, "a") == sim.StreamSeed(2, "a") {
		t.Fatal("distinct concerns or seeds share a stream")
	}
	for i := 0; i < 10000; i++ {
		if v := r.IntN(7); v < 0 || v >= 7 {
			t.Fatal("IntN out of range")
		}
		if v := r.Int64Range(-3, 3); v < -3 || v > 3 {
			t.Fatal("Int64Range out of range")
		}
		if f := r.Float64(); f < 0 || f >= 1 {
			t.Fatal("Float64 out of range")
		}
	}
}

func TestStorageCopiesOnWrite(t *testing.T) {
	s := sim.NewStorage()
	v := []int{1, 2}
	s.Apply([]sim.Write{{Key: "k", Value: v}, {Key: "gone", Value: 1}, {Key: "gone", Delete: true}})
	v[0] = 9
	got, _ := sim.Load[[]int](s.View(), "k")
	if got[0] != 1 {
		t.Fatal("stored value aliased the caller's slice")
	}
	got[1] = 9
	again, _ := sim.Load[[]int](s.View(), "k")
	if again[1] != 2 {
		t.Fatal("Get returned the stored value itself")
	}
	if s.Len() != 1 || s.Keys()[0] != "k" {
		t.Fatalf("keys %v", s.Keys())
	}
	c := s.Clone()
	c.Apply([]sim.Write{{Key: "k", Delete: true}})
	if s.Len() != 1 {
		t.Fatal("clone shares its map")
	}
}

// An encoded storage (NewEncodedStorage: sorted entries with their encodings, for the
// model checker) behaves and encodes as a plain one under any writes, and its clones
// are independent both ways: random write batches go to a plain storage, an encoded
// one, and a clone of the encoded one taken before each batch, which must keep the
// encoding it had.
func TestEncodedStorageMatchesPlain(t *testing.T) {
	type rec struct {
		N  int
		Xs []string
	}
	r := sim.NewRand(5)
	plain, enc := sim.NewStorage(), sim.NewEncodedStorage()
	for step := 0; step < 2000; step++ {
		var ws []sim.Write
		for k := 0; k < 1+r.IntN(3); k++ {
			key := fmt.Sprintf("k/%d", r.IntN(12))
			switch r.IntN(4) {
			case 0:
				ws = append(ws, sim.Write{Key: key, Delete: true})
			case 1:
				ws = append(ws, sim.Write{Key: key, Value: rec{N: r.IntN(5), Xs: []string{key}}})
			default:
				ws = append(ws, sim.Write{Key: key, Value: r.IntN(100)})
			}
		}
		before := enc.Clone()
		was := string(before.AppendState(nil))
		plain.Apply(ws)
		enc.Apply(ws)
		if string(before.AppendState(nil)) != was {
			t.Fatalf("step %d: a clone changed when its original was written", step)
		}
		if !bytes.Equal(plain.AppendState(nil), enc.AppendState(nil)) {
			t.Fatalf("step %d: encodings differ", step)
		}
		if !reflect.DeepEqual(plain.Keys(), enc.Keys()) || plain.Len() != enc.Len() {
			t.Fatalf("step %d: keys %v vs %v", step, plain.Keys(), enc.Keys())
		}
		for _, k := range plain.Keys() {
			a, _ := plain.Peek(k)
			b, ok := enc.Peek(k)
			if !ok || !reflect.DeepEqual(a, b) {
				t.Fatalf("step %d: %s: %v vs %v", step, k, a, b)
			}
		}
		if _, ok := enc.Peek("k/none"); ok {
			t.Fatal("Peek found a missing key")
		}
		n := 0
		enc.All(func(k string, v any) bool { n++; return true })
		if n != plain.Len() {
			t.Fatalf("step %d: All visited %d of %d", step, n, plain.Len())
		}
		if enc.Len() > 0 {
			c := enc.Clone()
			c.Apply([]sim.Write{{Key: enc.Keys()[0], Delete: true}, {Key: "new", Value: 1}})
			if !bytes.Equal(plain.AppendState(nil), enc.AppendState(nil)) {
				t.Fatalf("step %d: writing a clone changed its original", step)
			}
		}
	}
}

// Flat and FlatExact: no reference inside (and, for FlatExact, no float either).
func TestFlatTypes(t *testing.T) {
	type inner struct {
		A [2]int
		S string
	}
	type withFloat struct {
		N int
		F float64
	}
	type withPtr struct{ P *int }
	type withIface struct{ V any }
	for _, c := range []struct {
		v           any
		flat, exact bool
	}{
		{1, true, true}, {"s", true, true}, {inner{}, true, true},
		{withFloat{}, true, false}, {complex(1, 2), true, false}, {[3]float32{}, true, false},
		{withPtr{}, false, false}, {withIface{}, false, false}, {[]int{}, false, false}, {map[int]int{}, false, false},
	} {
		ty := reflect.TypeOf(c.v)
		if sim.Flat(ty) != c.flat || sim.FlatExact(ty) != c.exact {
			t.Errorf("%v: Flat %v FlatExact %v, want %v %v", ty, sim.Flat(ty), sim.FlatExact(ty), c.flat, c.exact)
		}
	}
}
