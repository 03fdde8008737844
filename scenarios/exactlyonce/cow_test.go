package eoscen

import (
	"fmt"
	"testing"

	"github.com/simrun-dev/simrun/model"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// guarded wraps a node to check its copy-on-write Clone under the model checker: a
// clone shares the maps of the node it was cloned from (already stored in the
// checker's table), so that node must not change when the clone handles an input.
// A change panics, which the checker reports as a violation of "no-panic".
type guarded struct {
	*eo.Node
	from *eo.Node
	enc  string
}

func (g *guarded) Clone() sim.Node {
	return &guarded{Node: g.Node.Clone().(*eo.Node), from: g.Node, enc: string(g.Node.AppendState(nil))}
}

func (g *guarded) Handle(in sim.Input, out *sim.Outbox) {
	g.Node.Handle(in, out)
	if g.from != nil && string(g.from.AppendState(nil)) != g.enc {
		panic(fmt.Sprintf("the node cloned for this %s input changed", in.Kind))
	}
	g.from, g.enc = nil, ""
}

// Every state the checker stores stays as it was although the clones of its nodes
// share their maps: explored with guarded nodes, the configurations give their pinned
// counts without a panic (the crash budget's restarts and EO-8's selection included).
func TestModelCloneSharingInvisible(t *testing.T) {
	for _, tc := range []struct {
		params    map[string]string
		maxStates int64
		distinct  int64 // 0: bounded search, not pinned
	}{
		{map[string]string{"crashes": "0"}, 1_000_000, 242_468},
		{map[string]string{"crashes": "0", "pool": "true"}, 1_000_000, 242_476},
		{map[string]string{"crashes": "0", "selection": "protocol"}, 1_000_000, 38_072},
		{map[string]string{"crashes": "0", "selection": "protocol", "majority-select": "true"}, 200_000, 0},
		{map[string]string{"crashes": "1", "observers": "1", "selection": "protocol"}, 200_000, 0},
		{map[string]string{"crashes": "2", "pool": "true"}, 200_000, 0},
	} {
		t.Run(fmt.Sprint(tc.params), func(t *testing.T) {
			m, err := model.Lookup("exactlyonce")
			if err != nil {
				t.Fatal(err)
			}
			sys, _, err := m.Instantiate(tc.params)
			if err != nil {
				t.Fatal(err)
			}
			a := sys.(*model.Actors)
			for i := range a.Nodes {
				build := a.Nodes[i].New
				a.Nodes[i].New = func() sim.Node { return &guarded{Node: build().(*eo.Node)} }
			}
			res, err := model.Check(a, model.Options{MaxStates: tc.maxStates})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.Properties {
				if p.Name == "no-panic" && p.Status == model.Failed {
					t.Fatalf("no-panic %s: %v", p.Status, res.Violation)
				}
			}
			if tc.distinct != 0 && res.Distinct != tc.distinct {
				t.Fatalf("distinct %d, pinned %d", res.Distinct, tc.distinct)
			}
		})
	}
}
