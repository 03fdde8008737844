package sim

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"
)

// Latency is a one-way link delay distribution.
//
//	{"dist":"constant","min":D}            always D
//	{"dist":"uniform","min":A,"max":B}     uniform in [A, B]
//	{"dist":"exp","min":F,"mean":M}        F + an exponential with mean M (a floor plus a tail)
//
// Durations are nanoseconds in JSON.
type Latency struct {
	Dist string        `json:"dist"`
	Min  time.Duration `json:"min"`
	Max  time.Duration `json:"max,omitempty"`
	Mean time.Duration `json:"mean,omitempty"`
}

// Constant returns a constant latency d.
func Constant(d time.Duration) Latency { return Latency{Dist: "constant", Min: d} }

// Uniform returns a latency uniform in [lo, hi].
func Uniform(lo, hi time.Duration) Latency { return Latency{Dist: "uniform", Min: lo, Max: hi} }

// Exponential returns floor plus an exponential tail with the given mean.
func Exponential(floor, mean time.Duration) Latency {
	return Latency{Dist: "exp", Min: floor, Mean: mean}
}

// Validate reports a malformed distribution.
func (l Latency) Validate() error {
	switch l.Dist {
	case "constant":
		if l.Min < 0 {
			return errors.New("constant latency is negative")
		}
	case "uniform":
		if l.Min < 0 || l.Max < l.Min {
			return fmt.Errorf("uniform latency needs 0 <= min <= max (min %v, max %v)", l.Min, l.Max)
		}
	case "exp":
		if l.Min < 0 || l.Mean <= 0 {
			return fmt.Errorf("exp latency needs floor >= 0 and mean > 0 (floor %v, mean %v)", l.Min, l.Mean)
		}
	case "":
		return errors.New("latency distribution missing (constant, uniform or exp)")
	default:
		return fmt.Errorf("unknown latency distribution %q (constant, uniform or exp)", l.Dist)
	}
	return nil
}

// Sample draws one delay. It consumes exactly one draw from r for every distribution,
// so switching a link's distribution never shifts the rest of its stream.
func (l Latency) Sample(r *Rand) time.Duration {
	u := r.Uint64()
	switch l.Dist {
	case "uniform":
		span := uint64(l.Max - l.Min)
		if span == 0 {
			return l.Min
		}
		hi, _ := bits.Mul64(u, span+1)
		return l.Min + time.Duration(hi)
	case "exp":
		f := float64(u>>11) * (1.0 / (1 << 53))
		x := -math.Log(1-f) * float64(l.Mean)
		if x > float64(100*l.Mean) { // cap the tail: 100 means (probability e^-100)
			x = float64(100 * l.Mean)
		}
		return l.Min + time.Duration(x)
	default:
		return l.Min
	}
}

// MeanDelay returns the distribution's mean.
func (l Latency) MeanDelay() time.Duration {
	switch l.Dist {
	case "uniform":
		return (l.Min + l.Max) / 2
	case "exp":
		return l.Min + l.Mean
	}
	return l.Min
}

func (l Latency) String() string {
	switch l.Dist {
	case "uniform":
		return fmt.Sprintf("uniform(%v..%v)", l.Min, l.Max)
	case "exp":
		return fmt.Sprintf("exp(floor %v, mean %v)", l.Min, l.Mean)
	}
	return fmt.Sprintf("constant(%v)", l.Min)
}

// LinkLatency overrides the latency of one directed link.
type LinkLatency struct {
	From    NodeID  `json:"from"`
	To      NodeID  `json:"to"`
	Latency Latency `json:"latency"`
}

// Network configures the simulated network. The default is the papers' network:
// reliable FIFO links inside a partition. Loss, Duplicate and Reorder break that on
// purpose (probabilities per message); when any is on it is listed in the run summary.
type Network struct {
	Latency Latency       `json:"latency"`
	Links   []LinkLatency `json:"links,omitempty"`
	// Loss is the probability that a message is dropped when sent.
	Loss float64 `json:"loss,omitempty"`
	// Duplicate is the probability that a message is delivered twice.
	Duplicate float64 `json:"duplicate,omitempty"`
	// Reorder is the probability that a message skips the link's FIFO order; such a
	// message is delayed by an extra uniform [0, ReorderWindow] (default 10ms).
	Reorder       float64       `json:"reorder,omitempty"`
	ReorderWindow time.Duration `json:"reorder_window,omitempty"`
}

