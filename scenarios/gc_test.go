package scenarios_test

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/simrun-dev/simrun/scenarios"
)

func TestTuneGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	limit := debug.SetMemoryLimit(-1)
	restore := scenarios.TuneGC()
	now := debug.SetGCPercent(-1)
	debug.SetGCPercent(now)
	_, env := os.LookupEnv("GOGC")
	if want := map[bool]int{false: scenarios.GCPercent, true: 100}[env]; now != want {
		t.Fatalf("GC percent %d after TuneGC (GOGC set: %v), want %d", now, env, want)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("restore left %d, want 100", got)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Fatalf("restore left a memory limit of %d, want %d", got, limit)
	}
}

// The collector's target falls from GCPercent on a small live heap to a quarter of the
// live data on a large one, never leaving more than GCHeadroom (or a quarter) above it.
func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, scenarios.GCPercent},
		{1 << 20, scenarios.GCPercent},
		{64 << 20, 400},
		{128 << 20, 200},
		{512 << 20, 50},
		{1 << 30, 25},
		{4 << 30, 25},
	} {
		if got := scenarios.GCPercentFor(c.live); got != c.want {
			t.Errorf("live %d MiB: GOGC %d, want %d", c.live>>20, got, c.want)
		}
	}
}
