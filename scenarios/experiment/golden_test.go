package experiment_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
	_ "github.com/simrun-dev/simrun/scenarios/exactlyonce"
	_ "github.com/simrun-dev/simrun/scenarios/leasing"
	_ "github.com/simrun-dev/simrun/scenarios/replication"
	_ "github.com/simrun-dev/simrun/scenarios/saga"
	_ "github.com/simrun-dev/simrun/scenarios/winkowski"
)

var (
	update   = flag.Bool("update", false, "rewrite testdata/ from the experiments' output (say why in the commit)")
	defaults = flag.Bool("defaults", false, "also compare every experiment at its default parameters with testdata/defaults (slow: minutes of CPU)")
)

// small is a parameter setting per experiment that reaches every table, figure and
// note of it in well under a second of CPU.
var small = map[string]map[string]string{
	"exactlyonce/blocking":       {"runs": "4", "rates": "0,0.3", "observers": "0,2,4"},
	"leasing/detection":          {"runs": "2", "terms": "500ms,1s", "fe-means": "0.5,1.5", "traffic-terms": "500ms,2s", "traffic-time": "20s"},
	"replication/failover":       {"seeds": "2", "periods": "50ms", "leases": "150ms,300ms"},
	"replication/notify":         {"seeds": "2", "replicas": "2,3"},
	"replication/passive-active": {"seeds": "2", "replicas": "2,3", "ops": "10"},
	"saga/connectivity":          {"seeds": "1", "agents": "2,4,6"},
	"saga/grace":                 {"seeds": "2", "graces": "200ms,400ms"},
	"saga/sections":              {"seeds": "2", "max": "3", "txs": "4", "fail": "0.25"},
	"winkowski/contention":       {"seeds": "2", "rho": "3", "agents": "3", "tasks": "3", "pools": "4"},
	"winkowski/cost":             {"seeds": "2", "rho": "3", "agents": "3", "tasks": "3"},
	"winkowski/locality":         {"runs": "3", "n": "5", "meals": "3"},
}

// experiments returns every registered experiment; the test fails if one has no small
// setting (a new experiment must join the golden test).
func experiments(t *testing.T) []*scenarios.Scenario {
	var out []*scenarios.Scenario
	for _, sc := range scenarios.All() {
		if sc.Experiment == nil {
			continue
		}
		if _, ok := small[sc.Name]; !ok {
			t.Errorf("experiment %s has no small setting in the golden test", sc.Name)
		}
		out = append(out, sc)
	}
	return out
}

// output runs an experiment as `simrun run NAME --seed 1 -p … --out DIR` does and
// returns its CSV files and its text output (tables and notes) by file name.
func output(t *testing.T, sc *scenarios.Scenario, params map[string]string) map[string][]byte {
	t.Helper()
	ps, err := scenarios.NewParams(sc.Params, params)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := sc.Experiment(&scenarios.Exp{Seed: 1, Params: ps})
	if err != nil {
		t.Fatal(err)
	}
	if err := ps.Err(); err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	for i, tb := range tables {
		if i > 0 {
			text.WriteString("\n")
		}
		if err := tb.WriteText(&text); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	files, err := reports.WriteExperiment(dir, reports.Experiment{Name: sc.Name, Help: sc.Help, Seed: 1, Params: ps.Values(), Command: "simrun run " + sc.Name, Tables: tables})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{"stdout.txt": text.Bytes()}
	for _, f := range files {
		if strings.HasSuffix(f, ".csv") {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Base(f)] = b
		}
	}
	return out
}

