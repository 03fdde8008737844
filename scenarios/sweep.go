package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/sim"
)

// SweepFormat names the JSON format of sweep results (shard files).
const SweepFormat = "simrun-sweep/1"

// DefaultFailureLimit is how many failing seeds a sweep result lists by default.
const DefaultFailureLimit = 10

// SweepOptions selects a sweep: one scenario, many seeds.
type SweepOptions struct {
	Scenario string
	Params   map[string]string
	// From and To bound the seeds, both included (From <= To).
	From, To uint64
	// Workers run seeds in parallel (0: one per available CPU, runtime.GOMAXPROCS).
	// The result never depends on it.
	Workers int
	// Shard and Shards select the Shard-th (1-based) of Shards contiguous, disjoint,
	// near-equal slices of the range; 0 and 0 select the whole range.
	Shard, Shards int
	// FailureLimit is how many failing seeds (the lowest) the result lists; 0 means
	// DefaultFailureLimit.
	FailureLimit int
	// ArtifactDir is passed to every run (e.g. porcupine visualizations of failures).
	ArtifactDir string
	// StopAtFailure ends the sweep once the lowest failing seed is known (seeds above
	// the lowest failure found so far are not started). The counts then cover only the
	// seeds that ran, which depends on timing: for tests that want the first failure,
	// never for results to be merged or compared.
	StopAtFailure bool
	// Progress, when set, is called after every finished seed with the number of seeds
	// done and failed so far. It is called from the worker goroutines, possibly
	// concurrently: it must be safe for that, and cheap.
	Progress func(done, failed int64)
	// OnRun, when set, is called with every finished run (from the worker goroutines,
	// possibly concurrently: it must be safe for that). The sweep report uses it for
	// the distributions of events, messages and virtual time across seeds.
	OnRun func(seed uint64, rep *Report)
	// Interrupt, when set and true, stops the sweep: no seed starts after it is set,
	// the seeds in progress finish, and the result (Interrupted) covers the seeds that
	// ran — a prefix of the range, since workers take seeds in increasing order.
	Interrupt *atomic.Bool
	// Coverage counts the rules every run covers (SweepResult.Coverage).
	Coverage bool
	// Guided runs a guided sweep (guided.go): as many runs as seeds, half of them
	// mutations of runs that reached something new. Coverage is always on.
	Guided bool
}

// SeedRange is an inclusive range of seeds.
type SeedRange struct {
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
}

// Len returns the number of seeds in the range.
func (r SeedRange) Len() uint64 { return r.To - r.From + 1 }

func (r SeedRange) String() string { return fmt.Sprintf("%d-%d", r.From, r.To) }

// ShardID names the Index-th (1-based) of Count slices.
type ShardID struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

func (s ShardID) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ShardRange returns the seeds of shard i (1-based) of n of r: contiguous slices whose
// sizes differ by at most one, in order (shard 1 holds the lowest seeds). A shard of a
// range shorter than n may be empty (ok is false).
func ShardRange(r SeedRange, i, n int) (s SeedRange, ok bool) {
	total := r.Len() // a full uint64 range wraps to 0: not a concern for real sweeps
	lo := total * uint64(i-1) / uint64(n)
	hi := total * uint64(i) / uint64(n)
	if hi == lo {
		return SeedRange{}, false
	}
	return SeedRange{From: r.From + lo, To: r.From + hi - 1}, true
}

// ClassCounts counts seeds (or verdicts) per verdict class, in severity order.
type ClassCounts struct {
	Safety   int64 `json:"safety"`
	Crash    int64 `json:"crash"`
	Liveness int64 `json:"liveness"`
	Bound    int64 `json:"bound"`
	Unknown  int64 `json:"unknown"`
	// Expected counts violations the scenario declares expected (Setup.Expected).
	Expected int64 `json:"expected,omitempty"`
	OK       int64 `json:"ok"`
	// Checked sums, over the passing runs whose verdict says how many items it checked
	// ("12 checked", "8 completed agents checked, …"), those numbers; Counted is how
	// many runs said. A property with exemptions that checked nothing shows 0 here
	// however many runs passed.
	Checked int64 `json:"checked,omitempty"`
	Counted int64 `json:"counted,omitempty"`
	// Exempt sums, over the same runs, the items they exempted.
	Exempt int64 `json:"exempt,omitempty"`
}

