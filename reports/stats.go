package reports

import (
	"math"
	"math/rand/v2"
	"slices"

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

// ClusterShare returns the pooled share Σk/Σn of units that come in clusters — the
// agents of one run share its crashes, the tasks of one run its failure — and its 95%
// cluster-bootstrap interval: the runs are resampled with replacement reps times
// (seeded: the same data give the same interval) and the 2.5th and 97.5th percentiles
// of the resampled shares are the ends. Units of one run are not independent, so a
// Wilson interval over the units is too narrow; the run is the unit here. Without
// units all three are NaN.
func ClusterShare(k, n []int, reps int, seed uint64) (p, lo, hi float64) {
	var sk, sn int
	for i := range k {
		sk, sn = sk+k[i], sn+n[i]
	}
	if sn == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	p = float64(sk) / float64(sn)
	if len(k) < 2 {
		return p, p, p
	}
	r := rand.New(rand.NewPCG(seed, 0x5eed_c1a5))
	shares := make([]float64, 0, reps)
	for range reps {
		var bk, bn int
		for range k {
			j := r.IntN(len(k))
			bk, bn = bk+k[j], bn+n[j]
		}
		if bn > 0 {
			shares = append(shares, float64(bk)/float64(bn))
		}
	}
	slices.Sort(shares)
	at := func(q float64) float64 { return shares[min(len(shares)-1, int(q*float64(len(shares))))] }
	return p, at(0.025), at(0.975)
}
