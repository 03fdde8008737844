package scenarios

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/sim"
	"github.com/simrun-dev/simrun/sim/demo"
)

// demoWitnessed (the demo's one-pass linearizability proof) never passes a history
// the full check does not: on seeds of every demo scenario, and on histories mutated
// to break it (a reply off by one, a reply before its point, a call repeated). It
// proves the fault-free runs, and most faulty ones, without the full check.
func TestDemoWitnessedAgreesWithTheFullCheck(t *testing.T) {
	params := map[string]string{"clients": "4", "ops": "8", "think": "5ms"}
	agree := func(name string, seed uint64, h checker.History) bool {
		t.Helper()
		r := &checker.Run{Result: &sim.Result{History: h}}
		ops, err := demoOps(r, 4)
		fast := demoWitnessed(h, 4)
		if err != nil {
			if fast {
				t.Fatalf("%s seed %d: witnessed, but the operations are malformed: %v", name, seed, err)
			}
			return false
		}
		full := checker.CheckLinearizable(checker.Counters(), ops, time.Minute)
		if fast && full.Result != porcupine.Ok {
			t.Fatalf("%s seed %d: witnessed, but the full check says %s", name, seed, full.Result)
		}
		return fast
	}
	for _, name := range []string{"demo/happy", "demo/faults", "demo/swarm", "demo/lossy"} {
		sc, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		proved := 0
		const seeds = 60
		for seed := uint64(1); seed <= seeds; seed++ {
			rep, err := Run(sc, Options{Seed: seed, Params: params})
			if err != nil {
				t.Fatal(err)
			}
			h := checker.History(rep.Result.History)
			if agree(name, seed, h) {
				proved++
			} else if name == "demo/happy" {
				t.Fatalf("seed %d of demo/happy is not proved by its witness", seed)
			}
			// mutations: each must not be proved unless the full check agrees
			for i := range h {
				switch v := h[i].Value.(type) {
				case demo.Return:
					m := append(checker.History(nil), h...)
					v.Value++
					m[i].Value = v
					agree(name+" (reply off by one)", seed, m)
					if i > 0 {
						m := append(checker.History(nil), h...)
						m[i-1], m[i] = m[i], m[i-1]
						agree(name+" (swapped)", seed, m)
					}
				case demo.Call:
					m := append(append(checker.History(nil), h...), h[i])
					agree(name+" (call repeated)", seed, m)
				}
				if i > 40 {
					break
				}
			}
		}
		if proved < seeds/2 {
			t.Errorf("%s: %d of %d seeds proved by the witness", name, proved, seeds)
		}
	}
}
