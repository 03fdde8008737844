package scenarios

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
)

// Shrinking a failing run: find a smaller run — fewer fault events, a smaller workload,
// earlier faults, shorter delays — of the same scenario and seed that still violates
// the same property. Every candidate is a real run (the seed's other draws — latency,
// topology, workload choices — come from streams of their own, so removing a fault
// does not reshuffle the rest). The phases repeat until none changes anything:
//
//  1. fault events, by delta debugging (Zeller's ddmin) over the plan's events; a
//     candidate plan is repaired before it runs (a restart of a node that is up, a heal
//     with nothing to heal, a restore of a link that is not cut are dropped), so
//     removing a crash removes its restart;
//  2. the workload: every integer parameter named like a workload size (WorkloadParams)
//     is lowered (to 1, then by halves) while the run still fails;
//  3. timing: each fault moves earlier (to the previous fault's time, then by halves of
//     the gap), and a spike's extra latency, a spike's, burst's or crash-send's window
//     shrink by halves.
//
// The result is a fixpoint: shrinking it again changes nothing.

// WorkloadParams are the parameter names Shrink lowers (sizes of the work a run does;
// never bounds, periods or fault intensities, which would change what is checked).
var WorkloadParams = []string{"clients", "agents", "ops", "requests", "writes", "txs", "tasks", "jobs",
	"instances", "meals", "songs", "uses", "devices", "calls", "items"}

// ShrinkOptions says what to shrink.
type ShrinkOptions struct {
	Scenario string
	Seed     uint64
	Params   map[string]string
	// Faults is the failing run's fault plan (its trace header's, or Report.Faults).
	Faults faults.Plan
	// Property is the property to keep violated ("": the failing run's worst verdict's).
	Property string
	// MaxRuns bounds the candidate runs (0: DefaultShrinkRuns). Reaching it returns the
	// smallest failing run found so far (Result.Complete false).
	MaxRuns int
	// Workers run candidates in parallel (0: GOMAXPROCS). The result does not depend
	// on it: candidates are tried in a fixed order and the first that fails is taken.
	Workers int
	// Progress, when set, is told after each accepted step.
	Progress func(runs int, faults int)
}

// DefaultShrinkRuns bounds a shrink's candidate runs.
const DefaultShrinkRuns = 3000

// ShrinkResult is the smallest failing run found.
type ShrinkResult struct {
	Scenario string
	Seed     uint64
	// Property is the property the shrunk run still violates; Verdict its verdict.
	Property string
	Verdict  checker.Verdict
	// Params are the shrunk run's parameter overrides (the original ones, with lowered
	// workload sizes); Plan its fault plan.
	Params map[string]string
	Plan   faults.Plan
	// FaultsBefore/After count fault events; EventsBefore/After simulation events.
	FaultsBefore, FaultsAfter int
	EventsBefore, EventsAfter int64
	// Runs is the number of candidate runs made; Complete says a fixpoint was reached
	// (false: MaxRuns ran out first).
	Runs     int
	Complete bool
	// Report is the shrunk run.
	Report *Report
}

// Summary is the one line "N faults, M events → n faults, m events".
func (r *ShrinkResult) Summary() string {
	return fmt.Sprintf("%d faults, %d events → %d faults, %d events", r.FaultsBefore, r.EventsBefore, r.FaultsAfter, r.EventsAfter)
}

