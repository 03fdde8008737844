package explore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// MaxTraceEvents is the longest trace the explorer holds (every record stays in
// memory; a run report is the tool for longer runs).
const MaxTraceEvents = 500_000

// timeline is a run to step through: step 0 is the state before the first event (a
// model trace: the initial state), step k the state after the k-th step.
type timeline struct {
	File     string            `json:"file"`
	Engine   string            `json:"engine"`
	Name     string            `json:"name"` // scenario or model
	Seed     uint64            `json:"seed"`
	Params   map[string]string `json:"params"`
	Steps    int               `json:"steps"`
	Nodes    []string          `json:"nodes"`
	Kinds    []string          `json:"kinds"`
	Verdicts []verdict         `json:"verdicts"`
	// First is the first step at which a failed property is violated (-1: none), Why
	// says how it was found.
	First    int    `json:"first_violation"`
	FirstWhy string `json:"first_violation_why,omitempty"`
	// Warning says the re-execution departs from the file (the states shown are the
	// re-execution's).
	Warning string `json:"warning,omitempty"`
	// ModelPath is, for a model-checker trace, the path of its last state (the page
	// links it to the state-space view).
	ModelPath string `json:"model_path,omitempty"`

	recs    []sim.TraceRecord
	recStep []int // step of each record
	sentAt  []int // for a record that receives (or loses) a message: the index of the record that sent it, else -1
	// snapshot returns the state after step k.
	snapshot func(k int) (sim.Snapshot, error)
}

type verdict struct {
	Class    string `json:"class"`
	Property string `json:"property"`
	Detail   string `json:"detail,omitempty"`
}

// loadTrace reads a simulator or model-checker trace and prepares to step through it.
func loadTrace(file string, data []byte) (*timeline, error) {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	var probe struct {
		Format string `json:"format"`
		Engine string `json:"engine"`
	}
	if err := json.Unmarshal(line, &probe); err != nil || probe.Format != sim.TraceFormat {
		return nil, inputErr("%s: not a simrun trace (its first line is not a %s header)", file, sim.TraceFormat)
	}
	switch probe.Engine {
	case "sim":
		return loadSimTrace(file, data)
	case model.TraceEngine:
		return loadModelTrace(file, data)
	}
	return nil, inputErr("%s: unknown trace engine %q", file, probe.Engine)
}

// ---- simulator traces ----

func loadSimTrace(file string, data []byte) (*timeline, error) {
	h, err := scenarios.ReadHeader(data)
	if err != nil {
		return nil, inputErr("%s: %v", file, err)
	}
	sc, err := scenarios.Lookup(h.Scenario)
	if err != nil {
		return nil, inputErr("%s: %v", file, err)
	}
	plan := h.Faults
	opts := scenarios.Options{Seed: h.Seed, Params: h.Params, Faults: &plan, FaultsFile: file}
	col := &sim.RecordCollector{Limit: MaxTraceEvents}
	var buf bytes.Buffer
	o := opts
	o.TraceTo, o.Tracer = &buf, col
	rep, err := scenarios.Run(sc, o)
	if err != nil {
		if scenarios.IsInputError(err) {
			return nil, inputErr("%s: %v", file, err)
		}
		return nil, err
	}
	if col.Dropped > 0 {
		return nil, inputErr("%s: %d events; the explorer holds at most %d (use simrun run --report for a page of a long run)", file, int64(len(col.Records))+col.Dropped, MaxTraceEvents)
	}
	t := &timeline{File: file, Engine: "sim", Name: h.Scenario, Seed: h.Seed, Params: rep.Params, First: -1, recs: col.Records}
	if r := scenarios.CompareLines(data, buf.Bytes()); !r.Same() {
		t.Warning = fmt.Sprintf("this binary's re-execution departs from the file at line %d: the steps and states shown are the re-execution's (simrun replay %s shows the difference)", r.Line, scenarios.ShellQuote(file))
	}
	t.Steps = len(t.recs)
	t.recStep = make([]int, len(t.recs))
	for i := range t.recs {
		t.recStep[i] = i + 1
	}
	for _, v := range rep.Verdicts {
		t.Verdicts = append(t.Verdicts, verdict{Class: v.Class.String(), Property: v.Property, Detail: v.Detail})
	}
	t.finish()
	t.First, t.FirstWhy = firstSimViolation(t, rep.Verdicts, func(prop string, events int) bool {
		o := opts
		o.CutAt = int64(events)
		r, err := scenarios.Run(sc, o)
		if err != nil {
			return false
		}
		for _, v := range r.Verdicts {
			if v.Property == prop && v.Class == checker.Safety {
				return true
			}
		}
		return false
	})
	cur := &cursor{sc: sc, opts: opts}
	t.snapshot = cur.at
	s0, err := cur.at(0)
	if err != nil {
		return nil, err
	}
	t.Nodes = t.Nodes[:0]
	for _, n := range s0.Nodes {
		t.Nodes = append(t.Nodes, n.Name) // every node, in NodeID order (some may never act)
	}
	return t, nil
}

