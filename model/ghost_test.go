package model

import (
	"math"
	"testing"
)

// A ghost that changes only from +0 to -0 is not the same ghost: the two encode apart,
// so the successor's ghost hash must be computed again (== says they are equal).
func TestSameGhostTellsSignedZerosApart(t *testing.T) {
	type g struct {
		N int
		F float64
	}
	if sameGhost(g{F: 0}, g{F: math.Copysign(0, -1)}) {
		t.Error("+0 and -0 ghosts taken for the same")
	}
	if !sameGhost(struct{ N int }{1}, struct{ N int }{1}) {
		t.Error("equal reference-free ghosts not recognized")
	}
	if sameGhost([]int{1}, []int{1}) {
		t.Error("a ghost holding a reference cannot be compared by ==")
	}
	if sameGhost(struct{ N int }{1}, struct{ M int }{1}) {
		t.Error("ghosts of different types taken for the same")
	}
}
