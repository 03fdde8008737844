package wkscen

import (
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/coverage"
)

// The default verification of the game — winkowski/swarm seeds 1-2000 and every
// configuration of the model's portfolio — reaches every branched rule of the rule map
// (protocols/winkowski/rules.go), and no property of it is vacuous or uncounted.
// -short runs 200 seeds and the cheapest portfolio entry, and asserts what they reach.
func TestCoverage(t *testing.T) {
	o := coverage.Options{Seeds: 2000, Workers: 1}
	if testing.Short() {
		o.Seeds = 200
		o.NoModel = true
	}
	rep, err := coverage.Protocol("winkowski", o)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	if un := rep.Unreached(); len(un) > 0 {
		for _, u := range un {
			t.Errorf("rule %s reached by nothing", u.Tag)
		}
	}
	for _, p := range rep.Vacuous() {
		t.Errorf("[%s] %s is %s", p.Part, p.Name, p.Status)
	}
	for _, p := range rep.Parts {
		if p.Verdict != "ok" {
			t.Errorf("%s: %s", p.Name, p.Verdict)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Log("\n" + b.String())
	}
}
