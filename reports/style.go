package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The house style of every figure simrun draws (experiments, run reports): one place,
// so that no experiment styles its own plots.
//
//   - size: FigureWidth wide (the page's text column), the legend below the data,
//     never over it;
//   - text: a sans-serif face (Liberation Sans, metric-compatible with Arial and
//     Helvetica, which an SVG falls back to), like the page around it;
//   - colours: the Okabe–Ito palette, told apart by readers with any common colour
//     vision deficiency; each series also has its own marker shape;
//   - axes: padded so that no marker or error bar is clipped at an edge, with "nice"
//     ticks (1, 2, 2.5 or 5 times a power of ten) and light grid lines.

// FigureWidth and FigureHeight are a figure's size without its legend (the page's
// text column is about 1 000 px; at 96 px an inch, 10 in fill it).
const (
	FigureWidth  = 10 * vg.Inch
	FigureHeight = 4.4 * vg.Inch
)

// Palette is the Okabe–Ito colour-blind-safe palette (yellow last: it is pale on white).
var Palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.RGBA{0x00, 0x00, 0x00, 0xff}, // black
	color.RGBA{0xB8, 0xA2, 0x00, 0xff}, // yellow, darkened to read on white
}

// Shapes are the series' marker shapes, in series order (with the colours).
var Shapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.PlusGlyph{}, draw.TriangleGlyph{},
}

// SeriesColor and SeriesShape are series i's colour and marker.
func SeriesColor(i int) color.Color      { return Palette[i%len(Palette)] }
func SeriesShape(i int) draw.GlyphDrawer { return Shapes[i%len(Shapes)] }

// sans is the house face at size points.
func sans(size float64) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Length(size)}
}

// NewPlot returns an empty plot in the house style: sans-serif text, light grid, nice
// ticks.
func NewPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = sans(13)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(12)
		a.Tick.Label.Font = sans(11)
		a.Tick.Marker = NiceTicks{}
		a.Padding = vg.Points(4)
	}
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	p.Legend.TextStyle.Font = sans(11)
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = color.Gray{Y: 225}, color.Gray{Y: 225}
	g.Vertical.Width, g.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)
	p.Add(g)
	return p
}

// NiceTicks labels an axis at 1, 2, 2.5 or 5 times a power of ten, 4 to 8 labels,
// with minor ticks between.
type NiceTicks struct{}

// Ticks implements plot.Ticker.
func (NiceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo, lo+1)
	}
	step := NiceStep(hi-lo, 6)
	var ts []plot.Tick
	dec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	if s := strconv.FormatFloat(step, 'f', -1, 64); strings.Contains(s, ".") {
		dec = len(s) - strings.Index(s, ".") - 1
	}
	minor := step / 2
	if m := step / math.Pow(10, math.Floor(math.Log10(step))); m == 2.5 || m == 5 {
		minor = step / 5
		if m == 2.5 {
			minor = step / 5
		}
	}
	for v := math.Ceil(lo/minor-1e-9) * minor; v <= hi+minor*1e-9; v += minor {
		t := plot.Tick{Value: v}
		if r := math.Abs(math.Remainder(v, step)); r < step*1e-6 {
			t.Label = strconv.FormatFloat(math.Round(v/step)*step, 'f', dec, 64)
			if t.Label == "-0" || strings.Trim(t.Label, "-0.") == "" {
				t.Label = strings.TrimPrefix(t.Label, "-")
			}
		}
		ts = append(ts, t)
	}
	return ts
}

// NiceStep is a tick step for a span of about n steps: 1, 2, 2.5 or 5 times a power
// of ten.
func NiceStep(span float64, n int) float64 {
	raw := span / float64(n)
	e := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*e >= raw*0.999 {
			return m * e
		}
	}
	return 10 * e
}

// padRange widens [lo, hi] by frac of its span on each side (multiplicatively on a
// log axis), so that markers and error bars at the ends are not clipped; a single
// value gets a span around it.
func padRange(lo, hi float64, log bool, frac float64) (float64, float64) {
	if log {
		if lo <= 0 {
			lo = hi / 10
		}
		l, h := math.Log10(lo), math.Log10(hi)
		if h == l {
			l, h = l-0.5, h+0.5
		}
		d := (h - l) * frac
		return math.Pow(10, l-d), math.Pow(10, h+d)
	}
	if hi == lo {
		d := math.Max(math.Abs(lo)*0.1, 1)
		return lo - d, hi + d
	}
	d := (hi - lo) * frac
	return lo - d, hi + d
}

// legendEntry is one line of a figure's legend.
type legendEntry struct {
	label  string
	thumbs []plot.Thumbnailer
}

// figureCanvas is a figure ready to be drawn: its panels (one plot, or several side by
// side sharing an axis), the legend below them, its heading, and the size.
type figureCanvas struct {
	panels []*plot.Plot
	// ylabels, when set, are the panels' y labels drawn by the figure instead of
	// gonum: on a log axis gonum places the label's box at the linear middle of the
	// range, near the top, and pads the plot down to make room for it.
	ylabels []string
	legend  []legendEntry
	heading string // what the series stand for ("ping period")
}

