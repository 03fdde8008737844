package model

import (
	"testing"
)

// lattice is a plain spec over the w×w grid: from (x, y) step right or down; bad, when
// set, is a state the invariant forbids.
func lattice(w int, bad int) *Spec[int] {
	return &Spec[int]{
		Name: "grid",
		Init: func() []int { return []int{0} },
		Next: func(s int, emit func(Action, int)) {
			x, y := s%w, s/w
			if x+1 < w {
				emit(0, s+1)
			}
			if y+1 < w {
				emit(1, s+w)
			}
		},
		Fingerprint: func(s int) uint64 { return uint64(s) * 0x9e3779b97f4a7c15 },
		Properties:  []Property[int]{Always("not bad", func(s int) bool { return bad < 0 || s != bad })},
	}
}

// A bitstate DFS with room to spare explores every state but proves nothing (sampled,
// estimated misses near zero); a small array misses states and says so; a violation
// it finds is real; seeds change the search; BFS is refused.
func TestBitstate(t *testing.T) {
	const w = 200 // 40 000 states
	res, err := Check(lattice(w, -1), Options{Strategy: DFS, Bitstate: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.Distinct != w*w || res.Outcome != Sampled || res.Bitstate == nil || res.Bitstate.Missed > 1 {
		t.Fatalf("roomy bitstate: %d states, outcome %v, %+v", res.Distinct, res.Outcome, res.Bitstate)
	}
	if res.Properties[0].Status != Unknown {
		t.Fatalf("a bitstate search proved %v", res.Properties[0].Status)
	}
	small, err := Check(lattice(w, -1), Options{Strategy: DFS, Bitstate: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if small.Distinct >= w*w || small.Bitstate.Missed < 1 || small.Bitstate.Coverage(small.Distinct) > 0.99 {
		t.Fatalf("a 4 KiB array: %d of %d states, estimate %+v", small.Distinct, w*w, small.Bitstate)
	}
	t.Logf("4 KiB: %d of %d states explored, %.0f estimated missed (coverage %.2f)", small.Distinct, w*w, small.Bitstate.Missed, small.Bitstate.Coverage(small.Distinct))
	bad, err := Check(lattice(w, w*w-2), Options{Strategy: DFS, Bitstate: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if bad.Violation == nil || bad.Outcome != Violated {
		t.Fatalf("violation not found: %v", bad.Outcome)
	}
	if _, err := bad.Steps(bad.Violation); err != nil {
		t.Fatalf("the counterexample does not replay: %v", err)
	}
	a, _ := Check(lattice(w, -1), Options{Strategy: DFS, Bitstate: 4 << 10, Seed: 1})
	b, _ := Check(lattice(w, -1), Options{Strategy: DFS, Bitstate: 4 << 10, Seed: 2})
	if a.Distinct == b.Distinct && a.Bitstate.Fill == b.Bitstate.Fill {
		t.Fatalf("seeds 1 and 2 searched alike (%d states)", a.Distinct)
	}
	if _, err := Check(lattice(w, -1), Options{Strategy: BFS, Bitstate: 1 << 20}); err == nil {
		t.Fatal("a bitstate BFS was accepted")
	}
}
