// Command guidedeval measures guided sweeps and shrinking on every planted bug of the
// protocols' swarms (Scenario.PlantedBugs: the -p bug= variants): for each bug, the
// runs a uniform sweep (seeds 1, 2, ...) and a guided sweep need to its first failure,
// within the same budget, and the shrink of the uniform sweep's first failing run
// (faults and events before and after, candidate runs, CPU seconds); and, without a
// bug, the features (rule buckets and call shapes) each kind of sweep has seen after
// every run. It writes the tables as CSV, two figures and a page (reports), and prints
// the tables.
//
//	go run ./tools/guidedeval -out /tmp/guided -budget 2000
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"

	_ "github.com/simrun-dev/simrun/scenarios/exactlyonce"
	_ "github.com/simrun-dev/simrun/scenarios/leasing"
	_ "github.com/simrun-dev/simrun/scenarios/replication"
	_ "github.com/simrun-dev/simrun/scenarios/saga"
	_ "github.com/simrun-dev/simrun/scenarios/winkowski"
)

func main() {
	out := flag.String("out", "", "write CSV, figures and index.html to `DIR`")
	budget := flag.Int("budget", 2000, "runs per sweep")
	only := flag.String("only", "", "comma-separated protocols (default: every swarm with planted bugs)")
	workers := flag.Int("workers", 0, "runs in parallel (default: one per CPU)")
	shrinkRuns := flag.Int("shrink-runs", 1000, "candidate runs per shrink")
	flag.Parse()
	if err := run(*out, *budget, *only, *workers, *shrinkRuns); err != nil {
		fmt.Fprintln(os.Stderr, "guidedeval:", err)
		os.Exit(1)
	}
}

