package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// simrun lincheck: exit 0 linearizable, 1 not (with porcupine's page), 2 bad input in
// one line naming the file and line, 4 undecided within the timeout.
func TestLincheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	good := write("good.edn", "{:process 0, :type :invoke, :f :write, :value 1}\n{:process 0, :type :ok, :f :write, :value 1}\n{:process 1, :type :invoke, :f :read, :value nil}\n{:process 1, :type :ok, :f :read, :value 1}\n")
	if code, out, errs := cli(t, "lincheck", good, "--model", "register"); code != 0 || !strings.Contains(out, "verdict   linearizable") {
		t.Fatalf("good: exit %d %s %s", code, out, errs)
	}
	bad := write("bad.edn", "{:process 0, :type :invoke, :f :write, :value 1}\n{:process 0, :type :ok, :f :write, :value 1}\n{:process 1, :type :invoke, :f :read, :value nil}\n{:process 1, :type :ok, :f :read, :value 2}\n")
	viz := filepath.Join(dir, "bad.html")
	code, out, _ := cli(t, "lincheck", bad, "--model", "register", "--viz", viz)
	if code != 1 || !strings.Contains(out, "not linearizable") {
		t.Fatalf("bad: exit %d %s", code, out)
	}
	if b, err := os.ReadFile(viz); err != nil || !strings.Contains(string(b), "<html") {
		t.Fatalf("visualization: %v", err)
	}
	malformed := write("m.edn", "{:process 0, :type :ok, :f :read, :value 1}\n")
	code, _, errs := cli(t, "lincheck", malformed, "--model", "register")
	if code != 2 || !strings.Contains(errs, malformed+":1: process 0 completes read without an invocation") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("malformed: exit %d %q", code, errs)
	}
	for _, args := range [][]string{
		{"lincheck", good},
		{"lincheck", good, "--model", "stack"},
		{"lincheck", filepath.Join(dir, "missing.edn"), "--model", "register"},
		{"lincheck", good, "--model", "register", "--format", "xml"},
	} {
		if code, _, errs := cli(t, args...); code != 2 || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d %q", args, code, errs)
		}
	}
}

// An undecided check (porcupine's 50-client key-value history in a millisecond)
// exits 4, like an inconclusive model check.
func TestLincheckUndecided(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/anishathalye/porcupine").Output()
	if err != nil {
		t.Fatal(err)
	}
	h := filepath.Join(strings.TrimSpace(string(out)), "test_data", "kv", "c50-ok.txt")
	if code, stdout, errs := cli(t, "lincheck", h, "--model", "kv", "--timeout", "1ms"); code != 4 || !strings.Contains(stdout, "verdict   unknown") {
		t.Fatalf("exit %d %s %s", code, stdout, errs)
	}
}

// Issue 33: the example history's docs promise "a pending cas explains the read of 5":
// lincheck prints the order that explains it.
func TestLincheckExplainsTheOrder(t *testing.T) {
	code, out, errs := cli(t, "lincheck", "../docs/history-example.jsonl", "--model", "cas-register")
	want := "order     an order the operations can have taken effect in, with the state after each:\n" +
		"   1. write(1)       state 1   process 0, line 1\n" +
		"   2. cas(1 5) → ?   state 5   process 2, line 4: pending (it never returned), took effect here\n" +
		"   3. read() → 5     state 5   process 1, line 3\n" +
		"verdict   linearizable\n"
	if code != 0 || !strings.HasSuffix(out, want) {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
}
