package cli

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/simrun-dev/simrun/reports"
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
		run:   cmdBench,
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
	if len(t.Rows) == 0 {
		return usageErr("bench: no benchmark matches %q", *filter)
	}
	return t.WriteText(e.stdout)
}
