package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/simrun-dev/simrun/sim"
)

// Path is a path through a system's state space: the index of an initial state and,
// for each step, the index of the successor taken (in the order Next emits them, which
// is deterministic). Its text form is the indices joined by dots, initial state first:
// "0.3.1" (simrun explore's URLs).
type Path struct {
	Init  int
	Steps []int
}

// MaxPathSteps bounds the steps ParsePath accepts (a path is re-executed on every view).
const MaxPathSteps = 100_000

// ParsePath reads a path's text form. Every error names what is wrong in one line.
func ParsePath(s string) (Path, error) {
	if s == "" {
		return Path{}, errors.New("empty path (the initial state is \"0\")")
	}
	parts := strings.Split(s, ".")
	if len(parts) > MaxPathSteps+1 {
		return Path{}, fmt.Errorf("path of %d steps (at most %d)", len(parts)-1, MaxPathSteps)
	}
	var p Path
	for i, x := range parts {
		n, err := strconv.Atoi(x)
		if err != nil || n < 0 || n > 1<<30 || x != strconv.Itoa(n) {
			return Path{}, fmt.Errorf("path element %d is %q: want a successor index (0, 1, 2, ...)", i+1, shorten(x))
		}
		if i == 0 {
			p.Init = n
		} else {
			p.Steps = append(p.Steps, n)
		}
	}
	return p, nil
}

func shorten(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

// String renders the path's text form.
func (p Path) String() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(p.Init))
	for _, k := range p.Steps {
		b.WriteByte('.')
		b.WriteString(strconv.Itoa(k))
	}
	return b.String()
}

// Then returns the path extended by successor k.
func (p Path) Then(k int) Path {
	return Path{Init: p.Init, Steps: append(append(make([]int, 0, len(p.Steps)+1), p.Steps...), k)}
}

// Prefix returns the first n steps of p.
func (p Path) Prefix(n int) Path { return Path{Init: p.Init, Steps: p.Steps[:n]} }

func (p Path) internal() *path {
	q := &path{init: p.Init, steps: make([]int32, len(p.Steps))}
	for i, k := range p.Steps {
		q.steps[i] = int32(k)
	}
	return q
}

func exported(q *path) Path {
	p := Path{Init: q.init, Steps: make([]int, len(q.steps))}
	for i, k := range q.steps {
		p.Steps[i] = int(k)
	}
	return p
}

// PathOf returns the counterexample or witness path of property p (ok is false when
// it has none). A lasso's cycle is not part of the path: the trace names its start.
func (r *Result) PathOf(p *PropertyResult) (Path, bool) {
	if p == nil || p.path == nil {
		return Path{}, false
	}
	return exported(p.path), true
}

// Explorer walks a system's state space one state at a time, for a person (simrun
// explore): the state a path leads to, its enabled actions, and every property's
// value there. Views re-execute the path from the initial state; Next's determinism
// (part of the Spec contract) makes a path a stable name for a state.
type Explorer struct {
	r runner
}

// NewExplorer compiles sys for exploring.
func NewExplorer(sys System) (*Explorer, error) {
	if sys == nil {
		return nil, errors.New("model: no system")
	}
	r, err := sys.compile()
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return &Explorer{r: r}, nil
}

// Name is the system's name.
func (e *Explorer) Name() string { return e.r.name() }

// View is one state as the explorer shows it.
type View struct {
	Path  string `json:"path"`
	Depth int    `json:"depth"`
	// Inits is the number of initial states (paths start with one of 0..Inits-1).
	Inits int `json:"inits"`
	// Fingerprint is the system state's fingerprint (hex): equal states, equal
	// fingerprints, whatever path reached them.
	Fingerprint string       `json:"fingerprint"`
	State       sim.Snapshot `json:"state"`
	// Expandable is false for a state outside the model's Boundary (the checker counts
	// and checks it but does not expand it; its actions are still listed).
	Expandable bool           `json:"expandable"`
	Actions    []ActionView   `json:"actions"`
	Properties []PropertyView `json:"properties"`
	// Records is the trace of the path (the initial state's records, then one per
	// step): what the page's sequence diagram draws. Step is, for each record, the
	// number of steps taken when it happened (0 for the initial records).
	Records []sim.TraceRecord `json:"records"`
	Step    []int             `json:"record_step"`
}

