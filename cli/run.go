package cli

import (
	"encoding/json"
	"fmt"
	"github.com/simrun-dev/simrun/checker"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

func init() {
	register(&command{
		name:  "run",
		args:  "SCENARIO [--seed N] [--trace FILE] [--faults plan.json] [-p name=value]... [--format text|json|mermaid] [--report DIR] [--coverage] [--out DIR]",
		short: "run one scenario on one seed and check its properties (experiments print tables)",
		run:   cmdRun,
	})
}

// parseSeed reads a seed (a non-negative integer).
func parseSeed(s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, usageErr("--seed %q: want a non-negative integer", s)
	}
	return n, nil
}

func cmdRun(e *env, args []string) error {
	c := commands["run"]
	fs := newFlags(e, c)
	seedS := fs.String("seed", "1", "seed of the run")
	tracePath := fs.String("trace", "", "write the JSONL trace to `FILE`")
	faultsPath := fs.String("faults", "", "use the fault plan in `FILE` (a path relative to the current directory) instead of the scenario's own")
	format := fs.String("format", "text", "output: text, json or mermaid")
	events := fs.Int("events", 80, "mermaid: draw at most `N` events (0 = all)")
	out := fs.String("out", "", "experiments: write the report to `DIR`: tables as CSV, figures as PNG and SVG, and DIR/index.html")
	artifacts := fs.String("artifacts", "", "write check artifacts (e.g. porcupine visualizations) to `DIR` (default: next to --trace)")
	reportDir := fs.String("report", "", "single runs: write a browsable report (index.html, timeline, space-time diagram, messages over time) to `DIR`")
	progressMode := fs.String("progress", "auto", "experiments: progress on stderr: "+progressModes)
	withCoverage := fs.Bool("coverage", false, "single runs: count the protocol rules the run reaches and what each property judged; print (and --format json, --report) them")
	var ps multiFlag
	fs.Var(&ps, "p", "scenario parameter `name=value` (repeatable)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := exactlyArgs(c, pos, 1); err != nil {
		return err
	}
	seed, err := parseSeed(*seedS)
	if err != nil {
		return err
	}
	switch *format {
	case "text", "json", "mermaid":
	default:
		return usageErr("run: --format %q: want text, json or mermaid", *format)
	}
	if *events < 0 {
		return usageErr("run: --events must be >= 0")
	}
	params, err := scenarios.ParseAssignments(ps)
	if err != nil {
		return usageErr("run: %v", err)
	}
	sc, err := scenarios.Lookup(pos[0])
	if err != nil {
		return usageErr("%v", err)
	}
	if sc.Experiment != nil {
		if *tracePath != "" || *faultsPath != "" || *format == "mermaid" || *reportDir != "" || *artifacts != "" || *withCoverage {
			return usageErr("run: %s is an experiment: --trace, --faults, --report, --artifacts, --coverage and --format mermaid apply to single runs (an experiment writes its figures and page with --out DIR)", sc.Name)
		}
		if *out != "" {
			if err := writableDir(*out); err != nil {
				return usageErr("run: --out: %v", err)
			}
		}
		tk, err := newTicker(e, "run", *progressMode)
		if err != nil {
			return err
		}
		return runExperiment(e, sc, seed, params, *out, *format, tk)
	}
	if *out != "" {
		return usageErr("run: --out applies to experiments (%s is a single run: --report DIR writes its page)", sc.Name)
	}
	if *reportDir != "" {
		if err := writableDir(*reportDir); err != nil {
			return usageErr("run: --report: %v", err)
		}
	}
	o := scenarios.Options{Seed: seed, Params: params, ArtifactDir: *artifacts, Coverage: *withCoverage}
	if o.ArtifactDir == "" && *reportDir != "" {
		o.ArtifactDir = *reportDir
	}
	// A report links porcupine's visualization of every linearizability check.
	o.Visualize = *reportDir != "" && o.ArtifactDir == *reportDir
	if o.ArtifactDir == "" && *tracePath != "" {
		// Visualizations of illegal histories go next to the trace.
		o.ArtifactDir = filepath.Dir(*tracePath)
	}
	if *faultsPath != "" {
		plan, err := faults.Load(*faultsPath)
		if err != nil {
			return usageErr("%v", err)
		}
		o.Faults, o.FaultsFile = &plan, *faultsPath
	}
	// Build once to validate everything before creating any file.
	if _, _, err := scenarios.Prepare(sc, o); err != nil {
		msg := oneLine(err.Error())
		if o.FaultsFile != "" && strings.HasPrefix(msg, "faults:") {
			msg = o.FaultsFile + ": " + msg // the plan does not fit this scenario: name the file
		}
		return usageErr("%s", msg)
	}
	var traceFile *os.File
	if *tracePath != "" {
		f, err := os.Create(*tracePath)
		if err != nil {
			return usageErr("run: --trace: %v", err)
		}
		traceFile = f
		o.TraceTo = f
	}
	var col *sim.RecordCollector
	if *format == "mermaid" || *reportDir != "" {
		col = &sim.RecordCollector{}
		if *format != "mermaid" {
			col.Limit = maxReportRecords
		}
		o.Tracer = col
	}
	rep, err := scenarios.Run(sc, o)
	if traceFile != nil {
		if cerr := traceFile.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("trace: %w", cerr)
		}
	}
	if err != nil {
		return err
	}
	switch *format {
	case "json":
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	case "mermaid":
		if err := sim.WriteMermaid(e.stdout, rep.Result.Names(), col.Records, *events); err != nil {
			return err
		}
	default:
		writeReport(e.stdout, rep, *tracePath)
		if rep.Coverage != nil {
			if err := rep.Coverage.WriteText(e.stdout); err != nil {
				return err
			}
		}
		if *artifacts != "" && !slices.ContainsFunc(rep.Verdicts, func(v checker.Verdict) bool { return v.Artifact != "" }) {
			fmt.Fprintf(e.stdout, "artifacts none written to %s (a check writes one when it fails: porcupine's visualization of an illegal history)\n", *artifacts)
		}
	}
	if *reportDir != "" {
		if err := writeRunReport(*reportDir, rep, col); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "report: %s\n", filepath.Join(filepath.Clean(*reportDir), "index.html"))
	}
	if rep.Failed() {
		return violated("%s seed %d: %s (reproduce: %s)", rep.Scenario, rep.Seed, rep.Verdict, rep.Repro)
	}
	return nil
}

