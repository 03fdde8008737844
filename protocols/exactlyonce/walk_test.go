package exactlyonce

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"unsafe"

	"github.com/simrun-dev/simrun/sim"
)

// Random walks over the hand-driven network: any queued message may be delivered
// next (per-link FIFO kept), any pending timer may fire, nodes crash and restart.
// After every step: the fields mirroring stable storage equal what a restart would
// load from it, Clone is faithful (same state, same encoding), EO-I1 holds on stable
// storage, and no stage commits twice. Clone shares the node's maps (copy-on-write),
// so the walks check that sharing is invisible both ways: on even walks every step
// handles clones, as the model checker does, and the nodes they were cloned from must
// not change; on odd walks the nodes are handled in place, as the simulator does, and
// the clones taken along the way must not change.
func TestRandomWalksKeepInvariantsAndMirrors(t *testing.T) {
	walks := 150
	if testing.Short() {
		walks = 60
	}
	for w := 0; w < walks; w++ {
		r := sim.NewRand(uint64(w) + 1)
		mod := func(c *Config) {
			c.MajoritySelect = r.Bernoulli(0.5)
			c.StaticNext = r.Bernoulli(0.3)
			c.Capacity = int32(r.IntN(3))
		}
		h := newNet(t, 5, mod)
		seen := map[string]*Node{}
		routes := []string{"n0 | n1,n2,n3 | n4,n0", "n4 | n2,n3,n1 | n0,n1,n2", "n0 | n3,n4 | n1"}
		for a := 0; a < 1+r.IntN(3); a++ {
			h.launch(h.agent(AgentID(a+1), routes[a%len(routes)]))
		}
		for step := 0; step < 400; step++ {
			var orig []*Node
			var before []string
			if w%2 == 0 {
				orig = slices.Clone(h.nodes)
				for i, n := range h.nodes {
					before = append(before, "")
					if n != nil {
						before[i] = string(n.AppendState(nil))
						h.nodes[i] = n.Clone().(*Node)
					}
				}
			}
			walkStep(h, r)
			for i, n := range orig {
				if n != nil && string(n.AppendState(nil)) != before[i] {
					t.Fatalf("walk %d step %d: n%d changed when its clone handled an input", w, step, i)
				}
			}
			if err := checkWalk(h, seen); err != nil {
				t.Fatalf("walk %d step %d: %v", w, step, err)
			}
		}
		for enc, c := range seen {
			if string(c.AppendState(nil)) != enc {
				t.Fatalf("walk %d: a clone changed when the node it was cloned from handled inputs", w)
			}
		}
	}
}

func walkStep(h *net, r *sim.Rand) {
	switch x := r.IntN(100); {
	case x < 3: // crash a running node
		if id := sim.NodeID(r.IntN(len(h.nodes))); h.up[id] {
			h.crash(id)
		}
	case x < 8: // restart a crashed node
		for i := range h.nodes {
			if !h.up[i] {
				h.restart(sim.NodeID(i))
				break
			}
		}
	case x < 30: // fire a timer
		var ids []sim.NodeID
		for i := range h.nodes {
			if h.up[i] && len(h.timers[i]) > 0 {
				ids = append(ids, sim.NodeID(i))
			}
		}
		if len(ids) > 0 {
			id := ids[r.IntN(len(ids))]
			ts := h.pending(id, "")
			tm := ts[r.IntN(len(ts))]
			delete(h.timers[id], tm)
			h.call(id, sim.Input{Kind: sim.Timeout, Timer: tm})
		}
	default: // deliver the head of a random link
		if len(h.queue) == 0 {
			return
		}
		e := h.queue[r.IntN(len(h.queue))]
		h.deliverOne(func(f envelope) bool { return f.from == e.from && f.to == e.to })
	}
}

func checkWalk(h *net, seen map[string]*Node) error {
	live := map[StageID][]sim.NodeID{}
	for i, n := range h.nodes {
		for _, it := range Inspect(h.stable[i]) {
			if it.Kind == StableOrch {
				live[it.Stage] = append(live[it.Stage], sim.NodeID(i))
			}
		}
		if n == nil {
			continue
		}
		fresh := NewNode(h.cfg)
		fresh.init()
		fresh.load(h.stable[i].View())
		for _, f := range []struct {
			name       string
			have, want any
		}{
			{"queue", n.queue, fresh.queue}, {"orchSet", n.orchSet, fresh.orchSet}, {"orch", n.orch, fresh.orch},
			{"prepared", n.prepared, fresh.prepared}, {"commitLog", n.commitLog, fresh.commitLog},
			{"pools", n.pools, fresh.pools}, {"resPrep", n.resPrep, fresh.resPrep}, {"seq", n.seq, fresh.seq},
		} {
			if !equalState(f.have, f.want) {
				return fmt.Errorf("n%d: %s mirror %+v differs from stable storage %+v", i, f.name, f.have, f.want)
			}
		}
		c := n.Clone().(*Node)
		if !reflect.DeepEqual(emptyToNil(c), emptyToNil(n)) {
			return fmt.Errorf("n%d: Clone differs from the node", i)
		}
		// The encoding is injective: a node seen before with the same bytes is equal.
		enc := string(n.AppendState(nil))
		if old, ok := seen[enc]; ok && !reflect.DeepEqual(emptyToNil(old), emptyToNil(n)) {
			return fmt.Errorf("n%d: two different node states encode alike", i)
		}
		seen[enc] = n.Clone().(*Node)
		if !bytes.Equal(c.AppendState(nil), n.AppendState(nil)) {
			return fmt.Errorf("n%d: the clone encodes differently", i)
		}
		for name, empty := range map[string]bool{"queue": len(n.queue) == 0 && n.queue != nil,
			"orchSet": len(n.orchSet) == 0 && n.orchSet != nil, "txs": len(n.txs) == 0 && n.txs != nil,
			"sel": len(n.sel) == 0 && n.sel != nil, "waiters": len(n.waiters) == 0 && n.waiters != nil} {
			if empty {
				return fmt.Errorf("n%d: map %s empty but not nil", i, name)
			}
		}
	}
	for s, ns := range live {
		if len(ns) > 1 {
			return fmt.Errorf("EO-I1: stage %v Ready/Committed at %v", s, ns)
		}
	}
	commits := map[StageID]int{}
	for _, c := range obsOf[Committed](h, ObsCommit, -1) {
		if commits[c.Stage]++; commits[c.Stage] > 1 {
			return fmt.Errorf("EO-P1: stage %v committed twice", c.Stage)
		}
	}
	return nil
}

// emptyToNil returns a copy of n whose empty maps are nil: a map emptied by deletes and
// a map never written (nil, see put) are the same state. Which maps the node
// references exclusively (owned) is bookkeeping, not state.
func emptyToNil(n *Node) *Node {
	c := *n
	c.owned, c.mark = 0, nil
	v := reflect.ValueOf(&c).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.Map && f.Len() == 0 {
			reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().SetZero()
		}
	}
	return &c
}

// equalState is reflect.DeepEqual with nil and empty maps equal.
func equalState(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Kind() == reflect.Map && vb.Kind() == reflect.Map && va.Len() == 0 && vb.Len() == 0 {
		return va.Type() == vb.Type()
	}
	return reflect.DeepEqual(a, b)
}