var obsRE = regexp.MustCompile(`at observation #(\d+) `)

// firstSimViolation finds the step where the first failed safety property broke: the
// step that recorded the observation its verdict names (the history checks name the
// first observation that breaks them), else the shortest prefix of the run on which
// the property already fails (bisection: failsAt re-runs the scenario cut after that
// many events); a panic is its own step; liveness is judged on the whole run (the
// last step).
func firstSimViolation(t *timeline, vs []checker.Verdict, failsAt func(prop string, events int) bool) (int, string) {
	obsStep := func(idx int64) int {
		n := int64(0)
		for i, r := range t.recs {
			for _, e := range r.Out {
				if e.Op == "obs" {
					if n == idx {
						return t.recStep[i]
					}
					n++
				}
			}
		}
		return -1
	}
	best, why := -1, ""
	for _, v := range vs {
		if !v.Failed() {
			continue
		}
		switch v.Class {
		case checker.Crash:
			for i, r := range t.recs {
				if r.Ev == "panic" {
					if best < 0 || t.recStep[i] < best {
						best, why = t.recStep[i], v.Property+": the handler call that panicked"
					}
				}
			}
		case checker.Safety:
			if m := obsRE.FindStringSubmatch(v.Detail); m != nil {
				idx, _ := strconv.ParseInt(m[1], 10, 64)
				if s := obsStep(idx); s >= 0 && (best < 0 || s < best) {
					best, why = s, fmt.Sprintf("%s: the step that recorded observation #%d", v.Property, idx)
				}
				continue
			}
			if !failsAt(v.Property, t.Steps) {
				continue // fails only on the whole run (a check at the end)
			}
			lo, hi := 0, t.Steps // fails at hi, not at lo (no events: nothing happened)
			for hi-lo > 1 {
				mid := lo + (hi-lo)/2
				if failsAt(v.Property, mid) {
					hi = mid
				} else {
					lo = mid
				}
			}
			if best < 0 || hi < best {
				best, why = hi, fmt.Sprintf("%s: the shortest prefix of the run on which it fails ends here (found by re-running prefixes)", v.Property)
			}
		}
	}
	if best < 0 {
		for _, v := range vs {
			if v.Failed() {
				return t.Steps, v.Property + " is judged on the whole run: its verdict is at the end"
			}
		}
	}
	return best, why
}

// cursor rebuilds simulator states by re-execution: a kernel stepped forward, rebuilt
// from the start to go back (a run is deterministic, so step k is the same state each
// time).
type cursor struct {
	sc   *scenarios.Scenario
	opts scenarios.Options
	k    *sim.Kernel
}

func (c *cursor) at(step int) (sim.Snapshot, error) {
	if c.k == nil || c.k.Events() > int64(step) {
		k, _, err := scenarios.Start(c.sc, c.opts)
		if err != nil {
			return sim.Snapshot{}, err
		}
		c.k = k
	}
	for c.k.Events() < int64(step) {
		if !c.k.Step() && c.k.Events() < int64(step) {
			return sim.Snapshot{}, fmt.Errorf("the re-execution ended after %d events, before step %d", c.k.Events(), step)
		}
	}
	return c.k.Snapshot(), nil
}

// ---- model-checker traces ----

