package checker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/sim"
)

// Operation is one call/return pair taken from a history, ready for porcupine.
type Operation struct {
	// Key partitions the history (a key, agent, pool or lease): operations on
	// different keys are checked independently.
	Key string
	// Client identifies the caller (a row in porcupine's visualization).
	Client int
	Input  any
	// Output is the returned value; for a call that never returned set Pending.
	Output any
	// Call and Return order the operation in real time. Use observation indices
	// (sim.Observation.Index): they are a total order consistent with virtual time.
	Call, Return int64
	// Pending marks a call that never returned: it may take effect at any point after
	// its call, or not at all; the model sees Output == nil.
	Pending bool
	// At, when the system can say, is the observation index at which the operation
	// took effect (a single server applying it, say); 0 if unknown. When every
	// operation of a key has one inside its [Call, Return] (a pending operation one
	// after its call, or none: it did not take effect) and stepping the model through them in that order gives
	// every recorded output, the key is linearizable — that order is a witness — and
	// no search runs. Otherwise the key is searched as usual: a wrong or missing point
	// costs time, never a wrong verdict.
	At int64
}

// DefaultLinTimeout bounds one linearizability check. Reaching it gives the verdict
// Unknown, never OK.
const DefaultLinTimeout = 30 * time.Second

// LinResult is the outcome of a linearizability check.
type LinResult struct {
	Result porcupine.CheckResult
	// Key is the first partition (in sorted order) found illegal; "" when the check
	// timed out before one was found.
	Key string
	// Info allows visualizing the illegal partition.
	Info  porcupine.LinearizationInfo
	Model porcupine.Model
	Ops   int
	Keys  int
	// Err is set (with Result Unknown) when the model panicked: a bug in the model or
	// in the extractor that built its inputs, never a verdict on the protocol.
	Err error
	// Located reports that Key and Info name the illegal partition (false when the
	// history is illegal but finding the partition timed out).
	Located bool
}

// CheckLinearizable checks ops against model, partition by partition (by Operation.Key,
// then by the model's own Partition function if it has one), within timeout overall.
//
// Every partition is checked at once, in parallel (porcupine runs partitions on their
// own goroutines) and without the bookkeeping for visualization; only if the history
// is illegal are the keys re-checked one by one in sorted order, with that bookkeeping,
// to name the first illegal key and visualize it: the reported key does not depend on
// scheduling. Reaching the timeout gives Unknown, never Ok. A panic in the model
// (porcupine calls it on its own goroutines, where a panic would kill the process) is
// caught and reported in Err.
func CheckLinearizable(model porcupine.Model, ops []Operation, timeout time.Duration) LinResult {
	return checkKeyed(func(string) porcupine.Model { return model }, true, ops, timeout, false)
}

// CheckLinearizableKeyed is CheckLinearizable with a model per key: modelFor is called
// once for each distinct Operation.Key, e.g. to check each pool against a Pool of its
// own units. LinResult.Model is the model of the reported key.
func CheckLinearizableKeyed(modelFor func(key string) porcupine.Model, ops []Operation, timeout time.Duration) LinResult {
	return checkKeyed(modelFor, false, ops, timeout, false)
}

