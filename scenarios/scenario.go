// Package scenarios holds named, seeded scenarios — topology, workload, fault plan,
// properties and stop rule — in a registry the command line lists, runs, sweeps and
// replays. Each protocol registers its scenarios from its own file (demo.go,
// exactlyonce.go, ...) with Register in an init function.
package scenarios

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/sim"
)

// Scenario is a named, seeded scenario: either a single run (Build) or an experiment
// that runs many and reports tables (Experiment).
type Scenario struct {
	Name string
	// Help is one line for `simrun list`.
	Help   string
	Params []Param
	// Suite puts the scenario in the default `simrun` suite.
	Suite bool
	// Build sets up one run.
	Build func(b *Build) (*Setup, error)
	// Experiment runs many runs and returns tables (printed, and written as CSV with
	// --out DIR).
	Experiment func(x *Exp) ([]*reports.Table, error)
	// Bugs lists the planted broken variants the scenario runs with -p bug=NAME (the
	// default "none" left out): the measurements of the checks (guided against uniform
	// sweeps, shrinking) run every one of them.
	Bugs []string
}

// Setup is one run, ready to go.
type Setup struct {
	Nodes   []sim.NodeSpec
	Network sim.Network
	Clocks  []sim.Clock
	// Faults is the plan applied to the run (normally Build.FaultPlan's answer).
	Faults faults.Plan
	// Workload schedules injections on the kernel before the run.
	Workload func(k *sim.Kernel)
	// Until, MaxTime, MaxEvents, Observations: see sim.Config.
	Until        sim.Time
	MaxTime      sim.Time
	MaxEvents    int64
	Observations int
	// Stop, when set, ends the run as soon as it holds (checked after every event).
	Stop func(k *sim.Kernel) bool
	// Properties are checked on every run.
	Properties []checker.Property
	// Expected names the properties this scenario expects to be violated, with why
	// (it breaks an assumption they rest on): their safety and liveness violations
	// become Expected verdicts, counted but not failures.
	Expected map[string]string
	// Metrics returns protocol-specific metrics for the JSON report (optional).
	Metrics func(r *sim.Result) any
	// Summary, when set, is text the scenario prints after the verdicts (a table of
	// what happened: the replication chapter-6 experiment's failovers, say).
	Summary func(r *checker.Run) string
	// Notes are settings the scenario drew from the seed rather than took from its
	// parameters (a swarm's topology, say): the report prints them after the
	// parameters, so what ran is visible without the JSON metrics.
	Notes []string
}

// Build is what a scenario's Build function receives.
type Build struct {
	Seed   uint64
	Params *Params
	// Faults overrides the scenario's own fault plan (from --faults, a replayed
	// header, or a property test); nil means the scenario draws its plan.
	Faults *faults.Plan
}

// FaultPlan returns the override plan if there is one, otherwise gen's plan.
func (b *Build) FaultPlan(gen func() (faults.Plan, error)) (faults.Plan, error) {
	if b.Faults != nil {
		return *b.Faults, nil
	}
	return gen()
}

// Exp is what an experiment receives.
type Exp struct {
	Seed   uint64
	Params *Params
	// Out is the output directory for CSV tables, "" for none.
	Out string
	// Progress reports progress on long experiments (may be a no-op).
	Progress func(done, total int)
}

var registry = map[string]*Scenario{}

// Register adds a scenario; a duplicate or malformed entry panics (a programming
// error caught by every test run).
func Register(s *Scenario) {
	if s.Name == "" || (s.Build == nil) == (s.Experiment == nil) {
		panic(fmt.Sprintf("scenarios: %q needs a name and exactly one of Build, Experiment", s.Name))
	}
	if _, dup := registry[s.Name]; dup {
		panic("scenarios: duplicate scenario " + s.Name)
	}
	seen := map[string]bool{}
	for _, p := range s.Params {
		if seen[p.Name] {
			panic(fmt.Sprintf("scenarios: %s: duplicate parameter %s", s.Name, p.Name))
		}
		seen[p.Name] = true
	}
	registry[s.Name] = s
}

