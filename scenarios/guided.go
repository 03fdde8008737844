package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/sim"
)

// Guided sweeps (SweepOptions.Guided). A uniform sweep runs seed after seed, each
// drawing its faults blindly. A guided sweep keeps a corpus of the runs that did
// something new — fired a rule no earlier run fired, fired one a new number of times
// (AFL's hit-count buckets), or made a call of a new shape (a node, the input before and
// this input, the rules it covered: a happens-before summary in the small, see
// sim.Coverage.Features) — and draws half of its next runs by mutating the fault plan
// of a corpus run (shift, drop, duplicate or retarget a fault, turn a crash into a
// crash-send, splice in another corpus run's faults, add a fresh one), replayed on that
// run's seed so its topology and workload stay as they were; the other half are fresh
// seeds, as in a uniform sweep.
//
// It is deterministic: runs go in generations of GuidedBatch; a generation's plans are
// drawn from the corpus as it stood after the previous one, from a stream of the sweep's
// own (its seed range and shard), and the corpus is updated in run order — so the whole
// sequence, and the result, is the same for any number of workers. A run is identified
// by its index i in the sweep (1 = the first): run i of a guided sweep over seeds A-B is
// either seed A+i-1 (a fresh run) or a mutation; every listed failure has its plan
// written to a file and a repro command that replays it.

// GuidedBatch is the number of runs of one generation.
const GuidedBatch = 32

// guidedMutateFrac is the share of a generation drawn by mutation once the corpus
// holds a run.
const guidedMutateFrac = 0.5

// GuidedStats is what a guided sweep learned, per run in order.
type GuidedStats struct {
	// Features is the number of distinct features (rule buckets and call shapes) seen
	// after each run; Rules the number of distinct rules fired.
	Features []int `json:"features"`
	Rules    []int `json:"rules"`
	// Corpus is the corpus size at the end; Mutated how many runs were mutations.
	Corpus  int `json:"corpus"`
	Mutated int `json:"mutated"`
	// FirstFailure is the index (1-based) of the first failing run, 0 if none.
	FirstFailure int `json:"first_failure"`
}

type corpusEntry struct {
	seed  uint64
	plan  faults.Plan
	names []string
	span  time.Duration // the latest fault time of the plan, or the run's end
}

type guidedRun struct {
	seed    uint64
	plan    *faults.Plan // nil: the scenario draws its own (a fresh run)
	mutated bool
}

// guidedSweep runs a guided sweep over the (shard's) range run of the sweep whole.
func guidedSweep(sc *Scenario, o SweepOptions, res *SweepResult, run SeedRange, limit int) (*GuidedStats, error) {
	return guidedSweepFrac(sc, o, res, run, limit, guidedMutateFrac)
}

