package model

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Strategy is a search strategy.
type Strategy uint8

const (
	// BFS explores level by level (shortest counterexamples and witnesses), on one or
	// more workers; counts are identical for any number of workers.
	BFS Strategy = iota
	// DFS explores depth first on one worker, keeping only the current path's states
	// (plus the seen-set): low memory, long counterexamples.
	DFS
	// Random runs seeded random walks (Options.Walks of at most Options.MaxDepth
	// steps); it samples, it never proves.
	Random
)

func (s Strategy) String() string {
	switch s {
	case BFS:
		return "bfs"
	case DFS:
		return "dfs"
	case Random:
		return "random"
	}
	return fmt.Sprintf("strategy(%d)", uint8(s))
}

// MarshalText encodes the strategy by name.
func (s Strategy) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ParseStrategy parses "bfs", "dfs" or "random".
func ParseStrategy(s string) (Strategy, error) {
	switch s {
	case "bfs":
		return BFS, nil
	case "dfs":
		return DFS, nil
	case "random":
		return Random, nil
	}
	return 0, fmt.Errorf("unknown strategy %q (bfs, dfs or random)", s)
}

// Options selects how a system is explored. The zero value is a complete BFS on one
// worker.
type Options struct {
	Strategy Strategy
	// Workers is the number of BFS workers (0 = 1). DFS and Random use one.
	Workers int
	// MaxStates bounds the distinct states stored (0 = unbounded). Reaching it ends the
	// search with outcome BoundReached and the counts so far.
	MaxStates int64
	// MaxDepth bounds the depth, counted in states like TLC's depth (the initial states
	// are depth 1; 0 = unbounded). For Random it is the walk length (default 1000).
	MaxDepth int
	// Seed and Walks configure Random (Walks 0 = 100).
	Seed  uint64
	Walks int
	// Progress, when set, is called about every ProgressEvery (default 1s) from the
	// goroutine that called Check, with the counts so far.
	Progress      func(Stats)
	ProgressEvery time.Duration
	// TableSlots pre-sizes the seen-set (0 = start small and grow).
	TableSlots uint64
	// MaxMemory bounds the process's resident memory in bytes during an exhaustive
	// search (0 = unbounded; Linux only, where it is sampled every 100 ms): passing it
	// ends the search with outcome BoundReached, bound "max-memory", and the counts so
	// far, instead of the runtime killing the process. simrun check sets it to three
	// quarters of the machine's memory unless --max-memory says otherwise.
	MaxMemory int64

	mem *memWatch // the running search's watch on MaxMemory
	// Coverage counts, per declared rule (sim.NewRuleMap), the transitions whose handler
	// call covered it (Result.Coverage), and per property with a Relevant predicate
	// the distinct states where it was relevant (PropertyResult.Relevant).
	Coverage bool
	// Bitstate, when > 0, makes DFS store the seen states as bits of an array of that
	// many bytes (bitstate.go: Holzmann's supertrace) instead of fingerprints: memory
	// is fixed, a violation found is real, but a search that finds none is sampled
	// (some states may be missed; Stats.Bitstate estimates how many). With Seed != 0
	// the hash functions and the order successors are explored in depend on the seed
	// (swarm verification: diversified searches that miss different states).
	Bitstate int64
	// Fair assumes weak fairness when eventually-properties are decided (see
	// liveness.go): only infinite paths on which every fairness class that stays
	// enabled is eventually taken count. Without it every infinite path counts. Either
	// way BFS and DFS check finite and infinite paths, keeping the product graph in
	// memory for it; random walks report only maximal finite walks.
	Fair bool
}

