package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// simrun shrink TRACE reduces a failing run and writes a plan and a trace that replay;
// sweep --shrink shrinks the lowest failing seed; bad input exits 2.
func TestShrinkCommand(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	var out, errb bytes.Buffer
	if code := runMain(&env{stdout: &out, stderr: &errb}, []string{"run", "demo/faults", "--seed", "1", "-p", "bound=1ms", "--trace", trace}); code != 1 {
		t.Fatalf("run: exit %d %s", code, errb.String())
	}
	out.Reset()
	if code := runMain(&env{stdout: &out, stderr: &errb}, []string{"shrink", trace, "--progress", "never"}); code != 0 {
		t.Fatalf("shrink: exit %d\n%s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"12 faults", "→ 0 faults", "params    clients=1 ops=1", "liveness demo/completes", "reproduce simrun run demo/faults --seed 1 -p bound=1ms -p clients=1 -p ops=1 --faults "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("shrink output lacks %q:\n%s", want, out.String())
		}
	}
	shrunk := filepath.Join(dir, "t-shrunk.jsonl")
	if _, err := os.Stat(filepath.Join(dir, "t-shrunk-faults.json")); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := runMain(&env{stdout: &out, stderr: &errb}, []string{"replay", shrunk}); code != 0 {
		t.Fatalf("replay of the shrunk trace: exit %d %s", code, out.String())
	}
	for _, bad := range [][]string{
		{"shrink"},
		{"shrink", filepath.Join(dir, "missing.jsonl")},
		{"shrink", trace, "--max-runs", "0"},
		{"shrink", trace, "--out", trace},
		{"shrink", trace, "--property", "demo/at-most-once"},
	} {
		errb.Reset()
		if code := runMain(&env{stdout: &out, stderr: &errb}, bad); code != exitUsage || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
			t.Errorf("%q: exit %d stderr %q", bad, code, errb.String())
		}
	}
	// A passing trace has nothing to shrink.
	ok := filepath.Join(dir, "ok.jsonl")
	runMain(&env{stdout: &out, stderr: &errb}, []string{"run", "demo/happy", "--trace", ok})
	errb.Reset()
	if code := runMain(&env{stdout: &out, stderr: &errb}, []string{"shrink", ok}); code != exitUsage || !strings.Contains(errb.String(), "passes") {
		t.Errorf("passing trace: exit %d %q", code, errb.String())
	}
	// sweep --shrink.
	out.Reset()
	art := filepath.Join(dir, "art")
	if code := runMain(&env{stdout: &out, stderr: &errb}, []string{"sweep", "demo/faults", "--seeds", "1-3", "-p", "bound=1ms", "--shrink", "--artifacts", art}); code != 1 {
		t.Fatalf("sweep --shrink: exit %d", code)
	}
	if !strings.Contains(out.String(), "shrink    demo/faults seed 1: demo/completes") {
		t.Fatalf("sweep --shrink output:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(art, "demo-faults-seed1-shrunk.jsonl")); err != nil {
		t.Fatal(err)
	}
}