// ActionView is one enabled action: its successor index, a one-line summary of what
// it does, and where it leads.
type ActionView struct {
	Index       int    `json:"index"`
	Name        string `json:"name"`
	Path        string `json:"path"`
	Fingerprint string `json:"fingerprint"`
	// Self says the action leads back to the same state.
	Self bool `json:"self,omitempty"`
}

// PropertyView is a property's value in one state. For an always-property Holds is the
// invariant here; for sometimes and eventually it says whether the predicate holds in
// this state (a witness of sometimes; eventually's goal reached).
type PropertyView struct {
	Name  string `json:"name"`
	Kind  Kind   `json:"kind"`
	Holds bool   `json:"holds"`
}

// PathError is a path that does not lead anywhere in this system (a successor index
// out of range): the caller's input, not the system's fault.
type PathError struct{ Err error }

func (e *PathError) Error() string { return e.Err.Error() }

// View returns the state path p leads to. A path that leaves the state space is a
// *PathError; a panic in the system's own code is an *InternalError.
func (e *Explorer) View(p Path) (v *View, err error) {
	defer func() {
		if x := recover(); x != nil {
			v, err = nil, &InternalError{Value: x, Stack: string(debug.Stack())}
		}
	}()
	return e.r.view(p.internal())
}

// PathOfTrace maps a model-checker trace (the bytes of a file check --trace wrote) to
// its path in this system: each record line is matched to the successor whose record
// is byte-identical. Matched is the number of steps that matched; when it is short of
// the trace's steps, the system no longer produces the file's next step there.
func (e *Explorer) PathOfTrace(data []byte) (p Path, matched, steps int, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = &InternalError{Value: x, Stack: string(debug.Stack())}
		}
	}()
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) < 2 {
		return Path{}, 0, 0, errors.New("model: trace has no records")
	}
	var h TraceHeader
	if err := json.Unmarshal(lines[0], &h); err != nil || h.Engine != TraceEngine {
		return Path{}, 0, 0, errors.New("model: not a model-checker trace")
	}
	body := lines[1:]
	if n := len(body); n > 0 && !bytes.Contains(body[n-1], []byte(`"ev":`)) {
		body = body[:n-1]
	}
	_, q, err := e.r.replay(body)
	if err != nil {
		return Path{}, 0, 0, err
	}
	init, err := e.View(Path{Init: q.init})
	if err != nil {
		return Path{}, 0, 0, err
	}
	return exported(q), len(q.steps), len(body) - len(init.Records), nil
}

func hexFP(x uint64) string { return fmt.Sprintf("%016x", x) }

// view implements the explorer for a compiled spec.
func (c *checker[S]) view(p *path) (*View, error) {
	c.setup()
	inits := c.sp.Init()
	if p.init < 0 || p.init >= len(inits) {
		return nil, &PathError{Err: fmt.Errorf("initial state %d: the model has %d (0..%d)", p.init, len(inits), len(inits)-1)}
	}
	states := []S{inits[p.init]}
	var acts []Action
	for i, k := range p.steps {
		a, t := c.successors(states[len(states)-1])
		if int(k) >= len(t) {
			return nil, &PathError{Err: fmt.Errorf("step %d takes action %d, but the state at depth %d has %d enabled actions", i+1, k, i, len(t))}
		}
		states = append(states, t[k])
		acts = append(acts, a[k])
	}
	cur := states[len(states)-1]
	v := &View{
		Path: exported(p).String(), Depth: len(p.steps), Fingerprint: hexFP(c.sp.Fingerprint(cur)),
		State: c.snapshot(cur), Expandable: c.expandable(cur), Actions: []ActionView{}, Inits: len(c.sp.Init()),
	}
	recs := c.initRecs(states[0])
	v.Step = make([]int, len(recs))
	for i, a := range acts {
		recs = append(recs, c.stepRec(states[i], a, states[i+1]))
		v.Step = append(v.Step, i+1)
	}
	number(recs, 0)
	v.Records = recs
	here := c.sp.Fingerprint(cur)
	nexts, succ := c.successors(cur)
	for k := range succ {
		r := c.stepRec(cur, nexts[k], succ[k])
		fp := c.sp.Fingerprint(succ[k])
		v.Actions = append(v.Actions, ActionView{
			Index: k, Name: summarize(&r), Path: exported(p).Then(k).String(), Fingerprint: hexFP(fp), Self: fp == here,
		})
	}
	for _, pr := range c.sp.Properties {
		v.Properties = append(v.Properties, PropertyView{Name: pr.Name, Kind: pr.Kind, Holds: pr.Check(cur)})
	}
	return v, nil
}

