package rpscen

import (
	"os"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/coverage"
)

// TestCoverageReport prints the coverage report (go test -run CoverageReport -v).
func TestCoverageReport(t *testing.T) {
	if os.Getenv("RP_COVERAGE") == "" {
		t.Skip("set RP_COVERAGE=1")
	}
	rep, err := coverage.Protocol("replication", coverage.Options{Seeds: 2000, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	t.Log(b.String())
}
