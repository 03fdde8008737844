// Package browsertest opens pages in headless Chromium for tests: the page runs its
// own self-check and leaves the verdict in a data-selfcheck attribute of the DOM,
// which the test reads (the report pages and the explorer use it). Without Chromium
// the test is skipped, except under CI=true, where it fails: .ci/run installs
// Debian's chromium package.
package browsertest

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// Find returns the path of a headless-capable Chromium on PATH, "" if there is none.
func Find() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Chromium returns the headless browser's path (see the package doc for when it skips).
func Chromium(t testing.TB) string {
	t.Helper()
	if p := Find(); p != "" {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH under CI: .ci/run installs Debian's chromium package")
	}
	t.Skip("no chromium on PATH (apt-get install chromium); CI runs this test")
	return ""
}

var selfcheckRE = regexp.MustCompile(`data-selfcheck="([^"]*)"`)

// SelfCheck loads url (file:// or http://) in headless Chromium, lets its scripts run
// (up to budget of virtual time), and returns what the page's self-check wrote: "ok",
// or the problems it found.
func SelfCheck(t testing.TB, url string, budget time.Duration) string {
	t.Helper()
	bin := Chromium(t)
	// No wall-clock limit: a loaded machine only makes Chromium slower, and the page's
	// scripts run on virtual time (--virtual-time-budget); a browser that never exits is
	// the test binary's -timeout to report.
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+t.TempDir(),
		"--allow-file-access-from-files", "--virtual-time-budget="+strconv.FormatInt(max(budget.Milliseconds(), 1000), 10), "--dump-dom", url)
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
