package model

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Review tests of the handler-call memo (Actors.Memoize): systems whose handlers
// depend on everything a call may legitimately read — the local clock, Self, stable
// storage, timers, injections, restarts — with ghosts that read the global clock and
// the order of observations, panics in Fold, guarded delivery, Boundary, symmetry,
// liveness, random walks, and systems large enough to overflow the State's inline
// node and link buffers. Each is checked with and without the memo (and with every
// hit verified), and the counts, every property's verdict, depth and trace bytes
// must agree.

// rnode is a review node: F is its behaviour; A, B, L its state.
type rnode struct {
	F func(n *rnode, in sim.Input, out *sim.Outbox)
	A int
	B int
	L []int
}

func (n *rnode) Handle(in sim.Input, out *sim.Outbox) { n.F(n, in, out) }

func rspec(name string, f func(n *rnode, in sim.Input, out *sim.Outbox)) sim.NodeSpec {
	return sim.NodeSpec{Name: name, New: func() sim.Node { return &rnode{F: f} }}
}

// memoSummary renders a result completely: counts, verdicts, depths, and each
// property's trace (WriteTrace), which must also replay.
func memoSummary(t *testing.T, sys *Actors, o Options) string {
	t.Helper()
	res := mustCheck(t, sys, o)
	if testing.Verbose() {
		t.Logf("%v/%d memo %v: %v %d distinct %d total", o.Strategy, o.Workers, sys.Memoize, res.Outcome, res.Distinct, res.Total)
	}
	s := fmt.Sprint(res.Outcome, " ", res.Bound, " ", res.Distinct, " ", res.Total, " ", res.Depth, " ",
		res.LivenessChecked, " ", res.ProductStates)
	if o.Workers > 1 && res.Outcome != Complete {
		// A parallel search stops mid-level at a violation: counts and the path
		// found first may differ from run to run, with or without the memo.
		s = fmt.Sprint(res.Outcome)
	}
	for _, p := range res.Properties {
		s += fmt.Sprint("\n", p.Name, " ", p.Status, " ", p.Depth, " ", p.Cycle, " ", p.Why)
		if p.HasTrace && (o.Workers <= 1 || res.Outcome == Complete && p.Kind != SometimesKind) {
			var b bytes.Buffer
			hdr := TraceHeader{Format: sim.TraceFormat, Engine: TraceEngine, Scenario: "review", Property: p.Name, Kind: p.Kind, Cycle: p.Cycle}
			if err := res.WriteTrace(&b, p, hdr); err != nil {
				t.Fatal(err)
			}
			if again, err := Replay(sys, b.Bytes()); err != nil || !bytes.Equal(again, b.Bytes()) {
				t.Fatalf("%s: replay: %v\n%s\n%s", p.Name, err, again, b.Bytes())
			}
			s += "\n" + b.String()
		}
	}
	return s
}

// memoAgrees checks sys under each option set with and without the memo, and with
// every memo hit verified.
func memoAgrees(t *testing.T, name string, sys *Actors, opts ...Options) {
	t.Helper()
	defer func() { memoVerify = false }()
	for _, o := range opts {
		memoVerify = false
		plain := *sys
		plain.Memoize, plain.NoMemo = false, true
		want := memoSummary(t, &plain, o)
		m := *sys
		m.Memoize = true
		for _, verify := range []bool{false, true} {
			memoVerify = verify
			if got := memoSummary(t, &m, o); got != want {
				t.Errorf("%s, %+v, verify %v:\nmemoized %s\nplain    %s", name, o, verify, got, want)
			}
		}
	}
}

var allStrategies = []Options{{}, {Workers: 2}, {Strategy: DFS}, {Strategy: Random, Seed: 3, Walks: 20, MaxDepth: 40}}