// count adds one verdict.
func (c *ClassCounts) count(v checker.Verdict) {
	*c.slot(v.Class)++
	if v.Class == checker.OK && v.Counted {
		c.Checked += v.Checked
		c.Exempt += v.Exempt
		c.Counted++
	}
}

func (c *ClassCounts) slot(cl checker.Class) *int64 {
	switch cl {
	case checker.Safety:
		return &c.Safety
	case checker.Crash:
		return &c.Crash
	case checker.Liveness:
		return &c.Liveness
	case checker.Bound:
		return &c.Bound
	case checker.Unknown:
		return &c.Unknown
	case checker.Expected:
		return &c.Expected
	case checker.OK:
		return &c.OK
	}
	panic(fmt.Sprintf("scenarios: unknown verdict class %v", cl))
}

// Get returns the count of one class.
func (c ClassCounts) Get(cl checker.Class) int64 { return *c.slot(cl) }

func (c *ClassCounts) add(o ClassCounts) {
	for _, cl := range checker.Classes {
		*c.slot(cl) += o.Get(cl)
	}
	c.Checked += o.Checked
	c.Counted += o.Counted
	c.Exempt += o.Exempt
}

// Total returns the sum over all classes.
func (c ClassCounts) Total() int64 {
	var n int64
	for _, cl := range checker.Classes {
		n += c.Get(cl)
	}
	return n
}

// SweepResult is the outcome of a sweep or of one shard of it. It holds no timing and
// no worker count: the JSON encoding of the same sweep is byte-identical whatever the
// number of workers, and merging the results of every shard gives exactly the result
// of the unsharded sweep.
type SweepResult struct {
	Format   string `json:"format"`
	Scenario string `json:"scenario"`
	// Params holds every parameter value, defaults included (merge compares them).
	Params map[string]string `json:"params"`
	// Seeds is the whole range swept; Shard, when set, says which slice this result
	// covers (see ShardRange).
	Seeds SeedRange `json:"seeds"`
	Shard *ShardID  `json:"shard,omitempty"`
	// Runs is the number of seeds run, Failed how many of them failed.
	Runs   int64 `json:"runs"`
	Failed int64 `json:"failed"`
	// ByClass counts seeds by their worst verdict's class.
	ByClass ClassCounts `json:"by_class"`
	// ByProperty counts, per property, the verdicts of each class (a property skipped
	// on a run cut short by a panic or a bound is not counted for that run).
	ByProperty map[string]*ClassCounts `json:"by_property"`
	// Failures lists the worst verdict of the lowest failing seeds, in seed order, at
	// most FailureLimit of them.
	FailureLimit int               `json:"failure_limit"`
	Failures     []checker.Verdict `json:"failures"`
	// Events and Messages are totals over the runs (events processed, messages sent).
	Events   int64 `json:"events"`
	Messages int64 `json:"messages"`
	// Interrupted says the sweep was stopped (SweepOptions.Interrupt) after Runs seeds:
	// a partial result, which merge refuses.
	Interrupted bool `json:"interrupted,omitempty"`
	// Coverage is the sweep's rule and property coverage (SweepOptions.Coverage).
	Coverage *Coverage `json:"coverage,omitempty"`
	// FailFast says the sweep stopped at its lowest failing seed (StopAtFailure): its
	// counts cover the seeds that ran, which merge refuses.
	FailFast bool `json:"fail_fast,omitempty"`
	// Guided says the sweep was guided; GuidedStats is what it learned (not merged:
	// each shard keeps its own corpus).
	Guided      bool         `json:"guided,omitempty"`
	GuidedStats *GuidedStats `json:"guided_stats,omitempty"`
}

