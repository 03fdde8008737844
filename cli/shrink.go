package cli

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

func init() {
	register(&command{
		name:  "shrink",
		args:  "TRACE [--property NAME] [--plan FILE] [--out FILE] [--report DIR] [--max-runs N] [--workers N] [--progress auto|always|never]",
		short: "reduce a failing run's trace to a minimal run that violates the same property (fewer faults, smaller workload, earlier faults)",
		run:   cmdShrink,
	})
}

func cmdShrink(e *env, args []string) error {
	c := commands["shrink"]
	fs := newFlags(e, c)
	property := fs.String("property", "", "the property to keep violated (default: the run's worst verdict's)")
	planPath := fs.String("plan", "", "write the shrunk fault plan to `FILE` (default: TRACE-shrunk-faults.json)")
	outPath := fs.String("out", "", "write the shrunk run's trace to `FILE` (default: TRACE-shrunk.jsonl)")
	reportDir := fs.String("report", "", "write the shrunk run's report (space-time diagram, timeline) to `DIR`")
	maxRuns := fs.Int("max-runs", scenarios.DefaultShrinkRuns, "try at most `N` candidate runs")
	workers := fs.Int("workers", 0, "candidate runs in parallel (default: one per CPU; the result does not depend on it)")
	progressMode := fs.String("progress", "auto", "progress on stderr: "+progressModes)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := exactlyArgs(c, pos, 1); err != nil {
		return err
	}
	if *maxRuns <= 0 || *workers < 0 {
		return usageErr("shrink: --max-runs must be > 0 and --workers >= 0")
	}
	data, err := scenarios.ReadTrace(pos[0])
	if err != nil {
		return usageErr("shrink: %v", err)
	}
	h, err := scenarios.ReadHeader(data)
	if err != nil {
		return usageErr("shrink: %s: %v", pos[0], err)
	}
	if h.Engine != "sim" {
		return usageErr("shrink: %s is a %s trace: shrink reduces simulator runs (a model checker's BFS counterexample is already a shortest path)", pos[0], h.Engine)
	}
	base := strings.TrimSuffix(pos[0], ".jsonl")
	if *planPath == "" {
		*planPath = base + "-shrunk-faults.json"
	}
	if *outPath == "" {
		*outPath = base + "-shrunk.jsonl"
	}
	for _, p := range []string{*planPath, *outPath} {
		if sameFile(p, pos[0]) {
			return usageErr("shrink: %s would overwrite the trace being shrunk", p)
		}
	}
	if *reportDir != "" {
		if err := writableDir(*reportDir); err != nil {
			return usageErr("shrink: --report: %v", err)
		}
	}
	tk, err := newTicker(e, "shrink", *progressMode)
	if err != nil {
		return err
	}
	o := scenarios.ShrinkOptions{Scenario: h.Scenario, Seed: h.Seed, Params: h.Params, Faults: h.Faults, Property: *property,
		MaxRuns: *maxRuns, Workers: *workers}
	return shrinkAndReport(e, o, tk, *planPath, *outPath, *reportDir)
}

// shrinkAndReport shrinks, writes the plan, the trace (and report) of the shrunk run,
// and prints what it found.
func shrinkAndReport(e *env, o scenarios.ShrinkOptions, tk *ticker, planPath, outPath, reportDir string) error {
	var last [2]int
	o.Progress = func(runs, nf int) {
		last = [2]int{runs, nf}
		tk.update(func() string {
			return fmt.Sprintf("shrink %s seed %d: %d runs, %d faults left", o.Scenario, o.Seed, last[0], last[1])
		})
	}
	res, err := scenarios.Shrink(o)
	tk.finish(func() string { return fmt.Sprintf("shrink %s seed %d", o.Scenario, o.Seed) })
	if err != nil {
		if scenarios.IsInputError(err) {
			return usageErr("shrink: %s", oneLine(err.Error()))
		}
		return err
	}
	if err := os.WriteFile(planPath, res.Plan.JSON(), 0o644); err != nil {
		return usageErr("shrink: --plan: %v", err)
	}
	sc, err := scenarios.Lookup(res.Scenario)
	if err != nil {
		return err
	}
	f, err := os.Create(outPath)
	if err != nil {
		return usageErr("shrink: --out: %v", err)
	}
	ro := scenarios.Options{Seed: res.Seed, Params: res.Params, Faults: &res.Plan, FaultsFile: planPath, TraceTo: f}
	var col *sim.RecordCollector
	if reportDir != "" {
		col = &sim.RecordCollector{Limit: maxReportRecords}
		ro.Tracer = col
	}
	rep, err := scenarios.Run(sc, ro)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("shrink: re-running the shrunk run: %w", err)
	}
	if reportDir != "" {
		if err := writeRunReport(reportDir, rep, col); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "report: %s\n", filepath.Join(filepath.Clean(reportDir), "index.html"))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "shrink    %s seed %d: %s\n", res.Scenario, res.Seed, res.Property)
	complete := "a minimal run: removing any fault, lowering the workload or moving a fault earlier passes"
	if !res.Complete {
		complete = "stopped at --max-runs: smaller runs may exist"
	}
	fmt.Fprintf(&b, "result    %s (%d candidate runs; %s)\n", res.Summary(), res.Runs, complete)
	if nd := changedParams(o.Params, res.Params); nd != "" {
		fmt.Fprintf(&b, "params    %s\n", nd)
	}
	fmt.Fprintf(&b, "faults    %s\n", res.Plan)
	fmt.Fprintf(&b, "verdict   %s\n", rep.Verdict)
	fmt.Fprintf(&b, "plan      %s\n", planPath)
	fmt.Fprintf(&b, "trace     %s (replay: simrun replay %s)\n", outPath, scenarios.ShellQuote(outPath))
	fmt.Fprintf(&b, "reproduce %s\n", rep.Repro)
	_, err = e.stdout.Write([]byte(b.String()))
	return err
}

// changedParams lists the parameters the shrink lowered ("clients=1 ops=2").
func changedParams(before, after map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if before[k] != after[k] {
			out = append(out, k+"="+after[k])
		}
	}
	return strings.Join(out, " ")
}

// sameFile reports whether a and b name one existing file.
func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// shrinkFirstFailure shrinks the lowest failing seed of a sweep (sweep --shrink),
// writing the plan and trace into dir.
func shrinkFirstFailure(e *env, sc *scenarios.Scenario, params map[string]string, seed uint64, dir string, tk *ticker) error {
	rep, err := scenarios.Run(sc, scenarios.Options{Seed: seed, Params: params})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageErr("sweep: --shrink: %v", err)
	}
	name := fmt.Sprintf("%s-seed%d", slug(sc.Name), seed)
	fmt.Fprintln(e.stdout)
	o := scenarios.ShrinkOptions{Scenario: sc.Name, Seed: seed, Params: params, Faults: clonePlanCLI(rep.Faults)}
	return shrinkAndReport(e, o, tk, filepath.Join(dir, name+"-shrunk-faults.json"), filepath.Join(dir, name+"-shrunk.jsonl"), "")
}

func clonePlanCLI(p faults.Plan) faults.Plan {
	return faults.Plan{Events: append([]faults.Event(nil), p.Events...)}
}