// Discrete time with drift and MaxDelay: the handlers read Now, Self and their stable
// storage, set timers whose durations depend on the clock, send what they read; a
// crash loses the volatile state and a restart reloads it; the ghost folds the
// global clock, the local clock, the node and the order of observations.
func TestMemoReviewDiscreteTime(t *testing.T) {
	tick := time.Second
	clocked := func(n *rnode, in sim.Input, out *sim.Outbox) {
		now := int(time.Duration(in.Now) / tick)
		switch in.Kind {
		case sim.Start:
			out.SetTimer("t", tick*time.Duration(int(in.Self)%2+1))
		case sim.Restart:
			n.A, _ = sim.Load[int](in.Stable, "a")
			out.SetTimer("t", tick)
			out.Observe("restart", now)
		case sim.Timeout:
			n.A++
			out.Store("a", n.A)
			out.Send((in.Self+1)%3, msg{N: now*10 + int(in.Self)})
			if n.A < 2 {
				out.SetTimer("t", tick*time.Duration(now%2+1))
			}
		case sim.Receive:
			m := in.Msg.(msg)
			n.B = m.N%5 + now
			if last, ok := sim.Load[int](in.Stable, "last"); ok && last == m.N {
				out.Observe("again", m.N)
			}
			if now%2 == 0 {
				out.Store("last", m.N)
			}
			out.Observe("rcv", [2]int{int(in.Self), m.N})
		}
	}
	ghost := Ghost{Init: 0, Fold: func(g any, o sim.Observation) any {
		x := int(time.Duration(o.Time)/tick)*7 + int(time.Duration(o.Local)/tick)*3 + int(o.Node)
		return (g.(int)*5 + x + len(o.Kind)) % 23
	}}
	sys := &Actors{
		Nodes:   []sim.NodeSpec{rspec("a", clocked), rspec("b", clocked), rspec("c", clocked)},
		Inject:  []Injection{{To: 1, Msg: msg{N: 7}, At: 1}},
		Crashes: Crashes{Budget: 1, Nodes: []sim.NodeID{1}},
		Time:    DiscreteTime{Tick: tick, MaxTicks: 2, Drift: []int{1, 0, 0}, MaxDelay: 1},
		Ghost:   ghost,
		Properties: []Property[*State]{
			Sometimes("ghost 11", func(s *State) bool { return GhostAs[int](s) == 11 }),
			Sometimes("restarted late", func(s *State) bool { return s.Faults().Crashes == 1 && s.Up(1) && time.Duration(s.Now()) >= 2*tick }),
		},
	}
	memoAgrees(t, "clocked", sys, allStrategies...)
	bad := *sys
	bad.Properties = []Property[*State]{Always("ghost not 17", func(s *State) bool { return GhostAs[int](s) != 17 })}
	memoAgrees(t, "clocked, violated", &bad, allStrategies...)
}

// A ghost fold that panics at one global time only: a call memoized at another time
// (and its last fold) must not be replayed there; nor a fold from another ghost.
func TestMemoReviewFoldPanicsByClock(t *testing.T) {
	tick := time.Second
	pinger := func(n *rnode, in sim.Input, out *sim.Outbox) {
		switch in.Kind {
		case sim.Start:
			out.SetTimer("p", tick)
		case sim.Timeout:
			out.Send(1, msg{N: 1})
			n.A++
			if n.A < 3 {
				out.SetTimer("p", tick)
			}
		}
	}
	echo := func(n *rnode, in sim.Input, out *sim.Outbox) {
		if in.Kind == sim.Receive {
			out.Observe("x", in.Msg.(msg).N) // the node's state never changes
		}
	}
	for _, at := range []int{1, 2, 3} {
		sys := &Actors{
			Nodes: []sim.NodeSpec{rspec("p", pinger), rspec("e", echo)},
			Time:  DiscreteTime{Tick: tick, MaxTicks: 4, Drift: []int{1, 1}},
			Ghost: Ghost{Init: 0, Fold: func(g any, o sim.Observation) any {
				if time.Duration(o.Time) == time.Duration(at)*tick && g.(int) >= 1 {
					panic("fold at " + fmt.Sprint(at))
				}
				return g.(int) + 1
			}},
		}
		memoAgrees(t, fmt.Sprint("fold panics at ", at), sys, Options{}, Options{Strategy: DFS}, Options{Workers: 2})
	}
}

// More nodes than State.nodeBuf holds and more links than linkBuf: every delivery
// broadcasts to every node (itself included), over an unordered, lossy, duplicating
// network with a cut; the scratch call (the declaration's test) must leave the real
// state as it was. Every state is also checked for consistency with its cached
// hashes (a shared slot or link changed in place would break it).
func TestMemoReviewManyNodesAndLinks(t *testing.T) {
	const n = 6
	bcast := func(nd *rnode, in sim.Input, out *sim.Outbox) {
		if in.Kind != sim.Receive {
			return
		}
		m := in.Msg.(msg)
		nd.L = append(nd.L, m.N)
		if nd.A < 1 && m.N < 2 {
			nd.A++
			for i := 0; i < n; i++ {
				if i != int(in.Self) {
					out.Send(sim.NodeID(i), msg{N: m.N + 1})
				}
			}
			out.Send(in.Self, msg{N: 9})
		}
		out.Observe("got", m.N)
	}
	var nodes []sim.NodeSpec
	for i := 0; i < n; i++ {
		nodes = append(nodes, rspec(fmt.Sprint("n", i), bcast))
	}
	sys := &Actors{
		Nodes:    nodes,
		Inject:   []Injection{{To: 0, Msg: msg{N: 0}}, {To: 3, Msg: msg{N: 1}}},
		Network:  Network{Unordered: true, Lossy: true, MaxLosses: 1},
		Cuts:     Cuts{Budget: 1, Pairs: [][2]sim.NodeID{{0, 1}}},
		Boundary: func(s *State) bool { return s.NumInFlight() <= 10 },
		Properties: []Property[*State]{
			Always("consistent", stateConsistent),
			Sometimes("all got", func(s *State) bool {
				for i := 0; i < n; i++ {
					if r, _ := NodeAs[*rnode](s, sim.NodeID(i)); r == nil || len(r.L) == 0 {
						return false
					}
				}
				return true
			}),
		},
	}
	memoAgrees(t, "broadcast", sys, Options{MaxStates: 5000}, Options{Strategy: DFS, MaxStates: 5000})
	dup := *sys
	dup.Network = Network{Duplicating: true, MaxDuplicates: 1}
	dup.Crashes = Crashes{Budget: 1, Nodes: []sim.NodeID{2}}
	memoAgrees(t, "broadcast, duplicating", &dup, Options{MaxStates: 5000}, Options{Strategy: DFS, MaxStates: 5000})
}

