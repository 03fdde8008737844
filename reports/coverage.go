package reports

import (
	"fmt"
	"html/template"
	"os"
	"strings"
)

// Coverage is a rule-coverage section of a page: a heat map of the protocol's rules
// (rows) over the parts that ran (columns: a run, a sweep, the swarm and each model
// configuration), each cell the number of runs or transitions that reached the rule,
// shaded by the fraction of the column's total; unreached rules first and marked, and
// the properties with what they judged.
type Coverage struct {
	Protocol string
	// Columns name the parts; Totals are their runs or transitions; Units what they
	// count ("runs", "transitions").
	Columns []string
	Totals  []int64
	Units   []string
	Rules   []CoverageRule
	Props   []CoverageProp
}

// CoverageRule is one rule's row.
type CoverageRule struct {
	Tag      string
	NoBranch string
	Reached  []int64 // per column
}

// CoverageProp is one property of one column.
type CoverageProp struct {
	Column, Name    string
	Checked, Exempt int64
	Status          string // ok, vacuous, uncounted, failed, undecided
}

// HTML renders the section's body (a table and a property list), self-contained.
func (c *Coverage) HTML() template.HTML {
	if c == nil {
		return ""
	}
	esc := template.HTMLEscapeString
	var b strings.Builder
	un, branched := 0, 0
	for _, r := range c.Rules {
		if r.NoBranch != "" {
			continue
		}
		branched++
		if !anyPositive(r.Reached) {
			un++
		}
	}
	if c.Protocol == "" {
		b.WriteString("<p>This protocol declares no rule map.</p>")
	} else {
		fmt.Fprintf(&b, `<p class="covsum">%s: <b>%d of %d</b> branched rules reached`, esc(c.Protocol), branched-un, branched)
		if un > 0 {
			fmt.Fprintf(&b, `; <span class="bad">%d not reached</span> (first below)`, un)
		}
		b.WriteString(".</p>")
	}
	b.WriteString(`<div class="scroll"><table class="heat"><tr><th>rule</th>`)
	for i, col := range c.Columns {
		fmt.Fprintf(&b, `<th>%s<br><small>%d %s</small></th>`, esc(col), c.Totals[i], esc(c.Units[i]))
	}
	b.WriteString("</tr>")
	order := func(pass int) {
		for _, r := range c.Rules {
			reached := anyPositive(r.Reached)
			switch {
			case pass == 0 && (r.NoBranch != "" || reached):
				continue
			case pass == 1 && (r.NoBranch != "" || !reached):
				continue
			case pass == 2 && r.NoBranch == "":
				continue
			}
			if r.NoBranch == "" && !reached {
				fmt.Fprintf(&b, `<tr class="unreached"><td title="reached by no part">%s</td>`, esc(r.Tag))
			} else {
				fmt.Fprintf(&b, "<tr><td>%s</td>", esc(r.Tag))
			}
			if r.NoBranch != "" {
				fmt.Fprintf(&b, `<td colspan="%d" class="nobranch">no branch: %s</td></tr>`, len(c.Columns), esc(r.NoBranch))
				continue
			}
			for i, n := range r.Reached {
				if n == 0 {
					// One part not reaching a rule is normal (each part is there for
					// some rules); a row no part reaches is what is marked.
					b.WriteString(`<td class="zero">·</td>`)
					continue
				}
				frac := 0.0
				if c.Totals[i] > 0 {
					frac = float64(n) / float64(c.Totals[i])
				}
				// Shade: light to dark blue with the fraction (at least a tint when reached).
				alpha := 0.12 + 0.78*min(1, frac)
				fg := "#000"
				if alpha > 0.55 {
					fg = "#fff"
				}
				fmt.Fprintf(&b, `<td style="background:rgba(0,114,178,%.2f);color:%s" title="%.3g%% of %d %s">%d</td>`,
					alpha, fg, 100*frac, c.Totals[i], esc(c.Units[i]), n)
			}
			b.WriteString("</tr>")
		}
	}
	order(0)
	order(1)
	order(2)
	b.WriteString("</table></div>")
	if len(c.Props) > 0 {
		b.WriteString(`<table><tr><th>part</th><th>property</th><th>checked</th><th>exempt</th><th>status</th></tr>`)
		for pass := 0; pass < 2; pass++ {
			for _, p := range c.Props {
				bad := p.Status == "vacuous" || p.Status == "uncounted" || p.Status == "failed"
				if bad != (pass == 0) {
					continue
				}
				cls := ""
				if bad {
					cls = ` class="bad"`
				}
				fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td%s>%s</td></tr>",
					esc(p.Column), esc(p.Name), p.Checked, p.Exempt, cls, esc(p.Status))
			}
		}
		b.WriteString("</table>")
	}
	return template.HTML(b.String())
}

func anyPositive(ns []int64) bool {
	for _, n := range ns {
		if n > 0 {
			return true
		}
	}
	return false
}

// CoverageStyle is the CSS the coverage section needs.
const CoverageStyle = `div.scroll{overflow-x:auto;max-width:100%}
table.heat td{text-align:right;font-variant-numeric:tabular-nums;padding:2px 6px}
table.heat td:first-child,table.heat th:first-child{text-align:left;white-space:nowrap;position:sticky;left:0;background:#fff}
table.heat td.zero{color:#bbb}
table.heat tr.unreached td{background:#fde0dd}
table.heat tr.unreached td:first-child{color:#d62728;font-weight:bold;background:#fde0dd}
td.nobranch{color:#666;font-style:italic;text-align:left}
`

// CoveragePage is the page `simrun coverage P --report DIR` writes: the heat map of
// the protocol's rules over its default swarm and each model configuration.
type CoveragePage struct {
	Title    string
	Command  string
	Parts    [][3]string // name, verdict, command
	Coverage *Coverage
}

// WriteCoverage writes dir/index.html.
func WriteCoverage(dir string, p CoveragePage) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	path, err := writePage(dir, coveragePage, p)
	if err != nil {
		return nil, err
	}
	return []string{path}, writeManifest(dir, []string{path})
}

var coveragePage = template.Must(template.New("coverage").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} — simrun</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>` + PageStyle + CoverageStyle + `.bad{color:#d62728;font-weight:bold}</style>` + SelfCheck + `</head>
<body data-sections="parts coverage reproduce">
<h1>{{.Title}}</h1>
<section id="parts"><h2>What ran</h2><table><tr><th>part</th><th>verdict</th><th style="text-align:left">command</th></tr>
{{range .Parts}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td><td style="text-align:left"><code>{{index . 2}}</code></td></tr>{{end}}</table></section>
<section id="coverage"><h2>Rules × parts</h2><p class="muted">Each cell: runs (swarm) or transitions (model) that reached the rule, shaded by their share of the part's total; a dot: not reached by that part. Rows in red: reached by no part (they come first).</p>{{.Coverage.HTML}}</section>
<section id="reproduce"><h2>Reproduce</h2><pre>{{.Command}}</pre></section>
</body></html>
`))
