package model_test

import (
	"fmt"
	"testing"

	"github.com/simrun-dev/simrun/model"
	_ "github.com/simrun-dev/simrun/model/twophase"
	_ "github.com/simrun-dev/simrun/scenarios/exactlyonce"
	_ "github.com/simrun-dev/simrun/scenarios/leasing"
	_ "github.com/simrun-dev/simrun/scenarios/winkowski"
)

// Issue 14, item 3: what partial-order reduction could cut from the shipped actor
// models. PORBound explores each model's whole graph and then the graph a node-level
// persistent-set search would explore with an oracle that knows every future (see its
// doc): the cut it reports bounds what such a reduction can achieve, and is why simrun
// offers none (README, "Not offered"). The counts are pinned; every end state of the full
// graph (no successor, not cut off by a bound) must be reached by the reduced one, as
// Godefroid's theorem says of a sound persistent-set search (a dependency the bound
// missed would show here: the exactlyonce model lost end states until restarts counted).
// The test also counts how often two deliveries to one node commute where both are
// enabled (most do: the limit is elsewhere, in the Boundary, crashes and restarts).
func TestPORBound(t *testing.T) {
	cases := []struct {
		model   string
		params  map[string]string
		full    int
		reduced int
		commute [2]int // pairs of deliveries to one node, commuting pairs
		slow    bool
	}{
		{"2pc", nil, 1141, 986, [2]int{199, 183}, false},
		{"2pc", map[string]string{"participants": "3"}, 14632, 11541, [2]int{7638, 7356}, false},
		{"winkowski", nil, 157409, 41632, [2]int{93780, 93229}, false},
		{"exactlyonce", map[string]string{"crashes": "0"}, 242468, 219847, [2]int{74098, 64549}, false},
		{"leasing", nil, 690770, 614386, [2]int{0, 0}, true},
		{"exactlyonce", nil, 4077594, 3865618, [2]int{1257592, 1136730}, true}, // 40 s, 1.2 GiB
	}
	for _, c := range cases {
		name := c.model
		for k, v := range c.params {
			name += fmt.Sprintf(",%s=%s", k, v)
		}
		t.Run(name, func(t *testing.T) {
			if c.slow && testing.Short() {
				t.Skip("-short: the larger models run in the full suite")
			}
			m, err := model.Lookup(c.model)
			if err != nil {
				t.Fatal(err)
			}
			sys, _, err := m.Instantiate(c.params)
			if err != nil {
				t.Fatal(err)
			}
			var ends, comm [2]int
			model.PORBoundEnds, model.PORBoundCommute = &ends, &comm
			defer func() { model.PORBoundEnds, model.PORBoundCommute = nil, nil }()
			full, reduced, err := model.PORBound(sys.(*model.Actors))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d states, %d with the oracle's persistent sets (%.2f× fewer); %d end states, %d reached",
				full, reduced, float64(full)/float64(reduced), ends[0], ends[1])
			t.Logf("%d pairs of deliveries to one node enabled together, %d of them commute (%.0f %%)",
				comm[0], comm[1], 100*float64(comm[1])/float64(max(comm[0], 1)))
			if full != c.full || reduced != c.reduced || comm != c.commute {
				t.Errorf("got %d states, %d reduced, pairs %v; want %d, %d, %v", full, reduced, comm, c.full, c.reduced, c.commute)
			}
			if ends[0] == 0 || ends[1] != ends[0] {
				t.Errorf("the reduced graph reaches %d of %d end states: a dependency escapes the bound", ends[1], ends[0])
			}
		})
	}
}
