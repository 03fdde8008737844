// Package checkerbench holds the linearizability benchmark shared by the checker's
// tests and `simrun bench`: a generated history checked by checker.CheckLinearizable,
// and, as its reference, one sequential replay of the same operations.
package checkerbench

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/checker"
)

// Size of the benchmark history: 100k operations on 128 keys.
const (
	Ops  = 100_000
	Keys = 128
)

// History generates a linearizable history of n operations (n/keys per key) on
// checker.Counters: each key's operations take effect at points 10 apart, and each
// operation's [call, return] interval covers its point and reaches up to conc points
// either side, so about 2·conc operations overlap at any time. The outputs are what
// that effect order gives, so the history is linearizable.
func History(n, keys, conc int, seed uint64) []checker.Operation {
	rng := rand.New(rand.NewPCG(seed, 0))
	ops := make([]checker.Operation, 0, n)
	perKey := n / keys
	var t int64
	for k := range keys {
		key := fmt.Sprintf("k%03d", k)
		var value int64
		for i := range perKey {
			point := t + int64(i)*10
			call := point - int64(rng.IntN(conc*10))
			ret := point + int64(rng.IntN(conc*10))
			var in checker.CounterInput
			if rng.IntN(2) == 0 {
				d := int64(1 + rng.IntN(5))
				value += d
				in = checker.CounterInput{Op: checker.CounterAdd, Key: key, Delta: d}
			} else {
				in = checker.CounterInput{Op: checker.CounterGet, Key: key}
			}
			ops = append(ops, checker.Operation{Key: key, Client: i % 64, Input: in, Output: value, Call: call, Return: ret})
		}
		t += int64(perKey)*10 + 1000
	}
	return ops
}

// Linearizability checks the generated history once per op. Target: < 2s per op.
func Linearizability(b *testing.B) {
	ops := History(Ops, Keys, 3, 1)
	m := checker.Counters()
	b.ResetTimer()
	for range b.N {
		if res := checker.CheckLinearizable(m, ops, time.Minute); res.Result != porcupine.Ok {
			b.Fatalf("generated history: %s", res.Result)
		}
	}
}

// Replay is the reference: one pass of the same operations through the model's Step,
// key by key in effect order (what a checker that knew the linearization would do).
func Replay(b *testing.B) {
	ops := History(Ops, Keys, 3, 1)
	m := checker.Counters()
	b.ResetTimer()
	for range b.N {
		states := map[string]any{}
		for _, o := range ops {
			s, ok := states[o.Key]
			if !ok {
				s = m.Init()
			}
			legal, next := m.Step(s, o.Input, o.Output)
			if !legal {
				b.Fatal("replay refused a step")
			}
			states[o.Key] = next
		}
	}
}
