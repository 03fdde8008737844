package winkowski

import (
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

// The history checks catch what they claim to, on crafted histories.
func TestHistoryChecks(t *testing.T) {
	s, err := NewSystem(oneTaskCfg(1, []int{1, 2}, []PoolID{0, 1}, []PoolID{0}, []PoolID{1}))
	if err != nil {
		t.Fatal(err)
	}
	obs := func(vs ...any) []sim.Observation {
		h := make([]sim.Observation, len(vs))
		for i, v := range vs {
			h[i] = sim.Observation{Index: int64(i), Time: sim.Time(i), Value: v}
		}
		return h
	}
	ok := obs(
		Booked{0, 0, 1}, Booked{1, 1, 1}, Access{1, []PoolUnit{{0, 0}, {1, 1}}},
		Booked{1, 0, 3}, Access{3, []PoolUnit{{1, 0}}},
		AccessEnd{1}, Freed{0, 0, 1}, Freed{1, 1, 1}, AccessEnd{3}, Freed{1, 0, 3},
		Booked{0, 0, 2}, Access{2, []PoolUnit{{0, 0}}}, AccessEnd{2}, Freed{0, 0, 2},
	)
	for name, check := range map[string]func(*System, []sim.Observation) error{
		"exclusion": CheckExclusion, "all-or-nothing": CheckAllOrNothing, "bookings": CheckBookings,
	} {
		if err := check(s, ok); err != nil {
			t.Errorf("%s on a good history: %v", name, err)
		}
	}
	for _, c := range []struct {
		name  string
		check func(*System, []sim.Observation) error
		h     []sim.Observation
		want  string
	}{
		{"two users", CheckExclusion, obs(Access{1, []PoolUnit{{0, 0}, {1, 0}}}, Access{2, []PoolUnit{{0, 0}}}), "used by tasks 1 and 2 at once"},
		{"not a unit", CheckExclusion, obs(Access{2, []PoolUnit{{0, 1}}}), "not a resource"},
		{"double booking", CheckExclusion, obs(Booked{0, 0, 1}, Booked{0, 0, 2}), "while task 1 holds it"},
		{"unbooked", CheckAllOrNothing, obs(Booked{0, 0, 1}, Access{1, []PoolUnit{{0, 0}, {1, 0}}}), "without holding it"},
		{"partial", CheckAllOrNothing, obs(Booked{0, 0, 1}, Access{1, []PoolUnit{{0, 0}}}), "needs one from each of 2 pools"},
		{"freed early", CheckAllOrNothing, obs(Booked{0, 0, 2}, Access{2, []PoolUnit{{0, 0}}}, Freed{0, 0, 2}), "while the task still uses it"},
		{"lost win", CheckBookings, obs(BookFailed{1, 3}), "found no free resource"},
	} {
		if err := c.check(s, c.h); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	ops := PoolOps(s, obs(AcquireCall{2, 0}, Acquired{2, 0, 0}, AccessEnd{2}, Freed{0, 0, 2}, AcquireCall{1, 0}))
	if len(ops) != 3 || ops[0].Return != 1 || !ops[1].Release || ops[1].Call != 2 || ops[1].Return != 3 || !ops[2].Pending {
		t.Fatalf("pool ops %+v", ops)
	}
}
