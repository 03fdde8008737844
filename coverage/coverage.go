// Package coverage measures what a protocol's default verification reaches: its
// default swarm (the scenario "P/swarm" on seeds 1..N) and its model's check portfolio
// (model "P", every configuration of model.Model.Portfolio), each with rule coverage
// on. The union says which rules of the protocol's rule map (sim.NewRuleMap) nothing
// reaches and which properties judged nothing — the two ways a one-line bug in a rule
// passes every check. `simrun coverage P` prints it; each protocol's tests require
// every branched rule reached and no default property vacuous.
package coverage

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// DefaultSeeds is the size of the default swarm (seeds 1..DefaultSeeds).
const DefaultSeeds = 2000

// Options configures Protocol.
type Options struct {
	// Seeds is the number of swarm seeds (0: DefaultSeeds).
	Seeds uint64
	// Workers runs swarm seeds (and BFS) in parallel (0: one per CPU for the swarm,
	// one for the models).
	Workers int
	// NoSwarm and NoModel leave a part out (tests of one part).
	NoSwarm, NoModel bool
	// Configs, when set, names the portfolio configurations to check (default: all).
	Configs []string
	// Progress, when set, is told what runs ("swarm", "model even-stage").
	Progress func(what string)
}

// Part is one source of coverage: the swarm, or one portfolio configuration.
type Part struct {
	// Name is "swarm" or the portfolio configuration's name.
	Name string `json:"name"`
	// What is the command that reproduces it.
	What     string              `json:"what"`
	Coverage *scenarios.Coverage `json:"coverage"`
	// Verdict is the part's outcome ("ok", "failed 3 of 2000", "violated: ...",
	// "inconclusive: ...").
	Verdict string  `json:"verdict"`
	Seconds float64 `json:"seconds"`
}

// Report is the union over the parts.
type Report struct {
	Protocol string  `json:"protocol"`
	Parts    []*Part `json:"parts"`
	// Rules lists every rule of the protocol with, per part (in Parts order), how many
	// runs or transitions reached it.
	Rules []RuleRow `json:"rules"`
	// Properties lists every property of every part with its status there.
	Properties []PropRow `json:"properties"`
}

// RuleRow is one rule across the parts.
type RuleRow struct {
	Tag      string  `json:"tag"`
	NoBranch string  `json:"no_branch,omitempty"`
	Reached  []int64 `json:"reached"`
}

// Any reports whether some part reached the rule.
func (r RuleRow) Any() bool {
	return slices.ContainsFunc(r.Reached, func(n int64) bool { return n > 0 })
}

// PropRow is one property of one part.
type PropRow struct {
	Part string `json:"part"`
	scenarios.PropertyCoverage
}

// Unreached returns the branched rules no part reached.
func (r *Report) Unreached() []RuleRow {
	var out []RuleRow
	for _, row := range r.Rules {
		if row.NoBranch == "" && !row.Any() {
			out = append(out, row)
		}
	}
	return out
}

// Vacuous returns the properties that judged nothing (or never said) in their part.
func (r *Report) Vacuous() []PropRow {
	var out []PropRow
	for _, p := range r.Properties {
		if p.Status == "vacuous" || p.Status == "uncounted" {
			out = append(out, p)
		}
	}
	return out
}

