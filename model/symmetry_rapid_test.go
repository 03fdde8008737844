package model_test

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/sim"
	"pgregory.net/rapid"
)

// gossiper is a node of a generated symmetric actor system: it treats node IDs only as
// names — it answers whoever told it, remembers who did (a sorted set), and broadcasts
// to its peers when kicked or when its timer fires.
type gossiper struct {
	Peers []sim.NodeID // every other node, sorted
	Seen  idSet        // senders heard from, sorted
	Heard int
	Max   int // hops a rumour travels; rumours heard at most 2·Max+1 times
	Timer bool
	// Plain stores the seen set as a plain []sim.NodeID, which renaming leaves
	// unsorted (a broken declaration, for the test that VerifySymmetry notices).
	Plain bool
}

type rumour struct {
	From sim.NodeID
	Hop  int
}

func (rumour) Kind() string { return "rumour" }

type kick struct{}

func (kick) Kind() string { return "kick" }

func (g *gossiper) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start:
		if g.Timer {
			out.SetTimer("tick", 0)
		}
	case sim.Restart:
		switch v, _ := in.Stable.Get("seen"); v := v.(type) {
		case idSet:
			g.Seen = v
		case []sim.NodeID:
			g.Seen = v
		}
	case sim.Receive:
		switch m := in.Msg.(type) {
		case kick:
			out.Broadcast(g.Peers, rumour{From: in.Self})
		case rumour:
			if g.Heard > 2*g.Max {
				return
			}
			g.Heard++
			if i, ok := slices.BinarySearch(g.Seen, m.From); !ok {
				g.Seen = slices.Insert(g.Seen, i, m.From)
				if g.Plain {
					out.Store("seen", []sim.NodeID(g.Seen))
				} else {
					out.Store("seen", g.Seen)
				}
				out.Observe("heard", m.From)
			}
			if m.Hop < g.Max {
				out.Send(m.From, rumour{From: in.Self, Hop: m.Hop + 1})
			}
		}
	case sim.Timeout:
		out.Broadcast(g.Peers, rumour{From: in.Self, Hop: g.Max})
	}
}

// RenameNodes implements model.NodeRenamer: the ID lists stay sorted.
func (g *gossiper) RenameNodes(p func(sim.NodeID) sim.NodeID) any {
	r := sim.RenameNodeIDs(g, p)
	slices.Sort(r.Peers)
	slices.Sort(r.Seen)
	return r
}

// heardLog is the ghost: the sorted set of nodes someone heard from.
type heardLog struct{ From []sim.NodeID }

func (l heardLog) RenameNodes(p func(sim.NodeID) sim.NodeID) any {
	r := sim.RenameNodeIDs(l, p)
	slices.Sort(r.From)
	return r
}

// idSet is a sorted set of node IDs; stored in stable storage too, so it renames
// itself sorted (a renamed stable value must be one the protocol could have written).
type idSet []sim.NodeID

func (s idSet) RenameNodes(p func(sim.NodeID) sim.NodeID) any {
	r := sim.RenameNodeIDs(s, p)
	slices.Sort(r)
	return r
}

func foldHeard(g any, o sim.Observation) any {
	l := g.(heardLog)
	v := o.Value.(sim.NodeID)
	if i, ok := slices.BinarySearch(l.From, v); !ok {
		l.From = slices.Insert(slices.Clone(l.From), i, v)
	}
	return l
}

