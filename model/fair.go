package model

import (
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// Liveness: eventually-properties on finite and infinite paths.
//
// After an exhaustive search of the system states, a second pass builds the product
// graph explicitly (system state × one "has held yet" bit per eventually-property),
// and, for each property, restricts it to the states where P has not held yet. A
// maximal finite path on which P never holds ends in a state of that region without
// successors (deadEnd). An infinite one ends up cycling inside one strongly connected
// component of the region (Tarjan). Without fairness every cycle is admissible (the
// edges carry no fairness class). Under weak fairness (Options.Fair) a cycle is
// admissible iff every fairness
// class ("process") that is enabled in all of the cycle's states is taken by one of its
// steps. A component contains an admissible cycle iff every class enabled in all of
// its states is taken by some edge inside it (the cycle through every state and edge
// of the component is then admissible; and if a class is enabled everywhere in the
// component and never taken there, no cycle inside it can satisfy it). The
// counterexample is a lasso: a shortest path to the component and a cycle back to its
// first state that visits what fairness requires.
//
// The fairness classes come from Spec.Fairness; actor systems have built-in ones (see
// actorSys.fairness). The pass keeps the whole graph in memory (about 40 bytes per
// state plus 16 per transition): it is meant for the small configurations liveness is
// checked on.

// fairGraph is the explicit product graph.
type fairGraph struct {
	ebits     []uint32
	parent    []int32 // BFS tree
	pidx      []int32
	edgeStart []int32 // edges of v: edgeStart[v] .. edgeStart[v+1]
	edgeTo    []int32
	edgeKey   []uint64 // fairness class, 0 = not fair
	edgeIdx   []int32  // successor index
	dead      []bool   // an expandable state without successors (a maximal finite path ends there)
	cut       []bool   // a state Boundary kept from being expanded (its paths go on unseen)
}

func (c *checker[S]) buildFairGraph(o Options) (*fairGraph, error) {
	g := &fairGraph{}
	ids := map[uint64]int32{}
	var states []S
	add := func(s S, eb uint32, parent, idx int32) int32 {
		fp := c.fp(s, eb)
		if id, ok := ids[fp]; ok {
			return id
		}
		id := int32(len(states))
		ids[fp] = id
		states = append(states, s)
		g.ebits = append(g.ebits, eb)
		g.parent = append(g.parent, parent)
		g.pidx = append(g.pidx, idx)
		return id
	}
	for i, s := range c.sp.Init() {
		add(s, c.ebits(s, 0), -1, int32(i))
	}
	g.edgeStart = append(g.edgeStart, 0)
	limit := int64(maxLivenessStates)
	if o.MaxStates > 0 {
		limit = min(limit, o.MaxStates)
	}
	for v := 0; v < len(states); v++ {
		if int64(len(states)) > limit {
			return nil, errLivenessGraph{limit: limit, what: "product states"}
		}
		s, eb := states[v], g.ebits[v]
		k := int32(0)
		if c.expandable(s) {
			c.sp.Next(s, func(a Action, t S) {
				key, fair := uint64(0), false
				if o.Fair && c.sp.Fairness != nil {
					key, fair = c.sp.Fairness(s, a)
				}
				if fair {
					key = sim.Mix64(key) | 1 // never 0
				} else {
					key = 0
				}
				to := add(t, c.ebits(t, eb), int32(v), k)
				g.edgeTo = append(g.edgeTo, to)
				g.edgeKey = append(g.edgeKey, key)
				g.edgeIdx = append(g.edgeIdx, k)
				k++
			})
		}
		exp := c.expandable(s)
		g.dead = append(g.dead, k == 0 && exp)
		g.cut = append(g.cut, !exp)
		// Edge indices are int32: past maxLivenessEdges the graph is too large (and
		// the index would overflow), so the properties stay unknown.
		if len(g.edgeTo) > maxLivenessEdges {
			return nil, errLivenessGraph{limit: maxLivenessEdges, what: "transitions"}
		}
		g.edgeStart = append(g.edgeStart, int32(len(g.edgeTo)))
	}
	return g, nil
}

// fairCycle looks for an admissible cycle in the region of states without eventually
// bit j. It returns the lasso (nil if there is none).
func (g *fairGraph) fairCycle(j int) *path {
	bit := uint32(1) << j
	in := func(v int32) bool { return g.ebits[v]&bit == 0 }
	n := int32(len(g.ebits))
	// Tarjan's algorithm, iterative.
	index := make([]int32, n)
	low := make([]int32, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int32
	type frame struct{ v, e int32 }
	var call []frame
	next := int32(0)
	var best []int32 // the admissible component with the smallest first state
	for root := int32(0); root < n; root++ {
		if !in(root) || index[root] >= 0 {
			continue
		}
		call = append(call, frame{v: root, e: g.edgeStart[root]})
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.e < g.edgeStart[v+1] {
				w := g.edgeTo[f.e]
				f.e++
				if !in(w) {
					continue
				}
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{v: w, e: g.edgeStart[w]})
				} else if onStack[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			var comp []int32
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			if g.admissible(comp, in) {
				slices.Sort(comp)
				if best == nil || comp[0] < best[0] {
					best = comp
				}
			}
		}
	}
	if best == nil {
		return nil
	}
	return g.lasso(best, in)
}

// prefix is the BFS-tree path (a shortest one) from an initial state to v.
func (g *fairGraph) prefix(v int32) *path {
	var rev []int32
	for g.parent[v] >= 0 {
		rev = append(rev, g.pidx[v])
		v = g.parent[v]
	}
	p := &path{init: int(g.pidx[v])}
	for i := len(rev) - 1; i >= 0; i-- {
		p.steps = append(p.steps, rev[i])
	}
	return p
}

// deadEnd returns a shortest path to a state without successors in the region of
// states without eventually bit j (a maximal finite path on which it never held), or
// nil. States are numbered in BFS order, so the first one found is a closest one.
func (g *fairGraph) deadEnd(j int) *path {
	bit := uint32(1) << j
	for v := range g.dead {
		if g.dead[v] && g.ebits[v]&bit == 0 {
			return g.prefix(int32(v))
		}
	}
	return nil
}

// admissible reports whether component comp has a cycle and every fairness class
// enabled in all of its states is taken by an edge inside it.
func (g *fairGraph) admissible(comp []int32, in func(int32) bool) bool {
	member := map[int32]bool{}
	for _, v := range comp {
		member[v] = true
	}
	cyclic := len(comp) > 1
	taken := map[uint64]bool{}
	var everywhere map[uint64]bool
	for i, v := range comp {
		enabled := map[uint64]bool{}
		for e := g.edgeStart[v]; e < g.edgeStart[v+1]; e++ {
			k, w := g.edgeKey[e], g.edgeTo[e]
			if k != 0 {
				enabled[k] = true
			}
			if member[w] {
				if w == v {
					cyclic = true
				}
				if k != 0 {
					taken[k] = true
				}
			}
		}
		if i == 0 {
			everywhere = enabled
		} else {
			for k := range everywhere {
				if !enabled[k] {
					delete(everywhere, k)
				}
			}
		}
	}
	if !cyclic {
		return false
	}
	for k := range everywhere {
		if !taken[k] {
			return false
		}
	}
	return true
}

// lasso builds a path to the first state of comp and a cycle back to it that takes
// every class enabled in all of the cycle's states (or passes a state where it is
// disabled).
func (g *fairGraph) lasso(comp []int32, in func(int32) bool) *path {
	member := map[int32]bool{}
	for _, v := range comp {
		member[v] = true
	}
	e0 := comp[0]
	p := g.prefix(e0)
	p.cycle = len(p.steps) + 1
	// walk appends a shortest path inside comp from cur to a state satisfying goal
	// (at least one step) and returns where it ends.
	walk := func(cur int32, goal func(e int32) bool) int32 {
		type hop struct{ from, edge int32 }
		prev := map[int32]hop{}
		queue := []int32{cur}
		seen := map[int32]bool{cur: true}
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			for e := g.edgeStart[u]; e < g.edgeStart[u+1]; e++ {
				w := g.edgeTo[e]
				if !member[w] {
					continue
				}
				if goal(e) {
					var edges []int32
					edges = append(edges, e)
					for x := u; x != cur; x = prev[x].from {
						edges = append(edges, prev[x].edge)
					}
					for i := len(edges) - 1; i >= 0; i-- {
						p.steps = append(p.steps, g.edgeIdx[edges[i]])
					}
					return w
				}
				if !seen[w] {
					seen[w] = true
					prev[w] = hop{from: u, edge: e}
					queue = append(queue, w)
				}
			}
		}
		panic("model: fair cycle: component not strongly connected")
	}
	cur := e0
	var cycle []int32 // states of the cycle so far
	var took []uint64
	record := func(from int) {
		// re-walk the steps appended since from, collecting states and keys
		x := cycle[len(cycle)-1]
		for _, k := range p.steps[from:] {
			e := g.edgeStart[x] + k
			took = append(took, g.edgeKey[e])
			x = g.edgeTo[e]
			cycle = append(cycle, x)
		}
	}
	cycle = append(cycle, e0)
	// Each round settles the smallest class that is enabled in every state of the
	// cycle so far and not taken: taking an edge of it adds it to took, reaching a
	// state where it is disabled drops it from "everywhere"; neither undoes a
	// settled class, so the rounds end.
	for {
		// Which classes are enabled in every state of the cycle so far, and not taken?
		var need uint64
		var needDisable bool
		everywhere := map[uint64]bool{}
		for i, x := range cycle {
			en := map[uint64]bool{}
			for e := g.edgeStart[x]; e < g.edgeStart[x+1]; e++ {
				if g.edgeKey[e] != 0 {
					en[g.edgeKey[e]] = true
				}
			}
			if i == 0 {
				everywhere = en
				continue
			}
			for k := range everywhere {
				if !en[k] {
					delete(everywhere, k)
				}
			}
		}
		for _, k := range took {
			delete(everywhere, k)
		}
		keys := make([]uint64, 0, len(everywhere))
		for k := range everywhere {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if len(keys) == 0 {
			break
		}
		need = keys[0]
		// Take an edge of class need inside the component if there is one; otherwise
		// go to a state where it is disabled (admissibility guarantees one of the two).
		hasEdge := false
		for _, x := range comp {
			for e := g.edgeStart[x]; e < g.edgeStart[x+1]; e++ {
				if g.edgeKey[e] == need && member[g.edgeTo[e]] {
					hasEdge = true
				}
			}
		}
		needDisable = !hasEdge
		from := len(p.steps)
		if needDisable {
			cur = walk(cur, func(e int32) bool {
				w := g.edgeTo[e]
				for f := g.edgeStart[w]; f < g.edgeStart[w+1]; f++ {
					if g.edgeKey[f] == need {
						return false
					}
				}
				return true
			})
		} else {
			cur = walk(cur, func(e int32) bool { return g.edgeKey[e] == need })
		}
		record(from)
	}
	// Close the cycle (at least one step).
	if cur != e0 || len(p.steps) == p.cycle-1 {
		from := len(p.steps)
		walk(cur, func(e int32) bool { return g.edgeTo[e] == e0 })
		record(from)
	}
	return p
}

// fairVerdict re-checks, on the states of a lasso, that it is an admissible cycle on
// which property pr never holds.
// Without weak fairness (weak false) every cycle is admissible.
func (c *checker[S]) fairVerdict(states []S, acts []Action, loop int, pr Property[S], weak bool) bool {
	if loop < 0 || loop >= len(states) {
		return false
	}
	for _, s := range states {
		if pr.Check(s) {
			return false
		}
	}
	last, back := states[len(states)-1], states[loop]
	if loop >= len(states)-1 || c.sp.Fingerprint(last) != c.sp.Fingerprint(back) {
		return false
	}
	if !weak || c.sp.Fairness == nil {
		return true
	}
	everywhere := map[uint64]bool{}
	for i := loop; i < len(states)-1; i++ {
		en := map[uint64]bool{}
		s := states[i]
		c.sp.Next(s, func(a Action, _ S) {
			if k, ok := c.sp.Fairness(s, a); ok {
				en[k] = true
			}
		})
		if i == loop {
			everywhere = en
			continue
		}
		for k := range everywhere {
			if !en[k] {
				delete(everywhere, k)
			}
		}
	}
	for i := loop; i < len(acts); i++ {
		if k, ok := c.sp.Fairness(states[i], acts[i]); ok {
			delete(everywhere, k)
		}
	}
	return len(everywhere) == 0
}

// cutOpen counts the states Boundary kept from being expanded in the region of states
// without eventually bit j.
func (g *fairGraph) cutOpen(j int) int {
	bit, n := uint32(1)<<j, 0
	for v, c := range g.cut {
		if c && g.ebits[v]&bit == 0 {
			n++
		}
	}
	return n
}
