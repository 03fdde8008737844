package reports

import (
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Sweep is a sweep's page: its verdicts, the distributions of a few run measures
// across seeds, and the failing seeds with their reproduce commands and run pages.
type Sweep struct {
	Scenario string
	Seeds    string // "1-10000" (and the shard, if one)
	Params   map[string]string
	Command  string
	Runs     int64
	Failed   int64
	// ByClass counts seeds by their worst verdict; ByProperty is the verdicts-per-
	// property table the summary prints.
	ByClass    [][2]string
	ByProperty *Table
	// Measures are per-seed values (events, messages, virtual time in seconds), each
	// drawn as a histogram.
	Measures []Measure
	Failures []FailingSeed
	// Coverage, when set, is the sweep's rule coverage (sweep --coverage).
	Coverage *Coverage
}

// Measure is one per-seed quantity across the sweep.
type Measure struct {
	Name, Unit string
	Values     []float64
}

// FailingSeed is one failing seed: its worst verdict, the command that reproduces
// it, and the run page written for it (relative to the sweep's directory; "" if none).
type FailingSeed struct {
	Seed    uint64
	Verdict string
	Repro   string
	Page    string
}

// WriteSweep writes dir/index.html and one histogram per measure (PNG and SVG).
func WriteSweep(dir string, s Sweep) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	var files []string
	type hist struct {
		Name, File                   string
		N                            int
		Mean, SD, P50, P95, Min, Max float64
		Unit                         string
	}
	var hs []hist
	for i, m := range s.Measures {
		if len(m.Values) == 0 {
			continue
		}
		vs := slices.Clone(m.Values)
		slices.Sort(vs)
		p := plot.New()
		p.Title.Text = m.Name + " per seed"
		p.X.Label.Text = m.Name
		if m.Unit != "" {
			p.X.Label.Text += " (" + m.Unit + ")"
		}
		p.Y.Label.Text = "seeds"
		h, err := plotter.NewHist(plotter.Values(vs), min(40, max(1, len(vs)/5)))
		if err != nil {
			return nil, fmt.Errorf("reports: %s histogram: %w", m.Name, err)
		}
		h.FillColor = plotutil.Color(i)
		p.Add(h)
		name := fmt.Sprintf("hist-%d", i+1)
		for _, ext := range []string{".png", ".svg"} {
			path := filepath.Join(dir, name+ext)
			if err := p.Save(5*vg.Inch, 3*vg.Inch, path); err != nil {
				return nil, fmt.Errorf("reports: %s: %w", path, err)
			}
			files = append(files, path)
		}
		mean, sd := stat.MeanStdDev(vs, nil)
		if len(vs) < 2 {
			sd = 0
		}
		hs = append(hs, hist{Name: m.Name, File: name + ".svg", N: len(vs), Mean: mean, SD: sd,
			P50: stat.Quantile(0.5, stat.Empirical, vs, nil), P95: stat.Quantile(0.95, stat.Empirical, vs, nil),
			Min: vs[0], Max: vs[len(vs)-1], Unit: m.Unit})
	}
	path, err := writePage(dir, sweepPage, map[string]any{"S": s, "Params": sortedParams(s.Params), "Hists": hs})
	if err != nil {
		return nil, err
	}
	files = append(files, path)
	return files, writeManifest(dir, files)
}

var sweepPage = template.Must(template.New("sweep").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.S.Scenario}} sweep — simrun</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>` + PageStyle + CoverageStyle + `.bad{color:#d62728;font-weight:bold}</style>` + SelfCheck + `</head>
<body data-sections="summary verdicts distributions failures reproduce parameters{{if .S.Coverage}} coverage{{end}}">
<h1>Sweep of {{.S.Scenario}}, seeds {{.S.Seeds}}</h1>
<section id="summary"><p>{{.S.Runs}} seeds: {{.S.Failed}} failed.</p></section>
<section id="verdicts"><h2>Verdicts</h2>
<table><tr><th>worst verdict</th><th>seeds</th></tr>{{range .S.ByClass}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</table>
{{with .S.ByProperty}}<table><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>{{end}}</section>
{{with .S.Coverage}}<section id="coverage"><h2>Rule coverage</h2><p class="muted">Runs that reached each rule of the protocol's rule map (shaded by the share of runs), unreached rules first; and what each property judged over the passing runs.</p>{{.HTML}}</section>{{end}}
<section id="distributions"><h2>Across seeds</h2>
<table><tr><th>measure</th><th>seeds</th><th>mean</th><th>sd</th><th>median</th><th>p95</th><th>min</th><th>max</th></tr>
{{range .Hists}}<tr><td>{{.Name}}{{if .Unit}} ({{.Unit}}){{end}}</td><td>{{.N}}</td><td>{{printf "%.4g" .Mean}}</td><td>{{printf "%.4g" .SD}}</td><td>{{printf "%.4g" .P50}}</td><td>{{printf "%.4g" .P95}}</td><td>{{printf "%.4g" .Min}}</td><td>{{printf "%.4g" .Max}}</td></tr>{{end}}</table>
{{range .Hists}}<figure><img src="{{.File}}" alt="{{.Name}} per seed"></figure>{{end}}</section>
<section id="failures"><h2>Failing seeds</h2>{{if not .S.Failures}}<p>None.</p>{{end}}
{{range .S.Failures}}<p><b>seed {{.Seed}}</b>: <span class="bad">{{.Verdict}}</span>{{if .Page}} — <a href="{{.Page}}">run report</a>{{end}}<br><code>{{.Repro}}</code></p>
{{end}}</section>
<section id="reproduce"><h2>Reproduce</h2><pre>{{.S.Command}}</pre></section>
<section id="parameters"><h2>Parameters</h2><table><tr><th>parameter</th><th>value</th></tr>{{range .Params}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</table></section>
</body></html>
`))