// SetBugs records the planted variants (-p bug=NAME) of the scenarios named, "none"
// left out (a protocol package calls it from its bug list's init, before or after it
// registers them).
func SetBugs(bugs []string, names ...string) {
	bugs = slices.DeleteFunc(slices.Clone(bugs), func(b string) bool { return b == "none" })
	for _, n := range names {
		bugsOf[n] = bugs
	}
}

var bugsOf = map[string][]string{}

// PlantedBugs returns the scenario's planted variants (Bugs, or what SetBugs recorded).
func (s *Scenario) PlantedBugs() []string {
	if len(s.Bugs) > 0 {
		return s.Bugs
	}
	return bugsOf[s.Name]
}

// All returns every scenario sorted by name.
func All() []*Scenario {
	out := make([]*Scenario, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Suite returns the scenarios of the default suite, sorted by name.
func Suite() []*Scenario {
	return slices.DeleteFunc(All(), func(s *Scenario) bool { return !s.Suite })
}

// Lookup finds a scenario by name.
func Lookup(name string) (*Scenario, error) {
	if s, ok := registry[name]; ok {
		return s, nil
	}
	var near []string
	for _, s := range All() {
		if strings.HasPrefix(s.Name, name) || strings.Contains(s.Name, name) {
			near = append(near, s.Name)
		}
	}
	if len(near) > 0 && len(near) <= 8 {
		return nil, fmt.Errorf("unknown scenario %q (did you mean %s?)", name, strings.Join(near, ", "))
	}
	return nil, fmt.Errorf("unknown scenario %q (see 'simrun list')", name)
}

// Item is one unit of work a liveness property waits for: a request, an agent, a
// task. Start is when it was issued; Done when it completed (if Completed).
type Item struct {
	Name      string
	Start     sim.Time
	Done      sim.Time
	Completed bool
}

// Bounded returns a bounded-liveness property: every item must complete, and by
// max(its start, the time the faults settled) + bound. That is "after the heal at H
// every X completes by H+B", sharpened for work issued after the heal. A pass says how
// many items it checked ("12 checked"): items the scenario exempts (e.g. work on a
// node that crashed for good) are not in the list, and "0 checked" shows a vacuous
// pass.
func Bounded(name string, bound time.Duration, items func(r *checker.Run) []Item) checker.Property {
	return boundedList(name, bound, func(r *checker.Run) itemList {
		all := items(r)
		return itemList{n: len(all), at: func(i int) Item { return all[i] }, name: func(i int) string { return all[i].Name }}
	})
}

// itemList is what a bounded-liveness property checks: n items, at(i) each, named by
// name(i) only when one is reported (a run of millions of operations names none).
type itemList struct {
	n    int
	at   func(i int) Item
	name func(i int) string
}

// boundedList is Bounded over an itemList.
func boundedList(name string, bound time.Duration, items func(r *checker.Run) itemList) checker.Property {
	return checker.Property{
		Name:             name,
		Class:            checker.Liveness,
		NeedsCompleteRun: true,
		Check: func(r *checker.Run) error {
			var missing []string
			nMissing := 0
			all := items(r)
			r.Note(fmt.Sprintf("%d checked", all.n))
			for i := range all.n {
				it := all.at(i)
				deadline := max(it.Start, r.Settled).Add(bound)
				switch {
				case !it.Completed:
					if nMissing++; nMissing <= 5 {
						missing = append(missing, all.name(i))
					}
				case it.Done > deadline:
					return fmt.Errorf("%s issued at %v completed at %v, later than %v after max(issue, settled at %v)",
						all.name(i), it.Start, it.Done, bound, r.Settled)
				}
			}
			if nMissing > 0 {
				show := missing
				if nMissing > 5 {
					show = append(show, fmt.Sprintf("… %d more", nMissing-5))
				}
				return fmt.Errorf("%d never completed (faults settled at %v, run ended at %v): %s",
					nMissing, r.Settled, r.Time, strings.Join(show, ", "))
			}
			return nil
		},
	}
}
