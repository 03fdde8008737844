package sagascen

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

// saga/sections: the messages per transaction are exactly 6(n−1) with §3.3's notices
// at a sub-transaction's end, 2n²+2n−4 with a notice per section, 2n for an
// orchestrator; the orchestrator handles every message (the busiest node's share is
// 1) and the agent layer less; an agent's crash stops half the transactions (one of
// the two chains), the orchestrator's all of them; the claims say so.
func TestSectionsExperiment(t *testing.T) {
	tables := runExperiment(t, "saga/sections", map[string]string{"max": "4", "seeds": "2", "txs": "3"})
	cost, crash := tables[1], tables[2]
	for _, r := range cost.Rows {
		n, m := num(t, r[1]), num(t, r[3])
		_, f := messageModel(r[0])
		if m != f(n) {
			t.Errorf("%s, %v sections: %v messages per transaction, want %v", r[0], n, m, f(n))
		}
		if n == 1 && r[0] != orchestration {
			if r[9] != "-" {
				t.Errorf("%s, one section (no message): the busiest node's share is %s, want '-'", r[0], r[9])
			}
			continue
		}
		if share := num(t, r[9]); n == 4 && (r[0] == orchestration) != (share == 1) {
			t.Errorf("%s, 4 sections: the busiest node handles %v of the messages", r[0], share)
		}
	}
	want := map[string]float64{"agents/a2": 0.5, "orchestrator/a2": 0.5, "orchestrator/orchestrator": 0}
	for _, r := range crash.Rows {
		if got := num(t, r[5]); got != want[r[1]+"/"+r[2]] {
			t.Errorf("%s with %s down: %v of the transactions completed during the outage, want %v", r[1], r[2], got, want[r[1]+"/"+r[2]])
		}
	}
	if c := cost.Figures[0].Caption; !strings.Contains(c, "Every measured mean equals its exact count") {
		t.Errorf("messages caption: %q", c)
	}
	for _, c := range tables[0].Claims[1:] {
		if c.Verdict != reports.Holds {
			t.Errorf("%s: %s (%s)", c.Paper, c.Verdict, c.Measured)
		}
	}
}

// saga/connectivity: 2(n−1) messages a round along the line, n(n−1) all-to-all; each
// beat carries 16 + 16n bytes; a loss reaches the farthest agent of the line
// timeout + (n−2) beats after the cut (within a latency and the beats' phases), and
// every agent all-to-all after the timeout.
func TestConnectivityExperiment(t *testing.T) {
	tables := runExperiment(t, "saga/connectivity", map[string]string{"agents": "3,5", "seeds": "2"})
	for _, r := range tables[1].Rows {
		n := num(t, r[1])
		msgs, bytes, spread := 2*(n-1)*20, 2*(n-1)*(16+16*n)*20, 200+(n-2)*50
		if r[0] == "all" {
			msgs, bytes, spread = n*(n-1)*20, n*(n-1)*(16+16*n)*20, 200
		}
		if m, b := num(t, r[3]), num(t, r[6]); m != msgs || b != bytes {
			t.Errorf("%s, %v agents: %v messages/s, %v bytes/s; want %v, %v", r[0], n, m, b, msgs, bytes)
		}
		if s := num(t, r[9]); s < spread-1 || s > spread+15 {
			t.Errorf("%s, %v agents: a loss reached every agent after %v ms, want about %v", r[0], n, s, spread)
		}
	}
	if c := tables[0].Claims[0]; c.Verdict != reports.Holds {
		t.Errorf("%s: %s", c.Paper, c.Verdict)
	}
	// Over one agent count the formulas are crosses, and the report page says so.
	one := runExperiment(t, "saga/connectivity", map[string]string{"agents": "2", "seeds": "1"})
	if !one[1].Figures[0].CurvesAsMarks(one[1]) {
		t.Error("one agent count: the formulas are not drawn as marks")
	}
}

// saga/grace: detection takes the timeout whatever the grace period; the compensation
// moves one for one with it; the figure draws both; the claim holds.
func TestGraceExperiment(t *testing.T) {
	tables := runExperiment(t, "saga/grace", map[string]string{"graces": "200ms,800ms", "seeds": "2"})
	rows := tables[1].Rows
	if d0, d1 := num(t, rows[0][2]), num(t, rows[1][2]); d0 != d1 {
		t.Errorf("detection %v and %v ms: it should not depend on the grace period", d0, d1)
	}
	if d := num(t, rows[1][5]) - num(t, rows[0][5]); d < 550 || d > 650 {
		t.Errorf("compensation moved by %v ms when the grace period grew by 600 ms", d)
	}
	f := tables[1].Figures[0]
	data, err := f.Data(tables[1])
	if err != nil || len(data) != 2 {
		t.Fatalf("grace figure: %d series (%v), want detection and compensation", len(data), err)
	}
	if c := tables[0].Claims[0]; c.Verdict != reports.Holds {
		t.Errorf("%s: %s (%s)", c.Paper, c.Verdict, c.Measured)
	}
}
