package reports

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// MeanCI returns the mean of xs and its 95% confidence interval from Student's t
// distribution with n-1 degrees of freedom (gonum/stat). With fewer than two samples
// the interval is the mean itself (nothing to estimate a spread from); with none all
// three are NaN.
func MeanCI(xs []float64) (mean, lo, hi float64) {
	switch len(xs) {
	case 0:
		return math.NaN(), math.NaN(), math.NaN()
	case 1:
		return xs[0], xs[0], xs[0]
	}
	m, sd := stat.MeanStdDev(xs, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(0.975)
	h := t * sd / math.Sqrt(float64(len(xs)))
	return m, m - h, m + h
}

// Wilson returns the proportion k/n and its 95% Wilson score interval (sound near 0
// and 1, where the normal approximation is not). n = 0 gives NaNs.
func Wilson(k, n int) (p, lo, hi float64) {
	if n <= 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	z := distuv.UnitNormal.Quantile(0.975)
	nf := float64(n)
	p = float64(k) / nf
	den := 1 + z*z/nf
	c := (p + z*z/(2*nf)) / den
	h := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	lo, hi = max(0, c-h), min(1, c+h)
	if k == 0 {
		lo = 0 // exact: the interval's lower end is 0, rounding aside
	}
	if k == n {
		hi = 1
	}
	return p, lo, hi
}

// LinFit fits y = a + b·x by least squares (gonum/stat) and returns a, b and R².
func LinFit(xs, ys []float64) (a, b, r2 float64) {
	a, b = stat.LinearRegression(xs, ys, nil, false)
	return a, b, stat.RSquared(xs, ys, nil, a, b)
}
