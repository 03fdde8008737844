package model

import (
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Parallel level-synchronous BFS.
//
// The frontier of one level is a list of chunks; workers take chunks with an atomic
// counter, expand their states, and insert the successors' fingerprints into the shared
// lock-free table. A worker appends every state it inserts first to its own parent log
// and its own output chunks: nothing on the hot path takes a lock or shares a cache line
// except the table itself. The next level is the concatenation of the workers' output
// chunks; a chunk is dropped as soon as it has been expanded. Successors are inserted in
// batches: all fingerprints of a batch are computed and their home buckets loaded first
// (many cache misses in flight at once), then the batch is inserted.
//
// The table grows between levels when the next level is expected to overflow it
// (growAhead), and otherwise in the middle of a level: every worker pauses at its next
// look at the load (pause) and they rehash together. Parent logs hold 8 bytes per state
// (parent reference, successor index); a counterexample is the chain of entries back to
// an initial state, re-executed.
//
// Counts are identical for any number of workers: the set of states at each level does
// not depend on which worker inserted a state first, and every state of a level is
// expanded exactly once. Which of several equally short counterexamples is reported may
// depend on the interleaving when workers > 1 (with one worker the whole search is
// deterministic).

const (
	chunkSize  = 1024 // states per frontier chunk
	batchSuccs = 4096 // successors per insertion batch (soft)
	flushEvery = 512  // insertions between flushes of a worker's count
	allowBlock = 256  // max-states allowance taken at a time
)

// Log references: a state's entry in its inserting worker's parent log.
const (
	refIndexBits = 36
	refIndexMask = 1<<refIndexBits - 1
	entryIdxBits = 20
	entryIdxMask = 1<<entryIdxBits - 1
	rootParent   = 1<<(64-entryIdxBits) - 1 // parent of an initial state
)

func makeRef(worker int, index int64) uint64 { return uint64(worker)<<refIndexBits | uint64(index) }

// plog is a worker's parent log: entry i packs the parent's reference (44 bits) and
// the successor index that led from the parent to state i (20 bits). 8 bytes a state.
type plog struct {
	blocks [][]uint64
	n      int64
}

const logBlock = 1 << 16

func (l *plog) append(parent uint64, idx int32) int64 {
	if idx < 0 || idx > entryIdxMask {
		panic(fmt.Sprintf("model: a state has more than %d successors", entryIdxMask))
	}
	if l.n%logBlock == 0 {
		l.blocks = append(l.blocks, make([]uint64, 0, logBlock))
	}
	b := &l.blocks[len(l.blocks)-1]
	*b = append(*b, parent<<entryIdxBits|uint64(idx))
	l.n++
	return l.n - 1
}

func (l *plog) get(i int64) uint64 { return l.blocks[i/logBlock][i%logBlock] }

type chunk[S any] struct {
	worker int
	base   int64 // log index of states[0]
	states []S
	ebits  []uint32 // eventually bits of states[i] (nil without eventually-properties)
}

type bfsRun[S any] struct {
	c       *checker[S]
	o       Options
	tab     *table
	workers []*bfsWorker[S]

	frontier []*chunk[S]
	next     atomic.Int64
	probe    bool // depth bound: only look whether successors would be new

	stop     atomic.Bool
	boundHit atomic.Bool // max-states
	memHit   atomic.Bool // max-memory
	depthNew atomic.Bool // a new state lies beyond max-depth
	remain   atomic.Int64
	block    int64 // allowance taken at a time

	// growth barrier
	mu       sync.Mutex
	cond     *sync.Cond
	active   int
	paused   int
	epoch    uint64
	growFlag atomic.Bool
	job      *growJob

	// findings (guarded by mu)
	violation int
	vref      uint64
	witnessed []atomic.Bool
	wref      []uint64
	panicVal  any
	panicStk  string

	total    atomic.Int64 // flushed, for progress
	distinct atomic.Int64 // flushed, for progress (the table may be swapped meanwhile)
}

type bfsWorker[S any] struct {
	_       [64]byte // keep workers' hot fields on separate cache lines
	r       *bfsRun[S]
	id      int
	next    func(S, func(Action, S)) // Spec.Next, or the worker's own (Spec.worker)
	recycle func(S)                  // nil without Spec.worker
	log     plog
	succ    []succ[S]
	out     []*chunk[S]
	cur     *chunk[S]
	emit    func(Action, S)
	pref    uint64 // parent being expanded
	pfp     uint64 // its fingerprint
	peb     uint32
	k       int32
	allow   int64
	since   int64 // insertions since the last flush
	total   int64
	tflush  int64
	sink    uint64
	newHere bool
	_       [64]byte
}

func (c *checker[S]) bfs(o Options, start time.Time) (*Result, error) {
	r := &bfsRun[S]{c: c, o: o, violation: -1}
	r.cond = sync.NewCond(&r.mu)
	alloc := newSlotAlloc()
	defer alloc.close()
	r.tab = newTable(o.TableSlots, alloc)
	r.witnessed = make([]atomic.Bool, len(c.sp.Properties))
	r.wref = make([]uint64, len(c.sp.Properties))
	if o.MaxStates > 0 {
		// One state at a time: a worker never holds allowance another one needs,
		// so the search stops at exactly MaxStates distinct states for any number
		// of workers (one atomic operation per new state, only in bounded runs).
		r.remain.Store(o.MaxStates)
		r.block = 1
	} else {
		r.remain.Store(math.MaxInt64)
		r.block = allowBlock
	}
	for i := 0; i < o.Workers; i++ {
		w := &bfsWorker[S]{r: r, id: i, next: c.sp.Next}
		if c.sp.worker != nil {
			w.next, w.recycle = c.sp.worker()
		}
		if c.evMask == 0 {
			// Fast path: fingerprint at once and skip self-loops (the successor is
			// the state being expanded, certainly seen).
			fpf, rc := c.sp.Fingerprint, w.recycle
			w.emit = func(a Action, t S) {
				w.k++
				fp := fpf(t)
				if fp == w.pfp {
					if rc != nil {
						rc(t)
					}
					return
				}
				w.succ = append(w.succ, succ[S]{s: t, fp: fp, parent: w.pref, idx: w.k - 1})
			}
		} else {
			w.emit = func(a Action, t S) {
				w.succ = append(w.succ, succ[S]{s: t, parent: w.pref, idx: w.k, ebits: w.peb})
				w.k++
			}
		}
		r.workers = append(r.workers, w)
	}

	// Level 1: the initial states, inserted by worker 0.
	w0 := r.workers[0]
	inits := c.sp.Init()
	w0.total += int64(len(inits))
	w0.succ = w0.succ[:0]
	for i, s := range inits {
		x := succ[S]{s: s, parent: rootParent, idx: int32(i)}
		if c.evMask == 0 {
			x.fp = c.sp.Fingerprint(s)
		}
		w0.succ = append(w0.succ, x)
	}
	r.active = 1 // the growth barrier counts the inserting goroutine
	w0.insertBatch()
	w0.flush()
	r.active = 0
	depth := 0
	if w0.newHere {
		depth = 1
	}
	level := 1
	prevLevel := int64(0)
	for !r.stop.Load() {
		r.frontier = r.frontier[:0]
		levelSize := int64(0)
		for _, w := range r.workers {
			if w.cur != nil {
				w.cur = nil
			}
			for _, ch := range w.out {
				levelSize += int64(len(ch.states))
			}
			r.frontier = append(r.frontier, w.out...)
			w.out = w.out[:0]
			w.newHere = false
		}
		if len(r.frontier) == 0 {
			break
		}
		r.growAhead(levelSize, prevLevel)
		prevLevel = levelSize
		if o.MaxDepth > 0 && level >= o.MaxDepth {
			r.probe = true
		}
		r.next.Store(0)
		r.runLevel(start)
		if r.panicVal != nil {
			return nil, &InternalError{Value: r.panicVal, Stack: r.panicStk}
		}
		for _, w := range r.workers {
			if w.newHere {
				depth = level + 1
			}
		}
		if r.probe {
			break
		}
		level++
	}

	var st Stats
	for _, w := range r.workers {
		st.Distinct += w.log.n
		st.Total += w.total
	}
	st.Depth = depth
	finishStats(&st, start, r.tab, c.injective())
	f := &findings{violation: r.violation, witness: map[int]*path{}}
	if r.violation >= 0 {
		f.vpath = r.pathOf(r.vref)
	}
	for _, pi := range c.sometimes {
		if r.witnessed[pi].Load() {
			f.witness[pi] = r.pathOf(r.wref[pi])
		}
	}
	if f.violation < 0 {
		switch {
		case r.memHit.Load():
			f.bound = "max-memory"
		case r.boundHit.Load():
			f.bound = "max-states"
		case r.probe && r.depthNew.Load():
			f.bound = "max-depth"
		}
	}
	r.tab.free()
	return c.result(f, st), nil
}

// runLevel expands the current frontier on all workers and waits for them, calling the
// progress hook meanwhile.
func (r *bfsRun[S]) runLevel(start time.Time) {
	r.active = len(r.workers)
	var wg sync.WaitGroup
	for _, w := range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.leave()
			defer func() {
				if p := recover(); p != nil {
					r.mu.Lock()
					if r.panicVal == nil {
						r.panicVal, r.panicStk = p, string(debug.Stack())
					}
					r.mu.Unlock()
					r.stop.Store(true)
				}
			}()
			w.run()
		}()
	}
	if r.o.Progress == nil {
		wg.Wait()
		return
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	every := r.o.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	tk := time.NewTicker(every)
	defer tk.Stop()
	for {
		select {
		case <-done:
			return
		case <-tk.C:
			st := Stats{Distinct: r.distinct.Load(), Total: r.total.Load(), Queue: int64(len(r.frontier)) * chunkSize}
			st.Seconds = time.Since(start).Seconds()
			if st.Seconds > 0 {
				st.StatesPerSec = float64(st.Distinct) / st.Seconds
			}
			r.o.Progress(st)
		}
	}
}