// guidedSweepFrac is guidedSweep with the share of mutated runs frac (0: a uniform
// sweep that tracks the same features, for comparisons).
func guidedSweepFrac(sc *Scenario, o SweepOptions, res *SweepResult, run SeedRange, limit int, frac float64) (*GuidedStats, error) {
	workers := o.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	count := run.Len()
	rng := sim.NewRand(sim.StreamSeed(run.From, "guided", int64(run.To)))
	var corpus []corpusEntry
	seen := map[uint64]struct{}{}
	rulesSeen := map[int]struct{}{}
	st := &GuidedStats{}
	t := &tally{byProp: map[string]*ClassCounts{}}
	var done, failed int64
	nextFresh := run.From
	for base := uint64(0); base < count; base += GuidedBatch {
		if o.Interrupt != nil && o.Interrupt.Load() {
			break
		}
		n := min(GuidedBatch, count-base)
		batch := make([]guidedRun, n)
		for i := range batch {
			if len(corpus) > 0 && rng.Float64() < frac {
				e := corpus[rng.IntN(len(corpus))]
				if p, ok := mutatePlan(rng, e, corpus); ok {
					batch[i] = guidedRun{seed: e.seed, plan: &p, mutated: true}
					continue
				}
			}
			batch[i] = guidedRun{seed: nextFresh}
			nextFresh++
		}
		reps := make([]*Report, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		var next sync.Mutex
		idx := 0
		for w := 0; w < min(workers, int(n)); w++ {
			wg.Go(func() {
				for {
					next.Lock()
					i := idx
					idx++
					next.Unlock()
					if i >= int(n) {
						return
					}
					reps[i], errs[i] = runGuided(sc, batch[i], o)
				}
			})
		}
		wg.Wait()
		for i := range reps {
			if errs[i] != nil && batch[i].plan != nil {
				// A mutated plan the scenario refuses (its own checks): run the entry's
				// seed as drawn instead, so every index is a run.
				batch[i] = guidedRun{seed: batch[i].seed}
				reps[i], errs[i] = runGuided(sc, batch[i], o)
			}
			if errs[i] != nil {
				return nil, fmt.Errorf("%s seed %d: %w", sc.Name, batch[i].seed, errs[i])
			}
			rep := reps[i]
			done++
			if batch[i].mutated {
				st.Mutated++
			}
			idxRun := int(base) + i + 1
			if rep.Failed() {
				failed++
				if st.FirstFailure == 0 {
					st.FirstFailure = idxRun
				}
				if len(t.failures) < limit && batch[i].plan != nil {
					if path, err := savePlan(o.ArtifactDir, sc.Name, idxRun, *batch[i].plan); err == nil {
						rep.Verdict.Repro = Repro(sc.Name, batch[i].seed, nonDefaultOf(sc, o.Params), path)
					}
				}
			}
			t.add(rep, limit)
			if o.OnRun != nil {
				o.OnRun(batch[i].seed, rep)
			}
			if isNew(rep.Result.Coverage, seen, rulesSeen) {
				e := corpusEntry{seed: batch[i].seed, plan: rep.Faults, names: rep.Result.Names(), span: time.Duration(rep.Result.Time)}
				corpus = append(corpus, e)
			}
			st.Features = append(st.Features, len(seen))
			st.Rules = append(st.Rules, len(rulesSeen))
			if o.Progress != nil {
				o.Progress(done, failed)
			}
		}
		if o.StopAtFailure && failed > 0 {
			break
		}
	}
	st.Corpus = len(corpus)
	var rules ruleTally
	rules.merge(&t.rules)
	res.absorb(t.runs, t.failed, t.byClass, t.byProp, t.failures, t.events, t.messages)
	p := ProtocolOf(sc.Name)
	res.Coverage = &Coverage{Protocol: p, Unit: "runs", Total: rules.total, Rules: rules.rules(p), Properties: propertyCoverage(res.ByProperty)}
	res.trimFailures()
	return st, nil
}

func runGuided(sc *Scenario, g guidedRun, o SweepOptions) (rep *Report, err error) {
	defer func() {
		if x := recover(); x != nil {
			rep, err = nil, fmt.Errorf("internal panic: %v", x)
		}
	}()
	return Run(sc, Options{Seed: g.seed, Params: o.Params, Faults: g.plan, ArtifactDir: o.ArtifactDir, Coverage: true})
}

// isNew adds the run's features and rule buckets to seen and reports whether any was
// new.
func isNew(c *sim.Coverage, seen map[uint64]struct{}, rules map[int]struct{}) bool {
	if c == nil {
		return false
	}
	fresh := false
	for i, n := range c.Fired {
		if n == 0 {
			continue
		}
		if _, ok := rules[i]; !ok {
			rules[i] = struct{}{}
			fresh = true
		}
		f := sim.Mix64(uint64(i)<<8 | uint64(bucket(n)))
		if _, ok := seen[f]; !ok {
			seen[f] = struct{}{}
			fresh = true
		}
	}
	for f := range c.Features {
		if _, ok := seen[f]; !ok {
			seen[f] = struct{}{}
			fresh = true
		}
	}
	return fresh
}

// bucket is AFL's hit-count bucket of n > 0: 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+.
func bucket(n int64) int {
	switch {
	case n <= 3:
		return int(n)
	case n < 8:
		return 4
	case n < 16:
		return 5
	case n < 32:
		return 6
	case n < 128:
		return 7
	}
	return 8
}

// mutatePlan draws a mutation of e's plan: one or two operators, repaired and
// validated against e's nodes (ok false when the result is not a valid plan).
func mutatePlan(r *sim.Rand, e corpusEntry, corpus []corpusEntry) (faults.Plan, bool) {
	evs := slices.Clone(e.plan.Events)
	span := max(e.span, time.Second)
	crashable := e.names
	ops := 1 + r.IntN(2)
	for k := 0; k < ops; k++ {
		switch op := r.IntN(7); {
		case op == 0 && len(evs) > 0: // shift a fault in time
			i := r.IntN(len(evs))
			d := time.Duration(r.Int64Range(-int64(span)/4, int64(span)/4))
			evs[i].At = faults.Duration(max(0, time.Duration(evs[i].At)+d))
		case op == 1 && len(evs) > 0: // drop a fault
			i := r.IntN(len(evs))
			evs = slices.Delete(evs, i, i+1)
		case op == 2 && len(evs) > 0: // duplicate a fault at another time
			c := evs[r.IntN(len(evs))]
			c.At = faults.Duration(r.Int64Range(0, int64(span)))
			evs = append(evs, c)
		case op == 3 && len(evs) > 0: // retarget a node fault
			i := r.IntN(len(evs))
			if evs[i].Node != "" {
				evs[i].Node = crashable[r.IntN(len(crashable))]
			}
		case op == 4 && len(evs) > 0: // crash <-> crash-send
			i := r.IntN(len(evs))
			switch evs[i].Kind {
			case "crash":
				evs[i].Kind, evs[i].For = "crash-send", faults.Duration(max(time.Millisecond, span/20))
			case "crash-send":
				evs[i].Kind, evs[i].For = "crash", 0
			}
		case op == 5 && len(corpus) > 1: // splice in another run's faults (same nodes only)
			o := corpus[r.IntN(len(corpus))]
			if slices.Equal(o.names, e.names) && len(o.plan.Events) > 0 {
				j := r.IntN(len(o.plan.Events))
				evs = append(evs, o.plan.Events[j:min(len(o.plan.Events), j+2)]...)
			}
		default: // a fresh crash and restart
			n := crashable[r.IntN(len(crashable))]
			at := time.Duration(r.Int64Range(0, int64(span)))
			down := time.Duration(r.Int64Range(int64(time.Millisecond), int64(span)/4+int64(time.Millisecond)))
			evs = append(evs, faults.Event{At: faults.Duration(at), Kind: "crash", Node: n},
				faults.Event{At: faults.Duration(at + down), Kind: "restart", Node: n})
		}
	}
	slices.SortStableFunc(evs, func(a, b faults.Event) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
	p := repair(evs)
	if p.Validate(e.names) != nil {
		return faults.Plan{}, false
	}
	return p, true
}

// savePlan writes a failing mutated run's plan (for its repro command) into dir, or a
// temporary directory when dir is "".
func savePlan(dir, scenario string, run int, p faults.Plan) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "simrun-guided-*")
		if err != nil {
			return "", err
		}
		dir = d
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-run%d-faults.json", slug(scenario), run))
	return path, os.WriteFile(path, p.JSON(), 0o644)
}

