// Package scenariotest is the property-test harness for protocol tests: it runs a
// registered scenario under fault plans drawn by rapid (Plans), so a failing plan
// shrinks to a minimal one, or under the scenario's own seeded plans over a range of
// seeds (Seeds). Every failure prints what replays it outside the test:
//
//	simrun run SCENARIO --seed N --faults FILE [-p k=v ...]
//
// Choices made here:
//   - Number of cases. rapid reads its number of checks from the -rapid.checks flag,
//     once, when a check starts. Plans sets that flag's value to Options.Checks for
//     the duration of its own check (restoring it afterwards), under a package mutex,
//     so each call runs exactly Options.Checks cases (under -short a tenth of them, at
//     least ShortChecks, where rapid would divide by 5). An explicit -rapid.checks on the go test command
//     line (or RAPID_CHECKS in the environment) wins, so a nightly job can raise it
//     everywhere. Plans calls therefore do not overlap each other's checks; do not run
//     plain rapid.Check in parallel with them in one test binary.
//   - Determinism. Unless -rapid.seed (or RAPID_SEED) is given, rapid's base seed is
//     derived from the test and scenario names (or taken from Options.Seed), so a test
//     draws the same cases on every run and machine: CI is reproducible, and a failure
//     seen once is seen again. Raise -rapid.checks or pass -rapid.seed to explore more.
//   - The minimal case. rapid re-runs the minimal failing case last; Plans keeps the
//     seed and plan of the last case it ran, writes that plan as JSON to a file (in
//     Options.PlanDir, else $SIMRUN_PLAN_DIR, else the system temporary directory),
//     re-runs it once more with check artifacts enabled (porcupine's visualization of
//     a non-linearizable history lands beside the plan), and prints the plan, the
//     verdict and the replay command.
//   - rapid's own fail files (testdata/rapid/...) are not written: the plan file and
//     the derived seed already reproduce a failure, and stray fail files would land in
//     the protocol packages' source trees. -rapid.nofailfile=false on the command line
//     turns them back on; -rapid.failfile replays one as usual.
//   - Any verdict but ok fails a case: safety, liveness, crash, bound and unknown alike.
package scenariotest

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/scenarios"
)

// DefaultChecks is the number of cases Plans runs when Options.Checks is 0.
const DefaultChecks = 200

// ShortChecks and ShortSeeds are the least Plans and Seeds run under -short.
const (
	ShortChecks = 10
	ShortSeeds  = 20
)

// Options configures Plans.
type Options struct {
	// Checks is the number of cases (default DefaultChecks).
	Checks int
	// Params are scenario parameters (-p name=value).
	Params map[string]string
	// Limits bounds the drawn plans (see faults.PlanGen). A zero Horizon means
	// faults.DefaultParams of the scenario's "horizon" parameter, if it has one.
	Limits faults.Params
	// Seed, when non-zero, is rapid's base seed (default: derived from the test and
	// scenario names; -rapid.seed on the command line overrides both).
	Seed uint64
	// PlanDir is where a minimal failing plan is written (default $SIMRUN_PLAN_DIR,
	// else os.TempDir()).
	PlanDir string
}

// Failure is a minimal failing case.
type Failure struct {
	Scenario string
	// Seed is the run's seed, Plan its (minimal) fault plan.
	Seed uint64
	Plan faults.Plan
	// Verdict is the run's worst verdict; Verdicts all of them.
	Verdict  checker.Verdict
	Verdicts []checker.Verdict
	// PlanFile holds Plan as JSON; Command replays the run.
	PlanFile string
	Command  string
	// Err is set instead of a verdict when the run itself failed (e.g. a panic in a
	// checker or a scenario's Build).
	Err error
}

// Message is the text Plans prints for the failure.
func (f *Failure) Message() string {
	var b strings.Builder
	what := f.Verdict.String()
	if f.Err != nil {
		what = "run error: " + f.Err.Error()
	}
	events := "events"
	if f.Plan.Len() == 1 {
		events = "event"
	}
	fmt.Fprintf(&b, "scenario %s fails on seed %d under this fault plan (%d %s, minimized by rapid):\n", f.Scenario, f.Seed, f.Plan.Len(), events)
	b.Write(f.Plan.JSON())
	fmt.Fprintf(&b, "verdict:   %s\n", what)
	for _, v := range f.Verdicts {
		if v.Failed() && v != f.Verdict {
			fmt.Fprintf(&b, "also:      %s\n", v)
		}
		if v.Artifact != "" {
			fmt.Fprintf(&b, "artifact:  %s\n", v.Artifact)
		}
	}
	if f.PlanFile != "" {
		fmt.Fprintf(&b, "plan file: %s\n", f.PlanFile)
	}
	fmt.Fprintf(&b, "replay:    %s", f.Command)
	return b.String()
}