// stateConsistent recomputes a state's hashes from its contents.
func stateConsistent(s *State) bool {
	var msgs int32
	for _, ns := range s.nodes {
		if ns.node != nil && nodeHash(ns.node) != ns.h || ns.node == nil && ns.h != 0 {
			return false
		}
		if storageHash(ns.store) != ns.sh || ns.hash() != ns.hs {
			return false
		}
	}
	for i, l := range s.links {
		if len(l.msgs) == 0 || i > 0 && (s.links[i-1].from > l.from || s.links[i-1].from == l.from && s.links[i-1].to >= l.to) {
			return false
		}
		for _, e := range l.msgs {
			if msgHash(e.msg) != e.h {
				return false
			}
		}
		msgs += int32(len(l.msgs))
	}
	if msgs != s.nmsgs || s.sys.a.Ghost.Fold != nil && ghostHash(s.ghost) != s.ghostH {
		return false
	}
	return s.sys.sym != nil || s.fingerprint() == s.fp
}

// Guarded delivery with crashes, restarts from stable storage and duplicates: whether
// a delivery is inert depends on the receiver's slot, and the memo replays it; the
// eventually-property is decided on the product graph, with and without fairness.
func TestMemoReviewGuardedLiveness(t *testing.T) {
	server := func(n *rnode, in sim.Input, out *sim.Outbox) {
		switch in.Kind {
		case sim.Restart:
			n.A, _ = sim.Load[int](in.Stable, "ready")
		case sim.Receive:
			switch m := in.Msg.(msg); {
			case m.N == 0:
				if n.A == 0 {
					n.A = 1
					out.Store("ready", 1)
				}
			case n.A == 1 && n.B < 2:
				n.B++
				out.Observe("served", n.B)
				out.Send(in.From, msg{N: 5})
			}
		}
	}
	client := func(n *rnode, in sim.Input, out *sim.Outbox) {
		switch in.Kind {
		case sim.Start:
			out.Send(0, msg{N: 1 + int(in.Self)})
		case sim.Receive:
			n.A++
		}
	}
	ready := func(n *rnode, in sim.Input, out *sim.Outbox) {
		if in.Kind == sim.Start {
			out.Send(0, msg{N: 0})
		}
	}
	sys := &Actors{
		Nodes:   []sim.NodeSpec{rspec("server", server), rspec("c1", client), rspec("c2", client), rspec("init", ready)},
		Network: Network{Guarded: true, Duplicating: true, MaxDuplicates: 1},
		Crashes: Crashes{Budget: 1, Nodes: []sim.NodeID{0}},
		Ghost: Ghost{Init: 0, Fold: func(g any, o sim.Observation) any {
			return g.(int) + o.Value.(int)
		}},
		Properties: []Property[*State]{
			Eventually("served twice", func(s *State) bool { return GhostAs[int](s) >= 3 }),
			Eventually("c1 answered", func(s *State) bool { r, _ := NodeAs[*rnode](s, 1); return r != nil && r.A > 0 }),
			Always("consistent", stateConsistent),
		},
	}
	memoAgrees(t, "guarded", sys, Options{}, Options{Fair: true}, Options{Strategy: DFS, Fair: true}, Options{Workers: 2, Fair: true})
	// A Boundary that cuts paths before the property holds: it stays unknown, why.
	cut := *sys
	cut.Boundary = func(s *State) bool { return s.NumInFlight() <= 3 }
	memoAgrees(t, "guarded, bounded", &cut, Options{Fair: true}, Options{Strategy: DFS})
	ng := *sys
	ng.Network.Guarded = false
	memoAgrees(t, "unguarded", &ng, Options{}, Options{Fair: true}, Options{Strategy: DFS})
}

// rvote is a participant's vote: it names its sender (renamed by symmetry).
type rvote struct{ From sim.NodeID }

