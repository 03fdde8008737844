package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
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
// sim.Coverage.Features) — and draws some of its next runs by mutating the fault plan
// of a corpus run (shift, drop, duplicate or retarget a fault, turn a crash into a
// crash-send, splice in another corpus run's faults, add a fresh one), replayed on that
// run's seed so its topology and workload stay as they were; the others are fresh
// seeds, as in a uniform sweep. How many: half at first, then by what each kind found
// — the share of mutations follows the new features a mutated run met against those a
// fresh run met, over the last generations (a two-armed bandit by probability matching,
// in the spirit of Mallory's learned fault injection), between a tenth and nine tenths.
// Where fresh seeds meet more (most of this repository's swarms, whose bugs wait for a
// seed's topology and timing), the sweep spends most runs on them; where mutations
// meet more, on those.
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
// holds a run, before the sweep has seen what mutations find; guidedMinFrac and
// guidedMaxFrac bound the learned share (each kind keeps being tried).
const (
	guidedMutateFrac = 0.5
	guidedMinFrac    = 0.1
	guidedMaxFrac    = 0.9
)

// shareArm is what one kind of run (mutated or fresh) found: runs and new features,
// halved every generation so that the share follows the recent ones.
type shareArm struct{ runs, found float64 }

func (a shareArm) yield() float64 { return a.found / max(a.runs, 1) }

// nextShare is the share of mutated runs in the next generation, from the two arms.
func nextShare(mut, fresh shareArm) float64 {
	m, f := mut.yield(), fresh.yield()
	if mut.runs == 0 || m+f == 0 {
		return guidedMutateFrac
	}
	return min(guidedMaxFrac, max(guidedMinFrac, m/(m+f)))
}

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
	// Shares is the share of mutated runs drawn for each generation after the first.
	Shares []float64 `json:"shares,omitempty"`
}

type corpusEntry struct {
	seed  uint64
	plan  faults.Plan
	names []string
}

type guidedRun struct {
	seed    uint64
	plan    *faults.Plan // nil: the scenario draws its own (a fresh run)
	mutated bool
}

// guidedSweep runs a guided sweep over the (shard's) range run of the sweep whole.
func guidedSweep(sc *Scenario, o SweepOptions, res *SweepResult, run SeedRange, limit int) (*GuidedStats, error) {
	return guidedSweepFrac(sc, o, res, run, limit, guidedMutateFrac, true)
}

