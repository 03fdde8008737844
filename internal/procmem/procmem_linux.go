package procmem

import (
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"
)

func freeOSMemory() { debug.FreeOSMemory() }

// resetPeak sets the kernel's peak resident size (VmHWM) to the current one.
func resetPeak() bool { return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil }

// peakRSS is VmHWM from /proc/self/status, in bytes.
func peakRSS() int64 { return statusKB("VmHWM:") }

func rss() int64 { return statusKB("VmRSS:") }

func statusKB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte(field)); ok {
			f := bytes.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(string(f[0]), 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
