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
}
