package twophase

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/sim"
)

// Issue 14, item 2 (actor systems): with the participants declared interchangeable,
// the reduced search explores exactly one state per orbit — the orbits counted by brute
// force over the unreduced space, where every renaming of every reachable state is
// checked to be reachable too — for BFS on 1 and 2 workers and DFS, with the same
// verdict on every property.
func TestActor2PCSymmetryCountsOrbits(t *testing.T) {
	for _, c := range []struct{ parts, crashes, states, orbits int64 }{
		{2, 0, 149, 83}, {2, 1, 1141, 601}, {3, 0, 1463, 324}, {3, 1, 14632, 2865}, {4, 0, 15281, 1075},
	} {
		if testing.Short() && c.parts == 4 {
			t.Log("-short: 4 participants (24 renamings of 15,281 states) run in the full suite")
			continue
		}
		k, want := [2]int{int(c.parts), int(c.crashes)}, [2]int64{c.states, c.orbits}
		sys, err := Actors(Config{Participants: k[0], Crashes: k[1], Symmetry: true})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := model.VerifySymmetry(sys, 100000)
		if err != nil {
			t.Fatalf("participants=%d crashes=%d: %v", k[0], k[1], err)
		}
		if rep.States != want[0] || rep.Orbits != want[1] || rep.Reduced != rep.Orbits {
			t.Errorf("participants=%d crashes=%d: %+v, pinned %d states and %d orbits", k[0], k[1], rep, want[0], want[1])
		}
		t.Logf("participants=%d crashes=%d: %d states, %d orbits", k[0], k[1], rep.States, rep.Orbits)
	}
}

// unsorted is a coordinator whose renaming re-sorts its participants but leaves its
// list of yes votes unsorted: a renamed state the protocol can never reach once two
// participants voted (the initial state is fine). VerifySymmetry must catch it.
type unsorted struct{ C *Coordinator }

func (u *unsorted) Handle(in sim.Input, out *sim.Outbox) { u.C.Handle(in, out) }

func (u *unsorted) RenameNodes(p func(sim.NodeID) sim.NodeID) any {
	r := sim.RenameNodeIDs(u, p)
	slices.Sort(r.C.Parts)
	return r
}

func TestVerifySymmetryCatchesUnnormalizedRenaming(t *testing.T) {
	sys, _ := Actors(Config{Participants: 2, Crashes: 0, Symmetry: true,
		Coordinator: func(ps []sim.NodeID) sim.Node { return &unsorted{&Coordinator{Parts: ps}} }})
	_, err := model.VerifySymmetry(sys, 100000)
	if err == nil || !strings.Contains(err.Error(), "is not reachable") {
		t.Fatalf("VerifySymmetry accepted a renaming that unsorts the votes: %v", err)
	}
}

// Declarations the checker can see are wrong are refused in one line.
func TestActorSymmetryRefused(t *testing.T) {
	cases := []struct {
		name string
		edit func(a *model.Actors)
		want string
	}{
		{"coordinator and participant", func(a *model.Actors) { a.Symmetry.Nodes = []sim.NodeID{0, 1} }, "node types"},
		{"one node", func(a *model.Actors) { a.Symmetry.Nodes = []sim.NodeID{1} }, "1 interchangeable nodes"},
		{"twice", func(a *model.Actors) { a.Symmetry.Nodes = []sim.NodeID{1, 1} }, "twice"},
		{"unknown", func(a *model.Actors) { a.Symmetry.Nodes = []sim.NodeID{1, 9} }, "unknown node 9"},
		{"crash rights", func(a *model.Actors) { a.Crashes.Nodes = []sim.NodeID{0, 1} }, "one may crash"},
		{"workload", func(a *model.Actors) {
			a.Inject = append(a.Inject, model.Injection{To: 1, Msg: Prepare{}})
		}, "workload"},
		{"workload naming a node", func(a *model.Actors) {
			a.Inject = append(a.Inject, model.Injection{To: 0, Msg: Vote{From: 1, Yes: true}})
		}, "renamed is not input"},
		{"renaming that unsorts", func(a *model.Actors) {
			a.Nodes[0].New = func() sim.Node { return &unsortedAll{&Coordinator{Parts: []sim.NodeID{1, 2}}} }
		}, "initial state renamed differs"},
		{"initial state", func(a *model.Actors) {
			a.Nodes[1].New = func() sim.Node { return &Participant{Coord: 2} }
		}, "initial state renamed differs"},
		{"eventually", func(a *model.Actors) {
			a.Properties = append(a.Properties, model.Eventually("decided", func(s *model.State) bool { return len(model.GhostAs[Ledger](s).Decisions) > 0 }))
		}, "eventually-property"},
	}
	for _, c := range cases {
		sys, _ := Actors(Config{Participants: 2, Crashes: 1, Symmetry: true})
		c.edit(sys)
		_, err := model.Check(sys, model.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v (want one line with %q)", c.name, err, c.want)
		}
	}
}

// unsortedAll has no renaming of its own: the generic one unsorts its participants.
type unsortedAll struct{ C *Coordinator }

func (u *unsortedAll) Handle(in sim.Input, out *sim.Outbox) { u.C.Handle(in, out) }

// symForgetful is the seeded bug (forgetful) with its own renaming.
type symForgetful struct{ forgetful }

func (f *symForgetful) RenameNodes(p func(sim.NodeID) sim.NodeID) any {
	r := f.Coordinator.RenameNodes(p).(*Coordinator)
	return &symForgetful{forgetful{*r}}
}

// The reduction keeps the seeded bug's violation, at the same depth, and the
// counterexample (a path of real states) replays against the unreduced system too.
func TestActor2PCSymmetryKeepsSeededBug(t *testing.T) {
	cfg := Config{Participants: 3, Crashes: 1, Symmetry: true, Coordinator: func(ps []sim.NodeID) sim.Node {
		return &symForgetful{forgetful{Coordinator{Parts: ps}}}
	}}
	sys, err := Actors(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []model.Options{{Workers: 1}, {Workers: 2}, {Strategy: model.DFS}} {
		res, err := model.Check(sys, o)
		if err != nil {
			t.Fatal(err)
		}
		// Begin, three prepares, three votes (commit decided), crash, restart
		// (presumed abort): 9 steps after the initial state, as without the reduction.
		if res.Outcome != model.Violated || res.Violation.Name != "one decision" || (o.Strategy == model.BFS && res.Violation.Depth != 10) {
			t.Fatalf("%+v: %v %+v", o, res.Outcome, res.Violation)
		}
		var buf bytes.Buffer
		hdr := model.TraceHeader{Format: sim.TraceFormat, Engine: model.TraceEngine, Scenario: "2pc", Property: res.Violation.Name, Kind: res.Violation.Kind}
		if err := res.WriteTrace(&buf, res.Violation, hdr); err != nil {
			t.Fatal(err)
		}
		plain := *sys
		plain.Symmetry = model.Symmetry{}
		again, err := model.Replay(&plain, buf.Bytes())
		if err != nil || !bytes.Equal(again, buf.Bytes()) {
			t.Fatalf("%+v: the counterexample does not replay without the reduction: %v", o, err)
		}
	}
}
