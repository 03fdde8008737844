package rpscen

import (
	"testing"

	"github.com/simrun-dev/simrun/scenarios/scenariotest"
)

// TestMain runs the tests at simrun's garbage-collector setting (scenariotest.Main).
func TestMain(m *testing.M) { scenariotest.Main(m) }
