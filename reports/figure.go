package reports

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is one plot drawn from a table's columns (gonum/plot, written as PNG and SVG).
// An experiment gets its figures by setting Table.Figures; the data drawn is exactly
// the table's (Data returns it, and a test compares the two).
type Figure struct {
	// Name is the file stem (NAME.png, NAME.svg); Title heads the plot; Caption is
	// printed under it on the experiment's page: the claim the figure supports.
	Name    string `json:"name"`
	Title   string `json:"title"`
	Caption string `json:"caption"`
	// X and Y name the columns plotted; Low and High, when set, the columns of the
	// interval drawn as error bars around Y (a 95% confidence or Wilson interval).
	X    string `json:"x"`
	Y    string `json:"y"`
	Low  string `json:"low,omitempty"`
	High string `json:"high,omitempty"`
	// Series, when set, names the column whose values split the rows into lines.
	Series string `json:"series,omitempty"`
	// XLabel and YLabel label the axes (default: the column names).
	XLabel string `json:"xlabel,omitempty"`
	YLabel string `json:"ylabel,omitempty"`
	// LogX and LogY use logarithmic axes.
	LogX bool `json:"logx,omitempty"`
	LogY bool `json:"logy,omitempty"`
	// Fit draws each series' least-squares line (its slope and R² in the legend).
	Fit bool `json:"fit,omitempty"`
	// Points draws markers only (no line joining them).
	Points bool `json:"points,omitempty"`
	// Curves are reference curves drawn as dashed lines (an analytic model).
	Curves []Curve `json:"curves,omitempty"`
}

// Curve is a reference curve y = F(x), drawn over the figure's x range (a cross at
// that x when every point has the same x: Figure.CurvesAsMarks).
type Curve struct {
	Name string                  `json:"name"`
	F    func(x float64) float64 `json:"-"`
}

// SeriesData is one plotted line: its points and, when the figure has them, the lower
// and upper ends of each point's interval.
type SeriesData struct {
	Name      string
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
	xi, err := col(f.X)
	if err != nil {
		return nil, err
	}
	yi, err := col(f.Y)
	if err != nil {
		return nil, err
	}
	li, hi, si := -1, -1, -1
	if f.Low != "" {
		if li, err = col(f.Low); err != nil {
			return nil, err
		}
		if hi, err = col(f.High); err != nil {
			return nil, err
		}
	}
	if f.Series != "" {
		if si, err = col(f.Series); err != nil {
			return nil, err
		}
	}
	var out []SeriesData
	idx := map[string]int{}
	num := func(r []string, c int) (float64, error) {
		v, err := strconv.ParseFloat(r[c], 64)
		if err != nil {
			return 0, fmt.Errorf("reports: figure %s: column %q holds %q, not a number", f.Name, t.Columns[c], r[c])
		}
		return v, nil
	}
	for _, r := range t.Rows {
		name := f.Y
		if si >= 0 {
			name = r[si]
		}
		k, ok := idx[name]
		if !ok {
			k = len(out)
			idx[name] = k
			out = append(out, SeriesData{Name: name})
		}
		x, err := num(r, xi)
		if err != nil {
			return nil, err
		}
		y, err := num(r, yi)
		if err != nil {
			return nil, err
		}
		s := &out[k]
		s.X, s.Y = append(s.X, x), append(s.Y, y)
		if li >= 0 {
			l, err := num(r, li)
			if err != nil {
				return nil, err
			}
			h, err := num(r, hi)
			if err != nil {
				return nil, err
			}
			s.Low, s.High = append(s.Low, l), append(s.High, h)
		}
	}
	return out, nil
}

// errPoints feeds plotter.YErrorBars: points with asymmetric intervals.
type errPoints struct{ s SeriesData }

func (e errPoints) Len() int                    { return len(e.s.X) }
func (e errPoints) XY(i int) (float64, float64) { return e.s.X[i], e.s.Y[i] }
func (e errPoints) YError(i int) (float64, float64) {
	return e.s.Y[i] - e.s.Low[i], e.s.High[i] - e.s.Y[i]
}