// ParseSweepResult reads a sweep result written by SweepResult.JSON (a shard file):
// one JSON object of that shape and nothing else. What it holds is checked when it is
// merged (MergeSweeps).
func ParseSweepResult(b []byte) (*SweepResult, error) {
	if bytes.HasPrefix(b, []byte("\uFEFF")) {
		return nil, errors.New("the file starts with a UTF-8 byte-order mark; save it as plain UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r SweepResult
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("not a sweep result: %v", err)
	}
	if dec.More() {
		return nil, errors.New("not a sweep result: trailing data")
	}
	if r.Format != SweepFormat {
		return nil, fmt.Errorf("not a sweep result (format %q, want %q)", r.Format, SweepFormat)
	}
	return &r, nil
}

// Passed reports whether every seed passed.
func (r *SweepResult) Passed() bool { return r.Failed == 0 }

// Range returns the seeds this result covers (empty: ok false).
func (r *SweepResult) Range() (SeedRange, bool) {
	if r.Shard == nil {
		return r.Seeds, true
	}
	return ShardRange(r.Seeds, r.Shard.Index, r.Shard.Count)
}

// JSON returns the result as indented JSON with a final newline (deterministic: the
// only map, ByProperty, is encoded in key order).
func (r *SweepResult) JSON() []byte {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		panic(err) // plain data
	}
	return append(b, '\n')
}

// tally aggregates the runs of one worker. Its seeds arrive in increasing order (the
// workers share one increasing counter), so the lowest failures are the first ones.
type tally struct {
	runs, failed     int64
	byClass          ClassCounts
	byProp           map[string]*ClassCounts
	failures         []checker.Verdict
	events, messages int64
	// err is the error of the lowest seed that could not run.
	err     error
	errSeed uint64
	rules   ruleTally
}

func (t *tally) add(rep *Report, limit int) {
	t.runs++
	t.events += rep.Result.Events
	t.messages += rep.Result.Messages.Sent
	*t.byClass.slot(rep.Verdict.Class)++
	for _, v := range rep.Verdicts {
		c := t.byProp[v.Property]
		if c == nil {
			c = &ClassCounts{}
			t.byProp[v.Property] = c
		}
		c.count(v)
	}
	t.rules.add(rep.Result.Coverage)
	if rep.Failed() {
		t.failed++
		if len(t.failures) < limit {
			t.failures = append(t.failures, rep.Verdict)
		}
	}
}