func cpu() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func run(out string, budget int, only string, workers, shrinkRuns int) error {
	var swarms []*scenarios.Scenario
	for _, sc := range scenarios.All() {
		proto, _, _ := strings.Cut(sc.Name, "/")
		if strings.HasSuffix(sc.Name, "/swarm") && len(sc.PlantedBugs()) > 0 && (only == "" || slices.Contains(strings.Split(only, ","), proto)) {
			swarms = append(swarms, sc)
		}
	}
	bugs := reports.NewTable("Runs to the first failure, guided and uniform sweeps of every planted bug",
		"bug", "index", "uniform", "guided", "ratio")
	shrink := reports.NewTable("Shrinking the uniform sweep's first failing run",
		"bug", "property", "faults before", "faults after", "events before", "events after", "candidate runs", "cpu seconds", "minimal")
	curves := reports.NewTable("Features seen against runs, guided and uniform (no bug)",
		"protocol", "sweep", "runs", "features")
	var ratios []float64
	idx := 0
	for _, sc := range swarms {
		proto, _, _ := strings.Cut(sc.Name, "/")
		fmt.Fprintf(os.Stderr, "%s: coverage curves\n", sc.Name)
		c, err := scenarios.CompareGuided(sc.Name, nil, budget, false, workers)
		if err != nil {
			return err
		}
		for _, s := range []struct {
			name string
			f    []int
		}{{"uniform", c.Uniform.Features}, {"guided", c.Guided.Features}} {
			for i := 0; i < len(s.f); i++ {
				if i == 0 || (i+1)%max(1, budget/40) == 0 || i == len(s.f)-1 {
					curves.Add(proto, s.name, i+1, s.f[i])
				}
			}
		}
		for _, bug := range sc.PlantedBugs() {
			idx++
			name := proto + "/" + bug
			fmt.Fprintf(os.Stderr, "%s: uniform and guided\n", name)
			c, err := scenarios.CompareGuided(sc.Name, map[string]string{"bug": bug}, budget, true, workers)
			if err != nil {
				return err
			}
			cell := func(n int) any {
				if n == 0 {
					return "-" // not found within the budget (the figure leaves it out)
				}
				return n
			}
			ratio := "-"
			if c.Uniform.FirstFailure > 0 && c.Guided.FirstFailure > 0 {
				r := float64(c.Uniform.FirstFailure) / float64(c.Guided.FirstFailure)
				ratios = append(ratios, r)
				ratio = fmt.Sprintf("%.2f", r)
			}
			bugs.Add(name, idx, cell(c.Uniform.FirstFailure), cell(c.Guided.FirstFailure), ratio)
			if c.Uniform.FirstFailure == 0 {
				continue
			}
			seed := uint64(c.Uniform.FirstFailure)
			rep, err := scenarios.Run(sc, scenarios.Options{Seed: seed, Params: map[string]string{"bug": bug}})
			if err != nil {
				return err
			}
			t0 := cpu()
			res, err := scenarios.Shrink(scenarios.ShrinkOptions{Scenario: sc.Name, Seed: seed, Params: map[string]string{"bug": bug},
				Faults: rep.Faults, MaxRuns: shrinkRuns, Workers: workers})
			if err != nil {
				return err
			}
			shrink.Add(name, res.Property, res.FaultsBefore, res.FaultsAfter, res.EventsBefore, res.EventsAfter, res.Runs,
				fmt.Sprintf("%.1f", cpu()-t0), res.Complete)
		}
	}
	// Summaries.
	if len(ratios) > 0 {
		sort.Float64s(ratios)
		med := ratios[len(ratios)/2]
		if len(ratios)%2 == 0 {
			med = (ratios[len(ratios)/2-1] + ratios[len(ratios)/2]) / 2
		}
		bugs.Notes = append(bugs.Notes, fmt.Sprintf("median ratio uniform/guided over the %d bugs both found: %.2f", len(ratios), med))
	}
	missed := 0
	for _, r := range bugs.Rows {
		if r[2] != "-" && r[3] == "-" {
			missed++
		}
	}
	bugs.Notes = append(bugs.Notes, fmt.Sprintf("\"-\": not found within %d runs", budget),
		fmt.Sprintf("bugs the uniform sweep found within %d runs and the guided one did not: %d", budget, missed))
	small, n := 0, 0
	for _, r := range shrink.Rows {
		n++
		if f := r[3]; f == "0" || f == "1" || f == "2" || f == "3" {
			small++
		}
	}
	if n > 0 {
		shrink.Notes = append(shrink.Notes, fmt.Sprintf("shrunk runs with at most 3 faults: %d of %d (%.0f %%)", small, n, 100*float64(small)/float64(n)))
	}
	bugs.Figures = []reports.Figure{{Name: "runs-to-failure", Title: "Runs to the first failure per planted bug",
		X: "index", Ys: []reports.YSeries{{Name: "uniform", Y: "uniform"}, {Name: "guided", Y: "guided"}}, Legend: "sweep",
		XLabel: "planted bug (see the table)", YLabel: "runs to the first failure", LogY: true, Points: true,
		Caption: "Each planted bug's first failing run, uniform seeds against the guided sweep, same budget (missing points: not found within it). " + strings.Join(bugs.Notes, "; ") + "."}}
	curves.Figures = []reports.Figure{{Name: "features-vs-runs", Title: "Features seen against runs", X: "runs", Y: "features",
		Series: "sweep", Legend: "sweep", Facet: "protocol", FacetName: "protocol", Lines: true, FreeY: true, ZeroY: true,
		XLabel: "runs", YLabel: "features seen",
		Caption: "How fast each kind of sweep meets new behaviour, without a planted bug: distinct features (rule buckets, handler-call shapes) seen after each run; each panel has its own scale."}}
	for _, t := range []*reports.Table{bugs, shrink, curves} {
		if err := t.WriteText(os.Stdout); err != nil {
			return err
		}
		fmt.Println()
	}
	if out == "" {
		return nil
	}
	_, err := reports.WriteExperiment(out, reports.Experiment{Name: "guided sweeps and shrinking",
		Help:    "runs to the first failure of every planted bug, guided against uniform; shrinking of the uniform first failures; features against runs",
		Params:  map[string]string{"budget": fmt.Sprint(budget), "shrink-runs": fmt.Sprint(shrinkRuns)},
		Command: fmt.Sprintf("go run ./tools/guidedeval -out %s -budget %d", out, budget), Tables: []*reports.Table{bugs, shrink, curves}})
	return err
}
