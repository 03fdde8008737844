package model

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

// peterson is Peterson's mutual exclusion for two processes. pc: 0 idle, 1 flag set,
// 2 turn given away (waiting), 3 critical section. Process 0 may stay idle forever (its
// "want" step is in no fairness class); every other step of process i is in class i.
type peterson struct {
	pc   [2]uint8
	flag [2]bool
	turn uint8
}

func petersonSpec() *Spec[peterson] {
	return &Spec[peterson]{
		Name: "peterson",
		Init: func() []peterson { return []peterson{{}} },
		Next: func(s peterson, emit func(Action, peterson)) {
			for i := range 2 {
				t, j := s, 1-i
				switch s.pc[i] {
				case 0:
					t.flag[i], t.pc[i] = true, 1
				case 1:
					t.turn, t.pc[i] = uint8(j), 2
				case 2:
					if s.flag[j] && s.turn != uint8(i) {
						continue // waits
					}
					t.pc[i] = 3
				case 3:
					t.flag[i], t.pc[i] = false, 0
				}
				emit(Action(i*4+int(s.pc[i])), t)
			}
		},
		Fingerprint: func(s peterson) uint64 {
			v := uint64(s.pc[0]) | uint64(s.pc[1])<<2 | uint64(s.turn)<<4
			for i, f := range s.flag {
				if f {
					v |= 1 << (5 + i)
				}
			}
			return sim.Mix64(v + 1)
		},
		Fairness: func(s peterson, a Action) (uint64, bool) {
			proc, step := int(a)/4, int(a)%4
			if proc == 0 && step == 0 {
				return 0, false // process 0 may stay idle forever
			}
			return uint64(proc) + 1, true
		},
		Properties: []Property[peterson]{
			Always("mutual exclusion", func(s peterson) bool { return s.pc[0] != 3 || s.pc[1] != 3 }),
			Eventually("process 1 enters", func(s peterson) bool { return s.pc[1] == 3 }),
		},
	}
}

// Issue 14, item 1: "process 1 eventually enters its critical section" is false
// without fairness (process 0 may run forever while process 1 never moves) and true
// under weak fairness. It used to be reported holding without fairness, because
// eventually was checked on maximal finite paths only, and Peterson has none.
func TestPetersonLivenessNeedsFairness(t *testing.T) {
	for _, o := range []Options{{}, {Strategy: DFS}, {Workers: 2}} {
		res := mustCheck(t, petersonSpec(), o)
		pr := res.Properties[1]
		if res.Outcome != Violated || pr.Status != Failed || pr.Cycle == 0 || res.Fair {
			t.Fatalf("%+v without fairness: outcome %v, %s %v cycle %d", o, res.Outcome, pr.Name, pr.Status, pr.Cycle)
		}
		// The system's count, whatever the eventually-property (TLC's convention).
		if res.Distinct != 20 || !res.LivenessChecked {
			t.Fatalf("%+v: %d distinct states, want 20", o, res.Distinct)
		}
		// The lasso replays, and replay re-checks it as a cycle without fairness.
		var buf bytes.Buffer
		hdr := TraceHeader{Format: sim.TraceFormat, Engine: TraceEngine, Property: pr.Name, Kind: EventuallyKind, Cycle: pr.Cycle, Fairness: "none"}
		if err := res.WriteTrace(&buf, pr, hdr); err != nil {
			t.Fatal(err)
		}
		out, err := Replay(petersonSpec(), buf.Bytes())
		if err != nil || !bytes.Equal(out, buf.Bytes()) {
			t.Fatalf("replay: %v\n%s\nvs\n%s", err, out, buf.Bytes())
		}
		if !strings.Contains(buf.String(), "a cycle back to state") {
			t.Fatalf("trace end does not name the cycle:\n%s", buf.String())
		}
		// Replayed under weak fairness (an old header), the same lasso is not fair:
		// process 1 stays enabled and never moves.
		hdr.Fairness = ""
		buf.Reset()
		_ = res.WriteTrace(&buf, pr, hdr)
		out, _ = Replay(petersonSpec(), buf.Bytes())
		if !bytes.Contains(out, []byte("not a fair cycle")) {
			t.Fatalf("an unfair lasso re-checked under weak fairness should not be a violation:\n%s", out)
		}
	}
	for _, o := range []Options{{Fair: true}, {Fair: true, Strategy: DFS}, {Fair: true, Workers: 2}} {
		res := mustCheck(t, petersonSpec(), o)
		if res.Outcome != Complete || res.Properties[1].Status != Holds || res.Distinct != 20 {
			t.Fatalf("%+v under weak fairness: %v %v, %d distinct", o, res.Outcome, res.Properties[1].Status, res.Distinct)
		}
	}
}

// A bound or sampling never lets an eventually-property hold.
func TestLivenessUnknownWhenIncomplete(t *testing.T) {
	for _, o := range []Options{{MaxStates: 5, Fair: true}, {MaxDepth: 3, Fair: true}, {Strategy: Random, Seed: 1, Walks: 20, MaxDepth: 30}} {
		res := mustCheck(t, petersonSpec(), o)
		if st := res.Properties[1].Status; st != Unknown {
			t.Fatalf("%+v: eventually is %v, want unknown", o, st)
		}
		if res.Outcome == Complete {
			t.Fatalf("%+v: outcome complete", o)
		}
	}
}

// A Boundary that cuts the search before an eventually-predicate held leaves it
// unknown (the cut paths go on unseen), never holding; a cut after it held does not.
func TestEventuallyBoundaryIsUnknown(t *testing.T) {
	line := func(bound int) *Spec[int] {
		sp := &Spec[int]{
			Name: "line",
			Init: func() []int { return []int{0} },
			Next: func(s int, emit func(Action, int)) {
				if s < 9 {
					emit(0, s+1)
				}
			},
			Fingerprint: func(s int) uint64 { return sim.Mix64(uint64(s) + 1) },
			Injective:   true,
			Properties:  []Property[int]{Eventually("reaches 5", func(s int) bool { return s == 5 })},
		}
		if bound > 0 {
			sp.Boundary = func(s int) bool { return s < bound }
		}
		return sp
	}
	for _, c := range []struct {
		bound int
		want  Status
	}{{0, Holds}, {3, Unknown}, {7, Holds}} {
		res := mustCheck(t, line(c.bound), Options{})
		pr := res.Properties[0]
		if pr.Status != c.want {
			t.Errorf("boundary %d: %s, want %s (%s)", c.bound, pr.Status, c.want, pr.Why)
		}
		if c.want == Unknown && !strings.Contains(pr.Why, "1 states outside the boundary") {
			t.Errorf("boundary %d: why = %q", c.bound, pr.Why)
		}
	}
}
