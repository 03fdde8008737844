package model_test

import (
	"testing"

	"github.com/simrun-dev/simrun/model"
)

func TestHasherAndFingerprint(t *testing.T) {
	fp := func(pc int, flag bool, leader string) uint64 {
		h := model.NewHasher()
		h.Int(pc)
		h.Bool(flag)
		h.String(leader)
		return h.Sum()
	}
	if a, b := fp(1, true, "a"), fp(1, true, "a"); a != b {
		t.Fatal("not deterministic")
	}
	seen := map[uint64]string{}
	for _, c := range []struct {
		pc     int
		flag   bool
		leader string
	}{{1, true, "a"}, {1, false, "a"}, {2, true, "a"}, {1, true, "b"}, {1, true, ""}, {0, false, ""}, {1, true, "ab"}} {
		f := fp(c.pc, c.flag, c.leader)
		if prev, dup := seen[f]; dup {
			t.Fatalf("%+v collides with %s", c, prev)
		}
		seen[f] = "x"
	}
	// Adjacent strings cannot run into each other.
	h1, h2 := model.NewHasher(), model.NewHasher()
	h1.String("ab")
	h1.String("c")
	h2.String("a")
	h2.String("bc")
	if h1.Sum() == h2.Sum() {
		t.Fatal(`("ab","c") and ("a","bc") collide`)
	}
	type st struct {
		M map[string]int
		S []int
	}
	a := st{M: map[string]int{"x": 1, "y": 2}, S: make([]int, 2, 10)}
	b := st{M: map[string]int{"y": 2, "x": 1}, S: []int{0, 0}}
	if model.Fingerprint(a) != model.Fingerprint(b) {
		t.Fatal("equal values, different fingerprints")
	}
	b.M["x"] = 3
	if model.Fingerprint(a) == model.Fingerprint(b) {
		t.Fatal("different values, same fingerprint")
	}
}