func (w *bfsWorker[S]) run() {
	r := w.r
	for !r.stop.Load() {
		if r.o.mem.exceeded() {
			r.memHit.Store(true)
			r.stop.Store(true)
			return
		}
		i := r.next.Add(1) - 1
		if i >= int64(len(r.frontier)) {
			return
		}
		w.expand(r.frontier[i])
		r.frontier[i] = nil // expanded: its states can be collected now, mid-level
		w.flush()
	}
}

// expand expands the states of one chunk, batch by batch.
func (w *bfsWorker[S]) expand(ch *chunk[S]) {
	r := w.r
	c := r.c
	next := w.next
	for j := 0; j < len(ch.states); {
		w.succ = w.succ[:0]
		for j < len(ch.states) && len(w.succ) < batchSuccs {
			s := ch.states[j]
			eb := uint32(0)
			if ch.ebits != nil {
				eb = ch.ebits[j]
			}
			ref := makeRef(ch.worker, ch.base+int64(j))
			j++
			if !c.expandable(s) {
				continue
			}
			w.pref, w.peb, w.k = ref, eb, 0
			if c.evMask == 0 {
				w.pfp = c.sp.Fingerprint(s)
			}
			next(s, w.emit)
			n := w.k
			// Successors of the last level are generated too (the probe needs them),
			// so they count in Total as TLC counts them: a depth bound equal to the
			// depth leaves every statistic unchanged.
			w.total += int64(n)
			if n == 0 && eb != c.evMask {
				w.found(c.missingEventually(eb), ref)
				return
			}
		}
		if r.probe {
			w.probeBatch()
		} else {
			w.insertBatch()
		}
		if r.stop.Load() {
			return
		}
		if r.growFlag.Load() {
			w.flush()
			r.pause()
		}
	}
}