func nonDefaultOf(sc *Scenario, params map[string]string) []string {
	ps, err := NewParams(sc.Params, params)
	if err != nil {
		return nil
	}
	return ps.NonDefault()
}

func slug(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// Comparison is a guided and a uniform sweep of one scenario over the same budget of
// runs: when each first failed and how many features each had seen after every run.
type Comparison struct {
	Scenario string            `json:"scenario"`
	Params   map[string]string `json:"params"`
	Budget   int               `json:"budget"`
	Guided   *GuidedStats      `json:"guided"`
	Uniform  *GuidedStats      `json:"uniform"`
}

// CompareGuided runs scenario with params for budget runs twice — guided, and uniform
// (seeds 1..budget, the same features tracked) — each stopping at its first failure
// when stop is set.
func CompareGuided(scenario string, params map[string]string, budget int, stop bool, workers int) (*Comparison, error) {
	sc, err := Lookup(scenario)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	if sc.Build == nil || budget < 1 {
		return nil, inputErr("%s: need a single-run scenario and a budget of at least one run", scenario)
	}
	c := &Comparison{Scenario: sc.Name, Params: params, Budget: budget}
	for _, frac := range []float64{guidedMutateFrac, 0} {
		o := SweepOptions{Scenario: sc.Name, Params: params, From: 1, To: uint64(budget), Workers: workers, StopAtFailure: stop}
		ps, err := NewParams(sc.Params, params)
		if err != nil {
			return nil, &InputError{Err: err}
		}
		res := &SweepResult{Scenario: sc.Name, Params: ps.Values(), ByProperty: map[string]*ClassCounts{}, FailureLimit: 1}
		st, err := guidedSweepFrac(sc, o, res, SeedRange{From: 1, To: uint64(budget)}, 1, frac)
		if err != nil {
			return nil, err
		}
		if frac > 0 {
			c.Guided = st
		} else {
			c.Uniform = st
		}
	}
	return c, nil
}
