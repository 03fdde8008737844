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
		g.Seen, _ = sim.Load[idSet](in.Stable, "seen")
		if ids, ok := sim.Load[[]sim.NodeID](in.Stable, "seen"); ok {
			g.Seen = ids
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
	// 20 systems (5 with -short) unless -rapid.checks says otherwise: each is explored
	// seven times over; 300 passed when this was written (40 s).
	if fl := flag.Lookup("rapid.checks"); fl != nil && !flagSet("rapid.checks") {
		old := fl.Value.String()
		checks := "20"
		if testing.Short() {
			checks = "5"
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
