package cli

import (
	"flag"
	"fmt"
	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/sim"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simrun-dev/simrun/checker/checkerbench"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/scenarios/scenariotest"
)

func init() {
	// The checker helper's benchmarks (issue 3), each beside its reference.
	registerBench(benchPair{
		name: "Sweep2Workers", bench: scenariotest.SweepBenchmark(2),
		reference: "Sweep1Worker", ref: scenariotest.SweepBenchmark(1),
		target: fmt.Sprintf("<= 0.56x (>= 1.8x speed-up; %d seeds of %s per op)", scenariotest.BenchSeeds, scenariotest.BenchScenario),
	})
	registerBench(benchPair{
		name: "Linearizability", bench: checkerbench.Linearizability,
		reference: "LinReplay", ref: checkerbench.Replay,
		target: fmt.Sprintf("< 2s/op (%d ops on %d keys)", checkerbench.Ops, checkerbench.Keys),
	})
	register(&command{
		name:  "sweep",
		args:  "SCENARIO --seeds A-B [--workers N] [--shard i/n] [--json FILE] [-p name=value]... [--failures N] [--artifacts DIR] [--coverage] [--guided] [--fail-fast] [--shrink] [--progress auto|always|never]",
		short: "run a scenario on a range of seeds in parallel; summary per verdict class, exit 1 if any seed failed",
		run:   cmdSweep,
	})
}

// parseSeedRange reads "A-B" (A <= B) or a single seed "N".
func parseSeedRange(s string) (scenarios.SeedRange, error) {
	bad := func(why string) error {
		return usageErr("sweep: --seeds %q: %s (want FROM-TO, e.g. 1-1000)", s, why)
	}
	if strings.TrimSpace(s) == "" {
		return scenarios.SeedRange{}, bad("empty")
	}
	a, b, isRange := strings.Cut(s, "-")
	if !isRange {
		b = a
	}
	from, err := strconv.ParseUint(a, 10, 64)
	if err != nil {
		return scenarios.SeedRange{}, bad(fmt.Sprintf("%q is not a non-negative integer", a))
	}
	to, err := strconv.ParseUint(b, 10, 64)
	if err != nil {
		return scenarios.SeedRange{}, bad(fmt.Sprintf("%q is not a non-negative integer", b))
	}
	if from > to {
		return scenarios.SeedRange{}, bad("the range is empty")
	}
	if from == 0 && to == ^uint64(0) {
		return scenarios.SeedRange{}, bad("the range is too large")
	}
	return scenarios.SeedRange{From: from, To: to}, nil
}

// autoShard finds "i/n" (1-based) in the environment of a batch engine:
//   - a Kubernetes Indexed Job: JOB_COMPLETION_INDEX (0-based, set by Kubernetes) and
//     JOB_COMPLETIONS (the completions count; set it in the Job's env, as
//     deploy/kubernetes/sweep-job.yaml does: Kubernetes does not export it);
//   - a Slurm job array: SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and
//     SLURM_ARRAY_TASK_COUNT (a contiguous array: --array=MIN-MAX);
//   - anything else (a CI matrix, a shell loop): SIMRUN_SHARD=i/n.
//
// Exactly one of the three must be present.
func autoShard(getenv func(string) string) (string, error) {
	var found []string
	var shard, from string // from: the variables that gave shard
	num := func(name string) (int, error) {
		v := getenv(name)
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, usageErr("sweep: --shard auto: %s=%q is not a non-negative integer", name, v)
		}
		return n, nil
	}
	if getenv("JOB_COMPLETION_INDEX") != "" {
		found = append(found, "Kubernetes")
		i, err := num("JOB_COMPLETION_INDEX")
		if err != nil {
			return "", err
		}
		if getenv("JOB_COMPLETIONS") == "" {
			return "", usageErr("sweep: --shard auto: JOB_COMPLETION_INDEX is set but JOB_COMPLETIONS is not (set it to the Job's completions in its env)")
		}
		n, err := num("JOB_COMPLETIONS")
		if err != nil {
			return "", err
		}
		shard = fmt.Sprintf("%d/%d", i+1, n)
		from = fmt.Sprintf("JOB_COMPLETION_INDEX=%s and JOB_COMPLETIONS=%s", getenv("JOB_COMPLETION_INDEX"), getenv("JOB_COMPLETIONS"))
	}
	if getenv("SLURM_ARRAY_TASK_ID") != "" {
		found = append(found, "Slurm")
		id, err := num("SLURM_ARRAY_TASK_ID")
		if err != nil {
			return "", err
		}
		lo := 0
		if getenv("SLURM_ARRAY_TASK_MIN") != "" {
			if lo, err = num("SLURM_ARRAY_TASK_MIN"); err != nil {
				return "", err
			}
		}
		n, err := num("SLURM_ARRAY_TASK_COUNT")
		if err != nil {
			return "", err
		}
		shard = fmt.Sprintf("%d/%d", id-lo+1, n)
		from = fmt.Sprintf("SLURM_ARRAY_TASK_ID=%s", getenv("SLURM_ARRAY_TASK_ID"))
		if v := getenv("SLURM_ARRAY_TASK_MIN"); v != "" {
			from += ", SLURM_ARRAY_TASK_MIN=" + v
		}
		from += " and SLURM_ARRAY_TASK_COUNT=" + getenv("SLURM_ARRAY_TASK_COUNT")
	}
	if v := getenv("SIMRUN_SHARD"); v != "" {
		found = append(found, "SIMRUN_SHARD")
		shard, from = v, fmt.Sprintf("SIMRUN_SHARD=%q", v)
	}
	switch len(found) {
	case 0:
		return "", usageErr("sweep: --shard auto: no shard in the environment (JOB_COMPLETION_INDEX with JOB_COMPLETIONS, SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT, or SIMRUN_SHARD=i/n)")
	case 1:
		// Said in the variables' terms: the user never typed the i/n they make.
		if why := shardProblem(shard); why != "" {
			return "", usageErr("sweep: --shard auto: %s (shard %s): %s", from, shard, why)
		}
		return shard, nil
	}
	return "", usageErr("sweep: --shard auto: more than one batch engine in the environment (%s): set --shard i/n", strings.Join(found, ", "))
}

