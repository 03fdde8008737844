package leasing

import (
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

// Every test of this package (the scenario runs of timerq_scen_test.go included)
// checks after each handler call that the deadline queues find what a scan of every
// side finds.
func init() { checkTimers = true }

// TestTimerQueue: the queue returns valid entries in (deadline, reference) order,
// skips stale ones, and due returns each due reference once, sorted.
func TestTimerQueue(t *testing.T) {
	ref := func(n int64) RefID { return RefID{Grantor: 0, GBoot: 1, N: n, Holder: 1} }
	cur := map[RefID]sim.Time{}
	valid := func(e tqEnt) bool { at, ok := cur[e.ID]; return ok && at == e.At }
	var q tq
	set := func(n int64, at sim.Time) { cur[ref(n)] = at; q.push(at, ref(n), nil, nil) }
	set(3, 30)
	set(1, 50)
	set(2, 30)
	set(1, 10) // the entry at 50 goes stale
	set(4, 40)
	set(4, 40) // the same deadline twice
	delete(cur, ref(3))
	if e, ok := q.top(valid); !ok || e.ID != ref(1) || e.At != 10 {
		t.Fatalf("top = %v %v, want %v at 10", e, ok, ref(1))
	}
	got := q.due(40, valid)
	want := []RefID{ref(1), ref(2), ref(4)}
	if len(got) != len(want) {
		t.Fatalf("due(40) = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("due(40) = %v, want %v", got, want)
		}
	}
	if e, ok := q.top(valid); ok {
		t.Errorf("top after due = %v, want none (the entry at 50 is stale)", e)
	}
}
