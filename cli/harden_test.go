package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Issue 34, class 1: every file a user names is read within a bound, and a device or a
// directory where a file is wanted is refused before a byte is read (these used to
// read /dev/zero until the machine ran out of memory). The saga configuration's file
// is tested in cmd/simrun (TestSagaFileBounded), where saga/config is registered.
func TestInputsAreBounded(t *testing.T) {
	dir := t.TempDir()
	devices := []string{"/dev/zero", "/dev/urandom"}
	for _, dev := range devices {
		if _, err := os.Stat(dev); err != nil {
			t.Skipf("no %s here", dev)
		}
		oneLineErr(t, "merge: "+dev+" is not a regular file", "merge", dev)
		oneLineErr(t, "replay: "+dev+" is not a regular file", "replay", dev)
		oneLineErr(t, "lincheck: "+dev+" is not a regular file", "lincheck", dev, "--model", "register")
		oneLineErr(t, dev+" is not a regular file", "run", "demo/happy", "--faults", dev)
	}
	oneLineErr(t, "lincheck: "+dir+" is a directory, not a file", "lincheck", dir, "--model", "register")
	oneLineErr(t, "merge: "+dir+" is a directory", "merge", dir)
}

// simrun replay compares a simulator trace as it reads it: it reports the first
// differing line, a trace cut short, and a trace with a line more.
func TestReplayStreams(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	if code, _, errs := cli(t, "run", "demo/faults", "--trace", trace); code != 0 {
		t.Fatalf("run: exit %d %s", code, errs)
	}
	b, _ := os.ReadFile(trace)
	lines := strings.SplitAfter(string(b), "\n")
	if code, out, _ := cli(t, "replay", trace); code != 0 || !strings.Contains(out, "replay ok: "+strconv.Itoa(len(lines)-1)+" lines identical") || !strings.Contains(out, "ends: quiescent") {
		t.Fatalf("replay: exit %d %s", code, out)
	}
	for _, c := range []struct {
		name, body string
		line       int
	}{
		{"cut short", strings.Join(lines[:10], ""), 11},
		{"a line more", string(b) + lines[5], len(lines)},
		{"a line changed", strings.Join(lines[:7], "") + strings.Replace(lines[7], `"t":`, `"t": `, 1) + strings.Join(lines[8:], ""), 8},
	} {
		os.WriteFile(trace, []byte(c.body), 0o644)
		code, out, _ := cli(t, "replay", trace)
		if code != 1 || !strings.Contains(out, "line "+strconv.Itoa(c.line)+" differs") {
			t.Errorf("%s: exit %d %s", c.name, code, out)
		}
	}
}
