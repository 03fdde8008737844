package model

import (
	"fmt"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// The handler-call memo (Actors.Memoize) must change nothing but speed: every small
// system with every kind of action (FIFO and unordered deliveries, losses,
// duplicates, crashes and restarts, cuts, discrete time with drift and MaxDelay,
// guarded deliveries, ghosts, a protocol panic) is checked without the memo, with it,
// and with it verifying every hit (memoVerify: the handler is called as well and its
// effects compared with the replayed ones), on one and two workers; the statistics
// and every property's verdict must agree.
func TestMemoChangesNothing(t *testing.T) {
	tick := time.Second
	rearm := func(n *scripted, in sim.Input, out *sim.Outbox) {
		switch in.Kind {
		case sim.Start:
			out.SetTimer("t", tick)
		case sim.Receive:
			out.SetTimer("t", 2*tick)
		case sim.Timeout:
			n.Count++
			out.Send(1, msg{N: n.Count})
			if n.Count < 2 {
				out.SetTimer("t", tick)
			}
		}
	}
	bad := func(n *scripted, in sim.Input, out *sim.Outbox) {
		if in.Kind == sim.Receive && in.Msg.(msg).N == 2 {
			panic("two")
		}
		receiver(n, in, out)
	}
	systems := []*Actors{
		{Nodes: []sim.NodeSpec{node("a", sender), node("b", receiver), node("c", receiver)},
			Inject: goInput(), Network: Network{Unordered: true, Lossy: true, MaxLosses: 1}, Crashes: Crashes{Budget: 1}, Cuts: Cuts{Budget: 1}},
		{Nodes: []sim.NodeSpec{node("a", sender), node("b", receiver)},
			Inject: goInput(), Ghost: seqGhost, Cuts: Cuts{Budget: 2, OneWay: true}},
		{Nodes: []sim.NodeSpec{node("a", rearm), node("b", receiver)},
			Inject: []Injection{{To: 0, Msg: msg{}, At: 1}}, Ghost: seqGhost,
			Time: DiscreteTime{Tick: tick, MaxTicks: 4, Drift: []int{1, 0}, MaxDelay: 1}},
		{Nodes: []sim.NodeSpec{node("a", sender), node("b", receiver)}, Inject: goInput(), Ghost: seqGhost,
			Network: Network{Duplicating: true, MaxDuplicates: 2}, Crashes: Crashes{Budget: 2}},
		{Nodes: []sim.NodeSpec{node("a", sender), node("b", bad)}, Inject: goInput(), Crashes: Crashes{Budget: 1}},
		guardedSystem(true),
		guardedSystem(false),
	}
	summary := func(res *Result) string {
		s := fmt.Sprint(res.Outcome, res.Distinct, res.Total, res.Depth)
		for _, p := range res.Properties {
			s += fmt.Sprint(" ", p.Name, p.Status, p.Depth)
		}
		return s
	}
	defer func() { memoVerify = false }()
	for i, sys := range systems {
		for _, o := range []Options{{}, {Workers: 2}, {Strategy: DFS}} {
			memoVerify = false
			want := summary(mustCheck(t, sys, o))
			m := *sys
			m.Memoize = true
			for _, verify := range []bool{false, true} {
				memoVerify = verify
				if got := summary(mustCheck(t, &m, o)); got != want {
					t.Errorf("system %d, %+v, verify %v: memoized %s, plain %s", i, o, verify, got, want)
				}
			}
		}
	}
}

// A memo hit skips the handler: a system whose state space revisits node states
// calls each distinct (slot, input) pair twice (the two random draws that test the
// declaration) and never again, so fewer times than without the memo.
func TestMemoSkipsRepeatedCalls(t *testing.T) {
	calls := 0
	counting := func(n *scripted, in sim.Input, out *sim.Outbox) {
		calls++
		receiver(n, in, out)
	}
	sys := &Actors{Nodes: []sim.NodeSpec{node("a", sender), node("b", counting), node("c", receiver)},
		Inject: goInput(), Network: Network{Unordered: true}, Crashes: Crashes{Budget: 1}, Memoize: true}
	res, err := Check(sys, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	plain := *sys
	plain.Memoize = false
	calls0 := calls
	calls = 0
	if _, err := Check(&plain, Options{Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if calls0 == 0 || calls0 >= calls {
		t.Fatalf("%d handler calls with the memo, %d without (%d states)", calls0, calls, res.Distinct)
	}
}

// dice keeps a bit drawn from Input.Rand on every delivery: its effects depend on the
// random bits, so declaring Memoize for it is wrong.
func dice(n *scripted, in sim.Input, out *sim.Outbox) {
	if in.Kind == sim.Receive {
		n.Count = n.Count*2 + int(in.Rand&1)
	}
}

// A wrong Memoize declaration changes nothing either: the checker tests it on every
// call it would keep (the call is also made with the complement of the random bits)
// and keeps none whose effects differ, so a node that stores random bits explores
// the same states with and without the declaration.
func TestMemoRefusesRandomEffects(t *testing.T) {
	sys := &Actors{Nodes: []sim.NodeSpec{node("a", sender), node("b", dice)},
		Inject: goInput(), Network: Network{Unordered: true, Duplicating: true, MaxDuplicates: 2}}
	plain := mustCheck(t, sys, Options{Workers: 1})
	memo := *sys
	memo.Memoize = true
	for _, o := range []Options{{Workers: 1}, {Workers: 2}, {Strategy: DFS}} {
		got := mustCheck(t, &memo, o)
		if got.Distinct != plain.Distinct || got.Total != plain.Total || got.Depth != plain.Depth {
			t.Errorf("%+v: memoized %d distinct, %d total, depth %d; plain %d, %d, %d",
				o, got.Distinct, got.Total, got.Depth, plain.Distinct, plain.Total, plain.Depth)
		}
	}
}
