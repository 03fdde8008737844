package main

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/scenarios"
)

// extremes returns out-of-scale values of the kind a parameter's default has: counts
// of a billion, durations of a million hours, floats of 1e300, negative values; with
// edge, also the largest values the parameter getters accept (a million, a day, 1e9),
// which a parameter that sizes a system must bound further, and the smallest (zero, a
// nanosecond: a period of 1ns scheduled events until memory ran out); and, for every
// parameter, a word no parameter takes.
func extremes(def string, edge bool) []string {
	first, _, _ := strings.Cut(def, ",")
	first = strings.TrimSpace(first)
	var vs, edges []string
	if _, err := strconv.Atoi(first); err == nil {
		vs, edges = []string{"1000000000", "-1000000000"}, []string{"1000000", "0"}
	} else if _, err := time.ParseDuration(first); err == nil {
		vs, edges = []string{"1000000h", "-1ms"}, []string{"24h", "1ns", "0s"}
	} else if _, err := strconv.ParseFloat(first, 64); err == nil {
		vs, edges = []string{"1e300", "-1e300"}, []string{"1e9", "0"}
	}
	if edge {
		vs = append(vs, edges...)
	}
	// A word where a number, a duration or a name from a list is wanted.
	return append(vs, "zz9")
}

// allocated runs f and returns its error and the bytes allocated meanwhile: the work a
// build did, whatever the machine's load (no wall-clock limit).
func allocated(f func() error) (alloc uint64, err error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, err
}

// refused runs f, which must refuse its input: it returns the refusal, or reports the
// input accepted and returns nil.
func refused(t *testing.T, what string, f func() error) error {
	t.Helper()
	err := f()
	if err == nil {
		t.Errorf("%s: accepted", what)
	}
	return err
}

// checkRefusal judges one answer to an extreme value: a one-line input error of
// modest length that names the parameter (name "": not checked here).
func checkRefusal(t *testing.T, what, name string, err error) {
	t.Helper()
	msg := err.Error()
	switch {
	case !scenarios.IsInputError(err) && !errors.As(err, new(*scenarios.InputError)):
		t.Errorf("%s: not reported as bad input (exit 2): %v", what, err)
	case strings.Contains(msg, "\n") || len(msg) > 300:
		t.Errorf("%s: refusal is not one short line: %q", what, msg)
	case name != "" && !regexp.MustCompile(`parameters? [^:]*\b`+regexp.QuoteMeta(name)+`\b`).MatchString(msg):
		t.Errorf("%s: refusal does not name the parameter: %q", what, msg)
	}
}

// startedRuns is what Progress panics with when an experiment that was to refuse its
// parameters starts its runs instead.
type startedRuns struct{ what string }

// experiment runs sc's experiment with params, as the command line would: a parameter
// a getter refused is bad input whatever the experiment returned (cli.runExperiment).
// The experiment must refuse before any run: at its first progress report it has
// accepted the values, and the call ends there (the work is bounded by one batch of
// runs, not by a clock; an experiment reporting progress from a worker goroutine
// crashes the test binary with the same message instead).
func experiment(sc *scenarios.Scenario, what string, params map[string]string) (err error) {
	ps, err := scenarios.NewParams(sc.Params, params)
	if err != nil {
		return &scenarios.InputError{Err: err}
	}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(startedRuns); !ok {
				panic(r)
			}
			err = nil // accepted
		}
	}()
	progress := func(int, int) { panic(startedRuns{what + ": accepted, the experiment started its runs"}) }
	_, err = sc.Experiment(&scenarios.Exp{Seed: 1, Params: ps, Progress: progress})
	if perr := ps.Err(); perr != nil {
		return &scenarios.InputError{Err: perr}
	}
	return err
}

// judgeBuild judges building a run or a model (what) with an extreme value of
// parameter name: either a refusal naming it or small.
func judgeBuild(t *testing.T, what, noun, name string, alloc uint64, err error) {
	t.Helper()
	switch {
	case err == nil && alloc > 256<<20:
		t.Errorf("%s: accepted, and building the %s allocated %d MiB", what, noun, alloc>>20)
	case err != nil:
		checkRefusal(t, what, name, err)
	}
}

// TestParameterExtremes (issue 16 items 2 and 4): every numeric parameter of every
// scenario, experiment and model, set to an out-of-scale value, is refused at once as
// bad input (exit 2) with one line naming it — or, for a single run or a model,
// accepted only if building it stays small (in bytes allocated, not seconds); the largest values the getters
// accept are tried on single runs and models too (an experiment that accepts them
// may legitimately run for hours). Before this test, a billion stages ran the
// process out of memory, experiments reported bad values as internal errors (exit 3),
// and a million-hour deadline simulated until memory ran out.
func TestParameterExtremes(t *testing.T) {
	judged := 0
	for _, sc := range scenarios.All() {
		for _, d := range sc.Params {
			for _, v := range extremes(d.Default, sc.Experiment == nil) {
				what := fmt.Sprintf("simrun run %s -p %s=%s", sc.Name, d.Name, v)
				judged++
				if sc.Experiment != nil {
					if err := refused(t, what, func() error { return experiment(sc, what, map[string]string{d.Name: v}) }); err != nil {
						checkRefusal(t, what, d.Name, err)
					}
					continue
				}
				alloc, err := allocated(func() error {
					_, _, err := scenarios.Start(sc, scenarios.Options{Seed: 1, Params: map[string]string{d.Name: v}})
					return err
				})
				judgeBuild(t, what, "run", d.Name, alloc, err)
			}
		}
	}
	for _, m := range model.All() {
		for _, d := range m.Params {
			for _, v := range extremes(d.Default, true) {
				what := fmt.Sprintf("simrun check %s -p %s=%s", m.Name, d.Name, v)
				judged++
				alloc, err := allocated(func() error {
					ps, err := model.NewParams(m.Params, map[string]string{d.Name: v})
					if err != nil {
						return &scenarios.InputError{Err: err}
					}
					_, err = m.Build(ps)
					if perr := ps.Err(); perr != nil {
						err = perr
					}
					if err != nil {
						return &scenarios.InputError{Err: err} // simrun check's rule: a Build error is bad input
					}
					return nil
				})
				judgeBuild(t, what, "model", d.Name, alloc, err)
			}
		}
	}
	t.Logf("%d extreme parameter values judged", judged)
	if judged < 100 {
		t.Fatalf("only %d extreme values judged: the parameter scan found too few numeric parameters", judged)
	}
}

