package rpscen

import (
	"strconv"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
)

func runExperiment(t *testing.T, name string, params map[string]string) []*reports.Table {
	t.Helper()
	sc, err := scenarios.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := scenarios.NewParams(sc.Params, params)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := sc.Experiment(&scenarios.Exp{Seed: 1, Params: ps})
	if err != nil {
		t.Fatal(err)
	}
	return tables
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("cell %q: %v", s, err)
	}
	return v
}

// replication/notify: the thesis' notification (§7: backups stop pinging) sends less
// membership traffic than its polling at every group size and fails over sooner (a
// notice of the expiry instead of the next ping); the caption's numbers are the
// table's; the claim holds.
func TestNotifyExperiment(t *testing.T) {
	tables := runExperiment(t, "replication/notify", map[string]string{"replicas": "2,4", "seeds": "3"})
	tb := tables[1]
	rate, fo := map[string]float64{}, map[string]float64{}
	for _, r := range tb.Rows {
		rate[r[0]+"/"+r[1]], fo[r[0]+"/"+r[1]] = num(t, r[3]), num(t, r[6])
	}
	for _, n := range []string{"2", "4"} {
		if rate[thesisNotify+"/"+n] >= rate[thesisPolling+"/"+n] {
			t.Errorf("%s replicas: thesis notification %v messages/s, polling %v", n, rate[thesisNotify+"/"+n], rate[thesisPolling+"/"+n])
		}
		if fo[thesisNotify+"/"+n] >= fo[thesisPolling+"/"+n] {
			t.Errorf("%s replicas: thesis notification fails over in %v ms, polling %v", n, fo[thesisNotify+"/"+n], fo[thesisPolling+"/"+n])
		}
		saving := 100 * (rate[thesisNotify+"/"+n]/rate[thesisPolling+"/"+n] - 1)
		want := strconv.FormatFloat(saving, 'f', 1, 64) + " % at " + n + " replicas"
		if !strings.Contains(tb.Figures[0].Caption, want) {
			t.Errorf("traffic caption lacks %q: %q", want, tb.Figures[0].Caption)
		}
	}
	if f := tb.Figures[1]; !f.ZeroY {
		t.Error("the failover figure's axis is cut: a few ms look like a gap")
	}
	if c := tables[0].Claims[0]; c.Verdict != reports.Holds {
		t.Errorf("%s: %s (%s)", c.Paper, c.Verdict, c.Measured)
	}
}

// replication/failover: the expected model is drawn per ping period, §5.4's claims
// are judged, and the measurements are where the model says (within a period).
func TestFailoverExperiment(t *testing.T) {
	tables := runExperiment(t, "replication/failover", map[string]string{"periods": "50ms", "leases": "300ms,600ms", "seeds": "4"})
	tb := tables[1]
	for _, r := range tb.Rows {
		if got, want := num(t, r[3]), num(t, r[6]); got < want-100 || got > want+100 {
			t.Errorf("lease %s: failover %v ms, expected %v", r[1], got, want)
		}
	}
	if f := tb.Figures[0]; len(f.Curves) != 1 || f.Fit != "" {
		t.Errorf("failover figure: %d model curves, fit %q; want the expected model, no straight fit", len(f.Curves), f.Fit)
	}
	if len(tables[0].Claims) != 3 {
		t.Fatalf("claims %+v", tables[0].Claims)
	}
	for _, c := range tables[0].Claims {
		if !strings.HasPrefix(c.Source, "Zhu 2002 §5.4") || c.Measured == "" {
			t.Errorf("claim %+v", c)
		}
	}
}

// §6.7's key case happens on every seed: the Process group's primary is on the killed
// ORBWork server, so the group fails over.
func TestChapter6ProcessFailsOver(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		rep, err := scenarios.RunName("replication/chapter6", scenarios.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Failed() {
			t.Fatalf("seed %d: %v", seed, rep.Verdict)
		}
		failedOver := false
		for _, l := range strings.Split(rep.Summary, "\n") {
			if f := strings.Fields(l); len(f) >= 2 && (f[0] == "Process" || (len(f) > 1 && f[len(f)-3] == "Process")) && !strings.Contains(l, "(kept)") {
				failedOver = true
			}
		}
		if !failedOver {
			t.Errorf("seed %d: the Process group kept its primary at 6.7:\n%s", seed, rep.Summary)
		}
	}
}