func loadModelTrace(file string, data []byte) (*timeline, error) {
	var h model.TraceHeader
	line, _, _ := bytes.Cut(data, []byte("\n"))
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, inputErr("%s: header: %v", file, err)
	}
	m, err := model.Lookup(h.Scenario)
	if err != nil {
		return nil, inputErr("%s: %v", file, err)
	}
	sys, p, err := m.Instantiate(h.Params)
	if err != nil {
		return nil, inputErr("%s: %v", file, err)
	}
	ex, err := model.NewExplorer(sys)
	if err != nil {
		return nil, inputErr("%s: %v", file, err)
	}
	path, matched, steps, err := ex.PathOfTrace(data)
	if err != nil {
		return nil, inputErr("%s: %v", file, err)
	}
	last, err := ex.View(path)
	if err != nil {
		return nil, err
	}
	t := &timeline{File: file, Engine: model.TraceEngine, Name: m.Name, Seed: h.Seed, Params: p.Values(), First: -1,
		Steps: len(path.Steps), recs: last.Records, recStep: last.Step, ModelPath: path.String()}
	if matched < steps {
		t.Warning = fmt.Sprintf("the model no longer takes the file's step %d: the steps and states shown stop where it departs (simrun replay %s shows the difference)", matched+1, scenarios.ShellQuote(file))
	}
	end := ""
	if out, err := model.Replay(sys, data); err == nil {
		end = scenarios.FooterEnd(out)
	}
	class := "violation"
	if h.Kind == model.SometimesKind {
		class = "witness"
	}
	t.Verdicts = []verdict{{Class: class, Property: h.Kind.String() + " " + h.Property, Detail: end}}
	t.finish()
	// The first state on the path where the property shows: an always-property's
	// first violating state, a sometimes-property's witness.
	if h.Kind == model.AlwaysKind || h.Kind == model.SometimesKind {
		for k := 0; k <= t.Steps; k++ {
			v, err := ex.View(path.Prefix(k))
			if err != nil {
				return nil, err
			}
			for _, pr := range v.Properties {
				if pr.Name == h.Property && pr.Holds == (h.Kind == model.SometimesKind) {
					t.First, t.FirstWhy = k, fmt.Sprintf("the first state on the path where %s %s %s", h.Kind, h.Property, map[bool]string{true: "holds", false: "is violated"}[pr.Holds])
				}
			}
			if t.First >= 0 {
				break
			}
		}
	} else if h.Kind == model.EventuallyKind {
		t.First, t.FirstWhy = t.Steps, "eventually "+h.Property+": judged on the whole path (a dead end or a cycle)"
		if h.Cycle > 0 {
			t.FirstWhy = fmt.Sprintf("eventually %s: the path returns to step %d and cycles without it", h.Property, h.Cycle-1)
		}
	}
	if len(last.State.Nodes) > 0 {
		t.Nodes = t.Nodes[:0]
		for _, n := range last.State.Nodes {
			t.Nodes = append(t.Nodes, n.Name)
		}
	}
	t.snapshot = func(k int) (sim.Snapshot, error) {
		v, err := ex.View(path.Prefix(k))
		if err != nil {
			return sim.Snapshot{}, err
		}
		return v.State, nil
	}
	return t, nil
}

// finish derives the node and kind lists and matches every receive to its send.
func (t *timeline) finish() {
	seenNode, seenKind := map[string]bool{}, map[string]bool{}
	addNode := func(n string) {
		if n != "" && n != "env" && !seenNode[n] {
			seenNode[n] = true
			t.Nodes = append(t.Nodes, n)
		}
	}
	addKind := func(k string) {
		if k != "" && !seenKind[k] {
			seenKind[k] = true
			t.Kinds = append(t.Kinds, k)
		}
	}
	for _, r := range t.recs {
		addNode(r.Node)
		addNode(r.From)
		if r.Ev == "recv" || r.Ev == "lost" {
			addKind(r.Kind)
		}
		for _, e := range r.Out {
			if e.Op == "send" {
				addKind(e.Kind)
				addNode(e.To)
			}
		}
	}
	t.sentAt = sentBy(t.recs)
	if t.Nodes == nil {
		t.Nodes = []string{}
	}
	if t.Kinds == nil {
		t.Kinds = []string{}
	}
}

// sentBy matches every record that receives (or loses) a message to the record that
// sent it: same sender, receiver, kind and content, first sent first matched. It
// returns the sender's index per record, -1 where there is none.
func sentBy(recs []sim.TraceRecord) []int {
	type key struct{ from, to, kind, msg string }
	pending := map[key][]int{}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	out := make([]int, len(recs))
	for i, r := range recs {
		out[i] = -1
		if r.Ev == "recv" || r.Ev == "lost" {
			k := key{r.From, r.Node, r.Kind, js(r.Msg)}
			if q := pending[k]; len(q) > 0 {
				out[i] = q[0]
				pending[k] = q[1:]
			}
		}
		for _, e := range r.Out {
			if e.Op == "send" && e.Lost == "" {
				k := key{r.Node, e.To, e.Kind, js(e.Msg)}
				pending[k] = append(pending[k], i)
			}
		}
	}
	return out
}

// matches reports whether record i concerns node (handled there, sent from or to it)
// and message kind (received or sent); "" matches anything.
func (t *timeline) matches(i int, node, kind string) bool {
	r := &t.recs[i]
	okNode := node == "" || r.Node == node || r.From == node
	okKind := kind == "" || r.Kind == kind
	for _, e := range r.Out {
		if e.Op != "send" {
			continue
		}
		if node != "" && e.To == node {
			okNode = true
		}
		if kind != "" && e.Kind == kind {
			okKind = true
		}
	}
	return okNode && okKind
}

// inputError is bad input (a malformed trace, an unknown model): exit 2 on the command
// line, 4xx from the server.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }

func inputErr(format string, a ...any) error { return &inputError{fmt.Errorf(format, a...)} }

// IsInputError reports whether err was caused by the input.
func IsInputError(err error) bool {
	var ie *inputError
	return errors.As(err, &ie)
}