// Sweep runs a scenario on a range of seeds in parallel and aggregates the verdicts.
// Runs share no mutable state: the kernel is single-threaded per run, and each run
// builds its own nodes, network and streams from its seed. Bad options and scenario
// parameters are an InputError. A run that cannot even start (its Build fails) or that
// panics outside protocol code makes the sweep fail with the lowest such seed.
func Sweep(o SweepOptions) (*SweepResult, error) {
	sc, err := Lookup(o.Scenario)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	if sc.Build == nil {
		return nil, inputErr("%s is an experiment: it cannot be swept", sc.Name)
	}
	if o.From > o.To {
		return nil, inputErr("seed range %d-%d is empty (want FROM <= TO)", o.From, o.To)
	}
	if (SeedRange{From: o.From, To: o.To}).Len() == 0 {
		return nil, inputErr("seed range %d-%d is too large", o.From, o.To)
	}
	if o.Workers < 0 {
		return nil, inputErr("workers %d: want at least 1", o.Workers)
	}
	if err := checkShard(o.Shard, o.Shards); err != nil {
		return nil, err
	}
	limit := o.FailureLimit
	if limit == 0 {
		limit = DefaultFailureLimit
	}
	if limit < 0 {
		return nil, inputErr("failure limit %d: want at least 1", limit)
	}
	ps, err := NewParams(sc.Params, o.Params)
	if err != nil {
		return nil, &InputError{Err: fmt.Errorf("%s: %w", sc.Name, err)}
	}
	whole := SeedRange{From: o.From, To: o.To}
	res := &SweepResult{
		Format: SweepFormat, Scenario: sc.Name, Params: ps.Values(), Seeds: whole,
		ByProperty: map[string]*ClassCounts{}, FailureLimit: limit, Failures: []checker.Verdict{},
		FailFast: o.StopAtFailure,
	}
	run, nonEmpty := whole, true
	if o.Shards > 0 {
		res.Shard = &ShardID{Index: o.Shard, Count: o.Shards}
		run, nonEmpty = ShardRange(whole, o.Shard, o.Shards)
	}
	if !nonEmpty {
		return res, nil
	}
	// Parameter values are checked once, on the first seed, before any worker starts.
	if _, _, err := Prepare(sc, Options{Seed: run.From, Params: o.Params}); err != nil {
		return nil, err
	}

	if o.Guided {
		st, err := guidedSweep(sc, o, res, run, limit)
		if err != nil {
			return nil, err
		}
		res.Guided, res.GuidedStats = true, st
		res.Interrupted = o.Interrupt != nil && o.Interrupt.Load() && uint64(res.Runs) < run.Len()
		return res, nil
	}
	workers := o.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	count := run.Len()
	workers = int(min(uint64(workers), count))
	var next atomic.Uint64 // index of the next seed to start
	var stopAbove atomic.Uint64
	stopAbove.Store(run.To)
	var done, failed atomic.Int64
	tallies := make([]*tally, workers)
	var wg sync.WaitGroup
	for w := range workers {
		t := &tally{byProp: map[string]*ClassCounts{}}
		tallies[w] = t
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= count {
					return
				}
				seed := run.From + i
				if seed > stopAbove.Load() || (o.Interrupt != nil && o.Interrupt.Load()) {
					return
				}
				rep, err := runSeed(sc, seed, o.Params, o.ArtifactDir, o.Coverage)
				if err != nil {
					if t.err == nil {
						t.err, t.errSeed = err, seed
					}
					lowerTo(&stopAbove, seed) // no point going on past a broken seed
					continue
				}
				t.add(rep, limit)
				if o.OnRun != nil {
					o.OnRun(seed, rep)
				}
				if rep.Failed() {
					failed.Add(1)
					if o.StopAtFailure {
						lowerTo(&stopAbove, seed)
					}
				}
				n := done.Add(1)
				if o.Progress != nil {
					o.Progress(n, failed.Load())
				}
			}
		})
	}
	wg.Wait()

	var firstErr error
	var errSeed uint64
	for _, t := range tallies {
		if t.err != nil && (firstErr == nil || t.errSeed < errSeed) {
			firstErr, errSeed = t.err, t.errSeed
		}
	}
	if firstErr != nil {
		return nil, fmt.Errorf("%s seed %d: %w", sc.Name, errSeed, firstErr)
	}
	var rules ruleTally
	for _, t := range tallies {
		res.absorb(t.runs, t.failed, t.byClass, t.byProp, t.failures, t.events, t.messages)
		rules.merge(&t.rules)
	}
	if o.Coverage {
		p := ProtocolOf(sc.Name)
		res.Coverage = &Coverage{Protocol: p, Unit: "runs", Total: rules.total, Rules: rules.rules(p),
			Properties: propertyCoverage(res.ByProperty)}
	}
	res.trimFailures()
	res.Interrupted = o.Interrupt != nil && o.Interrupt.Load() && uint64(res.Runs) < count
	return res, nil
}

func (r *SweepResult) absorb(runs, failed int64, byClass ClassCounts, byProp map[string]*ClassCounts, failures []checker.Verdict, events, messages int64) {
	r.Runs += runs
	r.Failed += failed
	r.ByClass.add(byClass)
	for p, c := range byProp {
		d := r.ByProperty[p]
		if d == nil {
			d = &ClassCounts{}
			r.ByProperty[p] = d
		}
		d.add(*c)
	}
	r.Failures = append(r.Failures, failures...)
	r.Events += events
	r.Messages += messages
}

// trimFailures keeps the FailureLimit lowest failing seeds, in order.
func (r *SweepResult) trimFailures() {
	slices.SortStableFunc(r.Failures, func(a, b checker.Verdict) int {
		switch {
		case a.Seed < b.Seed:
			return -1
		case a.Seed > b.Seed:
			return 1
		}
		return 0
	})
	if len(r.Failures) > r.FailureLimit {
		r.Failures = r.Failures[:r.FailureLimit]
	}
}

func lowerTo(v *atomic.Uint64, x uint64) {
	for {
		cur := v.Load()
		if x >= cur || v.CompareAndSwap(cur, x) {
			return
		}
	}
}

