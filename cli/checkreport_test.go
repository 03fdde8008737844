package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A counterexample's report (issue 32 §2): an untimed model's pictures run over its
// steps, not nanoseconds; the violating step is marked and named; and "reproduce" is
// the check command that finds it again (the trace file is a temporary path, given
// only as a comment).
func TestCounterexampleReport(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := cli(t, "check", "test/forgetful-2pc", "--report", dir, "--trace", filepath.Join(t.TempDir(), "cex.jsonl"))
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a violation): %s", code, errs)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	page, thr, tl := read("index.html"), read("throughput.svg"), read("timeline.svg")
	if !strings.Contains(page, "<pre>simrun check test/forgetful-2pc") {
		t.Error("the page's reproduce is not the check command")
	}
	if !strings.Contains(page, `id="violation"`) || !strings.Contains(tl, "violated at step") {
		t.Error("the violating step is not named on the page and marked on the timeline")
	}
	if !strings.Contains(thr, "step of the counterexample") || strings.Contains(thr, "virtual time") || strings.Contains(thr, "per 0s") {
		t.Error("the message plot of an untimed counterexample is not drawn over its steps")
	}
	if strings.Contains(tl, "event ") || !strings.Contains(tl, "step ") {
		t.Error("the timeline of an untimed counterexample is not labelled in steps")
	}
}