func (o *Options) validate() error {
	switch {
	case o.Strategy > Random:
		return fmt.Errorf("unknown strategy %d", o.Strategy)
	case o.Workers < 0:
		return errors.New("workers must be >= 1")
	case o.Workers > 1 && o.Strategy != BFS:
		return fmt.Errorf("%s runs on one worker (parallel exploration is BFS only)", o.Strategy)
	case o.Workers > 255:
		return errors.New("at most 255 workers")
	case o.MaxStates < 0:
		return errors.New("max-states must be > 0")
	case o.MaxMemory < 0:
		return errors.New("max-memory must be >= 0")
	case o.MaxDepth < 0:
		return errors.New("max-depth must be > 0")
	case o.Walks < 0:
		return errors.New("walks must be > 0")
	case o.Walks > 0 && o.Strategy != Random:
		return errors.New("walks apply to the random strategy only")
	case o.Fair && o.Strategy == Random:
		return errors.New("the fair-cycle check needs a complete search (bfs or dfs)")
	case o.Bitstate < 0:
		return errors.New("bitstate size must be > 0")
	case o.Bitstate > 0 && o.Strategy != DFS:
		return errors.New("a bitstate search is depth-first (--strategy dfs)")
	}
	return nil
}

// Stats are the search statistics, with TLC's definitions.
type Stats struct {
	// Distinct is the number of distinct states found (fingerprints stored).
	Distinct int64 `json:"distinct"`
	// Total is the number of states generated: the initial states plus every successor
	// generated, duplicates and self-loops included.
	Total int64 `json:"total"`
	// Depth is, for BFS, the number of levels explored counting the initial level (the
	// length in states of the longest shortest path); for DFS and Random, the longest
	// path explored, in states.
	Depth int `json:"depth"`
	// Queue is the number of states waiting to be explored (progress only).
	Queue   int64   `json:"queue,omitempty"`
	Seconds float64 `json:"seconds"`
	// StatesPerSec is Distinct / Seconds.
	StatesPerSec float64 `json:"states_per_sec"`
	// Bitstate, for a bitstate search, describes the array and estimates what it
	// missed.
	Bitstate *BitstateStats `json:"bitstate,omitempty"`
	// CPUSeconds is the process's CPU time (user + system) during the search, and
	// StatesPerCPUSec Distinct / CPUSeconds: the machine-independent measure of speed
	// on a shared machine (0 where unavailable).
	CPUSeconds      float64 `json:"cpu_seconds"`
	StatesPerCPUSec float64 `json:"states_per_cpu_sec"`
	// PeakRSS is the process's peak resident set size (0 where unavailable).
	PeakRSS int64 `json:"peak_rss_bytes"`
	// SeenBytes is the size of the seen-set; BytesPerState = SeenBytes / Distinct.
	SeenBytes     int64   `json:"seen_bytes"`
	BytesPerState float64 `json:"seen_bytes_per_state"`
	// Collision is TLC's optimistic estimate of the probability that two distinct
	// states shared a fingerprint, Distinct·(Total−Distinct)/2⁶⁴ (0 for an injective
	// fingerprint).
	Collision float64 `json:"collision_probability"`
}

// BitstateStats describes a bitstate search's array and what it may have missed.
type BitstateStats struct {
	Bytes         int64 `json:"bytes"`
	HashFunctions int   `json:"hash_functions"`
	// Fill is the fraction of bits set at the end.
	Fill float64 `json:"fill"`
	// Missed estimates the new states taken for seen states (bitstate.go), a lower
	// bound of the states missed (those reachable only through them are not counted).
	Missed float64 `json:"missed_estimate"`
}

// Coverage is Distinct/(Distinct+Missed): an upper bound of the share of the reachable
// states the search explored.
func (b *BitstateStats) Coverage(distinct int64) float64 {
	return float64(distinct) / (float64(distinct) + b.Missed)
}

// Outcome says how a search ended.
type Outcome uint8

const (
	// Complete: every reachable state was explored and no property failed.
	Complete Outcome = iota + 1
	// Violated: a property failed (see Result.Violation).
	Violated
	// BoundReached: a bound (max-states, max-depth, max-memory) cut the search; no property failed
	// in what was explored.
	BoundReached
	// Sampled: random walks ended without a failure (random never proves).
	Sampled
)

