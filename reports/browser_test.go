package reports

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/internal/browsertest"
)

// openInBrowser loads page in headless Chromium and returns what the page's
// self-check found ("ok", or the console errors, broken images and missing sections).
func openInBrowser(t *testing.T, page string) string {
	t.Helper()
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	return browsertest.SelfCheck(t, "file://"+abs, 10*time.Second)
}

// An experiment page opens in a real browser with every figure loaded, every section
// present and no script or console error.
func TestExperimentPageInBrowser(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteExperiment(dir, Experiment{Name: "x/cost", Seed: 1, Command: "simrun run x/cost --out " + dir, Tables: []*Table{sampleTable()}}); err != nil {
		t.Fatal(err)
	}
	if got := openInBrowser(t, filepath.Join(dir, "index.html")); got != "ok" {
		t.Fatalf("experiment page: %s", got)
	}
	// The check can fail: a missing figure is caught.
	if testing.Short() {
		t.Skip("-short: the second Chromium load (a missing figure is caught) runs in the full suite")
	}
	if err := os.Remove(filepath.Join(dir, "cost.svg")); err != nil {
		t.Fatal(err)
	}
	if got := openInBrowser(t, filepath.Join(dir, "index.html")); got == "ok" {
		t.Fatal("a page with a missing figure passed the browser check")
	}
}