// probeBatch looks whether any successor of the batch would be new (depth bound).
func (w *bfsWorker[S]) probeBatch() {
	r := w.r
	if r.depthNew.Load() && r.c.evMask == 0 {
		return
	}
	for i := range w.succ {
		x := &w.succ[i]
		if r.c.evMask != 0 {
			x.ebits = r.c.ebits(x.s, x.ebits)
			x.fp = r.c.fp(x.s, x.ebits)
		}
		if !r.tab.contains(x.fp) {
			r.depthNew.Store(true)
			return
		}
	}
}

// insertBatch fingerprints the batch, touches the home slots, then inserts.
func (w *bfsWorker[S]) insertBatch() {
	r := w.r
	c := r.c
	if c.evMask != 0 {
		for i := range w.succ {
			x := &w.succ[i]
			x.ebits = c.ebits(x.s, x.ebits)
			x.fp = c.fp(x.s, x.ebits)
		}
	}
	// Touch every home bucket of the batch in a tight loop: the loads are independent,
	// so the core keeps many cache and TLB misses in flight at once, and the insert
	// pass below finds the lines in cache. (Measured: about 20% less CPU on TwoPhase
	// rm=9 than probing directly. Sorting the batch by fingerprint, so that probes
	// sweep the table in address order, measured about 40% worse.)
	sink := uint64(0)
	for i := range w.succ {
		sink ^= r.tab.touch(w.succ[i].fp)
	}
	w.sink ^= sink
	rc := w.recycle
	for i := range w.succ {
		x := &w.succ[i]
		if !r.tab.insert(x.fp) {
			if rc != nil {
				rc(x.s)
			}
			continue
		}
		// A new state: it needs max-states allowance. (Checked after the duplicate
		// test, so a bound equal to the state count completes the search.)
		if w.allow == 0 && !w.refill() {
			r.boundHit.Store(true)
			r.stop.Store(true)
			return
		}
		w.allow--
		idx := w.log.append(x.parent, x.idx)
		ref := makeRef(w.id, idx)
		w.newHere = true
		if pi := c.firstViolated(x.s); pi >= 0 {
			w.found(pi, ref)
			return
		}
		c.tally(x.s)
		for _, pi := range c.sometimes {
			if !r.witnessed[pi].Load() && c.sp.Properties[pi].Check(x.s) && r.witnessed[pi].CompareAndSwap(false, true) {
				r.wref[pi] = ref
			}
		}
		if w.cur == nil || len(w.cur.states) == chunkSize {
			w.cur = &chunk[S]{worker: w.id, base: idx, states: make([]S, 0, chunkSize)}
			if c.evMask != 0 {
				w.cur.ebits = make([]uint32, 0, chunkSize)
			}
			w.out = append(w.out, w.cur)
		}
		w.cur.states = append(w.cur.states, x.s)
		if c.evMask != 0 {
			w.cur.ebits = append(w.cur.ebits, x.ebits)
		}
		w.since++
		if w.since >= w.flushAt() {
			w.flush()
			if r.growFlag.Load() || r.tab.needsGrowth() {
				r.pause()
			}
		}
	}
}

