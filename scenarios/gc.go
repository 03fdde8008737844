package scenarios

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// GCPercent is the garbage-collection target simrun runs with, on a small live heap,
// unless the GOGC environment variable says otherwise. A run allocates many short-lived
// objects (messages, observations, histories for the checkers) on a small live heap, so
// with Go's default of 100 the collector runs very often: in a sweep its background work
// takes the cores the workers need (BenchmarkSweep, 2 workers vs 1 on 2 cores: 1.25× at
// GOGC=100, 1.95× at 400), and big model checks spend a third of their time collecting.
// 400 trades memory (the heap grows to about 5× the live data) for time.
//
// On a large live heap that trade is wrong: a run of 100 000 nodes keeps a history of
// about a gigabyte live, and 5× that is more than the machine it runs on. TuneGC
// therefore caps the heap's growth above the live data at GCHeadroom, or a quarter of
// the live data when that is more (GOGC falls from 400 towards 25 as the live heap
// grows past GCHeadroom/4).
const GCPercent = 400

// GCHeadroom is the most the heap grows above its live data between collections,
// unless a quarter of the live data is more (see GCPercent).
const GCHeadroom = 256 << 20

// gcPercentFor is the GOGC that TuneGC sets for a live heap of live bytes.
func gcPercentFor(live uint64) int {
	if live == 0 {
		return GCPercent
	}
	room := max(uint64(GCHeadroom), live/4)
	return int(min(uint64(GCPercent), max(25, room*100/live)))
}

// gcTuning is the tuner in force (nil: none).
var gcTuning atomic.Pointer[gcTuner]

// stop ends the tuning; the next GC percent set is the caller's.
func (t *gcTuner) stop() {
	t.mu.Lock()
	t.stopped = true
	t.mu.Unlock()
}

type gcTuner struct {
	mu      sync.Mutex // held while setting GOGC, so that a restore is the last word
	stopped bool
	limit   bool // set a soft memory limit too (GOMEMLIMIT is not set)
}

// gcSentinel is allocated after every collection; its finalizer runs after the next
// one, retunes and allocates the next sentinel.
type gcSentinel struct{ _ [16]byte }

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

func (t *gcTuner) arm() {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.stopped {
			return
		}
		metrics.Read(liveSample)
		if liveSample[0].Value.Kind() == metrics.KindUint64 {
			live := liveSample[0].Value.Uint64()
			pct := gcPercentFor(live)
			debug.SetGCPercent(pct)
			if t.limit {
				// A soft limit half the headroom above the collector's target: the
				// runtime then returns freed pages to the system promptly instead of
				// keeping them resident (a 100 000-node run's RSS stayed 300-500 MB
				// above its heap under load without it).
				lim := int64(math.MaxInt64)
				if pct < GCPercent {
					lim = int64(live + live*uint64(pct)/100*3/2)
				}
				debug.SetMemoryLimit(lim)
			}
		}
		t.arm()
	})
}

// TuneGC sets the collector as simrun runs (GCPercent on a small heap, at most
// GCHeadroom or a quarter of the live data above it on a large one, with a soft memory
// limit half that again above unless GOMEMLIMIT is set) unless GOGC is set, and returns a function restoring the previous setting (benchmarks use it to
// measure what the tool does).
func TuneGC() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	old := debug.SetGCPercent(GCPercent)
	_, userLimit := os.LookupEnv("GOMEMLIMIT")
	t := &gcTuner{limit: !userLimit}
	oldLimit := debug.SetMemoryLimit(-1)
	if prev := gcTuning.Swap(t); prev != nil {
		prev.stop()
	}
	t.arm()
	return func() {
		t.stop()
		gcTuning.CompareAndSwap(t, nil)
		debug.SetGCPercent(old)
		if t.limit {
			debug.SetMemoryLimit(oldLimit)
		}
	}
}