// TestInputsRefused: values inside the getters' bounds that a scenario or an
// experiment cannot run with (its runs would end before what they measure, or it
// would not fit in memory: sizes bounded one by one whose product is not) are refused
// as bad input naming a parameter; each of these was an internal error (exit 3), a
// protocol panic reported as a violation, or an out-of-memory crash.
func TestInputsRefused(t *testing.T) {
	for _, c := range []struct {
		scenario string
		params   map[string]string
	}{
		{"leasing/detection", map[string]string{"every": "1s"}},                                 // leases expire from disuse
		{"leasing/detection", map[string]string{"lat-max": "23h"}},                              // leases outlive the run
		{"leasing/detection", map[string]string{"lat-max": "100ms", "runs": "1"}},               // against the traffic terms
		{"leasing/detection", map[string]string{"traffic-terms": "1ms"}},                        // likewise
		{"leasing/detection", map[string]string{"terms": "23h"}},                                // out of memory
		{"leasing/detection", map[string]string{"traffic-time": "23h"}},                         // out of memory
		{"replication/failover", map[string]string{"periods": "23h"}},                           // no takeover within the run
		{"replication/failover", map[string]string{"leases": "23h"}},                            // likewise
		{"replication/notify", map[string]string{"replicas": "1", "seeds": "1"}},                // no one to take over
		{"saga/grace", map[string]string{"timeout": "23h"}},                                     // no detection within the run
		{"winkowski/cost", map[string]string{"rho": "99"}},                                      // more pools than a task may ask for
		{"winkowski/cost", map[string]string{"agents": "1000", "tasks": "10000", "seeds": "1"}}, // out of memory
		{"winkowski/contention", map[string]string{"exec": "23h"}},                              // the runs' time bound ends them first
		{"winkowski/contention", map[string]string{"exec": "1s", "agents": "40", "tasks": "100", "pools": "2", "rho": "2"}},
		{"exactlyonce/blocking", map[string]string{"stages": "1000000"}},
		{"exactlyonce/blocking", map[string]string{"workers": "1000000"}},
		{"exactlyonce/blocking", map[string]string{"work": "13h"}}, // the crash window passes a day
		{"exactlyonce/blocking", map[string]string{"rates": "0,0.01,0.02,0.03,0.04,0.05,0.06,0.07,0.08,0.09,0.1", "observers": "0,1,2,3,4", "runs": "100000"}},
		{"exactlyonce/faults", map[string]string{"nodes": "100", "agents": "10000", "stages": "100", "width": "100"}},
		{"leasing/swarm", map[string]string{"mean-up": "1ms", "mean-down": "1ms", "horizon": "10m"}},
		{"leasing/swarm", map[string]string{"term": "10m"}}, // the linearizability check ran out of memory
		{"winkowski/dining", map[string]string{"n": "1000", "meals": "10000"}},
		{"winkowski/jobs", map[string]string{"agents": "1000", "jobs": "1000", "tasks": "10000"}},
		{"winkowski/drinking", map[string]string{"n": "1000", "sessions": "10000"}},
		{"saga/order", map[string]string{"spacing": "-1s"}}, // launches before time zero: a protocol panic
	} {
		what := "simrun run " + c.scenario
		for _, k := range slices.Sorted(maps.Keys(c.params)) {
			what += " -p " + k + "=" + c.params[k]
		}
		sc, err := scenarios.Lookup(c.scenario)
		if err != nil {
			t.Fatal(err)
		}
		err = refused(t, what, func() error {
			if sc.Experiment == nil {
				_, _, err := scenarios.Start(sc, scenarios.Options{Seed: 1, Params: c.params})
				return err
			}
			return experiment(sc, what, c.params)
		})
		if err != nil {
			names := slices.Sorted(maps.Keys(c.params))
			named := false
			for _, n := range names {
				named = named || regexp.MustCompile(`parameters? [^:]*\b`+regexp.QuoteMeta(n)+`\b`).MatchString(err.Error())
			}
			if !named {
				t.Errorf("%s: refusal names none of %v: %v", what, names, err)
			}
			checkRefusal(t, what, "", err)
		}
	}
}

// The harness of the two tests above: an experiment that accepts its parameters is
// stopped at its first progress report and counts as accepted (nil), with no clock.
func TestExperimentHarnessStopsAtTheFirstRun(t *testing.T) {
	sc, err := scenarios.Lookup("winkowski/cost")
	if err != nil {
		t.Fatal(err)
	}
	if err := experiment(sc, "winkowski/cost", map[string]string{"seeds": "1", "agents": "2", "tasks": "1"}); err != nil {
		t.Fatalf("a valid setting: %v", err)
	}
}
