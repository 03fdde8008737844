package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/cli"
)

// simrun runs the command line in-process: exit code, stdout, stderr.
func simrun(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cli.Run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// refusedWith checks the bad-input contract: exit 2, one line on stderr naming want.
func refusedWith(t *testing.T, want string, args ...string) {
	t.Helper()
	code, _, msg := simrun(args...)
	if code != 2 || !strings.Contains(msg, want) || strings.Count(strings.TrimSpace(msg), "\n") != 0 {
		t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", args, code, msg, want)
	}
}

// Issue 34, class 1: saga/config's file parameter names a device (read whole before
// the 1 MiB check, until memory ran out), directly or in a replayed trace's header.
func TestSagaFileBounded(t *testing.T) {
	for _, dev := range []string{"/dev/zero", "/dev/urandom"} {
		if _, err := os.Stat(dev); err == nil {
			refusedWith(t, "parameter file: "+dev+" is not a regular file (a character device)", "run", "saga/config", "-p", "file="+dev)
		}
	}
	dir := t.TempDir()
	refusedWith(t, "parameter file: "+dir+" is a directory", "run", "saga/config", "-p", "file="+dir)
	trace := filepath.Join(dir, "t.jsonl")
	if code, _, errs := simrun("run", "saga/config", "--trace", trace); code != 0 {
		t.Fatalf("saga/config: exit %d %s", code, errs)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	zero := strings.Replace(string(b), `"file":""`, `"file":"/dev/zero"`, 1)
	if zero == string(b) {
		t.Fatal("the trace's header has no file parameter")
	}
	os.WriteFile(trace, []byte(zero), 0o644)
	refusedWith(t, "parameter file: /dev/zero is not a regular file", "replay", trace)
}

// Issue 34, class 3: saga/parallel's fail names an action that exists, or none (a
// name that matched nothing was accepted, and nothing failed).
func TestSagaFailValidated(t *testing.T) {
	for _, f := range []string{"bogus", "nope:doX", ":", "a4:doNothing", "a9:doReceipt"} {
		refusedWith(t, "parameter fail=", "run", "saga/parallel", "-p", "fail="+f)
	}
	for _, f := range []string{"none", "a4:doReceipt", "a1:doBook"} {
		if code, _, errs := simrun("run", "saga/parallel", "-p", "fail="+f); code != 0 {
			t.Errorf("fail=%s: exit %d %s", f, code, errs)
		}
	}
}

// Issue 34, class 3: a lease the replication protocol cannot hold is refused, naming
// the constraint (lease=1ms ended in a liveness violation that read as a bug).
func TestReplicationLeaseValidated(t *testing.T) {
	for _, args := range [][]string{
		{"run", "replication/basic", "-p", "lease=1ms"},
		{"run", "replication/basic", "-p", "lease=24ms"},
		{"run", "replication/case-4.5.1", "-p", "lease=10ms"},
		{"run", "replication/failover", "-p", "leases=300ms,5ms", "-p", "seeds=1"},
	} {
		refusedWith(t, "more than 24ms (a renewal every third of the lease", args...)
	}
	if code, _, errs := simrun("run", "replication/basic", "-p", "lease=25ms"); code != 0 {
		t.Errorf("lease=25ms: exit %d %s", code, errs)
	}
}
