package rpscen

import (
	"testing"

	"github.com/simrun-dev/simrun/model"
)

func walk(t *testing.T, params map[string]string, walks int) *model.Result {
	t.Helper()
	m, err := model.Lookup("replication")
	if err != nil {
		t.Fatal(err)
	}
	sys, _, err := m.Instantiate(params)
	if err != nil {
		t.Fatal(err)
	}
	res, err := model.Check(sys, model.Options{Strategy: model.Random, Walks: walks, Seed: 1, MaxDepth: 400})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// `simrun check replication` is too large to explore exhaustively (millions of states
// before the first tick ends: every interleaving of the registrations, lookups and
// pings of a tick); seeded random walks search it. The protocol violates nothing on
// them, and the walks reach a failover after which every request is answered.
func TestModelWalks(t *testing.T) {
	res := walk(t, nil, 400)
	if res.Violation != nil {
		t.Fatalf("violation: %v", res.Violation.Name)
	}
	for _, p := range res.Properties {
		if p.Name == "a failover, and every request answered" && p.Status != model.Witnessed {
			t.Fatalf("%s: %v", p.Name, p.Status)
		}
	}
}

// The walks catch a primary without the duplicate check (a re-sent request executed
// again after a failover: RP-P1).
func TestModelCatchesNoDup(t *testing.T) {
	res := walk(t, map[string]string{"bug": "no-dup"}, 400)
	if res.Violation == nil || res.Violation.Name != "RP-P1 exactly once" {
		t.Fatalf("violation %v, want RP-P1 exactly once", res.Violation)
	}
}