// Protocol runs protocol name's default swarm and model portfolio with coverage on (a
// protocol without a registered model of its name has only its swarm).
func Protocol(name string, o Options) (*Report, error) {
	if len(sim.Rules(name)) == 0 {
		return nil, fmt.Errorf("coverage: %q declares no rule map (protocols with one: %s)", name, strings.Join(sim.RuleMaps(), ", "))
	}
	seeds := o.Seeds
	if seeds == 0 {
		seeds = DefaultSeeds
	}
	rep := &Report{Protocol: name}
	progress := func(s string) {
		if o.Progress != nil {
			o.Progress(s)
		}
	}
	if !o.NoSwarm {
		sc := name + "/swarm"
		progress("swarm " + sc)
		start := time.Now()
		res, err := scenarios.Sweep(scenarios.SweepOptions{Scenario: sc, From: 1, To: seeds, Workers: o.Workers, Coverage: true})
		if err != nil {
			return nil, fmt.Errorf("coverage: %w", err)
		}
		v := "ok"
		if res.Failed > 0 {
			v = fmt.Sprintf("failed %d of %d", res.Failed, res.Runs)
		}
		rep.Parts = append(rep.Parts, &Part{Name: "swarm", What: fmt.Sprintf("simrun sweep %s --seeds 1-%d", sc, seeds),
			Coverage: res.Coverage, Verdict: v, Seconds: time.Since(start).Seconds()})
	}
	if m, err := model.Lookup(name); err == nil && !o.NoModel {
		configs := m.Portfolio
		if len(configs) == 0 {
			configs = []model.Config{{Name: "default"}}
		}
		if len(o.Configs) > 0 {
			var picked []model.Config
			for _, want := range o.Configs {
				i := slices.IndexFunc(configs, func(c model.Config) bool { return c.Name == want })
				if i < 0 {
					return nil, fmt.Errorf("coverage: model %s has no portfolio configuration %q", name, want)
				}
				picked = append(picked, configs[i])
			}
			configs = picked
		}
		for _, c := range configs {
			progress("model " + c.Name)
			part, err := CheckConfig(m, c, model.Options{Coverage: true})
			if err != nil {
				return nil, err
			}
			rep.Parts = append(rep.Parts, part)
		}
	}
	rep.union()
	return rep, nil
}

// Union builds the report of parts run elsewhere (simrun check's portfolio); nil when
// protocol declares no rule map.
func Union(protocol string, parts []*Part) *Report {
	if protocol == "" {
		return nil
	}
	r := &Report{Protocol: protocol, Parts: parts}
	r.union()
	return r
}

// CheckConfig checks one portfolio configuration of m (BFS unless o says otherwise;
// the configuration's MaxStates unless o sets one) and returns its part.
func CheckConfig(m *model.Model, c model.Config, o model.Options) (*Part, error) {
	sys, _, err := m.Instantiate(c.Params)
	if err != nil {
		return nil, fmt.Errorf("coverage: portfolio configuration %s: %w", c.Name, err)
	}
	if o.MaxStates == 0 {
		o.MaxStates = c.MaxStates
	}
	start := time.Now()
	res, err := model.Check(sys, o)
	if err != nil {
		return nil, fmt.Errorf("coverage: %s %s: %w", m.Name, c.Name, err)
	}
	return &Part{Name: c.Name, What: CheckCommand(m.Name, c), Coverage: ModelCoverage(m.Name, res),
		Verdict: ModelVerdict(res), Seconds: time.Since(start).Seconds()}, nil
}

// CheckCommand is the command line that checks configuration c of model name.
func CheckCommand(name string, c model.Config) string {
	keys := make([]string, 0, len(c.Params))
	for k := range c.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "simrun check %s", name)
	for _, k := range keys {
		fmt.Fprintf(&b, " -p %s", scenarios.ShellQuote(k+"="+c.Params[k]))
	}
	return b.String()
}

// ModelVerdict says in a few words how a check ended.
func ModelVerdict(res *model.Result) string {
	if v := res.Violation; v != nil {
		return fmt.Sprintf("violated: %s %s", v.Kind, v.Name)
	}
	var unknown []string
	for _, p := range res.Properties {
		if p.Status == model.Unknown {
			unknown = append(unknown, p.Name)
		}
	}
	if res.Outcome != model.Complete || len(unknown) > 0 {
		why := res.Outcome.String()
		if res.Bound != "" {
			why += " (" + res.Bound + ")"
		}
		if len(unknown) > 0 {
			why += "; undecided: " + strings.Join(unknown, ", ")
		}
		return "inconclusive: " + why
	}
	return "ok"
}

// ModelCoverage turns a model check's coverage into rule and property rows: rules by
// transitions that fired them; an always- or eventually-property with a Relevant
// predicate counts the states where it was relevant (0: vacuous), one without is
// uncounted; a sometimes-property is ok when witnessed and vacuous otherwise; the
// built-in no-panic invariant is about every state.
func ModelCoverage(name string, res *model.Result) *scenarios.Coverage {
	p := scenarios.ProtocolOf(name)
	c := &scenarios.Coverage{Protocol: p, Unit: "transitions", Total: res.Total, Rules: scenarios.RuleCoverageOf(p, res.Coverage)}
	for _, pr := range res.Properties {
		pc := scenarios.PropertyCoverage{Name: pr.Kind.String() + " " + pr.Name}
		switch pr.Status {
		case model.Holds, model.Witnessed:
			pc.Passed = 1
		case model.Failed:
			pc.Failed = 1
		}
		switch {
		case pr.Name == "no-panic":
			pc.Counted, pc.Checked = 1, res.Distinct
		case pr.Kind == model.SometimesKind:
			pc.Counted = 1
			if pr.Status == model.Witnessed {
				pc.Checked = 1
			}
		case pr.Relevant >= 0:
			pc.Counted, pc.Checked = 1, pr.Relevant
		}
		switch {
		case pc.Failed > 0:
			pc.Status = "failed"
		case pr.Status == model.Unknown:
			pc.Status = "undecided"
		case pc.Counted == 0:
			pc.Status = "uncounted"
		case pc.Checked == 0:
			pc.Status = "vacuous"
		default:
			pc.Status = "ok"
		}
		c.Properties = append(c.Properties, pc)
	}
	return c
}

