package reports

import (
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Experiment describes an experiment's output directory: what ran and how to run it
// again. WriteExperiment fills the directory.
type Experiment struct {
	Name    string // scenario name ("winkowski/cost")
	Help    string
	Seed    uint64
	Params  map[string]string // every parameter, defaults included
	Command string            // the exact command that regenerates the directory
	Tables  []*Table
	// Up, when set, links the page to an index (the experiments index: "../index.html").
	Up string
}

// Slug turns a title into a file stem ("Cost vs ϱ" → "cost-vs").
func Slug(s string) string {
	return strings.Trim(slugRE.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// WriteExperiment writes dir/NAME.csv for every table, dir/FIGURE.png and .svg for
// every figure, and a self-contained dir/index.html (no network: inline style, the
// figures referenced by relative path) that shows the figures with their captions,
// the tables with their run counts, the parameters and the command that regenerates
// the directory. It returns the files written.
func WriteExperiment(dir string, x Experiment) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	var files []string
	type figView struct {
		Name, Title, Caption, SVG, PNG string
	}
	type tableView struct {
		Title, CSV string
		Columns    []string
		Rows       [][]string
		Notes      []string
		Figures    []figView
		Fold       bool // a long table: folded under its figures
	}
	var views []tableView
	var claims []Claim
	used := map[string]bool{}
	for i, t := range x.Tables {
		name := Slug(t.Title)
		if name == "" {
			name = Slug(x.Name)
		}
		for used[name] {
			name = fmt.Sprintf("%s-%d", name, i+1)
		}
		used[name] = true
		path, err := t.SaveCSV(dir, name+".csv")
		if err != nil {
			return nil, err
		}
		files = append(files, path)
		if t.Claims != nil {
			claims = append(claims, t.Claims...)
			continue
		}
		v := tableView{Title: t.Title, CSV: name + ".csv", Columns: t.Columns, Rows: t.Rows, Notes: t.Notes, Fold: len(t.Rows) > foldRows}
		for _, f := range t.Figures {
			if used[f.Name] {
				return nil, fmt.Errorf("reports: two figures or tables named %q", f.Name)
			}
			used[f.Name] = true
			ps, err := f.Save(t, dir)
			if err != nil {
				return nil, err
			}
			files = append(files, ps...)
			caption := f.Caption
			if f.CurvesAsMarks(t) {
				caption += " " + marksNote
			}
			if o := f.Overlaps(t); len(o) > 0 {
				caption += " " + overlapNote(o)
			}
			v.Figures = append(v.Figures, figView{Name: f.Name, Title: f.Title, Caption: caption, SVG: f.Name + ".svg", PNG: f.Name + ".png"})
		}
		views = append(views, v)
	}
	path, err := writePage(dir, experimentPage, map[string]any{"X": x, "Params": sortedParams(x.Params), "Tables": views, "Claims": claims})
	if err != nil {
		return nil, err
	}
	files = append(files, path)
	return files, writeManifest(dir, files)
}

// foldRows is the longest table a page shows open; a longer one is folded (the page
// stays readable: its figures say what it holds).
const foldRows = 16

// overlapNote says which series nearly coincide (Figure.Overlaps).
func overlapNote(pairs [][2]string) string {
	var parts []string
	for _, p := range pairs {
		parts = append(parts, p[0]+" and "+p[1])
	}
	return "(" + strings.Join(parts, "; ") + " coincide within 1 % of the scale: their markers overlap.)"
}

// marksNote follows the caption of a figure whose reference curves are drawn as crosses
// (Figure.CurvesAsMarks).
const marksNote = "(Every point has the same x: each reference curve is marked by a cross at it.)"

// sortedParams lists a parameter map as (name, value) pairs in name order.
func sortedParams(m map[string]string) [][2]string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([][2]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, [2]string{k, m[k]})
	}
	return out
}

// writePage renders t with data into dir/index.html and returns its path.
func writePage(dir string, t *template.Template, data any) (string, error) {
	path := filepath.Join(dir, "index.html")
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("reports: %w", err)
	}
	err = t.Execute(f, data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("reports: %s: %w", path, err)
	}
	return path, nil
}