// compare checks got against the files of dir (or rewrites dir with -update).
func compare(t *testing.T, dir string, got map[string][]byte) {
	t.Helper()
	if *update {
		os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range got {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	var want []string
	for _, e := range entries {
		want = append(want, e.Name())
	}
	var have []string
	for name := range got {
		have = append(have, name)
	}
	slices.Sort(have)
	if !slices.Equal(want, have) {
		t.Errorf("files %v, golden %v", have, want)
	}
	for _, name := range want {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if g, ok := got[name]; ok && !bytes.Equal(g, b) {
			t.Errorf("%s differs from %s:\n--- got\n%s\n--- golden\n%s", name, filepath.Join(dir, name), g, b)
		}
	}
}

// TestGolden: every experiment's CSV files and text output at a small setting equal
// the golden files byte for byte (issue 37: the framework changed no number). A
// change on purpose regenerates them with -update; the commit says why.
func TestGolden(t *testing.T) {
	for _, sc := range experiments(t) {
		t.Run(sc.Name, func(t *testing.T) {
			compare(t, filepath.Join("testdata", "golden", strings.ReplaceAll(sc.Name, "/", "_")), output(t, sc, small[sc.Name]))
		})
	}
}

// TestGoldenDefaults (-defaults): the same at every experiment's default parameters,
// the directories `simrun run NAME --out DIR` writes.
func TestGoldenDefaults(t *testing.T) {
	if !*defaults {
		t.Skip("slow: run with -defaults")
	}
	for _, sc := range experiments(t) {
		t.Run(sc.Name, func(t *testing.T) {
			compare(t, filepath.Join("testdata", "defaults", strings.ReplaceAll(sc.Name, "/", "_")), output(t, sc, nil))
		})
	}
}

// TestFiguresFollowTheHouseRules (issue 32 §1, made general): every figure of every
// experiment draws from its table, names the quantity its series stand for, fits only
// a named family, has a caption; every experiment runs at least 30 runs per point by
// default (a run costs milliseconds) and states the paper's claims it measures.
func TestFiguresFollowTheHouseRules(t *testing.T) {
	for _, sc := range experiments(t) {
		for _, d := range sc.Params {
			if n, err := strconv.Atoi(d.Default); (d.Name == "runs" || d.Name == "seeds") && (err != nil || n < 30) {
				t.Errorf("%s: %s defaults to %s, fewer than 30 per point", sc.Name, d.Name, d.Default)
			}
		}
		ps, err := scenarios.NewParams(sc.Params, small[sc.Name])
		if err != nil {
			t.Fatal(err)
		}
		tables, err := sc.Experiment(&scenarios.Exp{Seed: 1, Params: ps})
		if err != nil {
			t.Fatal(err)
		}
		claims := 0
		for _, tb := range tables {
			claims += len(tb.Claims)
			for _, f := range tb.Figures {
				what := sc.Name + " " + f.Name
				data, err := f.Data(tb)
				if err != nil {
					t.Errorf("%s: %v", what, err)
					continue
				}
				if f.Caption == "" {
					t.Errorf("%s: no caption", what)
				}
				if len(reports.Merged(data)) > 1 && f.Legend == "" && f.Series != "" {
					t.Errorf("%s: %d series and no legend heading naming what they stand for", what, len(data))
				}
				if f.Fit != "" {
					if _, err := reports.FitFamily(f.Fit, []float64{1, 2, 3}, []float64{1, 2, 4}); err != nil {
						t.Errorf("%s: %v", what, err)
					}
				}
			}
		}
		if claims == 0 {
			t.Errorf("%s states no claim of its paper", sc.Name)
		}
	}
}

// docs is the users' page on the experiments; blocks of it between
// <!-- generated: NAME --> and <!-- end: NAME --> are generated (-update rewrites them).
const docs = "../../docs/experiments.md"

// TestDocsChapter6Table (issue 32 §3): the chapter-6 table in docs/experiments.md is
// replication/chapter6's own at seed 1 (a table copied by hand went stale: 356/360/300/
// 362 ms against 400/400/344/400).
func TestDocsChapter6Table(t *testing.T) {
	rep, err := scenarios.RunName("replication/chapter6", scenarios.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(rep.Summary, "failovers")
	if i < 0 {
		t.Fatalf("no failover table in the summary:\n%s", rep.Summary)
	}
	table := "```\n$ simrun run replication/chapter6 --seed 1\n" + strings.TrimRight(rep.Summary[i:], "\n") + "\n```\n"
	generated(t, "chapter6", table)
}

// generated checks (or with -update rewrites) the block name of the docs page.
func generated(t *testing.T, name, body string) {
	t.Helper()
	b, err := os.ReadFile(docs)
	if err != nil {
		t.Fatal(err)
	}
	start, end := "<!-- generated: "+name+" -->\n", "<!-- end: "+name+" -->"
	page := string(b)
	i, j := strings.Index(page, start), strings.Index(page, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no block %q … %q", docs, start, end)
	}
	if got := page[i+len(start) : j]; got != body {
		if !*update {
			t.Fatalf("%s's %s block is stale (go test ./scenarios/experiment -run Docs -update rewrites it):\n--- page\n%s\n--- now\n%s", docs, name, got, body)
		}
		if err := os.WriteFile(docs, []byte(page[:i+len(start)]+body+page[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
