package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sweepCLI runs the command line with buffers and returns the exit code and outputs.
func sweepCLI(tty bool, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runMain(&env{stdout: &out, stderr: &errb, tty: tty}, args)
	return code, out.String(), errb.String()
}

// TestSweepJSONSameForAnyWorkers: 1 and 2 workers write byte-identical JSON and print
// the same summary.
func TestSweepJSONSameForAnyWorkers(t *testing.T) {
	dir := t.TempDir()
	var jsons, outs []string
	for _, w := range []string{"1", "2"} {
		path := filepath.Join(dir, "w"+w+".json")
		code, out, errs := sweepCLI(false, "sweep", "demo/swarm", "--seeds", "1-60", "--workers", w, "--json", path)
		if code != 0 || errs != "" {
			t.Fatalf("workers %s: exit %d, stderr %q", w, code, errs)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		jsons = append(jsons, string(b))
		outs = append(outs, strings.ReplaceAll(out, path, "FILE"))
	}
	if jsons[0] != jsons[1] {
		t.Fatalf("JSON differs between 1 and 2 workers:\n%s\n%s", jsons[0], jsons[1])
	}
	if outs[0] != outs[1] {
		t.Fatalf("summary differs:\n%s\n%s", outs[0], outs[1])
	}
	if !strings.Contains(outs[0], "runs      60 seeds: 60 passed, 0 failed") {
		t.Fatalf("summary:\n%s", outs[0])
	}
}

// TestShardMergeEqualsUnsharded: shard 1/2 and 2/2 merged give the unsharded JSON and
// summary; a failing sweep exits 1 and lists reproduce commands.
func TestShardMergeEqualsUnsharded(t *testing.T) {
	dir := t.TempDir()
	file := func(n string) string { return filepath.Join(dir, n) }
	args := []string{"demo/faults", "--seeds", "10-49", "-p", "ops=12", "--workers", "2"}
	code, whole, _ := sweepCLI(false, append([]string{"sweep", "--json", file("all.json")}, args...)...)
	if code != 0 {
		t.Fatalf("unsharded sweep: exit %d", code)
	}
	for _, s := range []string{"1/2", "2/2"} {
		name := "s" + s[:1] + ".json"
		if code, out, errs := sweepCLI(false, append([]string{"sweep", "--shard", s, "--json", file(name)}, args...)...); code != 0 {
			t.Fatalf("shard %s: exit %d\n%s%s", s, code, out, errs)
		}
	}
	code, merged, errs := sweepCLI(false, "merge", file("s2.json"), file("s1.json"), "--json", file("merged.json"))
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	a, _ := os.ReadFile(file("all.json"))
	m, _ := os.ReadFile(file("merged.json"))
	if len(a) == 0 || !bytes.Equal(a, m) {
		t.Fatalf("merged JSON differs from unsharded:\n%s\n%s", m, a)
	}
	strip := func(s string) string { return s[:strings.Index(s, "result ")] }
	if strip(merged) != strip(whole) {
		t.Fatalf("merged summary differs:\n%s\n%s", merged, whole)
	}
	if !strings.Contains(whole, "params    ops=12\n") {
		t.Fatalf("summary does not name the parameters:\n%s", whole)
	}
}

func TestSweepFailureExit1(t *testing.T) {
	// A 1ms liveness bound no round trip can meet: every seed fails.
	code, out, errs := sweepCLI(false, "sweep", "demo/faults", "--seeds", "1-5", "-p", "bound=1ms", "--failures", "2")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	for _, want := range []string{"liveness", "failing seeds (first 2 of ", "reproduce: simrun run demo/faults --seed 1 -p bound=1ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "seeds failed") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("stderr %q", errs)
	}
}

func TestSweepProgressOnlyOnTerminal(t *testing.T) {
	_, _, quiet := sweepCLI(false, "sweep", "demo/happy", "--seeds", "1-3")
	if quiet != "" {
		t.Errorf("stderr without a terminal: %q", quiet)
	}
	_, _, loud := sweepCLI(true, "sweep", "demo/happy", "--seeds", "1-3")
	if !strings.Contains(loud, "demo/happy: 3/3 seeds, 0 failed, ") || !strings.Contains(loud, "seeds/s") {
		t.Errorf("stderr on a terminal: %q", loud)
	}
}

// TestSweepBadInput: every malformed input exits 2 with one clear line on stderr.
func TestSweepBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shard := func(name string, args ...string) string {
		p := filepath.Join(dir, name)
		if code, _, errs := sweepCLI(false, append([]string{"sweep", "--json", p}, args...)...); code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
		return p
	}
	s1 := shard("s1.json", "demo/happy", "--seeds", "1-4", "--shard", "1/2")
	s2 := shard("s2.json", "demo/happy", "--seeds", "1-4", "--shard", "2/2")
	other := shard("o2.json", "demo/happy", "--seeds", "1-5", "--shard", "2/2")
	otherP := shard("p2.json", "demo/happy", "--seeds", "1-4", "--shard", "2/2", "-p", "ops=2")
	otherN := shard("n2.json", "demo/happy", "--seeds", "1-4", "--shard", "2/3")
	garbage := write("garbage.json", "{not json")
	foreign := write("foreign.json", `{"format":"something-else"}`)
	unknown := write("unknown.json", `{"format":"simrun-sweep/1","extra":1}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "demo/faults", "--seeds", "5-1"}, `--seeds "5-1": the range is empty`},
		{[]string{"sweep", "demo/faults", "--seeds", "x"}, `--seeds "x": "x" is not a non-negative integer`},
		{[]string{"sweep", "demo/faults", "--seeds", ""}, `--seeds "": empty`},
		{[]string{"sweep", "demo/faults", "--seeds", "1-4", "--shard", ""}, `--shard "": want i/n`},
		{[]string{"sweep", "demo/faults", "--seeds", "1-"}, `is not a non-negative integer`},
		{[]string{"sweep", "demo/faults", "--seeds", "-3"}, `is not a non-negative integer`},
		{[]string{"sweep", "demo/faults"}, "missing --seeds"},
		{[]string{"sweep", "demo/faults", "--seeds", "1-5", "--shard", "3/2"}, `--shard "3/2": the index must be between 1 and 2`},
		{[]string{"sweep", "demo/faults", "--seeds", "1-5", "--shard", "0/2"}, "the index must be between 1 and 2"},
		{[]string{"sweep", "demo/faults", "--seeds", "1-5", "--shard", "1/0"}, "the shard count must be at least 1"},
		{[]string{"sweep", "demo/faults", "--seeds", "1-5", "--shard", "half"}, "want i/n"},
		{[]string{"sweep", "demo/faults", "--seeds", "1-5", "--workers", "0"}, "--workers 0: want at least 1"},
		{[]string{"sweep", "demo/faults", "--seeds", "1-5", "--workers", "-2"}, "--workers -2: want at least 1"},
		{[]string{"sweep", "demo/faults", "--seeds", "1-5", "--failures", "0"}, "--failures 0"},
		{[]string{"sweep", "nosuch", "--seeds", "1-5"}, `unknown scenario "nosuch"`},
		{[]string{"sweep", "demo/faults", "--seeds", "1-5", "-p", "nope=1"}, `unknown parameter "nope"`},
		{[]string{"sweep", "demo/faults", "--seeds", "1-5", "-p", "ops=many"}, `ops="many"`},
		{[]string{"sweep", "--seeds", "1-5"}, "missing argument"},
		{[]string{"sweep", "demo/faults", "--seeds", "1-5", "--json", filepath.Join(dir, "no", "such", "dir.json")}, "--json"},
		{[]string{"merge"}, "missing shard files"},
		{[]string{"merge", filepath.Join(dir, "absent.json")}, "absent.json"},
		{[]string{"merge", garbage}, "not a sweep result"},
		{[]string{"merge", foreign}, `format "something-else"`},
		{[]string{"merge", unknown}, `unknown field "extra"`},
		{[]string{"merge", s1}, "missing shard 2/2"},
		{[]string{"merge", s1, s1}, "are both shard 1/2"},
		{[]string{"merge", s1, other}, "seeds 1-5"},
		{[]string{"merge", s1, otherP}, "parameters"},
		{[]string{"merge", s1, otherN}, "shard count"},
		{[]string{"merge", s1, s2, "--json", filepath.Join(dir, "no", "such", "m.json")}, "--json"},
	} {
		code, _, errs := sweepCLI(false, c.args...)
		lines := strings.Split(strings.TrimRight(errs, "\n"), "\n")
		if code != exitUsage || len(lines) != 1 || !strings.Contains(errs, c.want) || !strings.HasPrefix(errs, "simrun: ") {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line about %q", c.args, code, errs, c.want)
		}
	}
}

// sweep --report: the page, and a run page for each listed failing seed.
func TestSweepReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rep")
	code, _, errs := sweepCLI(false, "sweep", "exactlyonce/coord-crash", "-p", "bug=no-commit-log", "--seeds", "1-4", "--failures", "2", "--report", dir)
	if code != 1 || !strings.Contains(errs, "report: ") {
		t.Fatalf("exit %d %s", code, errs)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Sweep of exactlyonce/coord-crash, seeds 1-4", `href="seed-1/index.html"`, "simrun run exactlyonce/coord-crash --seed 1 -p bug=no-commit-log"} {
		if !strings.Contains(string(page), want) {
			t.Fatalf("sweep page lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "seed-1", "index.html")); err != nil {
		t.Fatal(err)
	}
}

func TestAutoShard(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string // "" = error
	}{
		{map[string]string{"JOB_COMPLETION_INDEX": "0", "JOB_COMPLETIONS": "4"}, "1/4"},
		{map[string]string{"JOB_COMPLETION_INDEX": "3", "JOB_COMPLETIONS": "4"}, "4/4"},
		{map[string]string{"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "3"}, "3/3"},
		{map[string]string{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "2"}, "1/2"},
		{map[string]string{"SIMRUN_SHARD": "2/5"}, "2/5"},
		{map[string]string{}, ""},
		{map[string]string{"JOB_COMPLETION_INDEX": "0"}, ""},
		{map[string]string{"JOB_COMPLETION_INDEX": "x", "JOB_COMPLETIONS": "2"}, ""},
		{map[string]string{"SIMRUN_SHARD": "1/2", "SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "2"}, ""},
	} {
		got, err := autoShard(func(k string) string { return c.env[k] })
		if (c.want == "") != (err != nil) || got != c.want {
			t.Errorf("%v: %q %v, want %q", c.env, got, err, c.want)
		}
	}
}

// Issue 15, item 5: shard processes that take their index from a batch engine's
// environment (a Kubernetes Indexed Job of 3, a Slurm array of 2) merge into exactly
// the unsharded sweep.
func TestShardAutoProcessesMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binary and runs seven processes")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "simrun")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/simrun").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	args := []string{"sweep", "demo/faults", "--seeds", "1-30", "-p", "ops=8", "--shard", "auto"}
	run := func(env []string, jsonOut string, a ...string) {
		cmd := exec.Command(bin, append(a, "--json", jsonOut)...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v %v: %v\n%s", env, a, err, out)
		}
	}
	run(nil, filepath.Join(dir, "all.json"), "sweep", "demo/faults", "--seeds", "1-30", "-p", "ops=8")
	for _, engine := range []struct {
		name string
		envs [][]string
	}{
		{"k8s", [][]string{{"JOB_COMPLETION_INDEX=0", "JOB_COMPLETIONS=3"}, {"JOB_COMPLETION_INDEX=1", "JOB_COMPLETIONS=3"}, {"JOB_COMPLETION_INDEX=2", "JOB_COMPLETIONS=3"}}},
		{"slurm", [][]string{{"SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_COUNT=2"}, {"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_COUNT=2"}}},
	} {
		var parts []string
		for i, env := range engine.envs {
			p := filepath.Join(dir, fmt.Sprintf("%s-%d.json", engine.name, i))
			run(env, p, args...)
			parts = append(parts, p)
		}
		merged := filepath.Join(dir, engine.name+"-merged.json")
		cmd := exec.Command(bin, append(append([]string{"merge"}, parts...), "--json", merged)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("merge: %v\n%s", err, out)
		}
		a, _ := os.ReadFile(filepath.Join(dir, "all.json"))
		m, _ := os.ReadFile(merged)
		if len(a) == 0 || !bytes.Equal(a, m) {
			t.Fatalf("%s: merged shards differ from the unsharded sweep:\n%s\n%s", engine.name, m, a)
		}
	}
}
