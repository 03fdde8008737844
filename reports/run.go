package reports

import (
	"fmt"
	"html/template"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/simrun-dev/simrun/sim"
)

// Run is one run (a simulator run or a model-checker counterexample) to be shown as a
// page: what ran, its verdicts, and its trace records.
type Run struct {
	Title    string // "demo/faults seed 3", "counterexample of always one decision"
	Scenario string
	Seed     uint64
	Params   map[string]string
	Notes    []string // settings drawn from the seed
	// Summary is the scenario's own account of the run (a table of failovers, say),
	// shown as preformatted text after the verdicts.
	Summary  string
	Faults   string // the fault plan in one line
	Repro    string // the exact command that reproduces the run
	Verdicts []VerdictLine
	Nodes    []string // node names in lane order
	Records  []sim.TraceRecord
	// Omitted counts the run's events after Records (the report keeps a prefix of a
	// long run: see sim.RecordCollector.Limit); the page says so.
	Omitted int64
	// Artifacts are files a check wrote (porcupine's visualization), linked from the page.
	Artifacts []string
	// Ops are the workload's client operations (from the linearizability checks): the
	// page plots their latency over virtual time.
	Ops []Op
	// Coverage, when set, is the run's rule coverage (run --coverage).
	Coverage *Coverage
}

// Op is one client operation: called at Call, returned at Return, or never (Pending).
type Op struct {
	Call, Return sim.Time
	Pending      bool
}

// VerdictLine is one property's verdict.
type VerdictLine struct {
	Class, Property, Detail string
}

// MessagesPerPage is how many sends one page of the space-time diagram draws.
const MessagesPerPage = 250

// MaxMessagePages caps the diagram's pages (a long run's later sends are counted in
// the tables and the throughput plot, but not drawn one by one).
const MaxMessagePages = 40

// span is a period of a fault on one node (node -1: all of them).
type span struct {
	node     int
	from, to sim.Time
	what     string
}

// send is one message on the space-time diagram.
type send struct {
	from, to   int
	sent, recv sim.Time
	kind, lost string
}

type runData struct {
	end      sim.Time
	spans    []span
	events   [][]sim.Time // handler events per node
	sends    []send
	byKind   map[string][3]int // sent, delivered, lost
	kinds    []string
	byNode   [][3]int
	nodeName []string
	logical  bool // time is the event order (an untimed model-checker trace)
}

// stamp formats a point on the time axis.
func (d *runData) stamp(t sim.Time) string {
	if d.logical {
		return fmt.Sprintf("event %d", t)
	}
	return time.Duration(t).Round(time.Millisecond).String()
}

// logical reports whether the trace has no timing (a model-checker trace in untimed
// mode: every record at time 0); the pictures then use the event order as time.
func logical(recs []sim.TraceRecord) bool {
	for _, r := range recs {
		if r.T != 0 {
			return false
		}
	}
	return len(recs) > 0
}

func analyze(r *Run) *runData {
	if logical(r.Records) {
		// Event order as time: record i happens at i+1; a message is delivered at the
		// index of the record that receives it (matched in send order per link and kind).
		recs := slices.Clone(r.Records)
		type key struct{ from, to, kind string }
		pending := map[key][]*sim.TraceEffect{}
		for i := range recs {
			recs[i].T = sim.Time(i + 1)
			if recs[i].Ev == "recv" {
				k := key{recs[i].From, recs[i].Node, recs[i].Kind}
				if q := pending[k]; len(q) > 0 {
					q[0].At = recs[i].T
					pending[k] = q[1:]
				}
			}
			out := slices.Clone(recs[i].Out)
			for j := range out {
				if out[j].Op == "send" && out[j].Lost == "" {
					k := key{recs[i].Node, out[j].To, out[j].Kind}
					pending[k] = append(pending[k], &out[j])
				}
			}
			recs[i].Out = out
		}
		for _, q := range pending {
			for _, e := range q {
				e.At = sim.Time(len(recs) + 1) // never delivered within the trace
			}
		}
		r = &Run{Nodes: r.Nodes, Records: recs}
		d := analyzeTimed(r)
		d.logical = true
		return d
	}
	return analyzeTimed(r)
}

