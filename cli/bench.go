package cli

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios/scenariotest"
	"github.com/simrun-dev/simrun/sim/simbench"
)

// benchPair is a benchmark measured beside its reference in the same run, reported as a
// ratio (these machines are shared and noisy: only ratios mean anything).
type benchPair struct {
	name      string
	bench     func(*testing.B)
	reference string
	ref       func(*testing.B)
	target    string // the ratio the project aims for, for the reader
	// search runs both under a model check's garbage-collector setting (searchGC), as
	// simrun check runs them.
	search bool
}

var benches []benchPair

func registerBench(p benchPair) { benches = append(benches, p) }

// benchGoal is a benchmark's target as numbers (benchPair.target says it in words):
// the bound on the ratio to its reference, on allocations per operation, or on the
// time per operation; a zero field is no bound (maxAllocs: -1).
type benchGoal struct {
	maxRatio  float64
	below     bool // the ratio must be below maxRatio, not at most
	maxAllocs int64
	maxTime   time.Duration
}

// benchGoals are the targets of the registered benchmarks, by name (DESIGN.md,
// "Performance targets"). A test holds every registered benchmark to having one.
var benchGoals = map[string]benchGoal{
	"Kernel":          {maxRatio: 3, maxAllocs: 0},
	"TwoPhase7":       {maxRatio: 1, below: true, maxAllocs: -1},
	"TwoPhase7x2":     {maxRatio: 0.59, maxAllocs: -1},
	"Actors2PC":       {maxRatio: 10, maxAllocs: -1},
	"Sweep2Workers":   {maxRatio: 0.56, maxAllocs: -1},
	"Linearizability": {maxAllocs: -1, maxTime: 2 * time.Second},
}

// judge says whether a measurement meets its goal, and if not, which bound it missed.
func (g benchGoal) judge(r, ref testing.BenchmarkResult) (bool, string) {
	ratio := float64(r.NsPerOp()) / float64(max(ref.NsPerOp(), 1))
	switch {
	case g.maxRatio > 0 && g.below && ratio >= g.maxRatio:
		return false, fmt.Sprintf("not met: %.2fx, want < %.2gx", ratio, g.maxRatio)
	case g.maxRatio > 0 && ratio > g.maxRatio:
		return false, fmt.Sprintf("not met: %.2fx, want <= %.2gx", ratio, g.maxRatio)
	case g.maxAllocs >= 0 && r.AllocsPerOp() > g.maxAllocs:
		return false, fmt.Sprintf("not met: %d allocs/op, want <= %d", r.AllocsPerOp(), g.maxAllocs)
	case g.maxTime > 0 && time.Duration(r.NsPerOp()) >= g.maxTime:
		return false, fmt.Sprintf("not met: %v/op, want < %v", time.Duration(r.NsPerOp()).Round(time.Millisecond), g.maxTime)
	}
	return true, "met"
}

// runBenchmark runs one benchmark (tests replace it).
var runBenchmark = testing.Benchmark

func init() {
	registerBench(benchPair{
		name: "Kernel", bench: simbench.Kernel,
		reference: "HeapBaseline", ref: simbench.HeapBaseline,
		target: "Kernel <= 3x HeapBaseline, 0 allocs/op",
	})
	register(&command{
		name:  "bench",
		args:  "[--run REGEXP] [--strict]",
		short: "run the benchmarks, each as a ratio to a reference measured in the same run, and say which targets are met",
		long: "Each benchmark runs beside its reference (about a second each); the table gives both, their\n" +
			"ratio, the target and whether this run met it. Exit 0 whatever the numbers, unless --strict:\n" +
			"then exit 1 when a target is missed. Timings depend on the machine and its load.\n" +
			"Scale and ScaleIdle run demo/happy with 100 000 clients (30 operations each; none) on one core\n" +
			"and report wall and CPU time, peak resident memory and bytes per node, beside a reference\n" +
			"(a bare history of as many observations; a bare kernel of as many idle nodes).",
		run: cmdBench,
	})
}

