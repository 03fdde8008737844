package scenarios_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/scenarios"
)

// shards sweeps test/forgetful (it fails on some seeds) over seeds 1-40 in two shards.
func shards(t testing.TB) (a, b *scenarios.SweepResult) {
	t.Helper()
	var parts [2]*scenarios.SweepResult
	for i := range parts {
		r, err := scenarios.Sweep(scenarios.SweepOptions{Scenario: "test/forgetful", From: 1, To: 40, Workers: 1, FailureLimit: 5,
			Shard: i + 1, Shards: 2, Params: map[string]string{"clients": "2", "ops": "4"}})
		if err != nil {
			t.Fatal(err)
		}
		parts[i] = r
	}
	if parts[0].Failed == 0 || len(parts[0].Failures) < 2 {
		t.Fatalf("shard 1 has %d failures listed: the test needs two", len(parts[0].Failures))
	}
	return parts[0], parts[1]
}

// reparse copies a result through its JSON (a shard file edited by hand).
func reparse(t testing.TB, r *scenarios.SweepResult, edit func(r *scenarios.SweepResult)) *scenarios.SweepResult {
	t.Helper()
	c, err := scenarios.ParseSweepResult(r.JSON())
	if err != nil {
		t.Fatal(err)
	}
	edit(c)
	return c
}

// Issue 34: merge refuses shard files that cannot come from one sweep, naming the file
// and the fault, instead of summing or showing them.
func TestMergeRefusesEditedShards(t *testing.T) {
	a, b := shards(t)
	if _, err := scenarios.MergeSweeps([]*scenarios.SweepResult{a, b}, []string{"a", "b"}); err != nil {
		t.Fatalf("the shards as written: %v", err)
	}
	for _, c := range []struct {
		name  string
		editA func(r *scenarios.SweepResult)
		editB func(r *scenarios.SweepResult)
		want  string
	}{
		{"a failure listed twice", func(r *scenarios.SweepResult) { r.Failures[1] = r.Failures[0] }, nil,
			"merge: a: seed " + itoa(a.Failures[0].Seed) + " is listed as failing twice (an edited file)"},
		{"a failing seed outside its shard", func(r *scenarios.SweepResult) { r.Failures[0].Seed = 33 }, nil,
			"merge: a: a failure of seed 33, outside its seeds 1-20"},
		{"a passing verdict listed", func(r *scenarios.SweepResult) { r.Failures[0].Class = 0 }, nil, "is listed as failing with verdict"},
		{"negative counts", func(r *scenarios.SweepResult) { r.Events = -5 }, nil, "merge: a: a negative count"},
		{"a negative property count", func(r *scenarios.SweepResult) { r.ByProperty["demo/completes"].Checked = -1 }, nil, `property "demo/completes": a negative count`},
		{"a property in one shard only", nil, func(r *scenarios.SweepResult) { delete(r.ByProperty, "demo/replies-match") },
			`merge: a counts property "demo/replies-match", which b does not`},
		{"a reversed seed range", func(r *scenarios.SweepResult) { r.Seeds.From, r.Seeds.To = 40, 1 }, func(r *scenarios.SweepResult) { r.Seeds.From, r.Seeds.To = 40, 1 },
			"merge: a: seeds 40-1: the range ends before it starts"},
		{"failure limit 0", func(r *scenarios.SweepResult) { r.FailureLimit = 0 }, func(r *scenarios.SweepResult) { r.FailureLimit = 0 },
			"merge: a: failure limit 0: a sweep lists at least 1 failure"},
		{"more failures than the limit", func(r *scenarios.SweepResult) { r.FailureLimit = 1 }, func(r *scenarios.SweepResult) { r.FailureLimit = 1 },
			"failures, but its failure limit is 1"},
	} {
		ea, eb := a, b
		if c.editA != nil {
			ea = reparse(t, a, c.editA)
		}
		if c.editB != nil {
			eb = reparse(t, b, c.editB)
		}
		_, err := scenarios.MergeSweeps([]*scenarios.SweepResult{ea, eb}, []string{"a", "b"})
		if err == nil || !scenarios.IsInputError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an input error with %q", c.name, err, c.want)
		}
	}
	if _, err := scenarios.ParseSweepResult(append([]byte("\uFEFF"), a.JSON()...)); err == nil || !strings.Contains(err.Error(), "byte-order mark") {
		t.Errorf("a byte-order mark: %v", err)
	}
}

func itoa(n uint64) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}

// FuzzShardFile: whatever a shard file holds, merging it with a good other half is a
// result or one input error, never a panic; a result counts every seed of the range
// once.
func FuzzShardFile(f *testing.F) {
	a, b := shards(f)
	f.Add(b.JSON())
	f.Add(bytes.Replace(b.JSON(), []byte(`"failure_limit": 5`), []byte(`"failure_limit": 0`), 1))
	f.Add(bytes.Replace(b.JSON(), []byte(`"from": 1`), []byte(`"from": 41`), 1))
	f.Add(append([]byte("\uFEFF"), b.JSON()...))
	f.Add([]byte(`{"format":"simrun-sweep/1","shard":{"index":2,"count":2},"seeds":{"from":0,"to":18446744073709551615}}`))
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := scenarios.ParseSweepResult(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a two-line error: %q", err)
			}
			return
		}
		m, err := scenarios.MergeSweeps([]*scenarios.SweepResult{a, r}, []string{"a", "b"})
		if err != nil {
			if !scenarios.IsInputError(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("not one input error line: %v", err)
			}
			return
		}
		if m.Runs != int64(m.Seeds.Len()) || m.ByClass.Total() != m.Runs || len(m.Failures) > m.FailureLimit {
			t.Fatalf("merged %d runs of seeds %v, %d by class, %d failures listed", m.Runs, m.Seeds, m.ByClass.Total(), len(m.Failures))
		}
	})
}