// Shrink reduces a failing run (see the file comment).
func Shrink(o ShrinkOptions) (*ShrinkResult, error) {
	sc, err := Lookup(o.Scenario)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	if sc.Build == nil {
		return nil, inputErr("%s is an experiment: it has no single run to shrink", sc.Name)
	}
	s := &shrinker{sc: sc, o: o, max: o.MaxRuns, workers: o.Workers}
	if s.max <= 0 {
		s.max = DefaultShrinkRuns
	}
	if s.workers <= 0 {
		s.workers = runtime.GOMAXPROCS(0)
	}
	plan := o.Faults
	base, err := Run(sc, Options{Seed: o.Seed, Params: o.Params, Faults: &plan})
	if err != nil {
		return nil, err
	}
	prop := o.Property
	if prop == "" {
		if !base.Failed() {
			return nil, inputErr("%s seed %d passes: there is no failure to shrink", sc.Name, o.Seed)
		}
		prop = base.Verdict.Property
	} else if !violates(base, prop) {
		return nil, inputErr("%s seed %d does not violate %q: there is nothing to shrink", sc.Name, o.Seed, prop)
	}
	s.prop = prop
	cur := cand{plan: clonePlan(plan), params: cloneParams(o.Params), rep: base}
	res := &ShrinkResult{Scenario: sc.Name, Seed: o.Seed, Property: prop, FaultsBefore: plan.Len(), EventsBefore: base.Result.Events}
	for {
		changed := false
		for _, phase := range []func(cand) (cand, bool){s.events, s.workload, s.timing} {
			next, ok := phase(cur)
			if ok {
				cur, changed = next, true
				if o.Progress != nil {
					o.Progress(s.runs, cur.plan.Len())
				}
			}
			if s.runs >= s.max {
				break
			}
		}
		if !changed || s.runs >= s.max {
			res.Complete = !changed
			break
		}
	}
	res.Params, res.Plan, res.Report, res.Runs = cur.params, cur.plan, cur.rep, s.runs
	res.FaultsAfter, res.EventsAfter = cur.plan.Len(), cur.rep.Result.Events
	for _, v := range cur.rep.Verdicts {
		if v.Property == prop && v.Failed() {
			res.Verdict = v
			break
		}
	}
	return res, nil
}

// cand is a candidate run: its plan and parameters (and, once run, its report).
type cand struct {
	plan   faults.Plan
	params map[string]string
	rep    *Report
}

type shrinker struct {
	sc      *Scenario
	o       ShrinkOptions
	prop    string
	max     int
	workers int
	runs    int
}

func violates(rep *Report, prop string) bool {
	for _, v := range rep.Verdicts {
		if v.Property == prop && v.Failed() {
			return true
		}
	}
	return false
}

// first runs the candidates (in parallel) and returns the first, in order, that still
// violates the property. Candidates that cannot run (a plan that does not validate, a
// parameter the scenario refuses) do not fail.
func (s *shrinker) first(cs []cand) (cand, bool) {
	for start := 0; start < len(cs) && s.runs < s.max; start += s.workers {
		batch := cs[start:min(len(cs), start+s.workers, start+s.max-s.runs)]
		ok := make([]bool, len(batch))
		var wg sync.WaitGroup
		for i := range batch {
			wg.Go(func() {
				c := &batch[i]
				rep, err := runSeedWith(s.sc, s.o.Seed, c.params, &c.plan)
				if err == nil && violates(rep, s.prop) {
					c.rep, ok[i] = rep, true
				}
			})
		}
		wg.Wait()
		s.runs += len(batch)
		if i := slices.Index(ok, true); i >= 0 {
			return batch[i], true
		}
	}
	return cand{}, false
}

// runSeedWith runs one candidate, turning a panic outside protocol code into an error.
func runSeedWith(sc *Scenario, seed uint64, params map[string]string, plan *faults.Plan) (rep *Report, err error) {
	defer func() {
		if x := recover(); x != nil {
			rep, err = nil, fmt.Errorf("internal panic: %v", x)
		}
	}()
	return Run(sc, Options{Seed: seed, Params: params, Faults: plan})
}

// events is ddmin over the plan's events.
func (s *shrinker) events(cur cand) (cand, bool) {
	evs := cur.plan.Events
	changed := false
	n := 2
	for len(evs) > 0 && s.runs < s.max {
		chunk := (len(evs) + n - 1) / n
		var cs []cand
		// Complements first (remove one chunk), then the chunks alone.
		for i := 0; i < len(evs); i += chunk {
			rest := append(slices.Clone(evs[:i]), evs[min(len(evs), i+chunk):]...)
			cs = append(cs, cand{plan: repair(rest), params: cur.params})
		}
		if n > 2 || len(evs) == 1 {
			for i := 0; i < len(evs); i += chunk {
				cs = append(cs, cand{plan: repair(slices.Clone(evs[i:min(len(evs), i+chunk)])), params: cur.params})
			}
		}
		cs = dedupe(cs, len(evs))
		if c, ok := s.first(cs); ok {
			cur, evs, changed = c, c.plan.Events, true
			n = max(n-1, 2)
			continue
		}
		if chunk == 1 {
			break
		}
		n = min(2*n, len(evs))
	}
	return cur, changed
}

