package rpscen

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/coverage"
	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/scenarios"
)

// What `simrun coverage replication` reports: the default swarm (seeds 1-2000) and
// every portfolio configuration together reach every branched rule of the rule map,
// every part passes, and no property of any part is vacuous or uncounted. Under
// -short: swarm seeds 1-200 and the cheapest configuration; the swarm part must still
// reach every rule but the few rare ones listed (and the configuration its own).
func TestCoverage(t *testing.T) {
	if testing.Short() {
		coverageShort(t)
		return
	}
	rep, err := coverage.Protocol("replication", coverage.Options{Seeds: 2000})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	fail := false
	for _, p := range rep.Parts {
		if p.Verdict != "ok" {
			t.Errorf("%s: %s", p.Name, p.Verdict)
			fail = true
		}
	}
	if un := rep.Unreached(); len(un) > 0 {
		t.Errorf("%d branched rules unreached", len(un))
		fail = true
	}
	if v := rep.Vacuous(); len(v) > 0 {
		t.Errorf("%d properties vacuous or uncounted", len(v))
		fail = true
	}
	if fail || os.Getenv("RP_COVERAGE_LOG") != "" {
		t.Log(b.String())
	}
}

// rareInShortSwarm are the rules the first 200 swarm seeds may miss (the full swarm and
// the portfolio reach them).
var rareInShortSwarm = []string{"RP-2 fence", "RP-2 §5.1.4 resume", "RP-3 fence", "RP-2 §5.2.3 claimer adopts", "RP-2 §5.4.1 none found", "RP-2 §3.6.1 already applied", "RP-4 call dropped", "RP-2 §5.3.3 refused again", "RP-2 step down", "RP-2 §5.2.3 alone: claim", "RP-2 §5.2.4 two primaries", "RP-2 §5.2.3 claimer yields"}

func coverageShort(t *testing.T) {
	rep, err := coverage.Protocol("replication", coverage.Options{Seeds: 200, NoModel: true})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	_ = rep.WriteText(&b)
	for _, u := range rep.Unreached() {
		if !slices.Contains(rareInShortSwarm, u.Tag) {
			t.Errorf("swarm seeds 1-200 leave %s unreached", u.Tag)
		}
	}
	for _, p := range rep.Vacuous() {
		t.Errorf("swarm seeds 1-200: %s is %s", p.Name, p.Status)
	}
	if rep.Parts[0].Verdict != "ok" {
		t.Errorf("swarm seeds 1-200: %s", rep.Parts[0].Verdict)
	}
	m, err := model.Lookup("replication")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(m.Portfolio, func(c model.Config) bool { return c.Name == cheapest })
	part, err := coverage.CheckConfig(m, m.Portfolio[i], model.Options{Coverage: true})
	if err != nil {
		t.Fatal(err)
	}
	if part.Verdict != "ok" {
		t.Errorf("%s: %s", cheapest, part.Verdict)
	}
	for _, p := range part.Coverage.Properties {
		if p.Status != "ok" {
			t.Errorf("%s: %s is %s", cheapest, p.Name, p.Status)
		}
	}
	for _, tag := range cheapestReaches {
		if !slices.ContainsFunc(part.Coverage.Rules, func(r scenarios.RuleCoverage) bool { return r.Tag == tag && r.Reached > 0 }) {
			t.Errorf("%s does not reach %s", cheapest, tag)
		}
	}
	if t.Failed() {
		t.Log(b.String())
	}
}

// cheapest is the portfolio configuration -short checks, and what it must reach.
const cheapest = "registries"

var cheapestReaches = []string{"RP-2 §5.2.3 alone: wait", "RP-2 §5.2.3 alone: claim", "RP-2 §3.6.1 execute", "RP-1 notify"}
