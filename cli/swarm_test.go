package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/internal/procmem"
)

// swarmOf strips what differs between two runs of one swarm (CPU time, trace paths).
func swarmOf(t *testing.T, data string) swarmJSON {
	t.Helper()
	var sw swarmJSON
	if err := json.Unmarshal([]byte(data), &sw); err != nil {
		t.Fatalf("not a swarm result (%v):\n%s", err, data)
	}
	sw.CPUSeconds = 0
	for i := range sw.Violations {
		sw.Violations[i].Trace = ""
	}
	return sw
}

// TestSwarmFindsPlantedBug: every member of a swarm over the forgetful coordinator's
// 2PC finds its violation (exit 1), each member's trace replays, and the members run
// as shards (--shard i/n --json) and merged give what the swarm run in one process
// gave.
func TestSwarmFindsPlantedBug(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := cli(t, "check", "test/forgetful-2pc", "--strategy", "swarm", "--members", "3", "--store", "bitstate:1MiB", "--json")
	if code != exitViolated {
		t.Fatalf("swarm: exit %d, want 1\n%s%s", code, out, errs)
	}
	whole := swarmOf(t, out)
	if whole.Members != 3 || whole.Of != 3 || len(whole.Violations) != 3 || whole.Outcome != "violation" || whole.DistinctMin <= 0 {
		t.Fatalf("swarm: %+v", whole)
	}
	var files []string
	for i := 1; i <= 3; i++ {
		trace := filepath.Join(dir, "t"+string(rune('0'+i))+".jsonl")
		code, j, errs := checkJSONOut(t, "test/forgetful-2pc", "--strategy", "swarm", "--shard", string(rune('0'+i))+"/3", "--store", "bitstate:1MiB", "--trace", trace, "--json")
		if code != exitViolated || j.Swarm != string(rune('0'+i))+"/3" || j.Seed != uint64(i) || j.Bitstate == nil {
			t.Fatalf("member %d: exit %d, %+v\n%s", i, code, j, errs)
		}
		if code, out, errs := cli(t, "replay", trace); code != 0 || !strings.Contains(out, "replay ok") || !strings.Contains(out, "reproduced: violation") {
			t.Fatalf("member %d: replay exit %d\n%s%s", i, code, out, errs)
		}
		data, _ := json.Marshal(j)
		f := filepath.Join(dir, "m"+string(rune('0'+i))+".json")
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	code, out, errs = cli(t, append([]string{"merge", "--json", "-"}, files...)...)
	if code != exitViolated {
		t.Fatalf("merge: exit %d\n%s%s", code, out, errs)
	}
	merged := swarmOf(t, out)
	a, _ := json.Marshal(whole)
	b, _ := json.Marshal(merged)
	if string(a) != string(b) {
		t.Fatalf("merged shards differ from the swarm in one process:\n%s\n%s", a, b)
	}
	// Missing members are named; a member twice, another configuration or a
	// non-member are refused.
	code, out, _ = cli(t, "merge", files[0], files[2])
	if code != exitViolated || !strings.Contains(out, "2 of 3 members") || !strings.Contains(out, "(missing: 2)") {
		t.Fatalf("merge of two of three: exit %d\n%s", code, out)
	}
	oneLineErr(t, "member 1/3 twice", "merge", files[0], files[0])
	code, j, _ := checkJSONOut(t, "twophase", "-p", "rm=3", "--strategy", "swarm", "--shard", "2/3", "--store", "bitstate:64KiB", "--json")
	if code != exitInconclusive {
		t.Fatalf("twophase member: exit %d", code)
	}
	other := filepath.Join(dir, "other.json")
	data, _ := json.Marshal(j)
	os.WriteFile(other, data, 0o644)
	oneLineErr(t, "members of one swarm check one configuration", "merge", files[0], other)
	_, j, _ = checkJSONOut(t, "twophase", "-p", "rm=3", "--json")
	plain := filepath.Join(dir, "plain.json")
	data, _ = json.Marshal(j)
	os.WriteFile(plain, data, 0o644)
	oneLineErr(t, "not a swarm member's result", "merge", plain)
}

// TestSwarmSampledIsInconclusive: a swarm that finds nothing exits 4 and says each
// property is unknown or witnessed (by which members); the members differ (their
// own hash functions and successor orders), and the same swarm gives the same result.
func TestSwarmSampledIsInconclusive(t *testing.T) {
	args := []string{"check", "twophase", "-p", "rm=6", "--strategy", "swarm", "--members", "4", "--store", "bitstate:16KiB", "--json"}
	code, out, errs := cli(t, args...)
	if code != exitInconclusive {
		t.Fatalf("exit %d, want 4\n%s%s", code, out, errs)
	}
	sw := swarmOf(t, out)
	if sw.DistinctMin == sw.DistinctMax || sw.MissedMax <= 0 || sw.BitsBytes != 16<<10 {
		t.Fatalf("members alike or no misses estimated in a full array: %+v", sw)
	}
	i := slices.IndexFunc(sw.Properties, func(p swarmProperty) bool { return p.Name == "Committed" })
	if i < 0 || sw.Properties[i].Status != "witnessed" || len(sw.Properties[i].By) == 0 {
		t.Fatalf("Committed: %+v", sw.Properties)
	}
	for _, p := range sw.Properties {
		if p.Kind == "always" && p.Status != "unknown" {
			t.Fatalf("a bitstate search decided %s: %+v", p.Name, p)
		}
	}
	_, again, _ := cli(t, args...)
	a, _ := json.Marshal(sw)
	b, _ := json.Marshal(swarmOf(t, again))
	if string(a) != string(b) {
		t.Fatalf("the same swarm twice differs:\n%s\n%s", a, b)
	}
}

func TestSwarmBadInput(t *testing.T) {
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--seed does not apply", []string{"check", "twophase", "--strategy", "swarm", "--seed", "3"}},
		{"apply to --strategy swarm", []string{"check", "twophase", "--shard", "1/2"}},
		{"apply to --strategy swarm", []string{"check", "twophase", "--members", "2"}},
		{"a swarm's members are bitstate searches", []string{"check", "twophase", "--strategy", "swarm", "--store", "hashcompact"}},
		{"the index must be between 1 and 2", []string{"check", "twophase", "--strategy", "swarm", "--shard", "0/2"}},
		{"use one", []string{"check", "twophase", "--strategy", "swarm", "--shard", "1/2", "--members", "2"}},
		{"--members must be between", []string{"check", "twophase", "--strategy", "swarm", "--members", "0"}},
		{"--trace and --report apply to one member", []string{"check", "twophase", "--strategy", "swarm", "--trace", "x.jsonl"}},
	} {
		oneLineErr(t, c.want, c.args...)
	}
	if _, out, _ := cli(t, "check", "twophase", "-p", "rm=3", "--strategy", "swarm", "--members", "2", "--store", "bitstate:4KiB", "--coverage"); !strings.Contains(out, "twophase declares no protocol rules") {
		t.Fatalf("--coverage on a model without rules says nothing:\n%s", out)
	}
	t.Setenv("SIMRUN_SHARD", "")
	oneLineErr(t, "--shard auto: no shard in the environment", "check", "twophase", "--strategy", "swarm", "--shard", "auto")
	t.Setenv("SIMRUN_SHARD", "2/4")
	code, j, errs := checkJSONOut(t, "twophase", "-p", "rm=3", "--strategy", "swarm", "--shard", "auto", "--store", "bitstate:64KiB", "--json")
	if code != exitInconclusive || j.Swarm != "2/4" || j.Seed != 2 {
		t.Fatalf("--shard auto with SIMRUN_SHARD=2/4: exit %d, %+v\n%s", code, j, errs)
	}
}

