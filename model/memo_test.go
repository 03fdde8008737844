package model

import (
	"fmt"
	mathbits "math/bits"
	"strings"
	"sync"
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
	systems := memoSystems()
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

// BFS and DFS hand the successors they discard back to the actor system, which builds later
// successors in their memory (Spec.worker). Nothing may still refer to a state taken
// back: with recyclePoison every state is wiped as it is taken back, and every search
// must end as before, memoized or not, on one and two workers and depth-first.
func TestRecycledStatesUnused(t *testing.T) {
	defer func() { recyclePoison = false }()
	for i, sys := range memoSystems() {
		for _, memo := range []bool{false, true} {
			for _, o := range []Options{{}, {Workers: 2}, {Strategy: DFS}} {
				s := *sys
				s.Memoize = memo
				recyclePoison = false
				want := mustCheck(t, &s, o)
				recyclePoison = true
				got := mustCheck(t, &s, o)
				if g, w := summary(got), summary(want); g != w {
					t.Errorf("system %d, memo %v, workers %d: %s with poisoned recycling, %s without", i, memo, o.Workers, g, w)
				}
			}
		}
	}
}

// summary is what a search found: outcome, counts, and each property's verdict.
func summary(res *Result) string {
	s := fmt.Sprint(res.Outcome, res.Distinct, res.Total, res.Depth)
	for _, p := range res.Properties {
		s += fmt.Sprint(" ", p.Name, p.Status, p.Depth)
	}
	return s
}

// memoSystems are small systems with every kind of action.
func memoSystems() []*Actors {
	tick := time.Second
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
		// Six nodes (more than a State holds inline) and nine links.
		{Nodes: []sim.NodeSpec{node("a", fanOut), node("b", receiver), node("c", relay), node("d", relay), node("e", relay), node("f", relay)},
			Inject: goInput(), Ghost: seqGhost, Network: Network{Unordered: true, Lossy: true, MaxLosses: 1}, Crashes: Crashes{Budget: 1}},
	}
	return systems
}

// fanOut sends msg k to node k, for k = 1..5, when the workload says go.
func fanOut(n *scripted, in sim.Input, out *sim.Outbox) {
	if in.Kind == sim.Receive && in.From == sim.Env {
		for k := 1; k <= 5; k++ {
			out.Send(sim.NodeID(k), msg{N: k})
		}
	}
}

// relay passes msg k on to node 1 as msg 10+k.
func relay(n *scripted, in sim.Input, out *sim.Outbox) {
	if in.Kind == sim.Receive && in.From == 0 {
		m := in.Msg.(msg)
		n.Got = append(n.Got, m.N)
		out.Send(1, msg{N: 10 + m.N})
	}
}

