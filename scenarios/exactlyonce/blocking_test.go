package eoscen

import (
	"strconv"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
)

// The EO-P4 experiment's breakdown: every agent is completed or blocked for exactly one
// cause; the simple protocol's blocked agents all wait on a stage without a majority
// (one node down); observers cut that share; the failover CDF rises to at most 1. The
// figures tell every variant apart (the simple protocol and the extended one with 0
// observers are one series, named so), and the completion caption says where a
// variant with observers completes fewer agents than the simple protocol — exactly
// where the table says so.
func TestBlockingCausesAndFailover(t *testing.T) {
	sc, err := scenarios.Lookup("exactlyonce/blocking")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := scenarios.NewParams(sc.Params, map[string]string{"runs": "8", "rates": "0,0.3", "observers": "0,2,4"})
	if err != nil {
		t.Fatal(err)
	}
	tables, err := sc.Experiment(&scenarios.Exp{Seed: 1, Params: ps})
	if err != nil {
		t.Fatal(err)
	}
	byTitle := map[string]*reports.Table{}
	for _, tb := range tables {
		byTitle[tb.Title] = tb
	}
	main, blockedT, cdfT := byTitle["EO-P4 blocking: completion vs crash rate"], byTitle["EO-P4 blocked agents by cause"], byTitle["EO-P4 failover after a worker crash"]
	if main == nil || blockedT == nil || cdfT == nil || byTitle[reports.ClaimsTitle] == nil {
		t.Fatalf("tables %v", tables)
	}
	col := func(tb *reports.Table, name string) int {
		for i, c := range tb.Columns {
			if c == name {
				return i
			}
		}
		t.Fatalf("no column %s in %v", name, tb.Columns)
		return -1
	}
	completed := map[string]int{} // variant/rate → completed
	agents := map[string]int{}
	share := map[string]float64{}
	for _, r := range main.Rows {
		key := r[col(main, "variant")] + "/" + r[col(main, "crash_rate")]
		completed[key], _ = strconv.Atoi(r[col(main, "completed")])
		agents[key], _ = strconv.Atoi(r[col(main, "agents")])
		share[key], _ = strconv.ParseFloat(r[col(main, "completion_rate")], 64)
	}
	blocked := map[string]map[string]int{}
	for _, r := range blockedT.Rows {
		key := r[col(blockedT, "variant")] + "/" + r[col(blockedT, "crash_rate")]
		if blocked[key] == nil {
			blocked[key] = map[string]int{}
		}
		blocked[key][r[col(blockedT, "cause")]], _ = strconv.Atoi(r[col(blockedT, "blocked")])
	}
	if len(blocked) != 8 {
		t.Fatalf("blocked table covers %d variant/rate points, want 8: %v", len(blocked), blocked)
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
	prev := 0.0
	for _, r := range cdfT.Rows {
		f, _ := strconv.ParseFloat(r[2], 64)
		if f <= prev || f > 1 {
			t.Fatalf("CDF not rising within (0, 1]: %v", cdfT.Rows)
		}
		prev = f
	}
	// Every series of the completion figure can be seen: equal series are merged.
	fig := main.Figures[0]
	data, err := fig.Data(main)
	if err != nil {
		t.Fatal(err)
	}
	merged := reports.Merged(data)
	if len(merged) != 3 || merged[0].Name != "simple = extended, 0 observers" {
		var names []string
		for _, s := range merged {
			names = append(names, s.Name)
		}
		t.Errorf("completion figure draws %v, want simple and extended with 0 observers as one series and two more", names)
	}
	// The caption names the rates where a variant with observers completes fewer.
	for _, k := range []string{"2", "4"} {
		v := "extended, " + k + " observers"
		fewer := share[v+"/0.3"] < share["simple/0.3"]
		i := strings.Index(fig.Caption, "E"+v[1:]+" completes")
		if i < 0 {
			t.Fatalf("the caption says nothing of %s: %q", v, fig.Caption)
		}
		sentence := fig.Caption[i+len(v):] // up to the next variant's or the closing sentence
		for _, next := range []string{"Extended, ", " Where ", " With 0 "} {
			sentence, _, _ = strings.Cut(sentence, next)
		}
		says := strings.Contains(sentence, "fewer at 0.3")
		if fewer != says {
			t.Errorf("%s at 0.3: completes %v vs simple %v, but the caption says %q", v, share[v+"/0.3"], share["simple/0.3"], fig.Caption)
		}
	}
}
