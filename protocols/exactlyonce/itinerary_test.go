package exactlyonce

import (
	"strings"
	"testing"
)

var testNames = []string{"n0", "n1", "n2", "n3", "n4"}

// Bad itineraries are rejected with one clear line naming the stage and the node.
func TestItineraryErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "itinerary: no stages"},
		{"n0 | n1 , n2:5 | n3", ""}, // spaces around names are fine
		{"n0 | | n1", "itinerary stage 1: empty stage"},
		{"n0 | n1,,n2", "itinerary stage 1: empty node name at position 2 (stray comma?)"},
		{"n0 | n1, ,", "itinerary stage 1: empty node name at position 2 (stray comma?)"},
		{"n0 | :2,n1", "itinerary stage 1: empty node name at position 1 (stray comma?)"},
		{"n0 | n1:4294967297", `itinerary stage 1: node n1: priority "4294967297" is not a 32-bit integer`},
		{"n0 | n1,n2,n1", "itinerary stage 1: node n1 listed twice"},
		{"n0 | n1,n7", `itinerary stage 1: unknown node "n7" (nodes: n0, n1, n2, n3, n4)`},
		{"n0 | n1:1,n2:1", "itinerary stage 1: priorities not distinct (n1 and n2 both have 1)"},
		{"n0 | n1:0", "itinerary stage 1: node n1 has priority 0"},
		{"n0 | n1:x", `itinerary stage 1: node n1: priority "x" is not a 32-bit integer`},
		{"n0,n1 | n2", "itinerary stage 0: the launch stage is the agent's home queue and must have exactly one node (got 2)"},
	} {
		_, err := ParseItinerary(tc.in, testNames, "seats")
		if tc.want == "" {
			if err != nil {
				t.Errorf("%q: unexpected error %v", tc.in, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line starting %q", tc.in, err, tc.want)
		}
	}
	// Validate catches the same on hand-built itineraries, unknown node ids included.
	bad := Itinerary{Stages: []Stage{{Nodes: []StageNode{{Node: 0, Rank: 1}}}, {Nodes: []StageNode{{Node: 9, Rank: 1}}}}}
	if err := bad.Validate(testNames); err == nil || !strings.Contains(err.Error(), "unknown node 9") {
		t.Errorf("Validate: %v", err)
	}
	if err := (Itinerary{}).Validate(testNames); err == nil {
		t.Error("Validate accepted an empty itinerary")
	}
}

// Ranks default to list order; explicit ranks set the priority; records sort by rank.
func TestItineraryRanksAndRecord(t *testing.T) {
	it, err := ParseItinerary("n0 | n3,n1,n2 | n4:2,n1:1", testNames, "seats")
	if err != nil {
		t.Fatal(err)
	}
	if it.Home() != 0 || it.Stages[0].Pool != "" || it.Stages[1].Pool != "seats" {
		t.Fatalf("home %d pools %q %q", it.Home(), it.Stages[0].Pool, it.Stages[1].Pool)
	}
	rec := makeRecord(StageID{Agent: 1, Hop: 2}, it.Stages[2].Nodes)
	if rec.Worker() != 1 || !rec.Higher(1, 4) || rec.Rank(3) != 0 || rec.Majority() != 2 {
		t.Fatalf("record %+v", rec)
	}
	if got := it.String(testNames); got != "n0:1 | n3:1,n1:2,n2:3 | n4:2,n1:1" {
		t.Fatalf("String() = %q", got)
	}
	if got := (StageRecord{Nodes: make([]StageNode, 4)}).Majority(); got != 3 {
		t.Fatalf("majority of 4 = %d, want 3", got)
	}
}