// maxReportRecords bounds the events a run report holds in memory and draws (a run of
// ten million events would otherwise exhaust memory): the page draws this prefix and
// says how many events it left out.
const maxReportRecords = 200_000

// writeRunReport writes a run's page (reports.WriteRun) into dir.
func writeRunReport(dir string, rep *scenarios.Report, col *sim.RecordCollector) error {
	rr := reports.Run{Title: fmt.Sprintf("%s seed %d", rep.Scenario, rep.Seed), Scenario: rep.Scenario, Seed: rep.Seed,
		Params: rep.Params, Notes: rep.Notes, Summary: rep.Summary, Faults: rep.Faults.String(), Repro: rep.Repro, Nodes: rep.Result.Names(), Records: col.Records, Omitted: col.Dropped}
	for _, op := range rep.Ops {
		rr.Ops = append(rr.Ops, reports.Op{Call: op.Call, Return: op.Return, Pending: op.Pending})
	}
	if rep.Coverage != nil {
		rr.Coverage = coverageView([]string{fmt.Sprintf("seed %d", rep.Seed)}, []*scenarios.Coverage{rep.Coverage})
	}
	for _, v := range rep.Verdicts {
		rr.Verdicts = append(rr.Verdicts, reports.VerdictLine{Class: v.Class.String(), Property: v.Property, Detail: v.Detail})
		if v.Artifact != "" {
			rr.Artifacts = append(rr.Artifacts, v.Artifact)
		}
	}
	_, err := reports.WriteRun(dir, rr)
	return err
}

