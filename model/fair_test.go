package model

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// loop: states 0 and 1 alternate by an unfair "spin"; "exit" (fair) leads to 2, where
// P holds and the system stops. exitAt says in which states exit is enabled.
func loopSpec(exitAt ...int) *Spec[int] {
	return &Spec[int]{
		Name: "loop",
		Init: func() []int { return []int{0} },
		Next: func(s int, emit func(Action, int)) {
			if s == 2 {
				return
			}
			emit(0, 1-s) // spin
			for _, e := range exitAt {
				if e == s {
					emit(1, 2) // exit
				}
			}
		},
		Fingerprint: func(s int) uint64 { return sim.Mix64(uint64(s) + 1) },
		Fairness:    func(s int, a Action) (uint64, bool) { return 7, a == 1 },
		Properties:  []Property[int]{Eventually("exit", func(s int) bool { return s == 2 })},
	}
}

func TestFairCycles(t *testing.T) {
	// No maximal finite path violates it (the only terminal state satisfies P), but
	// without fairness spinning forever is admissible: a lasso, not "holds".
	res := mustCheck(t, loopSpec(0, 1), Options{})
	if res.Outcome != Violated || res.Fair || res.Violation.Cycle == 0 {
		t.Fatalf("%v %+v", res.Outcome, res.Violation)
	}
	// exit is enabled everywhere on the spin cycle: weak fairness forces it.
	for _, o := range []Options{{Fair: true}, {Fair: true, Strategy: DFS}} {
		res = mustCheck(t, loopSpec(0, 1), o)
		if res.Outcome != Complete || !res.Fair || res.Properties[0].Status != Holds {
			t.Fatalf("%+v: %v %+v", o, res.Outcome, res.Violation)
		}
	}
	// exit is enabled only in state 0: the spin cycle passes state 1 where it is
	// disabled, so cycling forever is fair and P never holds.
	res = mustCheck(t, loopSpec(0), Options{Fair: true})
	if res.Outcome != Violated || res.Violation.Name != "exit" || res.Violation.Cycle == 0 {
		t.Fatalf("%v %+v", res.Outcome, res.Violation)
	}
	states, _, err := mustChecker(loopSpec(0)).walk(res.Violation.path)
	if err != nil || states[len(states)-1] != states[res.Violation.Cycle-1] {
		t.Fatalf("not a lasso: %v %v", states, err)
	}
	// Without any fair action every cycle is admissible.
	sp := loopSpec(0, 1)
	sp.Fairness = nil
	res = mustCheck(t, sp, Options{Fair: true})
	if res.Outcome != Violated || res.Violation.Cycle == 0 {
		t.Fatalf("no fairness: %v", res.Outcome)
	}
	if _, err := Check(loopSpec(0), Options{Fair: true, Strategy: Random}); err == nil {
		t.Fatal("fair with random accepted")
	}
}

// flipper: a node flips a bit on a timer forever; the workload's Stop ends it.
func flipper(n *scripted, in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start, sim.Restart:
		out.SetTimer("flip", time.Second)
	case sim.Timeout:
		if n.Count >= 0 {
			n.Count = 1 - n.Count
			out.SetTimer("flip", time.Second)
		}
	case sim.Receive:
		n.Count = -1 // stopped
		out.Store("stopped", true)
		out.CancelTimer("flip")
	}
}

func stopped(s *State) bool { _, ok := s.Stable(0).Peek("stopped"); return ok }

