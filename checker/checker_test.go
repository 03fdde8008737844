package checker

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/sim"
)

// run builds a finished run from observations (kind, node, payload) at 1ms apart.
func run(obs ...sim.Observation) *Run {
	for i := range obs {
		obs[i].Index = int64(i)
		if obs[i].Time == 0 {
			obs[i].Time = sim.Time(i) * sim.Time(time.Millisecond)
		}
	}
	return &Run{
		Result:   &sim.Result{Outcome: sim.Quiescent, History: obs, Final: []sim.FinalNode{{Name: "a", Up: true}, {Name: "b", Up: true}}},
		Scenario: "test",
	}
}

func obs(node sim.NodeID, kind string, v any) sim.Observation {
	return sim.Observation{Node: node, Kind: kind, Value: v}
}

func TestEvaluateClasses(t *testing.T) {
	ok := Property{Name: "ok", Class: Safety, Check: func(*Run) error { return nil }}
	bad := Property{Name: "bad", Class: Safety, Check: func(*Run) error { return errors.New("broken") }}
	late := Property{Name: "late", Class: Liveness, NeedsCompleteRun: true, Check: func(*Run) error { return errors.New("too slow") }}
	undecided := Property{Name: "undecided", Class: Safety, Check: func(*Run) error { return Inconclusive("timed out") }}
	buggy := Property{Name: "buggy", Class: Safety, Check: func(*Run) error { panic("checker bug") }}

	r := run()
	vs := Evaluate(r, []Property{ok, bad, late, undecided, buggy})
	want := []Class{OK, Safety, Liveness, Unknown, Unknown}
	for i, v := range vs {
		if v.Class != want[i] {
			t.Errorf("%s: class %s, want %s", v.Property, v.Class, want[i])
		}
	}
	if w := Worst(vs); w.Class != Safety || w.Property != "bad" {
		t.Errorf("worst %v", w)
	}
	if !strings.Contains(vs[4].Detail, "checker bug") {
		t.Errorf("checker panic detail %q", vs[4].Detail)
	}

	// A protocol panic: a Crash verdict first, and properties needing a complete run
	// are skipped (never reported ok).
	r = run()
	r.Outcome, r.Panic = sim.Panicked, &sim.PanicError{Node: 1, Input: sim.Receive, Value: "boom"}
	vs = Evaluate(r, []Property{ok, late})
	if len(vs) != 2 || vs[0].Class != Crash || !strings.Contains(vs[0].Detail, "boom") || vs[1].Property != "ok" {
		t.Errorf("panicked run: %v", vs)
	}
	if Worst(vs).Class != Crash {
		t.Errorf("worst of a panicked run: %v", Worst(vs))
	}

	// A bound reached: a Bound verdict, liveness skipped.
	r = run()
	r.Outcome = sim.EventBound
	vs = Evaluate(r, []Property{late})
	if len(vs) != 1 || vs[0].Class != Bound {
		t.Errorf("bounded run: %v", vs)
	}
	if Worst(nil).Class != OK {
		t.Error("worst of no verdicts is not ok")
	}
}

func TestClassText(t *testing.T) {
	for _, c := range Classes {
		b, _ := c.MarshalText()
		var d Class
		if err := d.UnmarshalText(b); err != nil || d != c {
			t.Errorf("%s round-trips to %s (%v)", c, d, err)
		}
	}
	var d Class
	if err := d.UnmarshalText([]byte("fine")); err == nil {
		t.Error("unknown class accepted")
	}
}

// TestInvariantBrokenAtOneEvent: the verdict names the one observation that breaks
// the invariant.
func TestInvariantBrokenAtOneEvent(t *testing.T) {
	nonNegative := Invariant("non-negative", func(o sim.Observation) error {
		if v := o.Value.(int); v < 0 {
			return fmt.Errorf("balance %d", v)
		}
		return nil
	}, "balance")
	good := run(obs(0, "balance", 5), obs(1, "other", "x"), obs(0, "balance", 0))
	bad := run(obs(0, "balance", 5), obs(1, "balance", 3), obs(1, "balance", -2), obs(0, "balance", 1))
	if vs := Evaluate(good, []Property{nonNegative}); vs[0].Class != OK {
		t.Fatalf("good history: %v", vs[0])
	}
	v := Evaluate(bad, []Property{nonNegative})[0]
	if v.Class != Safety || !strings.Contains(v.Detail, "balance -2") || !strings.Contains(v.Detail, "#2 at 2ms on b") {
		t.Fatalf("bad history: %v", v)
	}
}

