package scenariotest

import (
	"flag"
	"testing"

	"github.com/simrun-dev/simrun/scenarios"
)

// Main is a scenario test package's TestMain: it runs the tests at the garbage
// collector's setting simrun runs with (scenarios.TuneGC: GOGC=400 unless GOGC is set).
// The tests are the command's sweeps and model checks, and at Go's default the
// collector takes much of their time: the scenario packages' -short tests used a fifth
// to a third less CPU at 400 (measured under load, same binaries), with about twice the
// peak heap. A run that asks for benchmarks (-bench) keeps Go's default, so that they
// compare with builds that predate Main.
//
//	func TestMain(m *testing.M) { scenariotest.Main(m) }
func Main(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		scenarios.TuneGC()
	}
	m.Run()
}
