package eoscen

import (
	"strconv"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/scenarios"
)

// The EO-P4 experiment's breakdown: every agent is completed or blocked for exactly one
// cause; the simple protocol's blocked agents all wait on a stage without a majority
// (one node down); observers cut that share; the failover CDF rises to at most 1.
func TestBlockingCausesAndFailover(t *testing.T) {
	sc, err := scenarios.Lookup("exactlyonce/blocking")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := scenarios.NewParams(sc.Params, map[string]string{"runs": "8", "rates": "0,0.3", "observers": "0,4"})
	if err != nil {
		t.Fatal(err)
	}
	tables, err := sc.Experiment(&scenarios.Exp{Seed: 1, Params: ps})
	if err != nil {
		t.Fatal(err)
	}
	main := tables[0]
	col := func(cols []string, name string) int {
		for i, c := range cols {
			if c == name {
				return i
			}
		}
		t.Fatalf("no column %s in %v", name, cols)
		return -1
	}
	completed := map[string]int{} // variant/rate → completed
	agents := map[string]int{}
	for _, r := range main.Rows {
		key := r[col(main.Columns, "variant")] + "/" + r[col(main.Columns, "crash_rate")]
		completed[key], _ = strconv.Atoi(r[col(main.Columns, "completed")])
		agents[key], _ = strconv.Atoi(r[col(main.Columns, "agents")])
	}
	blocked := map[string]map[string]int{}
	var cdf [][]string
	for _, tb := range tables[1:] {
		if strings.HasPrefix(tb.Title, "EO-P4 failover") {
			cdf = tb.Rows
			continue
		}
		variant := strings.TrimPrefix(tb.Title, "EO-P4 blocked agents by cause: ")
		for _, r := range tb.Rows {
			key := variant + "/" + r[col(tb.Columns, "crash_rate")]
			if blocked[key] == nil {
				blocked[key] = map[string]int{}
			}
			blocked[key][r[col(tb.Columns, "cause")]], _ = strconv.Atoi(r[col(tb.Columns, "blocked")])
		}
	}
	if len(blocked) != 6 {
		t.Fatalf("blocked tables cover %d variant/rate points, want 6: %v", len(blocked), blocked)
	}
	for key, causes := range blocked {
		sum := causes["no majority"] + causes["in doubt"] + causes["other"]
		if completed[key]+sum != agents[key] {
			t.Errorf("%s: %d completed + %d blocked != %d agents", key, completed[key], sum, agents[key])
		}
	}
	simple := blocked["simple/0.3"]
	if simple["no majority"] == 0 || simple["in doubt"]+simple["other"] != 0 {
		t.Errorf("simple at 0.3: %v, want every blocked agent on a stage without a majority", simple)
	}
	if b4, bs := blocked["extended, 4 observers/0.3"]["no majority"], simple["no majority"]; b4 >= bs {
		t.Errorf("4 observers block %d agents for want of a majority, the simple protocol %d", b4, bs)
	}
	if len(cdf) == 0 {
		t.Fatal("no failover measured with 4 observers at crash rate 0.3")
	}
	prev := 0.0
	for _, r := range cdf {
		f, _ := strconv.ParseFloat(r[2], 64)
		if f <= prev || f > 1 {
			t.Fatalf("CDF not rising within (0, 1]: %v", cdf)
		}
		prev = f
	}
}