// Plans runs rapid.Check over a registered scenario: every case draws a seed and a
// fault plan from faults.PlanGen over the scenario's node names and o.Limits, runs the
// scenario with that plan (scenarios.Options.Faults), and fails on any verdict other
// than OK. rapid shrinks the plan; the failure message prints the minimal plan as
// JSON, writes it to a file, and prints the exact replay command
// (simrun run SCENARIO --seed N --faults FILE [-p k=v...]).
//
// Under -short (the quick development loop; CI runs the full count) it runs a tenth of
// the cases, at least ShortChecks.
func Plans(t *testing.T, scenario string, o Options) {
	t.Helper()
	if testing.Short() {
		o.Checks = max(ShortChecks, cmp.Or(o.Checks, DefaultChecks)/10)
	}
	h, err := newHarness(t.Name(), scenario, o)
	if err != nil {
		t.Fatalf("scenariotest: %v", err)
	}
	defer func() {
		// rapid ends a failing check with t.FailNow; this runs during that unwinding.
		if t.Failed() && h.lastFailed {
			f := h.minimal()
			t.Errorf("scenariotest: %s", f.Message())
		}
	}()
	withRapidFlags(h.checks, h.seed, true, func() {
		rapid.Check(t, h.prop)
	})
}

// Find runs the same search as Plans and returns the minimal failing case, or nil if
// all cases pass, instead of failing a test. name stands for the test name (it seeds
// rapid unless o.Seed is set). Harness errors (unknown scenario, bad limits) are
// returned.
func Find(name, scenario string, o Options) (*Failure, error) {
	h, err := newHarness(name, scenario, o)
	if err != nil {
		return nil, err
	}
	tb := &recorder{name: name}
	withRapidFlags(h.checks, h.seed, true, func() {
		defer func() {
			if x := recover(); x != nil && x != errStop {
				panic(x)
			}
		}()
		rapid.Check(tb, h.prop)
	})
	if !tb.failed {
		return nil, nil
	}
	if !h.lastFailed {
		// rapid failed for another reason than a failing case (e.g. a panic).
		return nil, errors.New(strings.Join(tb.errors, "\n"))
	}
	return h.minimal(), nil
}

// Seeds runs the scenario with its own seeded fault plans for seeds from..to (in
// parallel, see scenarios.Sweep) and fails on the first (lowest) failing seed,
// printing its verdicts and the command that reproduces it.
//
// Under -short it sweeps the first ShortSeeds seeds of the range only.
func Seeds(t *testing.T, scenario string, from, to uint64, params map[string]string) {
	t.Helper()
	if testing.Short() && to >= from+ShortSeeds {
		to = from + ShortSeeds - 1
	}
	res, err := scenarios.Sweep(scenarios.SweepOptions{
		Scenario: scenario, Params: params, From: from, To: to, StopAtFailure: true, FailureLimit: 1,
	})
	if err != nil {
		t.Fatalf("scenariotest: %v", err)
	}
	if res.Failed == 0 {
		t.Logf("scenariotest: %s: seeds %d-%d ok (%d runs)", scenario, from, to, res.Runs)
		return
	}
	v := res.Failures[0]
	var b strings.Builder
	fmt.Fprintf(&b, "scenariotest: %s fails on seed %d (the lowest failing seed of %d-%d):\n", scenario, v.Seed, from, to)
	// Re-run the seed to show every verdict, not only the worst.
	if rep, err := scenarios.RunName(scenario, scenarios.Options{Seed: v.Seed, Params: params}); err == nil {
		for _, w := range rep.Verdicts {
			if w.Failed() {
				fmt.Fprintf(&b, "  %s\n", w)
			}
		}
		fmt.Fprintf(&b, "faults:    %s\n", rep.Faults)
	} else {
		fmt.Fprintf(&b, "  %s\n", v)
	}
	fmt.Fprintf(&b, "reproduce: %s", v.Repro)
	t.Fatal(b.String())
}

