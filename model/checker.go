package model

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// checker is a compiled Spec[S]: the property tables the strategies share.
type checker[S any] struct {
	sp         *Spec[S]
	always     []int // indices into sp.Properties
	sometimes  []int
	eventually []int // bit j of an entry's ebits is eventually[j]
	evMask     uint32
	// relevant counts, per property with a Relevant predicate, the states where it
	// held (Options.Coverage; nil when off).
	relevant []atomic.Int64
	// cut is set when Boundary kept a state from being expanded.
	cut atomic.Bool
}

// entry is a state waiting to be expanded, with its eventually bits (which of the
// eventually-properties have held on the path that reached it).
type entry[S any] struct {
	s     S
	ebits uint32
}

// succ is a generated successor on its way into the seen-set.
type succ[S any] struct {
	s      S
	fp     uint64
	parent uint64 // log reference of the parent (BFS)
	idx    int32  // index among the parent's successors
	ebits  uint32
}

func (c *checker[S]) name() string { return c.sp.Name }

func (c *checker[S]) setup() {
	c.always, c.sometimes, c.eventually, c.evMask = nil, nil, nil, 0
	for i, p := range c.sp.Properties {
		switch p.Kind {
		case AlwaysKind:
			c.always = append(c.always, i)
		case SometimesKind:
			c.sometimes = append(c.sometimes, i)
		case EventuallyKind:
			c.evMask |= 1 << len(c.eventually)
			c.eventually = append(c.eventually, i)
		}
	}
}

// ebits returns the eventually bits of s reached from a path with bits parent.
func (c *checker[S]) ebits(s S, parent uint32) uint32 {
	b := parent
	for j, pi := range c.eventually {
		if b&(1<<j) == 0 && c.sp.Properties[pi].Check(s) {
			b |= 1 << j
		}
	}
	return b
}

// fp is the fingerprint of an explored state: the spec's fingerprint, combined with the
// eventually bits when there are eventually-properties (the explored graph is then the
// product of the system with one "has held yet" bit per such property).
func (c *checker[S]) fp(s S, eb uint32) uint64 {
	f := c.sp.Fingerprint(s)
	if c.evMask != 0 {
		f = sim.Mix64(f ^ sim.Mix64(uint64(eb)+0x5851f42d4c957f2d))
	}
	return f
}

// injective reports whether explored fingerprints are collision-free.
func (c *checker[S]) injective() bool { return c.sp.Injective && c.evMask == 0 }

// firstViolated returns the index of the first always-property s violates, or -1.
func (c *checker[S]) firstViolated(s S) int {
	for _, pi := range c.always {
		if !c.sp.Properties[pi].Check(s) {
			return pi
		}
	}
	return -1
}

// missingEventually returns the first eventually-property whose bit is not in eb.
func (c *checker[S]) missingEventually(eb uint32) int {
	for j, pi := range c.eventually {
		if eb&(1<<j) == 0 {
			return pi
		}
	}
	return -1
}

// expandable reports whether s is inside the Boundary (and notes a cut when not).
func (c *checker[S]) expandable(s S) bool {
	if c.sp.Boundary == nil || c.sp.Boundary(s) {
		return true
	}
	c.cut.Store(true)
	return false
}

// tally counts the properties relevant in s, a state new to the search (coverage).
func (c *checker[S]) tally(s S) {
	if c.relevant == nil {
		return
	}
	for i, p := range c.sp.Properties {
		if p.Relevant != nil && p.Relevant(s) {
			c.relevant[i].Add(1)
		}
	}
}

