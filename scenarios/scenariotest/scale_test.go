package scenariotest_test

import (
	"testing"

	"github.com/simrun-dev/simrun/scenarios/scenariotest"
)

// BenchmarkScale: 100 000 clients of demo/happy, 30 operations each, on one core;
// the design's target is at most 2 GiB and 60 s (bytes/node at most 20 KiB).
// Compare with the reference metrics (ref-*) measured in the same run.
func BenchmarkScale(b *testing.B) { benchScale(b, scenariotest.ScaleOps) }

// BenchmarkScaleIdle: 100 000 idle clients (no operations); at most 20 KiB each.
func BenchmarkScaleIdle(b *testing.B) { benchScale(b, 0) }

func benchScale(b *testing.B, ops int) {
	for range b.N {
		r, err := scenariotest.Scale(scenariotest.ScaleClients, ops)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.PerNode(), "B/node")
		b.ReportMetric(float64(r.Run.Peak>>20), "peak-MiB")
		b.ReportMetric(r.Run.CPU.Seconds(), "cpu-s")
		b.ReportMetric(r.Run.Wall.Seconds(), "wall-s")
		b.ReportMetric(float64(r.Ref.Peak>>20), "ref-peak-MiB")
		b.ReportMetric(r.Ref.CPU.Seconds(), "ref-cpu-s")
		b.ReportMetric(r.MemRatio(), "mem-ratio")
		b.ReportMetric(r.CPURatio(), "cpu-ratio")
		b.Logf("%s: %d events; reference: %s", r.Name, r.Events, r.Reference)
	}
}
