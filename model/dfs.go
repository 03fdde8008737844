package model

import (
	"math"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Depth-first search and random walks: one worker, the current path's states only
// (plus the seen-set). A DFS with a depth bound is incomplete in a known way: a state
// first met at the bound is not expanded, and a later, shorter path to it is cut off
// because it has been seen (as in every stateful DFS with a depth bound).

type dfsFrame[S any] struct {
	e    entry[S]
	idx  int32 // index among the parent's successors
	succ []succ[S]
	next int
	done bool // successors generated
}

// seen is the sequential seen-set: the shared table of fingerprints, grown inline, or
// a bitstate array (Options.Bitstate).
type seen struct {
	t      *table
	b      *bitstate
	remain int64
}

func newSeen(o Options) *seen {
	s := &seen{t: newTable(o.TableSlots, newSlotAlloc()), remain: math.MaxInt64}
	if o.Bitstate > 0 {
		s.b = newBitstate(o.Bitstate, o.Seed)
	}
	if o.MaxStates > 0 {
		s.remain = o.MaxStates
	}
	return s
}

func (s *seen) contains(fp uint64) bool {
	if s.b != nil {
		return s.b.contains(fp)
	}
	return s.t.contains(fp)
}

// add inserts fp; it reports whether fp was new and whether the max-states bound stops
// the search (fp is then not inserted).
func (s *seen) add(fp uint64) (isNew, bound bool) {
	if s.contains(fp) {
		return false, false
	}
	if s.remain == 0 {
		return false, true
	}
	s.remain--
	if s.b != nil {
		s.b.add(fp)
		return true, false
	}
	s.t.insert(fp)
	s.t.count.Add(1)
	if s.t.needsGrowth() {
		s.t = s.t.grown()
	}
	return true, false
}

// finish fills the seen-set's statistics.
func (s *seen) finish(st *Stats, f *findings, start time.Time, injective bool) {
	finishStats(st, start, s.t, injective)
	if s.b != nil {
		st.SeenBytes = s.b.bytes()
		st.BytesPerState = float64(st.SeenBytes) / float64(max(st.Distinct, 1))
		st.Collision = 0
		st.Bitstate = &BitstateStats{Bytes: s.b.bytes(), HashFunctions: bitstateK, Fill: s.b.fill(), Missed: s.b.missed}
		f.sampled = f.violation < 0
	}
}

// progress calls the progress hook about every ProgressEvery; it checks the clock only
// every 4096 calls.
type progress struct {
	o     Options
	start time.Time
	last  time.Time
	n     int
}

func (p *progress) tick(st func() Stats) {
	if p.o.Progress == nil {
		return
	}
	p.n++
	if p.n&4095 != 0 {
		return
	}
	every := p.o.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	if now := time.Now(); now.Sub(p.last) >= every {
		p.last = now
		s := st()
		s.Seconds = now.Sub(p.start).Seconds()
		if s.Seconds > 0 {
			s.StatesPerSec = float64(s.Distinct) / s.Seconds
		}
		p.o.Progress(s)
	}
}

func (c *checker[S]) dfs(o Options, start time.Time) (*Result, error) {
	sn := newSeen(o)
	f := &findings{violation: -1, witness: map[int]*path{}}
	var st Stats
	pr := &progress{o: o, start: start, last: start}
	var stack []dfsFrame[S]
	shuffle := sim.NewRand(sim.StreamSeed(o.Seed, "model-dfs-order"))
	next, recycle := c.sp.Next, func(S) {}
	if c.sp.worker != nil {
		next, recycle = c.sp.worker()
	}
	initIdx := 0
	pathNow := func(extra int32, withExtra bool) *path {
		p := &path{init: initIdx}
		for i := 1; i < len(stack); i++ {
			p.steps = append(p.steps, stack[i].idx)
		}
		if withExtra {
			p.steps = append(p.steps, extra)
		}
		return p
	}
	// visit checks a state new to the seen-set; it reports whether to stop.
	visit := func(s S, idx int32, withIdx bool) bool {
		if pi := c.firstViolated(s); pi >= 0 {
			f.violation, f.vpath = pi, pathNow(idx, withIdx)
			return true
		}
		c.tally(s)
		for _, pi := range c.sometimes {
			if f.witness[pi] == nil && c.sp.Properties[pi].Check(s) {
				f.witness[pi] = pathNow(idx, withIdx)
			}
		}
		return false
	}
	push := func(e entry[S], idx int32) {
		if len(stack) < cap(stack) {
			stack = stack[:len(stack)+1]
			fr := &stack[len(stack)-1]
			fr.e, fr.idx, fr.succ, fr.next, fr.done = e, idx, fr.succ[:0], 0, false
		} else {
			stack = append(stack, dfsFrame[S]{e: e, idx: idx})
		}
		st.Depth = max(st.Depth, len(stack))
	}
	inits := c.sp.Init()
	st.Total += int64(len(inits))
search:
	for i, s := range inits {
		initIdx = i
		eb := c.ebits(s, 0)
		isNew, bound := sn.add(c.fp(s, eb))
		if bound {
			f.bound = "max-states"
			break
		}
		if !isNew {
			continue
		}
		st.Distinct++
		if visit(s, 0, false) {
			break
		}
		push(entry[S]{s: s, ebits: eb}, 0)
		for len(stack) > 0 {
			pr.tick(func() Stats { return Stats{Distinct: st.Distinct, Total: st.Total, Queue: int64(len(stack))} })
			if o.mem.exceeded() {
				f.bound = "max-memory"
				break search
			}
			top := &stack[len(stack)-1]
			if !top.done {
				top.done = true
				if !c.expandable(top.e.s) {
					stack = stack[:len(stack)-1]
					continue
				}
				peb := top.e.ebits
				k := int32(0)
				next(top.e.s, func(a Action, t S) {
					top.succ = append(top.succ, succ[S]{s: t, idx: k, ebits: peb})
					k++
				})
				atBound := o.MaxDepth > 0 && len(stack) >= o.MaxDepth
				st.Total += int64(len(top.succ)) // generated, also at the bound (as in BFS)
				if len(top.succ) == 0 && top.e.ebits != c.evMask {
					f.violation, f.vpath = c.missingEventually(top.e.ebits), pathNow(0, false)
					break search
				}
				for i := range top.succ {
					x := &top.succ[i]
					x.ebits = c.ebits(x.s, x.ebits)
					x.fp = c.fp(x.s, x.ebits)
				}
				if o.Bitstate > 0 && o.Seed != 0 {
					// Swarm verification: each seed its own successor order.
					for i := len(top.succ) - 1; i > 0; i-- {
						j := shuffle.IntN(i + 1)
						top.succ[i], top.succ[j] = top.succ[j], top.succ[i]
					}
				}
				if atBound {
					for _, x := range top.succ {
						if !sn.contains(x.fp) {
							f.bound = "max-depth"
							break
						}
					}
					stack = stack[:len(stack)-1]
					continue
				}
			}
			if top.next == len(top.succ) {
				stack = stack[:len(stack)-1]
				continue
			}
			x := top.succ[top.next]
			top.next++
			isNew, bound := sn.add(x.fp)
			if bound {
				f.bound = "max-states"
				break search
			}
			if !isNew {
				recycle(x.s) // a leaf: nothing was derived from it
				continue
			}
			st.Distinct++
			if visit(x.s, x.idx, true) {
				break search
			}
			push(entry[S]{s: x.s, ebits: x.ebits}, x.idx)
		}
	}
	if f.violation >= 0 {
		f.bound = ""
	}
	sn.finish(&st, f, start, c.injective())
	sn.t.free()
	sn.t.alloc.close()
	return c.result(f, st), nil
}

// defaultWalk is the walk length of Random when no depth bound is given.
const (
	defaultWalk  = 1000
	defaultWalks = 100
)

func (c *checker[S]) random(o Options, start time.Time) (*Result, error) {
	sn := newSeen(o)
	f := &findings{violation: -1, witness: map[int]*path{}, sampled: true}
	var st Stats
	pr := &progress{o: o, start: start, last: start}
	walks := o.Walks
	if walks == 0 {
		walks = defaultWalks
	}
	maxLen := o.MaxDepth
	if maxLen == 0 {
		maxLen = defaultWalk
	}
	inits := c.sp.Init()
	st.Total += int64(len(inits))
	var succs []succ[S]
	var acts []Action
	var weights []float64
	// check handles a generated state: new to the seen-set → properties. It reports
	// whether the search stops.
	check := func(s S, eb uint32, p func() *path) bool {
		isNew, bound := sn.add(c.fp(s, eb))
		if bound {
			f.bound = "max-states"
			return true
		}
		if !isNew {
			return false
		}
		st.Distinct++
		if pi := c.firstViolated(s); pi >= 0 {
			f.violation, f.vpath = pi, p()
			return true
		}
		c.tally(s)
		for _, pi := range c.sometimes {
			if f.witness[pi] == nil && c.sp.Properties[pi].Check(s) {
				f.witness[pi] = p()
			}
		}
		return false
	}
	for i, s := range inits {
		if check(s, c.ebits(s, 0), func() *path { return &path{init: i} }) {
			goto done
		}
	}
	for w := 0; w < walks; w++ {
		rng := sim.NewRand(sim.StreamSeed(o.Seed, "model-walk", int64(w)))
		p := &path{init: rng.IntN(len(inits))}
		cur := entry[S]{s: inits[p.init]}
		cur.ebits = c.ebits(cur.s, 0)
		for {
			pr.tick(func() Stats { return Stats{Distinct: st.Distinct, Total: st.Total} })
			st.Depth = max(st.Depth, len(p.steps)+1)
			if len(p.steps)+1 >= maxLen || !c.expandable(cur.s) {
				break
			}
			succs, acts = succs[:0], acts[:0]
			k := int32(0)
			c.sp.Next(cur.s, func(a Action, t S) {
				succs = append(succs, succ[S]{s: t, idx: k})
				acts = append(acts, a)
				k++
			})
			st.Total += int64(len(succs))
			if len(succs) == 0 {
				if cur.ebits != c.evMask {
					f.violation, f.vpath = c.missingEventually(cur.ebits), clonePath(p, -1)
					goto done
				}
				break
			}
			for i := range succs {
				x := &succs[i]
				x.ebits = c.ebits(x.s, cur.ebits)
				if check(x.s, x.ebits, func() *path { return clonePath(p, x.idx) }) {
					goto done
				}
			}
			pick := succs[c.pick(rng, cur.s, acts, &weights)]
			p.steps = append(p.steps, pick.idx)
			cur = entry[S]{s: pick.s, ebits: pick.ebits}
		}
	}
done:
	if f.violation >= 0 {
		f.bound = ""
	}
	finishStats(&st, start, sn.t, c.injective())
	sn.t.free()
	sn.t.alloc.close()
	return c.result(f, st), nil
}

// pick chooses the successor a random walk takes: uniformly, or by the spec's Weight
// (actor systems: deliveries and restarts far more often than faults and timeouts, so
// that a walk of a few hundred steps reaches the protocol's decisions instead of
// spending itself on crashes, cuts and timer firings).
func (c *checker[S]) pick(rng *sim.Rand, s S, acts []Action, ws *[]float64) int {
	if c.sp.weight == nil {
		return rng.IntN(len(acts))
	}
	*ws = (*ws)[:0]
	total := 0.0
	for _, a := range acts {
		w := c.sp.weight(s, a)
		*ws = append(*ws, w)
		total += w
	}
	if total <= 0 {
		return rng.IntN(len(acts))
	}
	r := rng.Float64() * total
	for i, w := range *ws {
		if r < w {
			return i
		}
		r -= w
	}
	return len(acts) - 1
}

// clonePath copies p, adding step extra when extra >= 0.
func clonePath(p *path, extra int32) *path {
	q := &path{init: p.init, steps: append([]int32(nil), p.steps...)}
	if extra >= 0 {
		q.steps = append(q.steps, extra)
	}
	return q
}