func (c *checker[S]) check(o Options) (*Result, error) {
	c.setup()
	if o.Workers == 0 {
		o.Workers = 1
	}
	start := time.Now()
	cpu0 := cpuSeconds()
	c.cut.Store(false)
	c.relevant = nil
	var stopCover func() *sim.Coverage
	if o.Coverage {
		c.relevant = make([]atomic.Int64, len(c.sp.Properties))
		if c.sp.cover != nil {
			stopCover = c.sp.cover()
		}
	}
	// The exhaustive searches explore system states only, so that the counts are the
	// system's whatever the properties (TLC's convention); eventually-properties are
	// decided afterwards on the product graph (liveness.go). Random walks keep the
	// "has held yet" bits, to report a maximal finite walk where one never held.
	evs, evMask := c.eventually, c.evMask
	exhaustive := o.Strategy != Random
	if exhaustive {
		c.eventually, c.evMask = nil, 0
	}
	var (
		res *Result
		err error
	)
	if exhaustive {
		o.mem = watchMemory(o.MaxMemory)
		defer o.mem.stop()
	}
	switch o.Strategy {
	case BFS:
		res, err = c.bfs(o, start)
	case DFS:
		res, err = c.dfs(o, start)
	case Random:
		res, err = c.random(o, start)
	default:
		err = fmt.Errorf("model: unknown strategy %d", o.Strategy)
	}
	c.eventually, c.evMask = evs, evMask
	var cov *sim.Coverage
	if stopCover != nil {
		cov = stopCover()
	}
	if err == nil && c.sp.failed != nil {
		err = c.sp.failed()
	}
	if err != nil {
		return nil, err
	}
	if exhaustive && len(evs) > 0 {
		if err := c.liveness(o, res); err != nil {
			return nil, err
		}
		res.Seconds = time.Since(start).Seconds()
		if res.Seconds > 0 {
			res.StatesPerSec = float64(res.Distinct) / res.Seconds
		}
		res.PeakRSS = peakRSS()
	}
	res.Model, res.Strategy, res.Workers, res.run = c.sp.Name, o.Strategy, o.Workers, c
	res.Coverage = cov
	if cpu := cpuSeconds() - cpu0; cpu > 0 {
		res.CPUSeconds = cpu
		res.StatesPerCPUSec = float64(res.Distinct) / cpu
	}
	for i, pr := range res.Properties {
		pr.Relevant = -1
		if c.relevant != nil && c.sp.Properties[i].Relevant != nil {
			pr.Relevant = c.relevant[i].Load()
		}
	}
	return res, nil
}

// findings collects what a search established, to be turned into a Result.
type findings struct {
	violation int   // property index, -1 if none
	vpath     *path // its counterexample
	witness   map[int]*path
	bound     string // "max-states", "max-depth" or ""
	sampled   bool   // random walks (never complete)
	// cut: Boundary kept states from being expanded, so an unwitnessed
	// sometimes-property is undecided, not failed.
	cut bool
}

func (c *checker[S]) result(f *findings, st Stats) *Result {
	res := &Result{Stats: st}
	complete := f.violation < 0 && f.bound == "" && !f.sampled
	for i, p := range c.sp.Properties {
		pr := &PropertyResult{Name: p.Name, Kind: p.Kind, Status: Unknown}
		switch {
		case i == f.violation:
			pr.Status, pr.path = Failed, f.vpath
		case p.Kind == SometimesKind && f.witness[i] != nil:
			pr.Status, pr.path = Witnessed, f.witness[i]
		case complete && p.Kind == SometimesKind && (f.cut || c.cut.Load()):
			pr.Why = "no witness among the states explored, but the search stopped at the model's Boundary: undecided"
		case complete && p.Kind == SometimesKind:
			pr.Status = Failed
		case complete:
			pr.Status = Holds
		}
		if pr.path != nil {
			pr.HasTrace, pr.Depth = true, len(pr.path.steps)+1
		}
		res.Properties = append(res.Properties, pr)
	}
	switch {
	case f.violation >= 0:
		res.Outcome, res.Violation = Violated, res.Properties[f.violation]
	case f.bound != "":
		res.Outcome, res.Bound = BoundReached, f.bound
	case f.sampled:
		res.Outcome = Sampled
	default:
		res.Outcome = Complete
		for _, pr := range res.Properties {
			if pr.Status == Failed {
				res.Outcome, res.Violation = Violated, pr
				break
			}
		}
	}
	return res
}

// successors returns the successors of s in emission order.
func (c *checker[S]) successors(s S) (acts []Action, next []S) {
	c.sp.Next(s, func(a Action, t S) {
		acts = append(acts, a)
		next = append(next, t)
	})
	return acts, next
}

// walk re-executes a path and returns its states and actions (len(acts) = len(states)-1).
func (c *checker[S]) walk(p *path) ([]S, []Action, error) {
	inits := c.sp.Init()
	if p.init < 0 || p.init >= len(inits) {
		return nil, nil, fmt.Errorf("model: path starts at initial state %d of %d", p.init, len(inits))
	}
	states := []S{inits[p.init]}
	var acts []Action
	for i, k := range p.steps {
		a, t := c.successors(states[len(states)-1])
		if int(k) < 0 || int(k) >= len(t) {
			return nil, nil, fmt.Errorf("model: step %d takes successor %d of %d (is Next deterministic?)", i+1, k, len(t))
		}
		states = append(states, t[k])
		acts = append(acts, a[k])
	}
	return states, acts, nil
}