func cmdBench(e *env, args []string) error {
	c := commands["bench"]
	fs := newFlags(e, c)
	filter := fs.String("run", ".", "only benchmarks whose name matches `REGEXP`")
	strict := fs.Bool("strict", false, "exit 1 when a benchmark misses its target")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := exactlyArgs(c, pos, 0); err != nil {
		return err
	}
	re, err := regexp.Compile(*filter)
	if err != nil {
		return usageErr("bench: --run: %v", err)
	}
	t := reports.NewTable("", "benchmark", "ns/op", "allocs/op", "reference", "ns/op", "allocs/op", "ratio", "target", "this run")
	var missed []string
	for _, b := range benches {
		if !re.MatchString(b.name) {
			continue
		}
		if e.tty {
			fmt.Fprintf(e.stderr, "running %s and %s...\n", b.name, b.reference)
		}
		restore := func() {}
		if b.search {
			restore = searchGC(0)
		}
		r := runBenchmark(b.bench)
		ref := runBenchmark(b.ref)
		restore()
		ratio := float64(r.NsPerOp()) / float64(max(ref.NsPerOp(), 1))
		g, ok := benchGoals[b.name]
		if !ok {
			return fmt.Errorf("bench: %s has no goal in benchGoals", b.name)
		}
		met, verdict := g.judge(r, ref)
		if !met {
			missed = append(missed, b.name)
		}
		t.Add(b.name, r.NsPerOp(), r.AllocsPerOp(), b.reference, ref.NsPerOp(), ref.AllocsPerOp(), fmt.Sprintf("%.2fx", ratio), b.target, verdict)
	}
	scale, err := scaleTable(e, re)
	if err != nil {
		return err
	}
	if len(t.Rows) == 0 && scale == nil {
		return usageErr("bench: no benchmark matches %q", *filter)
	}
	if len(t.Rows) > 0 {
		if err := t.WriteText(e.stdout); err != nil {
			return err
		}
	}
	total := len(t.Rows)
	if scale != nil {
		if len(t.Rows) > 0 {
			fmt.Fprintln(e.stdout)
		}
		if err := scale.table.WriteText(e.stdout); err != nil {
			return err
		}
		total += len(scale.table.Rows)
		missed = append(missed, scale.missed...)
	}
	fmt.Fprintf(e.stdout, "%d of %d targets met\n", total-len(missed), total)
	if *strict && len(missed) > 0 {
		return violated("bench: %d %s missed %s: %v", len(missed), plural(len(missed), "benchmark", "benchmarks"), plural(len(missed), "its target", "their targets"), missed)
	}
	return nil
}

// scaleTable runs the scale benchmarks whose names match re (nil if none does).
// scaleResult is the scale benchmarks' table and the ones that missed their target.
type scaleResult struct {
	table  *reports.Table
	missed []string
}

func scaleTable(e *env, re *regexp.Regexp) (*scaleResult, error) {
	t := reports.NewTable("", "benchmark", "nodes", "events", "wall", "cpu", "peak RSS", "bytes/node",
		"reference", "wall", "cpu", "peak RSS", "memory ratio", "cpu ratio", "target", "this run")
	var missed []string
	for _, b := range []struct {
		name   string
		ops    int
		target string
	}{
		{"Scale", scenariotest.ScaleOps, fmt.Sprintf("<= %d GiB, <= %d s on one core", scenariotest.ScaleTarget>>30, scenariotest.ScaleSeconds)},
		{"ScaleIdle", 0, fmt.Sprintf("<= %d KiB per idle node", scenariotest.ScaleIdleNode>>10)},
	} {
		if !re.MatchString(b.name) {
			continue
		}
		if e.tty {
			fmt.Fprintf(e.stderr, "running %s (%d clients, %d operations each) and its reference...\n", b.name, scenariotest.ScaleClients, b.ops)
		}
		r, err := scenariotest.Scale(scenariotest.ScaleClients, b.ops)
		if err != nil {
			return nil, fmt.Errorf("bench: %s: %w", b.name, err)
		}
		sec := func(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
		mib := func(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }
		met := r.PerNode() <= float64(scenariotest.ScaleIdleNode)
		if b.ops > 0 {
			met = r.Run.Peak <= scenariotest.ScaleTarget && r.Run.CPU <= time.Duration(scenariotest.ScaleSeconds)*time.Second
		}
		verdict := "met"
		if !met {
			verdict = "NOT MET"
			missed = append(missed, b.name)
		}
		t.Add(b.name, r.Nodes, r.Events, sec(r.Run.Wall), sec(r.Run.CPU), mib(r.Run.Peak), fmt.Sprintf("%.0f", r.PerNode()),
			r.Reference, sec(r.Ref.Wall), sec(r.Ref.CPU), mib(r.Ref.Peak), fmt.Sprintf("%.2fx", r.MemRatio()), fmt.Sprintf("%.2fx", r.CPURatio()), b.target, verdict)
		if r.Run.Sampled {
			t.Notes = append(t.Notes, b.name+": peak memory sampled from the Go runtime (this system cannot reset its peak RSS)")
		}
	}
	if len(t.Rows) == 0 {
		return nil, nil
	}
	t.Notes = append(t.Notes, "peak RSS is the process's; memory ratio compares growth over each one's starting RSS")
	return &scaleResult{table: t, missed: missed}, nil
}