// legendLayout returns the legend's columns and rows for width w.
func (fc *figureCanvas) legendLayout(w vg.Length) (cols, rows int, colW, rowH vg.Length) {
	if len(fc.legend) == 0 {
		return 0, 0, 0, 0
	}
	sty := NewPlot("", "", "").Legend.TextStyle
	for _, e := range fc.legend {
		colW = max(colW, sty.Rectangle(e.label).Max.X+vg.Points(40))
	}
	cols = max(1, min(len(fc.legend), int((w-vg.Points(20))/colW)))
	rows = (len(fc.legend) + cols - 1) / cols
	rowH = sty.Rectangle("Xg").Max.Y + vg.Points(5)
	return cols, rows, colW, rowH
}

// grid returns the panels' layout: up to 3 side by side, more in rows of 2 or 3.
func (fc *figureCanvas) grid() (rows, cols int) {
	n := len(fc.panels)
	switch {
	case n <= 3:
		return 1, max(1, n)
	case n == 4:
		return 2, 2
	}
	return (n + 2) / 3, 3
}

// height is the figure's whole height: the panels and the legend.
func (fc *figureCanvas) height() vg.Length {
	_, rows, _, rowH := fc.legendLayout(FigureWidth)
	h := FigureHeight
	if pr, _ := fc.grid(); pr > 1 {
		h = vg.Length(pr) * FigureHeight * 0.7
	}
	if rows > 0 {
		h += vg.Length(rows)*rowH + vg.Points(10)
		if fc.heading != "" {
			h += rowH
		}
	}
	return h
}

// draw draws the panels side by side on top and the legend below, in columns.
func (fc *figureCanvas) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	cols, rows, colW, rowH := fc.legendLayout(c.Max.X - c.Min.X)
	legendH := vg.Length(0)
	if rows > 0 {
		legendH = vg.Length(rows)*rowH + vg.Points(10)
		if fc.heading != "" {
			legendH += rowH
		}
	}
	top := draw.Crop(c, vg.Points(4), -vg.Points(8), legendH, -vg.Points(4))
	if len(fc.panels) == 1 {
		fc.panels[0].Draw(top)
		fc.ylabel(0, top)
	} else {
		pr, pc := fc.grid()
		tiles := draw.Tiles{Rows: pr, Cols: pc, PadX: vg.Points(14), PadY: vg.Points(10)}
		grid := make([][]*plot.Plot, pr)
		for i := range grid {
			grid[i] = make([]*plot.Plot, pc)
			for j := range grid[i] {
				if k := i*pc + j; k < len(fc.panels) {
					grid[i][j] = fc.panels[k]
				}
			}
		}
		cs := plot.Align(grid, tiles, top)
		for i := range grid {
			for j, p := range grid[i] {
				if p != nil {
					p.Draw(cs[i][j])
					fc.ylabel(i*pc+j, cs[i][j])
				}
			}
		}
	}
	if rows == 0 {
		return
	}
	sty := NewPlot("", "", "").Legend.TextStyle
	y := c.Min.Y + legendH - rowH
	x0 := c.Min.X + vg.Points(12)
	if fc.heading != "" {
		hs := sty
		hs.Font = sans(11)
		c.FillText(hs, vg.Point{X: x0, Y: y}, fc.heading+":")
		y -= rowH
	}
	for i, e := range fc.legend {
		col, row := i/rows, i%rows
		x := x0 + vg.Length(col)*colW
		yy := y - vg.Length(row)*rowH
		icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: x, Y: yy}, Max: vg.Point{X: x + vg.Points(28), Y: yy + rowH - vg.Points(4)}}}
		for _, t := range e.thumbs {
			t.Thumbnail(&icon)
		}
		c.FillText(sty, vg.Point{X: x + vg.Points(34), Y: yy + vg.Points(1)}, e.label)
	}
	_ = cols
}

// ylabel draws panel i's y label (when the figure draws it) at the left of c, turned
// a quarter, centred on c.
func (fc *figureCanvas) ylabel(i int, c draw.Canvas) {
	if i >= len(fc.ylabels) || fc.ylabels[i] == "" {
		return
	}
	sty := fc.panels[i].Y.Label.TextStyle
	sty.Rotation = math.Pi / 2
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	c.FillText(sty, vg.Point{X: c.Min.X, Y: (c.Min.Y + c.Max.Y) / 2}, fc.ylabels[i])
}

// save writes the figure as dir/name.png (at 2× resolution) and dir/name.svg (its
// text in the house face, falling back to Arial, Helvetica, any sans-serif).
func (fc *figureCanvas) save(dir, name string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	w, h := FigureWidth, fc.height()
	png := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(192))
	fc.draw(draw.New(png))
	var pb bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: png}).WriteTo(&pb); err != nil {
		return nil, fmt.Errorf("reports: %s.png: %w", name, err)
	}
	svg := vgsvg.New(w, h)
	fc.draw(draw.New(svg))
	var sb bytes.Buffer
	if _, err := svg.WriteTo(&sb); err != nil {
		return nil, fmt.Errorf("reports: %s.svg: %w", name, err)
	}
	svgText := strings.ReplaceAll(sb.String(), "font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
	for ext, b := range map[string][]byte{".png": pb.Bytes(), ".svg": []byte(svgText)} {
		path := filepath.Join(dir, name+ext)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return nil, fmt.Errorf("reports: %w", err)
		}
	}
	return []string{filepath.Join(dir, name+".png"), filepath.Join(dir, name+".svg")}, nil
}