// DefaultNetwork is a FIFO, loss-free network with uniform 1–10ms latency.
func DefaultNetwork() Network {
	return Network{Latency: Uniform(time.Millisecond, 10*time.Millisecond)}
}

// Validate checks the network configuration for n nodes.
func (nw Network) Validate(n int) error {
	if err := nw.Latency.Validate(); err != nil {
		return fmt.Errorf("network latency: %w", err)
	}
	for i, l := range nw.Links {
		if l.From < 0 || int(l.From) >= n || l.To < 0 || int(l.To) >= n {
			return fmt.Errorf("network links[%d]: link %d->%d names an unknown node", i, l.From, l.To)
		}
		if err := l.Latency.Validate(); err != nil {
			return fmt.Errorf("network links[%d]: %w", i, err)
		}
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"loss", nw.Loss}, {"duplicate", nw.Duplicate}, {"reorder", nw.Reorder}} {
		if p.v < 0 || p.v > 1 || math.IsNaN(p.v) {
			return fmt.Errorf("network %s: probability %v is not in [0, 1]", p.name, p.v)
		}
	}
	if nw.ReorderWindow < 0 {
		return errors.New("network reorder_window is negative")
	}
	return nil
}

// Knobs lists the assumption-breaking knobs that are on, for the run summary.
func (nw Network) Knobs() []string {
	var ks []string
	if nw.Loss > 0 {
		ks = append(ks, fmt.Sprintf("loss=%g", nw.Loss))
	}
	if nw.Duplicate > 0 {
		ks = append(ks, fmt.Sprintf("duplicate=%g", nw.Duplicate))
	}
	if nw.Reorder > 0 {
		ks = append(ks, fmt.Sprintf("reorder=%g", nw.Reorder))
	}
	return ks
}

// Clock is a node's local clock: local(t) = t + Offset + t·DriftPPM/10⁶. DriftPPM is in
// parts per million (10000 = 1% fast, -10000 = 1% slow) and must be > -10⁶.
type Clock struct {
	Offset   time.Duration `json:"offset,omitempty"`
	DriftPPM int64         `json:"drift_ppm,omitempty"`
}

// Local returns the clock's reading at global time t. Integer arithmetic only, so the
// reading is identical on every platform.
func (c Clock) Local(t Time) Time {
	return t + Time(c.Offset) + driftOf(t, c.DriftPPM)
}

func driftOf(t Time, ppm int64) Time {
	if ppm == 0 {
		return 0
	}
	q, r := int64(t)/1_000_000, int64(t)%1_000_000
	return Time(q*ppm + r*ppm/1_000_000)
}

// Global returns the earliest global time at which the clock reads at least local
// (saturating at the largest Time). Local is non-decreasing in t for any drift above
// -10⁶ ppm, so a binary search around the floating-point estimate is exact.
func (c Clock) Global(local Time) Time {
	if c.DriftPPM == 0 {
		return local - Time(c.Offset)
	}
	est := float64(local-Time(c.Offset)) * 1e6 / float64(1_000_000+c.DriftPPM)
	const limit = Time(math.MaxInt64 / 4)
	if est >= float64(limit) {
		return limit
	}
	g := Time(est)
	// Mostly the estimate or the next instant is the answer: two readings tell.
	switch l := c.Local(g); {
	case l >= local:
		if c.Local(g-1) < local {
			return g
		}
	case g < limit && c.Local(g+1) >= local:
		return g + 1
	}
	// Bracket [lo, hi] with Local(lo) < local <= Local(hi), widening geometrically.
	lo, hi := g, g
	for step := Time(1); c.Local(lo) >= local; step *= 2 {
		lo = g - step
	}
	for step := Time(1); c.Local(hi) < local; step *= 2 {
		if hi >= limit {
			return limit
		}
		hi = min(g+step, limit)
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if c.Local(mid) >= local {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