// A memo hit skips the handler: a system whose state space revisits node states
// calls each distinct (slot, input) pair twice (the two random draws that test the
// declaration) and never again, so fewer times than without the memo.
func TestMemoSkipsRepeatedCalls(t *testing.T) {
	calls := 0
	sys := countingSystem(&calls)
	sys.Memoize = true
	res, err := Check(sys, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	plain := *sys
	plain.Memoize, plain.NoMemo = false, true
	calls0 := calls
	calls = 0
	if _, err := Check(&plain, Options{Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if calls0 == 0 || calls0 >= calls {
		t.Fatalf("%d handler calls with the memo, %d without (%d states)", calls0, calls, res.Distinct)
	}
}

// dice keeps a bit of Input.Rand, as bit draws it, on every delivery: its effects
// depend on the random bits, so declaring Memoize for it is false.
func dice(bit func(uint64) uint64) func(n *scripted, in sim.Input, out *sim.Outbox) {
	return func(n *scripted, in sim.Input, out *sim.Outbox) {
		if in.Kind == sim.Receive {
			n.Count = n.Count*2 + int(bit(in.Rand))
		}
	}
}

// A false Memoize declaration is refuted, not believed: the checker makes every call
// it would keep with two other draws of random bits too, and the first call whose
// effects differ ends the check with an error naming the node (states reached through
// entries kept before it may be missing, so no count is reported). A bit read as it
// is, a hashed bit (half of such calls agree on the complement) and a parity (which
// the complement never changes) are all caught, on every strategy; the same system
// without the declaration checks as usual.
func TestMemoRefusesRandomEffects(t *testing.T) {
	bits := map[string]func(uint64) uint64{
		"low bit":    func(r uint64) uint64 { return r & 1 },
		"hashed bit": func(r uint64) uint64 { return sim.Mix64(r) & 1 },
		"parity":     func(r uint64) uint64 { return uint64(mathbits.OnesCount64(r) & 1) },
	}
	for name, bit := range bits {
		sys := &Actors{Nodes: []sim.NodeSpec{node("a", sender), node("b", dice(bit))},
			Inject: goInput(), Network: Network{Unordered: true, Duplicating: true, MaxDuplicates: 2}}
		plain := mustCheck(t, sys, Options{Workers: 1})
		if plain.Outcome != Complete || plain.Distinct < 50 {
			t.Fatalf("%s: without the declaration %v, %d states", name, plain.Outcome, plain.Distinct)
		}
		memo := *sys
		memo.Memoize = true
		for _, o := range []Options{{Workers: 1}, {Workers: 2}, {Strategy: DFS}, {Strategy: Random, Seed: 1, Walks: 50, MaxDepth: 20}} {
			res, err := Check(&memo, o)
			if err == nil || !strings.Contains(err.Error(), "node b's handler") || !strings.Contains(err.Error(), "declaration is false") {
				t.Errorf("%s, %+v: result %v, error %v; want the declaration refuted", name, o, res, err)
			}
		}
	}
}

// The memo's shards publish read-only maps as they fill: every entry put is found
// again, by any goroutine, whether it sits in the published map or still waits in the
// shard's dirty map, and a second put of a key keeps one entry.
func TestMemoTableFindsEveryEntry(t *testing.T) {
	m := newMemoTable()
	const n = 20000
	old := memoMax
	defer func() { memoMax = old }()
	memoMax = n // full at the last put: every shard publishes what waits
	key := func(i int) memoKey { return memoKey{slot: sim.Mix64(uint64(i)), in: uint64(i)} }
	entries := make([]*memoEntry, n)
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 2 {
				entries[i] = &memoEntry{}
				m.put(key(i), entries[i])
				if m.get(key(i)) != entries[i] {
					t.Errorf("entry %d not found right after its put", i)
					return
				}
				if j := i / 2; m.get(key(j)) == nil && j%2 == w {
					t.Errorf("entry %d lost", j)
					return
				}
			}
		}()
	}
	wg.Wait()
	published := 0
	for i := range m.shards {
		if ro := m.shards[i].ro.Load(); ro != nil {
			published += len(*ro)
		}
	}
	if published != n || !m.full() {
		t.Errorf("%d of %d entries published to the read-only maps once the memo is full (full: %v)", published, n, m.full())
	}
	for i := 0; i < n; i++ {
		if m.get(key(i)) != entries[i] {
			t.Fatalf("entry %d: got another", i)
		}
	}
	m.put(key(7), &memoEntry{})
	if got := m.n.Load(); got != n {
		t.Errorf("%d entries counted, want %d", got, n)
	}
	if m.get(key(n)) != nil {
		t.Error("a key never put was found")
	}
}

// A full memo keeps replaying what it holds and adds nothing: with room for no entry
// the handler is called exactly as often as without the memo, with room for a few it
// is called less often, and the results never change.
func TestMemoBound(t *testing.T) {
	calls := 0
	sys := countingSystem(&calls)
	run := func(memo bool, bound int64) (string, int) {
		t.Helper()
		old := memoMax
		defer func() { memoMax = old }()
		memoMax = bound
		s := *sys
		s.Memoize = memo
		calls = 0
		res := mustCheck(t, &s, Options{Workers: 1})
		return fmt.Sprint(res.Outcome, res.Distinct, res.Total, res.Depth), calls
	}
	want, plain := run(false, 0)
	got0, calls0 := run(true, 0)
	got4, calls4 := run(true, 4)
	gotAll, callsAll := run(true, 1<<20)
	if got0 != want || got4 != want || gotAll != want {
		t.Fatalf("results differ: plain %s, bound 0 %s, bound 4 %s, unbounded %s", want, got0, got4, gotAll)
	}
	if calls0 != plain {
		t.Errorf("a memo with no room: %d handler calls, %d without the memo", calls0, plain)
	}
	if !(callsAll < calls4 && calls4 < plain+3*4) {
		t.Errorf("handler calls: unbounded %d, bound 4 %d, plain %d", callsAll, calls4, plain)
	}
}

// countingSystem is a sender, a receiver that counts its handler calls in *calls, and
// a bystander, with unordered links and a crash.
func countingSystem(calls *int) *Actors {
	counting := func(n *scripted, in sim.Input, out *sim.Outbox) {
		*calls++
		receiver(n, in, out)
	}
	return &Actors{Nodes: []sim.NodeSpec{node("a", sender), node("b", counting), node("c", receiver)},
		Inject: goInput(), Network: Network{Unordered: true}, Crashes: Crashes{Budget: 1}}
}

// Without a declaration the memo is automatic: a handler whose effects depend on the
// random bits (dice) is checked as without the memo — its calls are marked random and
// always made — with the same counts; a handler whose effects do not is memoized.
func TestMemoAutomatic(t *testing.T) {
	for _, c := range []struct {
		name string
		bit  func(uint64) uint64
	}{
		{"low bit", func(r uint64) uint64 { return r & 1 }},
		{"parity", func(r uint64) uint64 { return uint64(mathbits.OnesCount64(r) & 1) }},
	} {
		name, bit := c.name, c.bit
		sys := &Actors{Nodes: []sim.NodeSpec{node("a", sender), node("b", dice(bit))}, Inject: goInput(),
			Crashes: Crashes{Budget: 1, Nodes: []sim.NodeID{1}}}
		auto, err := Check(sys, Options{Workers: 1})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		off := *sys
		off.NoMemo = true
		plain, err := Check(&off, Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if auto.Distinct != plain.Distinct || auto.Total != plain.Total {
			t.Fatalf("%s: automatic memo %d/%d states, without %d/%d", name, auto.Distinct, auto.Total, plain.Distinct, plain.Total)
		}
	}
	calls := 0
	sys := countingSystem(&calls)
	if _, err := Check(sys, Options{Workers: 1}); err != nil {
		t.Fatal(err)
	}
	withMemo := calls
	calls = 0
	off := *sys
	off.NoMemo = true
	if _, err := Check(&off, Options{Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if withMemo >= calls {
		t.Fatalf("automatic memo: %d handler calls, %d without: nothing memoized", withMemo, calls)
	}
}
