package reports

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is one plot drawn from a table's columns (gonum/plot, written as PNG and SVG
// in the house style: style.go). An experiment gets its figures by setting
// Table.Figures; the data drawn is exactly the table's (Data returns it, and a test
// compares the two).
type Figure struct {
	// Name is the file stem (NAME.png, NAME.svg); Title heads the plot; Caption is
	// printed under it on the experiment's page: the claim the figure supports, which
	// must agree with the data (generate it from the numbers, or test it).
	Name    string `json:"name"`
	Title   string `json:"title"`
	Caption string `json:"caption"`
	// X and Y name the columns plotted; Low and High, when set, the columns of the
	// interval drawn as error bars around Y (a 95% confidence or Wilson interval).
	X    string `json:"x"`
	Y    string `json:"y"`
	Low  string `json:"low,omitempty"`
	High string `json:"high,omitempty"`
	// Ys, when set, draws several columns of each row as series of their own (the
	// detection and the compensation time of one grace period), in place of Y.
	Ys []YSeries `json:"ys,omitempty"`
	// Series, when set, names the column whose values split the rows into series;
	// Legend names the quantity they stand for ("ping period"), the legend's heading.
	// Series whose points are all equal are drawn once, labelled "A = B".
	Series string `json:"series,omitempty"`
	Legend string `json:"legend,omitempty"`
	// Facet, when set, names the column whose values split the rows into panels side
	// by side, sharing the y axis (small multiples instead of one plot per value).
	Facet string `json:"facet,omitempty"`
	// FacetName names the quantity the panels stand for ("ping period"): each panel's
	// title is it and the panel's value.
	FacetName string `json:"facet_name,omitempty"`
	// XLabel and YLabel label the axes (default: the column names).
	XLabel string `json:"xlabel,omitempty"`
	YLabel string `json:"ylabel,omitempty"`
	// LogX and LogY use logarithmic axes; ZeroY starts the y axis at 0 (a quantity
	// whose differences must be read against its size: an axis cut to 358–374 ms made
	// 2 ms look like a gap).
	LogX bool `json:"logx,omitempty"`
	LogY bool `json:"logy,omitempty"`
	// FreeY gives each panel (Facet) its own y range, for panels whose values differ
	// by orders of magnitude (the default shares one range, so panels compare).
	FreeY bool `json:"freey,omitempty"`
	ZeroY bool `json:"zeroy,omitempty"`
	// Fit draws each series' least-squares fit of a family the data are known to
	// follow, and the legend says which: "line" (a + b·x), "quadratic" (a + b·x + c·x²)
	// or "power" (a·x^b). Leave it empty where an analytic model is known: draw the
	// model as a Curve instead.
	Fit string `json:"fit,omitempty"`
	// Points draws markers only; Lines draws lines only (a distribution function);
	// Bars draws grouped bars over x taken as categories (labelled by Categories in
	// increasing x order, or by the numbers).
	Points bool `json:"points,omitempty"`
	// Steps draws the lines as steps (an empirical distribution function).
	Steps      bool     `json:"steps,omitempty"`
	Lines      bool     `json:"lines,omitempty"`
	Bars       bool     `json:"bars,omitempty"`
	Categories []string `json:"categories,omitempty"`
	// Curves are reference curves drawn as dashed lines (an analytic model, a bound).
	Curves []Curve `json:"curves,omitempty"`
}

// Curve is a reference curve y = F(x), drawn over the figure's x range (a cross at
// that x when every point has the same x: Figure.CurvesAsMarks).
type Curve struct {
	Name string                  `json:"name"`
	F    func(x float64) float64 `json:"-"`
	// Series, when set, draws the curve in that series' colour (its model).
	Series string `json:"series,omitempty"`
	// Facet, when set, draws it in that panel only.
	Facet string `json:"facet,omitempty"`
	// Reference marks a curve in a series' colour that is not that series' model (the
	// conflict-free count beside measurements under contention): the series keeps
	// the line joining its points, which a model would hide.
	Reference bool `json:"reference,omitempty"`
}

// YSeries is one of a figure's Ys: a column (with its interval's) drawn as a series
// named Name.
type YSeries struct {
	Name string `json:"name"`
	Y    string `json:"y"`
	Low  string `json:"low,omitempty"`
	High string `json:"high,omitempty"`
}

