package exactlyonce

import (
	"sync"
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

// Clone may be called on one node from several goroutines at once, and the clones
// handled at once (the model checker's workers clone stored nodes): Clone marks the
// maps the node owns as shared through an atomic flag in a separate object, never by
// writing the node, and neither the node nor any clone sees another's writes. Along a
// walk whose nodes are handled in place (so they own maps), every node is cloned by
// four goroutines that each deliver the node's next message to their clone; the node
// and every clone must end as a clone handled alone would. Run with -race.
func TestConcurrentClonesShareSafely(t *testing.T) {
	r := sim.NewRand(11)
	h := newNet(t, 5, nil)
	h.launch(h.agent(1, "n0 | n1,n2,n3 | n4,n0"))
	h.launch(h.agent(2, "n4 | n2,n3,n1 | n0,n1,n2"))
	for step := 0; step < 300; step++ {
		walkStep(h, r)
		for i, n := range h.nodes {
			if n == nil || !h.up[i] {
				continue
			}
			in := sim.Input{Kind: sim.Start, Self: sim.NodeID(i), Stable: h.stable[i].View()}
			for _, e := range h.queue {
				if e.to == sim.NodeID(i) {
					in = sim.Input{Kind: sim.Receive, From: e.from, Msg: e.msg, Self: sim.NodeID(i), Stable: h.stable[i].View()}
					break
				}
			}
			if in.Kind == sim.Start {
				continue
			}
			before := string(n.AppendState(nil))
			alone := n.Clone().(*Node)
			alone.Handle(in, &sim.Outbox{})
			want := string(alone.AppendState(nil))
			got := make([]string, 4)
			var wg sync.WaitGroup
			for g := range got {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := n.Clone().(*Node)
					c.Handle(in, &sim.Outbox{})
					got[g] = string(c.AppendState(nil))
				}()
			}
			wg.Wait()
			for g := range got {
				if got[g] != want {
					t.Fatalf("step %d: n%d: clone %d handled alongside others ends differently", step, i, g)
				}
			}
			if string(n.AppendState(nil)) != before {
				t.Fatalf("step %d: n%d changed when its clones handled an input", step, i)
			}
		}
	}
}
