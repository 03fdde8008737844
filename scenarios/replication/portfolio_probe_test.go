package rpscen

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/coverage"
	"github.com/simrun-dev/simrun/model"
)

func TestPortfolioProbe(t *testing.T) {
	spec := os.Getenv("RP_PROBE")
	if spec == "" {
		t.Skip()
	}
	m, _ := model.Lookup("replication")
	for _, cfg := range strings.Split(spec, ";") {
		c := model.Config{Name: cfg, Params: map[string]string{}}
		for _, kv := range strings.Fields(cfg) {
			k, v, _ := strings.Cut(kv, "=")
			c.Params[k] = v
		}
		for _, pc := range m.Portfolio {
			if pc.Name == cfg {
				c = pc
			}
		}
		start := time.Now()
		sys, _, err := m.Instantiate(c.Params)
		if err != nil {
			t.Fatal(err)
		}
		res, err := model.Check(sys, model.Options{Coverage: true, MaxStates: 700_000})
		if err != nil {
			t.Fatal(err)
		}
		part := &coverage.Part{Verdict: coverage.ModelVerdict(res), Coverage: coverage.ModelCoverage("replication", res)}
		t.Logf("[%s]: %s %.1fs distinct %d depth %d", cfg, part.Verdict, time.Since(start).Seconds(), res.Distinct, res.Depth)
		for _, p := range part.Coverage.Properties {
			t.Logf("   %s: %s %d", p.Name, p.Status, p.Checked)
		}
	}
}
