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
}

var benches []benchPair

func registerBench(p benchPair) { benches = append(benches, p) }

func init() {
	registerBench(benchPair{
		name: "Kernel", bench: simbench.Kernel,
		reference: "HeapBaseline", ref: simbench.HeapBaseline,
		target: "Kernel <= 3x HeapBaseline, 0 allocs/op",
	})
	register(&command{
		name:  "bench",
		args:  "[--run REGEXP]",
		short: "run the benchmarks, each as a ratio to a reference measured in the same run",
		long: "Scale and ScaleIdle run demo/happy with 100 000 clients (30 operations each; none) on one core\n" +
			"and report wall and CPU time, peak resident memory and bytes per node, beside a reference\n" +
			"(a bare history of as many observations; a bare kernel of as many idle nodes).",
		run: cmdBench,
	})
}

func cmdBench(e *env, args []string) error {
	c := commands["bench"]
	fs := newFlags(e, c)
	filter := fs.String("run", ".", "only benchmarks whose name matches `REGEXP`")
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
	t := reports.NewTable("", "benchmark", "ns/op", "allocs/op", "reference", "ns/op", "allocs/op", "ratio", "target")
	for _, b := range benches {
		if !re.MatchString(b.name) {
			continue
		}
		if e.tty {
			fmt.Fprintf(e.stderr, "running %s and %s...\n", b.name, b.reference)
		}
		r := testing.Benchmark(b.bench)
		ref := testing.Benchmark(b.ref)
		ratio := float64(r.NsPerOp()) / float64(max(ref.NsPerOp(), 1))
		t.Add(b.name, r.NsPerOp(), r.AllocsPerOp(), b.reference, ref.NsPerOp(), ref.AllocsPerOp(), fmt.Sprintf("%.2fx", ratio), b.target)
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
	if scale != nil {
		if len(t.Rows) > 0 {
			fmt.Fprintln(e.stdout)
		}
		return scale.WriteText(e.stdout)
	}
	return nil
}

// scaleTable runs the scale benchmarks whose names match re (nil if none does).
func scaleTable(e *env, re *regexp.Regexp) (*reports.Table, error) {
	t := reports.NewTable("", "benchmark", "nodes", "events", "wall", "cpu", "peak RSS", "bytes/node",
		"reference", "wall", "cpu", "peak RSS", "memory ratio", "cpu ratio", "target")
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
		t.Add(b.name, r.Nodes, r.Events, sec(r.Run.Wall), sec(r.Run.CPU), mib(r.Run.Peak), fmt.Sprintf("%.0f", r.PerNode()),
			r.Reference, sec(r.Ref.Wall), sec(r.Ref.CPU), mib(r.Ref.Peak), fmt.Sprintf("%.2fx", r.MemRatio()), fmt.Sprintf("%.2fx", r.CPURatio()), b.target)
		if r.Run.Sampled {
			t.Notes = append(t.Notes, b.name+": peak memory sampled from the Go runtime (this system cannot reset its peak RSS)")
		}
	}
	if len(t.Rows) == 0 {
		return nil, nil
	}
	t.Notes = append(t.Notes, "peak RSS is the process's; memory ratio compares growth over each one's starting RSS")
	return t, nil
}
