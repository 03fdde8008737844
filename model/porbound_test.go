package model

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// PORBound measures, on an actor system's complete state graph, what a node-level
// persistent-set reduction (Godefroid, "Partial-Order Methods for the Verification of
// Concurrent Systems", LNCS 1032, 1996, ch. 4; Spin's reduction is of this kind) could
// cut at best: the distinct states of the full graph, and of the graph explored from
// each state through the enabled actions of one node A only (deliveries to A, A's
// timers and injections, A's crash and restart) whenever an oracle that has seen the
// whole graph knows that these actions are independent of everything other nodes may
// do first (the conditions are listed where they are tested below). Among such nodes it
// picks the one with the fewest enabled actions, the usual choice.
//
// It is a bound, not a reduction a checker can run: its oracle knows every future (whom
// a node will send to, what it will observe), which a checker cannot know before
// exploring it, and it leaves out the cycle proviso and the properties' visibility,
// which a sound reduction also needs and which only cut less. A small cut here shows
// that no sound node-level reduction does better. It fails on symmetry and on more
// than 7 nodes.
func PORBound(a *Actors) (full, reduced int, err error) {
	r, err := a.compile()
	if err != nil {
		return 0, 0, err
	}
	c := r.(*checker[*State])
	x := c.sp.record.(*actorSys)
	if x.n > 7 {
		return 0, 0, fmt.Errorf("PORBound: %d nodes (at most 7)", x.n)
	}
	if x.sym != nil {
		return 0, 0, fmt.Errorf("PORBound: symmetry is not supported")
	}
	lbit := func(from, to sim.NodeID) uint64 { return 1 << (uint(from)*8 + uint(to)) }
	const (
		crashBit = 1 << 63 // in sends: the action is a crash
		stopBit  = 1 << 62 // in sends: the successor is not expanded (Boundary, panic)
		globBit  = 1 << 61 // in sends: no node's action (a tick, a cut, a restore)
		aStopBit = 1 << 60 // in fut[A]: at a state on the path, A's action may stop the search
		ghostBit = 1 << 59 // in sends: the action changes the ghost
		aGhost   = 1 << 58 // in fut[A]: at a state on the path, A's action and another change the ghost
		restBit  = 1 << 57 // in sends: the action is a restart
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
		case aDeliver, aLoseCut, aDrop, aDup:
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

	// The full graph, by BFS: per state its non-empty links and its edges.
	index := map[uint64]int32{}
	var (
		nonEmpty []uint64
		down     []uint8 // nodes down
		first    []int32 // edges of state i: first[i] .. first[i+1]
		succ     []int32
		own      []int8
		sends    []uint64
		label    []uint16 // a delivery's link (1<<15 | from<<8 | to); 0: not a delivery
		cutOff   []int32  // states not expanded (Boundary, panic)
	)
	var frontier []*State
	for _, s := range c.sp.Init() {
		if _, ok := index[s.fp]; !ok {
			index[s.fp] = int32(len(nonEmpty))
			nonEmpty, down = append(nonEmpty, linksOf(s)), append(down, downOf(s))
			frontier = append(frontier, s)
		}
	}
	for i := 0; i < len(frontier); i++ {
		s := frontier[i]
		frontier[i] = nil
		first = append(first, int32(len(succ)))
		if s.panic != nil || (a.Boundary != nil && !a.Boundary(s)) {
			cutOff = append(cutOff, int32(i))
			continue
		}
		x.next(s, func(ac Action, t *State) {
			j, ok := index[t.fp]
			if !ok {
				j = int32(len(nonEmpty))
				index[t.fp] = j
				nonEmpty, down = append(nonEmpty, linksOf(t)), append(down, downOf(t))
				frontier = append(frontier, t)
			}
			n := owner(s, ac)
			m := sent(s, t, n)
			lab := uint16(0)
			switch kind, p1, _ := unact(ac); kind {
			case aCrash:
				m |= crashBit
			case aRestart:
				m |= restBit
			case aDeliver:
				l := s.links[p1]
				lab = 1<<15 | uint16(l.from)<<8 | uint16(l.to)
			}
			label = append(label, lab)
			if n < 0 {
				m |= globBit
			}
			if t.ghostH != s.ghostH {
				m |= ghostBit
			}
			if t.panic != nil || (a.Boundary != nil && !a.Boundary(t)) {
				m |= stopBit
			}
			succ, own, sends = append(succ, j), append(own, n), append(sends, m)
		})
	}
	first = append(first, int32(len(succ)))
	full = len(nonEmpty)
	if PORBoundCommute != nil {
		*PORBoundCommute = commuting(first, succ, own, label, cutOff)
	}

	// fut[A][s]: what paths of other nodes' actions from s may do: the links they send
	// on and the flags above (a least fixpoint, by passes in reverse discovery order
	// until nothing changes).
	fut := make([][]uint64, x.n)
	for n := range fut {
		f := make([]uint64, full)
		for changed := true; changed; {
			changed = false
			for i := full - 1; i >= 0; i-- {
				m, other, stops, ghostA, ghostO := f[i], false, false, false, false
				for e := first[i]; e < first[i+1]; e++ {
					if int(own[e]) != n {
						m |= sends[e] | f[succ[e]]
						other = true
						ghostO = ghostO || sends[e]&ghostBit != 0
					} else {
						stops = stops || sends[e]&stopBit != 0
						ghostA = ghostA || sends[e]&ghostBit != 0
					}
				}
				if other && stops {
					m |= aStopBit // A's action would disable the others' here
				}
				if ghostA && ghostO {
					m |= aGhost // the ghost's fold may depend on their order
				}
				if m != f[i] {
					f[i], changed = m, true
				}
			}
		}
		fut[n] = f
	}

	// The reduced graph: from each state, one persistent node's transitions.
	seen := make([]bool, full)
	queue := []int32{}
	for _, s := range c.sp.Init() {
		j := index[s.fp]
		if !seen[j] {
			seen[j] = true
			queue = append(queue, j)
		}
	}
	for q := 0; q < len(queue); q++ {
		i := queue[q]
		pick, best := -1, 0
		for n := 0; n < x.n; n++ {
			k, crash, others := 0, uint64(0), false
			for e := first[i]; e < first[i+1]; e++ {
				if int(own[e]) == n {
					k++
					crash |= sends[e] & crashBit
				} else {
					others = true
				}
			}
			if down[i]&(1<<n) != 0 && others {
				// A is down until it restarts: a message another node sends A is
				// lost now and delivered after the restart (and no state shows the
				// attempt).
				continue
			}
			// Not persistent if, on a path of other actions from here, another node
			// may send A a message on a link empty here; or crash while A may crash
			// (the crash budget is shared: each crash may disable the other); or an
			// action may reach a state that is not expanded, or A's may (either
			// disables the other); or time may pass (ticks depend on every node's
			// timers); or A's action and another may fold observations into the ghost
			// at the same state (the fold may depend on their order); or another node
			// may restart (a message A sends it is lost before, delivered after).
			if k == 0 || fut[n][i]&(into[n]&^nonEmpty[i]|crash|stopBit|aStopBit|globBit|aGhost|restBit) != 0 {
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
	ends, endsReached := 0, 0
	for i := 0; i < full; i++ {
		if _, found := slices.BinarySearch(cutOff, int32(i)); !found && first[i] == first[i+1] {
			ends++
			if seen[i] {
				endsReached++
			}
		}
	}
	if PORBoundEnds != nil {
		*PORBoundEnds = [2]int{ends, endsReached}
	}
	return full, len(queue), nil
}

// PORBoundEnds, when set, receives the number of end states (no successor) of the full
// graph and of them the number the reduced graph reaches.
var PORBoundEnds *[2]int

// PORBoundCommute, when set, receives from PORBound the number of pairs of deliveries
// to one node, enabled together over two links, after both of which the search goes
// on (neither leads to a state that is not expanded), and how many of them commute:
// either order is possible and ends in the same state.
var PORBoundCommute *[2]int

func commuting(first, succ []int32, own []int8, label []uint16, cutOff []int32) [2]int {
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
	var n [2]int
	for i := 0; i+1 < len(first); i++ {
		for e1 := first[i]; e1 < first[i+1]; e1++ {
			if label[e1] == 0 || !expanded(succ[e1]) {
				continue
			}
			for e2 := e1 + 1; e2 < first[i+1]; e2++ {
				if label[e2] == 0 || own[e2] != own[e1] || label[e2] == label[e1] || !expanded(succ[e2]) {
					continue
				}
				n[0]++
				if j := after(succ[e1], label[e2]); j >= 0 && j == after(succ[e2], label[e1]) {
					n[1]++
				}
			}
		}
	}
	return n
}
