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
	// Violation, when set, marks where a counterexample violates its property: the
	// pictures mark the step, the page names it and the node whose step reached the
	// violating state.
	Violation *Violation
}

// Violation is where a counterexample's property fails: at record Step (an index
// into Records: the step that reached the violating state), Property; for a
// liveness lasso, the last Cycle steps repeat for ever.
type Violation struct {
	Property string
	Step     int
	Cycle    int
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
	// inflight: lost on arrival (the receiver down or cut off when it came), not at
	// the send; recv is then when it was lost.
	inflight bool
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
		return fmt.Sprintf("step %d", t)
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
			if recs[i].Ev == "recv" || recs[i].Ev == "lost" {
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
		if rec.Ev == "lost" && rec.From != "" && rec.From != "env" {
			// A message lost on arrival (its receiver went down or was cut off while
			// it was in flight): the send it was is found by its link, kind and
			// scheduled delivery time, and counted and drawn as lost.
			fn, tn := node(rec.From), node(rec.Node)
			for i := len(d.sends) - 1; i >= 0; i-- {
				sd := &d.sends[i]
				if sd.from == fn && sd.to == tn && sd.kind == rec.Kind && sd.lost == "" && sd.recv == rec.T {
					sd.lost, sd.inflight = cmpOr(rec.Why, "lost"), true
					c := d.byKind[rec.Kind]
					c[2]++
					d.byKind[rec.Kind] = c
					for len(d.byNode) < len(d.nodeName) {
						d.byNode = append(d.byNode, [3]int{})
					}
					d.byNode[tn][2]++
					break
				}
			}
		}
		from := -1
		if rec.Node != "" && rec.Ev != "crash" && rec.Ev != "lost" {
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
func svgTimeline(d *runData, v *Violation) string {
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
	if v != nil && d.logical {
		at := x(sim.Time(v.Step + 1))
		if v.Cycle > 0 {
			from := x(sim.Time(v.Step + 2 - v.Cycle))
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#D55E00" fill-opacity="0.12"><title>the last %d steps repeat for ever</title></rect>`, from, top-4, max(2, at-from), lane*float64(len(d.nodeName))+4, v.Cycle)
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#D55E00" stroke-width="2" stroke-dasharray="4,2"/><text x="%.1f" y="%.1f" fill="#D55E00" text-anchor="end" font-weight="bold">%s violated at step %d</text>`,
			at, top-8, at, top+lane*float64(len(d.nodeName)), at-4, top-10+8, template.HTMLEscapeString(v.Property), v.Step+1)
	}
	var ticks []sim.Time
	if d.logical {
		// Whole steps, at most about ten labels.
		step := sim.Time(max(1, math.Round(NiceStep(float64(d.end), 8))))
		for t := sim.Time(0); t <= d.end; t += step {
			ticks = append(ticks, t)
		}
	} else {
		for k := 0; k <= 5; k++ {
			ticks = append(ticks, sim.Time(int64(d.end)*int64(k)/5))
		}
	}
	for _, t := range ticks {
		anchor := "middle"
		if x(t) > w-50 {
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="%s" fill="#555">%s</text>`, x(t), h-8, anchor, d.stamp(t))
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
	// Labels: a message's kind is written beside its arrow unless it would overlap
	// a label already written (then its tooltip still names it).
	var placed [][4]float64
	label := func(x, y float64, text, color string) {
		w := 6.2 * float64(len([]rune(text)))
		box := [4]float64{x, y - 10, x + w, y + 2}
		for _, p := range placed {
			if box[0] < p[2] && p[0] < box[2] && box[1] < p[3] && p[1] < box[3] {
				return
			}
		}
		placed = append(placed, box)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="%s">%s</text>`, x, y, color, template.HTMLEscapeString(text))
	}
	for _, s := range sends {
		x1, y1 := x(s.from), y(s.sent)
		from, to, kind := template.HTMLEscapeString(d.nodeName[s.from]), template.HTMLEscapeString(d.nodeName[s.to]), template.HTMLEscapeString(s.kind)
		switch {
		case s.lost != "" && s.inflight:
			// Lost on arrival: it travelled, and its receiver could not take it.
			x2, y2 := x(s.to), y(s.recv)
			fmt.Fprintf(&b, `<g><title>%s %s→%s sent %v, lost on arrival at %v (%s)</title><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#d62728" stroke-dasharray="3,2"/><text x="%.1f" y="%.1f" fill="#d62728" text-anchor="middle">✕</text></g>`,
				kind, from, to, s.sent, s.recv, template.HTMLEscapeString(s.lost), x1, y1, x2, y2, x2, y2+4)
			label((x1+x2)/2+2, (y1+y2)/2-2, s.kind, "#d62728")
		case s.lost != "":
			x2 := x1 + (x(s.to)-x1)/2
			fmt.Fprintf(&b, `<g><title>%s %s→%s lost (%s) at %v</title><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#d62728" stroke-dasharray="3,2"/><text x="%.1f" y="%.1f" fill="#d62728" text-anchor="middle">✕</text></g>`,
				kind, from, to, template.HTMLEscapeString(s.lost), s.sent, x1, y1, x2, y1+4, x2, y1+8)
		default:
			x2, y2 := x(s.to), y(s.recv)
			fmt.Fprintf(&b, `<g><title>%s %s→%s sent %v, delivered %v</title><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444" stroke-opacity="0.75" marker-end="url(#a)"/></g>`,
				kind, from, to, s.sent, s.recv, x1, y1, x2, y2)
			label((x1+x2)/2+2, (y1+y2)/2-2, s.kind, "#1f77b4")
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// throughputPlot draws messages sent and lost per time bucket (gonum/plot, the house
// style), with the fault periods shaded and the violation marked; an untimed trace
// (a model-checker counterexample) is drawn over its steps.
func throughputPlot(d *runData, v *Violation) *figureCanvas {
	buckets := 50
	if d.logical {
		buckets = min(50, int(d.end))
	}
	width := float64(d.end) / float64(buckets)
	sent := make([]float64, buckets)
	lost := make([]float64, buckets)
	for _, s := range d.sends {
		i := min(buckets-1, int(float64(s.sent-1)/width))
		if !d.logical {
			i = min(buckets-1, int(float64(s.sent)/width))
		}
		sent[max(0, i)]++
		if s.lost != "" {
			lost[max(0, i)]++
		}
	}
	xunit, xlabel := 1e9, "virtual time (s)"
	per := fmt.Sprintf("messages per %v", time.Duration(width).Round(time.Microsecond))
	title := "Messages over virtual time (faults shaded)"
	if d.logical {
		xunit, xlabel, title = 1, "step of the counterexample", "Messages over the counterexample's steps"
		per = fmt.Sprintf("messages per %s", map[bool]string{true: "step", false: fmt.Sprintf("%.3g steps", width)}[width == 1])
	}
	p := NewPlot(title, xlabel, per)
	fc := &figureCanvas{panels: []*plot.Plot{p}}
	top := slices.Max(sent) + 1
	shade(p, d, top, xunit)
	for i, series := range []struct {
		name string
		ys   []float64
	}{{"messages sent", sent}, {"messages lost", lost}} {
		xys := make(plotter.XYs, buckets)
		for j := range xys {
			xys[j] = plotter.XY{X: (float64(j) + 0.5) * width / xunit, Y: series.ys[j]}
			if d.logical && width == 1 {
				xys[j].X = float64(j + 1)
			}
		}
		ln, _ := plotter.NewLine(xys)
		ln.LineStyle.Color, ln.LineStyle.Width = SeriesColor(i), vg.Points(1.4)
		p.Add(ln)
		fc.legend = append(fc.legend, legendEntry{series.name, []plot.Thumbnailer{ln}})
	}
	if v != nil && d.logical {
		at := float64(v.Step + 1)
		ln, _ := plotter.NewLine(plotter.XYs{{X: at, Y: 0}, {X: at, Y: top}})
		ln.LineStyle.Color, ln.LineStyle.Width, ln.LineStyle.Dashes = SeriesColor(6), vg.Points(2), []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(ln)
		fc.legend = append(fc.legend, legendEntry{fmt.Sprintf("step %d: %s violated", v.Step+1, v.Property), []plot.Thumbnailer{ln}})
	}
	p.Y.Min = 0
	return fc
}

// shade draws the fault periods as translucent bands up to ymax (x in units of xunit
// nanoseconds, or steps).
func shade(p *plot.Plot, d *runData, ymax, xunit float64) {
	for _, s := range d.spans {
		a, b := float64(s.from)/xunit, float64(s.to)/xunit
		poly, err := plotter.NewPolygon(plotter.XYs{{X: a, Y: 0}, {X: b, Y: 0}, {X: b, Y: ymax}, {X: a, Y: ymax}})
		if err != nil {
			continue
		}
		poly.Color = color.NRGBA{R: 213, G: 94, B: 0, A: 34}
		poly.LineStyle.Width = 0
		p.Add(poly)
	}
}

// latencyPlot draws each operation's latency at its call time, and the operations
// that never returned as crosses at the top, with the fault periods shaded.
func latencyPlot(d *runData, ops []Op) *figureCanvas {
	p := NewPlot("Operation latency over virtual time (faults shaded)", "call time (s)", "latency (ms)")
	fc := &figureCanvas{panels: []*plot.Plot{p}}
	done, pending, top := latencyPoints(ops)
	shade(p, d, top, 1e9)
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
			continue
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = SeriesColor(i), series.shape, vg.Points(2)
		p.Add(sc)
		fc.legend = append(fc.legend, legendEntry{fmt.Sprintf("%s (%d)", series.name, len(series.xys)), []plot.Thumbnailer{sc}})
	}
	p.Y.Min = 0
	return fc
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

// violationText says where a counterexample's property fails: the step, and what the
// step was (the node and the event that reached the violating state).
func violationText(r Run) string {
	v := r.Violation
	if v == nil || v.Step < 0 || v.Step >= len(r.Records) {
		return ""
	}
	rec := r.Records[v.Step]
	what := rec.Ev
	switch {
	case rec.Kind != "":
		what += " " + rec.Kind
		if rec.From != "" {
			what += " from " + rec.From
		}
	case rec.Timer != "":
		what += " " + rec.Timer
	}
	s := fmt.Sprintf("%s is violated at step %d of %d: %s handled %s, reaching the violating state (marked on the timeline and the message plot).", v.Property, v.Step+1, len(r.Records), cmpOr(rec.Node, "the environment"), what)
	if v.Cycle > 0 {
		s += fmt.Sprintf(" Steps %d–%d repeat for ever (a lasso: the property's progress never comes).", v.Step+2-v.Cycle, v.Step+1)
	}
	return s
}

func endText(d *runData) string {
	if d.logical {
		return "none (an untimed trace: the pictures use the step index as time)"
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
	if err := write("timeline.svg", svgTimeline(d, r.Violation)); err != nil {
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
	paths, err := throughputPlot(d, r.Violation).save(dir, "throughput")
	if err != nil {
		return nil, err
	}
	files = append(files, paths...)
	latency := len(r.Ops) > 0 && !d.logical
	if latency {
		paths, err := latencyPlot(d, r.Ops).save(dir, "latency")
		if err != nil {
			return nil, err
		}
		files = append(files, paths...)
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
	path, err := writePage(dir, runPage, map[string]any{"R": r, "Violation": violationText(r), "Params": sortedParams(r.Params), "Pages": pages, "Kinds": kinds, "Nodes": nodes,
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
{{end}}</table>{{if .Violation}}<p class="bad" id="violation">{{.Violation}}</p>{{end}}{{range .Artifacts}}<p>Check artifact: <a href="{{.}}">{{.}}</a></p>{{end}}</section>
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