func checkShard(i, n int) error {
	switch {
	case i == 0 && n == 0:
		return nil
	case n < 1:
		return inputErr("shard %d/%d: the count must be at least 1", i, n)
	case i < 1 || i > n:
		return inputErr("shard %d/%d: the index must be between 1 and %d", i, n, n)
	}
	return nil
}

// runSeed performs one run; a panic outside protocol code (a scenario or checker
// framework bug) becomes an error instead of killing every worker.
func runSeed(sc *Scenario, seed uint64, params map[string]string, artifacts string, coverage bool) (rep *Report, err error) {
	defer func() {
		if x := recover(); x != nil {
			rep, err = nil, fmt.Errorf("internal panic: %v", x)
		}
	}()
	return Run(sc, Options{Seed: seed, Params: params, ArtifactDir: artifacts, Coverage: coverage})
}

// MergeSweeps combines the results of every shard of one sweep into the result of the
// unsharded sweep. The parts must share format, scenario, parameters, seed range,
// shard count and failure limit, and hold each shard exactly once; anything else is an
// InputError naming the part (by its index in parts, or by names[i] when given).
func MergeSweeps(parts []*SweepResult, names []string) (*SweepResult, error) {
	name := func(i int) string {
		if i < len(names) {
			return names[i]
		}
		return fmt.Sprintf("part %d", i+1)
	}
	if len(parts) == 0 {
		return nil, inputErr("merge: no results to merge")
	}
	first := parts[0]
	seen := map[int]int{}
	for i, p := range parts {
		if p.Format != SweepFormat {
			return nil, inputErr("merge: %s: format %q, want %q", name(i), p.Format, SweepFormat)
		}
		if p.Interrupted {
			return nil, inputErr("merge: %s: an interrupted sweep (%d seeds ran): run its shard again", name(i), p.Runs)
		}
		if p.FailFast {
			return nil, inputErr("merge: %s: a --fail-fast sweep (its counts stop at its first failure): run its shard again without it", name(i))
		}
		if p.Shard == nil {
			if len(parts) == 1 {
				break
			}
			return nil, inputErr("merge: %s: not a shard (an unsharded sweep result cannot be merged with others)", name(i))
		}
		switch {
		case p.Scenario != first.Scenario:
			return nil, inputErr("merge: %s: scenario %q, but %s has %q", name(i), p.Scenario, name(0), first.Scenario)
		case !mapsEqual(p.Params, first.Params):
			return nil, inputErr("merge: %s: parameters %s differ from %s's %s", name(i), paramString(p.Params), name(0), paramString(first.Params))
		case p.Seeds != first.Seeds:
			return nil, inputErr("merge: %s: seeds %v, but %s has %v", name(i), p.Seeds, name(0), first.Seeds)
		case first.Shard == nil || p.Shard.Count != first.Shard.Count:
			return nil, inputErr("merge: %s: shard %v does not match %s's shard count", name(i), p.Shard, name(0))
		case p.Shard.Index < 1 || p.Shard.Index > p.Shard.Count:
			return nil, inputErr("merge: %s: invalid shard %v", name(i), p.Shard)
		case p.Guided != first.Guided:
			return nil, inputErr("merge: %s is a guided sweep and %s is not (or the other way round)", name(i), name(0))
		case p.Seeds.From > p.Seeds.To:
			return nil, inputErr("merge: %s: seeds %v: the range ends before it starts (an edited file)", name(i), p.Seeds)
		case p.Seeds.To-p.Seeds.From == math.MaxUint64:
			return nil, inputErr("merge: %s: seeds %v: every 64-bit seed, more than a sweep can run", name(i), p.Seeds)
		case p.FailureLimit < 1:
			return nil, inputErr("merge: %s: failure limit %d: a sweep lists at least 1 failure (an edited file)", name(i), p.FailureLimit)
		case p.FailureLimit != first.FailureLimit:
			return nil, inputErr("merge: %s: failure limit %d, but %s has %d", name(i), p.FailureLimit, name(0), first.FailureLimit)
		}
		if err := p.checkCounts(); err != nil {
			return nil, inputErr("merge: %s: %v (an edited file)", name(i), err)
		}
		if j, dup := seen[p.Shard.Index]; dup {
			return nil, inputErr("merge: %s and %s are both shard %v", name(j), name(i), p.Shard)
		}
		seen[p.Shard.Index] = i
		var want uint64
		if r, ok := p.Range(); ok {
			want = r.Len()
		}
		if p.Runs != int64(want) {
			return nil, inputErr("merge: %s: %d runs, but shard %v of %v holds %d seeds (an incomplete or edited file)", name(i), p.Runs, p.Shard, p.Seeds, want)
		}
		if p.ByClass.Total() != p.Runs || p.Failed != p.Runs-p.ByClass.OK-p.ByClass.Expected || p.Failed < 0 {
			return nil, inputErr("merge: %s: verdict counts do not add up to its %d runs (an edited file)", name(i), p.Runs)
		}
		if err := p.checkFailures(); err != nil {
			return nil, inputErr("merge: %s: %v (an edited file)", name(i), err)
		}
	}
	if err := sameProperties(parts, name); err != nil {
		return nil, err
	}
	if first.Shard == nil {
		out := *first
		return &out, nil
	}
	var missing []string
	for k := 1; k <= first.Shard.Count; k++ {
		if _, ok := seen[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, first.Shard.Count))
		}
	}
	if len(missing) > 0 {
		return nil, inputErr("merge: missing shard %s of %s %v", strings.Join(missing, ", "), first.Scenario, first.Seeds)
	}
	res := &SweepResult{
		Format: SweepFormat, Scenario: first.Scenario, Params: first.Params, Seeds: first.Seeds,
		ByProperty: map[string]*ClassCounts{}, FailureLimit: first.FailureLimit, Failures: []checker.Verdict{},
		Guided: first.Guided,
	}
	for _, p := range parts {
		byProp := p.ByProperty
		if byProp == nil {
			byProp = map[string]*ClassCounts{}
		}
		for k, c := range byProp {
			if c == nil {
				byProp[k] = &ClassCounts{}
			}
		}
		res.absorb(p.Runs, p.Failed, p.ByClass, byProp, p.Failures, p.Events, p.Messages)
	}
	cov, err := mergeCoverage(parts, name)
	if err != nil {
		return nil, err
	}
	if cov != nil {
		cov.Properties = propertyCoverage(res.ByProperty)
		res.Coverage = cov
	}
	res.trimFailures()
	return res, nil
}

