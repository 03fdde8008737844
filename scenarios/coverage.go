package scenarios

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/sim"
)

// Coverage is what a run, a sweep or a model check reached: per declared rule of the
// protocol (sim.NewRuleMap) how many runs (or transitions) reached it and how often it
// fired, and per property how many items it judged and exempted — a property that
// passed without judging anything is vacuous.
type Coverage struct {
	// Protocol is the rule map reported ("" when the scenario's protocol has none).
	Protocol string `json:"protocol,omitempty"`
	// Unit says what Reached counts: "runs" (simulator) or "transitions" (model).
	Unit string `json:"unit"`
	// Total is the number of runs (or transitions) behind the counts.
	Total      int64              `json:"total"`
	Rules      []RuleCoverage     `json:"rules"`
	Properties []PropertyCoverage `json:"properties"`
}

// RuleCoverage is one rule's coverage.
type RuleCoverage struct {
	Protocol string `json:"protocol"`
	Tag      string `json:"tag"`
	// NoBranch, when set, says why the rule has no code branch (never counted).
	NoBranch string `json:"no_branch,omitempty"`
	// Reached is the number of runs (or transitions) in which it fired; Fired the
	// number of times it fired in all.
	Reached int64 `json:"reached"`
	Fired   int64 `json:"fired"`
}

// PropertyCoverage is one property's coverage.
type PropertyCoverage struct {
	Name string `json:"name"`
	// Passed is the number of runs it passed on; Counted how many of those said how
	// many items they judged (Checked, summed) and exempted (Exempt, summed).
	Passed  int64 `json:"passed"`
	Counted int64 `json:"counted"`
	Checked int64 `json:"checked"`
	Exempt  int64 `json:"exempt"`
	// Failed is the number of runs it did not pass.
	Failed int64 `json:"failed,omitempty"`
	// Status: "ok" (it judged items), "vacuous" (it passed, counted, and judged
	// nothing), "uncounted" (it never said what it judged), "failed" (it failed on
	// some run: not vacuous, whatever it counted).
	Status string `json:"status"`
}

// ProtocolOf returns the rule map of scenario (or model) name: the part before the
// first "/" when a rule map of that name is declared, "" otherwise.
func ProtocolOf(name string) string {
	p, _, _ := strings.Cut(name, "/")
	if len(sim.Rules(p)) == 0 {
		return ""
	}
	return p
}

// ruleTally counts, per rule ID, the runs that reached a rule and its firings.
type ruleTally struct {
	runs, fired []int64
	total       int64
}

func (t *ruleTally) add(c *sim.Coverage) {
	if c == nil {
		return
	}
	t.total++
	if len(t.runs) < len(c.Fired) {
		t.runs = append(t.runs, make([]int64, len(c.Fired)-len(t.runs))...)
		t.fired = append(t.fired, make([]int64, len(c.Fired)-len(t.fired))...)
	}
	for i, n := range c.Fired {
		if n > 0 {
			t.runs[i]++
			t.fired[i] += n
		}
	}
}

func (t *ruleTally) merge(o *ruleTally) {
	t.total += o.total
	if len(t.runs) < len(o.runs) {
		t.runs = append(t.runs, make([]int64, len(o.runs)-len(t.runs))...)
		t.fired = append(t.fired, make([]int64, len(o.fired)-len(t.fired))...)
	}
	for i := range o.runs {
		t.runs[i] += o.runs[i]
		t.fired[i] += o.fired[i]
	}
}

// rules lists protocol's rules in declaration order, then every other rule that
// fired, with their counts.
func (t *ruleTally) rules(protocol string) []RuleCoverage {
	var out, others []RuleCoverage
	for i, r := range sim.AllRules() {
		rc := RuleCoverage{Protocol: r.Protocol, Tag: r.Tag, NoBranch: r.NoBranch}
		if i < len(t.runs) {
			rc.Reached, rc.Fired = t.runs[i], t.fired[i]
		}
		switch {
		case r.Protocol == protocol:
			out = append(out, rc)
		case rc.Fired > 0:
			others = append(others, rc)
		}
	}
	return append(out, others...)
}

// RuleCoverageOf converts a model check's (or any) coverage vector into rule rows for
// protocol: Reached and Fired are both the vector's counts (transitions).
func RuleCoverageOf(protocol string, c *sim.Coverage) []RuleCoverage {
	t := &ruleTally{}
	if c != nil {
		t.runs, t.fired = c.Fired, c.Fired
	}
	return t.rules(protocol)
}

// propertyCoverage turns per-property verdict counts into coverage rows, in name
// order.
func propertyCoverage(by map[string]*ClassCounts) []PropertyCoverage {
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]PropertyCoverage, 0, len(names))
	for _, n := range names {
		c := by[n]
		pc := PropertyCoverage{Name: n, Passed: c.OK, Counted: c.Counted, Checked: c.Checked, Exempt: c.Exempt,
			Failed: c.Total() - c.OK}
		pc.Status = statusOf(pc)
		out = append(out, pc)
	}
	return out
}

