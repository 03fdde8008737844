package reports

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-3 }

// Reference values: the t quantile for 4 degrees of freedom is 2.7764; Wilson's interval
// for 8 of 10 is [0.4902, 0.9433]; a line through (1,3), (2,5), (3,7) is 1 + 2x, R² 1.
func TestStats(t *testing.T) {
	m, lo, hi := MeanCI([]float64{1, 2, 3, 4, 5})
	h := 2.7764 * math.Sqrt(2.5) / math.Sqrt(5)
	if !near(m, 3) || !near(lo, 3-h) || !near(hi, 3+h) {
		t.Fatalf("MeanCI: %v [%v, %v], want 3 ± %v", m, lo, hi, h)
	}
	if m, lo, hi := MeanCI([]float64{7}); m != 7 || lo != 7 || hi != 7 {
		t.Fatalf("MeanCI of one sample: %v %v %v", m, lo, hi)
	}
	if m, _, _ := MeanCI(nil); !math.IsNaN(m) {
		t.Fatal("MeanCI of nothing is not NaN")
	}
	p, lo, hi := Wilson(8, 10)
	if !near(p, 0.8) || !near(lo, 0.4902) || !near(hi, 0.9433) {
		t.Fatalf("Wilson(8,10) = %v [%v, %v]", p, lo, hi)
	}
	if _, lo, hi := Wilson(0, 20); lo != 0 || !near(hi, 0.1611) {
		t.Fatalf("Wilson(0,20) = [%v, %v], want [0, 0.1611]", lo, hi)
	}
	a, b, r2 := LinFit([]float64{1, 2, 3}, []float64{3, 5, 7})
	if !near(a, 1) || !near(b, 2) || !near(r2, 1) {
		t.Fatalf("LinFit: %v + %v x, R² %v", a, b, r2)
	}
}

func sampleTable() *Table {
	tb := NewTable("Cost vs rho", "protocol", "rho", "runs", "msgs", "lo", "hi")
	for _, p := range []string{"game", "central"} {
		for rho := 1; rho <= 4; rho++ {
			m := 14 * float64(rho)
			if p == "central" {
				m = 3
			}
			tb.Add(p, rho, 5, m, m-1, m+1.5)
		}
	}
	tb.Figures = []Figure{{Name: "cost", Title: "Cost", Caption: "the claim", X: "rho", Y: "msgs", Low: "lo", High: "hi", Series: "protocol", Fit: "line"}}
	return tb
}

// Every plotted series equals the table it came from (the numbers, not the pixels:
// raster output differs across machines).
func TestFigureDataIsTheTable(t *testing.T) {
	tb := sampleTable()
	f := tb.Figures[0]
	data, err := f.Data(tb)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 2 || data[0].Name != "game" || data[1].Name != "central" {
		t.Fatalf("series %+v", data)
	}
	seen := 0
	for _, r := range tb.Rows {
		s := data[0]
		if r[0] == "central" {
			s = data[1]
		}
		x, _ := strconv.ParseFloat(r[1], 64)
		y, _ := strconv.ParseFloat(r[3], 64)
		lo, _ := strconv.ParseFloat(r[4], 64)
		hi, _ := strconv.ParseFloat(r[5], 64)
		found := false
		for i := range s.X {
			if s.X[i] == x && s.Y[i] == y && s.Low[i] == lo && s.High[i] == hi {
				found = true
			}
		}
		if !found {
			t.Fatalf("row %v is not plotted", r)
		}
		seen++
	}
	if n := len(data[0].X) + len(data[1].X); n != seen {
		t.Fatalf("%d points plotted for %d rows", n, seen)
	}
	// A column that is not numeric, or missing, is an error, not a silent gap.
	bad := sampleTable()
	bad.Rows[2][3] = "n/a"
	if _, err := bad.Figures[0].Data(bad); err == nil || !strings.Contains(err.Error(), `holds "n/a"`) {
		t.Fatalf("non-numeric cell: %v", err)
	}
	f.Y = "nope"
	if _, err := f.Data(tb); err == nil {
		t.Fatal("missing column accepted")
	}
}