// writableDir creates dir if needed and checks that a file can be written in it, so a
// bad output path fails before the work, not after.
// writableDir readies an output directory before the work starts (a bad path fails
// at once, not after an hour's sweep): an empty name is refused, an earlier report
// there is cleared (reports.PrepareDir), a directory of other files is refused.
func writableDir(dir string) error {
	if err := reports.PrepareDir(dir); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".simrun-probe-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

func writeReport(w io.Writer, rep *scenarios.Report, tracePath string) {
	r := rep.Result
	fmt.Fprintf(w, "scenario  %s  seed %d\n", rep.Scenario, rep.Seed)
	if nd := paramsLine(rep.Params); nd != "" {
		fmt.Fprintf(w, "params    %s\n", nd)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "drawn     %s\n", n)
	}
	fmt.Fprintf(w, "faults    %s\n", rep.Faults)
	if len(r.Knobs) > 0 {
		fmt.Fprintf(w, "network   assumption-breaking knobs on: %s\n", strings.Join(r.Knobs, "; "))
	}
	fmt.Fprintf(w, "outcome   %s after %d events at virtual time %v\n", r.Outcome, r.Events, r.Time)
	fmt.Fprintf(w, "messages  sent %d, delivered %d, lost %d", r.Messages.Sent, r.Messages.Delivered, r.Messages.Lost)
	if r.Messages.Duplicated > 0 {
		fmt.Fprintf(w, ", duplicated %d", r.Messages.Duplicated)
	}
	fmt.Fprintln(w)
	if len(r.ByKind) > 0 {
		t := reports.NewTable("", "  kind", "sent", "delivered", "lost")
		for _, k := range r.Kinds() {
			c := r.ByKind[k]
			t.Add("  "+k, c.Sent, c.Delivered, c.Lost)
		}
		_ = t.WriteText(w)
	}
	fmt.Fprintln(w, "properties")
	for _, v := range rep.Verdicts {
		line := fmt.Sprintf("  %-8s %s", v.Class, v.Property)
		if v.Detail != "" {
			line += ": " + v.Detail
		}
		if v.Artifact != "" {
			line += " [" + v.Artifact + "]"
		}
		fmt.Fprintln(w, line)
	}
	if rep.Summary != "" {
		fmt.Fprint(w, strings.TrimRight(rep.Summary, "\n")+"\n")
	}
	fmt.Fprintf(w, "verdict   %s\n", rep.Verdict.Class)
	if tracePath != "" {
		fmt.Fprintf(w, "trace     %s (replay: simrun replay %s)\n", tracePath, scenarios.ShellQuote(tracePath))
	}
	if rep.Failed() {
		fmt.Fprintf(w, "reproduce %s\n", rep.Repro)
	}
}

func paramsLine(p map[string]string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + p[k]
	}
	return strings.Join(parts, " ")
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string) string {
	return strings.Trim(slugRE.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

func runExperiment(e *env, sc *scenarios.Scenario, seed uint64, params map[string]string, out, format string, tk *ticker) error {
	ps, err := scenarios.NewParams(sc.Params, params)
	if err != nil {
		return usageErr("%s: %v", sc.Name, err)
	}
	var last [2]int
	var mu sync.Mutex
	line := func() string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprintf("%s: %d/%d runs", sc.Name, last[0], last[1])
	}
	x := &scenarios.Exp{Seed: seed, Params: ps, Out: out, Progress: func(done, total int) {
		mu.Lock()
		last = [2]int{done, total}
		mu.Unlock()
		tk.update(line)
	}}
	tables, err := sc.Experiment(x)
	tk.finish(line)
	if perr := ps.Err(); perr != nil {
		return usageErr("%s: %v", sc.Name, perr)
	}
	if err != nil {
		return err
	}
	if format == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"scenario": sc.Name, "seed": seed, "tables": tables}); err != nil {
			return err
		}
	} else {
		for i, t := range tables {
			if i > 0 {
				fmt.Fprintln(e.stdout)
			}
			if err := t.WriteText(e.stdout); err != nil {
				return err
			}
		}
	}
	if out != "" {
		cmd := fmt.Sprintf("simrun run %s --seed %d", scenarios.ShellQuote(sc.Name), seed)
		for _, nd := range ps.NonDefault() {
			cmd += " -p " + scenarios.ShellQuote(nd)
		}
		cmd += " --out " + scenarios.ShellQuote(out)
		files, err := reports.WriteExperiment(out, reports.Experiment{
			Name: sc.Name, Help: sc.Help, Seed: seed, Params: ps.Values(), Command: cmd, Tables: tables,
		})
		if err != nil {
			return usageErr("%v", err)
		}
		fmt.Fprintf(e.stderr, "wrote %d files to %s: open %s\n", len(files), filepath.Clean(out), filepath.Join(filepath.Clean(out), "index.html"))
	}
	return nil
}

// runSuite runs every suite scenario on seed 1 and prints a table.
func runSuite(e *env) error {
	t := reports.NewTable("", "scenario", "events", "messages", "virtual time", "verdict")
	var failed []*scenarios.Report
	for _, sc := range scenarios.Suite() {
		rep, err := scenarios.Run(sc, scenarios.Options{Seed: 1})
		if err != nil {
			return fmt.Errorf("%s: %w", sc.Name, err)
		}
		v := rep.Verdict.Class.String()
		if rep.Failed() {
			v += " (" + rep.Verdict.Property + ")"
			failed = append(failed, rep)
		}
		t.Add(sc.Name, rep.Result.Events, rep.Result.Messages.Sent, rep.Result.Time.String(), v)
	}
	if err := t.WriteText(e.stdout); err != nil {
		return err
	}
	for _, rep := range failed {
		fmt.Fprintf(e.stdout, "\n%s: %s\n  reproduce: %s\n", rep.Scenario, rep.Verdict, rep.Repro)
	}
	if len(failed) > 0 {
		return violated("%d of %d suite scenarios failed", len(failed), len(t.Rows))
	}
	return nil
}