// union fills Rules and Properties from the parts.
func (r *Report) union() {
	for _, ri := range sim.Rules(r.Protocol) {
		row := RuleRow{Tag: ri.Tag, NoBranch: ri.NoBranch, Reached: make([]int64, len(r.Parts))}
		for i, p := range r.Parts {
			for _, rc := range p.Coverage.Rules {
				if rc.Protocol == r.Protocol && rc.Tag == ri.Tag {
					row.Reached[i] = rc.Reached
				}
			}
		}
		r.Rules = append(r.Rules, row)
	}
	for _, p := range r.Parts {
		for _, pc := range p.Coverage.Properties {
			r.Properties = append(r.Properties, PropRow{Part: p.Name, PropertyCoverage: pc})
		}
	}
}

// WriteText prints the report: the parts, the rules nobody reaches first, then the
// rules × parts table, then vacuous properties.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "coverage of %s: %d %s\n", r.Protocol, len(r.Parts), map[bool]string{true: "part", false: "parts"}[len(r.Parts) == 1])
	nw := 4
	for _, p := range r.Parts {
		nw = max(nw, len(p.Name))
	}
	for i, p := range r.Parts {
		fmt.Fprintf(&b, "  [%d] %-*s  %-12s %6.1fs  %s\n", i+1, nw, p.Name, p.Verdict, p.Seconds, p.What)
	}
	un := r.Unreached()
	branched := 0
	for _, row := range r.Rules {
		if row.NoBranch == "" {
			branched++
		}
	}
	fmt.Fprintf(&b, "rules: %d of %d branched rules reached", branched-len(un), branched)
	if len(un) > 0 {
		names := make([]string, len(un))
		for i, u := range un {
			names[i] = u.Tag
		}
		fmt.Fprintf(&b, "; NOT REACHED: %s", strings.Join(names, "; "))
	}
	b.WriteString("\n")
	width := 4
	for _, row := range r.Rules {
		width = max(width, len(row.Tag))
	}
	fmt.Fprintf(&b, "  %-*s", width, "rule")
	for i := range r.Parts {
		fmt.Fprintf(&b, " %11s", fmt.Sprintf("[%d]", i+1))
	}
	b.WriteString("\n")
	rows := slices.Clone(r.Rules)
	slices.SortStableFunc(rows, func(a, c RuleRow) int { return rowRank(a) - rowRank(c) })
	for _, row := range rows {
		fmt.Fprintf(&b, "  %-*s", width, row.Tag)
		if row.NoBranch != "" {
			fmt.Fprintf(&b, "  no branch: %s\n", row.NoBranch)
			continue
		}
		for _, n := range row.Reached {
			if n == 0 {
				fmt.Fprintf(&b, " %11s", ".")
			} else {
				fmt.Fprintf(&b, " %11d", n)
			}
		}
		if !row.Any() {
			b.WriteString("  NOT REACHED")
		}
		b.WriteString("\n")
	}
	vac := r.Vacuous()
	fmt.Fprintf(&b, "properties: %d of %d vacuous or uncounted\n", len(vac), len(r.Properties))
	for _, p := range r.Properties {
		mark := ""
		if p.Status != "ok" {
			mark = "  <- " + p.Status
		}
		fmt.Fprintf(&b, "  [%s] %s: %d checked, %d exempt%s\n", p.Part, p.Name, p.Checked, p.Exempt, mark)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func rowRank(r RuleRow) int {
	switch {
	case r.NoBranch != "":
		return 2
	case !r.Any():
		return 0
	}
	return 1
}
