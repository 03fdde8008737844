package lsscen

import (
	"testing"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/scenarios"
)

// BenchmarkCheckSwarm checks the properties of one leasing/swarm run (seed 1) over
// and over: the end-of-run share of a seed's cost, without the simulation.
func BenchmarkCheckSwarm(b *testing.B) {
	sc, rep := swarmSeed1(b)
	for b.Loop() {
		setup, _, err := scenarios.Prepare(sc, scenarios.Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		run := &checker.Run{Result: rep.Result, Scenario: sc.Name, Settled: rep.Settled}
		for _, v := range checker.Evaluate(run, setup.Properties) {
			if v.Failed() {
				b.Fatal(v)
			}
		}
	}
}

// BenchmarkIndexSwarm builds the property index of one leasing/swarm run.
func BenchmarkIndexSwarm(b *testing.B) {
	sc, rep := swarmSeed1(b)
	run := &checker.Run{Result: rep.Result, Scenario: sc.Name, Settled: rep.Settled}
	for b.Loop() {
		buildIndex(run)
	}
}

// swarmSeed1 runs leasing/swarm on seed 1 for the benchmarks above.
func swarmSeed1(b *testing.B) (*scenarios.Scenario, *scenarios.Report) {
	sc, err := scenarios.Lookup("leasing/swarm")
	if err != nil {
		b.Fatal(err)
	}
	rep, err := scenarios.Run(sc, scenarios.Options{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	return sc, rep
}
