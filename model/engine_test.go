package model

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

// grid is a small plain spec: states (x, y) in [0,n)², moves +1 on x or y, and a
// self-loop everywhere. Reachable: n² states; total = 1 + Σ successors.
func grid(n int) *Spec[[2]int] {
	return &Spec[[2]int]{
		Name: "grid",
		Init: func() [][2]int { return [][2]int{{0, 0}} },
		Next: func(s [2]int, emit func(Action, [2]int)) {
			emit(0, s) // self-loop
			if s[0]+1 < n {
				emit(1, [2]int{s[0] + 1, s[1]})
			}
			if s[1]+1 < n {
				emit(2, [2]int{s[0], s[1] + 1})
			}
		},
		Fingerprint: func(s [2]int) uint64 { return sim.Mix64(uint64(s[0])<<32 | uint64(s[1]) + 1) },
		Injective:   true,
		ActionName:  func(a Action) string { return []string{"stay", "right", "up"}[a] },
	}
}

func gridTotal(n int) int64 {
	// every state has a self-loop; the right/up moves: 2·n·(n-1)
	return 1 + int64(n*n) + int64(2*n*(n-1))
}

func mustCheck(t *testing.T, sys System, o Options) *Result {
	t.Helper()
	res, err := Check(sys, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestGridCountsAllStrategies(t *testing.T) {
	for _, n := range []int{1, 2, 7, 40} {
		for _, o := range []Options{{}, {Workers: 2}, {Workers: 3}, {Strategy: DFS}} {
			res := mustCheck(t, grid(n), o)
			if res.Outcome != Complete || res.Distinct != int64(n*n) || res.Total != gridTotal(n) {
				t.Fatalf("n=%d %+v: outcome %v distinct %d total %d, want complete %d %d", n, o, res.Outcome, res.Distinct, res.Total, n*n, gridTotal(n))
			}
			wantDepth := 2*n - 1 // BFS levels; DFS's longest path is the same here
			if res.Depth != wantDepth {
				t.Fatalf("n=%d %+v: depth %d, want %d", n, o, res.Depth, wantDepth)
			}
			if res.Collision != 0 {
				t.Fatalf("injective fingerprint but collision estimate %g", res.Collision)
			}
		}
	}
}

func TestAlwaysViolationShortestPath(t *testing.T) {
	for _, w := range []int{1, 2} {
		sp := grid(10)
		sp.Properties = []Property[[2]int]{Always("x+y<7", func(s [2]int) bool { return s[0]+s[1] < 7 })}
		res := mustCheck(t, sp, Options{Workers: w})
		if res.Outcome != Violated || res.Violation == nil || res.Violation.Name != "x+y<7" {
			t.Fatalf("workers %d: outcome %v violation %v", w, res.Outcome, res.Violation)
		}
		if res.Violation.Depth != 8 { // 7 moves from (0,0)
			t.Fatalf("workers %d: counterexample depth %d, want 8", w, res.Violation.Depth)
		}
		steps, err := res.Steps(res.Violation)
		if err != nil || len(steps) != 8 {
			t.Fatalf("steps %v %v", steps, err)
		}
	}
	// DFS finds one too (not necessarily shortest) and stops.
	sp := grid(10)
	sp.Properties = []Property[[2]int]{Always("x+y<7", func(s [2]int) bool { return s[0]+s[1] < 7 })}
	res := mustCheck(t, sp, Options{Strategy: DFS})
	if res.Outcome != Violated || res.Violation.Depth < 8 {
		t.Fatalf("dfs: %v depth %d", res.Outcome, res.Violation.Depth)
	}
}

func TestSometimes(t *testing.T) {
	sp := grid(6)
	sp.Properties = []Property[[2]int]{
		Sometimes("corner", func(s [2]int) bool { return s == [2]int{5, 5} }),
		Sometimes("outside", func(s [2]int) bool { return s[0] > 5 }),
	}
	res := mustCheck(t, sp, Options{})
	if res.Outcome != Violated || res.Violation.Name != "outside" || res.Violation.HasTrace {
		t.Fatalf("outcome %v violation %+v", res.Outcome, res.Violation)
	}
	if p := res.Properties[0]; p.Status != Witnessed || p.Depth != 11 {
		t.Fatalf("corner: %v depth %d, want witnessed at 11", p.Status, p.Depth)
	}
	if p := res.Properties[1]; p.Status != Failed {
		t.Fatalf("outside: %v", p.Status)
	}
}

// branch: from 0 go to 1 (then 3, terminal) or 2 (terminal) or 4 → 5 → 4 (a cycle).
func branch(props ...Property[int]) *Spec[int] {
	edges := map[int][]int{0: {1, 2, 4}, 1: {3}, 4: {5}, 5: {4}}
	return &Spec[int]{
		Name: "branch",
		Init: func() []int { return []int{0} },
		Next: func(s int, emit func(Action, int)) {
			for _, t := range edges[s] {
				emit(Action(t), t)
			}
		},
		Fingerprint: func(s int) uint64 { return sim.Mix64(uint64(s) + 1) },
		Properties:  props,
	}
}

func TestEventuallyFinitePaths(t *testing.T) {
	// Every terminal path passes 1 or 2? 0→2 ends at 2 without visiting 1 or 3.
	res := mustCheck(t, branch(Eventually("reach 3", func(s int) bool { return s == 3 })), Options{})
	if res.Outcome != Violated || res.Violation.Name != "reach 3" || res.Violation.Depth != 2 {
		t.Fatalf("outcome %v violation %+v", res.Outcome, res.Violation)
	}
	// Both terminal paths pass a state that is 1, 2 or 3, but the infinite path
	// 0→4→5→4… never does: without fairness every cycle is admissible, so the
	// property fails with a lasso (it used to be reported holding, having been
	// checked on finite paths only). The distinct count is the system's, 6.
	res = mustCheck(t, branch(Eventually("1 2 or 3", func(s int) bool { return s >= 1 && s <= 3 })), Options{})
	if res.Outcome != Violated || res.Violation.Cycle == 0 || res.Distinct != 6 || !res.LivenessChecked {
		t.Fatalf("outcome %v %+v distinct %d", res.Outcome, res.Violation, res.Distinct)
	}
	// Without the cycle, it holds, on finite and infinite paths.
	res = mustCheck(t, branch(Eventually("1 2 3 or 4", func(s int) bool { return s >= 1 && s <= 4 })), Options{})
	if res.Outcome != Complete || res.Properties[0].Status != Holds || res.Distinct != 6 || res.ProductStates != 6 {
		t.Fatalf("outcome %v %v distinct %d product %d", res.Outcome, res.Properties[0].Status, res.Distinct, res.ProductStates)
	}
	for _, o := range []Options{{Strategy: DFS}, {Workers: 2}} {
		res = mustCheck(t, branch(Eventually("reach 3", func(s int) bool { return s == 3 })), o)
		if res.Outcome != Violated || res.Violation.Name != "reach 3" {
			t.Fatalf("%+v: outcome %v", o, res.Outcome)
		}
	}
	res = mustCheck(t, branch(Eventually("reach 3", func(s int) bool { return s == 3 })), Options{Strategy: Random, Seed: 1, Walks: 50})
	if res.Outcome != Violated {
		t.Fatalf("random: outcome %v", res.Outcome)
	}
}

// The eventually bit is part of the explored state: a state reached both with and
// without the predicate having held is explored twice, so a violation hidden behind a
// state first reached through a satisfying path is still found.
func TestEventuallyProduct(t *testing.T) {
	// 0 → 1 (P) → 2 → 3 (terminal); 0 → 2 directly. BFS reaches 2 first from 0 with P
	// unseen: violation via 0,2,3. Swap the order so 2 is first reached via 1.
	edges := map[int][]int{0: {1, 2}, 1: {2}, 2: {3}}
	sp := &Spec[int]{
		Name: "diamond",
		Init: func() []int { return []int{0} },
		Next: func(s int, emit func(Action, int)) {
			for _, t := range edges[s] {
				emit(Action(t), t)
			}
		},
		Fingerprint: func(s int) uint64 { return sim.Mix64(uint64(s) + 1) },
		Properties:  []Property[int]{Eventually("visit 1", func(s int) bool { return s == 1 })},
	}
	for _, o := range []Options{{}, {Strategy: DFS}} {
		res := mustCheck(t, sp, o)
		if res.Outcome != Violated || res.Violation.Depth != 3 {
			t.Fatalf("%+v: outcome %v %+v", o, res.Outcome, res.Violation)
		}
		// 0, 1, 2(P), 3(P), 2(¬P), 3(¬P): 6 product states.
		if res.Outcome == Violated && o.Strategy == DFS && res.Distinct > 6 {
			t.Fatalf("dfs explored %d product states", res.Distinct)
		}
	}
}

func TestBounds(t *testing.T) {
	for _, w := range []int{1, 2} {
		res := mustCheck(t, grid(50), Options{Workers: w, MaxStates: 100})
		if res.Outcome != BoundReached || res.Bound != "max-states" || res.Distinct > 100 {
			t.Fatalf("workers %d: %v %q distinct %d", w, res.Outcome, res.Bound, res.Distinct)
		}
		if res.Distinct != 100 {
			t.Fatalf("workers %d: stop exactly at the bound: %d", w, res.Distinct)
		}
		res = mustCheck(t, grid(50), Options{Workers: w, MaxDepth: 5})
		// levels 1..5 of a 50×50 grid: 1+2+3+4+5 states
		if res.Outcome != BoundReached || res.Bound != "max-depth" || res.Distinct != 15 || res.Depth != 5 {
			t.Fatalf("workers %d: %v %q distinct %d depth %d", w, res.Outcome, res.Bound, res.Distinct, res.Depth)
		}
		// A depth or state bound equal to the state space's depth or size cuts
		// nothing: same outcome and statistics as an unbounded search.
		full := mustCheck(t, grid(5), Options{Workers: w})
		for _, o := range []Options{{Workers: w, MaxDepth: 9}, {Workers: w, MaxStates: 25}, {Strategy: DFS, MaxDepth: 9}, {Strategy: DFS, MaxStates: 25}} {
			res = mustCheck(t, grid(5), o)
			if res.Outcome != Complete || res.Distinct != 25 || res.Total != full.Total || res.Depth != full.Depth {
				t.Fatalf("%+v: %v distinct %d total %d depth %d; unbounded: %d %d %d", o, res.Outcome, res.Distinct, res.Total, res.Depth, full.Distinct, full.Total, full.Depth)
			}
		}
	}
	res := mustCheck(t, grid(50), Options{Strategy: DFS, MaxStates: 77})
	if res.Outcome != BoundReached || res.Distinct != 77 {
		t.Fatalf("dfs: %v %d", res.Outcome, res.Distinct)
	}
	res = mustCheck(t, grid(50), Options{Strategy: DFS, MaxDepth: 10})
	if res.Outcome != BoundReached || res.Depth != 10 {
		t.Fatalf("dfs: %v depth %d", res.Outcome, res.Depth)
	}
	for _, o := range []Options{{Workers: -1}, {MaxStates: -1}, {MaxDepth: -2}, {Strategy: DFS, Workers: 2}, {Walks: 3}, {Strategy: 9}} {
		if _, err := Check(grid(2), o); err == nil {
			t.Fatalf("%+v accepted", o)
		}
	}
}

func TestBoundary(t *testing.T) {
	sp := grid(100)
	sp.Boundary = func(s [2]int) bool { return s[0] < 3 && s[1] < 3 }
	res := mustCheck(t, sp, Options{})
	// expanded: the 3×3 square; stored: the square plus its right and upper rims (3+3)
	if res.Distinct != 15 || res.Outcome != Complete {
		t.Fatalf("distinct %d outcome %v", res.Distinct, res.Outcome)
	}
}

func TestRandomDeterministic(t *testing.T) {
	sp := grid(30)
	a := mustCheck(t, sp, Options{Strategy: Random, Seed: 7, Walks: 20, MaxDepth: 40})
	b := mustCheck(t, sp, Options{Strategy: Random, Seed: 7, Walks: 20, MaxDepth: 40})
	c := mustCheck(t, sp, Options{Strategy: Random, Seed: 8, Walks: 20, MaxDepth: 40})
	if a.Outcome != Sampled || a.Distinct != b.Distinct || a.Total != b.Total || a.Depth != 40 {
		t.Fatalf("a %v %d/%d depth %d, b %d/%d", a.Outcome, a.Distinct, a.Total, a.Depth, b.Distinct, b.Total)
	}
	if a.Distinct == c.Distinct && a.Total == c.Total {
		t.Fatalf("seeds 7 and 8 explored the same: %d %d", a.Distinct, a.Total)
	}
	sp.Properties = []Property[[2]int]{Always("x<20", func(s [2]int) bool { return s[0] < 20 })}
	r := mustCheck(t, sp, Options{Strategy: Random, Seed: 7, Walks: 200, MaxDepth: 60})
	if r.Outcome != Violated {
		t.Fatalf("random missed x=20: %v", r.Outcome)
	}
	states, _, err := mustChecker(sp).walk(r.Violation.path)
	if err != nil || states[len(states)-1][0] != 20 {
		t.Fatalf("counterexample ends at %v (%v)", states[len(states)-1], err)
	}
}

func mustChecker[S any](sp *Spec[S]) *checker[S] {
	c := &checker[S]{sp: sp}
	c.setup()
	return c
}

func TestBadSystemsAreErrors(t *testing.T) {
	if _, err := Check(&Spec[int]{Name: "x"}, Options{}); err == nil {
		t.Fatal("spec without functions accepted")
	}
	sp := branch(Always("a", func(int) bool { return true }), Always("a", func(int) bool { return true }))
	if _, err := Check(sp, Options{}); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("duplicate property: %v", err)
	}
	boom := branch()
	boom.Next = func(s int, emit func(Action, int)) { panic("boom") }
	for _, o := range []Options{{}, {Workers: 2}, {Strategy: DFS}, {Strategy: Random}} {
		_, err := Check(boom, o)
		var ie *InternalError
		if !errors.As(err, &ie) || ie.Value != "boom" {
			t.Fatalf("%+v: panic in Next: %v", o, err)
		}
	}
}

func TestTraceAndReplayPlain(t *testing.T) {
	sp := grid(10)
	sp.Describe = func(s [2]int) any { return map[string]int{"x": s[0], "y": s[1]} }
	sp.Properties = []Property[[2]int]{Always("x+y below 4", func(s [2]int) bool { return s[0]+s[1] < 4 })}
	res := mustCheck(t, sp, Options{})
	var buf bytes.Buffer
	hdr := TraceHeader{Format: sim.TraceFormat, Engine: TraceEngine, Scenario: "grid", Property: "x+y below 4", Kind: AlwaysKind}
	if err := res.WriteTrace(&buf, res.Violation, hdr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1+5+1 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	if !strings.Contains(lines[1], `"ev":"init"`) || !strings.Contains(lines[2], `"kind":"right"`) || !strings.Contains(lines[6], `"end":"violation of always x+y below 4"`) {
		t.Fatalf("trace:\n%s", buf.String())
	}
	got, err := Replay(sp, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatalf("replay differs:\n%s\nvs\n%s", got, buf.Bytes())
	}
	// A changed model no longer reproduces the trace: the replay departs at the step.
	sp2 := grid(10)
	sp2.Describe = func(s [2]int) any { return map[string]int{"x": s[1], "y": s[0]} }
	sp2.Properties = sp.Properties
	got, err = Replay(sp2, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, buf.Bytes()) {
		t.Fatal("replay of a changed model matched")
	}
	if !bytes.HasPrefix(got, []byte(lines[0]+"\n")) {
		t.Fatal("replay does not keep the header")
	}
}

func TestTableGrowthKeepsEverything(t *testing.T) {
	alloc := newSlotAlloc()
	defer alloc.close()
	tab := newTable(0, alloc)
	r := sim.NewRand(3)
	var fps []uint64
	for i := 0; i < 3_000_000; i++ {
		fp := r.Uint64()
		if i%1000 == 0 {
			fp = uint64(i) // small values, and 0 once
		}
		fps = append(fps, fp)
		if !tab.insert(fp) {
			t.Fatalf("fresh fp %d reported present", fp)
		}
		tab.count.Add(1)
		if tab.needsGrowth() {
			tab = tab.grown()
		}
	}
	for _, fp := range fps {
		if tab.insert(fp) || !tab.contains(fp) {
			t.Fatalf("fp %d lost", fp)
		}
	}
	if bpS := float64(tab.bytes()) / float64(len(fps)); bpS > 16 {
		t.Fatalf("%.1f bytes per state", bpS)
	}
	if tab.contains(12345678901) {
		t.Fatal("absent fp reported present")
	}
	tab.free()
	_ = slices.Clone(fps)
}

// Many workers on a table that must grow several times mid-level: counts stay exact
// and nothing deadlocks in the growth barrier.
func TestManyWorkersGrowth(t *testing.T) {
	// fan: the initial state has 5 000 successors (level 2, five chunks); each has 40
	// successors (level 3: 200 000 states), of which every 8th has a
	// self-loop. The jump from level 2 to 3 is far beyond the between-levels guess, so
	// the table grows in the middle of level 3, with every worker busy.
	fan := &Spec[[2]int]{
		Name: "fan",
		Init: func() [][2]int { return [][2]int{{0, 0}} },
		Next: func(s [2]int, emit func(Action, [2]int)) {
			switch s[0] {
			case 0:
				for i := 0; i < 5000; i++ {
					emit(0, [2]int{1, i})
				}
			case 1:
				for j := 0; j < 40; j++ {
					emit(1, [2]int{2, s[1]*40 + j})
				}
			case 2:
				if s[1]%8 == 0 {
					emit(2, s)
				}
			}
		},
		Fingerprint: func(s [2]int) uint64 { return sim.Mix64(uint64(s[0])<<32 | uint64(s[1]) + 1) },
	}
	for _, w := range []int{1, 2, 3, 16, 64} {
		res := mustCheck(t, fan, Options{Workers: w})
		if res.Outcome != Complete || res.Distinct != 1+5000+200000 || res.Total != 1+5000+200000+25000 || res.Depth != 3 {
			t.Fatalf("workers %d: %v %d %d %d", w, res.Outcome, res.Distinct, res.Total, res.Depth)
		}
	}
	n := 400 // narrow levels: one worker at a time, growth between levels
	for _, w := range []int{3, 64} {
		res := mustCheck(t, grid(n), Options{Workers: w})
		if res.Outcome != Complete || res.Distinct != int64(n*n) || res.Total != gridTotal(n) || res.Depth != 2*n-1 {
			t.Fatalf("workers %d: %v %d %d %d", w, res.Outcome, res.Distinct, res.Total, res.Depth)
		}
	}
}
