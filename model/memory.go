package model

import (
	"sync/atomic"
	"time"
)

// memWatch samples the process's resident memory while a search runs and raises a
// flag once it passes Options.MaxMemory; the searches poll the flag and end with
// outcome BoundReached, bound "max-memory", instead of the Go runtime killing the
// process (TwoPhase with rm=15 allowed, say, or an actor model without a Boundary).
type memWatch struct {
	hit  atomic.Bool
	done chan struct{}
}

// memPoll is how often memWatch samples (a read of /proc/self/statm on Linux).
const memPoll = 100 * time.Millisecond

// watchMemory starts a watch for limit bytes (nil when limit is 0 or the platform
// cannot tell the resident size).
func watchMemory(limit int64) *memWatch {
	if limit <= 0 || currentRSS() == 0 {
		return nil
	}
	w := &memWatch{done: make(chan struct{})}
	go func() {
		tk := time.NewTicker(memPoll)
		defer tk.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-tk.C:
				if currentRSS() > limit {
					w.hit.Store(true)
					return
				}
			}
		}
	}()
	return w
}

// exceeded reports whether the limit was passed (false for a nil watch).
func (w *memWatch) exceeded() bool { return w != nil && w.hit.Load() }

func (w *memWatch) stop() {
	if w != nil {
		close(w.done)
	}
}