// TestSwarmMergeReview holds the merge of swarm members to what a review found: files
// in any order give the members' order, a member of another array size, seed or an
// impossible content is refused, members stopped at a bound are named, and the first
// file may be a pipe (read once), for sweep shards too.
func TestSwarmMergeReview(t *testing.T) {
	dir := t.TempDir()
	member := func(i, n int, extra ...string) string {
		t.Helper()
		args := append([]string{"twophase", "-p", "rm=3", "--strategy", "swarm", "--shard", fmt.Sprintf("%d/%d", i, n), "--store", "bitstate:4KiB", "--json"}, extra...)
		_, j, errs := checkJSONOut(t, args...)
		if j.Swarm == "" {
			t.Fatalf("member %d/%d: %s", i, n, errs)
		}
		data, _ := json.Marshal(j)
		f := filepath.Join(dir, fmt.Sprintf("m%d-%s.json", i, strings.Join(extra, "")))
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	var files []string
	for i := 1; i <= 12; i++ {
		files = append(files, member(i, 12))
	}
	glob := slices.Clone(files)
	slices.Sort(glob) // m1, m10, m11, m12, m2, ...: a shell glob's order
	_, a, _ := cli(t, append([]string{"merge", "--json", "-"}, files...)...)
	_, b, _ := cli(t, append([]string{"merge", "--json", "-"}, glob...)...)
	if swarmOf(t, a).Members != 12 || a != b {
		t.Fatalf("the files' order changed the merge:\n%s\n%s", a, b)
	}
	code, _, _ := cli(t, "check", "twophase", "-p", "rm=3", "--strategy", "swarm", "--members", "12", "--store", "bitstate:4KiB", "--json")
	_, whole, _ := cli(t, "check", "twophase", "-p", "rm=3", "--strategy", "swarm", "--members", "12", "--store", "bitstate:4KiB", "--json")
	x, _ := json.Marshal(swarmOf(t, whole))
	y, _ := json.Marshal(swarmOf(t, b))
	if code != exitInconclusive || string(x) != string(y) {
		t.Fatalf("merged members differ from the swarm in one process:\n%s\n%s", x, y)
	}
	// another array size; a member stopped at a bound
	other := filepath.Join(dir, "big.json")
	_, j, _ := checkJSONOut(t, "twophase", "-p", "rm=3", "--strategy", "swarm", "--shard", "2/12", "--store", "bitstate:8KiB", "--json")
	data, _ := json.Marshal(j)
	os.WriteFile(other, data, 0o644)
	oneLineErr(t, "members of one swarm use one size", "merge", files[0], other)
	bounded := member(2, 12, "--max-states", "10")
	code, out, _ := cli(t, "merge", files[0], bounded)
	if code != exitInconclusive || !strings.Contains(out, "stopped at a bound") || !strings.Contains(out, "2/12 max-states") {
		t.Fatalf("a bounded member: exit %d\n%s", code, out)
	}
	// edited members
	edit := func(name string, f func(*checkJSON)) string {
		var c checkJSON
		raw, _ := os.ReadFile(files[1])
		json.Unmarshal(raw, &c)
		f(&c)
		data, _ := json.Marshal(c)
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		return p
	}
	oneLineErr(t, "ran with seed 7, not 2", "merge", files[0], edit("seed.json", func(c *checkJSON) { c.Seed = 7 }))
	oneLineErr(t, "impossible counts", "merge", files[0], edit("neg.json", func(c *checkJSON) { c.Distinct = -5 }))
	oneLineErr(t, "impossible bit-array figures", "merge", files[0], edit("bits.json", func(c *checkJSON) { c.Bitstate.Bytes = -1 }))
	oneLineErr(t, "failed, but the violation is another", "merge", files[0], edit("failed.json", func(c *checkJSON) { c.Properties[0].Status = "failed" }))
	oneLineErr(t, "but violation", "merge", files[0], edit("vio.json", func(c *checkJSON) { v := "Nope"; c.Violation = &v }))
	// a pipe first: read once, for swarm members and for sweep shards
	pipe := func(path string) string {
		data, _ := os.ReadFile(path)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		go func() { w.Write(data); w.Close() }()
		return fmt.Sprintf("/dev/fd/%d", r.Fd())
	}
	if code, out, errs := cli(t, "merge", pipe(files[0]), files[1]); code != exitInconclusive {
		t.Fatalf("merge of a pipe and a member: exit %d\n%s%s", code, out, errs)
	}
	var shards []string
	for i := 1; i <= 2; i++ {
		f := filepath.Join(dir, fmt.Sprintf("shard%d.json", i))
		if code, out, errs := cli(t, "sweep", "demo/happy", "--seeds", "1-4", "--shard", fmt.Sprintf("%d/2", i), "--json", f); code != 0 {
			t.Fatalf("shard %d: exit %d\n%s%s", i, code, out, errs)
		}
		shards = append(shards, f)
	}
	if code, out, errs := cli(t, "merge", pipe(shards[0]), shards[1]); code != 0 {
		t.Fatalf("merge of a pipe and a shard: exit %d\n%s%s", code, out, errs)
	}
}

// TestSwarmPeakIsOneMember: members run one after another, and each gives its bit
// array back before the next takes one, so the swarm's peak memory is about one
// member's (it was two arrays: 2.2 GB for 1 GiB members).
func TestSwarmPeakIsOneMember(t *testing.T) {
	const array = 256 << 20
	u, err := procmem.Measure(func() error {
		code, out, errs := cli(t, "check", "twophase", "-p", "rm=3", "--strategy", "swarm", "--members", "4", "--store", "bitstate:256MiB")
		if code != exitInconclusive {
			return fmt.Errorf("exit %d\n%s%s", code, out, errs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if grew := u.Peak - u.Base; grew > array*3/2 {
		t.Fatalf("4 members of %d MiB: the process grew by %d MiB (sampled %v): more than one array at a time", array>>20, grew>>20, u.Sampled)
	}
}
