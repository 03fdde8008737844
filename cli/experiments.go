package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
)

func init() {
	register(&command{
		name:  "experiments",
		args:  "--out DIR [--seed N] [--only NAME,...] [--progress auto|always|never]",
		short: "run every experiment of the papers and write one index page linking them, with each paper claim, simrun's number and the verdict",
		long: "Runs every [experiment] of 'simrun list' at its default parameters (as 'simrun run EXP\n" +
			"--out DIR/EXP' would) and writes DIR/index.html: one row per claim of the papers —\n" +
			"where the paper makes it, what it says, what simrun measured and whether it holds,\n" +
			"does not hold, or the paper gives no number — a thumbnail of each experiment's first\n" +
			"figure, and DIR/claims.csv. Exit 0 when every experiment ran (a claim that does not\n" +
			"hold is a finding, not a failure), 1 when a run violated a property, 2 on bad input.",
		run: cmdExperiments,
	})
}

func cmdExperiments(e *env, args []string) error {
	c := commands["experiments"]
	fs := newFlags(e, c)
	out := fs.String("out", "", "write the experiments' directories and the index to `DIR`")
	seedS := fs.String("seed", "1", "seed of every experiment")
	only := fs.String("only", "", "run only these experiments (comma-separated names)")
	progressMode := fs.String("progress", "auto", "progress on stderr: "+progressModes)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := exactlyArgs(c, pos, 0); err != nil {
		return err
	}
	if *out == "" {
		return usageErr("experiments: --out DIR is required (the index and every experiment's page go there)")
	}
	seed, err := parseSeed(*seedS)
	if err != nil {
		return err
	}
	var exps []*scenarios.Scenario
	for _, sc := range scenarios.All() {
		if sc.Experiment != nil {
			exps = append(exps, sc)
		}
	}
	if *only != "" {
		var pick []*scenarios.Scenario
		for _, n := range strings.Split(*only, ",") {
			i := slices.IndexFunc(exps, func(s *scenarios.Scenario) bool { return s.Name == strings.TrimSpace(n) })
			if i < 0 {
				return usageErr("experiments: --only: %q is not an experiment (see 'simrun list')", n)
			}
			pick = append(pick, exps[i])
		}
		exps = pick
	}
	if err := writableDir(*out); err != nil {
		return usageErr("experiments: --out: %v", err)
	}
	tk, err := newTicker(e, "experiments", *progressMode)
	if err != nil {
		return err
	}
	var entries []reports.IndexEntry
	var files []string
	for i, sc := range exps {
		var mu sync.Mutex
		var last [2]int
		line := func() string {
			mu.Lock()
			defer mu.Unlock()
			return fmt.Sprintf("experiments: %d/%d %s: %d/%d runs", i+1, len(exps), sc.Name, last[0], last[1])
		}
		ps, err := scenarios.NewParams(sc.Params, nil)
		if err != nil {
			return err
		}
		cpu0 := cpuTime()
		tables, err := sc.Experiment(&scenarios.Exp{Seed: seed, Params: ps, Progress: func(done, total int) {
			mu.Lock()
			last = [2]int{done, total}
			mu.Unlock()
			tk.update(line)
		}})
		if err != nil {
			tk.finish(line)
			if scenarios.IsInputError(err) {
				return usageErr("%s: %v", sc.Name, err)
			}
			return violated("%s: %v", sc.Name, err)
		}
		cpu := cpuTime() - cpu0
		dir := reports.IndexDir(sc.Name)
		cmd := fmt.Sprintf("simrun run %s --seed %d --out %s", scenarios.ShellQuote(sc.Name), seed, scenarios.ShellQuote(filepath.Join(*out, dir)))
		written, err := reports.WriteExperiment(filepath.Join(*out, dir), reports.Experiment{
			Name: sc.Name, Help: sc.Help, Seed: seed, Params: ps.Values(), Command: cmd, Tables: tables, Up: "../index.html",
		})
		if err != nil {
			return err
		}
		files = append(files, written...)
		entry := reports.IndexEntry{Name: sc.Name, Help: sc.Help, Dir: dir, Runs: last[1], CPU: cpu.Round(10 * time.Millisecond)}
		for _, t := range tables {
			entry.Claims = append(entry.Claims, t.Claims...)
			if entry.Figure == "" && len(t.Figures) > 0 {
				entry.Figure = dir + "/" + t.Figures[0].Name + ".svg"
			}
		}
		entries = append(entries, entry)
		fmt.Fprintf(e.stderr, "%s: %d runs, %v CPU, %d claims\n", sc.Name, last[1], cpu.Round(10*time.Millisecond), len(entry.Claims))
	}
	tk.finish(func() string { return fmt.Sprintf("experiments: %d done", len(exps)) })
	cmd := fmt.Sprintf("simrun experiments --seed %d --out %s", seed, scenarios.ShellQuote(*out))
	if *only != "" {
		cmd += " --only " + scenarios.ShellQuote(*only)
	}
	idx, err := reports.WriteIndex(*out, cmd, entries)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %d files to %s: open %s\n", len(files)+len(idx), filepath.Clean(*out), filepath.Join(filepath.Clean(*out), "index.html"))
	return nil
}
