package sim_test

import (
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

// chatty observes once per message and passes the message on to itself, n times.
type chatty struct{ n int }

type tick struct{}

func (tick) Kind() string { return "tick" }

func (c *chatty) Handle(in sim.Input, out *sim.Outbox) {
	if in.Kind == sim.Receive && c.n > 0 {
		c.n--
		out.Observe("tick", c.n)
		out.Send(in.Self, tick{})
	}
}

// A history longer than MaxReserved grows straight to the hint, so it holds exactly
// the observations hinted, without slack; with no hint it grows by a quarter at a time
// past a million observations, so it never holds more than a quarter unused.
func TestHistoryGrowsToTheHint(t *testing.T) {
	run := func(n, hint int) []sim.Observation {
		k, err := sim.New(sim.Config{Seed: 1, Nodes: []sim.NodeSpec{{Name: "a", New: func() sim.Node { return &chatty{n: n} }}},
			Network: sim.Network{Latency: sim.Constant(1)}, Observations: hint, MaxEvents: 2 * int64(n)})
		if err != nil {
			t.Fatal(err)
		}
		k.Inject(0, 0, tick{})
		return k.Run().History
	}
	n := sim.MaxReserved*3 + 3
	if h := run(n, n); len(h) != n || cap(h) != n {
		t.Fatalf("hinted: %d observations in a history of capacity %d, want %d", len(h), cap(h), n)
	}
	// a hint too small: the history grows past it as usual
	if h := run(n, n/2); len(h) != n {
		t.Fatalf("hint too small: %d observations", len(h))
	}
	n = sim.MaxReserved*8 + 3 // doubled to 2^21, then a quarter more
	if h := run(n, 0); len(h) != n || cap(h) > n+n/4 {
		t.Fatalf("not hinted: %d observations in a history of capacity %d", len(h), cap(h))
	}
}