func TestFairActorCycles(t *testing.T) {
	sys := &Actors{Nodes: []sim.NodeSpec{node("f", flipper)}, Inject: []Injection{{To: 0, Msg: msg{}}},
		Properties: []Property[*State]{Eventually("stopped", stopped)}}
	// The injection is fair: the flip cycle cannot go on forever without it.
	res := mustCheck(t, sys, Options{Fair: true})
	if res.Outcome != Complete || res.Properties[1].Status != Holds {
		t.Fatalf("%v %+v", res.Outcome, res.Violation)
	}
	// With a crash, the injection may be lost while the node is down; after the
	// (fair) restart the node flips forever: a fair cycle without "stopped".
	sys.Crashes = Crashes{Budget: 1}
	for _, w := range []int{1, 2} {
		res = mustCheck(t, sys, Options{Fair: true, Workers: w})
		if res.Outcome != Violated || res.Violation.Name != "stopped" || res.Violation.Cycle == 0 {
			t.Fatalf("workers %d: %v %+v", w, res.Outcome, res.Violation)
		}
	}
	var buf bytes.Buffer
	hdr := TraceHeader{Format: sim.TraceFormat, Engine: TraceEngine, Property: "stopped", Kind: EventuallyKind, Cycle: res.Violation.Cycle}
	if err := res.WriteTrace(&buf, res.Violation, hdr); err != nil {
		t.Fatal(err)
	}
	tr := buf.String()
	for _, want := range []string{`"ev":"crash"`, `"ev":"lost","node":"f","from":"env"`, `"ev":"restart"`, `"ev":"timer"`, "a fair cycle back to state"} {
		if !strings.Contains(tr, want) {
			t.Fatalf("trace lacks %s:\n%s", want, tr)
		}
	}
	again, err := Replay(sys, buf.Bytes())
	if err != nil || !bytes.Equal(again, buf.Bytes()) {
		t.Fatalf("replay: %v\n%s", err, again)
	}
	// Replay re-checks the cycle from the header's mark: without it the re-executed
	// path is not a violation, and the footer differs from the file's.
	unmarked := bytes.Replace(buf.Bytes(), []byte(`,"cycle":`), []byte(`,"nocycle":`), 1)
	again, err = Replay(sys, unmarked)
	if err != nil || bytes.Contains(again, []byte("fair cycle back")) || !bytes.Contains(again, []byte(`"end":"eventually stopped is not violated`)) {
		t.Fatalf("replay without the mark: %v\n%s", err, again)
	}
	// Crash-stop: no restart, so the cycle is gone... and so is every path that
	// stops: a down node that lost its input is a terminal state without "stopped".
	sys.Crashes.NoRestart = true
	res = mustCheck(t, sys, Options{})
	if res.Outcome != Violated || res.Violation.Cycle != 0 {
		t.Fatalf("crash-stop: %v %+v", res.Outcome, res.Violation)
	}
}

// TestFairRestart: restarts are fair. Node w finishes its work on a timer; it may
// crash first (budget 1) while node f flips forever. Under weak fairness w restarts
// and finishes, so "done" holds on every fair path; were restart not fair, "f flips
// forever while w stays down" would be an admissible cycle.
func TestFairRestart(t *testing.T) {
	worker := func(n *scripted, in sim.Input, out *sim.Outbox) {
		switch in.Kind {
		case sim.Start:
			out.SetTimer("work", time.Second)
		case sim.Restart:
			if _, done := in.Stable.Get("done"); !done {
				out.SetTimer("work", time.Second)
			}
		case sim.Timeout:
			out.Store("done", true)
		}
	}
	done := func(s *State) bool { _, ok := s.Stable(1).Peek("done"); return ok }
	sys := &Actors{Nodes: []sim.NodeSpec{node("f", flipper), node("w", worker)},
		Crashes:    Crashes{Budget: 1, Nodes: []sim.NodeID{1}},
		Properties: []Property[*State]{Eventually("done", done)}}
	res := mustCheck(t, sys, Options{Fair: true})
	if res.Outcome != Complete || res.Properties[1].Status != Holds {
		t.Fatalf("%v %+v", res.Outcome, res.Violation)
	}
	// Crash-stop: w may stay down forever, and the flip cycle shows it.
	sys.Crashes.NoRestart = true
	res = mustCheck(t, sys, Options{Fair: true})
	if res.Outcome != Violated || res.Violation.Name != "done" || res.Violation.Cycle == 0 {
		t.Fatalf("crash-stop: %v %+v", res.Outcome, res.Violation)
	}
}

// TestFairUnorderedDeliveryPerMessage: with unordered links, weak fairness is per
// message, not per link. a sends msg 0 once and keeps one msg 1 in flight on the same
// link (b acks each 1, a sends the next). Delivering the 1s forever would be fair to
// the link but not to msg 0, which stays deliverable: every fair path delivers it.
func TestFairUnorderedDeliveryPerMessage(t *testing.T) {
	a := func(n *scripted, in sim.Input, out *sim.Outbox) {
		switch {
		case in.Kind == sim.Start:
			out.Send(1, msg{N: 0})
			out.Send(1, msg{N: 1})
		case in.Kind == sim.Receive:
			out.Send(1, msg{N: 1})
		}
	}
	b := func(n *scripted, in sim.Input, out *sim.Outbox) {
		if in.Kind == sim.Receive {
			if in.Msg.(msg).N == 0 {
				out.Store("got0", true)
			} else {
				out.Send(0, otherMsg{})
			}
		}
	}
	got0 := func(s *State) bool { _, ok := s.Stable(1).Peek("got0"); return ok }
	sys := &Actors{Nodes: []sim.NodeSpec{node("a", a), node("b", b)}, Network: Network{Unordered: true},
		Properties: []Property[*State]{Eventually("b got 0", got0)}}
	for _, w := range []int{1, 2} {
		res := mustCheck(t, sys, Options{Fair: true, Workers: w})
		if res.Outcome != Complete || res.Properties[1].Status != Holds {
			t.Fatalf("workers %d: %v %+v", w, res.Outcome, res.Violation)
		}
	}
}