func statusOf(pc PropertyCoverage) string {
	switch {
	case pc.Failed > 0:
		return "failed"
	case pc.Counted == 0:
		return "uncounted"
	case pc.Checked == 0:
		return "vacuous"
	}
	return "ok"
}

// runCoverage is the coverage of one run.
func runCoverage(sc string, res *sim.Result, vs []checker.Verdict) *Coverage {
	t := &ruleTally{}
	t.add(res.Coverage)
	by := map[string]*ClassCounts{}
	for _, v := range vs {
		c := by[v.Property]
		if c == nil {
			c = &ClassCounts{}
			by[v.Property] = c
		}
		c.count(v)
	}
	p := ProtocolOf(sc)
	return &Coverage{Protocol: p, Unit: "runs", Total: 1, Rules: t.rules(p), Properties: propertyCoverage(by)}
}

// Unreached returns the branched rules of c's protocol that nothing reached.
func (c *Coverage) Unreached() []RuleCoverage {
	var out []RuleCoverage
	for _, r := range c.Rules {
		if r.Protocol == c.Protocol && r.NoBranch == "" && r.Reached == 0 {
			out = append(out, r)
		}
	}
	return out
}

// Vacuous returns the properties that passed without judging anything, or never
// said what they judged.
func (c *Coverage) Vacuous() []PropertyCoverage {
	var out []PropertyCoverage
	for _, p := range c.Properties {
		if p.Status == "vacuous" || p.Status == "uncounted" {
			out = append(out, p)
		}
	}
	return out
}

// WriteText prints the coverage as two tables: rules (unreached first) and
// properties (vacuous first).
func (c *Coverage) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	unit := c.Unit
	if c.Protocol == "" {
		fmt.Fprintf(ew, "rule coverage: the protocol declares no rule map\n")
	} else {
		un := c.Unreached()
		u := unit
		if c.Total == 1 {
			u = strings.TrimSuffix(unit, "s")
		}
		fmt.Fprintf(ew, "rule coverage (%s, over %d %s): %d of %d branched rules reached\n",
			c.Protocol, c.Total, u, c.branched()-len(un), c.branched())
	}
	rows := slices.Clone(c.Rules)
	slices.SortStableFunc(rows, func(a, b RuleCoverage) int { return rank(a) - rank(b) })
	width := 4
	for _, r := range rows {
		width = max(width, len(r.Tag))
	}
	if len(rows) > 0 {
		fmt.Fprintf(ew, "  %-*s  %10s  %10s\n", width, "rule", unit, "fired")
	}
	for _, r := range rows {
		switch {
		case r.NoBranch != "":
			fmt.Fprintf(ew, "  %-*s  %10s  %10s  no branch: %s\n", width, r.Tag, "-", "-", r.NoBranch)
		case r.Reached == 0:
			fmt.Fprintf(ew, "  %-*s  %10d  %10d  NOT REACHED\n", width, r.Tag, 0, 0)
		default:
			tag := r.Tag
			if r.Protocol != c.Protocol {
				tag = r.Protocol + ": " + r.Tag
			}
			fmt.Fprintf(ew, "  %-*s  %10d  %10d\n", width, tag, r.Reached, r.Fired)
		}
	}
	if len(c.Properties) > 0 {
		props := slices.Clone(c.Properties)
		slices.SortStableFunc(props, func(a, b PropertyCoverage) int { return prank(a) - prank(b) })
		pw := 8
		for _, p := range props {
			pw = max(pw, len(p.Name))
		}
		fmt.Fprintf(ew, "property coverage: %d vacuous or uncounted of %d\n", len(c.Vacuous()), len(props))
		fmt.Fprintf(ew, "  %-*s  %9s  %12s  %10s  %s\n", pw, "property", "passed", "checked", "exempt", "status")
		for _, p := range props {
			fmt.Fprintf(ew, "  %-*s  %9d  %12d  %10d  %s\n", pw, p.Name, p.Passed, p.Checked, p.Exempt, p.Status)
		}
	}
	return ew.err
}

func (c *Coverage) branched() int {
	n := 0
	for _, r := range c.Rules {
		if r.Protocol == c.Protocol && r.NoBranch == "" {
			n++
		}
	}
	return n
}

// rank orders rule rows: unreached first, then reached, then unbranched, then other
// protocols' rules.
func rank(r RuleCoverage) int {
	switch {
	case r.NoBranch != "":
		return 2
	case r.Reached == 0:
		return 0
	}
	return 1
}

func prank(p PropertyCoverage) int {
	switch p.Status {
	case "vacuous", "uncounted":
		return 0
	case "failed":
		return 1
	}
	return 2
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}
