//go:build !linux && !darwin

package cli

import "time"

// cpuTime is unavailable on this platform (the index shows 0).
func cpuTime() time.Duration { return 0 }