// TestAlways: an invariant over the history so far (at most one holder at a time),
// broken at exactly one event.
func TestAlways(t *testing.T) {
	mutex := Always("mutex", func(*Run) map[string]bool { return map[string]bool{} },
		func(held map[string]bool, o sim.Observation) (map[string]bool, error) {
			who := o.Value.(string)
			switch o.Kind {
			case "acquire":
				if len(held) > 0 {
					return held, fmt.Errorf("%s acquired while held", who)
				}
				held[who] = true
			case "release":
				delete(held, who)
			}
			return held, nil
		})
	good := run(obs(0, "acquire", "a"), obs(0, "release", "a"), obs(1, "acquire", "b"))
	bad := run(obs(0, "acquire", "a"), obs(1, "acquire", "b"), obs(0, "release", "a"))
	vs := Evaluate(good, []Property{mutex})
	vs = append(vs, Evaluate(good, []Property{mutex})...) // a fresh state per run
	for _, v := range vs {
		if v.Class != OK {
			t.Fatalf("good history: %v", v)
		}
	}
	v := Evaluate(bad, []Property{mutex})[0]
	if v.Class != Safety || !strings.Contains(v.Detail, "b acquired while held") || !strings.Contains(v.Detail, "#1 ") {
		t.Fatalf("bad history: %v", v)
	}
}

type counterNode struct{ N int }

func (*counterNode) Handle(sim.Input, *sim.Outbox) {}

func TestFinalStates(t *testing.T) {
	prop := FinalStates("bounded", func(name string, n *counterNode) error {
		if n.N > 10 {
			return fmt.Errorf("N=%d", n.N)
		}
		return nil
	})
	r := run()
	r.Final = []sim.FinalNode{{Name: "a", Up: true, State: &counterNode{N: 3}}, {Name: "b", Up: false}, {Name: "c", Up: true, State: &counterNode{N: 11}}}
	v := Evaluate(r, []Property{prop})[0]
	if v.Class != Safety || !strings.Contains(v.Detail, "final state of c: N=11") {
		t.Fatalf("got %v", v)
	}
	r.Final[2].State = &counterNode{N: 10}
	if v := Evaluate(r, []Property{prop})[0]; v.Class != OK {
		t.Fatalf("got %v", v)
	}
}

type call struct {
	Client int
	Seq    int
	In     RegisterInput[int]
}

type ret struct {
	Client, Seq, Value int
}

var regOps = CallReturn[call, ret]{
	Call: "call", Return: "return",
	CallID:   func(c call) any { return [2]int{c.Client, c.Seq} },
	ReturnID: func(r ret) any { return [2]int{r.Client, r.Seq} },
	Input:    func(c call) any { return c.In },
	Output: func(c call, r ret) any {
		if c.In.Op == RegRead {
			return r.Value
		}
		return true
	},
}

