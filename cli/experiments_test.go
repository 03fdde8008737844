package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// simrun experiments: it runs the experiments asked for at their defaults, writes each
// one's directory and one index page linking them with their claims; bad input is
// refused at once.
func TestExperimentsIndex(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := cli(t, "experiments", "--out", dir, "--only", "winkowski/cost", "--progress", "never")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`href="winkowski-cost/index.html"`, "Winkowski 2000 §5 (WK-P5)", `class="holds"`, `href="claims.csv"`} {
		if !strings.Contains(string(index), want) {
			t.Errorf("index lacks %q", want)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "winkowski-cost", "index.html"))
	if err != nil || !strings.Contains(string(page), `href="../index.html"`) || !strings.Contains(string(page), "simrun run winkowski/cost --seed 1 --out") {
		t.Errorf("the experiment's page: %v", err)
	}
	claims, _ := os.ReadFile(filepath.Join(dir, "claims.csv"))
	if lines := strings.Count(string(claims), "\n"); lines < 2 {
		t.Errorf("claims.csv has %d lines", lines)
	}
	for _, args := range [][]string{{"experiments"}, {"experiments", "--out", t.TempDir(), "--only", "winkowski/nope"}} {
		if code, _, _ := cli(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