// snapshot renders a state for a person: an actor system's nodes, storage, timers and
// messages; a plain spec's Describe (or %v) as the snapshot's Extra.
func (c *checker[S]) snapshot(s S) sim.Snapshot {
	if sn, ok := c.sp.record.(interface{ snapshot(S) sim.Snapshot }); ok {
		return sn.snapshot(s)
	}
	return sim.Snapshot{Nodes: []sim.NodeSnapshot{}, InFlight: []sim.InFlight{}, Extra: c.describeState(s)}
}

// snapshot renders an actor state.
func (x *actorSys) snapshot(s *State) sim.Snapshot {
	out := sim.Snapshot{Time: s.Now(), Nodes: make([]sim.NodeSnapshot, s.NumNodes()), InFlight: []sim.InFlight{}}
	for i := range out.Nodes {
		n := sim.NodeID(i)
		ns := sim.NodeSnapshot{Name: s.Name(n), Up: s.Up(n), Local: s.Local(n), Stable: sim.StableObject(s.Stable(n)), Timers: []sim.TimerSnapshot{}}
		if ns.Up {
			ns.State = sim.Inspect(s.Node(n))
			for _, t := range s.Timers(n) {
				ns.Timers = append(ns.Timers, sim.TimerSnapshot{ID: string(t.ID), Due: t.Deadline})
			}
		}
		out.Nodes[i] = ns
	}
	for _, m := range s.InFlight() {
		out.InFlight = append(out.InFlight, sim.InFlight{From: s.Name(m.From), To: s.Name(m.To), Kind: m.Msg.Kind(), Msg: sim.Inspect(m.Msg)})
	}
	for i := 0; i < s.NumNodes(); i++ {
		if k := s.PendingInjections(sim.NodeID(i)); k > 0 {
			for _, in := range x.injBy[i][len(x.injBy[i])-k:] {
				out.InFlight = append(out.InFlight, sim.InFlight{From: "env", To: s.Name(in.To), Kind: in.Msg.Kind(), Msg: sim.Inspect(in.Msg)})
			}
		}
	}
	extra := sim.Object{{Key: "faults used", Value: s.Faults()}}
	var cuts []string
	for i := 0; i < s.NumNodes(); i++ {
		for j := 0; j < s.NumNodes(); j++ {
			if s.Cut(sim.NodeID(i), sim.NodeID(j)) {
				cuts = append(cuts, s.Name(sim.NodeID(i))+"→"+s.Name(sim.NodeID(j)))
			}
		}
	}
	if len(cuts) > 0 {
		extra = append(extra, sim.Field{Key: "cut links", Value: cuts})
	}
	if s.Ghost() != nil {
		extra = append(extra, sim.Field{Key: "ghost", Value: sim.Inspect(s.Ghost())})
	}
	if pe := s.Panic(); pe != nil {
		extra = append(extra, sim.Field{Key: "panic", Value: pe.Error()})
	}
	out.Extra = extra
	return out
}