func TestOpsAdapter(t *testing.T) {
	w := RegisterInput[int]{Op: RegWrite, Value: 1}
	rd := RegisterInput[int]{Op: RegRead}
	h := run(
		obs(0, "call", call{0, 1, w}),
		obs(1, "call", call{1, 1, rd}),
		obs(1, "return", ret{1, 1, 0}),
		obs(0, "noise", 3),
		obs(1, "call", call{1, 2, rd}),
		obs(1, "return", ret{1, 2, 1}),
	).History()
	ops, err := Ops(h, regOps)
	if err != nil {
		t.Fatal(err)
	}
	want := []Operation{
		{Client: 0, Input: w, Call: 0, Pending: true},
		{Client: 1, Input: rd, Output: 0, Call: 1, Return: 2},
		{Client: 1, Input: rd, Output: 1, Call: 4, Return: 5},
	}
	if fmt.Sprint(ops) != fmt.Sprint(want) {
		t.Fatalf("ops\n%v\nwant\n%v", ops, want)
	}
	// The pending write explains the second read.
	if res := CheckLinearizable(Register(0), ops, time.Second); res.Result != porcupine.Ok {
		t.Fatalf("pending write: %s", res.Result)
	}
	for _, c := range []struct {
		name string
		h    History
		want string
	}{
		{"return without call", run(obs(0, "return", ret{0, 1, 0})).History(), "without a call"},
		{"second return", run(obs(0, "call", call{0, 1, rd}), obs(0, "return", ret{0, 1, 0}), obs(0, "return", ret{0, 1, 0})).History(), "second return"},
		{"repeated call", run(obs(0, "call", call{0, 1, rd}), obs(0, "call", call{0, 1, rd})).History(), "second call"},
		{"wrong payload", run(obs(0, "call", "oops")).History(), "payload is string"},
	} {
		if _, err := Ops(c.h, regOps); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestLinearizableVisualization: a non-linearizable register history is a safety
// violation, and porcupine's visualization is written into the artifact directory.
func TestLinearizableVisualization(t *testing.T) {
	w := RegisterInput[int]{Op: RegWrite, Value: 1}
	rd := RegisterInput[int]{Op: RegRead}
	// c0 writes 1 (slowly); c1 reads 1, then c2 reads 0: not linearizable.
	bad := run(
		obs(0, "call", call{0, 1, w}),
		obs(1, "call", call{1, 1, rd}),
		obs(1, "return", ret{1, 1, 1}),
		obs(2, "call", call{2, 1, rd}),
		obs(2, "return", ret{2, 1, 0}),
		obs(0, "return", ret{0, 1, 0}),
	)
	bad.ArtifactDir = t.TempDir()
	prop := Linearizable("register", Register(0), func(r *Run) ([]Operation, error) { return Ops(r.History(), regOps) }, 0)
	v := Evaluate(bad, []Property{prop})[0]
	if v.Class != Safety || v.Artifact == "" {
		t.Fatalf("got %+v", v)
	}
	html, err := os.ReadFile(v.Artifact)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "<html") || !strings.Contains(string(html), "read() → 0") {
		t.Errorf("visualization %s lacks the history (%d bytes)", v.Artifact, len(html))
	}
	// Without an artifact directory: the same verdict, no file.
	bad.ArtifactDir = ""
	if v := Evaluate(bad, []Property{prop})[0]; v.Class != Safety || v.Artifact != "" {
		t.Fatalf("got %+v", v)
	}
	// The linearizable variant (c2 reads 1) passes.
	good := run(
		obs(0, "call", call{0, 1, w}),
		obs(1, "call", call{1, 1, rd}),
		obs(1, "return", ret{1, 1, 1}),
		obs(2, "call", call{2, 1, rd}),
		obs(2, "return", ret{2, 1, 1}),
		obs(0, "return", ret{0, 1, 0}),
	)
	if v := Evaluate(good, []Property{prop})[0]; v.Class != OK || v.Artifact != "" {
		t.Fatalf("got %+v", v)
	}
	// With Visualize (a run report), a linearizable history is drawn too, and the
	// operations are kept in virtual time for the latency plot.
	good.ArtifactDir, good.Visualize = t.TempDir(), true
	v = Evaluate(good, []Property{prop})[0]
	if v.Class != OK || !strings.HasSuffix(v.Artifact, "-all.html") {
		t.Fatalf("visualize: %+v", v)
	}
	if html, err := os.ReadFile(v.Artifact); err != nil || !strings.Contains(string(html), "read() → 1") {
		t.Fatalf("visualization of a linearizable history: %v (%d bytes)", err, len(html))
	}
	spans := good.Spans()
	ms := sim.Time(time.Millisecond)
	if len(spans) != 3 || spans[0].Call != 0 || spans[0].Return != 5*ms || spans[2].Call != 3*ms || spans[2].Return != 4*ms || spans[0].Property != "register" {
		t.Fatalf("spans %+v", spans)
	}
}

// TestLinearizableTimeoutIsUnknown: a check that runs out of time is unknown, never ok.
func TestLinearizableTimeoutIsUnknown(t *testing.T) {
	slow := Register(0)
	step := slow.Step
	slow.Step = func(s, in, out any) (bool, any) {
		time.Sleep(20 * time.Millisecond)
		return step(s, in, out)
	}
	r := run()
	var ops []Operation
	for i := range 20 {
		ops = append(ops, op(i, 0, 100, RegisterInput[int]{Op: RegWrite, Value: i}, true))
	}
	prop := Linearizable("slow", slow, func(*Run) ([]Operation, error) { return ops, nil }, time.Millisecond)
	v := Evaluate(r, []Property{prop})[0]
	if v.Class != Unknown || !strings.Contains(v.Detail, "timed out") {
		t.Fatalf("got %+v", v)
	}
}
