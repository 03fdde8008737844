package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/simrun-dev/simrun/reports"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/coverage"
	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/model/modelbench"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

func init() {
	register(&command{
		name:  "check",
		args:  "[MODEL] [-p name=value]... [--config NAME] [--strategy bfs|dfs|random|swarm] [--store hashcompact|bitstate:SIZE] [--members N] [--shard i/n|auto] [--workers N] [--max-states N] [--max-depth N] [--max-memory SIZE] [--seed N] [--walks N] [--fair] [--trace FILE] [--json] [--coverage] [--progress auto|always|never]",
		short: "model-check a model (with no -p: its portfolio of configurations); alone, list the models",
		run:   cmdCheck,
	})
	replayers[model.TraceEngine] = replayModel
	registerBench(benchPair{
		name: "TwoPhase7", bench: modelbench.TwoPhase(7, 1),
		reference: "MapBFS7", ref: modelbench.MapBFS(7),
		target: "TwoPhase7 < 1x MapBFS7 (a plain Go-map BFS of the same model)",
		search: true,
	})
	registerBench(benchPair{
		name: "Actors2PC", bench: modelbench.PerState("2pc", map[string]string{"participants": "5", "crashes": "0"}),
		reference: "TwoPhaseState", ref: modelbench.PerState("twophase", map[string]string{"rm": "7"}),
		target: "Actors2PC <= 10x TwoPhaseState per state (an actor system, no declarations, against a plain spec)",
		search: true,
	})
	registerBench(benchPair{
		name: "TwoPhase7x2", bench: modelbench.TwoPhase(7, 2),
		reference: "TwoPhase7", ref: modelbench.TwoPhase(7, 1),
		target: "TwoPhase7x2 <= 0.59x TwoPhase7 (>= 1.7x speed-up on 2 workers)",
		search: true,
	})
}

// checkProgressEvery is how often the progress line is refreshed (tests lower it).
var checkProgressEvery = time.Second

// checkJSON is the --json output: one object.
type checkJSON struct {
	Model string `json:"model"`
	// Config names the portfolio configuration (portfolio runs only).
	Config   string            `json:"config,omitempty"`
	Params   map[string]string `json:"params"`
	Strategy string            `json:"strategy"`
	Workers  int               `json:"workers"`
	Outcome  string            `json:"outcome"`
	Bound    string            `json:"bound,omitempty"`
	Fair     bool              `json:"fair,omitempty"`
	// Liveness says the eventually-properties were decided on finite and infinite
	// paths; ProductStates is the size of that graph (Distinct counts system states).
	Liveness      bool       `json:"liveness_checked,omitempty"`
	ProductStates int64      `json:"product_states,omitempty"`
	Distinct      int64      `json:"distinct"`
	Total         int64      `json:"total"`
	Depth         int        `json:"depth"`
	Seconds       float64    `json:"seconds"`
	PerSec        float64    `json:"states_per_sec"`
	CPUSeconds    float64    `json:"cpu_seconds"`
	PerCPUSec     float64    `json:"states_per_cpu_sec"`
	PeakRSS       int64      `json:"peak_rss_bytes"`
	SeenBytes     int64      `json:"seen_bytes"`
	PerState      float64    `json:"seen_bytes_per_state"`
	Collision     float64    `json:"collision_probability"`
	Violation     *string    `json:"violation"`
	Kind          string     `json:"violation_kind,omitempty"`
	Trace         *string    `json:"trace"`
	Properties    []propJSON `json:"properties"`
	// Coverage is the check's rule and property coverage (--coverage).
	Coverage *scenarios.Coverage `json:"coverage,omitempty"`
	// Bitstate describes a bitstate search's array and what it may have missed.
	Bitstate *model.BitstateStats `json:"bitstate,omitempty"`
	// Swarm is "i/n" for member i of an n-member swarm verification (--strategy
	// swarm --shard i/n); Seed is the search's seed (its hash functions and
	// successor order), for a bitstate search that has one.
	Swarm string `json:"swarm,omitempty"`
	Seed  uint64 `json:"seed,omitempty"`
}

