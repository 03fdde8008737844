package twophase_test

import (
	"slices"
	"testing"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/model/modelbench"
	"github.com/simrun-dev/simrun/model/twophase"
	"github.com/simrun-dev/simrun/sim"
)

// BenchmarkTwoPhase9 is the benchmark: TLA+ TwoPhase with rm=9 (10 340 352
// distinct states) by BFS on one worker; states/s is reported. Not run by plain
// `go test` (benchmarks never are).
func BenchmarkTwoPhase9(b *testing.B)   { modelbench.TwoPhase(9, 1)(b) }
func BenchmarkTwoPhase9x2(b *testing.B) { modelbench.TwoPhase(9, 2)(b) }
func BenchmarkTwoPhase7(b *testing.B)   { modelbench.TwoPhase(7, 1)(b) }
func BenchmarkTwoPhase7x2(b *testing.B) { modelbench.TwoPhase(7, 2)(b) }
func BenchmarkMapBFS7(b *testing.B)     { modelbench.MapBFS(7)(b) }
func BenchmarkMapBFS9(b *testing.B)     { modelbench.MapBFS(9)(b) }

// Issue 14, item 5: the same actor 2PC (4 participants, crash budget 1: 189 887
// states) with nodes that rely on reflection (sim.DeepCopy, sim.AppendCanonical: an
// outside user's first model) and with hand-written Clone and AppendState.
func BenchmarkActors2PCReflect(b *testing.B)     { actors2PC(b, false) }
func BenchmarkActors2PCHandWritten(b *testing.B) { actors2PC(b, true) }

func actors2PC(b *testing.B, hand bool) {
	sys, err := twophase.Actors(twophase.Config{Participants: 4, Crashes: 1})
	if err != nil {
		b.Fatal(err)
	}
	if hand {
		parts := []sim.NodeID{1, 2, 3, 4}
		sys.Nodes[0].New = func() sim.Node { return &fastCoord{twophase.Coordinator{Parts: parts}} }
		for i := 1; i < len(sys.Nodes); i++ {
			sys.Nodes[i].New = func() sim.Node { return &fastPart{twophase.Participant{Coord: 0}} }
		}
	}
	var res *model.Result
	for b.Loop() {
		if res, err = model.Check(sys, model.Options{Workers: 1}); err != nil {
			b.Fatal(err)
		}
	}
	if res.Distinct != 189887 {
		b.Fatalf("%d states", res.Distinct)
	}
	b.ReportMetric(res.StatesPerSec, "states/s")
	b.ReportMetric(float64(res.PeakRSS)/(1<<20), "peakMiB")
}

type fastCoord struct{ twophase.Coordinator }

func (c *fastCoord) Clone() sim.Node {
	d := *c
	d.Parts, d.Yes = slices.Clone(c.Parts), slices.Clone(c.Yes)
	return &d
}

func (c *fastCoord) AppendState(b []byte) []byte {
	b = append(b, byte(len(c.Parts)), byte(len(c.Yes)))
	for _, p := range c.Parts {
		b = append(b, byte(p))
	}
	for _, p := range c.Yes {
		b = append(b, byte(p))
	}
	flag := func(v bool) byte {
		if v {
			return 1
		}
		return 0
	}
	return append(b, flag(c.Began), flag(c.Decided), flag(c.Decision))
}

type fastPart struct{ twophase.Participant }

func (p *fastPart) Clone() sim.Node { d := *p; return &d }

func (p *fastPart) AppendState(b []byte) []byte {
	return append(append(b, byte(p.Coord), byte(len(p.State))), p.State...)
}
