// Package procmem measures the process: CPU time (user and system) and peak resident
// memory, for benchmarks that report what a run costs as the operating system sees it
// (simrun bench's scale rows).
package procmem

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// Usage is what one measured piece of work cost.
type Usage struct {
	Wall, CPU time.Duration
	// Peak is the process's peak resident memory while the work ran; Base its
	// resident memory just before (after a collection returned what it could).
	Peak, Base int64
	// Sampled reports that Peak comes from sampling the Go runtime's memory every few
	// milliseconds (where the operating system cannot reset its peak counter).
	Sampled bool
}

// Measure runs f and reports its wall and CPU time and the process's peak resident
// memory meanwhile. The garbage collector runs first and returns freed memory to the
// operating system, so that an earlier measurement's garbage does not count.
func Measure(f func() error) (Usage, error) {
	runtime.GC()
	freeOSMemory()
	u := Usage{Base: rss()}
	var stop func() int64
	if !resetPeak() {
		stop = sample()
		u.Sampled = true
	}
	cpu0, t0 := cpuTime(), time.Now()
	err := f()
	u.Wall, u.CPU = time.Since(t0), cpuTime()-cpu0
	if stop != nil {
		u.Peak = u.Base + stop()
	} else {
		u.Peak = peakRSS()
	}
	return u, err
}

// sample polls the Go runtime's memory (mapped minus released) every 5ms and returns
// a function that stops and returns the growth seen over the first sample.
func sample() func() int64 {
	names := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	read := func() int64 {
		metrics.Read(names)
		return int64(names[0].Value.Uint64()) - int64(names[1].Value.Uint64())
	}
	first := read()
	var mu sync.Mutex
	most := first
	done := make(chan struct{})
	go func() {
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				v := read()
				mu.Lock()
				most = max(most, v)
				mu.Unlock()
			}
		}
	}()
	return func() int64 {
		close(done)
		mu.Lock()
		defer mu.Unlock()
		return max(most, read()) - first
	}
}