// guidedSweepFrac is guidedSweep with the share of mutated runs frac, learned from
// there when adapt is set (frac 0: a uniform sweep that tracks the same features, for
// comparisons).
func guidedSweepFrac(sc *Scenario, o SweepOptions, res *SweepResult, run SeedRange, limit int, frac float64, adapt bool) (*GuidedStats, error) {
	workers := o.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	count := run.Len()
	rng := sim.NewRand(sim.StreamSeed(run.From, "guided", int64(run.To)))
	var corpus []corpusEntry
	// horizon is the latest fault time of every plan the scenario drew itself: mutated
	// faults stay within it, so they settle as early as the scenario's own (a fault
	// moved past the scenario's horizon would leave a liveness bound no time).
	var horizon time.Duration
	plans := &planDir{dir: o.ArtifactDir}
	seen := map[uint64]struct{}{}
	rulesSeen := map[int]struct{}{}
	st := &GuidedStats{}
	t := &tally{byProp: map[string]*ClassCounts{}}
	var done, failed int64
	nextFresh := run.From
	var mutArm, freshArm shareArm
	for base := uint64(0); base < count; base += GuidedBatch {
		if adapt && base > 0 {
			frac = nextShare(mutArm, freshArm)
			st.Shares = append(st.Shares, frac)
		}
		mutArm.runs, mutArm.found = mutArm.runs/2, mutArm.found/2
		freshArm.runs, freshArm.found = freshArm.runs/2, freshArm.found/2
		if o.Interrupt != nil && o.Interrupt.Load() {
			break
		}
		n := min(GuidedBatch, count-base)
		batch := make([]guidedRun, n)
		for i := range batch {
			if len(corpus) > 0 && rng.Float64() < frac {
				e := corpus[rng.IntN(len(corpus))]
				if p, ok := mutatePlan(rng, e, corpus, horizon); ok {
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
					if path, err := plans.save(sc.Name, idxRun, *batch[i].plan); err == nil {
						rep.Verdict.Repro = Repro(sc.Name, batch[i].seed, nonDefaultOf(sc, o.Params), path)
					}
				}
			}
			t.add(rep, limit)
			if o.OnRun != nil {
				o.OnRun(batch[i].seed, rep)
			}
			if batch[i].plan == nil && rep.Faults.Len() > 0 {
				horizon = max(horizon, time.Duration(rep.Faults.Events[rep.Faults.Len()-1].At))
			}
			before := len(seen)
			if isNew(rep.Result.Coverage, seen, rulesSeen) {
				corpus = append(corpus, corpusEntry{seed: batch[i].seed, plan: rep.Faults, names: rep.Result.Names()})
			}
			arm := &freshArm
			if batch[i].mutated {
				arm = &mutArm
			}
			arm.runs++
			arm.found += float64(len(seen) - before)
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

// intent is a fault and what ends it: a crash and its restart, a partition and its
// heal, a cut and its restore (or heal); other faults (spikes, skews, bursts, a crash
// the plan never ends) stand alone. Mutations move, drop and copy whole intents, so a
// mutated plan ends its faults as the scenario's own plans do.
type intent []faults.Event

// intents groups a valid plan's events.
func intents(p faults.Plan) []intent {
	var out []intent
	open := map[string]int{} // what is open → its intent's index
	for _, e := range p.Events {
		switch e.Kind {
		case "crash", "crash-send":
			open["node "+e.Node] = len(out)
			out = append(out, intent{e})
		case "restart":
			if i, ok := open["node "+e.Node]; ok {
				out[i] = append(out[i], e)
				delete(open, "node "+e.Node)
				continue
			}
			out = append(out, intent{e})
		case "partition":
			open["split"] = len(out)
			out = append(out, intent{e})
		case "cut":
			open["cut "+e.From+" "+e.To] = len(out)
			out = append(out, intent{e})
		case "restore":
			if i, ok := open["cut "+e.From+" "+e.To]; ok {
				out[i] = append(out[i], e)
				delete(open, "cut "+e.From+" "+e.To)
				continue
			}
			out = append(out, intent{e})
		case "heal":
			// It ends the partition, or else the latest open cut.
			k := "split"
			if _, ok := open[k]; !ok {
				k = ""
				for o := range open {
					if strings.HasPrefix(o, "cut ") && (k == "" || open[o] > open[k]) {
						k = o
					}
				}
			}
			if i, ok := open[k]; ok && k != "" {
				out[i] = append(out[i], e)
				for o := range open {
					if o == "split" || strings.HasPrefix(o, "cut ") {
						delete(open, o)
					}
				}
				continue
			}
			out = append(out, intent{e})
		default:
			out = append(out, intent{e})
		}
	}
	return out
}

// shifted returns the intent moved by d, kept within [0, horizon].
func (in intent) shifted(d, horizon time.Duration) intent {
	out := slices.Clone(in)
	first, last := time.Duration(in[0].At), time.Duration(in[len(in)-1].At)
	d = max(d, -first)
	d = min(d, horizon-last)
	for i := range out {
		out[i].At = faults.Duration(time.Duration(out[i].At) + d)
	}
	return out
}

// mutatePlan draws a mutation of e's plan — one or two operators over its intents —
// keeping every fault within horizon, and repairs and validates it against e's nodes
// (ok false when the result is not a valid plan).
func mutatePlan(r *sim.Rand, e corpusEntry, corpus []corpusEntry, horizon time.Duration) (faults.Plan, bool) {
	if horizon <= 0 {
		return faults.Plan{}, false // no plan seen yet: nothing says when faults may happen
	}
	ins := intents(e.plan)
	span := int64(horizon)
	nodes := e.names
	ops := 1 + r.IntN(2)
	for k := 0; k < ops; k++ {
		switch op := r.IntN(7); {
		case op == 0 && len(ins) > 0: // shift an intent in time
			i := r.IntN(len(ins))
			ins[i] = ins[i].shifted(time.Duration(r.Int64Range(-span/4, span/4)), horizon)
		case op == 1 && len(ins) > 0: // drop an intent
			i := r.IntN(len(ins))
			ins = slices.Delete(ins, i, i+1)
		case op == 2 && len(ins) > 0: // copy an intent to another time
			c := ins[r.IntN(len(ins))]
			ins = append(ins, c.shifted(time.Duration(r.Int64Range(-span/2, span/2)), horizon))
		case op == 3 && len(ins) > 0: // retarget a node's intent
			i := r.IntN(len(ins))
			if ins[i][0].Node != "" {
				n := nodes[r.IntN(len(nodes))]
				c := slices.Clone(ins[i])
				for j := range c {
					c[j].Node = n
				}
				ins[i] = c
			}
		case op == 4 && len(ins) > 0: // crash <-> crash-send
			i := r.IntN(len(ins))
			c := slices.Clone(ins[i])
			switch c[0].Kind {
			case "crash":
				w := time.Duration(span / 20)
				if len(c) > 1 {
					w = min(w, (time.Duration(c[1].At)-time.Duration(c[0].At))/2)
				}
				if w >= time.Millisecond {
					c[0].Kind, c[0].For = "crash-send", faults.Duration(w)
				}
			case "crash-send":
				c[0].Kind, c[0].For = "crash", 0
			}
			ins[i] = c
		case op == 5 && len(corpus) > 1: // splice in another run's intent (same nodes only)
			o := corpus[r.IntN(len(corpus))]
			if os := intents(o.plan); slices.Equal(o.names, e.names) && len(os) > 0 {
				ins = append(ins, os[r.IntN(len(os))])
			}
		default: // a fresh crash and restart
			n := nodes[r.IntN(len(nodes))]
			at := time.Duration(r.Int64Range(0, span*3/4))
			down := time.Duration(r.Int64Range(int64(time.Millisecond), span/4+int64(time.Millisecond)))
			ins = append(ins, intent{{At: faults.Duration(at), Kind: "crash", Node: n}, {At: faults.Duration(min(horizon, at+down)), Kind: "restart", Node: n}})
		}
	}
	var evs []faults.Event
	for _, in := range ins {
		evs = append(evs, in...)
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

// planDir writes the plans of a guided sweep's listed failing mutated runs (for their
// repro commands): into the sweep's artifact directory, or one temporary directory
// made for the sweep when it has none.
type planDir struct{ dir string }

func (d *planDir) save(scenario string, run int, p faults.Plan) (string, error) {
	if d.dir == "" {
		t, err := os.MkdirTemp("", "simrun-guided-*")
		if err != nil {
			return "", err
		}
		d.dir = t
	}
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(d.dir, fmt.Sprintf("%s-run%d-faults.json", slug(scenario), run))
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
		st, err := guidedSweepFrac(sc, o, res, SeedRange{From: 1, To: uint64(budget)}, 1, frac, frac > 0)
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
