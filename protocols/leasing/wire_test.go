package leasing

import (
	"fmt"
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

// TestRefIDString pins RefID.String (hand-appended for speed) to its format: traces,
// reports and the checkers' keys use it.
func TestRefIDString(t *testing.T) {
	for _, r := range []RefID{
		{},
		{Grantor: 3, GBoot: 1, N: 685, Holder: 2},
		{Grantor: 0, GBoot: 4294967295, N: 1 << 62, Holder: 4095},
		{Grantor: 2, GBoot: 7, N: 0, Holder: 1, HBoot: 9},
		{Grantor: sim.NodeID(-1), GBoot: 0, N: -5, Holder: sim.NodeID(-2)},
	} {
		want := fmt.Sprintf("%d.%d#%d>%d", r.Grantor, r.GBoot, r.N, r.Holder)
		if r.Far() {
			want = fmt.Sprintf("%d.%d#far>%d.%d", r.Grantor, r.GBoot, r.Holder, r.HBoot)
		}
		if got := r.String(); got != want {
			t.Errorf("%#v: %q, want %q", r, got, want)
		}
	}
}