// parseShard reads "i/n" with 1 <= i <= n.
func parseShard(s string) (i, n int, err error) {
	if why := shardProblem(s); why != "" {
		return 0, 0, usageErr("sweep: --shard %q: %s", s, why)
	}
	a, b, _ := strings.Cut(s, "/")
	i, _ = strconv.Atoi(a)
	n, _ = strconv.Atoi(b)
	return i, n, nil
}

// shardProblem says what is wrong with "i/n" ("" if nothing).
func shardProblem(s string) string {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return "want i/n, e.g. 2/8"
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	switch {
	case err1 != nil || err2 != nil:
		return "want i/n with whole numbers, e.g. 2/8"
	case n < 1:
		return "the shard count must be at least 1"
	case i < 1 || i > n:
		return fmt.Sprintf("the index must be between 1 and %d", n)
	}
	return ""
}

func cmdSweep(e *env, args []string) error {
	c := commands["sweep"]
	fs := newFlags(e, c)
	seedsS := fs.String("seeds", "", "seeds to run: `FROM-TO`, both included (required)")
	defWorkers := runtime.GOMAXPROCS(0)
	workers := fs.Int("workers", defWorkers, "run `N` seeds at once, one per CPU by default")
	shardS := fs.String("shard", "", "run only the `i/n`-th of n disjoint slices of the seeds (merge the shard files with 'simrun merge'); auto: take i and n from a Kubernetes Indexed Job, a Slurm array or SIMRUN_SHARD")
	jsonPath := fs.String("json", "", "write the result as JSON to `FILE` ('-' for stdout, instead of the summary)")
	failures := fs.Int("failures", scenarios.DefaultFailureLimit, "list at most `N` failing seeds")
	artifacts := fs.String("artifacts", "", "write check artifacts (e.g. porcupine visualizations) to `DIR`")
	reportDir := fs.String("report", "", "write a browsable report to `DIR`: verdicts, distributions across seeds, and a run report per listed failing seed")
	progressMode := fs.String("progress", "auto", "progress on stderr: "+progressModes+" (auto: a live line on a terminal, a line every ~10s otherwise)")
	guided := fs.Bool("guided", false, "guided sweep: half the runs mutate the fault plans of earlier runs that reached a new rule or call shape (deterministic; coverage on)")
	failFast := fs.Bool("fail-fast", false, "stop at the lowest failing seed (seeds above it are not started; the counts cover the seeds that ran, so the result cannot be merged)")
	shrink := fs.Bool("shrink", false, "shrink the lowest failing seed to a minimal failing run (plan and trace in --artifacts DIR, or a new temporary directory)")
	withCoverage := fs.Bool("coverage", false, "count the protocol rules every run reaches and what each property judged; print (and --json, --report) them")
	var ps multiFlag
	fs.Var(&ps, "p", "scenario parameter `name=value` (repeatable)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := exactlyArgs(c, pos, 1); err != nil {
		return err
	}
	seedsSet, shardSet := false, false
	fs.Visit(func(f *flag.Flag) {
		seedsSet = seedsSet || f.Name == "seeds"
		shardSet = shardSet || f.Name == "shard"
	})
	if !seedsSet {
		return usageErr("sweep: missing --seeds FROM-TO (e.g. --seeds 1-1000)")
	}
	seeds, err := parseSeedRange(*seedsS)
	if err != nil {
		return err
	}
	if *workers < 1 {
		return usageErr("sweep: --workers %d: want at least 1", *workers)
	}
	if *failures < 1 {
		return usageErr("sweep: --failures %d: want at least 1", *failures)
	}
	var shard, shards int
	if shardSet && *shardS == "auto" {
		a, err := autoShard(os.Getenv)
		if err != nil {
			return err
		}
		*shardS = a
	}
	if shardSet { // --shard '' is a mistake, not "unsharded"
		if shard, shards, err = parseShard(*shardS); err != nil {
			return err
		}
	}
	if err := checkSweepSize(seeds, shard, shards); err != nil {
		return err
	}
	params, err := scenarios.ParseAssignments(ps)
	if err != nil {
		return usageErr("sweep: %v", err)
	}
	sc, err := scenarios.Lookup(pos[0])
	if err != nil {
		return usageErr("%v", err)
	}
	if sc.Build == nil {
		return usageErr("sweep: %s is an experiment: it has no seeds to sweep (use 'simrun run %s')", sc.Name, sc.Name)
	}
	o := scenarios.SweepOptions{
		Scenario: sc.Name, Params: params, From: seeds.From, To: seeds.To, Workers: *workers,
		Shard: shard, Shards: shards, FailureLimit: *failures, ArtifactDir: *artifacts, Coverage: *withCoverage, Guided: *guided, StopAtFailure: *failFast,
	}
	if *failFast && shards > 0 {
		return usageErr("sweep: --fail-fast cannot be sharded: its counts depend on where it stopped")
	}
	if *reportDir != "" {
		if err := writableDir(*reportDir); err != nil {
			return usageErr("sweep: --report: %v", err)
		}
	}
	var (
		measMu           sync.Mutex
		evs, msgs, vtime []float64
	)
	if *reportDir != "" {
		o.OnRun = func(seed uint64, rep *scenarios.Report) {
			measMu.Lock()
			defer measMu.Unlock()
			evs = append(evs, float64(rep.Result.Events))
			msgs = append(msgs, float64(rep.Result.Messages.Sent))
			vtime = append(vtime, time.Duration(rep.Result.Time).Seconds())
		}
	}
	// Refuse an unwritable --json before spending the sweep.
	var out *os.File
	if *jsonPath != "" && *jsonPath != "-" {
		f, err := os.Create(*jsonPath)
		if err != nil {
			return usageErr("sweep: --json: %v", err)
		}
		out = f
		defer out.Close()
	}
	total := seeds.Len()
	if shards > 0 {
		r, ok := scenarios.ShardRange(seeds, shard, shards)
		total = 0
		if ok {
			total = r.Len()
		}
	}
	tk, err := newTicker(e, "sweep", *progressMode)
	if err != nil {
		return err
	}
	var prog *sweepProgress
	if tk != nil {
		prog = &sweepProgress{t: tk, name: sc.Name, total: total}
		o.Progress = prog.update
	}
	// Ctrl-C stops starting seeds; the summary of the seeds that ran is printed.
	var interrupt atomic.Bool
	o.Interrupt = &interrupt
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	go func() {
		if _, ok := <-sigs; ok {
			interrupt.Store(true)
		}
	}()
	res, err := scenarios.Sweep(o)
	signal.Stop(sigs)
	close(sigs)
	if prog != nil {
		tk.finish(prog.line)
	}
	if err != nil {
		if out != nil {
			out.Close()
			os.Remove(*jsonPath)
		}
		return err
	}
	switch {
	case *jsonPath == "-":
		if _, err := e.stdout.Write(res.JSON()); err != nil {
			return err
		}
	default:
		if err := res.WriteSummary(e.stdout); err != nil {
			return err
		}
		if res.Coverage != nil {
			if err := res.Coverage.WriteText(e.stdout); err != nil {
				return err
			}
		}
		if out != nil {
			if _, err := out.Write(res.JSON()); err != nil {
				return fmt.Errorf("--json: %w", err)
			}
			if err := out.Close(); err != nil {
				return fmt.Errorf("--json: %w", err)
			}
			fmt.Fprintf(e.stdout, "result    %s\n", *jsonPath)
		}
	}
	if *reportDir != "" {
		if err := writeSweepReport(e, *reportDir, sc, res, args, [][]float64{evs, msgs, vtime}); err != nil {
			return err
		}
	}
	if *shrink && len(res.Failures) > 0 {
		dir := *artifacts
		if dir == "" {
			if dir, err = os.MkdirTemp("", "simrun-shrink-*"); err != nil {
				return fmt.Errorf("sweep: --shrink: %w", err)
			}
		}
		if err := shrinkFirstFailure(e, sc, params, res.Failures[0].Seed, dir, tk); err != nil {
			return err
		}
	}
	if !res.Passed() {
		return violated("%s: %d of %d seeds failed", sc.Name, res.Failed, res.Runs)
	}
	if res.Interrupted {
		return &exitError{code: exitInterrupted, msg: fmt.Sprintf("%s: interrupted after %d seeds", sc.Name, res.Runs)}
	}
	return nil
}