// checkKeyed checks ops; with verbose, a linearizable history also comes back with the
// bookkeeping to visualize it (every key in one page: Located set, Key "").
func checkKeyed(modelFor func(key string) porcupine.Model, same bool, ops []Operation, timeout time.Duration, verbose bool) LinResult {
	total, totalKeys := len(ops), 0
	if !verbose {
		// Keys whose operations carry a witness that replays are linearizable: only
		// the others are searched. (A report wants porcupine's visualization of every
		// key, so it searches them all.)
		ops, totalKeys = witnessedKeys(modelFor, ops)
	}
	byKey := map[string][]porcupine.Operation{}
	for _, o := range ops {
		ret := o.Return
		out := o.Output
		if o.Pending {
			ret, out = math.MaxInt64, nil
		}
		byKey[o.Key] = append(byKey[o.Key], porcupine.Operation{
			ClientId: o.Client, Input: o.Input, Call: o.Call, Output: out, Return: ret,
		})
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	res := LinResult{Result: porcupine.Ok, Ops: total, Keys: len(keys) + totalKeys}
	if len(keys) == 0 {
		res.Model = modelFor("")
		return res
	}
	// One guarded model per key (the same one for every key when same).
	var failures []func() error
	failure := func() error {
		for _, f := range failures {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	}
	models := make([]porcupine.Model, len(keys))
	for i, k := range keys {
		if same && i > 0 {
			models[i] = models[0]
			continue
		}
		m, f := guardModel(modelFor(k))
		models[i], failures = m, append(failures, f)
	}

	// Phase 1: every partition at once.
	var parts [][]porcupine.Operation
	for i, k := range keys {
		sub := [][]porcupine.Operation{byKey[k]}
		if models[i].Partition != nil {
			sub = models[i].Partition(byKey[k])
		}
		if !same {
			sub = tagParts(sub, i)
		}
		parts = append(parts, sub...)
	}
	all := models[0]
	if !same {
		all = taggedModel(models)
	}
	all.Partition = func([]porcupine.Operation) [][]porcupine.Operation { return parts }
	all.PartitionEvent = nil
	start := time.Now()
	var r porcupine.CheckResult
	var info porcupine.LinearizationInfo
	if verbose {
		r, info = porcupine.CheckOperationsVerbose(all, parts[0], timeout) // porcupine only hands parts[0] to Partition
	} else {
		r = porcupine.CheckOperationsTimeout(all, parts[0], timeout)
	}
	if err := failure(); err != nil {
		res.Result, res.Err = porcupine.Unknown, err
		return res
	}
	if r == porcupine.Ok && verbose {
		res.Result, res.Model, res.Info, res.Located = r, all, info, true
		return res
	}
	if r != porcupine.Illegal {
		res.Result, res.Model = r, models[0]
		return res
	}

	// Phase 2: find and visualize the first illegal key.
	res.Result, res.Model = porcupine.Illegal, models[0]
	deadline := start.Add(2 * timeout) // as long again to locate what phase 1 found
	for i, k := range keys {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		r, info := porcupine.CheckOperationsVerbose(models[i], byKey[k], left)
		if err := failure(); err != nil {
			res.Result, res.Err = porcupine.Unknown, err
			return res
		}
		if r == porcupine.Illegal {
			res.Key, res.Info, res.Model, res.Located = k, info, models[i], true
			return res
		}
	}
	// Phase 1 proved the history illegal; locating the key ran out of time.
	return res
}

// witnessedKeys returns the operations of the keys that still need a search, and how
// many keys their witnessed points (Operation.At) proved linearizable.
func witnessedKeys(modelFor func(key string) porcupine.Model, ops []Operation) (search []Operation, proved int) {
	var order []string
	var groups [][]Operation
	if runs, ok := keyRuns(ops); ok {
		// Each key's operations are contiguous (the usual way histories are built,
		// key by key): its run is a subslice, nothing is copied.
		for _, r := range runs {
			order, groups = append(order, ops[r[0]].Key), append(groups, ops[r[0]:r[1]])
		}
	} else {
		byKey := map[string]int{}
		for _, o := range ops {
			i, ok := byKey[o.Key]
			if !ok {
				i = len(order)
				byKey[o.Key] = i
				order, groups = append(order, o.Key), append(groups, nil)
			}
			groups[i] = append(groups[i], o)
		}
	}
	for i, k := range order {
		if witnessed(modelFor(k), groups[i]) {
			proved++
			continue
		}
		search = append(search, groups[i]...)
	}
	return search, proved
}

// keyRuns returns the [start, end) runs of equal keys of ops, and whether every key
// has one run only (its operations are contiguous).
func keyRuns(ops []Operation) (runs [][2]int, ok bool) {
	done := map[string]bool{}
	for i := 0; i < len(ops); {
		j := i + 1
		for j < len(ops) && ops[j].Key == ops[i].Key {
			j++
		}
		if done[ops[i].Key] {
			return nil, false
		}
		done[ops[i].Key] = true
		runs = append(runs, [2]int{i, j})
		i = j
	}
	return runs, true
}

// witnessed reports whether one key's operations are linearizable in the order of
// their points: each inside its call and return, the model accepting every output.
func witnessed(m porcupine.Model, ops []Operation) (ok bool) {
	if m.Step == nil || m.Init == nil {
		return false
	}
	seq := make([]Operation, 0, len(ops))
	for _, o := range ops {
		switch {
		case o.Pending && o.At == 0:
			continue // it never took effect: allowed for a call that never returned
		case o.At == 0 || o.At < o.Call || (!o.Pending && o.At > o.Return):
			return false // no (valid) point
		}
		if o.Pending {
			o.Output = nil // it took effect, its answer never came: the models accept any
		}
		seq = append(seq, o)
	}
	slices.SortFunc(seq, func(a, b Operation) int { return cmp.Compare(a.At, b.At) })
	defer func() {
		if recover() != nil {
			ok = false // a model that panics is left to the guarded search
		}
	}()
	parts := [][]Operation{seq}
	if m.Partition != nil {
		// the model's own partition (by key inside a multi-key value, say), each
		// replayed from the initial state in point order
		at := map[int64]Operation{}
		pops := make([]porcupine.Operation, len(seq))
		for i, o := range seq {
			at[o.Call] = o
			pops[i] = porcupine.Operation{ClientId: o.Client, Input: o.Input, Call: o.Call, Output: o.Output, Return: o.Return}
		}
		parts = nil
		for _, p := range m.Partition(pops) {
			var part []Operation
			for _, po := range p {
				part = append(part, at[po.Call])
			}
			slices.SortFunc(part, func(a, b Operation) int { return cmp.Compare(a.At, b.At) })
			parts = append(parts, part)
		}
	}
	for _, part := range parts {
		st := m.Init()
		for _, o := range part {
			var good bool
			if good, st = m.Step(st, o.Input, o.Output); !good {
				return false
			}
		}
	}
	return true
}

// tagged is an input of the combined model of CheckLinearizableKeyed: the index of
// its key's model and the original input.
type tagged struct {
	m  int
	in any
}

// taggedState is a state of the combined model; m < 0 before the first step.
type taggedState struct {
	m  int
	st any
}

func tagParts(parts [][]porcupine.Operation, m int) [][]porcupine.Operation {
	out := make([][]porcupine.Operation, len(parts))
	for i, p := range parts {
		q := make([]porcupine.Operation, len(p))
		for j, o := range p {
			o.Input = tagged{m: m, in: o.Input}
			q[j] = o
		}
		out[i] = q
	}
	return out
}

// taggedModel runs each partition with its key's model: the partition's first step
// picks the model (every input of a partition carries the same index).
func taggedModel(models []porcupine.Model) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return taggedState{m: -1} },
		Step: func(state, input, output any) (bool, any) {
			s, in := state.(taggedState), input.(tagged)
			if s.m < 0 {
				s = taggedState{m: in.m, st: models[in.m].Init()}
			}
			ok, next := models[in.m].Step(s.st, in.in, output)
			return ok, taggedState{m: in.m, st: next}
		},
		Equal: func(a, b any) bool {
			x, y := a.(taggedState), b.(taggedState)
			if x.m != y.m {
				return false
			}
			if x.m < 0 {
				return true
			}
			if eq := models[x.m].Equal; eq != nil {
				return eq(x.st, y.st)
			}
			return x.st == y.st
		},
		Hash: func(state any) uint64 {
			s := state.(taggedState)
			if s.m < 0 || models[s.m].Hash == nil {
				return 0
			}
			return models[s.m].Hash(s.st)
		},
		// for the visualization of a linearizable history (every key on one page)
		DescribeOperation: func(input, output any) string {
			in := input.(tagged)
			if d := models[in.m].DescribeOperation; d != nil {
				return d(in.in, output)
			}
			return fmt.Sprintf("%v -> %v", in.in, output)
		},
		DescribeState: func(state any) string {
			s := state.(taggedState)
			if s.m < 0 {
				return "init"
			}
			if d := models[s.m].DescribeState; d != nil {
				return d(s.st)
			}
			return fmt.Sprintf("%v", s.st)
		},
	}
}

