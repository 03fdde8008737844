package main

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/scenarios"
)

// extremes returns out-of-scale values of the kind a parameter's default has: counts
// of a billion, durations of a million hours, floats of 1e300, each also negative;
// with edge, also the largest values the parameter getters accept (a million, a day,
// 1e9), which a parameter that sizes a system must bound further; and, for every
// parameter, a word no parameter takes.
func extremes(def string, edge bool) []string {
	first, _, _ := strings.Cut(def, ",")
	first = strings.TrimSpace(first)
	var vs []string
	if _, err := strconv.Atoi(first); err == nil {
		vs = []string{"1000000000", "-1000000000", "1000000"}
	} else if _, err := time.ParseDuration(first); err == nil {
		vs = []string{"1000000h", "-1000000h", "24h"}
	} else if _, err := strconv.ParseFloat(first, 64); err == nil {
		vs = []string{"1e300", "-1e300", "1e9"}
	}
	if !edge && vs != nil {
		vs = vs[:2]
	}
	// A word where a number, a duration or a name from a list is wanted.
	return append(vs, "zz9")
}

// within runs f on its own goroutine and reports whether it returned within d, and
// the bytes it allocated (the test runs nothing else meanwhile).
func within(d time.Duration, f func() error) (err error, done bool, alloc uint64) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	select {
	case err = <-ch:
		runtime.ReadMemStats(&after)
		return err, true, after.TotalAlloc - before.TotalAlloc
	case <-time.After(d):
		return nil, false, 0
	}
}

// checkRefusal judges one answer to an extreme value: a one-line input error of
// modest length that names the parameter.
func checkRefusal(t *testing.T, what, name string, err error) {
	t.Helper()
	msg := err.Error()
	switch {
	case !scenarios.IsInputError(err) && !errors.As(err, new(*scenarios.InputError)):
		t.Errorf("%s: not reported as bad input (exit 2): %v", what, err)
	case strings.Contains(msg, "\n") || len(msg) > 300:
		t.Errorf("%s: refusal is not one short line: %q", what, msg)
	case !strings.Contains(msg, name):
		t.Errorf("%s: refusal does not name the parameter: %q", what, msg)
	}
}

// TestParameterExtremes (issue 16 items 2 and 4): every numeric parameter of every
// scenario, experiment and model, set to an out-of-scale value, is refused at once as
// bad input (exit 2) with one line naming it — or, for a single run or a model,
// accepted only if building it stays small and quick; the largest values the getters
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
					err, done, _ := within(10*time.Second, func() error {
						ps, err := scenarios.NewParams(sc.Params, map[string]string{d.Name: v})
						if err != nil {
							return &scenarios.InputError{Err: err}
						}
						_, err = sc.Experiment(&scenarios.Exp{Seed: 1, Params: ps})
						if perr := ps.Err(); perr != nil {
							return &scenarios.InputError{Err: perr} // the command line's rule (cli.runExperiment)
						}
						return err
					})
					switch {
					case !done:
						t.Errorf("%s: accepted, still running after 10 s", what)
					case err == nil:
						t.Errorf("%s: accepted", what)
					default:
						checkRefusal(t, what, d.Name, err)
					}
					continue
				}
				err, done, alloc := within(10*time.Second, func() error {
					_, _, err := scenarios.Start(sc, scenarios.Options{Seed: 1, Params: map[string]string{d.Name: v}})
					return err
				})
				switch {
				case !done:
					t.Errorf("%s: building the run takes more than 10 s", what)
				case err == nil && alloc > 256<<20:
					t.Errorf("%s: accepted, and building the run allocated %d MiB", what, alloc>>20)
				case err != nil:
					checkRefusal(t, what, d.Name, err)
				}
			}
		}
	}
	for _, m := range model.All() {
		for _, d := range m.Params {
			for _, v := range extremes(d.Default, true) {
				what := fmt.Sprintf("simrun check %s -p %s=%s", m.Name, d.Name, v)
				judged++
				err, done, alloc := within(10*time.Second, func() error {
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
				switch {
				case !done:
					t.Errorf("%s: building the model takes more than 10 s", what)
				case err == nil && alloc > 256<<20:
					t.Errorf("%s: accepted, and building the model allocated %d MiB", what, alloc>>20)
				case err != nil:
					checkRefusal(t, what, d.Name, err)
				}
			}
		}
	}
	t.Logf("%d extreme parameter values judged", judged)
	if judged < 100 {
		t.Fatalf("only %d extreme values judged: the parameter scan found too few numeric parameters", judged)
	}
}

// TestExperimentInputsRefused: values inside the getters' bounds that an experiment
// cannot run with (its runs would end before what they measure, or its history would
// not fit in memory) are refused as bad input naming the parameter; each of these
// was an internal error (exit 3) or an out-of-memory crash.
func TestExperimentInputsRefused(t *testing.T) {
	for _, c := range []struct{ scenario, param, value string }{
		{"leasing/detection", "every", "1s"},          // leases expire from disuse
		{"leasing/detection", "lat-max", "23h"},       // leases outlive the run
		{"leasing/detection", "terms", "23h"},         // out of memory
		{"leasing/detection", "traffic-time", "23h"},  // out of memory
		{"replication/failover", "periods", "23h"},    // no takeover within the run
		{"replication/failover", "leases", "23h"},     // likewise
		{"saga/grace", "timeout", "23h"},              // no detection within the run
		{"winkowski/cost", "rho", "99"},               // more pools than a task may ask for
		{"winkowski/contention", "exec", "23h"},       // the runs' time bound ends them first
		{"exactlyonce/blocking", "stages", "1000000"}, // out of memory
		{"exactlyonce/blocking", "workers", "1000000"},
	} {
		what := fmt.Sprintf("simrun run %s -p %s=%s", c.scenario, c.param, c.value)
		sc, err := scenarios.Lookup(c.scenario)
		if err != nil {
			t.Fatal(err)
		}
		err, done, _ := within(10*time.Second, func() error {
			ps, err := scenarios.NewParams(sc.Params, map[string]string{c.param: c.value})
			if err != nil {
				return err
			}
			_, err = sc.Experiment(&scenarios.Exp{Seed: 1, Params: ps})
			if perr := ps.Err(); perr != nil {
				return &scenarios.InputError{Err: perr}
			}
			return err
		})
		switch {
		case !done:
			t.Errorf("%s: accepted, still running after 10 s", what)
		case err == nil:
			t.Errorf("%s: accepted", what)
		default:
			checkRefusal(t, what, c.param, err)
		}
	}
}
