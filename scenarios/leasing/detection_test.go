package lsscen

import (
	"fmt"
	"testing"

	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
)

// TestDetectionShape: the measurements reproduce their expected shapes (small runs),
// the detection figure plots the delay in terms against its model, and the claims'
// verdicts follow the numbers.
func TestDetectionShape(t *testing.T) {
	sc, _ := scenarios.Lookup("leasing/detection")
	ps, _ := scenarios.NewParams(sc.Params, map[string]string{"runs": "8", "terms": "500ms,2s", "fe-means": "0.25,2", "traffic-terms": "100ms,1s,10s", "traffic-time": "60s"})
	tabs, err := sc.Experiment(&scenarios.Exp{Seed: 1, Params: ps})
	if err != nil {
		t.Fatal(err)
	}
	if len(tabs) != 5 || tabs[0].Claims == nil {
		t.Fatalf("%d tables: want the claims, delay, false expiry, traffic and traffic per policy (for the figure)", len(tabs))
	}
	num := func(s string) float64 {
		var f float64
		if _, err := fmt.Sscan(s, &f); err != nil {
			t.Fatalf("cell %q: %v", s, err)
		}
		return f
	}
	// Detection: the grantor expires within one access period (plus a latency) of a
	// term after the parting; the ratio to the term is near its model.
	delay := tabs[1]
	for _, row := range delay.Rows {
		term, mean, max, ratio, model := num(row[0]), num(row[2]), num(row[6]), num(row[9]), num(row[12])
		if mean < term-0.15 || max > term+0.02 {
			t.Errorf("detection delay for term %v: mean %v max %v", term, mean, max)
		}
		if ratio < model-0.03 || ratio > model+0.03 {
			t.Errorf("detection delay for term %v: %v terms, model %v", term, ratio, model)
		}
	}
	if f := delay.Figures[0]; f.LogY || f.Y != "server_mean_over_term" {
		t.Errorf("detection figure plots %s (log y %v), want the delay in terms on a linear axis", f.Y, f.LogY)
	}
	// False expiry: short disconnections (mean a quarter term) rarely expire the lease,
	// long ones (two terms) mostly do.
	short, long := num(tabs[2].Rows[0][4]), num(tabs[2].Rows[1][4])
	if short > 0.25 || long < 0.4 {
		t.Errorf("false-expiry rates: short %v long %v", short, long)
	}
	// Renewal traffic: G&C's on-demand load falls with the term and flattens.
	r := tabs[3].Rows
	if !(num(r[0][2]) > num(r[1][2]) && num(r[1][2]) > num(r[2][2])) || num(r[2][2]) > 0.2 {
		t.Errorf("on-demand traffic not decreasing to a floor: %v %v %v", r[0][2], r[1][2], r[2][2])
	}
	for _, row := range r {
		if d := num(row[2]) - num(row[3]); d > 0.25*num(row[3])+0.05 || d < -0.25*num(row[3])-0.05 {
			t.Errorf("on-demand traffic %v vs model %v at term %v", row[2], row[3], row[0])
		}
	}
	// The detection and transience claims hold (a violation would have failed a run).
	for _, c := range tabs[0].Claims[:2] {
		if c.Verdict != reports.Holds {
			t.Errorf("%s: %s (%s)", c.Paper, c.Verdict, c.Measured)
		}
	}
}