// Issue 14, item 2: on generated symmetric actor systems — 2 or 3 interchangeable
// nodes, every network mode (FIFO or unordered, losses, duplicates), crashes with
// restarts from stable storage, cuts (both ways or one way), timers — the reduced
// search explores exactly one state per orbit (brute force over the unreduced space),
// every renaming of every reachable state is reachable with the same representative,
// and every verdict is the same with and without the reduction (VerifySymmetry).
func TestSymmetryOnGeneratedActorSystems(t *testing.T) {
	// 12 systems (3 with -short) unless -rapid.checks says otherwise: each is explored
	// eight times over; 300 passed when this was written.
	if fl := flag.Lookup("rapid.checks"); fl != nil && !flagSet("rapid.checks") {
		old := fl.Value.String()
		checks := "12"
		if testing.Short() {
			checks = "3"
		}
		_ = fl.Value.Set(checks)
		defer func() { _ = fl.Value.Set(old) }()
	}
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(2, 3).Draw(rt, "nodes")
		// Three nodes get one fault kind at most and short rumours (state spaces
		// stay under a few tens of thousands).
		small := n == 3
		maxHop := 0
		if !small {
			maxHop = rapid.IntRange(0, 1).Draw(rt, "max")
		}
		timer := rapid.Bool().Draw(rt, "timer")
		sys := &model.Actors{Name: "gossip"}
		ids := make([]sim.NodeID, n)
		for i := range ids {
			ids[i] = sim.NodeID(i)
		}
		for i := 0; i < n; i++ {
			peers := slices.DeleteFunc(slices.Clone(ids), func(id sim.NodeID) bool { return id == sim.NodeID(i) })
			sys.Nodes = append(sys.Nodes, sim.NodeSpec{Name: fmt.Sprintf("g%d", i), New: func() sim.Node {
				return &gossiper{Peers: peers, Max: maxHop, Timer: timer}
			}})
		}
		if rapid.Bool().Draw(rt, "kick all") || !timer { // something always happens
			for _, id := range ids {
				sys.Inject = append(sys.Inject, model.Injection{To: id, Msg: kick{}})
			}
		}
		sys.Network.Unordered = rapid.Bool().Draw(rt, "unordered")
		fault := rapid.SampledFrom([]string{"none", "lossy", "duplicating", "crash", "cut", "cut one way", "all"}).Draw(rt, "faults")
		if small && fault == "all" {
			fault = "none"
		}
		all := fault == "all"
		if all || fault == "lossy" {
			sys.Network.Lossy, sys.Network.MaxLosses = true, 1
		}
		if all || fault == "duplicating" {
			sys.Network.Duplicating, sys.Network.MaxDuplicates = true, 1
		}
		if all || fault == "crash" {
			sys.Crashes.Budget = 1
		}
		if all || fault == "cut" || fault == "cut one way" {
			sys.Cuts.Budget, sys.Cuts.OneWay = 1, fault == "cut one way"
		}
		sys.Ghost = model.Ghost{Init: heardLog{}, Fold: foldHeard}
		sys.Properties = []model.Property[*model.State]{
			model.Always("heard bounded", func(s *model.State) bool {
				return len(model.GhostAs[heardLog](s).From) <= s.NumNodes()
			}),
			model.Sometimes("everyone heard of", func(s *model.State) bool {
				return len(model.GhostAs[heardLog](s).From) == s.NumNodes()
			}),
			model.Sometimes("a node down with a rumour in flight", func(s *model.State) bool {
				for i := 0; i < s.NumNodes(); i++ {
					if !s.Up(sim.NodeID(i)) && s.NumInFlight() > 0 {
						return true
					}
				}
				return false
			}),
		}
		sys.Symmetry = model.Symmetry{Nodes: ids}
		rep, err := model.VerifySymmetry(sys, 300000)
		if err != nil {
			rt.Fatal(err)
		}
		// No run may end in a panic: a restart that panicked would stop every path
		// at the crash and leave the counts uncompared.
		res, err := model.Check(sys, model.Options{})
		if err != nil || res.Properties[0].Name != "no-panic" || res.Properties[0].Status != model.Holds {
			rt.Fatalf("the generated system panics: %v %+v", err, res.Violation)
		}
		if rep.Orbits > rep.States {
			rt.Fatalf("%+v: more orbits than states", rep)
		}
		rt.Logf("%d nodes: %+v", n, rep)
	})
}

// flagSet reports whether the named flag was given on the command line.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// A stable value that names nodes in a sorted list must rename itself sorted; stored
// as a plain slice, its renaming is a state the protocol never writes, and
// VerifySymmetry says so.
func TestVerifySymmetryCatchesUnsortedStableValue(t *testing.T) {
	ids := []sim.NodeID{0, 1, 2}
	sys := &model.Actors{Name: "gossip", Symmetry: model.Symmetry{Nodes: ids}}
	for i := range ids {
		peers := slices.DeleteFunc(slices.Clone(ids), func(id sim.NodeID) bool { return id == sim.NodeID(i) })
		sys.Nodes = append(sys.Nodes, sim.NodeSpec{Name: fmt.Sprintf("g%d", i), New: func() sim.Node {
			return &gossiper{Peers: peers, Max: 1, Plain: true}
		}})
		sys.Inject = append(sys.Inject, model.Injection{To: sim.NodeID(i), Msg: kick{}})
	}
	sys.Properties = []model.Property[*model.State]{model.Always("true", func(*model.State) bool { return true })}
	if _, err := model.VerifySymmetry(sys, 300000); err == nil || !strings.Contains(err.Error(), "is not reachable") {
		t.Fatalf("an unsorted stable value passed: %v", err)
	}
	for i := range sys.Nodes {
		peers := slices.DeleteFunc(slices.Clone(ids), func(id sim.NodeID) bool { return id == sim.NodeID(i) })
		sys.Nodes[i].New = func() sim.Node { return &gossiper{Peers: peers, Max: 1} }
	}
	if _, err := model.VerifySymmetry(sys, 300000); err != nil {
		t.Fatalf("the sorted one: %v", err)
	}
}

