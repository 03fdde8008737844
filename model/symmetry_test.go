package model

import (
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

// rank inverts the enumeration of the permutations (the canonical form looks its
// candidates up by rank in the renaming caches).
func TestSymmetryRank(t *testing.T) {
	for _, set := range [][]sim.NodeID{{1, 2}, {0, 2, 3}, {1, 2, 4, 5}, {0, 1, 2, 3, 4}} {
		s := &symSys{set: set}
		n := int(set[len(set)-1]) + 1
		idx := make([]int, len(set))
		for i := range idx {
			idx[i] = i
		}
		for k := 0; ; k++ {
			p := make([]sim.NodeID, n)
			for i := range p {
				p[i] = sim.NodeID(i)
			}
			for i, j := range idx {
				p[set[i]] = set[j]
			}
			if r := s.rank(p); r != k {
				t.Fatalf("set %v: permutation %v has rank %d, enumerated %d", set, p, r, k)
			}
			if !nextPerm(idx) {
				break
			}
		}
	}
}
