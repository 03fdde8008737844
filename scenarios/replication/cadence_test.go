package rpscen

import (
	"slices"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/checker"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// recheck runs a scenario on a seed and returns a function that checks the named
// property on that run's result with its history replaced by edit's answer (the run
// itself is left alone): a broken variant planted in the observations the property
// reads, from test code.
func recheck(t *testing.T, name string, seed uint64, params map[string]string, prop string) (func(edit func(h []sim.Observation) []sim.Observation) error, *scenarios.Report) {
	t.Helper()
	sc, err := scenarios.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	o := scenarios.Options{Seed: seed, Params: params}
	rep, err := scenarios.Run(sc, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() {
		t.Fatalf("%s seed %d: %v", name, seed, rep.Verdict)
	}
	setup, _, err := scenarios.Prepare(sc, o)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(setup.Properties, func(p checker.Property) bool { return p.Name == prop })
	if i < 0 {
		t.Fatalf("%s has no property %q", name, prop)
	}
	check := setup.Properties[i].Check
	return func(edit func(h []sim.Observation) []sim.Observation) error {
		res := *rep.Result
		res.History = edit(slices.Clone(rep.Result.History))
		return check(&checker.Run{Result: &res, Scenario: name, Settled: rep.Settled})
	}, rep
}

func keep(h []sim.Observation) []sim.Observation { return h }

// firstPrimary returns the node that took the primary role first in a history.
func firstPrimary(t *testing.T, h []sim.Observation) sim.NodeID {
	t.Helper()
	for _, o := range h {
		if v, ok := o.Value.(rp.Role); ok && v.Primary {
			return o.Node
		}
	}
	t.Fatal("no primary in the run")
	return -1
}

// RP-2 §5.2.2 ("Every 5 periods, a verification is performed") and doc.go (a polling
// primary looks the group up every period): the property passes on the protocol's
// runs, and fails on the same runs with the primary's lookups thinned out — every
// fifth kept under polling (the seed-4 mutant's behaviour), none after its first
// with notifications.
func TestLookupCadenceCatchesAStalePrimary(t *testing.T) {
	const prop = "RP-2 a replica verifies every 5 periods"
	for _, c := range []struct {
		notify string
		every  int    // keep one of every primary lookup (0: only the first)
		want   string // in the error
	}{
		{"false", 5, "polling"},
		{"true", 0, "more than 5 ping periods"},
	} {
		t.Run("notify="+c.notify, func(t *testing.T) {
			check, rep := recheck(t, "replication/basic", 1, map[string]string{"notify": c.notify}, prop)
			p := firstPrimary(t, rep.Result.History)
			if err := check(keep); err != nil {
				t.Fatalf("the protocol's own run fails: %v", err)
			}
			n := 0
			err := check(func(h []sim.Observation) []sim.Observation {
				return slices.DeleteFunc(h, func(o sim.Observation) bool {
					if _, ok := o.Value.(rp.Looked); !ok || o.Node != p {
						return false
					}
					n++
					return n > 1 && (c.every == 0 || n%c.every != 0)
				})
			})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("the primary's lookups thinned out: %v, want an error saying %q", err, c.want)
			}
		})
	}
}

// RP-P1 every task once reads a task's run as its hop's ran step: the property fails
// when the task's observation is made at another step of the hop (the transition's
// queued step, say: the seed-4 mutant's behaviour), or is missing at a ran step.
func TestTaskObservedInItsRanStep(t *testing.T) {
	const prop = "RP-P1 every task once"
	check, _ := recheck(t, "replication/simpleflow", 1, nil, prop)
	if err := check(keep); err != nil {
		t.Fatalf("the protocol's own run fails: %v", err)
	}
	// Move the first task observation past the route's first hop (whose transition is
	// the user's request) to right after its hop's transition step.
	err := check(func(h []sim.Observation) []sim.Observation {
		i := slices.IndexFunc(h, func(o sim.Observation) bool { return o.Kind == rp.ObsTask && o.Value.(rp.Task).Hop > 0 })
		task := h[i]
		v := task.Value.(rp.Task)
		h = slices.Delete(h, i, i+1)
		j := slices.IndexFunc(h, func(o sim.Observation) bool {
			x, ok := o.Value.(rp.Exec)
			return ok && o.Kind == rp.ObsExec && x.ID == rp.PrefixTransition+rp.InstKey(v.Inst, v.Hop)
		})
		if j < 0 {
			t.Fatalf("no transition step for %+v", v)
		}
		task.Node, task.Time = h[j].Node, h[j].Time
		return slices.Insert(h, j+1, task)
	})
	if err == nil || !strings.Contains(err.Error(), "outside the hop's ran step") {
		t.Fatalf("a task observed at its transition: %v", err)
	}
	// Drop the first task observation: its ran step ran no task.
	err = check(func(h []sim.Observation) []sim.Observation {
		i := slices.IndexFunc(h, func(o sim.Observation) bool { return o.Kind == rp.ObsTask })
		return slices.Delete(h, i, i+1)
	})
	if err == nil || !strings.Contains(err.Error(), "without running its task") {
		t.Fatalf("a ran step without its task: %v", err)
	}
}

// RP-2 §5.3.3 (handle_failure looks the group up again, then invokes again): the
// property passes on a run of the default swarm in which passive calls are refused by
// a replica that is not the primary (seed 8), and fails on the same run with the
// call's lookup after the refusal taken out (the seed-5 mutant's behaviour: the call
// waits for its re-send timer). TestSwarmCatchesPlantedBugs plants the same slip in
// the front ends and the default swarm catches it.
func TestRefusedCallLooksAgain(t *testing.T) {
	const prop = "RP-2 a call refused by a non-primary looks again"
	check, rep := recheck(t, "replication/swarm", 8, nil, prop)
	if err := check(keep); err != nil {
		t.Fatalf("the protocol's own run: %v", err)
	}
	refused := 0
	for _, o := range rep.Result.History {
		if v, ok := o.Value.(rp.CallEvent); ok && o.Kind == rp.ObsRefused && !v.Active {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no passive call refused in the run: the property checks nothing here")
	}
	err := check(func(h []sim.Observation) []sim.Observation {
		var out []sim.Observation
		for i, o := range h {
			if o.Kind == rp.ObsRelook && i > 0 && h[i-1].Kind == rp.ObsRefused && h[i-1].Node == o.Node {
				continue // the lookup the refusal made
			}
			out = append(out, o)
		}
		return out
	})
	if err == nil || !strings.Contains(err.Error(), "did not look the group up again") {
		t.Fatalf("a refused call that did not look again: %v", err)
	}
}
