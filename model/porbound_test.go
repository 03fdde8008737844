package model

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// PORResult is what PORBound measured on one actor system.
type PORResult struct {
	Full, Reduced int // distinct states of the full graph and of the oracle's search
	// Ends: end states of the full graph (no successor, and not left unexpanded by the
	// Boundary); EndsReached: how many of them the oracle's search reaches.
	Ends, EndsReached int
	// Pairs: pairs of deliveries to one node over two links, enabled together, after
	// both of which the search goes on; Commuting: those where either order is possible
	// and ends in the same state.
	Pairs, Commuting int
}

// PORBound measures what one oracle-guided partial-order reduction cuts from an actor
// system's state space. It explores the full graph, then Godefroid's persistent-set
// search (LNCS 1032, ch. 4; Spin's reduction is of this kind): from each state, only
// the enabled actions of one node A — deliveries, drops and losses on links to A, A's
// timers, injections, crash, restart and clock leads — whenever an oracle that has
// seen the whole graph finds them independent of everything other nodes may do first
// (the conditions are listed where they are tested below). Among such nodes it picks
// the one with the fewest enabled actions.
//
// It is neither a sound reduction nor an upper bound on one. Its oracle knows every
// future (whom a node will send to), which a checker cannot know before exploring it;
// it leaves out the cycle proviso and what the properties read, which a sound
// reduction also needs. On the other side it picks greedily, one node at a time, and
// some of its conditions are stricter than needed, so a cleverer reduction could cut
// somewhat more. Handlers must not read Input.Rand (it is derived from the whole
// state); duplicating networks, symmetry and more than 7 nodes are refused.
func PORBound(a *Actors) (PORResult, error) {
	var res PORResult
	if a.Network.Duplicating {
		return res, fmt.Errorf("PORBound: duplicating networks are not supported")
	}
	// Observations are dependencies (the ghost folds them in order): count the folds
	// each action makes, with the memo off so that every call folds.
	b := *a
	b.Memoize, b.NoMemo = false, true
	folds := 0
	if f := a.Ghost.Fold; f != nil {
		b.Ghost.Fold = func(g any, o sim.Observation) any { folds++; return f(g, o) }
	}
	r, err := b.compile()
	if err != nil {
		return res, err
	}
	c := r.(*checker[*State])
	x := c.sp.record.(*actorSys)
	if x.n > 7 {
		return res, fmt.Errorf("PORBound: %d nodes (at most 7)", x.n)
	}
	if x.sym != nil {
		return res, fmt.Errorf("PORBound: symmetry is not supported")
	}
	lbit := func(from, to sim.NodeID) uint64 { return 1 << (uint(from)*8 + uint(to)) }
	// Flags beside the links (bits 0-54) in an edge's mask and in fut.
	const (
		crashBit = 1 << 63 // the action is a crash (the crash budget is shared)
		stopBit  = 1 << 62 // the successor is not expanded (Boundary, panic)
		globBit  = 1 << 61 // no node's action (a tick, a cut, a restore)
		aStopBit = 1 << 60 // fut[A]: at a state on the path, A's action may stop the search
		obsBit   = 1 << 59 // the action folds an observation into the ghost
		restBit  = 1 << 57 // the action is a restart
		lossBit  = 1 << 56 // the action drops a message (the loss budget is shared)
	)
	into := make([]uint64, x.n) // links X→A, X ≠ A
	for i := 0; i < x.n; i++ {
		for j := 0; j < x.n; j++ {
			if i != j {
				into[j] |= lbit(sim.NodeID(i), sim.NodeID(j))
			}
		}
	}
	linksOf := func(s *State) uint64 {
		m := uint64(0)
		for _, l := range s.links {
			if l.from != l.to {
				m |= lbit(l.from, l.to)
			}
		}
		return m
	}
	downOf := func(s *State) uint8 {
		m := uint8(0)
		for n := range s.nodes {
			if s.nodes[n].node == nil {
				m |= 1 << n
			}
		}
		return m
	}
	owner := func(s *State, ac Action) int8 {
		kind, p1, _ := unact(ac)
		switch kind {
		case aDeliver, aLoseCut, aDrop:
			return int8(s.links[p1].to)
		case aInject, aInjectLost, aTimer, aCrash, aRestart, aLead:
			return int8(p1)
		}
		return -1 // cuts, restores, ticks (a lag is a tick): no node's
	}
	// sent: links from node n on which t holds more messages than s.
	sent := func(s, t *State, n int8) uint64 {
		if n < 0 {
			return 0
		}
		m := uint64(0)
		for _, l := range t.links {
			if int8(l.from) != n || l.from == l.to {
				continue
			}
			before := 0
			if i, ok := s.linkIndex(l.from, l.to); ok {
				before = len(s.links[i].msgs)
			}
			if len(l.msgs) > before {
				m |= lbit(l.from, l.to)
			}
		}
		return m
	}

	// The full graph, by BFS: per state its non-empty links, the nodes down, and its
	// edges (successor, owner, mask, delivery label).
	index := map[uint64]int32{}
	var (
		nonEmpty []uint64
		down     []uint8 // nodes down
		first    []int32 // edges of state i: first[i] .. first[i+1]
		succ     []int32
		own      []int8
		mask     []uint64
		label    []uint16 // a delivery's link (1<<15 | from<<8 | to); 0: not a delivery
		cutOff   []int32  // states not expanded (Boundary, panic), ascending
	)
	var frontier []*State
	add := func(s *State) int32 {
		j, ok := index[s.fp]
		if !ok {
			j = int32(len(nonEmpty))
			index[s.fp] = j
			nonEmpty, down = append(nonEmpty, linksOf(s)), append(down, downOf(s))
			frontier = append(frontier, s)
		}
		return j
	}
	var inits []int32
	for _, s := range c.sp.Init() {
		inits = append(inits, add(s))
	}
	for i := 0; i < len(frontier); i++ {
		s := frontier[i]
		frontier[i] = nil
		first = append(first, int32(len(succ)))
		if s.panic != nil || (a.Boundary != nil && !a.Boundary(s)) {
			cutOff = append(cutOff, int32(i))
			continue
		}
		folds = 0
		x.next(s, func(ac Action, t *State) {
			j := add(t)
			n := owner(s, ac)
			m := sent(s, t, n)
			if folds > 0 {
				m |= obsBit
			}
			folds = 0
			lab := uint16(0)
			switch kind, p1, _ := unact(ac); kind {
			case aCrash:
				m |= crashBit
			case aRestart:
				m |= restBit
			case aDrop:
				m |= lossBit
			case aDeliver:
				l := s.links[p1]
				lab = 1<<15 | uint16(l.from)<<8 | uint16(l.to)
			}
			if n < 0 {
				m |= globBit
			}
			if t.panic != nil || (a.Boundary != nil && !a.Boundary(t)) {
				m |= stopBit
			}
			succ, own, mask, label = append(succ, j), append(own, n), append(mask, m), append(label, lab)
		})
	}
	first = append(first, int32(len(succ)))
	res.Full = len(nonEmpty)
	res.Pairs, res.Commuting = commuting(first, succ, own, label, cutOff)

	// fut[A][s]: what paths of other nodes' actions from s may do: the links they send
	// on and the flags above (a least fixpoint, by passes in reverse discovery order
	// until nothing changes).
	fut := make([][]uint64, x.n)
	for n := range fut {
		f := make([]uint64, res.Full)
		for changed := true; changed; {
			changed = false
			for i := res.Full - 1; i >= 0; i-- {
				m, other, stops := f[i], false, false
				for e := first[i]; e < first[i+1]; e++ {
					if int(own[e]) != n {
						m |= mask[e] | f[succ[e]]
						other = true
					} else {
						stops = stops || mask[e]&stopBit != 0
					}
				}
				if other && stops {
					m |= aStopBit // A's action would disable the others' here
				}
				if m != f[i] {
					f[i], changed = m, true
				}
			}
		}
		fut[n] = f
	}

	// The oracle's search: from each state, one persistent node's actions.
	seen := make([]bool, res.Full)
	var queue []int32
	for _, j := range inits {
		if !seen[j] {
			seen[j] = true
			queue = append(queue, j)
		}
	}
	for q := 0; q < len(queue); q++ {
		i := queue[q]
		pick, best := -1, 0
		for n := 0; n < x.n; n++ {
			k, mine, others := 0, uint64(0), false
			for e := first[i]; e < first[i+1]; e++ {
				if int(own[e]) == n {
					k++
					mine |= mask[e]
				} else {
					others = true
				}
			}
			if k == 0 {
				continue
			}
			if down[i]&(1<<n) != 0 && others {
				// A is down until it restarts: a message another node sends A is
				// lost now and delivered after the restart (and no state shows the
				// attempt).
				continue
			}
			// A's actions here are not persistent if, on a path of other actions from
			// here, another node may send A a message on a link empty here (on a FIFO
			// link that is not, a later message waits for the head, which is A's to
			// deliver first); or crash, or drop a message, while A may (the budgets
			// are shared: each may disable the other); or restart (a message A sends
			// it is lost before, delivered after); or reach a state that is not
			// expanded, or A's action may at a state on the path (either disables the
			// other); or time may pass (ticks depend on every node's timers); or fold
			// an observation into the ghost while A's actions do (the fold may depend
			// on their order).
			block := into[n]&^nonEmpty[i] | mine&(crashBit|lossBit|obsBit) | stopBit | aStopBit | globBit | restBit
			if fut[n][i]&block != 0 {
				continue
			}
			if pick < 0 || k < best {
				pick, best = n, k
			}
		}
		for e := first[i]; e < first[i+1]; e++ {
			if pick >= 0 && int(own[e]) != pick {
				continue
			}
			if j := succ[e]; !seen[j] {
				seen[j] = true
				queue = append(queue, j)
			}
		}
	}
	res.Reduced = len(queue)
	for i := 0; i < res.Full; i++ {
		if _, cut := slices.BinarySearch(cutOff, int32(i)); !cut && first[i] == first[i+1] {
			res.Ends++
			if seen[i] {
				res.EndsReached++
			}
		}
	}
	return res, nil
}

// commuting counts the pairs of deliveries to one node over two links, enabled
// together, after both of which the search goes on, and those of them after which
// either order is possible and ends in the same state.
func commuting(first, succ []int32, own []int8, label []uint16, cutOff []int32) (pairs, commute int) {
	after := func(i int32, lab uint16) int32 {
		for e := first[i]; e < first[i+1]; e++ {
			if label[e] == lab {
				return succ[e]
			}
		}
		return -1
	}
	expanded := func(i int32) bool {
		_, cut := slices.BinarySearch(cutOff, i)
		return !cut
	}
	for i := 0; i+1 < len(first); i++ {
		for e1 := first[i]; e1 < first[i+1]; e1++ {
			if label[e1] == 0 || !expanded(succ[e1]) {
				continue
			}
			for e2 := e1 + 1; e2 < first[i+1]; e2++ {
				if label[e2] == 0 || own[e2] != own[e1] || label[e2] == label[e1] || !expanded(succ[e2]) {
					continue
				}
				pairs++
				if j := after(succ[e1], label[e2]); j >= 0 && j == after(succ[e2], label[e1]) {
					commute++
				}
			}
		}
	}
	return pairs, commute
}
