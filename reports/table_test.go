package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTableTextAndCSV(t *testing.T) {
	tb := NewTable("Cost", "rho", "msgs", "note")
	tb.Add(1, 12.5, "a, b")
	tb.Add(10, 3.0/7, `quote "q"`)
	tb.Notes = []string{"fit: y = 2x"}
	want := "Cost\nrho  msgs    note\n1    12.5    a, b\n10   0.4286  quote \"q\"\nfit: y = 2x\n"
	if got := tb.String(); got != want {
		t.Fatalf("text:\n%q\nwant\n%q", got, want)
	}
	dir := t.TempDir()
	path, err := tb.SaveCSV(filepath.Join(dir, "sub"), "cost.csv")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if got := string(b); got != "rho,msgs,note\n1,12.5,\"a, b\"\n10,0.4286,\"quote \"\"q\"\"\"\n" {
		t.Fatalf("csv %q", got)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a row of the wrong width was accepted")
		}
	}()
	tb.Add(1, 2)
}

func TestSaveCSVError(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	_ = os.WriteFile(file, nil, 0o644)
	if _, err := NewTable("", "a").SaveCSV(filepath.Join(file, "x"), "t.csv"); err == nil || !strings.HasPrefix(err.Error(), "reports:") {
		t.Fatalf("err %v", err)
	}
}
