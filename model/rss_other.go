//go:build !linux && !darwin

package model

// peakRSS is unavailable on this platform.
func peakRSS() int64 { return 0 }