func (rvote) Kind() string { return "Vote" }

// Symmetry reduction with the memo: the participants are interchangeable; each
// replies with its own ID, stores its vote and may crash and restart; the coordinator
// counts votes. The memo is keyed by node index, the reduction by orbit.
func TestMemoReviewSymmetry(t *testing.T) {
	coord := func(n *rnode, in sim.Input, out *sim.Outbox) {
		if in.Kind != sim.Receive {
			return
		}
		if in.From == sim.Env {
			for i := 1; i <= 3; i++ {
				out.Send(sim.NodeID(i), msg{N: 0})
			}
			return
		}
		n.A++
		out.Observe("vote", n.A)
		if n.A == 2 {
			out.Send(in.Msg.(rvote).From, msg{N: 1})
		}
	}
	part := func(n *rnode, in sim.Input, out *sim.Outbox) {
		switch in.Kind {
		case sim.Restart:
			n.A, _ = sim.Load[int](in.Stable, "v")
			if n.A == 1 {
				out.Send(0, rvote{From: in.Self})
			}
		case sim.Receive:
			m := in.Msg.(msg)
			if m.N == 0 && n.A == 0 {
				n.A = 1
				out.Store("v", 1)
				out.Send(0, rvote{From: in.Self})
			} else if m.N == 1 {
				n.B = 1
				out.Observe("won", 1)
			}
		}
	}
	sys := &Actors{
		Nodes:    []sim.NodeSpec{rspec("coord", coord), rspec("p1", part), rspec("p2", part), rspec("p3", part)},
		Inject:   goInput(),
		Crashes:  Crashes{Budget: 1, Nodes: []sim.NodeID{1, 2, 3}},
		Symmetry: Symmetry{Nodes: []sim.NodeID{1, 2, 3}},
		Ghost: Ghost{Init: 0, Fold: func(g any, o sim.Observation) any {
			return g.(int) + o.Value.(int)
		}},
		Properties: []Property[*State]{
			Sometimes("won", func(s *State) bool { return GhostAs[int](s) >= 4 }),
			Always("consistent", stateConsistent),
		},
	}
	memoAgrees(t, "symmetry", sys, Options{}, Options{Workers: 2}, Options{Strategy: DFS})
	m := *sys
	m.Memoize = true
	rep, err := VerifySymmetry(&m, 100000)
	if err != nil {
		t.Fatalf("VerifySymmetry with the memo: %v (%+v)", err, rep)
	}
}

// cowNode shares its slice with its clones, copy-on-write (as sim.Cloner allows).
type cowNode struct {
	L []int
	A int
}

func (c *cowNode) Clone() sim.Node { d := *c; return &d }

func (c *cowNode) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start:
		c.L = make([]int, 0, 8) // spare capacity: an in-place append would be seen by the original
	case sim.Receive:
		m := in.Msg.(msg)
		c.L = append(slices.Clip(c.L), m.N)
		c.A += m.N
		// Observations holding a map and a pointer, built fresh by each call.
		out.Observe("m", map[string]int{"n": m.N, "len": len(c.L)})
		out.Observe("p", &struct{ N int }{c.A})
		if len(c.L) < 3 {
			out.Send((in.Self+1)%2, msg{N: m.N + 1})
		}
	}
}

// A node that clones copy-on-write, observations whose values are a map and a
// pointer, folded in order into the ghost.
func TestMemoReviewCloneAndObservationValues(t *testing.T) {
	sys := &Actors{
		Nodes: []sim.NodeSpec{
			{Name: "a", New: func() sim.Node { return &cowNode{} }},
			{Name: "b", New: func() sim.Node { return &cowNode{} }},
		},
		Inject:  []Injection{{To: 0, Msg: msg{N: 1}}, {To: 1, Msg: msg{N: 2}}, {To: 0, Msg: msg{N: 3}}},
		Network: Network{Unordered: true, Duplicating: true, MaxDuplicates: 1},
		Crashes: Crashes{Budget: 1},
		Ghost: Ghost{Init: []int(nil), Fold: func(g any, o sim.Observation) any {
			l := g.([]int)
			switch v := o.Value.(type) {
			case map[string]int:
				l = append(l, v["n"]*10+v["len"])
			case *struct{ N int }:
				l = append(l, -v.N)
			}
			if len(l) > 4 {
				l = l[len(l)-4:]
			}
			return l
		}},
		Properties: []Property[*State]{
			Always("consistent", stateConsistent),
			Sometimes("ghost", func(s *State) bool { g := GhostAs[[]int](s); return len(g) == 4 && g[0] == 32 }),
		},
	}
	memoAgrees(t, "cow", sys, Options{}, Options{Workers: 2}, Options{Strategy: DFS})
}