// tagged is a message whose Kind names its sender: the symmetry signature must not
// read Kind (renaming changes it), or two renamings of one state get different
// representatives (found by a review).
type tagged struct{ From sim.NodeID }

func (m tagged) Kind() string { return fmt.Sprintf("from-%d", m.From) }

type tagger struct {
	Peers []sim.NodeID
	Got   idSet
}

func (g *tagger) Handle(in sim.Input, out *sim.Outbox) {
	switch m := in.Msg.(type) {
	case kick:
		out.Broadcast(g.Peers, tagged{From: in.Self})
	case tagged:
		if i, ok := slices.BinarySearch(g.Got, m.From); !ok {
			g.Got = slices.Insert(slices.Clone(g.Got), i, m.From)
		}
	}
}

func (g *tagger) RenameNodes(p func(sim.NodeID) sim.NodeID) any {
	r := sim.RenameNodeIDs(g, p)
	slices.Sort(r.Peers)
	slices.Sort(r.Got)
	return r
}

func TestSymmetryKindMayNameANode(t *testing.T) {
	for _, c := range []struct{ n, orbits int }{{2, 6}, {3, 30}} {
		ids := make([]sim.NodeID, c.n)
		for i := range ids {
			ids[i] = sim.NodeID(i)
		}
		sys := &model.Actors{Name: "tags", Symmetry: model.Symmetry{Nodes: ids}, Network: model.Network{Unordered: true}}
		for i := range ids {
			peers := slices.DeleteFunc(slices.Clone(ids), func(id sim.NodeID) bool { return id == sim.NodeID(i) })
			sys.Nodes = append(sys.Nodes, sim.NodeSpec{Name: fmt.Sprintf("t%d", i), New: func() sim.Node { return &tagger{Peers: peers} }})
			sys.Inject = append(sys.Inject, model.Injection{To: sim.NodeID(i), Msg: kick{}})
		}
		rep, err := model.VerifySymmetry(sys, 100000)
		if err != nil || rep.Orbits != int64(c.orbits) {
			t.Fatalf("n=%d: %+v %v (want %d orbits)", c.n, rep, err, c.orbits)
		}
	}
}

// passer passes a ball back and forth; a state leads to its own renaming, and two
// invariants fail, so a DFS that stops at its first violation meets a different one
// with the reduction than without. VerifySymmetry must not call that a difference
// (found by a review): both searches report a violation.
type passer struct {
	Peer sim.NodeID
	Hold bool
}

type ball struct{}

func (ball) Kind() string { return "ball" }

func (p *passer) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start:
		out.SetTimer("go", 0)
	case sim.Timeout:
		if in.Timer == "go" {
			p.Hold = true
			out.SetTimer("pass", 0)
			return
		}
		p.Hold = false
		out.SetTimer("go", 0)
		out.Send(p.Peer, ball{})
	case sim.Receive:
		p.Hold = true
		out.CancelTimer("go")
		out.SetTimer("pass", 0)
	}
}

func TestVerifySymmetryStopsAtDifferentViolations(t *testing.T) {
	sys := &model.Actors{Name: "pass", Symmetry: model.Symmetry{Nodes: []sim.NodeID{0, 1}}}
	for i := 0; i < 2; i++ {
		peer := sim.NodeID(1 - i)
		sys.Nodes = append(sys.Nodes, sim.NodeSpec{Name: fmt.Sprintf("p%d", i), New: func() sim.Node { return &passer{Peer: peer} }})
	}
	holders := func(s *model.State) int {
		n := 0
		for i := 0; i < s.NumNodes(); i++ {
			if p, ok := model.NodeAs[*passer](s, sim.NodeID(i)); ok && p.Hold {
				n++
			}
		}
		return n
	}
	sys.Boundary = func(s *model.State) bool { return s.NumInFlight() <= 1 }
	sys.Properties = []model.Property[*model.State]{
		model.Always("no holder while a ball flies", func(s *model.State) bool { return holders(s) == 0 || s.NumInFlight() == 0 }),
		model.Always("never two holders", func(s *model.State) bool { return holders(s) < 2 }),
	}
	if _, err := model.VerifySymmetry(sys, 100000); err != nil {
		t.Fatal(err)
	}
	res, err := model.Check(sys, model.Options{Strategy: model.DFS})
	if err != nil || res.Outcome != model.Violated {
		t.Fatalf("DFS with the reduction: %v %v", err, res.Outcome)
	}
}
