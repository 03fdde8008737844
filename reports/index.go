package reports

import (
	"fmt"
	"html/template"
	"path/filepath"
	"strings"
	"time"
)

// IndexEntry is one experiment of an experiments index.
type IndexEntry struct {
	Name, Help string
	// Dir is the experiment's directory, relative to the index's.
	Dir string
	// Figure is its first figure (relative to the index's directory), "" for none.
	Figure string
	Claims []Claim
	// Runs made and the CPU time they took (wall time on a busy machine says little).
	Runs int
	CPU  time.Duration
}

// WriteIndex writes dir/index.html, the page that links every experiment of `simrun
// experiments`: one row per claim of the papers (the paper's words, simrun's number,
// holds / does not hold / paper gives no number), a thumbnail of each experiment's
// first figure, and the command that regenerates the whole directory; and
// dir/claims.csv, the same claims as a table. It returns the files written.
func WriteIndex(dir, command string, entries []IndexEntry) ([]string, error) {
	t := NewTable("Claims of the papers", "experiment", "source", "paper", "simrun", "verdict")
	count := map[Verdict]int{}
	for _, e := range entries {
		for _, c := range e.Claims {
			t.Add(e.Name, c.Source, c.Paper, c.Measured, string(c.Verdict))
			count[c.Verdict]++
		}
	}
	csv, err := t.SaveCSV(dir, "claims.csv")
	if err != nil {
		return nil, err
	}
	runs, cpu := 0, time.Duration(0)
	for _, e := range entries {
		runs, cpu = runs+e.Runs, cpu+e.CPU
	}
	path, err := writePage(dir, indexPage, map[string]any{"Entries": entries, "Command": command,
		"Holds": count[Holds], "Not": count[DoesNotHold], "NoNumber": count[NoNumber], "Runs": runs, "CPU": cpu.Round(100 * time.Millisecond)})
	if err != nil {
		return nil, err
	}
	files := []string{csv, path}
	return files, writeManifest(dir, files)
}

// verdictCounts says how many of claims hold, do not, and have no number.
func verdictCounts(claims []Claim) string {
	n := map[Verdict]int{}
	for _, c := range claims {
		n[c.Verdict]++
	}
	var parts []string
	for _, v := range []Verdict{Holds, DoesNotHold, NoNumber} {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", v, n[v]))
		}
	}
	if len(parts) == 0 {
		return "no claim"
	}
	return strings.Join(parts, " · ")
}

// IndexDir is the directory name of experiment name in an index ("saga/grace" →
// "saga-grace").
func IndexDir(name string) string { return filepath.Clean(Slug(name)) }

var indexPage = template.Must(template.New("index").Funcs(template.FuncMap{"slug": func(v any) string { return Slug(fmt.Sprint(v)) }, "verdicts": verdictCounts}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>simrun — the papers' experiments</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>` + PageStyle + `
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:14px;margin:1em 0}
.card{border:1px solid #ddd;border-radius:6px;padding:8px;background:#fff}.card img{width:100%;border:0}
.card h3{font-size:1em;margin:.2em 0}.card p{margin:.2em 0;font-size:13px}.card span.holds,.card span.does-not-hold,.card span.paper-gives-no-number{font-size:16px}
</style>` + SelfCheck + `</head>
<body data-sections="experiments claims reproduce">
<h1>The papers' experiments</h1>
<p class="muted">Every experiment of the five papers, run by simrun at its default parameters: {{len .Entries}} experiments, {{.Runs}} runs, {{.CPU}} of CPU. Each claim below names where the paper makes it, what simrun measured, and whether it holds — or that the paper states it without a number to compare with.</p>
<p><span class="holds">{{.Holds}} hold</span> · <span class="does-not-hold">{{.Not}} do not hold</span> · <span class="paper-gives-no-number">{{.NoNumber}} without a number in the paper</span> · <a href="claims.csv">claims.csv</a></p>
<section id="experiments"><h2>Experiments</h2><div class="grid">
{{range .Entries}}<div class="card"><h3><a href="{{.Dir}}/index.html">{{.Name}}</a></h3>{{if .Figure}}<a href="{{.Dir}}/index.html"><img src="{{.Figure}}" alt="{{.Name}}"></a>{{end}}<p>{{range .Claims}}<span class="{{slug .Verdict}}" title="{{.Source}}: {{.Paper}} — {{.Measured}}">● </span>{{end}}{{verdicts .Claims}}</p><p class="muted">{{.Help}}</p><p class="muted">{{.Runs}} runs, {{.CPU}} CPU</p></div>
{{end}}</div></section>
<section id="claims"><h2>Claims</h2>
<table class="claims"><tr><th>experiment</th><th>source</th><th>the paper</th><th>simrun</th><th>verdict</th></tr>
{{range $e := .Entries}}{{range .Claims}}<tr><td><a href="{{$e.Dir}}/index.html">{{$e.Name}}</a></td><td>{{.Source}}</td><td>{{.Paper}}</td><td>{{.Measured}}</td><td class="{{slug .Verdict}}">{{.Verdict}}</td></tr>
{{end}}{{end}}</table></section>
<section id="reproduce"><h2>Reproduce</h2><pre>{{.Command}}</pre></section>
</body></html>
`))