func (o Outcome) String() string {
	switch o {
	case Complete:
		return "complete"
	case Violated:
		return "violation"
	case BoundReached:
		return "bound reached"
	case Sampled:
		return "sampled"
	}
	return "unknown"
}

// MarshalText encodes the outcome by name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Status is what the search established about one property.
type Status uint8

const (
	// Holds: always/eventually held everywhere in a complete search.
	Holds Status = iota + 1
	// Failed: always or eventually failed (a counterexample exists), or a sometimes
	// property has no witness in a complete search.
	Failed
	// Witnessed: a sometimes property holds in a reachable state (a witness exists).
	Witnessed
	// Unknown: nothing failed in the part explored, but the search was not complete.
	Unknown
)

func (s Status) String() string {
	switch s {
	case Holds:
		return "holds"
	case Failed:
		return "failed"
	case Witnessed:
		return "witnessed"
	case Unknown:
		return "unknown"
	}
	return "?"
}

// MarshalText encodes the status by name.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// PropertyResult is the verdict on one property.
type PropertyResult struct {
	Name   string `json:"name"`
	Kind   Kind   `json:"kind"`
	Status Status `json:"status"`
	// Depth is the length in states of the counterexample or witness (0 if none).
	Depth int `json:"depth,omitempty"`
	// HasTrace says a counterexample or witness path is available (WriteTrace).
	HasTrace bool `json:"-"`
	// Cycle, for an eventually counterexample found by the fair-cycle check, is 1 + the
	// index of the state the path's last step returns to (0: not a lasso). Trace
	// headers carry it ("cycle") so that Replay re-checks the cycle.
	Cycle int `json:"cycle,omitempty"`
	// Why says why an eventually-property stayed unknown after a complete search
	// (Boundary cut paths before it held, say); empty otherwise.
	Why string `json:"why,omitempty"`
	// Relevant counts the distinct states (visits, for random walks) where the
	// property's Relevant predicate held; -1 when coverage was off or the property
	// declares none.
	Relevant int64 `json:"relevant"`
	path     *path
}

// Result is the outcome of a search.
type Result struct {
	Model    string   `json:"model"`
	Strategy Strategy `json:"strategy"`
	Workers  int      `json:"workers"`
	Outcome  Outcome  `json:"outcome"`
	// Bound names the bound that was reached ("max-states", "max-depth"), if any.
	Bound string `json:"bound,omitempty"`
	// Fair says the eventually-properties were checked under weak fairness (otherwise
	// under none: every cycle admissible).
	Fair bool `json:"fair,omitempty"`
	// LivenessChecked says the eventually-properties were decided on the whole
	// product graph (finite and infinite paths); ProductStates is its size (system
	// states × "has held yet" bits). Distinct counts system states only.
	LivenessChecked bool  `json:"liveness_checked,omitempty"`
	ProductStates   int64 `json:"product_states,omitempty"`
	Stats
	Properties []*PropertyResult `json:"properties"`
	// Coverage counts, per declared rule, the transitions (successors generated, walk
	// steps) whose handler call covered it (Options.Coverage; nil otherwise).
	Coverage *sim.Coverage `json:"-"`
	// Violation is the property that failed (nil if none). For always and eventually it
	// has a counterexample path; a sometimes property fails without one.
	Violation *PropertyResult `json:"-"`

	run runner
}

// path is a path through the state space: the index of an initial state and, for each
// step, the index of the successor taken (in Next's emission order).
type path struct {
	init  int
	steps []int32
	// cycle, when > 0, makes the path a lasso: its last state is state cycle-1 again
	// (a fair cycle of an eventually counterexample).
	cycle int
	// nofair, for a lasso, says the cycle was found without a fairness assumption.
	nofair bool
}

