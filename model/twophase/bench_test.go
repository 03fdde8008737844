package twophase_test

import (
	"testing"

	"github.com/simrun-dev/simrun/model/modelbench"
)

// BenchmarkTwoPhase9 is the benchmark: TLA+ TwoPhase with rm=9 (10 340 352
// distinct states) by BFS on one worker; states/s is reported. Not run by plain
// `go test` (benchmarks never are).
func BenchmarkTwoPhase9(b *testing.B)   { modelbench.TwoPhase(9, 1)(b) }
func BenchmarkTwoPhase9x2(b *testing.B) { modelbench.TwoPhase(9, 2)(b) }
func BenchmarkTwoPhase7(b *testing.B)   { modelbench.TwoPhase(7, 1)(b) }
func BenchmarkTwoPhase7x2(b *testing.B) { modelbench.TwoPhase(7, 2)(b) }
func BenchmarkMapBFS7(b *testing.B)     { modelbench.MapBFS(7)(b) }
func BenchmarkMapBFS9(b *testing.B)     { modelbench.MapBFS(9)(b) }
