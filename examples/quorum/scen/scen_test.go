package scen

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/cli"
)

// The outside project gets simrun's whole command line over its own scenarios and
// model, through cli.Run (what cmd/quorum's main calls).
func simrun(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errs bytes.Buffer
	code := cli.Run(args, &out, &errs)
	return code, out.String() + errs.String()
}

func TestRunSweepCheck(t *testing.T) {
	if code, out := simrun(t, "run", "quorum/happy", "--seed", "3"); code != 0 || !strings.Contains(out, "ok       quorum/linearizable") {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if code, out := simrun(t, "sweep", "quorum/faults", "--seeds", "1-200"); code != 0 || !strings.Contains(out, "200 passed") {
		t.Fatalf("sweep: exit %d\n%s", code, out)
	}
	if code, out := simrun(t, "run", "quorum/faults", "--faults", "../faults.json"); code != 0 {
		t.Fatalf("run with the project's fault plan: exit %d\n%s", code, out)
	}
	// The model check: every order of the messages, a replica crash; pinned count.
	code, out := simrun(t, "check", "quorum")
	if code != 0 || !strings.Contains(out, "84474 distinct") || !strings.Contains(out, "reads never go back in time: holds") {
		t.Fatalf("check: exit %d\n%s", code, out)
	}
	// The planted bug (a read without its write-back) is caught, shortest path pinned.
	code, out = simrun(t, "check", "quorum", "-p", "bug=no-writeback")
	if code != 1 || !strings.Contains(out, "reads never go back in time violated at depth 17") {
		t.Fatalf("check bug: exit %d\n%s", code, out)
	}
}