func analyzeTimed(r *Run) *runData {
	d := &runData{byKind: map[string][3]int{}, nodeName: r.Nodes}
	idx := map[string]int{}
	for i, n := range r.Nodes {
		idx[n] = i
	}
	node := func(name string) int {
		if i, ok := idx[name]; ok {
			return i
		}
		idx[name] = len(d.nodeName)
		d.nodeName = append(d.nodeName, name)
		return idx[name]
	}
	for _, n := range r.Nodes {
		node(n)
	}
	openCrash := map[int]sim.Time{}
	var partAt sim.Time = -1
	openCut := map[string]sim.Time{}
	for _, rec := range r.Records {
		d.end = max(d.end, rec.T)
		switch rec.Ev {
		case "start", "restart", "recv", "timer", "inject":
			n := node(rec.Node)
			for len(d.events) <= n {
				d.events = append(d.events, nil)
			}
			d.events[n] = append(d.events[n], rec.T)
			if rec.Ev == "restart" {
				if at, ok := openCrash[n]; ok {
					d.spans = append(d.spans, span{n, at, rec.T, "down"})
					delete(openCrash, n)
				}
			}
		case "crash":
			openCrash[node(rec.Node)] = rec.T
		case "partition":
			if partAt < 0 {
				partAt = rec.T
			}
		case "heal":
			if partAt >= 0 {
				d.spans = append(d.spans, span{-1, partAt, rec.T, "partition"})
				partAt = -1
			}
			for k, at := range openCut {
				d.spans = append(d.spans, span{-1, at, rec.T, "cut " + k})
			}
			clear(openCut)
		case "cut":
			openCut[rec.Why+rec.Node+rec.From] = rec.T
		case "restore":
			k := rec.Why + rec.Node + rec.From
			if at, ok := openCut[k]; ok {
				d.spans = append(d.spans, span{-1, at, rec.T, "cut"})
				delete(openCut, k)
			}
		}
		from := -1
		if rec.Node != "" && rec.Ev != "crash" {
			from = node(rec.Node)
		}
		for _, e := range rec.Out {
			if e.Op != "send" || from < 0 {
				continue
			}
			to := node(e.To)
			s := send{from: from, to: to, sent: rec.T, recv: e.At, kind: e.Kind, lost: e.Lost}
			d.sends = append(d.sends, s)
			c := d.byKind[e.Kind]
			c[0]++
			if e.Lost != "" {
				c[2]++
			}
			if !slices.Contains(d.kinds, e.Kind) {
				d.kinds = append(d.kinds, e.Kind)
			}
			d.byKind[e.Kind] = c
			for len(d.byNode) < len(d.nodeName) {
				d.byNode = append(d.byNode, [3]int{})
			}
			d.byNode[from][0]++
			if e.Lost != "" {
				d.byNode[to][2]++
			}
		}
		if rec.Ev == "recv" && rec.From != "" && rec.From != "env" {
			c := d.byKind[rec.Kind]
			c[1]++
			d.byKind[rec.Kind] = c
			n := node(rec.Node)
			for len(d.byNode) < len(d.nodeName) {
				d.byNode = append(d.byNode, [3]int{})
			}
			d.byNode[n][1]++
		}
	}
	for n, at := range openCrash {
		d.spans = append(d.spans, span{n, at, d.end, "down"})
	}
	if partAt >= 0 {
		d.spans = append(d.spans, span{-1, partAt, d.end, "partition"})
	}
	for _, at := range openCut {
		d.spans = append(d.spans, span{-1, at, d.end, "cut"})
	}
	slices.SortFunc(d.spans, func(a, b span) int { return int(a.from - b.from) })
	slices.Sort(d.kinds)
	for len(d.events) < len(d.nodeName) {
		d.events = append(d.events, nil)
	}
	for len(d.byNode) < len(d.nodeName) {
		d.byNode = append(d.byNode, [3]int{})
	}
	if d.end == 0 {
		d.end = 1
	}
	return d
}

