package scenariotest

import (
	"testing"

	"github.com/simrun-dev/simrun/scenarios"
)

// Sweep benchmark settings: seeds of a CPU-bound scenario (the demo under swarm
// faults: no I/O, the kernel and the checkers only).
const (
	BenchScenario = "demo/swarm"
	BenchSeeds    = 32
)

// SweepBenchmark returns a benchmark of scenarios.Sweep over BenchSeeds seeds of
// BenchScenario with the given number of workers (one op = one sweep). Shared by the
// scenarios package's BenchmarkSweep and `simrun bench`; compare workers=2 with
// workers=1 measured in the same run. The garbage collector is set as the simrun
// command sets it (scenarios.TuneGC).
func SweepBenchmark(workers int) func(*testing.B) {
	return func(b *testing.B) {
		o := scenarios.SweepOptions{Scenario: BenchScenario, From: 1, To: BenchSeeds, Workers: workers}
		defer scenarios.TuneGC()() // measure the sweep as simrun runs it
		b.ReportAllocs()
		for range b.N {
			res, err := scenarios.Sweep(o)
			if err != nil {
				b.Fatal(err)
			}
			if res.Runs != BenchSeeds {
				b.Fatalf("%d runs", res.Runs)
			}
		}
	}
}
