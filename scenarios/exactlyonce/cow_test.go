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
// A change panics, which the checker reports as a violation of "no-panic". A stored
// node is encoded once, at its first Clone, however many clones handle inputs from
// it. One worker only: the encoding after a Handle goes to a shared buffer.
type guarded struct {
	*eo.Node
	from  *guarded // the node this one was cloned from, until this one handles an input
	enc   string   // from's encoding when this one was cloned
	self  string   // this node's encoding, once cloned (valid while known)
	known bool
}

// guardBuf is the scratch buffer of guarded.Handle.
var guardBuf []byte

func (g *guarded) Clone() sim.Node {
	if !g.known {
		g.self, g.known = string(g.Node.AppendState(nil)), true
	}
	return &guarded{Node: g.Node.Clone().(*eo.Node), from: g, enc: g.self}
}

func (g *guarded) Handle(in sim.Input, out *sim.Outbox) {
	g.known = false // this node changes now
	g.Node.Handle(in, out)
	if g.from != nil {
		guardBuf = g.from.Node.AppendState(guardBuf[:0])
		if string(guardBuf) != g.enc {
			panic(fmt.Sprintf("the node cloned for this %s input changed", in.Kind))
		}
	}
	g.from, g.enc = nil, ""
}

// Every state the checker stores stays as it was although the clones of its nodes
// share their maps. TestModelProperties and TestModelOptions explore their
// configurations with guarded nodes (the crash budget's restarts and EO-8's selection
// included); this adds a larger crash budget with the resource service, bounded
// (-short: to a quarter).
func TestModelCloneSharingInvisible(t *testing.T) {
	bound := int64(200_000)
	if testing.Short() {
		bound /= 4
	}
	res := checkModel(t, map[string]string{"crashes": "2", "pool": "true"}, model.Options{MaxStates: bound}, true)
	for _, p := range res.Properties {
		if p.Name == "no-panic" && p.Status == model.Failed {
			t.Fatalf("no-panic %s: %v", p.Status, res.Violation)
		}
	}
	if res.Distinct < bound {
		t.Fatalf("%d states explored, want the bound's %d", res.Distinct, bound)
	}
}
