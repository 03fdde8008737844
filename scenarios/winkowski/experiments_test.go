package wkscen

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
)

// runExperiment runs experiment name with params on seed 1.
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

// table returns the table titled title.
func table(t *testing.T, tables []*reports.Table, title string) *reports.Table {
	t.Helper()
	for _, tb := range tables {
		if tb.Title == title {
			return tb
		}
	}
	t.Fatalf("no table %q", title)
	return nil
}

func col(t *testing.T, tb *reports.Table, name string) int {
	t.Helper()
	for i, c := range tb.Columns {
		if c == name {
			return i
		}
	}
	t.Fatalf("table %q has no column %q", tb.Title, name)
	return -1
}

// WK-P5: the game's messages per conflict-free task are exactly 14ϱ (complete) and
// 12ϱ (restricted), ordered locking's 3ϱ, the central manager's 3 whatever ϱ; the
// response times follow their families (R² near 1); the claims hold, and the caption
// says the counts are exact.
func TestCostExperiment(t *testing.T) {
	tables := runExperiment(t, "winkowski/cost", map[string]string{"seeds": "2", "agents": "4", "tasks": "4"})
	all := table(t, tables, "WK-P5 cost vs ϱ, all protocols")
	if len(all.Rows) != 4*8 || len(all.Figures) != 2 {
		t.Fatalf("combined table: %d rows, %d figures", len(all.Rows), len(all.Figures))
	}
	want := map[string]func(rho float64) float64{
		"winkowski": func(r float64) float64 { return 14 * r }, "winkowski-restricted": func(r float64) float64 { return 12 * r },
		"ordered": func(r float64) float64 { return 3 * r }, "central": func(float64) float64 { return 3 },
	}
	for _, r := range all.Rows {
		rho, _ := strconv.ParseFloat(r[1], 64)
		m, _ := strconv.ParseFloat(r[3], 64)
		if w := want[r[0]](rho); math.Abs(m-w) > 1e-9 {
			t.Errorf("%s ϱ=%v: %v messages, want %v", r[0], rho, m, w)
		}
	}
	models := table(t, tables, "WK-P5 models")
	for _, r := range models.Rows {
		if r[1] != "response time (ms)" || r[4] == "" {
			continue
		}
		if r2, _ := strconv.ParseFloat(r[4], 64); r2 < 0.99 {
			t.Errorf("%s response time: %s fits with R² %v, want its family to explain it", r[0], r[2], r2)
		}
	}
	if c := all.Figures[0].Caption; !strings.Contains(c, "equal its exact count at every ϱ") {
		t.Errorf("messages caption does not say the counts are exact: %q", c)
	}
	claims := table(t, tables, reports.ClaimsTitle)
	if len(claims.Claims) != 2 {
		t.Fatalf("%d claims, want WK-P5 for the two game variants", len(claims.Claims))
	}
	for _, c := range claims.Claims {
		if c.Verdict != reports.Holds {
			t.Errorf("WK-P5 %s: %s (%s)", c.Paper, c.Verdict, c.Measured)
		}
	}
}

// The locality experiment: with a task failed for good, the game (simrun's reading)
// delays no task beyond distance 1 (WK-P4) while ordered locking does; the caption
// names the protocols that delay tasks further, and the claim's verdict follows.
func TestLocalityExperiment(t *testing.T) {
	tables := runExperiment(t, "winkowski/locality", map[string]string{"runs": "30", "protocols": "winkowski,ordered"})
	tb := tables[1]
	share := func(proto, fault, d string) float64 {
		for _, r := range tb.Rows {
			if r[0] == proto && r[1] == fault && r[2] == d {
				v, _ := strconv.ParseFloat(r[col(t, tb, "share_missed")], 64)
				return v
			}
		}
		t.Fatalf("no row %s/%s/%s", proto, fault, d)
		return 0
	}
	if d2, d3 := share("winkowski", "task", "2"), share("winkowski", "task", "3"); d2 != 0 || d3 != 0 {
		t.Errorf("game, task failure: misses at distance 2 %v, 3+ %v; want none (WK-P4)", d2, d3)
	}
	if d3 := share("winkowski", "manager", "3"); d3 != 0 {
		t.Errorf("game, manager failure: misses at distance 3+ %v; want none (choice F1)", d3)
	}
	if d3 := share("ordered", "task", "3"); d3 == 0 {
		t.Errorf("ordered locking, task failure: no miss at distance 3+; its blocking chains should show")
	}
	c := tb.Figures[0].Caption
	if !strings.Contains(c, "under ordered") || !strings.Contains(c, "under winkowski none did") {
		t.Errorf("caption does not follow the data: %q", c)
	}
	claims := tables[0].Claims
	if len(claims) != 1 || claims[0].Verdict != reports.Holds {
		t.Errorf("WK-P4 claim: %+v", claims)
	}
}

// The price of economy: under contention every task still completes (runOne fails
// otherwise), the baselines keep their message counts (ordered 3ϱ, central 3), and the
// game pays for its conflicts: more than its conflict-free 14ϱ from ϱ = 2 on.
func TestContentionExperiment(t *testing.T) {
	tables := runExperiment(t, "winkowski/contention", map[string]string{"seeds": "2", "agents": "4", "tasks": "3", "pools": "4", "rho": "3"})
	rows := table(t, tables, "WK-P5 under contention: cost vs ϱ, all protocols").Rows
	if len(rows) != 12 {
		t.Fatalf("%d rows, want 4 protocols × 3", len(rows))
	}
	for _, r := range rows {
		rho, _ := strconv.Atoi(r[1])
		msgs, _ := strconv.ParseFloat(r[3], 64)
		switch r[0] {
		case "ordered":
			if msgs != float64(3*rho) {
				t.Errorf("ordered ϱ=%d: %v messages, want %d", rho, msgs, 3*rho)
			}
		case "central":
			if msgs != 3 {
				t.Errorf("central ϱ=%d: %v messages, want 3", rho, msgs)
			}
		case "winkowski":
			if rho >= 2 && msgs <= float64(14*rho) {
				t.Errorf("winkowski ϱ=%d under contention: %v messages, no more than conflict-free 14ϱ", rho, msgs)
			}
		}
	}
	sc, _ := scenarios.Lookup("winkowski/contention")
	ps, _ := scenarios.NewParams(sc.Params, map[string]string{"pools": "3", "rho": "4"})
	if _, err := sc.Experiment(&scenarios.Exp{Seed: 1, Params: ps}); err == nil || !strings.Contains(err.Error(), "more than the 3 pools") {
		t.Fatalf("rho > pools: %v", err)
	}
}