// An experiment directory: CSV, PNG and SVG per figure, and an index.html with the
// figures, captions, tables, parameters and the command.
func TestWriteExperiment(t *testing.T) {
	dir := t.TempDir()
	files, err := WriteExperiment(dir, Experiment{Name: "x/cost", Help: "help", Seed: 3,
		Params: map[string]string{"b": "2", "a": "1"}, Command: "simrun run x/cost --seed 3 --out " + dir, Tables: []*Table{sampleTable()}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"cost-vs-rho.csv", "cost.png", "cost.svg", "index.html"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if len(files) != 4 {
		t.Fatalf("files %v", files)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	for _, want := range []string{`id="reproduce"`, "simrun run x/cost --seed 3", `id="parameters"`, `<img src="cost.svg"`, "the claim", "<th>runs</th>", `href="cost-vs-rho.csv"`} {
		if !strings.Contains(string(page), want) {
			t.Fatalf("index.html lacks %q", want)
		}
	}
	for _, forbidden := range []string{"http://", "https://"} {
		if strings.Contains(string(page), forbidden) {
			t.Fatalf("index.html refers to the network (%s)", forbidden)
		}
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "cost.svg"))
	if !strings.Contains(string(svg), "<svg") {
		t.Fatal("cost.svg is not an SVG")
	}
}

// A formula curve is drawn over the data's x range; when every point has the same x
// it is marked at that x instead, so the axes reach its value there (a curve over an
// empty range would draw nothing while the legend still listed it).
func TestCurveAtASingleX(t *testing.T) {
	tb := NewTable("One count", "agents", "msgs")
	tb.Add(3, 4.0)
	tb.Figures = []Figure{{Name: "one", X: "agents", Y: "msgs",
		Curves: []Curve{{Name: "n(n−1)·10", F: func(n float64) float64 { return n * (n - 1) * 10 }}}}}
	p, err := tb.Figures[0].Plot(tb)
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Max < 60 {
		t.Fatalf("y axis ends at %g: the curve's value 60 at x=3 is not drawn", p.Y.Max)
	}
	// The page says so under the caption (which may call the curves dashed).
	page := func() string {
		dir := t.TempDir()
		if _, err := WriteExperiment(dir, Experiment{Name: "x/one", Seed: 1, Tables: []*Table{tb}}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "index.html"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if !tb.Figures[0].CurvesAsMarks(tb) || !strings.Contains(page(), marksNote) {
		t.Fatal("one x: the curves are marks, and the page does not say so")
	}
	// Over a range, the curve is a line, drawn whole (the y axis reaches its 120 at
	// x=4, padded: a model clipped at the data's range was half hidden), and adds no
	// marker.
	tb.Add(4, 5.0)
	if p, err = tb.Figures[0].Plot(tb); err != nil {
		t.Fatal(err)
	}
	if p.Y.Max < 120 || p.Y.Max > 130 {
		t.Fatalf("y axis ends at %g with two x values, want the curve's 120 and a little padding", p.Y.Max)
	}
	if tb.Figures[0].CurvesAsMarks(tb) || strings.Contains(page(), marksNote) {
		t.Fatal("two x values: the page says the curves are marks")
	}
}

// ClusterShare pools the units and resamples the runs: the same data give the same
// interval; runs that all agree give a point interval; when the units of a run agree
// with one another (all or none of a run's agents complete) the interval is wider than
// Wilson's over the units, which takes them for independent.
func TestClusterShare(t *testing.T) {
	k, n := []int{5, 0, 5, 0, 5, 5, 0, 5, 0, 5}, []int{5, 5, 5, 5, 5, 5, 5, 5, 5, 5}
	p, lo, hi := ClusterShare(k, n, 2000, 1)
	p2, lo2, hi2 := ClusterShare(k, n, 2000, 1)
	if p != 0.6 || lo != lo2 || hi != hi2 || p2 != p {
		t.Fatalf("share %v [%v, %v], again %v [%v, %v]", p, lo, hi, p2, lo2, hi2)
	}
	_, wlo, whi := Wilson(30, 50)
	if !(lo < p && p < hi) || hi-lo <= whi-wlo {
		t.Fatalf("cluster interval [%v, %v] around %v, Wilson's [%v, %v]: want it wider", lo, hi, p, wlo, whi)
	}
	if p, lo, hi := ClusterShare([]int{3, 3, 3}, []int{5, 5, 5}, 500, 1); p != 0.6 || lo != 0.6 || hi != 0.6 {
		t.Fatalf("identical runs: %v [%v, %v]", p, lo, hi)
	}
	if p, _, _ := ClusterShare(nil, nil, 10, 1); !math.IsNaN(p) {
		t.Fatal("no units: not NaN")
	}
}

// The space-time diagram writes no label over another (issue 32 §2): many messages
// between the same two nodes at once.
func TestMessageLabelsDoNotOverlap(t *testing.T) {
	r := Run{Title: "busy", Nodes: []string{"a", "b"}}
	for i := range 40 {
		r.Records = append(r.Records, sim.TraceRecord{I: int64(i), T: sim.Time(i), Ev: "recv", Node: "a", From: "b", Kind: "M",
			Out: []sim.TraceEffect{{Op: "send", To: "b", Kind: "REQUEST", At: sim.Time(i + 50)}}})
	}
	d := analyze(&r)
	svg := svgMessages(d, d.sends)
	var boxes [][4]float64
	for _, m := range regexp.MustCompile(`<text x="([0-9.]+)" y="([0-9.]+)" fill="#1f77b4">([^<]+)</text>`).FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		b := [4]float64{x, y - 10, x + 6.2*float64(len(m[3])), y + 2}
		for _, o := range boxes {
			if b[0] < o[2] && o[0] < b[2] && b[1] < o[3] && o[1] < b[3] {
				t.Fatalf("label at %v overlaps one at %v", b, o)
			}
		}
		boxes = append(boxes, b)
	}
	if len(boxes) == 0 || len(boxes) >= 40 {
		t.Fatalf("%d labels for 40 crowded messages: want some, not all", len(boxes))
	}
}

// TestFreeYPanels: with FreeY each panel spans its own values; without, every panel
// shares the range of all of them.
func TestFreeYPanels(t *testing.T) {
	tb := &Table{Columns: []string{"p", "x", "y"}, Rows: [][]string{
		{"small", "1", "10"}, {"small", "2", "20"}, {"big", "1", "1000"}, {"big", "2", "5000"}}}
	for _, free := range []bool{false, true} {
		f := Figure{Name: "f", X: "x", Y: "y", Facet: "p", Lines: true, FreeY: free}
		fc, err := f.build(tb)
		if err != nil {
			t.Fatal(err)
		}
		if len(fc.panels) != 2 {
			t.Fatalf("%d panels", len(fc.panels))
		}
		small := fc.panels[0].Y.Max
		if free && small > 100 || !free && small < 5000 {
			t.Fatalf("FreeY=%v: the small panel's y axis ends at %g", free, small)
		}
	}
	// Two series 5 apart in the small panel coincide on the shared scale (1 % of
	// 4 990) but not on the panel's own (1 % of 15); the big panel's equal ones always.
	two := &Table{Columns: []string{"p", "x", "a", "b"}, Rows: [][]string{
		{"small", "1", "10", "15"}, {"small", "2", "20", "25"}, {"big", "1", "1000", "1000"}, {"big", "2", "5000", "5000"}}}
	for _, free := range []bool{false, true} {
		f := Figure{Name: "f", X: "x", Ys: []YSeries{{Name: "a", Y: "a"}, {Name: "b", Y: "b"}}, Facet: "p", Lines: true, FreeY: free}
		o := f.Overlaps(two)
		smallPair := slices.ContainsFunc(o, func(p [2]string) bool { return p[0] == "a" && p[1] == "b" })
		if !smallPair {
			t.Fatalf("FreeY=%v: the big panel's equal series are not named as overlapping: %v", free, o)
		}
		if n := len(o); free && n != 1 || !free && n != 2 {
			t.Fatalf("FreeY=%v: %d overlapping pairs %v", free, n, o)
		}
	}
}