// flushAt is how many insertions a worker makes between looks at the table's load: at
// most flushEvery, and small enough that all workers together cannot fill the free
// quarter of the table between two looks (a full table would probe forever).
func (w *bfsWorker[S]) flushAt() int64 {
	return max(1, min(flushEvery, int64(w.r.tab.n)/(8*int64(len(w.r.workers)))))
}

// found records a violation of property pi at the state with log reference ref and
// stops the search (the first one recorded wins).
func (w *bfsWorker[S]) found(pi int, ref uint64) {
	r := w.r
	r.mu.Lock()
	if r.violation < 0 {
		r.violation, r.vref = pi, ref
	}
	r.mu.Unlock()
	r.stop.Store(true)
}

// refill takes more max-states allowance; false when none is left.
func (w *bfsWorker[S]) refill() bool {
	r := w.r
	for {
		left := r.remain.Load()
		if left <= 0 {
			return false
		}
		take := min(left, r.block)
		if r.remain.CompareAndSwap(left, left-take) {
			w.allow = take
			return true
		}
	}
}

func (w *bfsWorker[S]) flush() {
	if w.since > 0 {
		w.r.tab.count.Add(w.since)
		w.r.distinct.Add(w.since)
		w.since = 0
	}
	if w.total != w.tflush {
		w.r.total.Add(w.total - w.tflush)
		w.tflush = w.total
	}
}

