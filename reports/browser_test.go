package reports

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// chromium returns the headless browser, or skips the test when there is none and
// this is not CI (CI=true must have it: .ci/run installs Debian's chromium).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH under CI: .ci/run installs Debian's chromium package")
	}
	t.Skip("no chromium on PATH (apt-get install chromium); CI runs this test")
	return ""
}

var selfcheckRE = regexp.MustCompile(`data-selfcheck="([^"]*)"`)

// OpenInBrowser loads page in headless Chromium and returns what the page's
// self-check found ("ok", or the console errors, broken images and missing sections).
func openInBrowser(t *testing.T, page string) string {
	t.Helper()
	bin := chromium(t)
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+t.TempDir(),
		"--allow-file-access-from-files", "--virtual-time-budget=10000", "--dump-dom", "file://"+abs)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	m := selfcheckRE.FindSubmatch(out)
	if m == nil {
		t.Fatalf("the page's self-check did not run (no data-selfcheck in the DOM):\n%.2000s", out)
	}
	return string(m[1])
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
	if err := os.Remove(filepath.Join(dir, "cost.svg")); err != nil {
		t.Fatal(err)
	}
	if got := openInBrowser(t, filepath.Join(dir, "index.html")); got == "ok" {
		t.Fatal("a page with a missing figure passed the browser check")
	}
}