// guardModel wraps the model's step functions so that a panic is recorded (and the
// step refused) instead of crashing the process from one of porcupine's goroutines.
func guardModel(m porcupine.Model) (porcupine.Model, func() error) {
	var mu sync.Mutex
	var first error
	record := func(x any) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = fmt.Errorf("linearizability model panicked: %v", x)
		}
	}
	if step := m.Step; step != nil {
		m.Step = func(state, input, output any) (ok bool, next any) {
			defer func() {
				if x := recover(); x != nil {
					record(x)
					ok, next = false, state
				}
			}()
			return step(state, input, output)
		}
	}
	if step := m.StepContext; step != nil {
		m.StepContext = func(ctx context.Context, state, input, output any) (ok bool, next any) {
			defer func() {
				if x := recover(); x != nil {
					record(x)
					ok, next = false, state
				}
			}()
			return step(ctx, state, input, output)
		}
	}
	return m, func() error {
		mu.Lock()
		defer mu.Unlock()
		return first
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Linearizable returns a safety property: the operations extract takes from a run are
// linearizable against model. On an illegal history it writes porcupine's HTML
// visualization of the failing partition into the run's artifact directory (when one
// is set); a timeout gives an inconclusive verdict, never ok.
func Linearizable(name string, model porcupine.Model, extract func(r *Run) ([]Operation, error), timeout time.Duration) Property {
	return linearizable(name, func(ops []Operation, timeout time.Duration, verbose bool) LinResult {
		return checkKeyed(func(string) porcupine.Model { return model }, true, ops, timeout, verbose)
	}, extract, timeout)
}

// LinearizableKeyed is Linearizable with a model per key (see CheckLinearizableKeyed).
func LinearizableKeyed(name string, modelFor func(key string) porcupine.Model, extract func(r *Run) ([]Operation, error), timeout time.Duration) Property {
	return linearizable(name, func(ops []Operation, timeout time.Duration, verbose bool) LinResult {
		return checkKeyed(modelFor, false, ops, timeout, verbose)
	}, extract, timeout)
}

func linearizable(name string, check func([]Operation, time.Duration, bool) LinResult, extract func(r *Run) ([]Operation, error), timeout time.Duration) Property {
	if timeout <= 0 {
		timeout = DefaultLinTimeout
	}
	return Property{
		Name:  name,
		Class: Safety,
		Check: func(r *Run) error {
			ops, err := extract(r)
			if err != nil {
				return err
			}
			if r.Visualize {
				r.recordSpans(name, ops) // for the run report only: it costs a pass over the history
			}
			res := check(ops, timeout, r.Visualize && r.ArtifactDir != "")
			switch {
			case res.Err != nil:
				return Inconclusive("%v", res.Err)
			case res.Result == porcupine.Ok:
				r.Note(fmt.Sprintf("%d operations on %d keys checked", res.Ops, res.Keys))
				r.Count(res.Ops, 0)
				if r.Visualize && r.ArtifactDir != "" && res.Located {
					path, err := writeVisualization(r, name, res)
					if err != nil {
						return Inconclusive("linearizable, but %v", err)
					}
					r.AddArtifact(path)
				}
				return nil
			case res.Result == porcupine.Unknown:
				return Inconclusive("linearizability check of %d operations on %d keys timed out after %v", res.Ops, res.Keys, timeout)
			}
			if !res.Located {
				return fmt.Errorf("history of %d operations on %d keys is not linearizable (locating the key timed out)", res.Ops, res.Keys)
			}
			msg := fmt.Sprintf("history of key %q is not linearizable", res.Key)
			if r.ArtifactDir != "" {
				path, err := writeVisualization(r, name, res)
				if err != nil {
					return errors.Join(errors.New(msg), err)
				}
				r.AddArtifact(path)
				msg += " (visualization: " + path + ")"
			}
			return errors.New(msg)
		},
	}
}

// recordSpans keeps ops in virtual time (their Call and Return are observation
// indices) for the run report.
func (r *Run) recordSpans(name string, ops []Operation) {
	if r.Result == nil {
		return
	}
	at := map[int64]sim.Time{}
	for _, o := range r.History() {
		at[o.Index] = o.Time
	}
	for _, o := range ops {
		sp := OpSpan{Property: name, Key: o.Key, Client: o.Client, Call: at[o.Call], Pending: o.Pending}
		if !o.Pending {
			sp.Return = at[o.Return]
		}
		r.spans = append(r.spans, sp)
	}
}

func writeVisualization(r *Run, name string, res LinResult) (string, error) {
	if err := os.MkdirAll(r.ArtifactDir, 0o755); err != nil {
		return "", err
	}
	key := res.Key
	if key == "" {
		key = "all" // a linearizable history: every key on one page
	}
	file := unsafeName.ReplaceAllString(fmt.Sprintf("%s-seed%d-%s-%s.html", r.Scenario, r.Seed, name, key), "_")
	path := filepath.Join(r.ArtifactDir, file)
	if err := porcupine.VisualizePath(res.Model, res.Info, path); err != nil {
		return "", fmt.Errorf("writing visualization: %w", err)
	}
	return path, nil
}
