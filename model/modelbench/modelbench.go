// Package modelbench holds the model checker's benchmark bodies, shared by `go test
// -bench` (model/twophase) and `simrun bench`.
package modelbench

import (
	"testing"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/model/twophase"
)

// TwoPhase returns a benchmark that checks the TLA+ TwoPhase model with rm resource
// managers by BFS on the given number of workers and reports distinct states per second.
func TwoPhase(rm, workers int) func(*testing.B) {
	return func(b *testing.B) {
		sp, err := twophase.Spec(rm)
		if err != nil {
			b.Fatal(err)
		}
		var distinct int64
		for i := 0; i < b.N; i++ {
			res, err := model.Check(sp, model.Options{Workers: workers})
			if err != nil {
				b.Fatal(err)
			}
			if res.Outcome != model.Complete {
				b.Fatalf("outcome %v", res.Outcome)
			}
			distinct = res.Distinct
		}
		b.ReportMetric(float64(distinct)*float64(b.N)/b.Elapsed().Seconds(), "states/s")
	}
}

// MapBFS returns the reference benchmark: the same TwoPhase state space explored by
// the plainest Go BFS (a map[uint64]struct{} seen-set holding whole states and a slice
// queue), which is what a checker must beat to be worth its complexity.
func MapBFS(rm int) func(*testing.B) {
	return func(b *testing.B) {
		l, err := twophase.NewLayout(rm)
		if err != nil {
			b.Fatal(err)
		}
		var distinct int
		for i := 0; i < b.N; i++ {
			seen := map[uint64]struct{}{0: {}}
			frontier := []uint64{0}
			for len(frontier) > 0 {
				var next []uint64
				for _, s := range frontier {
					l.Next(s, func(_ model.Action, t uint64) {
						if _, ok := seen[t]; !ok {
							seen[t] = struct{}{}
							next = append(next, t)
						}
					})
				}
				frontier = next
			}
			distinct = len(seen)
		}
		b.ReportMetric(float64(distinct)*float64(b.N)/b.Elapsed().Seconds(), "states/s")
	}
}

// PerState returns a benchmark whose operation is one distinct state of the registered
// model name with the given parameters: it checks the model (BFS, one worker) as many
// times as it takes to explore b.N states, so ns/op is the cost of a state and two such
// benchmarks compare per-state costs (an actor system against a plain spec).
func PerState(name string, params map[string]string) func(*testing.B) {
	return func(b *testing.B) {
		var states int64
		for states < int64(b.N) {
			res, err := model.CheckNamed(name, params, model.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if res.Outcome != model.Complete {
				b.Fatalf("%s: outcome %v", name, res.Outcome)
			}
			states += res.Distinct
		}
		b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
	}
}