// svgTimeline draws one lane per node: handler events as ticks, a node's down time in
// red, partitions and cuts shaded across every lane.
func svgTimeline(d *runData) string {
	const w, lane, left, top = 1000.0, 26.0, 90.0, 24.0
	h := top + lane*float64(len(d.nodeName)) + 30
	x := func(t sim.Time) float64 { return left + (w-left-10)*float64(t)/float64(d.end) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`, w, h)
	for _, s := range d.spans {
		if s.node < 0 {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#999" fill-opacity="0.18"><title>%s %v–%v</title></rect>`,
				x(s.from), top-4, max(1, x(s.to)-x(s.from)), lane*float64(len(d.nodeName))+4, template.HTMLEscapeString(s.what), s.from, s.to)
		}
	}
	for i, name := range d.nodeName {
		y := top + lane*float64(i) + lane/2
		fmt.Fprintf(&b, `<text x="4" y="%.1f">%s</text><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ccc"/>`, y+4, template.HTMLEscapeString(name), left, y, w-10, y)
		for _, s := range d.spans {
			if s.node == i {
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#d62728" fill-opacity="0.35"><title>%s down %v–%v</title></rect>`,
					x(s.from), y-lane/2+3, max(2, x(s.to)-x(s.from)), lane-6, template.HTMLEscapeString(name), s.from, s.to)
			}
		}
		for _, t := range d.events[i] {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#1f77b4" stroke-opacity="0.6"/>`, x(t), y-6, x(t), y+6)
		}
	}
	for k := 0; k <= 5; k++ {
		t := sim.Time(int64(d.end) * int64(k) / 5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">%s</text>`, x(t), h-8, d.stamp(t))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// svgMessages draws sends[from:to] as a space-time diagram: one vertical line per node,
// time downwards, an arrow per message from its send to its delivery (lost ones end in
// a cross).
func svgMessages(d *runData, sends []send) string {
	if len(sends) == 0 {
		return `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="40" font-family="sans-serif" font-size="12"><text x="4" y="24">no messages</text></svg>`
	}
	t0, t1 := sends[0].sent, sends[0].sent
	for _, s := range sends {
		t0 = min(t0, s.sent)
		t1 = max(t1, s.sent, s.recv)
	}
	if t1 == t0 {
		t1 = t0 + 1
	}
	col := 110.0
	w := 60 + col*float64(len(d.nodeName))
	h := math.Min(2400, math.Max(400, 14*float64(len(sends))))
	x := func(n int) float64 { return 60 + col*float64(n) + col/2 }
	y := func(t sim.Time) float64 { return 40 + (h-60)*float64(t-t0)/float64(t1-t0) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="11">`, w, h)
	b.WriteString(`<defs><marker id="a" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0L10,5L0,10z" fill="#444"/></marker></defs>`)
	for i, name := range d.nodeName {
		fmt.Fprintf(&b, `<text x="%.1f" y="16" text-anchor="middle" font-weight="bold">%s</text><line x1="%.1f" y1="24" x2="%.1f" y2="%.1f" stroke="#bbb"/>`,
			x(i), template.HTMLEscapeString(name), x(i), x(i), h-10)
	}
	fmt.Fprintf(&b, `<text x="4" y="%.1f" fill="#555">%s</text><text x="4" y="%.1f" fill="#555">%s</text>`, y(t0)+4, d.stamp(t0), y(t1)+4, d.stamp(t1))
	for _, s := range sends {
		x1, y1 := x(s.from), y(s.sent)
		if s.lost != "" {
			x2 := x1 + (x(s.to)-x1)/2
			fmt.Fprintf(&b, `<g><title>%s %s→%s lost (%s) at %v</title><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#d62728" stroke-dasharray="3,2"/><text x="%.1f" y="%.1f" fill="#d62728" text-anchor="middle">✕</text></g>`,
				template.HTMLEscapeString(s.kind), template.HTMLEscapeString(d.nodeName[s.from]), template.HTMLEscapeString(d.nodeName[s.to]), template.HTMLEscapeString(s.lost), s.sent, x1, y1, x2, y1+4, x2, y1+8)
			continue
		}
		x2, y2 := x(s.to), y(s.recv)
		fmt.Fprintf(&b, `<g><title>%s %s→%s sent %v, delivered %v</title><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444" stroke-opacity="0.75" marker-end="url(#a)"/><text x="%.1f" y="%.1f" fill="#1f77b4">%s</text></g>`,
			template.HTMLEscapeString(s.kind), template.HTMLEscapeString(d.nodeName[s.from]), template.HTMLEscapeString(d.nodeName[s.to]), s.sent, s.recv,
			x1, y1, x2, y2, (x1+x2)/2+2, (y1+y2)/2-2, template.HTMLEscapeString(s.kind))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// throughputPlot draws messages sent and lost per time bucket (gonum/plot), with the
// fault periods shaded.
func throughputPlot(d *runData) (*plot.Plot, error) {
	const buckets = 50
	width := float64(d.end) / buckets
	sent := make([]float64, buckets)
	lost := make([]float64, buckets)
	for _, s := range d.sends {
		i := min(buckets-1, int(float64(s.sent)/width))
		sent[i]++
		if s.lost != "" {
			lost[i]++
		}
	}
	p := plot.New()
	p.Title.Text = "Messages over virtual time (faults shaded)"
	p.X.Label.Text = "virtual time (s)"
	p.Y.Label.Text = fmt.Sprintf("messages per %v", time.Duration(width).Round(time.Microsecond))
	p.Add(plotter.NewGrid())
	if err := shade(p, d, slices.Max(sent)+1); err != nil {
		return nil, err
	}
	for i, series := range []struct {
		name string
		ys   []float64
	}{{"sent", sent}, {"lost", lost}} {
		xys := make(plotter.XYs, buckets)
		for j := range xys {
			xys[j] = plotter.XY{X: (float64(j) + 0.5) * width / 1e9, Y: series.ys[j]}
		}
		ln, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		ln.LineStyle.Color, ln.LineStyle.Width = plotutil.Color(i), vg.Points(1.3)
		p.Add(ln)
		p.Legend.Add(series.name, ln)
	}
	p.Legend.Top = true
	return p, nil
}

// shade draws the fault periods as translucent bands up to ymax.
func shade(p *plot.Plot, d *runData, ymax float64) error {
	for _, s := range d.spans {
		a, b := time.Duration(s.from).Seconds(), time.Duration(s.to).Seconds()
		poly, err := plotter.NewPolygon(plotter.XYs{{X: a, Y: 0}, {X: b, Y: 0}, {X: b, Y: ymax}, {X: a, Y: ymax}})
		if err != nil {
			return err
		}
		poly.Color = color.NRGBA{R: 214, G: 39, B: 40, A: 30}
		poly.LineStyle.Width = 0
		p.Add(poly)
	}
	return nil
}

// latencyPlot draws each operation's latency at its call time, and the operations
// that never returned as crosses at the top, with the fault periods shaded.
func latencyPlot(d *runData, ops []Op) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Operation latency over virtual time (faults shaded)"
	p.X.Label.Text = "call time (s)"
	p.Y.Label.Text = "latency (ms)"
	p.Add(plotter.NewGrid())
	done, pending, top := latencyPoints(ops)
	if err := shade(p, d, top); err != nil {
		return nil, err
	}
	for i, series := range []struct {
		name  string
		xys   plotter.XYs
		shape draw.GlyphDrawer
	}{{"returned", done, draw.CircleGlyph{}}, {"never returned", pending, draw.CrossGlyph{}}} {
		if len(series.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(series.xys)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = plotutil.Color(i), series.shape, vg.Points(2)
		p.Add(sc)
		p.Legend.Add(fmt.Sprintf("%s (%d)", series.name, len(series.xys)), sc)
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}

// latencyPoints are the latency plot's points: (call time in s, latency in ms) of the
// operations that returned, and the pending ones at the top of the plot (top).
func latencyPoints(ops []Op) (done, pending plotter.XYs, top float64) {
	for _, o := range ops {
		if !o.Pending {
			ms := float64(o.Return-o.Call) / 1e6
			done = append(done, plotter.XY{X: time.Duration(o.Call).Seconds(), Y: ms})
			top = max(top, ms)
		}
	}
	top = max(top*1.1, 1)
	for _, o := range ops {
		if o.Pending {
			pending = append(pending, plotter.XY{X: time.Duration(o.Call).Seconds(), Y: top})
		}
	}
	return done, pending, top
}

func endText(d *runData) string {
	if d.logical {
		return "none (an untimed trace: the pictures use the event order as time)"
	}
	return time.Duration(d.end).String()
}

// WriteRun writes a run's page into dir: index.html with the summary, verdicts,
// reproduce command, parameters and drawn settings, a timeline (timeline.svg), the
// space-time message diagram (messages-1.svg, … MessagesPerPage sends a page),
// messages over time with faults shaded (throughput.png and .svg) and messages by
// kind and by node. It returns the files written.
func WriteRun(dir string, r Run) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	d := analyze(&r)
	var files []string
	write := func(name, content string) error {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return fmt.Errorf("reports: %w", err)
		}
		files = append(files, path)
		return nil
	}
	if err := write("timeline.svg", svgTimeline(d)); err != nil {
		return nil, err
	}
	var pages []string
	for i := 0; i < MaxMessagePages && (i == 0 || i*MessagesPerPage < len(d.sends)); i++ {
		name := fmt.Sprintf("messages-%d.svg", i+1)
		if err := write(name, svgMessages(d, d.sends[i*MessagesPerPage:min(len(d.sends), (i+1)*MessagesPerPage)])); err != nil {
			return nil, err
		}
		pages = append(pages, name)
	}
	p, err := throughputPlot(d)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, "throughput"+ext)
		if err := p.Save(7*vg.Inch, 3*vg.Inch, path); err != nil {
			return nil, fmt.Errorf("reports: %s: %w", path, err)
		}
		files = append(files, path)
	}
	latency := len(r.Ops) > 0 && !d.logical
	if latency {
		lp, err := latencyPlot(d, r.Ops)
		if err != nil {
			return nil, fmt.Errorf("reports: %w", err)
		}
		for _, ext := range []string{".png", ".svg"} {
			path := filepath.Join(dir, "latency"+ext)
			if err := lp.Save(7*vg.Inch, 3*vg.Inch, path); err != nil {
				return nil, fmt.Errorf("reports: %s: %w", path, err)
			}
			files = append(files, path)
		}
	}
	type kindRow struct {
		Kind                  string
		Sent, Delivered, Lost int
	}
	var kinds, nodes []kindRow
	for _, k := range d.kinds {
		c := d.byKind[k]
		kinds = append(kinds, kindRow{k, c[0], c[1], c[2]})
	}
	for i, n := range d.nodeName {
		c := d.byNode[i]
		nodes = append(nodes, kindRow{n, c[0], c[1], c[2]})
	}
	var arts []string
	for _, a := range r.Artifacts {
		if rel, err := filepath.Rel(dir, a); err == nil && !strings.HasPrefix(rel, "..") {
			arts = append(arts, rel)
		} else {
			arts = append(arts, "file://"+a)
		}
	}
	path, err := writePage(dir, runPage, map[string]any{"R": r, "Params": sortedParams(r.Params), "Pages": pages, "Kinds": kinds, "Nodes": nodes,
		"Events": len(r.Records), "Sends": len(d.sends), "End": endText(d), "Artifacts": arts,
		"Undrawn": max(0, len(d.sends)-MaxMessagePages*MessagesPerPage), "Latency": latency, "Ops": len(r.Ops)})
	if err != nil {
		return nil, err
	}
	files = append(files, path)
	return files, writeManifest(dir, append(slices.Clone(files), r.Artifacts...))
}

var runPage = template.Must(template.New("run").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.R.Title}} — simrun run report</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>` + PageStyle + CoverageStyle + `.ok{color:#2ca02c}.bad{color:#d62728;font-weight:bold}</style>` + SelfCheck + `</head>
<body data-sections="summary verdicts reproduce parameters timeline messages throughput kinds{{if .R.Coverage}} coverage{{end}}">
<h1>{{.R.Title}}</h1>
<section id="summary"><p>{{.Events}} events, {{.Sends}} messages, virtual time {{.End}}.{{if .R.Faults}} Faults: {{.R.Faults}}.{{end}}</p>{{if gt .R.Omitted 0}}<p class="bad">This page shows the first {{.Events}} events of the run; {{.R.Omitted}} later events are left out to keep the report small (the verdicts above are the whole run's; --trace FILE records every event).</p>{{end}}</section>
<section id="verdicts"><h2>Verdicts</h2><table><tr><th>property</th><th>verdict</th><th>detail</th></tr>
{{range .R.Verdicts}}<tr><td>{{.Property}}</td><td class="{{if eq .Class "ok"}}ok{{else}}bad{{end}}">{{.Class}}</td><td style="text-align:left">{{.Detail}}</td></tr>
{{end}}</table>{{range .Artifacts}}<p>Check artifact: <a href="{{.}}">{{.}}</a></p>{{end}}</section>
{{with .R.Coverage}}<section id="coverage"><h2>Rule coverage</h2><p class="muted">Which rules of the protocol's rule map this run reached (times fired), and what each property judged.</p>{{.HTML}}</section>{{end}}
{{if .R.Summary}}<section id="scenario-summary"><h2>What happened</h2><pre>{{.R.Summary}}</pre></section>{{end}}
<section id="reproduce"><h2>Reproduce</h2><pre>{{.R.Repro}}</pre></section>
<section id="parameters"><h2>Parameters</h2><table><tr><th>parameter</th><th>value</th></tr>
{{if .R.Scenario}}<tr><td>scenario</td><td>{{.R.Scenario}}</td></tr><tr><td>seed</td><td>{{.R.Seed}}</td></tr>{{end}}
{{range .Params}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</table>
{{range .R.Notes}}<p class="muted">drawn: {{.}}</p>{{end}}</section>
<section id="timeline"><h2>Timeline</h2><p class="muted">One lane per node: handler events (ticks), down time (red), partitions and cuts (grey, across all lanes). Hover for times.</p>
<figure><img src="timeline.svg" alt="timeline"></figure></section>
<section id="messages"><h2>Messages</h2><p class="muted">Space-time diagram: time runs downwards; each arrow a message from its send to its delivery; dashed red with ✕: lost. {{len .Pages}} page(s) of up to ` + fmt.Sprint(MessagesPerPage) + ` messages:
{{range $i, $p := .Pages}} <a href="{{$p}}">{{$p}}</a>{{end}}{{if gt .Undrawn 0}} — the diagram stops after {{len .Pages}} pages: {{.Undrawn}} later messages are counted below but not drawn{{end}}</p>
<figure><img src="{{index .Pages 0}}" alt="messages, page 1"></figure></section>
<section id="throughput"><h2>Messages over time</h2><figure><img src="throughput.svg" alt="messages over time"></figure></section>
{{if .Latency}}<section id="latency"><h2>Latency of the workload</h2><p class="muted">The {{.Ops}} client operations the linearizability check read: latency at call time; crosses at the top never returned.</p><figure><img src="latency.svg" alt="operation latency over time"></figure></section>{{end}}
<section id="kinds"><h2>Messages by kind and node</h2>
<table><tr><th>kind</th><th>sent</th><th>delivered</th><th>lost</th></tr>{{range .Kinds}}<tr><td>{{.Kind}}</td><td>{{.Sent}}</td><td>{{.Delivered}}</td><td>{{.Lost}}</td></tr>{{end}}</table>
<table><tr><th>node</th><th>sent</th><th>delivered to</th><th>lost on the way to</th></tr>{{range .Nodes}}<tr><td>{{.Kind}}</td><td>{{.Sent}}</td><td>{{.Delivered}}</td><td>{{.Lost}}</td></tr>{{end}}</table></section>
</body></html>
`))
