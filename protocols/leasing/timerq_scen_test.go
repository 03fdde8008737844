package leasing_test

import (
	"testing"

	"github.com/simrun-dev/simrun/scenarios"
	lsscen "github.com/simrun-dev/simrun/scenarios/leasing"
)

// TestTimerQueuesInScenarios runs the leasing scenarios, and the swarm and music
// player with every broken variant, with the deadline-queue check on (timerq_test.go):
// a handler call whose queues disagree with a scan panics, which fails the run.
func TestTimerQueuesInScenarios(t *testing.T) {
	seeds := uint64(12)
	if testing.Short() {
		seeds = 3
	}
	for _, name := range []string{"leasing/swarm", "leasing/music-stable", "leasing/music-transient", "leasing/music-permanent"} {
		sc, err := scenarios.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(1); seed <= seeds; seed++ {
			run(t, sc, seed, nil)
			if name == "leasing/swarm" {
				run(t, sc, seed, map[string]string{"dup": "0.1"}) // stale acknowledgements
			}
		}
	}
	for _, b := range lsscen.Bugs {
		pol := b.Policy
		swarm := &scenarios.Scenario{Name: "test/swarm-broken", Params: mustLookup(t, "leasing/swarm").Params,
			Build: func(bd *scenarios.Build) (*scenarios.Setup, error) { return lsscen.SwarmSetup(bd, pol) }}
		music := &scenarios.Scenario{Name: "test/music-broken", Params: mustLookup(t, "leasing/music-permanent").Params,
			Build: func(bd *scenarios.Build) (*scenarios.Setup, error) { return lsscen.MusicSetup(bd, "permanent", pol) }}
		for seed := uint64(1); seed <= 2; seed++ {
			run(t, swarm, seed, nil)
			run(t, music, seed, nil)
		}
	}
}

func run(t *testing.T, sc *scenarios.Scenario, seed uint64, params map[string]string) {
	t.Helper()
	rep, err := scenarios.Run(sc, scenarios.Options{Seed: seed, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result.Panic != nil {
		t.Fatalf("%s seed %d: %v", sc.Name, seed, rep.Result.Panic)
	}
}

func mustLookup(t *testing.T, name string) *scenarios.Scenario {
	sc, err := scenarios.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