type propJSON struct {
	Name   string   `json:"name"`
	Kind   string   `json:"kind"`
	Status string   `json:"status"`
	Depth  int      `json:"depth,omitempty"`
	Steps  []string `json:"steps,omitempty"`
}

func cmdCheck(e *env, args []string) error {
	c := commands["check"]
	fs := newFlags(e, c)
	strategy := fs.String("strategy", "bfs", "search strategy: bfs, dfs, random or swarm (bitstate searches, each with its own seed)")
	workers := fs.Int("workers", 1, "BFS workers (`N` goroutines)")
	maxStates := fs.Int64("max-states", 0, "stop after `N` distinct states (default: no bound)")
	maxDepth := fs.Int("max-depth", 0, "explore at most `N` states deep (random: walk length, default 1000)")
	seedS := fs.String("seed", "1", "random: seed of the walks")
	walks := fs.Int("walks", 0, "random: number of walks (default 100)")
	tracePath := fs.String("trace", "", "write the counterexample to `FILE` (default: a file in the temp directory)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	fair := fs.Bool("fair", false, "same as --fairness weak")
	reportDir := fs.String("report", "", "write the counterexample's (or witness') browsable report to `DIR`")
	fairness := fs.String("fairness", "", "assumption for eventually-properties: weak or none (default: weak for actor systems, none for plain specs)")
	withCoverage := fs.Bool("coverage", false, "count the protocol rules each transition reaches and the states where each property is relevant; print (and --json) them")
	progressMode := fs.String("progress", "auto", "progress on stderr: "+progressModes+" (auto: a live line on a terminal, a line every ~10s otherwise)")
	configName := fs.String("config", "", "check the portfolio configuration `NAME` only")
	store := fs.String("store", "hashcompact", "seen-set: hashcompact (64-bit fingerprints) or bitstate:SIZE (a bit array, e.g. bitstate:512MiB; depth-first; finds violations, proves nothing)")
	maxMem := fs.String("max-memory", "auto", "end the search (exit 4) when the process's resident memory passes `SIZE` (e.g. 512MiB, 8GiB; 0: no bound; auto: three quarters of the machine's memory)")
	shardS := fs.String("shard", "", "swarm: run member `i/n` only (or auto: from a batch engine's environment, as sweep --shard auto); merge the members with 'simrun merge'")
	members := fs.Int("members", 8, "swarm: run `N` members one after another (without --shard)")
	var ps multiFlag
	fs.Var(&ps, "p", "model parameter `name=value` (repeatable)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if len(pos) == 0 {
		if len(set) > 0 {
			return usageErr("check: flags need a MODEL (run 'simrun check' alone for the list)")
		}
		return listModels(e.stdout)
	}
	if err := exactlyArgs(c, pos, 1); err != nil {
		return err
	}
	swarm := *strategy == "swarm"
	if swarm {
		*strategy = "dfs" // each member is a bitstate depth-first search
		if !set["store"] {
			*store = "bitstate:" + defaultSwarmBits
		}
		switch {
		case set["seed"]:
			return usageErr("check: --strategy swarm: each member's seed is its index (--shard i/n); --seed does not apply")
		case set["members"] && set["shard"]:
			return usageErr("check: --strategy swarm: --members runs every member here, --shard one of them: use one")
		case *members < 1 || *members > maxSwarmMembers:
			return usageErr("check: --members must be between 1 and %d (got %d)", maxSwarmMembers, *members)
		}
	} else if set["shard"] || set["members"] {
		return usageErr("check: --shard and --members apply to --strategy swarm")
	}
	st, err := model.ParseStrategy(*strategy)
	if err != nil {
		return usageErr("check: --strategy: %v", err)
	}
	for _, b := range []struct {
		name string
		v    int64
	}{{"workers", int64(*workers)}, {"max-states", *maxStates}, {"max-depth", int64(*maxDepth)}, {"walks", int64(*walks)}} {
		if (set[b.name] || b.name == "workers") && b.v <= 0 {
			return usageErr("check: --%s must be > 0 (got %d)", b.name, b.v)
		}
	}
	if *workers > 255 {
		return usageErr("check: --workers must be <= 255")
	}
	if *workers > 1 && st != model.BFS {
		return usageErr("check: --workers applies to bfs only (%s runs on one worker)", st)
	}
	var bitstate int64
	if swarm && !strings.HasPrefix(*store, "bitstate:") {
		return usageErr("check: --strategy swarm: --store %q: a swarm's members are bitstate searches (--store bitstate:SIZE)", *store)
	}
	switch {
	case *store == "hashcompact":
	case strings.HasPrefix(*store, "bitstate:"):
		n, err := parseMemory(strings.TrimPrefix(*store, "bitstate:"))
		if err != nil || n <= 0 {
			return usageErr("check: --store %q: want bitstate:SIZE with a size such as 512MiB", *store)
		}
		bitstate = n
		if !set["strategy"] {
			st = model.DFS
		}
		if st != model.DFS {
			return usageErr("check: --store bitstate is a depth-first search (--strategy dfs)")
		}
	default:
		return usageErr("check: --store %q: want hashcompact or bitstate:SIZE", *store)
	}
	if set["walks"] && st != model.Random {
		return usageErr("check: --walks applies to --strategy random")
	}
	if set["seed"] && st != model.Random && bitstate == 0 {
		return usageErr("check: --seed applies to --strategy random and to a bitstate search (its hash functions and successor order)")
	}
	switch {
	case *fair && set["fairness"] && *fairness != "weak":
		return usageErr("check: --fair contradicts --fairness %s", *fairness)
	case set["fairness"] && *fairness != "weak" && *fairness != "none":
		return usageErr("check: --fairness %q: want weak or none", *fairness)
	case (*fair || set["fairness"]) && st == model.Random:
		return usageErr("check: --fair and --fairness need a complete search (bfs or dfs); random walks report only finite walks where an eventually-property never held")
	}
	seed, err := parseSeed(*seedS)
	if err != nil {
		return err
	}
	memLimit, err := parseMemory(*maxMem)
	if err != nil {
		return usageErr("check: --max-memory: %v", err)
	}
	if *reportDir != "" {
		if err := writableDir(*reportDir); err != nil {
			return usageErr("check: --report: %v", err)
		}
	}
	params, err := model.ParseAssignments(ps)
	if err != nil {
		return usageErr("check: %v", err)
	}
	m, err := model.Lookup(pos[0])
	if err != nil {
		return usageErr("check: %v", err)
	}
	cf := checkFlags{tracePath: *tracePath, reportDir: *reportDir, asJSON: *asJSON, fair: *fair, fairness: *fairness, coverage: *withCoverage}
	base := model.Options{Strategy: st, Workers: *workers, MaxStates: *maxStates, MaxDepth: *maxDepth, Seed: seed, Walks: *walks, MaxMemory: memLimit, Coverage: *withCoverage, Bitstate: bitstate}
	if bitstate > 0 && !set["seed"] {
		base.Seed = 0 // the default order and hash functions
	}
	tk, err := newTicker(e, "check", *progressMode)
	if err != nil {
		return err
	}
	if bitstate == 0 {
		// A bitstate search keeps no states (only its stack and the memo), so the
		// collector's default suits it: at GOGC 400 exactlyonce -p crashes=2 with a
		// 2 GiB array peaked at 10.5 GiB and ran 30 % slower than at the default.
		defer searchGC(memLimit)()
	}
	if swarm {
		return checkSwarm(e, m, params, *configName, base, cf, tk, *shardS, *members)
	}
	if *configName != "" {
		if len(params) > 0 {
			return usageErr("check: --config picks a configuration of the portfolio; -p picks parameters: use one of them")
		}
		i := slices.IndexFunc(m.Portfolio, func(c model.Config) bool { return c.Name == *configName })
		if i < 0 {
			names := make([]string, len(m.Portfolio))
			for j, c := range m.Portfolio {
				names[j] = c.Name
			}
			if len(names) == 0 {
				return usageErr("check: %s has no portfolio (use -p)", m.Name)
			}
			return usageErr("check: %s has no configuration %q (its portfolio: %s)", m.Name, *configName, strings.Join(names, ", "))
		}
		params = m.Portfolio[i].Params
		if base.MaxStates == 0 {
			base.MaxStates = m.Portfolio[i].MaxStates
		}
	} else if len(params) == 0 && len(m.Portfolio) > 0 {
		if *tracePath != "" || *reportDir != "" {
			return usageErr("check: %s runs its portfolio of %d configurations: --trace and --report apply to one (pick it with --config NAME or -p)", m.Name, len(m.Portfolio))
		}
		return checkPortfolio(e, m, base, cf, tk)
	}
	sys, p, err := m.Instantiate(params)
	if err != nil {
		return usageErr("check: %s", oneLine(err.Error()))
	}
	res, trace, err := checkOne(e, m, sys, p, base, cf, tk, m.Name)
	if err != nil {
		return err
	}
	if *asJSON {
		out, err := checkJSONOf(m, p, res, trace, "")
		if err != nil {
			return err
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		if err := writeCheckText(e.stdout, m, p, res, trace); err != nil {
			return err
		}
		if cf.coverage {
			if err := coverage.ModelCoverage(m.Name, res).WriteText(e.stdout); err != nil {
				return err
			}
		}
	}
	return checkExit(m.Name, res, trace)
}

// searchGC sets the garbage collector for an exhaustive search (not a bitstate one)
// and returns what restores it. Its heap is mostly states it keeps (the frontier, the
// memo): collecting them often buys nothing, and GC was a third of the CPU of a large
// actor check at the default GOGC. So GOGC is 400, with a soft memory limit at nine tenths of the
// search's memory bound (--max-memory), where the collector works harder before the
// bound ends the search. The environment's GOGC or GOMEMLIMIT win.
func searchGC(memLimit int64) (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	untuneGC()
	old := debug.SetGCPercent(400)
	oldLimit := int64(-1)
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set && memLimit > 0 {
		oldLimit = debug.SetMemoryLimit(memLimit / 10 * 9)
	}
	return func() {
		debug.SetGCPercent(old)
		if oldLimit >= 0 {
			debug.SetMemoryLimit(oldLimit)
		}
	}
}

// checkFlags are the check flags that shape what one check writes.
type checkFlags struct {
	tracePath, reportDir string
	asJSON               bool
	fair                 bool
	fairness             string
	coverage             bool
}

// checkOne checks one configuration of m and writes its counterexample (trace, report).
// label names it in progress lines.
func checkOne(e *env, m *model.Model, sys model.System, p *model.Params, o model.Options, cf checkFlags, tk *ticker, label string) (*model.Result, string, error) {
	// Protocol claims assume fair delivery, so an actor system is checked under weak
	// fairness unless --fairness none; a plain spec states its own (TLC's default).
	_, actors := sys.(*model.Actors)
	o.Fair = cf.fair || cf.fairness == "weak" || (cf.fairness == "" && actors && o.Strategy != model.Random)
	o.ProgressEvery = checkProgressEvery
	if tk != nil {
		o.Progress = func(s model.Stats) {
			tk.update(func() string {
				return fmt.Sprintf("check %s: %d distinct, %d generated, queue %d, %.0f states/s", label, s.Distinct, s.Total, s.Queue, s.StatesPerSec)
			})
		}
	}
	res, err := model.Check(sys, o)
	tk.finish(func() string { return "check " + label })
	if err != nil {
		var ie *model.InternalError
		if errors.As(err, &ie) {
			return nil, "", fmt.Errorf("check %s: %v", label, ie.Value)
		}
		return nil, "", usageErr("check: %s", oneLine(err.Error()))
	}
	var trace string
	if v := res.Violation; v != nil && v.HasTrace {
		trace = cf.tracePath
		if trace == "" {
			// A fresh file per run: concurrent checks must not overwrite each other.
			f, err := os.CreateTemp("", fmt.Sprintf("simrun-check-%s-%s-*.jsonl", slug(m.Name), slug(v.Name)))
			if err != nil {
				return nil, "", fmt.Errorf("check: %w", err)
			}
			trace = f.Name()
			f.Close()
		}
		hdr := model.TraceHeader{Format: sim.TraceFormat, Engine: model.TraceEngine, Scenario: m.Name, Seed: o.Seed,
			Params: p.Values(), Property: v.Name, Kind: v.Kind, Strategy: o.Strategy.String(), Cycle: v.Cycle}
		if v.Cycle > 0 {
			hdr.Fairness = map[bool]string{true: "weak", false: "none"}[res.Fair]
		}
		if err := writeTraceFile(trace, res, v, hdr); err != nil {
			return nil, "", err
		}
		if cf.reportDir != "" {
			data, err := scenarios.ReadTrace(trace)
			if err != nil {
				return nil, "", fmt.Errorf("check: %w", err)
			}
			recs, names, err := readRecords(data)
			if err != nil {
				return nil, "", fmt.Errorf("check: reading back %s: %w", trace, err)
			}
			rr := reports.Run{Title: fmt.Sprintf("%s: counterexample of %s %s", m.Name, v.Kind, v.Name), Scenario: m.Name,
				Params: p.Values(), Nodes: names, Records: recs,
				Repro:     checkCommand(m, p, o, cf) + "\n\n# this counterexample's trace, which 'simrun replay' re-executes in the simulator:\n# simrun replay " + scenarios.ShellQuote(trace),
				Violation: &reports.Violation{Property: v.Kind.String() + " " + v.Name, Step: len(recs) - 1, Cycle: v.Cycle},
				Verdicts:  []reports.VerdictLine{{Class: "violated", Property: v.Kind.String() + " " + v.Name, Detail: fmt.Sprintf("depth %d", v.Depth)}}}
			if _, err := reports.WriteRun(cf.reportDir, rr); err != nil {
				return nil, "", err
			}
			fmt.Fprintf(e.stderr, "report: %s\n", filepath.Join(filepath.Clean(cf.reportDir), "index.html"))
		}
	}
	return res, trace, nil
}

// checkCommand is the command that finds the same counterexample again: the model,
// its non-default parameters and the search options that shape the search.
func checkCommand(m *model.Model, p *model.Params, o model.Options, cf checkFlags) string {
	cmd := "simrun check " + scenarios.ShellQuote(m.Name)
	for _, nd := range p.NonDefault() {
		cmd += " -p " + scenarios.ShellQuote(nd)
	}
	if o.Strategy != model.BFS {
		cmd += " --strategy " + o.Strategy.String()
	}
	if o.Bitstate > 0 {
		cmd += " --store bitstate:" + formatBytes(o.Bitstate)
		if o.Seed != 0 {
			cmd += fmt.Sprintf(" --seed %d", o.Seed)
		}
	}
	if o.Strategy == model.Random {
		cmd += fmt.Sprintf(" --seed %d", o.Seed)
		if o.Walks > 0 {
			cmd += fmt.Sprintf(" --walks %d", o.Walks)
		}
	}
	if o.MaxDepth > 0 {
		cmd += fmt.Sprintf(" --max-depth %d", o.MaxDepth)
	}
	if o.MaxStates > 0 {
		cmd += fmt.Sprintf(" --max-states %d", o.MaxStates)
	}
	if cf.fairness != "" {
		cmd += " --fairness " + cf.fairness
	} else if cf.fair {
		cmd += " --fair"
	}
	return cmd
}

// checkExit is the exit of one check: 1 on a violation, 4 when inconclusive.
func checkExit(name string, res *model.Result, trace string) error {
	if v := res.Violation; v != nil {
		if !v.HasTrace {
			return violated("%s: %s %s: no reachable state satisfies it", name, v.Kind, v.Name)
		}
		return violated("%s: %s %s violated at depth %d (trace %s; replay: simrun replay %s)", name, v.Kind, v.Name, v.Depth, trace, scenarios.ShellQuote(trace))
	}
	var unknown []string
	for _, pr := range res.Properties {
		if pr.Status == model.Unknown {
			unknown = append(unknown, pr.Name)
		}
	}
	if res.Outcome != model.Complete || len(unknown) > 0 {
		why := res.Outcome.String()
		if res.Bound != "" {
			why += " (" + res.Bound + ")"
		}
		return inconclusive("%s: inconclusive: %s; %d of %d properties undecided (%s)", name, why, len(unknown), len(res.Properties), strings.Join(unknown, ", "))
	}
	return nil
}

// checkPortfolio checks every configuration of m's portfolio, prints one row each (and
// the details of those that did not pass), and exits with the worst: 1 if one was
// violated, 4 if one was inconclusive, 0 if all passed.
func checkPortfolio(e *env, m *model.Model, base model.Options, cf checkFlags, tk *ticker) error {
	type row struct {
		c     model.Config
		p     *model.Params
		res   *model.Result
		trace string
		exit  error
	}
	var rows []row
	for _, c := range m.Portfolio {
		sys, p, err := m.Instantiate(c.Params)
		if err != nil {
			return fmt.Errorf("check: %s portfolio configuration %s: %v", m.Name, c.Name, err) // a bug of the model's registration
		}
		o := base
		if o.MaxStates == 0 {
			o.MaxStates = c.MaxStates
		}
		res, trace, err := checkOne(e, m, sys, p, o, cf, tk, m.Name+" "+c.Name)
		if err != nil {
			return err
		}
		rows = append(rows, row{c: c, p: p, res: res, trace: trace, exit: checkExit(m.Name+" "+c.Name, res, trace)})
	}
	if cf.asJSON {
		var out struct {
			Model     string      `json:"model"`
			Portfolio []checkJSON `json:"portfolio"`
		}
		out.Model = m.Name
		for _, r := range rows {
			cj, err := checkJSONOf(m, r.p, r.res, r.trace, r.c.Name)
			if err != nil {
				return err
			}
			out.Portfolio = append(out.Portfolio, cj)
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		fmt.Fprintf(&b, "portfolio %s: %d configurations (check one with --config NAME, or your own with -p)\n", m.Name, len(rows))
		width := len("configuration")
		for _, r := range rows {
			width = max(width, len(r.c.Name))
		}
		fmt.Fprintf(&b, "  %-*s %11s %6s %8s %9s %13s  %s\n", width, "configuration", "states", "depth", "seconds", "cpu-sec", "states/cpu-s", "verdict")
		for _, r := range rows {
			fmt.Fprintf(&b, "  %-*s %11d %6d %8.1f %9.1f %13.0f  %s\n", width, r.c.Name, r.res.Distinct, r.res.Depth, r.res.Seconds,
				r.res.CPUSeconds, r.res.StatesPerCPUSec, coverage.ModelVerdict(r.res))
		}
		for _, r := range rows {
			if r.c.Help != "" {
				fmt.Fprintf(&b, "  %-*s  %s: %s\n", width, r.c.Name, coverage.CheckCommand(m.Name, r.c), r.c.Help)
			}
		}
		if _, err := io.WriteString(e.stdout, b.String()); err != nil {
			return err
		}
		for _, r := range rows {
			if r.exit == nil {
				continue
			}
			fmt.Fprintf(e.stdout, "\n--- %s (%s)\n", r.c.Name, coverage.CheckCommand(m.Name, r.c))
			if err := writeCheckText(e.stdout, m, r.p, r.res, r.trace); err != nil {
				return err
			}
		}
		if cf.coverage {
			var parts []*coverage.Part
			for _, r := range rows {
				parts = append(parts, &coverage.Part{Name: r.c.Name, What: coverage.CheckCommand(m.Name, r.c),
					Coverage: coverage.ModelCoverage(m.Name, r.res), Verdict: coverage.ModelVerdict(r.res), Seconds: r.res.Seconds})
			}
			if u := coverage.Union(scenarios.ProtocolOf(m.Name), parts); u != nil {
				fmt.Fprintln(e.stdout)
				if err := u.WriteText(e.stdout); err != nil {
					return err
				}
			}
		}
	}
	var worst *exitError
	for _, r := range rows {
		var ee *exitError
		if errors.As(r.exit, &ee) && (worst == nil || (ee.code == exitViolated && worst.code != exitViolated)) {
			worst = ee
		}
	}
	if worst == nil {
		return nil
	}
	return worst
}

func writeTraceFile(path string, res *model.Result, v *model.PropertyResult, hdr model.TraceHeader) error {
	f, err := os.Create(path)
	if err != nil {
		return usageErr("check: --trace: %v", err)
	}
	werr := res.WriteTrace(f, v, hdr)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("check: writing %s: %w", path, werr)
	}
	return nil
}

func listModels(w io.Writer) error {
	all := model.All()
	width := 0
	for _, m := range all {
		width = max(width, len(m.Name))
	}
	fmt.Fprintln(w, "models (simrun check MODEL [-p name=value]...):")
	for _, m := range all {
		fmt.Fprintf(w, "  %-*s  %s\n", width, m.Name, m.Help)
		for _, p := range m.Params {
			fmt.Fprintf(w, "  %-*s    -p %s=%s  %s\n", width, "", p.Name, p.Default, p.Help)
		}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// maxSteps bounds the steps printed for one witness or counterexample.
const maxSteps = 60

func writeCheckText(w io.Writer, m *model.Model, p *model.Params, res *model.Result, trace string) error {
	fmt.Fprintf(w, "model     %s  %s\n", m.Name, paramsLine(p.Values()))
	fmt.Fprintf(w, "strategy  %s, %d %s\n", res.Strategy, res.Workers, plural(res.Workers, "worker", "workers"))
	outcome := res.Outcome.String()
	if res.Bound != "" {
		outcome += " (" + res.Bound + "): counts so far"
	}
	fmt.Fprintf(w, "outcome   %s\n", outcome)
	if res.LivenessChecked {
		fairness := "no fairness: every cycle counts"
		if res.Fair {
			fairness = "weak fairness"
		}
		fmt.Fprintf(w, "liveness  eventually-properties checked on finite and infinite paths (%s), product graph %d states\n", fairness, res.ProductStates)
	}
	fmt.Fprintf(w, "states    %d distinct, %d generated, depth %d\n", res.Distinct, res.Total, res.Depth)
	fmt.Fprintf(w, "time      %.3fs, %.0f states/s; CPU %.2fs, %.0f states per CPU-second; peak RSS %.1f MiB\n",
		res.Seconds, res.StatesPerSec, res.CPUSeconds, res.StatesPerCPUSec, float64(res.PeakRSS)/(1<<20))
	if b := res.Bitstate; b != nil {
		fmt.Fprintf(w, "seen-set  bitstate %.1f MiB, %d hash functions, %.2g%% of bits set; about %.3g new states taken for seen ones (a lower bound of those missed): explored at most %.4g%% of what it met\n",
			float64(b.Bytes)/(1<<20), b.HashFunctions, 100*b.Fill, b.Missed, 100*b.Coverage(res.Distinct))
	} else {
		coll := fmt.Sprintf("fingerprint collision probability %.2g (TLC's estimate)", res.Collision)
		if res.Collision == 0 && res.Distinct > 0 {
			coll = "fingerprint collisions: none possible or none estimated"
		}
		fmt.Fprintf(w, "seen-set  %.1f MiB, %.1f bytes/state; %s\n", float64(res.SeenBytes)/(1<<20), res.BytesPerState, coll)
	}
	fmt.Fprintln(w, "properties")
	for _, pr := range res.Properties {
		line := fmt.Sprintf("  %-10s %s: %s", pr.Kind, pr.Name, pr.Status)
		if pr.HasTrace {
			line += fmt.Sprintf(" (depth %d)", pr.Depth)
		}
		if pr.Cycle > 0 {
			what := "a fair cycle"
			if !res.Fair {
				what = "a cycle (no fairness assumed)"
			}
			line += fmt.Sprintf(", %s back to step %d", what, pr.Cycle-1)
		}
		if pr.Why != "" {
			line += " (" + pr.Why + ")"
		}
		fmt.Fprintln(w, line)
		if !pr.HasTrace {
			continue
		}
		steps, err := res.Steps(pr)
		if err != nil {
			return err
		}
		for i, s := range steps {
			if i == maxSteps {
				fmt.Fprintf(w, "      … %d more steps\n", len(steps)-maxSteps)
				break
			}
			fmt.Fprintf(w, "    %3d %s\n", i, s)
		}
	}
	if trace != "" {
		fmt.Fprintf(w, "trace     %s (replay: simrun replay %s)\n", trace, scenarios.ShellQuote(trace))
	}
	return nil
}

func checkJSONOf(m *model.Model, p *model.Params, res *model.Result, trace, config string) (checkJSON, error) {
	out := checkJSON{
		Model: m.Name, Config: config, Params: p.Values(), Strategy: res.Strategy.String(), Workers: res.Workers,
		Outcome: res.Outcome.String(), Bound: res.Bound, Fair: res.Fair,
		Liveness: res.LivenessChecked, ProductStates: res.ProductStates,
		Distinct: res.Distinct, Total: res.Total, Depth: res.Depth, Seconds: res.Seconds, PerSec: res.StatesPerSec,
		CPUSeconds: res.CPUSeconds, PerCPUSec: res.StatesPerCPUSec,
		PeakRSS: res.PeakRSS, SeenBytes: res.SeenBytes, PerState: res.BytesPerState, Collision: res.Collision,
	}
	if v := res.Violation; v != nil {
		name := v.Name
		out.Violation, out.Kind = &name, v.Kind.String()
	}
	if trace != "" {
		out.Trace = &trace
	}
	for _, pr := range res.Properties {
		pj := propJSON{Name: pr.Name, Kind: pr.Kind.String(), Status: pr.Status.String(), Depth: pr.Depth}
		if pr.HasTrace {
			steps, err := res.Steps(pr)
			if err != nil {
				return out, err
			}
			pj.Steps = steps
		}
		out.Properties = append(out.Properties, pj)
	}
	if res.Coverage != nil {
		out.Coverage = coverage.ModelCoverage(m.Name, res)
	}
	out.Bitstate = res.Bitstate
	return out, nil
}

// replayModel re-executes a model-checker trace (simrun replay dispatches on the
// header's engine).
func replayModel(data []byte) ([]byte, error) {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	var h model.TraceHeader
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, usageErr("replay: trace header: %v", err)
	}
	m, err := model.Lookup(h.Scenario)
	if err != nil {
		return nil, usageErr("replay: %v", err)
	}
	sys, _, err := m.Instantiate(h.Params)
	if err != nil {
		return nil, usageErr("replay: %s", oneLine(err.Error()))
	}
	out, err := model.Replay(sys, data)
	if err != nil {
		var ie *model.InternalError
		if errors.As(err, &ie) {
			return nil, err
		}
		return nil, usageErr("replay: %s", oneLine(err.Error()))
	}
	return out, nil
}

// parseMemory reads --max-memory: "auto" (three quarters of the machine's memory, or no
// bound where it cannot be read), "0" (no bound), or a size with a unit (KiB, MiB,
// GiB, TiB).
func parseMemory(v string) (int64, error) {
	if v == "auto" {
		return machineMemory() / 4 * 3, nil
	}
	if v == "0" {
		return 0, nil
	}
	units := []struct {
		suffix string
		shift  uint
	}{{"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			n, err := strconv.ParseFloat(num, 64)
			if err != nil || !(n > 0) || n*float64(int64(1)<<u.shift) > 1<<60 {
				break
			}
			return int64(n * float64(int64(1)<<u.shift)), nil
		}
	}
	return 0, fmt.Errorf("%q: want a size such as 512MiB or 8GiB, 0 (no bound) or auto", v)
}

// machineMemory returns the machine's memory in bytes (MemTotal of /proc/meminfo), 0
// where it cannot be read.
func machineMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}
