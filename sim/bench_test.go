package sim_test

import (
	"testing"

	"github.com/simrun-dev/simrun/sim/simbench"
)

func BenchmarkKernel(b *testing.B)       { simbench.Kernel(b) }
func BenchmarkHeapBaseline(b *testing.B) { simbench.HeapBaseline(b) }
