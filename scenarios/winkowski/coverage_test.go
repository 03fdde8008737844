package wkscen

import (
	"slices"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/coverage"
	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/scenarios/scenariotest"
)

// The default verification of the game — winkowski/swarm seeds 1-2000 and every
// configuration of the model's portfolio — reaches every branched rule of the rule map
// (protocols/winkowski/rules.go), and no property of it is vacuous or uncounted; every
// part passes, and the portfolio's state counts are pinned.
// -short runs 200 seeds (which reach every rule) and the cheapest portfolio entry
// (crash-send: its verdict, its properties not vacuous, the restart rules reached).
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
	if testing.Short() {
		// The cheapest portfolio entry: its verdict and its properties.
		m, err := model.Lookup("winkowski")
		if err != nil {
			t.Fatal(err)
		}
		part, err := coverage.CheckConfig(m, Portfolio[len(Portfolio)-1], model.Options{Coverage: true, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if part.Verdict != "ok" {
			t.Errorf("%s: %s", part.Name, part.Verdict)
		}
		for _, p := range part.Coverage.Properties {
			if p.Status != "ok" {
				t.Errorf("[%s] %s is %s", part.Name, p.Name, p.Status)
			}
		}
		for _, tag := range []string{"F2 agent-restart", "F2 not-fresh"} {
			if part.Coverage.Rules[slices.IndexFunc(part.Coverage.Rules, func(r scenarios.RuleCoverage) bool { return r.Tag == tag })].Reached == 0 {
				t.Errorf("[%s] does not reach %s", part.Name, tag)
			}
		}
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
	// The portfolio's state counts are pinned (no-panic judges every distinct state):
	// a change means the game, or the checker, explores something else now.
	pins := map[string]int64{"chain": 157409, "restricted": 146378, "literal": 114628, "capacity": 111831, "agents": 205069, "crash-send": 7986}
	for _, p := range rep.Properties {
		if want, ok := pins[p.Part]; ok && p.Name == "always no-panic" && p.Checked != want && !scenariotest.Unpinned() {
			t.Errorf("portfolio %s: %d distinct states, pinned %d", p.Part, p.Checked, want)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Log("\n" + b.String())
	}
}
