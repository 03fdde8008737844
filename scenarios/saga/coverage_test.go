package sagascen

import (
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/coverage"
	"github.com/simrun-dev/simrun/model"
)

// `simrun coverage saga`: the default swarm (seeds 1-2000) and the model's portfolio
// together reach every branched rule of the rule map (protocols/saga/rules.go), and
// no property of either judges nothing. Short: 200 swarm seeds and the paper
// configuration, which must still reach every rule of the normal and compensation
// flows, the crash extension and SG-4's detection and grace period.
func TestCoverage(t *testing.T) {
	if testing.Short() {
		rep, err := coverage.Protocol("saga", coverage.Options{Seeds: 200, NoModel: true})
		if err != nil {
			t.Fatal(err)
		}
		m, err := model.Lookup("saga")
		if err != nil {
			t.Fatal(err)
		}
		paper, err := coverage.CheckConfig(m, m.Portfolio[0], model.Options{Coverage: true})
		if err != nil {
			t.Fatal(err)
		}
		reached := map[string]bool{}
		for _, cov := range []*coverage.Part{rep.Parts[0], paper} {
			for _, rc := range cov.Coverage.Rules {
				if rc.Reached > 0 {
					reached[rc.Tag] = true
				}
			}
			for _, p := range cov.Coverage.Properties {
				if p.Status != "ok" {
					t.Errorf("[%s] %s: %s", cov.Name, p.Name, p.Status)
				}
			}
		}
		for _, tag := range []string{"SG-2 start", "SG-2 run", "SG-2 next", "SG-2 join wait", "SG-2 join run", "SG-2 commit",
			"SG-3 fail", "SG-3 null", "SG-3 late", "SG-3 reverse wait", "SG-3 compensate", "SG-3 end",
			"SG-4 detect", "SG-4 spread", "SG-4 resume", "SG-4 grace", "SG-4 give up", "SG-4 back", "SG-4 replay", "SG-4 reconnect"} {
			if !reached[tag] {
				t.Errorf("200 swarm seeds and the paper configuration do not reach %s", tag)
			}
		}
		if t.Failed() {
			var b strings.Builder
			rep.WriteText(&b)
			t.Log(b.String())
		}
		return
	}
	rep, err := coverage.Protocol("saga", coverage.Options{Seeds: 2000})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Parts {
		if p.Verdict != "ok" {
			t.Errorf("%s: %s (%s)", p.Name, p.Verdict, p.What)
		}
	}
	for _, u := range rep.Unreached() {
		t.Errorf("rule %s: reached by neither the swarm nor the portfolio", u.Tag)
	}
	for _, v := range rep.Vacuous() {
		t.Errorf("[%s] %s: %s", v.Part, v.Name, v.Status)
	}
	if t.Failed() || testing.Verbose() {
		var b strings.Builder
		rep.WriteText(&b)
		t.Log(b.String())
	}
}