// runner is a compiled system: a Spec[S] behind a non-generic face.
type runner interface {
	name() string
	check(o Options) (*Result, error)
	// trace renders a path as trace records.
	trace(p *path) ([]sim.TraceRecord, error)
	// replay re-executes the record lines of a trace and renders what happens now.
	replay(lines [][]byte) ([]sim.TraceRecord, *path, error)
	// verdict re-evaluates, at the end of p, what the footer of a trace claims.
	verdict(p *path, prop string) (string, error)
	// describe renders the steps of a path as short text lines.
	describe(p *path) ([]string, error)
	// view renders the state p leads to for the explorer (explore.go).
	view(p *path) (*View, error)
}

// Check explores sys. It returns an error for a malformed system or options (an input
// error) and for a bug in the system's own code (a panic in Next, a property or the
// fingerprint: reported, never a crash). Protocol handler panics in an actor system are
// not errors: they are violations of the property "no-panic".
func Check(sys System, o Options) (res *Result, err error) {
	if sys == nil {
		return nil, errors.New("model: no system")
	}
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	r, err := sys.compile()
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, &InternalError{Value: p, Stack: string(debug.Stack())}
		}
	}()
	return r.check(o)
}

// InternalError is a panic in a system's own code (Next, a property, a fingerprint)
// caught by the checker.
type InternalError struct {
	Value any
	Stack string
}

func (e *InternalError) Error() string { return fmt.Sprintf("model: panic in the system: %v", e.Value) }

// WriteTrace writes the counterexample or witness of property p in the simulator's
// JSONL trace format: header (any JSON value; the command line writes one with
// "format": sim.TraceFormat and "engine": "model"), one record per step, and a footer
// whose End says what the path shows ("violation of always P", "witness of
// sometimes P").
func (r *Result) WriteTrace(w io.Writer, p *PropertyResult, header any) error {
	if p == nil || p.path == nil {
		return errors.New("model: no path for this property")
	}
	recs, err := r.run.trace(p.path)
	if err != nil {
		return err
	}
	end, err := r.run.verdict(p.path, p.Name)
	if err != nil {
		return err
	}
	return writeTrace(w, header, recs, end)
}

// Steps renders the path of property p as one short line per step (for printing a
// witness or counterexample).
func (r *Result) Steps(p *PropertyResult) ([]string, error) {
	if p == nil || p.path == nil {
		return nil, errors.New("model: no path for this property")
	}
	return r.run.describe(p.path)
}

func writeTrace(w io.Writer, header any, recs []sim.TraceRecord, end string) error {
	tw := sim.NewTraceWriter(w)
	if err := tw.Header(header); err != nil {
		return err
	}
	var f sim.TraceFooter
	f.End = end
	for i := range recs {
		r := &recs[i]
		tw.Record(r)
		f.Events++
		f.Time = max(f.Time, r.T)
		switch r.Ev {
		case "recv":
			f.Delivered++
		case "lost":
			if r.From != "env" {
				f.Lost++
			}
		}
		for _, e := range r.Out {
			if e.Op == "send" {
				f.Sent++
				if e.Lost != "" {
					f.Lost++
				}
			}
		}
	}
	tw.End(&f)
	return tw.Err()
}

// collision is TLC's optimistic fingerprint-collision estimate.
func collision(distinct, total int64, injective bool) float64 {
	if injective || distinct <= 0 {
		return 0
	}
	return float64(distinct) * float64(max(total-distinct, 0)) / math.Exp2(64)
}

// finishStats fills the derived statistics.
func finishStats(st *Stats, start time.Time, t *table, injective bool) {
	st.Seconds = time.Since(start).Seconds()
	if st.Seconds > 0 {
		st.StatesPerSec = float64(st.Distinct) / st.Seconds
	}
	st.PeakRSS = peakRSS()
	if t != nil {
		st.SeenBytes = t.bytes()
		if st.Distinct > 0 {
			st.BytesPerState = float64(st.SeenBytes) / float64(st.Distinct)
		}
	}
	st.Collision = collision(st.Distinct, st.Total, injective)
	st.Queue = 0
}
