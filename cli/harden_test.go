package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/simrun-dev/simrun/scenarios"
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

// Issue 34, class 3: every output path is checked before the work starts — a trace
// that would overwrite the plan it was run from, a file where a directory is wanted,
// a directory that does not exist — as --report already was.
func TestOutputPathsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	os.WriteFile(plan, []byte(`{"events": []}`), 0o644)
	shard := filepath.Join(dir, "s.json")
	os.WriteFile(shard, []byte("{}"), 0o644)
	for _, c := range []struct {
		want string
		args []string
	}{
		{"run: --trace: " + plan + " is also an input of this command: it would be overwritten", []string{"run", "demo/faults", "--faults", plan, "--trace", plan}},
		{"run: --artifacts: " + plan + " is a file, not a directory", []string{"run", "demo/happy", "--artifacts", plan}},
		{"run: --artifacts: " + plan + " is a file, not a directory", []string{"run", "demo/happy", "--artifacts", filepath.Join(plan, "sub")}},
		{"sweep: --artifacts: " + plan + " is a file", []string{"sweep", "demo/happy", "--seeds", "1-2", "--artifacts", plan}},
		{"check: --trace: stat /proc/nonexistent-simrun", []string{"check", "twophase", "--trace", "/proc/nonexistent-simrun/t.jsonl"}},
		{"check: --trace: " + dir + " is a directory", []string{"check", "twophase", "--trace", dir}},
		{"merge: --json: " + shard + " is also an input", []string{"merge", shard, "--json", shard}},
		{"lincheck: --viz: " + plan + " is also an input", []string{"lincheck", plan, "--model", "register", "--viz", plan}},
	} {
		oneLineErr(t, c.want, c.args...)
	}
	b, _ := os.ReadFile(plan)
	if string(b) != `{"events": []}` {
		t.Fatalf("the plan was changed: %q", b)
	}
	// a new file in an existing directory, and a device, are fine
	if code, _, errs := cli(t, "run", "demo/happy", "--trace", filepath.Join(dir, "new.jsonl"), "--artifacts", filepath.Join(dir, "a", "b")); code != 0 {
		t.Fatalf("new paths: exit %d %s", code, errs)
	}
	if code, _, errs := cli(t, "run", "demo/happy", "--trace", os.DevNull); code != 0 {
		t.Fatalf("--trace %s: exit %d %s", os.DevNull, code, errs)
	}
}

// failing is a standard output on a full disk.
type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// Issue 34, class 3: text output that cannot be written (run … > /dev/full) is an I/O
// error, exit 2 with one line, as JSON output already was.
func TestTextOutputToAFullDisk(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	if code, _, errs := cli(t, "run", "demo/happy", "--trace", trace); code != 0 {
		t.Fatal(errs)
	}
	for _, args := range [][]string{{"run", "demo/happy"}, {"replay", trace}, {"run", "demo/happy", "--format", "json"}, {"list"}} {
		var errb strings.Builder
		code := runMain(&env{stdout: failing{}, stderr: &errb}, args)
		if code != exitUsage || !strings.Contains(errb.String(), "I/O error") || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%v > full disk: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// Issue 34, class 4: a bad shard from the environment is said in the variables'
// terms, not as a --shard "3/2" the user never typed.
func TestAutoShardNamesTheVariables(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SIMRUN_SHARD": "3/2"}, `sweep: --shard auto: SIMRUN_SHARD="3/2" (shard 3/2): the index must be between 1 and 2`},
		{map[string]string{"SIMRUN_SHARD": "half"}, `SIMRUN_SHARD="half" (shard half): want i/n`},
		{map[string]string{"JOB_COMPLETION_INDEX": "5", "JOB_COMPLETIONS": "3"}, "JOB_COMPLETION_INDEX=5 and JOB_COMPLETIONS=3 (shard 6/3): the index must be between 1 and 3"},
		{map[string]string{"JOB_COMPLETION_INDEX": "0", "JOB_COMPLETIONS": "0"}, "JOB_COMPLETIONS=0 (shard 1/0): the shard count must be at least 1"},
		{map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "3"}, "SLURM_ARRAY_TASK_ID=2, SLURM_ARRAY_TASK_MIN=5 and SLURM_ARRAY_TASK_COUNT=3 (shard -2/3)"},
		{map[string]string{"SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_COUNT": "3"}, "SLURM_ARRAY_TASK_ID=9 and SLURM_ARRAY_TASK_COUNT=3 (shard 10/3): the index must be between 1 and 3"},
	} {
		_, err := autoShard(func(k string) string { return c.env[k] })
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "--shard \"") {
			t.Errorf("%v: %v, want %q", c.env, err, c.want)
		}
	}
}

// Issue 34, class 2: a sweep no machine can finish is refused before it starts (1-2^64
// ran silently forever); a shard of it small enough runs.
func TestSweepTooLargeRefused(t *testing.T) {
	oneLineErr(t, "sweep: --seeds 1-18446744073709551615: 18 446 744 073 709 551 615 seeds, more than one process can run (at most 100 000 000: split the range with --shard i/n", "sweep", "demo/happy", "--seeds", "1-18446744073709551615")
	oneLineErr(t, "500 000 000 seeds in shard 3/20", "sweep", "demo/happy", "--seeds", "1-10000000000", "--shard", "3/20")
	if err := checkSweepSize(scenarios.SeedRange{From: 1, To: 10_000_000_000}, 3, 200); err != nil {
		t.Fatalf("a shard of 50 000 000 seeds: %v", err)
	}
}
