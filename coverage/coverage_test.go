package coverage_test

import (
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/coverage"
	_ "github.com/simrun-dev/simrun/scenarios"
)

// The demo's swarm reaches every rule of its map but D-3: a retry older than the
// client's last request needs reordering or duplication, and demo/swarm keeps links
// FIFO and lossless (the papers' assumption). The report says so, unreached first.
func TestDemoSwarmCoverage(t *testing.T) {
	rep, err := coverage.Protocol("demo", coverage.Options{Seeds: 60, NoModel: true})
	if err != nil {
		t.Fatal(err)
	}
	if un := rep.Unreached(); len(un) != 1 || un[0].Tag != "D-3 stale" {
		t.Fatalf("demo/swarm on 60 seeds leaves %v unreached, want only D-3", un)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"coverage of demo", "4 of 5 branched rules reached; NOT REACHED: D-3 stale", "D-2 dedup"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("report lacks %q:\n%s", want, b.String())
		}
	}
	t.Log(b.String())
}

func TestUnknownProtocol(t *testing.T) {
	if _, err := coverage.Protocol("nope", coverage.Options{}); err == nil || !strings.Contains(err.Error(), "declares no rule map") {
		t.Fatalf("err = %v", err)
	}
}
