package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/simrun-dev/simrun/coverage"
	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

func init() {
	register(&command{
		name:  "coverage",
		args:  "[PROTOCOL] [--seeds N] [--workers N] [--json] [--report DIR] [--progress auto|always|never]",
		short: "run a protocol's default swarm and model portfolio with rule coverage; exit 1 if a rule is unreached, a property vacuous or a part fails; alone, list the protocols",
		run:   cmdCoverage,
	})
}

func cmdCoverage(e *env, args []string) error {
	c := commands["coverage"]
	fs := newFlags(e, c)
	seedsS := fs.String("seeds", strconv.Itoa(coverage.DefaultSeeds), "swarm seeds 1..`N`")
	workers := fs.Int("workers", 0, "swarm workers (default: one per CPU)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	reportDir := fs.String("report", "", "write the rules × parts heat map to `DIR`/index.html")
	progressMode := fs.String("progress", "auto", "progress on stderr: "+progressModes)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		fmt.Fprintln(e.stdout, "protocols with a rule map (simrun coverage PROTOCOL):")
		for _, p := range sim.RuleMaps() {
			fmt.Fprintf(e.stdout, "  %-12s %d rules\n", p, len(sim.Rules(p)))
		}
		return nil
	}
	if err := exactlyArgs(c, pos, 1); err != nil {
		return err
	}
	seeds, err := strconv.ParseUint(*seedsS, 10, 64)
	if err != nil || seeds == 0 || seeds > 10_000_000 {
		return usageErr("coverage: --seeds %q: want a count from 1 to 10000000", *seedsS)
	}
	if *workers < 0 {
		return usageErr("coverage: --workers must be >= 1")
	}
	if len(sim.Rules(pos[0])) == 0 {
		return usageErr("coverage: %q declares no rule map (protocols with one: %s)", pos[0], strings.Join(sim.RuleMaps(), ", "))
	}
	if *reportDir != "" {
		if err := writableDir(*reportDir); err != nil {
			return usageErr("coverage: --report: %v", err)
		}
	}
	tk, err := newTicker(e, "coverage", *progressMode)
	if err != nil {
		return err
	}
	current := ""
	rep, err := coverage.Protocol(pos[0], coverage.Options{Seeds: seeds, Workers: *workers, Progress: func(what string) {
		current = what
		tk.update(func() string { return "coverage " + pos[0] + ": " + current })
	}})
	tk.finish(func() string { return "coverage " + pos[0] })
	if err != nil {
		return usageErr("%s", oneLine(err.Error()))
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := rep.WriteText(e.stdout); err != nil {
		return err
	}
	if *reportDir != "" {
		page := reports.CoveragePage{Title: "Rule coverage of " + pos[0], Command: "simrun coverage " + scenarios.ShellJoin(args...)}
		var names []string
		var covs []*scenarios.Coverage
		for _, p := range rep.Parts {
			page.Parts = append(page.Parts, [3]string{p.Name, p.Verdict, p.What})
			names = append(names, p.Name)
			covs = append(covs, p.Coverage)
		}
		page.Coverage = coverageView(names, covs)
		if _, err := reports.WriteCoverage(*reportDir, page); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "report: %s\n", filepath.Join(filepath.Clean(*reportDir), "index.html"))
	}
	var bad []string
	for _, p := range rep.Parts {
		if p.Verdict != "ok" {
			bad = append(bad, p.Name+" "+p.Verdict)
		}
	}
	if un := rep.Unreached(); len(un) > 0 {
		bad = append(bad, fmt.Sprintf("%d rules not reached", len(un)))
	}
	if v := rep.Vacuous(); len(v) > 0 {
		bad = append(bad, fmt.Sprintf("%d properties vacuous or uncounted", len(v)))
	}
	if len(bad) > 0 {
		return violated("coverage %s: %s", pos[0], strings.Join(bad, "; "))
	}
	return nil
}

// coverageView turns coverage parts into a page section (columns in order).
func coverageView(names []string, covs []*scenarios.Coverage) *reports.Coverage {
	v := &reports.Coverage{}
	if len(covs) == 0 {
		return v
	}
	v.Protocol = covs[0].Protocol
	idx := map[[2]string]int{}
	for i, cv := range covs {
		v.Columns = append(v.Columns, names[i])
		v.Totals = append(v.Totals, cv.Total)
		v.Units = append(v.Units, cv.Unit)
		for _, r := range cv.Rules {
			k := [2]string{r.Protocol, r.Tag}
			j, ok := idx[k]
			if !ok {
				tag := r.Tag
				if r.Protocol != v.Protocol {
					tag = r.Protocol + ": " + r.Tag
				}
				j = len(v.Rules)
				idx[k] = j
				v.Rules = append(v.Rules, reports.CoverageRule{Tag: tag, NoBranch: r.NoBranch, Reached: make([]int64, len(covs))})
			}
			v.Rules[j].Reached[i] = r.Reached
		}
		for _, p := range cv.Properties {
			v.Props = append(v.Props, reports.CoverageProp{Column: names[i], Name: p.Name, Checked: p.Checked, Exempt: p.Exempt, Status: p.Status})
		}
	}
	return v
}