// pause stops this worker until the table has grown. When every active worker has
// paused, the last to arrive starts a growth job and all of them rehash the table in
// parallel; workers that have finished the level take no part.
func (r *bfsRun[S]) pause() {
	r.mu.Lock()
	r.growFlag.Store(true)
	r.paused++
	if r.paused == r.active {
		r.growLocked(r.paused) // unlocks while rehashing
		r.mu.Unlock()
		return
	}
	e := r.epoch
	for r.job == nil && r.epoch == e {
		r.cond.Wait()
	}
	if r.epoch == e {
		job := r.job
		r.mu.Unlock()
		job.work()
		job.wg.Done()
		r.mu.Lock()
		for r.epoch == e {
			r.cond.Wait()
		}
	}
	r.mu.Unlock()
}

// leave marks a worker done with the level; if everyone still active is paused for
// growth, it leads the growth on their behalf (and helps).
func (r *bfsRun[S]) leave() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active--
	if r.growFlag.Load() && r.job == nil && r.active > 0 && r.paused == r.active {
		r.growLocked(r.paused + 1)
	}
}

// growLocked grows the table with the given number of participants (the caller and
// the paused workers). Called and returns with r.mu held; releases it meanwhile.
func (r *bfsRun[S]) growLocked(participants int) {
	if r.tab.needsGrowth() {
		old := r.tab
		job := old.growJob(old.n + old.n/2)
		job.wg.Add(participants)
		r.job = job
		r.cond.Broadcast()
		r.mu.Unlock()
		job.work()
		job.wg.Done()
		job.wg.Wait()
		r.mu.Lock()
		r.tab = job.nt
		r.job = nil
		old.free()
	}
	r.paused = 0
	r.epoch++
	r.growFlag.Store(false)
	r.cond.Broadcast()
}

// growAhead grows the table between levels, when every worker is idle, if the next
// level is expected to overflow it: the next level is guessed to grow from this one as
// this one grew from the previous (at most 4×). Growing here instead of in the middle
// of a level spares the workers a stop-the-world pause (which costs most when a worker
// is descheduled on a busy machine); a wrong guess only moves a growth, never changes a
// count, and a level that outgrows the guess still grows the table as it goes.
func (r *bfsRun[S]) growAhead(level, prev int64) {
	if level == 0 || prev == 0 {
		return
	}
	ratio := min(float64(level)/float64(prev), 4)
	need := r.tab.count.Load() + int64(float64(level)*ratio)
	if r.o.MaxStates > 0 {
		need = min(need, r.o.MaxStates)
	}
	n := r.tab.n
	for uint64(need)*growDen > n*growNum {
		n += n / 2
	}
	if n == r.tab.n {
		return
	}
	old := r.tab
	job := old.growJob(n)
	var wg sync.WaitGroup
	for range r.workers {
		wg.Add(1)
		go func() { defer wg.Done(); job.work() }()
	}
	wg.Wait()
	r.tab = job.nt
	old.free()
}

// pathOf rebuilds the path to the state with log reference ref.
func (r *bfsRun[S]) pathOf(ref uint64) *path {
	var rev []int32
	for {
		w := r.workers[ref>>refIndexBits]
		e := w.log.get(int64(ref & refIndexMask))
		idx := int32(e & entryIdxMask)
		parent := e >> entryIdxBits
		if parent == rootParent {
			steps := make([]int32, len(rev))
			for i := range rev {
				steps[i] = rev[len(rev)-1-i]
			}
			return &path{init: int(idx), steps: steps}
		}
		rev = append(rev, idx)
		ref = parent
	}
}
