package eoscen

import (
	"testing"

	"github.com/simrun-dev/simrun/model"
)

// BenchmarkActorsExactlyonce explores the exactlyonce model (default parameters, no
// crash budget: 242 468 states) on one worker and reports states/s and peak memory.
func BenchmarkActorsExactlyonce(b *testing.B) {
	m, err := model.Lookup("exactlyonce")
	if err != nil {
		b.Fatal(err)
	}
	sys, _, err := m.Instantiate(map[string]string{"crashes": "0"})
	if err != nil {
		b.Fatal(err)
	}
	var res *model.Result
	for b.Loop() {
		if res, err = model.Check(sys, model.Options{Workers: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(res.StatesPerSec, "states/s")
	b.ReportMetric(float64(res.Distinct), "states")
	b.ReportMetric(float64(res.PeakRSS)/(1<<20), "peakMiB")
}