// harness is one Plans or Find call.
type harness struct {
	sc       *scenarios.Scenario
	params   map[string]string
	gen      *rapid.Generator[faults.Plan]
	checks   int
	seed     uint64
	planFile string
	dir      string

	// The last case run (rapid runs the minimal failing case last) and whether it
	// failed.
	lastFailed bool
	lastSeed   uint64
	lastPlan   faults.Plan
	lastRep    *scenarios.Report
	lastErr    error
}

func newHarness(testName, scenario string, o Options) (*harness, error) {
	sc, err := scenarios.Lookup(scenario)
	if err != nil {
		return nil, err
	}
	if sc.Build == nil {
		return nil, fmt.Errorf("%s is an experiment, not a single-run scenario", scenario)
	}
	empty := faults.Plan{}
	setup, ps, err := scenarios.Prepare(sc, scenarios.Options{Seed: 1, Params: o.Params, Faults: &empty})
	if err != nil {
		return nil, err
	}
	names := make([]string, len(setup.Nodes))
	for i, n := range setup.Nodes {
		names[i] = n.Name
	}
	// The scenario must run the plan it is given (Build.FaultPlan): a probe plan must
	// come back unchanged.
	probe := faults.Plan{Events: []faults.Event{{At: faults.Duration(time.Millisecond), Kind: "skew", Node: names[0], Step: faults.Duration(time.Millisecond)}}}
	if got, _, err := scenarios.Prepare(sc, scenarios.Options{Seed: 1, Params: o.Params, Faults: &probe}); err != nil {
		return nil, err
	} else if got.Faults.String() != probe.String() {
		return nil, fmt.Errorf("%s ignores the fault plan it is given (its Build must use Build.FaultPlan)", scenario)
	}
	limits := o.Limits
	if limits.Horizon == 0 {
		hs, ok := ps.Values()["horizon"]
		if !ok {
			return nil, fmt.Errorf("%s has no horizon parameter: set Options.Limits.Horizon", scenario)
		}
		h := ps.PositiveDuration("horizon")
		if ps.Err() != nil {
			return nil, fmt.Errorf("%s: horizon %q: %v", scenario, hs, ps.Err())
		}
		limits = faults.DefaultParams(h)
	}
	h := &harness{sc: sc, params: o.Params, checks: o.Checks, seed: o.Seed}
	if h.checks == 0 {
		h.checks = DefaultChecks
	}
	if h.checks < 0 {
		return nil, fmt.Errorf("Options.Checks %d: want at least 1", h.checks)
	}
	if err := func() (err error) {
		defer func() {
			if x := recover(); x != nil {
				err = fmt.Errorf("%v", x)
			}
		}()
		h.gen = faults.PlanGen(names, limits)
		return nil
	}(); err != nil {
		return nil, err
	}
	if h.seed == 0 {
		f := fnv.New64a()
		f.Write([]byte(testName + "\x00" + scenario))
		h.seed = f.Sum64() | 1
	}
	h.dir = o.PlanDir
	if h.dir == "" {
		h.dir = os.Getenv("SIMRUN_PLAN_DIR")
	}
	if h.dir == "" {
		h.dir = os.TempDir()
	}
	if abs, err := filepath.Abs(h.dir); err == nil {
		h.dir = abs
	}
	h.planFile = filepath.Join(h.dir, "simrun-plan-"+safeName(testName)+"--"+safeName(scenario)+".json")
	return h, nil
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeName(s string) string { return strings.Trim(unsafeChars.ReplaceAllString(s, "_"), "_") }

// prop is one rapid case.
func (h *harness) prop(t *rapid.T) {
	seed := rapid.Uint64Range(1, 1<<32).Draw(t, "seed")
	plan := h.gen.Draw(t, "plan")
	h.lastFailed, h.lastSeed, h.lastPlan, h.lastRep, h.lastErr = false, seed, plan, nil, nil
	rep, err := runCase(h.sc, seed, plan, h.params, h.planFile, "")
	h.lastRep, h.lastErr = rep, err
	h.lastFailed = err != nil || rep.Failed()
	if err != nil {
		t.Fatalf("seed %d: run error: %v", seed, err)
	}
	if rep.Failed() {
		t.Fatalf("seed %d: %s", seed, rep.Verdict)
	}
}

func runCase(sc *scenarios.Scenario, seed uint64, plan faults.Plan, params map[string]string, planFile, artifacts string) (rep *scenarios.Report, err error) {
	defer func() {
		if x := recover(); x != nil {
			rep, err = nil, fmt.Errorf("panic: %v", x)
		}
	}()
	return scenarios.Run(sc, scenarios.Options{Seed: seed, Params: params, Faults: &plan, FaultsFile: planFile, ArtifactDir: artifacts})
}

// minimal writes the last case's plan to its file, re-runs it with artifacts on, and
// describes it.
func (h *harness) minimal() *Failure {
	f := &Failure{Scenario: h.sc.Name, Seed: h.lastSeed, Plan: h.lastPlan, Err: h.lastErr}
	var nonDefault []string
	if ps, err := scenarios.NewParams(h.sc.Params, h.params); err == nil {
		nonDefault = ps.NonDefault()
	}
	if err := os.MkdirAll(h.dir, 0o755); err == nil && os.WriteFile(h.planFile, h.lastPlan.JSON(), 0o644) == nil {
		f.PlanFile = h.planFile
	}
	f.Command = scenarios.Repro(h.sc.Name, h.lastSeed, nonDefault, f.PlanFile)
	rep, err := runCase(h.sc, h.lastSeed, h.lastPlan, h.params, f.PlanFile, h.dir)
	if err == nil {
		f.Verdict, f.Verdicts, f.Err = rep.Verdict, rep.Verdicts, nil
		f.Command = rep.Repro
	} else if h.lastRep != nil {
		f.Verdict, f.Verdicts = h.lastRep.Verdict, h.lastRep.Verdicts
	}
	return f
}

// ---- rapid's flags ----

var flagMu sync.Mutex

// withRapidFlags runs fn with rapid's -rapid.checks set to checks (compensating for
// rapid's division by 5 under -short), -rapid.seed to seed, and -rapid.nofailfile to
// noFailFile, unless the user set them on the command line or in the environment; the
// previous values are restored afterwards. Calls are serialized.
func withRapidFlags(checks int, seed uint64, noFailFile bool, fn func()) {
	flagMu.Lock()
	defer flagMu.Unlock()
	explicit := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	var restore []func()
	defer func() {
		for _, r := range restore {
			r()
		}
	}()
	set := func(name, env, value string) {
		f := flag.Lookup(name)
		if f == nil || explicit[name] {
			return
		}
		if _, ok := os.LookupEnv(env); ok {
			return
		}
		old := f.Value.String()
		if f.Value.Set(value) == nil {
			restore = append(restore, func() { _ = f.Value.Set(old) })
		}
	}
	if testing.Short() {
		checks *= 5 // rapid divides by 5 under -short; we promised exactly checks cases
	}
	set("rapid.checks", "RAPID_CHECKS", strconv.Itoa(checks))
	set("rapid.seed", "RAPID_SEED", strconv.FormatUint(seed, 10))
	if noFailFile {
		set("rapid.nofailfile", "RAPID_NOFAILFILE", "true")
	}
	fn()
}

// ---- a rapid.TB that records instead of failing a test ----

var errStop = errors.New("scenariotest: stop")

type recorder struct {
	name   string
	failed bool
	errors []string
}

func (r *recorder) Helper()                         {}
func (r *recorder) Name() string                    { return r.name }
func (r *recorder) Logf(format string, args ...any) {}
func (r *recorder) Log(args ...any)                 {}
func (r *recorder) Skipf(format string, args ...any) {
	r.Errorf("skipped: "+format, args...)
	panic(errStop)
}
func (r *recorder) Skip(args ...any) { r.Skipf("%s", fmt.Sprint(args...)) }
func (r *recorder) SkipNow()         { r.Skipf("skipped") }
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	panic(errStop)
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *recorder) FailNow()          { r.failed = true; panic(errStop) }
func (r *recorder) Fail()             { r.failed = true }
func (r *recorder) Failed() bool      { return r.failed }

// MutantEnv is the environment variable tools/mutate sets for the tests it runs
// against a mutant.
const MutantEnv = "SIMRUN_MUTANT"

// Unpinned reports whether the tests run against a mutant (MutantEnv is set). A test
// that pins a model's state count then compares verdicts only, and gives the search
// a larger bound: a pinned count changes with any change of behaviour, so it would
// "catch" every mutant, and the pass measures what the properties catch. A search
// that reaches the larger bound still fails (the state space grew fourfold: the model
// no longer ends where it did).
func Unpinned() bool { return os.Getenv(MutantEnv) != "" }

// Bound is the MaxStates a test that pins count gives its search: twice the count
// (a state-space blow-up fails fast instead of hanging), four times under a mutation
// pass (see Unpinned).
func Bound(count int64) int64 {
	if Unpinned() {
		return 4 * count
	}
	return 2 * count
}