// writeSweepReport writes the sweep's page and a run page for each listed failing seed
// (re-run from its seed: runs are deterministic).
func writeSweepReport(e *env, dir string, sc *scenarios.Scenario, res *scenarios.SweepResult, args []string, meas [][]float64) error {
	page := reports.Sweep{Scenario: sc.Name, Seeds: res.Seeds.String(), Params: res.Params, Runs: res.Runs, Failed: res.Failed,
		Command: "simrun sweep " + scenarios.ShellJoin(args...)}
	if res.Shard != nil {
		page.Seeds += " shard " + res.Shard.String()
	}
	for _, cl := range checker.Classes {
		if n := res.ByClass.Get(cl); n > 0 || cl == checker.OK {
			page.ByClass = append(page.ByClass, [2]string{cl.String(), fmt.Sprint(n)})
		}
	}
	cols := []string{"property"}
	for _, cl := range checker.Classes {
		cols = append(cols, cl.String())
	}
	page.ByProperty = reports.NewTable("", append(cols, "checked")...)
	props := make([]string, 0, len(res.ByProperty))
	for p := range res.ByProperty {
		props = append(props, p)
	}
	slices.Sort(props)
	for _, p := range props {
		c := res.ByProperty[p]
		row := []any{p}
		for _, cl := range checker.Classes {
			row = append(row, c.Get(cl))
		}
		if c.Counted > 0 {
			row = append(row, c.Checked)
		} else {
			row = append(row, "-")
		}
		page.ByProperty.Add(row...)
	}
	if res.Coverage != nil {
		page.Coverage = coverageView([]string{"sweep"}, []*scenarios.Coverage{res.Coverage})
	}
	page.Measures = []reports.Measure{{Name: "events", Values: meas[0]}, {Name: "messages sent", Values: meas[1]}, {Name: "virtual time", Unit: "s", Values: meas[2]}}
	for _, v := range res.Failures {
		f := reports.FailingSeed{Seed: v.Seed, Verdict: v.String(), Repro: v.Repro}
		col := &sim.RecordCollector{Limit: maxReportRecords}
		rep, err := scenarios.Run(sc, scenarios.Options{Seed: v.Seed, Params: res.Params, Tracer: col, ArtifactDir: filepath.Join(dir, fmt.Sprintf("seed-%d", v.Seed))})
		if err == nil {
			sub := fmt.Sprintf("seed-%d", v.Seed)
			if err := writeRunReport(filepath.Join(dir, sub), rep, col); err != nil {
				return err
			}
			f.Page = sub + "/index.html"
		}
		page.Failures = append(page.Failures, f)
	}
	if _, err := reports.WriteSweep(dir, page); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "report: %s\n", filepath.Join(filepath.Clean(dir), "index.html"))
	return nil
}

// sweepProgress reports a sweep's seeds done, failures, seeds per second and the time
// left through a ticker. Workers call update concurrently.
type sweepProgress struct {
	t            *ticker
	name         string
	total        uint64
	mu           sync.Mutex
	done, failed int64
}

func (p *sweepProgress) update(done, failed int64) {
	p.mu.Lock()
	p.done, p.failed = max(p.done, done), max(p.failed, failed)
	p.mu.Unlock()
	p.t.update(p.line)
}

func (p *sweepProgress) line() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	el := time.Since(p.t.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(p.done) / el
	}
	eta := ""
	if rate > 0 && uint64(p.done) < p.total {
		eta = ", about " + time.Duration(float64(p.total-uint64(p.done))/rate*float64(time.Second)).Round(time.Second).String() + " left"
	}
	return fmt.Sprintf("%s: %d/%d seeds, %d failed, %.0f seeds/s%s", p.name, p.done, p.total, p.failed, rate, eta)
}