// SelfCheck is the script every report page carries: once the page has loaded it
// records script errors, console.error calls, images that did not load and sections
// named in the body's data-sections that are missing, and writes the result into the
// body's data-selfcheck attribute ("ok" or the problems). The browser test reads it
// from headless Chromium's DOM; a reader never sees it.
const SelfCheck = `<script>
(function(){var errs=[];window.addEventListener('error',function(e){errs.push(e.message||('failed to load '+((e.target&&(e.target.src||e.target.href))||'a resource')))},true);
var ce=console.error;console.error=function(){errs.push('console.error: '+Array.prototype.join.call(arguments,' '));return ce.apply(console,arguments)};
window.addEventListener('load',function(){var bad=[];document.querySelectorAll('img').forEach(function(i){if(!i.complete||i.naturalWidth===0)bad.push('broken image '+i.getAttribute('src'))});
(document.body.getAttribute('data-sections')||'').split(' ').forEach(function(id){if(id&&!document.getElementById(id))bad.push('missing section '+id)});
var r=errs.concat(bad);document.body.setAttribute('data-selfcheck',r.length?r.join('; '):'ok')})})();
</script>`

// PageStyle is the style sheet every report page inlines (no network, no CDN).
const PageStyle = `body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
code,pre{font:13px ui-monospace,Menlo,Consolas,monospace;background:#f5f5f5;padding:.1em .3em;border-radius:3px}
pre{padding:.6em;overflow-x:auto}table{border-collapse:collapse;margin:.6em 0;font-size:13px}
td,th{border:1px solid #ddd;padding:.2em .5em;text-align:right}th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}
figure{margin:1.2em 0}figure img{max-width:100%;border:1px solid #eee}figure.fig img{width:100%}figcaption{color:#444;margin-top:.3em}
.muted{color:#666}
.holds{color:#117733;font-weight:bold}.does-not-hold{color:#b3261e;font-weight:bold}.paper-gives-no-number{color:#666}
table.claims td,table.claims th{text-align:left;vertical-align:top}.tw{overflow-x:auto}details summary{cursor:pointer;color:#0072B2;margin:.4em 0}`

var experimentPage = template.Must(template.New("experiment").Funcs(template.FuncMap{"slug": func(v any) string { return Slug(fmt.Sprint(v)) }}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.X.Name}} — simrun experiment</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>` + PageStyle + `</style>` + SelfCheck + `</head>
<body data-sections="title{{if .Claims}} claims{{end}} reproduce parameters{{range .Tables}}{{range .Figures}} fig-{{.Name}}{{end}}{{end}}">
{{if .X.Up}}<p class="muted"><a href="{{.X.Up}}">← all experiments</a></p>{{end}}
<h1 id="title">{{.X.Name}}</h1>
<p class="muted">{{.X.Help}}</p>
{{if .Claims}}<section id="claims"><h2>What the paper claims, what simrun measured</h2>
<table class="claims"><tr><th>source</th><th>the paper</th><th>simrun</th><th>verdict</th></tr>
{{range .Claims}}<tr><td>{{.Source}}</td><td>{{.Paper}}</td><td>{{.Measured}}</td><td class="{{slug .Verdict}}">{{.Verdict}}</td></tr>
{{end}}</table></section>{{end}}
{{range .Tables}}<section class="table"><h2>{{.Title}}</h2>
{{range .Figures}}<figure id="fig-{{.Name}}" class="fig"><img src="{{.SVG}}" alt="{{.Title}}">
<figcaption><b>{{.Title}}.</b> {{.Caption}} <a href="{{.PNG}}">PNG</a> · <a href="{{.SVG}}">SVG</a></figcaption></figure>
{{end}}{{range .Notes}}<p class="muted">{{.}}</p>
{{end}}{{if .Fold}}<details><summary>the table ({{len .Rows}} rows)</summary>{{end}}<div class="tw"><table><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table></div>{{if .Fold}}</details>{{end}}
<p><a href="{{.CSV}}">{{.CSV}}</a></p></section>
{{end}}
<section id="reproduce"><h2>Reproduce</h2>
<p>Regenerate this directory (same seed, same binary: the same numbers):</p>
<pre>{{.X.Command}}</pre></section>
<section id="parameters"><h2>Parameters</h2>
<table><tr><th>parameter</th><th>value</th></tr>
<tr><td>seed</td><td>{{.X.Seed}}</td></tr>
{{range .Params}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>
{{end}}</table></section>
</body></html>
`))
