package scenarios

import "testing"

// TestNextShare: the share of mutated runs follows what each kind found, within its
// bounds, and stays at the start value until mutations have been tried.
func TestNextShare(t *testing.T) {
	for _, c := range []struct {
		mut, fresh shareArm
		want       float64
	}{
		{shareArm{}, shareArm{runs: 32, found: 100}, guidedMutateFrac},
		{shareArm{runs: 16, found: 0}, shareArm{runs: 16, found: 0}, guidedMutateFrac},
		{shareArm{runs: 16, found: 16}, shareArm{runs: 16, found: 48}, 0.25},
		{shareArm{runs: 16, found: 0}, shareArm{runs: 16, found: 48}, guidedMinFrac},
		{shareArm{runs: 16, found: 480}, shareArm{runs: 16, found: 1}, guidedMaxFrac},
	} {
		if got := nextShare(c.mut, c.fresh); got != c.want {
			t.Errorf("nextShare(%+v, %+v) = %g, want %g", c.mut, c.fresh, got, c.want)
		}
	}
}
