package scenarios

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage-collection target simrun runs with unless the GOGC
// environment variable says otherwise. A run allocates many short-lived objects
// (messages, observations, histories for the checkers) on a small live heap, so with
// Go's default of 100 the collector runs very often: in a sweep its background work
// takes the cores the workers need (BenchmarkSweep, 2 workers vs 1 on 2 cores: 1.25×
// at GOGC=100, 1.95× at 400), and big model checks spend a third of their time
// collecting. 400 trades memory (the heap grows to about 5× the live data) for time.
const GCPercent = 400

// TuneGC applies GCPercent unless GOGC is set, and returns a function restoring the
// previous setting (benchmarks use it to measure what the tool does).
func TuneGC() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	old := debug.SetGCPercent(GCPercent)
	return func() { debug.SetGCPercent(old) }
}
