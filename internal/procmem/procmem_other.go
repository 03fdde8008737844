//go:build !linux

package procmem

import (
	"runtime/debug"
	"time"
)

func freeOSMemory()   { debug.FreeOSMemory() }
func resetPeak() bool { return false }
func peakRSS() int64  { return 0 }
func rss() int64      { return 0 }

// cpuTime is not measured here (0): the scale rows then show wall time only.
func cpuTime() time.Duration { return 0 }