// checkCounts reports a negative count.
func (r *SweepResult) checkCounts() error {
	neg := func(what string, c ClassCounts) error {
		for _, n := range []int64{c.Safety, c.Crash, c.Liveness, c.Bound, c.Unknown, c.OK, c.Checked, c.Counted, c.Exempt} {
			if n < 0 {
				return fmt.Errorf("%s: a negative count", what)
			}
		}
		return nil
	}
	if r.Runs < 0 || r.Failed < 0 || r.Events < 0 || r.Messages < 0 {
		return errors.New("a negative count of runs, failures, events or messages")
	}
	if err := neg("by_class", r.ByClass); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(r.ByProperty)) {
		if c := r.ByProperty[k]; c != nil {
			if err := neg(fmt.Sprintf("property %q", k), *c); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkFailures reports a listed failure that the result cannot hold: a seed outside
// its range or listed twice, a passing verdict, more failures than the limit or than
// failed seeds.
func (r *SweepResult) checkFailures() error {
	rng, _ := r.Range()
	if n := int64(len(r.Failures)); n > int64(r.FailureLimit) || n > r.Failed {
		return fmt.Errorf("lists %d failures, but its failure limit is %d and %d seeds failed", n, r.FailureLimit, r.Failed)
	}
	seen := map[uint64]bool{}
	for _, f := range r.Failures {
		switch {
		case f.Seed < rng.From || f.Seed > rng.To:
			return fmt.Errorf("a failure of seed %d, outside its seeds %v", f.Seed, rng)
		case seen[f.Seed]:
			return fmt.Errorf("seed %d is listed as failing twice", f.Seed)
		case !f.Failed():
			return fmt.Errorf("seed %d is listed as failing with verdict %s", f.Seed, f.Class)
		}
		seen[f.Seed] = true
	}
	return nil
}

// sameProperties reports a property one shard counts and another does not, unless no
// run of that other shard could have checked it (each was cut short or failed).
func sameProperties(parts []*SweepResult, name func(int) string) error {
	all := map[string]int{} // property → a part that counts it
	for i, p := range parts {
		for k := range p.ByProperty {
			if _, ok := all[k]; !ok {
				all[k] = i
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(all)) {
		if k == "run-limit" || k == "no-panic" {
			continue // the engine's own verdicts: only shards with a run cut short have them
		}
		for i, p := range parts {
			if _, ok := p.ByProperty[k]; ok {
				continue
			}
			if c := p.ByClass; c.OK+c.Liveness+c.Unknown == 0 {
				continue // every run cut short or failed: it may have checked nothing
			}
			return inputErr("merge: %s counts property %q, which %s does not (shards of one sweep check the same properties: an edited file, or another simrun)", name(all[k]), k, name(i))
		}
	}
	return nil
}

// mergeCoverage sums the rule coverage of every shard (all or none must carry it).
func mergeCoverage(parts []*SweepResult, name func(int) string) (*Coverage, error) {
	covs := make([]*Coverage, len(parts))
	for i, p := range parts {
		covs[i] = p.Coverage
	}
	return MergeRuleCoverage(covs, name)
}

// MergeRuleCoverage sums the rule coverage of parts (shards of a sweep, members of a
// swarm check; all or none must carry it; name names part i in errors). Property
// coverage is not merged.
func MergeRuleCoverage(parts []*Coverage, name func(int) string) (*Coverage, error) {
	if parts[0] == nil {
		for i, c := range parts {
			if c != nil {
				return nil, inputErr("merge: %s has coverage and %s has not (run every part with --coverage, or none)", name(i), name(0))
			}
		}
		return nil, nil
	}
	index := map[[2]string]int{}
	for i, r := range sim.AllRules() {
		index[[2]string{r.Protocol, r.Tag}] = i
	}
	var t ruleTally
	n := sim.NumRules()
	t.runs, t.fired = make([]int64, n), make([]int64, n)
	first := parts[0]
	for i, c := range parts {
		if c == nil {
			return nil, inputErr("merge: %s has coverage and %s has not (run every part with --coverage, or none)", name(0), name(i))
		}
		if c.Protocol != first.Protocol || c.Unit != first.Unit || c.Total < 0 {
			return nil, inputErr("merge: %s: coverage of %q in %s, but %s has %q in %s", name(i), c.Protocol, c.Unit, name(0), first.Protocol, first.Unit)
		}
		t.total += c.Total
		for _, r := range c.Rules {
			j, ok := index[[2]string{r.Protocol, r.Tag}]
			if !ok {
				return nil, inputErr("merge: %s: coverage names rule %s %q, which this simrun does not declare", name(i), r.Protocol, r.Tag)
			}
			if r.Reached < 0 || r.Fired < r.Reached || r.Reached > c.Total {
				return nil, inputErr("merge: %s: rule %q: impossible counts (reached %d, fired %d, of %d)", name(i), r.Tag, r.Reached, r.Fired, c.Total)
			}
			t.runs[j] += r.Reached
			t.fired[j] += r.Fired
		}
	}
	return &Coverage{Protocol: first.Protocol, Unit: first.Unit, Total: t.total, Rules: t.rules(first.Protocol)}, nil
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func paramString(p map[string]string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + p[k]
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// WriteSummary prints the result as text: the seeds, pass/fail counts per verdict
// class, per-property counts, and the first failing seeds with the command that
// reproduces each. It contains nothing that depends on timing or worker count.
func (r *SweepResult) WriteSummary(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "sweep     %s seeds %v", r.Scenario, r.Seeds)
	if r.Shard != nil {
		if s, ok := r.Range(); ok {
			fmt.Fprintf(&b, " shard %v (seeds %v)", r.Shard, s)
		} else {
			fmt.Fprintf(&b, " shard %v (no seeds)", r.Shard)
		}
	}
	fmt.Fprintln(&b)
	if nd := nonDefaultParams(r); nd != "" {
		fmt.Fprintf(&b, "params    %s\n", nd)
	}
	if r.ByClass.Expected > 0 {
		fmt.Fprintf(&b, "runs      %d seeds: %d passed, %d failed, %d with only expected violations (the scenario breaks an assumption; see the property details)\n",
			r.Runs, r.Runs-r.Failed-r.ByClass.Expected, r.Failed, r.ByClass.Expected)
	} else {
		fmt.Fprintf(&b, "runs      %d seeds: %d passed, %d failed\n", r.Runs, r.Runs-r.Failed, r.Failed)
	}
	if r.Interrupted {
		fmt.Fprintf(&b, "interrupted: only the first %d seeds of the range ran (a partial result)\n", r.Runs)
	}
	if r.FailFast && r.Failed > 0 && len(r.Failures) > 0 && r.GuidedStats == nil {
		fmt.Fprintf(&b, "fail-fast: stopped at the lowest failing seed, %d (seeds above it did not start)\n", r.Failures[0].Seed)
	}
	fmt.Fprintf(&b, "totals    %d events, %d messages\n", r.Events, r.Messages)
	if g := r.GuidedStats; g != nil {
		first := "no failure"
		if g.FirstFailure > 0 {
			first = fmt.Sprintf("first failure at run %d", g.FirstFailure)
		}
		feats := 0
		if len(g.Features) > 0 {
			feats = g.Features[len(g.Features)-1]
		}
		fmt.Fprintf(&b, "guided    %d of %d runs mutated from a corpus of %d runs that reached something new; %d features; %s\n",
			g.Mutated, r.Runs, g.Corpus, feats, first)
	}
	fmt.Fprintln(&b, "seeds by worst verdict")
	for _, cl := range checker.Classes {
		if n := r.ByClass.Get(cl); n > 0 || cl == checker.OK {
			fmt.Fprintf(&b, "  %-9s %d\n", cl, n)
		}
	}
	if len(r.ByProperty) > 0 {
		props := make([]string, 0, len(r.ByProperty))
		width := len("property")
		for p := range r.ByProperty {
			props = append(props, p)
			width = max(width, len(p))
		}
		slices.Sort(props)
		// The expected column appears only in sweeps that have expected violations.
		classes := slices.DeleteFunc(slices.Clone(checker.Classes), func(cl checker.Class) bool {
			return cl == checker.Expected && r.ByClass.Expected == 0
		})
		fmt.Fprintln(&b, "verdicts per property (checked: items the passing runs checked, summed, where the property counts them)")
		fmt.Fprintf(&b, "  %-*s", width, "property")
		for _, cl := range classes {
			fmt.Fprintf(&b, " %8s", cl)
		}
		fmt.Fprintf(&b, " %9s\n", "checked")
		for _, p := range props {
			c := r.ByProperty[p]
			fmt.Fprintf(&b, "  %-*s", width, p)
			for _, cl := range classes {
				fmt.Fprintf(&b, " %8d", c.Get(cl))
			}
			if c.Counted > 0 {
				fmt.Fprintf(&b, " %9d", c.Checked)
			} else {
				fmt.Fprintf(&b, " %9s", "-")
			}
			fmt.Fprintln(&b)
		}
	}
	if len(r.Failures) > 0 {
		more := ""
		if r.Failed > int64(len(r.Failures)) {
			more = fmt.Sprintf(" (first %d of %d)", len(r.Failures), r.Failed)
		}
		fmt.Fprintf(&b, "failing seeds%s\n", more)
		for _, v := range r.Failures {
			fmt.Fprintf(&b, "  seed %d: %s\n    reproduce: %s\n", v.Seed, oneLineDetail(v.String()), v.Repro)
			if v.Artifact != "" {
				fmt.Fprintf(&b, "    artifact:  %s\n", v.Artifact)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func oneLineDetail(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ")
	if len(s) > 300 {
		s = s[:297] + "..."
	}
	return s
}

// nonDefaultParams lists the parameters that differ from the scenario's defaults.
func nonDefaultParams(r *SweepResult) string {
	sc, err := Lookup(r.Scenario)
	if err != nil {
		return paramString(r.Params)
	}
	var parts []string
	for _, p := range sc.Params {
		if v, ok := r.Params[p.Name]; ok && v != p.Default {
			parts = append(parts, p.Name+"="+v)
		}
	}
	return strings.Join(parts, " ")
}
