package sim_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

// broadcaster stores a counter and broadcasts it to nodes 1..Peers on every tick.
type broadcaster struct {
	Peers int
	n     int
}

func (b *broadcaster) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start:
		out.SetTimer("tick", 10*ms)
	case sim.Timeout:
		b.n++
		out.Store("n", b.n)
		for p := 1; p <= b.Peers; p++ {
			out.Send(sim.NodeID(p), seqMsg{N: b.n})
		}
		out.Observe("sent", b.n)
		out.SetTimer("tick", 10*ms)
	}
}

// A crash-send cuts one call's sends short: the stable write is applied, a strict
// prefix of the broadcast (in a seeded order) arrives, the node is down afterwards and
// its timer is gone; the prefix varies with the seed; the run is deterministic.
func TestCrashSendCutsABroadcast(t *testing.T) {
	prefixes := map[int]bool{}
	orders := map[string]bool{}
	for seed := uint64(1); seed <= 40; seed++ {
		nodes := []sim.Node{&broadcaster{Peers: 4}, recorder{}, recorder{}, recorder{}, recorder{}}
		k := mustKernel(t, sim.Config{Seed: seed, Nodes: specs(nodes...), Until: sim.Time(200 * ms)})
		k.Schedule(sim.Time(25*ms), sim.Fault{Kind: sim.FaultCrashSend, Node: 0, For: 50 * ms})
		r := k.Run()
		if r.Final[0].Up {
			t.Fatalf("seed %d: the broadcaster is up after its crash-send", seed)
		}
		if v, ok := r.Final[0].Stable.Peek("n"); !ok || v.(int) != 3 {
			t.Fatalf("seed %d: stable n = %v, want 3 (the cut call's write applied)", seed, v)
		}
		var got []int
		for p := 1; p <= 4; p++ {
			s := gotSeqs(r, sim.NodeID(p))
			if len(s) < 2 || s[0] != 1 || s[1] != 2 {
				t.Fatalf("seed %d: node %d got %v, want the first two broadcasts whole", seed, p, s)
			}
			if len(s) == 3 {
				got = append(got, p)
			}
			if len(s) > 3 {
				t.Fatalf("seed %d: node %d got %v after the crash", seed, p, s)
			}
		}
		if len(got) == 4 {
			t.Fatalf("seed %d: every peer got the cut broadcast", seed)
		}
		prefixes[len(got)] = true
		orders[string(rune('0'+len(got)))+string(slicesToRunes(got))] = true
		if r.Messages.Sent != 12 || r.Messages.Lost != int64(4-len(got)) {
			t.Fatalf("seed %d: sent %d lost %d, want 12 sent and the %d unsent lost", seed, r.Messages.Sent, r.Messages.Lost, 4-len(got))
		}
	}
	for n := 0; n < 4; n++ {
		if !prefixes[n] {
			t.Errorf("over 40 seeds no crash-send let exactly %d of 4 sends leave (%v)", n, prefixes)
		}
	}
	if len(orders) < 6 {
		t.Errorf("only %d distinct sets of receivers over 40 seeds: the order is not drawn", len(orders))
	}
}

func slicesToRunes(ns []int) []rune {
	rs := make([]rune, len(ns))
	for i, n := range ns {
		rs[i] = rune('0' + n)
	}
	return rs
}

// A node that sends nothing in the window crashes at the window's end; a restart after
// it works; traces of crash-send runs are byte-identical for one seed.
func TestCrashSendWindowEndAndDeterminism(t *testing.T) {
	var tb bytes.Buffer
	tw := sim.NewTraceWriter(&tb)
	if err := tw.Header(map[string]any{"seed": 3}); err != nil {
		t.Fatal(err)
	}
	nodes := []sim.Node{recorder{}, &sender{To: 0, Count: 3, Gap: 100 * ms}}
	k := mustKernel(t, sim.Config{Seed: 3, Nodes: specs(nodes...), Until: sim.Time(400 * ms), Trace: tw})
	k.Schedule(sim.Time(10*ms), sim.Fault{Kind: sim.FaultCrashSend, Node: 0, For: 30 * ms})
	k.Schedule(sim.Time(50*ms), sim.Fault{Kind: sim.FaultRestart, Node: 0})
	r := k.Run()
	if !r.Final[0].Up {
		t.Fatal("the recorder is down at the end: the restart after its window did not bring it back")
	}
	if s := gotSeqs(r, 0); !slices.Equal(s, []int{0, 1, 2}) {
		t.Fatalf("recorder got %v, want [0 1 2] (down only from 40ms to 50ms)", s)
	}
	if !bytes.Contains(tb.Bytes(), []byte(`"t":40000000,"ev":"crash","node":"n0","why":"crash-send: no send in its window`)) {
		t.Fatalf("no crash at the window's end (40ms) in the trace:\n%s", tb.Bytes())
	}

	trace := func() []byte {
		var b bytes.Buffer
		tw := sim.NewTraceWriter(&b)
		if err := tw.Header(map[string]any{"seed": 7}); err != nil {
			t.Fatal(err)
		}
		nodes := []sim.Node{&broadcaster{Peers: 4}, recorder{}, recorder{}, recorder{}, recorder{}}
		k := mustKernel(t, sim.Config{Seed: 7, Nodes: specs(nodes...), Until: sim.Time(200 * ms), Trace: tw})
		k.Schedule(sim.Time(25*ms), sim.Fault{Kind: sim.FaultCrashSend, Node: 0, For: 50 * ms})
		k.Run()
		return b.Bytes()
	}
	a, b := trace(), trace()
	if !bytes.Equal(a, b) {
		t.Fatal("two crash-send runs of one seed gave different traces")
	}
	if !bytes.Contains(a, []byte(`"sender crashed"`)) || !bytes.Contains(a, []byte(`crashed part-way`)) {
		t.Fatalf("the trace does not show the cut sends and the crash:\n%s", a)
	}
}
