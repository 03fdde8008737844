// Package simbench holds the kernel's benchmark bodies, shared by `go test -bench`
// (sim/bench_test.go) and `simrun bench`.
package simbench

import (
	"container/heap"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// InFlight is the number of events pending in both benchmarks' steady state.
const InFlight = 64

type token struct{ hops int }

func (*token) Kind() string { return "Token" }

// ring forwards every token to the next node.
type ring struct{ n int }

func (r *ring) Handle(in sim.Input, out *sim.Outbox) {
	if in.Kind == sim.Receive {
		t := in.Msg.(*token)
		t.hops++
		out.Send(sim.NodeID((int(in.Self)+1)%r.n), t)
	}
}

// Kernel measures one scheduled-and-delivered event through the real kernel: pop from
// the event queue, dispatch to the node's handler, apply its effect (one send: latency
// draw, FIFO clamp, push). InFlight tokens circulate on a ring of 8 nodes; the timed
// loop starts after a warm-up, so allocs/op is the steady state.
func Kernel(b *testing.B) {
	const nodes = 8
	specs := make([]sim.NodeSpec, nodes)
	for i := range specs {
		specs[i] = sim.NodeSpec{Name: string(rune('a' + i)), New: func() sim.Node { return &ring{n: nodes} }}
	}
	k, err := sim.New(sim.Config{
		Seed: 1, Nodes: specs,
		Network:   sim.Network{Latency: sim.Uniform(time.Millisecond, 3*time.Millisecond)},
		MaxTime:   sim.Time(1 << 62),
		MaxEvents: 1 << 62,
	})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < InFlight; i++ {
		k.Inject(0, sim.NodeID(i%nodes), &token{})
	}
	for i := 0; i < 10_000; i++ {
		k.Step()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !k.Step() {
			b.Fatal("kernel ran dry")
		}
	}
}

// item is a comparable event for the baseline: the same ordering key and a payload of
// the same shape as the kernel's events.
type item struct {
	at   int64
	seq  uint64
	node int32
	from int32
	msg  sim.Message
}

type itemHeap []item

func (h itemHeap) Len() int { return len(h) }
func (h itemHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || (h[i].at == h[j].at && h[i].seq < h[j].seq)
}
func (h itemHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)   { *h = append(*h, x.(item)) }
func (h *itemHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// HeapBaseline measures one push and one pop on a bare container/heap holding
// InFlight comparable events: the floor any event-queue simulator pays.
func HeapBaseline(b *testing.B) {
	h := &itemHeap{}
	tok := &token{}
	var seq uint64
	for i := 0; i < InFlight; i++ {
		seq++
		heap.Push(h, item{at: int64(i), seq: seq, msg: tok})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x := heap.Pop(h).(item)
		seq++
		heap.Push(h, item{at: x.at + 1_000_000 + int64(seq&1023), seq: seq, node: x.from, from: x.node, msg: x.msg})
	}
}