// Plot builds the gonum plot of the figure from t.
// CurvesAsMarks reports whether the figure draws its reference curves as crosses:
// it has curves and every point of t has the same x (a curve over an empty range would
// draw nothing). The report page then says so under the caption, which may call them
// dashed.
func (f *Figure) CurvesAsMarks(t *Table) bool {
	if len(f.Curves) == 0 {
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

func (f *Figure) Plot(t *Table) (*plot.Plot, error) {
	data, err := f.Data(t)
	if err != nil {
		return nil, err
	}
	p := plot.New()
	p.Title.Text = f.Title
	p.X.Label.Text = cmpOr(f.XLabel, f.X)
	p.Y.Label.Text = cmpOr(f.YLabel, f.Y)
	if f.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	if f.LogY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = legendCorner(data, f.LogX, f.LogY)
	xmin, xmax := xRange(data)
	for i, s := range data {
		xys := make(plotter.XYs, len(s.X))
		for j := range s.X {
			xys[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
		}
		color := plotutil.Color(i)
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, fmt.Errorf("reports: figure %s: %w", f.Name, err)
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = color, plotutil.Shape(i), vg.Points(3)
		p.Add(sc)
		thumbs := []plot.Thumbnailer{sc}
		if !f.Points && len(xys) > 1 {
			ln, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("reports: figure %s: %w", f.Name, err)
			}
			ln.LineStyle.Color, ln.LineStyle.Width = color, vg.Points(1.2)
			p.Add(ln)
			thumbs = append(thumbs, ln)
		}
		if s.Low != nil {
			eb, err := plotter.NewYErrorBars(errPoints{s})
			if err != nil {
				return nil, fmt.Errorf("reports: figure %s: %w", f.Name, err)
			}
			eb.LineStyle.Color, eb.LineStyle.Width, eb.CapWidth = color, vg.Points(1), vg.Points(5)
			p.Add(eb)
		}
		label := s.Name
		if f.Series == "" {
			label = cmpOr(f.YLabel, s.Name)
		}
		if f.Fit && len(s.X) > 1 {
			a, b, r2 := LinFit(s.X, s.Y)
			fl := plotter.NewFunction(func(x float64) float64 { return a + b*x })
			fl.XMin, fl.XMax = slices.Min(s.X), slices.Max(s.X)
			fl.LineStyle.Color, fl.LineStyle.Width = color, vg.Points(0.8)
			fl.LineStyle.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
			p.Add(fl)
			if math.IsNaN(r2) || slices.Max(s.Y)-slices.Min(s.Y) < 1e-12 {
				label = fmt.Sprintf("%s (constant %.3g)", s.Name, a)
			} else {
				label = fmt.Sprintf("%s (fit %.3g + %.3g·x, R² %.3f)", s.Name, a, b, r2)
			}
		}
		p.Legend.Add(label, thumbs...)
	}
	for i, c := range f.Curves {
		fn := plotter.NewFunction(c.F)
		if !math.IsInf(xmin, 0) {
			fn.XMin, fn.XMax = xmin, xmax
		}
		fn.Samples = 200
		fn.LineStyle.Color = plotutil.Color(len(data) + i)
		fn.LineStyle.Width = vg.Points(1.2)
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
			mk.GlyphStyle.Color, mk.GlyphStyle.Shape, mk.GlyphStyle.Radius = fn.LineStyle.Color, draw.CrossGlyph{}, vg.Points(5)
			p.Add(mk)
			thumbs = append(thumbs, mk)
		}
		p.Legend.Add(c.Name, thumbs...)
	}
	return p, nil
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

// legendCorner picks the corner of the plot where the legend covers the fewest points:
// the corner boxes are the outer 45% of the x range and 40% of the y range.
func legendCorner(data []SeriesData, logX, logY bool) (top, left bool) {
	tr := func(v float64, lg bool) float64 {
		if lg {
			return math.Log10(max(v, 1e-300))
		}
		return v
	}
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range data {
		for i := range s.X {
			x, y := tr(s.X[i], logX), tr(s.Y[i], logY)
			xmin, xmax, ymin, ymax = min(xmin, x), max(xmax, x), min(ymin, y), max(ymax, y)
			if s.Low != nil {
				ymin, ymax = min(ymin, tr(s.Low[i], logY)), max(ymax, tr(s.High[i], logY))
			}
		}
	}
	best := -1
	for c, corner := range [][2]bool{{true, true}, {true, false}, {false, false}, {false, true}} {
		n := 0
		for _, s := range data {
			for i := range s.X {
				fx := (tr(s.X[i], logX) - xmin) / max(xmax-xmin, 1e-300)
				fy := (tr(s.Y[i], logY) - ymin) / max(ymax-ymin, 1e-300)
				inX := (corner[1] && fx <= 0.45) || (!corner[1] && fx >= 0.55)
				inY := (corner[0] && fy >= 0.6) || (!corner[0] && fy <= 0.4)
				if inX && inY {
					n++
				}
			}
		}
		if best < 0 || n < best {
			best, top, left = n, corner[0], corner[1]
		}
		_ = c
	}
	return top, left
}

// Save writes the figure as dir/NAME.png and dir/NAME.svg and returns the paths.
func (f *Figure) Save(t *Table, dir string) ([]string, error) {
	p, err := f.Plot(t)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	var paths []string
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, f.Name+ext)
		if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
			return nil, fmt.Errorf("reports: %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
