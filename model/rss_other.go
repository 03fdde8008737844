//go:build !linux && !darwin

package model

// cpuSeconds is unavailable on this platform.
func cpuSeconds() float64 { return 0 }

// peakRSS is unavailable on this platform.
func peakRSS() int64 { return 0 }

// currentRSS is unavailable on this platform (no memory bound).
func currentRSS() int64 { return 0 }