// SeriesData is one plotted line: its points and, when the figure has them, the lower
// and upper ends of each point's interval.
type SeriesData struct {
	Name      string
	Facet     string
	X, Y      []float64
	Low, High []float64
}

// Data extracts the figure's series from t, in the order the series first appear.
func (f *Figure) Data(t *Table) ([]SeriesData, error) {
	col := func(name string) (int, error) {
		i := slices.Index(t.Columns, name)
		if i < 0 {
			return -1, fmt.Errorf("reports: figure %s: table %q has no column %q", f.Name, t.Title, name)
		}
		return i, nil
	}
	ys := f.Ys
	if len(ys) == 0 {
		ys = []YSeries{{Name: "", Y: f.Y, Low: f.Low, High: f.High}}
	}
	xi, err := col(f.X)
	if err != nil {
		return nil, err
	}
	type ycols struct{ y, lo, hi int }
	var yc []ycols
	for _, y := range ys {
		c := ycols{-1, -1, -1}
		if c.y, err = col(y.Y); err != nil {
			return nil, err
		}
		if y.Low != "" {
			if c.lo, err = col(y.Low); err != nil {
				return nil, err
			}
			if c.hi, err = col(y.High); err != nil {
				return nil, err
			}
		}
		yc = append(yc, c)
	}
	si, fi := -1, -1
	if f.Series != "" {
		if si, err = col(f.Series); err != nil {
			return nil, err
		}
	}
	if f.Facet != "" {
		if fi, err = col(f.Facet); err != nil {
			return nil, err
		}
	}
	var out []SeriesData
	idx := map[string]int{}
	num := func(r []string, c int) (float64, error) {
		if r[c] == "-" {
			return math.NaN(), nil // not measured at this point
		}
		v, err := strconv.ParseFloat(r[c], 64)
		if err != nil {
			return 0, fmt.Errorf("reports: figure %s: column %q holds %q, not a number", f.Name, t.Columns[c], r[c])
		}
		return v, nil
	}
	for _, r := range t.Rows {
		for j, c := range yc {
			name, facet := f.Y, ""
			switch {
			case len(f.Ys) > 0 && si >= 0:
				name = ys[j].Name + ", " + r[si]
			case len(f.Ys) > 0:
				name = ys[j].Name
			case si >= 0:
				name = r[si]
			}
			if fi >= 0 {
				facet = r[fi]
			}
			k, ok := idx[facet+"\x00"+name]
			if !ok {
				k = len(out)
				idx[facet+"\x00"+name] = k
				out = append(out, SeriesData{Name: name, Facet: facet})
			}
			x, err := num(r, xi)
			if err != nil {
				return nil, err
			}
			y, err := num(r, c.y)
			if err != nil {
				return nil, err
			}
			if math.IsNaN(x) || math.IsNaN(y) {
				continue // not measured at this point (no message to share out, say)
			}
			s := &out[k]
			s.X, s.Y = append(s.X, x), append(s.Y, y)
			if c.lo >= 0 {
				l, err := num(r, c.lo)
				if err != nil {
					return nil, err
				}
				h, err := num(r, c.hi)
				if err != nil {
					return nil, err
				}
				s.Low, s.High = append(s.Low, l), append(s.High, h)
			}
		}
	}
	return out, nil
}

// errPoints feeds plotter.YErrorBars: points with asymmetric intervals.
type errPoints struct {
	x, y, lo, hi []float64
}

func (e errPoints) Len() int                    { return len(e.x) }
func (e errPoints) XY(i int) (float64, float64) { return e.x[i], e.y[i] }
func (e errPoints) YError(i int) (float64, float64) {
	return e.y[i] - e.lo[i], e.hi[i] - e.y[i]
}

// CurvesAsMarks reports whether the figure draws its reference curves as crosses:
// it has curves and every point of t has the same x (a curve over an empty range would
// draw nothing). The report page then says so under the caption, which may call them
// dashed.
func (f *Figure) CurvesAsMarks(t *Table) bool {
	if len(f.Curves) == 0 || f.Bars {
		return false
	}
	data, err := f.Data(t)
	if err != nil {
		return false
	}
	lo, hi := xRange(data)
	return lo == hi
}

