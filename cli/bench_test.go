package cli

import (
	"strings"
	"testing"
	"time"
)

func result(ns time.Duration, allocs uint64) testing.BenchmarkResult {
	return testing.BenchmarkResult{N: 1, T: ns, MemAllocs: allocs}
}

func TestBenchGoals(t *testing.T) {
	for _, b := range benches {
		if _, ok := benchGoals[b.name]; !ok {
			t.Errorf("benchmark %s has no goal", b.name)
		}
	}
	for _, c := range []struct {
		goal     benchGoal
		r, ref   testing.BenchmarkResult
		met      bool
		contains string
	}{
		{benchGoals["Kernel"], result(30, 0), result(10, 0), true, "met"},
		{benchGoals["Kernel"], result(31, 0), result(10, 0), false, "3.10x, want <= 3x"},
		{benchGoals["Kernel"], result(20, 1), result(10, 0), false, "1 allocs/op, want <= 0"},
		{benchGoals["TwoPhase7"], result(10, 9), result(10, 0), false, "1.00x, want < 1x"},
		{benchGoals["TwoPhase7"], result(9, 9), result(10, 0), true, "met"},
		{benchGoals["Linearizability"], result(3*time.Second, 9), result(time.Second, 0), false, "3s/op, want < 2s"},
	} {
		met, why := c.goal.judge(c.r, c.ref)
		if met != c.met || !strings.Contains(why, c.contains) {
			t.Errorf("%+v on %v against %v: %v %q", c.goal, c.r, c.ref, met, why)
		}
	}
}

// simrun bench says per benchmark whether its target was met, and --strict exits 1
// when one was not (the measurements are replaced: only the verdicts are tested).
func TestBenchSaysMetOrNot(t *testing.T) {
	defer func(f func(func(*testing.B)) testing.BenchmarkResult) { runBenchmark = f }(runBenchmark)
	calls := 0
	runBenchmark = func(func(*testing.B)) testing.BenchmarkResult {
		calls++
		if calls == 1 {
			return result(40, 0) // Kernel: 4x its reference
		}
		return result(10, 0)
	}
	code, out, errs := cli(t, "bench", "--run", "^Kernel$")
	if code != 0 || !strings.Contains(out, "not met: 4.00x, want <= 3x") || !strings.Contains(out, "0 of 1 targets met") {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	calls = 0
	if code, out, errs = cli(t, "bench", "--run", "^Kernel$", "--strict"); code != 1 || !strings.Contains(errs, "1 benchmark missed its target: [Kernel]") {
		t.Fatalf("--strict: exit %d:\n%s%s", code, out, errs)
	}
	calls = 1 // every measurement equal: 1x, met
	if code, out, errs = cli(t, "bench", "--run", "^Kernel$", "--strict"); code != 0 || !strings.Contains(out, " met\n") || !strings.Contains(out, "1 of 1 targets met") {
		t.Fatalf("--strict, met: exit %d:\n%s%s", code, out, errs)
	}
	oneLineErr(t, "no benchmark matches", "bench", "--run", "zz9")
}
