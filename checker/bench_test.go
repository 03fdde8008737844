package checker_test

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/checker/checkerbench"
)

// TestLinearizabilityLargeHistory: a generated history of 20k operations on 100 keys
// is linearizable, and changing one output makes it illegal at exactly that key.
func TestLinearizabilityLargeHistory(t *testing.T) {
	ops := checkerbench.History(20_000, 100, 3, 1)
	if res := checker.CheckLinearizable(checker.Counters(), ops, 30*time.Second); res.Result != porcupine.Ok || res.Keys != 100 {
		t.Fatalf("generated history: %s over %d keys", res.Result, res.Keys)
	}
	i := len(ops) / 2
	ops[i].Output = ops[i].Output.(int64) + 1000
	res := checker.CheckLinearizable(checker.Counters(), ops, 30*time.Second)
	if res.Result != porcupine.Illegal || res.Key != ops[i].Key {
		t.Fatalf("corrupted history: %s at %q, want illegal at %q", res.Result, res.Key, ops[i].Key)
	}
}

// BenchmarkLinearizability: one op checks a generated 100k-operation history on 128
// keys. Target: < 2s per op.
func BenchmarkLinearizability(b *testing.B) { checkerbench.Linearizability(b) }

// BenchmarkLinearizabilityReplay: the reference, a sequential replay of the same
// operations.
func BenchmarkLinearizabilityReplay(b *testing.B) { checkerbench.Replay(b) }