// xRange returns the least and the greatest x of the data (+Inf, -Inf without points).
func xRange(data []SeriesData) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range data {
		for _, x := range s.X {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	return lo, hi
}

// Merged returns the figure's series with those drawn identically merged, in
// first-appearance order: panels (facets) whose series are all equal become one
// panel titled "A = B", and series whose points are equal in every panel where they
// appear become one series labelled "A = B" (drawn one on top of the other, the lower
// one was hidden while the legend listed it).
func Merged(data []SeriesData) []SeriesData {
	same := func(a, b SeriesData) bool {
		return slices.Equal(a.X, b.X) && slices.Equal(a.Y, b.Y) && slices.Equal(a.Low, b.Low) && slices.Equal(a.High, b.High)
	}
	// Panels.
	var facets []string
	by := map[string][]SeriesData{}
	for _, s := range data {
		if _, ok := by[s.Facet]; !ok {
			facets = append(facets, s.Facet)
		}
		by[s.Facet] = append(by[s.Facet], s)
	}
	name := map[string]string{}
	var kept []string
	for _, f := range facets {
		i := slices.IndexFunc(kept, func(k string) bool {
			a, b := by[k], by[f]
			return len(a) == len(b) && !slices.ContainsFunc(a, func(x SeriesData) bool {
				j := slices.IndexFunc(b, func(y SeriesData) bool { return y.Name == x.Name })
				return j < 0 || !same(x, b[j])
			})
		})
		if i >= 0 {
			name[kept[i]] += " = " + f
			continue
		}
		kept = append(kept, f)
		name[f] = f
	}
	var out []SeriesData
	for _, f := range kept {
		for _, s := range by[f] {
			s.Facet = name[f]
			out = append(out, s)
		}
	}
	// Series: equal wherever both appear (and they appear in the same panels).
	var names []string
	for _, s := range out {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	in := func(n string) map[string]SeriesData {
		m := map[string]SeriesData{}
		for _, s := range out {
			if s.Name == n {
				m[s.Facet] = s
			}
		}
		return m
	}
	label := map[string]string{}
	var keptNames []string
	for _, n := range names {
		mine := in(n)
		i := slices.IndexFunc(keptNames, func(k string) bool {
			theirs := in(k)
			if len(theirs) != len(mine) {
				return false
			}
			for f, s := range mine {
				t, ok := theirs[f]
				if !ok || !same(s, t) {
					return false
				}
			}
			return true
		})
		if i >= 0 {
			label[keptNames[i]] += " = " + n
			label[n] = ""
			continue
		}
		keptNames = append(keptNames, n)
		label[n] = n
	}
	var merged []SeriesData
	for _, s := range out {
		if label[s.Name] == "" {
			continue
		}
		s.Name = label[s.Name]
		merged = append(merged, s)
	}
	return merged
}

// Overlaps returns the pairs of series (after Merged) that differ by less than 1 % of
// the y span at every shared x: drawn, one hides the other, so the page says so.
func (f *Figure) Overlaps(t *Table) [][2]string {
	raw, err := f.Data(t)
	if err != nil || f.Bars {
		return nil
	}
	data := Merged(raw)
	// 1 % of the scale the reader sees: the figure's, or with FreeY each panel's.
	tols := map[string]float64{}
	for _, s := range data {
		key := ""
		if f.FreeY {
			key = s.Facet
		}
		if _, ok := tols[key]; ok {
			continue
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, o := range data {
			if !f.FreeY || o.Facet == s.Facet {
				for _, y := range o.Y {
					lo, hi = min(lo, y), max(hi, y)
				}
			}
		}
		tols[key] = (hi - lo) * 0.01
	}
	var out [][2]string
	for i, a := range data {
		for _, b := range data[i+1:] {
			if a.Facet != b.Facet || !slices.Equal(a.X, b.X) || len(a.X) == 0 {
				continue
			}
			tol := tols[""]
			if f.FreeY {
				tol = tols[a.Facet]
			}
			close := true
			for k := range a.Y {
				close = close && math.Abs(a.Y[k]-b.Y[k]) <= tol
			}
			if close {
				out = append(out, [2]string{a.Name, b.Name})
			}
		}
	}
	return out
}

// seriesIndex numbers the series by name across facets (a series keeps its colour
// and marker in every panel).
func seriesIndex(data []SeriesData) map[string]int {
	idx := map[string]int{}
	for _, s := range data {
		if _, ok := idx[s.Name]; !ok {
			idx[s.Name] = len(idx)
		}
	}
	return idx
}

// Plot builds the gonum plot of the figure's first panel from t (all of it, when the
// figure has no facets).
func (f *Figure) Plot(t *Table) (*plot.Plot, error) {
	fc, err := f.build(t)
	if err != nil {
		return nil, err
	}
	return fc.panels[0], nil
}

// build draws the figure in the house style.
func (f *Figure) build(t *Table) (*figureCanvas, error) {
	raw, err := f.Data(t)
	if err != nil {
		return nil, err
	}
	data := Merged(raw)
	idx := seriesIndex(data)
	var facets []string
	for _, s := range data {
		if !slices.Contains(facets, s.Facet) {
			facets = append(facets, s.Facet)
		}
	}
	if len(facets) == 0 {
		facets = []string{""}
	}
	fc := &figureCanvas{heading: f.Legend}
	if f.Legend == "" && f.Series != "" && len(idx) > 1 {
		fc.heading = f.Series
	}
	// Shared ranges: every panel has the same axes (FreeY: its own y range).
	xmin, xmax := xRange(data)
	ymin, ymax := yRange(data, f.LogY)
	cats := categories(data)
	for _, c := range f.Curves {
		if math.IsInf(xmin, 0) || f.Bars {
			continue
		}
		for i := 0; i <= 50; i++ {
			x := xmin + (xmax-xmin)*float64(i)/50
			if f.LogX && xmin > 0 {
				x = xmin * math.Pow(xmax/xmin, float64(i)/50)
			}
			if y := c.F(x); !math.IsNaN(y) && !math.IsInf(y, 0) && (!f.LogY || y > 0) {
				ymin, ymax = min(ymin, y), max(ymax, y)
			}
		}
	}
	if f.ZeroY && ymin > 0 {
		ymin = 0
	}
	legendDone := map[string]bool{}
	addLegend := func(label string, thumbs ...plot.Thumbnailer) {
		if !legendDone[label] {
			legendDone[label] = true
			fc.legend = append(fc.legend, legendEntry{label, thumbs})
		}
	}
	for _, facet := range facets {
		title := f.Title
		if len(facets) > 1 {
			title = strings.TrimSpace(f.FacetName + " " + facet)
		}
		p := NewPlot(title, cmpOr(f.XLabel, f.X), cmpOr(f.YLabel, f.Y))
		if f.LogX {
			p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
		}
		if f.LogY {
			p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
		}
		// The axes' ranges: set now (the error bars are clamped to them on a log
		// axis) and again once every plotter is added (adding one widens them to its
		// data, and an interval's end below zero has no place on a log axis).
		ranges := func() {
			if !math.IsInf(ymin, 0) {
				p.Y.Min, p.Y.Max = padRange(ymin, ymax, f.LogY, 0.06)
				if f.ZeroY && ymin >= 0 {
					p.Y.Min = 0
				}
				if !f.LogY && ymin >= 0 && p.Y.Min < 0 {
					p.Y.Min = 0 // a count or a share never drops below zero
				}
			}
			if f.Bars {
				p.X.Min, p.X.Max = -0.6, float64(len(cats))-0.4
				p.X.Tick.Marker = categoryTicks(cats, f.Categories)
			} else if !math.IsInf(xmin, 0) {
				p.X.Min, p.X.Max = padRange(xmin, xmax, f.LogX, 0.04)
			}
		}
		var inFacet []SeriesData
		for _, s := range data {
			if s.Facet == facet {
				inFacet = append(inFacet, s)
			}
		}
		if f.FreeY && len(facets) > 1 {
			ymin, ymax = yRange(inFacet, f.LogY)
			if f.ZeroY && ymin > 0 {
				ymin = 0
			}
		}
		ranges()
		for j, s := range inFacet {
			i := idx[s.Name]
			color, shape := SeriesColor(i), SeriesShape(i)
			label := s.Name
			if f.Series == "" && len(f.Ys) == 0 {
				label = cmpOr(f.YLabel, s.Name)
			}
			if f.Bars {
				thumb, err := f.drawBars(p, s, cats, j, len(inFacet), color)
				if err != nil {
					return nil, err
				}
				addLegend(label, thumb)
				continue
			}
			orig := s
			if s.Low != nil && len(inFacet) > 1 && !f.LogX && xmax > xmin {
				// Dodge: series with error bars sit side by side around their x, so
				// that equal or close intervals do not hide one another.
				d := (xmax - xmin) * 0.006 * (float64(j) - float64(len(inFacet)-1)/2)
				xs := make([]float64, len(s.X))
				for k, x := range s.X {
					xs[k] = x + d
				}
				s.X = xs
			}
			// A series with its own model curve is drawn as points: a line joining
			// them would hide the model.
			modelled := slices.ContainsFunc(f.Curves, func(c Curve) bool {
				return !c.Reference && (c.Series == orig.Name || strings.HasPrefix(orig.Name, c.Series+" = "))
			})
			thumbs, err := f.drawSeries(p, s, color, shape, modelled)
			if err != nil {
				return nil, err
			}
			addLegend(label, thumbs...)
			if f.Fit != "" && len(orig.X) > 1 {
				s = orig
				fit, err := FitFamily(f.Fit, s.X, s.Y)
				if err != nil {
					return nil, fmt.Errorf("reports: figure %s: %w", f.Name, err)
				}
				fl := plotter.NewFunction(fit.F)
				fl.XMin, fl.XMax = slices.Min(s.X), slices.Max(s.X)
				fl.LineStyle.Color, fl.LineStyle.Width = color, vg.Points(1)
				fl.LineStyle.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
				p.Add(fl)
				addLegend(s.Name+": "+fit.String(), fl)
			}
		}
		for ci, c := range f.Curves {
			if f.Bars || (c.Facet != "" && c.Facet != facet) {
				continue
			}
			color := SeriesColor(len(idx) + ci)
			if i, ok := idx[c.Series]; ok && c.Series != "" {
				color = SeriesColor(i)
			}
			fn := plotter.NewFunction(c.F)
			if !math.IsInf(xmin, 0) {
				fn.XMin, fn.XMax = xmin, xmax
			}
			fn.Samples = 200
			fn.LineStyle.Color, fn.LineStyle.Width = color, vg.Points(1.3)
			fn.LineStyle.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			p.Add(fn)
			thumbs := []plot.Thumbnailer{fn}
			if xmin == xmax {
				// Every point has one x (a single agent count, say): a curve over an empty
				// range draws nothing, so mark its value there instead (CurvesAsMarks).
				mk, err := plotter.NewScatter(plotter.XYs{{X: xmin, Y: c.F(xmin)}})
				if err != nil {
					return nil, fmt.Errorf("reports: figure %s: curve %s: %w", f.Name, c.Name, err)
				}
				mk.GlyphStyle.Color, mk.GlyphStyle.Shape, mk.GlyphStyle.Radius = color, draw.CrossGlyph{}, vg.Points(5)
				p.Add(mk)
				thumbs = append(thumbs, mk)
			}
			addLegend(c.Name, thumbs...)
		}
		ranges()
		if f.LogY {
			// gonum boxes a log axis' label at the linear middle of the range: the
			// figure draws it instead, in the room a one-space label keeps.
			fc.ylabels = append(fc.ylabels, p.Y.Label.Text)
			p.Y.Label.Text = " "
		}
		fc.panels = append(fc.panels, p)
	}
	return fc, nil
}

// drawSeries adds one series' markers, line and error bars and returns its legend
// thumbnails.
func (f *Figure) drawSeries(p *plot.Plot, s SeriesData, color color.Color, shape draw.GlyphDrawer, pointsOnly bool) ([]plot.Thumbnailer, error) {
	xys := make(plotter.XYs, len(s.X))
	for j := range s.X {
		xys[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
	}
	var thumbs []plot.Thumbnailer
	if !f.Points && !pointsOnly && len(xys) > 1 {
		ln, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("reports: figure %s: %w", f.Name, err)
		}
		ln.LineStyle.Color, ln.LineStyle.Width = color, vg.Points(1.4)
		if f.Steps {
			ln.StepStyle = plotter.PostStep
		}
		p.Add(ln)
		thumbs = append(thumbs, ln)
	}
	if !f.Lines {
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, fmt.Errorf("reports: figure %s: %w", f.Name, err)
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = color, shape, vg.Points(3.5)
		p.Add(sc)
		thumbs = append(thumbs, sc)
	}
	if s.Low != nil && !f.Lines {
		lo := s.Low
		if f.LogY {
			lo = make([]float64, len(s.Low))
			for i, l := range s.Low {
				lo[i] = max(l, p.Y.Min)
			}
		}
		eb, err := plotter.NewYErrorBars(errPoints{s.X, s.Y, lo, s.High})
		if err != nil {
			return nil, fmt.Errorf("reports: figure %s: %w", f.Name, err)
		}
		eb.LineStyle.Color, eb.LineStyle.Width, eb.CapWidth = color, vg.Points(1), vg.Points(6)
		p.Add(eb)
	}
	return thumbs, nil
}

// categories returns the distinct x values of the data, increasing.
func categories(data []SeriesData) []float64 {
	var cs []float64
	for _, s := range data {
		for _, x := range s.X {
			if !slices.Contains(cs, x) {
				cs = append(cs, x)
			}
		}
	}
	slices.Sort(cs)
	return cs
}

// categoryTicks labels category i at i (by names when given).
func categoryTicks(cats []float64, names []string) plot.Ticker {
	return plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		var ts []plot.Tick
		for i, c := range cats {
			l := strconv.FormatFloat(c, 'g', 4, 64)
			if i < len(names) {
				l = names[i]
			}
			ts = append(ts, plot.Tick{Value: float64(i), Label: l})
		}
		return ts
	})
}

// drawBars draws series j of n as bars beside the others' over each category, with
// its error bars, and returns its legend thumbnail.
func (f *Figure) drawBars(p *plot.Plot, s SeriesData, cats []float64, j, n int, color color.Color) (plot.Thumbnailer, error) {
	w := 0.8 / float64(n)
	var thumb plot.Thumbnailer
	var ex, ey, elo, ehi []float64
	for k, x := range s.X {
		ci := slices.Index(cats, x)
		left := float64(ci) - 0.4 + w*float64(j)
		poly, err := plotter.NewPolygon(plotter.XYs{{X: left + w*0.06, Y: 0}, {X: left + w*0.94, Y: 0}, {X: left + w*0.94, Y: s.Y[k]}, {X: left + w*0.06, Y: s.Y[k]}})
		if err != nil {
			return nil, fmt.Errorf("reports: figure %s: %w", f.Name, err)
		}
		poly.Color, poly.LineStyle.Width = color, 0
		p.Add(poly)
		thumb = poly
		if s.Low != nil {
			ex, ey, elo, ehi = append(ex, left+w/2), append(ey, s.Y[k]), append(elo, s.Low[k]), append(ehi, s.High[k])
		}
	}
	if len(ex) > 0 {
		eb, err := plotter.NewYErrorBars(errPoints{ex, ey, elo, ehi})
		if err != nil {
			return nil, fmt.Errorf("reports: figure %s: %w", f.Name, err)
		}
		eb.LineStyle.Width, eb.CapWidth = vg.Points(1), vg.Points(5)
		p.Add(eb)
	}
	if thumb == nil {
		poly, _ := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}, {X: 0, Y: 0}, {X: 0, Y: 0}})
		poly.Color = color
		thumb = poly
	}
	return thumb, nil
}

// logTicks labels a logarithmic axis at 1, 2 and 5 times the powers of ten in range
// (gonum's LogTicks labels the powers of ten only, which leaves a short range bare).
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	if lo <= 0 || hi <= lo {
		return plot.LogTicks{}.Ticks(lo, hi)
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow(10, e)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', 4, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// Save writes the figure as dir/NAME.png and dir/NAME.svg and returns the paths.
func (f *Figure) Save(t *Table, dir string) ([]string, error) {
	fc, err := f.build(t)
	if err != nil {
		return nil, err
	}
	return fc.save(dir, f.Name)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// yRange is the range of the series' values and intervals (positive ones only on a
// log axis).
func yRange(data []SeriesData, logY bool) (float64, float64) {
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, s := range data {
		for i := range s.Y {
			if !logY || s.Y[i] > 0 {
				ymin, ymax = min(ymin, s.Y[i]), max(ymax, s.Y[i])
			}
			if s.Low != nil {
				if !logY || s.Low[i] > 0 {
					ymin = min(ymin, s.Low[i])
				}
				ymax = max(ymax, s.High[i])
			}
		}
	}
	return ymin, ymax
}
