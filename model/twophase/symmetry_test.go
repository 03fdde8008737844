package twophase

import (
	"testing"

	"github.com/simrun-dev/simrun/model"
)

// permutations returns every permutation of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

// Issue 14, item 2: the symmetry-reduced count equals the number of orbits, computed
// by brute force over the unreduced state space (every reachable state mapped to the
// least member of its orbit under all rm! permutations); the representative is the
// same for every member of an orbit; counts agree for 1 and 2 workers, BFS and DFS.
func TestSymmetryCountsOrbits(t *testing.T) {
	for _, rm := range []int{1, 2, 3, 4, 5} {
		l, _ := NewLayout(rm)
		perms := permutations(rm)
		// Unreduced reachable states, by a plain search.
		seen := map[uint64]bool{0: true}
		queue := []uint64{0}
		for len(queue) > 0 {
			s := queue[0]
			queue = queue[1:]
			l.Next(s, func(_ model.Action, t uint64) {
				if !seen[t] {
					seen[t] = true
					queue = append(queue, t)
				}
			})
		}
		orbits := map[uint64]bool{}
		for s := range seen {
			least := s
			for _, p := range perms {
				q := l.Permute(s, p)
				least = min(least, q)
				if !seen[q] {
					t.Fatalf("rm=%d: %#x permuted by %v is %#x, not reachable: the spec is not symmetric", rm, s, p, q)
				}
				if l.Canonical(q) != l.Canonical(s) {
					t.Fatalf("rm=%d: canonical of %#x and of its permutation %#x differ", rm, s, q)
				}
			}
			orbits[least] = true
		}
		for _, o := range []model.Options{{Workers: 1}, {Workers: 2}, {Strategy: model.DFS}} {
			sp, _ := Spec(rm)
			sp.Symmetry = l.Canonical
			res, err := model.Check(sp, o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != model.Complete || res.Distinct != int64(len(orbits)) {
				t.Fatalf("rm=%d %+v: %v, %d distinct with symmetry, %d orbits (of %d states)", rm, o, res.Outcome, res.Distinct, len(orbits), len(seen))
			}
			for _, pr := range res.Properties {
				if pr.Status != model.Holds && pr.Status != model.Witnessed {
					t.Fatalf("rm=%d: %s %v with symmetry", rm, pr.Name, pr.Status)
				}
			}
		}
		t.Logf("rm=%d: %d states, %d orbits", rm, len(seen), len(orbits))
	}
}

// Symmetry is refused with an eventually-property.
func TestSymmetryRefusedWithEventually(t *testing.T) {
	sp, _ := Spec(3)
	l, _ := NewLayout(3)
	sp.Symmetry = l.Canonical
	sp.Properties = append(sp.Properties, model.Eventually("decided", func(s uint64) bool { return l.TMState(s) != TMInit }))
	if _, err := model.Check(sp, model.Options{}); err == nil {
		t.Fatal("symmetry with an eventually-property accepted")
	}
}

// Pinned reduced counts (the unreduced ones are TLC's 296 448 and 10 340 352).
func TestSymmetryPinned(t *testing.T) {
	for rm, want := range map[int]int64{7: 920, 9: 2232} {
		sp, _ := Spec(rm)
		l, _ := NewLayout(rm)
		sp.Symmetry = l.Canonical
		res, err := model.Check(sp, model.Options{Workers: 2})
		if err != nil || res.Outcome != model.Complete || res.Distinct != want {
			t.Fatalf("rm=%d with symmetry: %v %v, %d distinct, pinned %d", rm, err, res.Outcome, res.Distinct, want)
		}
	}
}