// dedupe drops candidates that are no smaller than the current plan (repair may give
// back as many events) and repeated plans.
func dedupe(cs []cand, size int) []cand {
	var out []cand
	seen := map[string]bool{}
	for _, c := range cs {
		k := string(c.plan.JSON())
		if c.plan.Len() >= size || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, c)
	}
	return out
}

// repair drops the events a subset of a valid plan made invalid: a restart of a node
// that is up, a heal with no partition or cut, a restore of a link that is not cut.
func repair(evs []faults.Event) faults.Plan {
	down := map[string]bool{}
	cuts := map[[2]string]bool{}
	split := false
	out := make([]faults.Event, 0, len(evs))
	for _, e := range evs {
		switch e.Kind {
		case "crash", "crash-send":
			if down[e.Node] {
				continue
			}
			down[e.Node] = true
		case "restart":
			if !down[e.Node] {
				continue
			}
			delete(down, e.Node)
		case "partition":
			split = true
		case "cut":
			cuts[[2]string{e.From, e.To}] = true
		case "restore":
			if !cuts[[2]string{e.From, e.To}] {
				continue
			}
			delete(cuts, [2]string{e.From, e.To})
		case "heal":
			if !split && len(cuts) == 0 {
				continue
			}
			split = false
			clear(cuts)
		}
		out = append(out, e)
	}
	return faults.Plan{Events: out}
}

// workload lowers each workload-size parameter the scenario has.
func (s *shrinker) workload(cur cand) (cand, bool) {
	changed := false
	for _, d := range s.sc.Params {
		if !slices.Contains(WorkloadParams, d.Name) {
			continue
		}
		v := d.Default
		if o, ok := cur.params[d.Name]; ok {
			v = o
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 1 {
			continue
		}
		for n > 1 && s.runs < s.max {
			var cs []cand
			for _, m := range []int{1, n / 2, n - 1} {
				if m >= 1 && m < n && !slices.ContainsFunc(cs, func(c cand) bool { return c.params[d.Name] == strconv.Itoa(m) }) {
					p := cloneParams(cur.params)
					p[d.Name] = strconv.Itoa(m)
					cs = append(cs, cand{plan: cur.plan, params: p})
				}
			}
			c, ok := s.first(cs)
			if !ok {
				break
			}
			cur, changed = c, true
			n, _ = strconv.Atoi(c.params[d.Name])
		}
	}
	return cur, changed
}

// timing moves faults earlier and shortens delays and windows.
func (s *shrinker) timing(cur cand) (cand, bool) {
	changed := false
	for i := 0; i < cur.plan.Len() && s.runs < s.max; i++ {
		for {
			e := cur.plan.Events[i]
			prev := faults.Duration(0)
			if i > 0 {
				prev = cur.plan.Events[i-1].At
			}
			var cs []cand
			try := func(f func(*faults.Event)) {
				p := clonePlan(cur.plan)
				f(&p.Events[i])
				if p.Validate(s.names(cur)) == nil {
					cs = append(cs, cand{plan: p, params: cur.params})
				}
			}
			if gap := e.At - prev; gap > faults.Duration(1e6) { // more than 1ms earlier to gain
				try(func(x *faults.Event) { x.At = prev })
				try(func(x *faults.Event) { x.At = prev + gap/2 })
			}
			if e.Extra > faults.Duration(1e6) {
				try(func(x *faults.Event) { x.Extra /= 2 })
			}
			if e.For > faults.Duration(2e6) && (e.Kind == "spike" || e.Kind == "burst" || e.Kind == "crash-send") {
				try(func(x *faults.Event) { x.For /= 2 })
			}
			if len(cs) == 0 || s.runs >= s.max {
				break
			}
			c, ok := s.first(cs)
			if !ok {
				break
			}
			cur, changed = c, true
		}
	}
	return cur, changed
}

// names returns the node names of the candidate's run (for plan validation).
func (s *shrinker) names(c cand) []string {
	if c.rep != nil {
		return c.rep.Result.Names()
	}
	return nil
}

func clonePlan(p faults.Plan) faults.Plan {
	return faults.Plan{Events: slices.Clone(p.Events)}
}

func cloneParams(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}
