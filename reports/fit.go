package reports

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// Fit is a least-squares fit of a model family to data: its parameters, the fitted
// function and its coefficient of determination (NaN when y does not vary).
type Fit struct {
	Family string    // "line", "quadratic" or "power"
	Coef   []float64 // line: a, b; quadratic: a, b, c; power: a, b
	R2     float64
	F      func(x float64) float64
}

// String says which family and the fitted parameters, for a legend.
func (f Fit) String() string {
	r2 := fmt.Sprintf("R² %.3f", f.R2)
	if math.IsNaN(f.R2) {
		return fmt.Sprintf("constant %.4g", f.Coef[0])
	}
	switch f.Family {
	case "line":
		return fmt.Sprintf("least-squares line %.4g %+.4g·x (%s)", f.Coef[0], f.Coef[1], r2)
	case "quadratic":
		return fmt.Sprintf("least-squares quadratic %.3g %+.3g·x %+.3g·x² (%s)", f.Coef[0], f.Coef[1], f.Coef[2], r2)
	case "power":
		return fmt.Sprintf("least-squares power law %.3g·x^%.3g (log-log; %s)", f.Coef[0], f.Coef[1], r2)
	}
	return f.Family
}

// FitFamily fits ys against xs by least squares within family: "line" (a + b·x),
// "quadratic" (a + b·x + c·x²) or "power" (a·x^b, fitted as a line in log-log, so every
// x and y must be positive).
func FitFamily(family string, xs, ys []float64) (Fit, error) {
	constant := true
	for _, y := range ys {
		constant = constant && math.Abs(y-ys[0]) < 1e-12
	}
	switch family {
	case "line":
		a, b, r2 := LinFit(xs, ys)
		if constant {
			r2 = math.NaN()
		}
		return Fit{Family: family, Coef: []float64{a, b}, R2: r2, F: func(x float64) float64 { return a + b*x }}, nil
	case "quadratic":
		if len(xs) < 3 {
			return Fit{}, fmt.Errorf("a quadratic fit needs 3 points (got %d)", len(xs))
		}
		a := mat.NewDense(len(xs), 3, nil)
		for i, x := range xs {
			a.SetRow(i, []float64{1, x, x * x})
		}
		var c mat.VecDense
		if err := c.SolveVec(a, mat.NewVecDense(len(ys), append([]float64(nil), ys...))); err != nil {
			return Fit{}, fmt.Errorf("quadratic fit: %w", err)
		}
		c0, c1, c2 := c.AtVec(0), c.AtVec(1), c.AtVec(2)
		f := func(x float64) float64 { return c0 + c1*x + c2*x*x }
		return Fit{Family: family, Coef: []float64{c0, c1, c2}, R2: rSquared(xs, ys, f, constant), F: f}, nil
	case "power":
		lx, ly := make([]float64, len(xs)), make([]float64, len(ys))
		for i := range xs {
			if xs[i] <= 0 || ys[i] <= 0 {
				return Fit{}, fmt.Errorf("a power-law fit needs positive x and y (got %g, %g)", xs[i], ys[i])
			}
			lx[i], ly[i] = math.Log(xs[i]), math.Log(ys[i])
		}
		la, b := stat.LinearRegression(lx, ly, nil, false)
		a := math.Exp(la)
		f := func(x float64) float64 { return a * math.Pow(x, b) }
		return Fit{Family: family, Coef: []float64{a, b}, R2: rSquared(xs, ys, f, constant), F: f}, nil
	}
	return Fit{}, fmt.Errorf("unknown fit family %q (want line, quadratic or power)", family)
}

// rSquared is 1 − SS_res/SS_tot of f on the data (NaN for constant data).
func rSquared(xs, ys []float64, f func(float64) float64, constant bool) float64 {
	if constant {
		return math.NaN()
	}
	m := stat.Mean(ys, nil)
	var res, tot float64
	for i := range xs {
		res += (ys[i] - f(xs[i])) * (ys[i] - f(xs[i]))
		tot += (ys[i] - m) * (ys[i] - m)
	}
	return 1 - res/tot
}
