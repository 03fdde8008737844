package lsscen

import (
	"testing"

	"github.com/simrun-dev/simrun/scenarios"
)

// BenchmarkSwarm runs leasing/swarm seeds one after another (one worker): ns/op is
// the cost of one seed, properties included (issue 16 item 5's yardstick).
func BenchmarkSwarm(b *testing.B) {
	sc, err := scenarios.Lookup("leasing/swarm")
	if err != nil {
		b.Fatal(err)
	}
	seed := uint64(0)
	for b.Loop() {
		seed++
		rep, err := scenarios.Run(sc, scenarios.Options{Seed: seed%200 + 1})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Failed() {
			b.Fatalf("seed %d: %v", seed%200+1, rep.Verdict)
		}
	}
}
