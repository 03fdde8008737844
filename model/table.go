package model

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// table is the seen-set: an open-addressing hash set of 64-bit fingerprints with linear
// probing, shared by all BFS workers without locks (a slot goes from empty to a
// fingerprint by compare-and-swap and never changes again while the table lives).
//
// Slot 0 means empty; the fingerprint 0 is kept out of band (zero). The home bucket of a
// fingerprint is fastrange(fp, n/8) = ⌊fp·(n/8)/2⁶⁴⌋, so placement is monotone in fp: a
// rehash that scans the old table in order writes the new table almost sequentially,
// and n need not be a power of two, which lets the table grow by 1.5× and stay between
// 8/0.75 ≈ 10.7 and 8/0.5 = 16 bytes per stored fingerprint.
//
// Growth is not concurrent with lookups: the BFS pauses its workers (see growLocked
// and growAhead in bfs.go).
type table struct {
	slots  []uint64
	n      uint64
	alloc  *slotAlloc
	handle int
	zero   atomic.Bool
	// count is the number of stored fingerprints as flushed by the workers (each
	// keeps a local count and adds it here at least every flushEvery insertions).
	count atomic.Int64
}

const (
	minSlots = 1 << 16
	// growNum/growDen is the load factor at which the table grows (by 1.5×).
	growNum, growDen = 3, 4
)

// newTable returns an empty table of at least the given number of slots, from alloc.
func newTable(slots uint64, alloc *slotAlloc) *table {
	slots = max(slots, minSlots)
	slots = (slots + 63) &^ 63
	t := &table{n: slots, alloc: alloc}
	t.slots, t.handle = alloc.get(slots)
	return t
}

// free returns the table's memory to its allocator; the table must not be used
// afterwards.
func (t *table) free() {
	if t.slots != nil {
		t.alloc.put(t.handle)
		t.slots = nil
	}
}

// home returns the first slot of fp's home bucket: 8 slots, one 64-byte cache line
// (the slot array is line-aligned: mmap'd, or a Go allocation of 64·k bytes). Probing
// starts at the bucket's first slot, so the line touched ahead of time (touch) holds
// the answer unless the bucket has overflowed into the next one.
func (t *table) home(fp uint64) uint64 {
	hi, _ := bits.Mul64(fp, t.n>>3)
	return hi << 3
}

// touch loads fp's home slot so that a later insert hits the cache. A batch of touches
// issued back to back keeps many cache misses in flight at once (memory-level
// parallelism); the returned value only keeps the loads from being optimised away.
func (t *table) touch(fp uint64) uint64 {
	return atomic.LoadUint64(&t.slots[t.home(fp)])
}

// insert adds fp and reports whether it was absent. Safe for concurrent use with other
// inserts and lookups.
func (t *table) insert(fp uint64) bool {
	if fp == 0 {
		return t.zero.CompareAndSwap(false, true)
	}
	i := t.home(fp)
	s := t.slots
	for {
		v := atomic.LoadUint64(&s[i])
		if v == fp {
			return false
		}
		if v == 0 {
			if atomic.CompareAndSwapUint64(&s[i], 0, fp) {
				return true
			}
			continue // lost a race for this slot: look at what was written
		}
		i++
		if i == t.n {
			i = 0
		}
	}
}

// contains reports whether fp is present.
func (t *table) contains(fp uint64) bool {
	if fp == 0 {
		return t.zero.Load()
	}
	i := t.home(fp)
	s := t.slots
	for {
		v := atomic.LoadUint64(&s[i])
		if v == fp {
			return true
		}
		if v == 0 {
			return false
		}
		i++
		if i == t.n {
			i = 0
		}
	}
}

// needsGrowth reports whether the flushed count has passed the growth threshold.
func (t *table) needsGrowth() bool {
	return uint64(t.count.Load())*growDen > t.n*growNum
}

// grown returns a table 1.5× larger holding the same fingerprints, and frees t. Not
// concurrent-safe: the caller has stopped every other user of t.
func (t *table) grown() *table {
	job := t.growJob(t.n + t.n/2)
	job.work()
	t.free()
	return job.nt
}

// growJob rehashes a table into a larger one, block by block: any number of
// goroutines may call work at once (insert is safe for concurrent use), each taking
// the next block until none is left. The BFS grows this way with every worker helping
// (see growLocked and growAhead in bfs.go); grown uses it on one goroutine.
type growJob struct {
	old, nt *table
	next    atomic.Int64
	blocks  int64
	wg      sync.WaitGroup // participants still rehashing (BFS growth)
}

const growBlock = 1 << 16

// growJob prepares moving t's fingerprints into a new table of n slots.
func (t *table) growJob(n uint64) *growJob {
	nt := newTable(n, t.alloc)
	nt.zero.Store(t.zero.Load())
	nt.count.Store(t.count.Load())
	return &growJob{old: t, nt: nt, blocks: int64((t.n + growBlock - 1) / growBlock)}
}

func (j *growJob) work() {
	for {
		b := j.next.Add(1) - 1
		if b >= j.blocks {
			return
		}
		lo := uint64(b) * growBlock
		hi := min(lo+growBlock, j.old.n)
		for _, v := range j.old.slots[lo:hi] {
			if v != 0 {
				j.nt.insert(v)
			}
		}
	}
}

// bytes returns the memory held by the slots.
func (t *table) bytes() int64 { return int64(t.n) * 8 }
