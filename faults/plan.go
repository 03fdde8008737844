// Package faults holds fault plans: timed fault events as plain data, their JSON
// encoding and validation, and generators that draw a plan from a seed (optionally
// drawing the intensity parameters themselves from the seed: swarm testing).
//
// A plan file looks like
//
//	{"events": [
//	  {"at": "1s",   "kind": "crash",     "node": "n2"},
//	  {"at": "3s",   "kind": "restart",   "node": "n2"},
//	  {"at": "2s",   "kind": "partition", "groups": [["n0", "n1"], ["n2"]]},
//	  {"at": "2s",   "kind": "cut",       "from": "n0", "to": "n1"},
//	  {"at": "3s",   "kind": "restore",   "from": "n0", "to": "n1"},
//	  {"at": "4s",   "kind": "heal"},
//	  {"at": "5s",   "kind": "spike",     "from": "n0", "to": "*", "extra": "50ms", "for": "1s"},
//	  {"at": "5s",   "kind": "skew",      "node": "n1", "step": "-20ms", "drift_ppm": 500},
//	  {"at": "6s",   "kind": "burst",     "loss": 0.2, "dup": 0.1, "for": "500ms"},
//	  {"at": "7s",   "kind": "crash-send", "node": "n0", "for": "200ms"},
//	  {"at": "8s",   "kind": "restart",   "node": "n0"}
//	]}
//
// "crash-send" crashes a node part-way through a handler call's sends: the node's
// first call in [at, at+for) that sends anything has its stable writes applied, then a
// seeded prefix of its sends (in a seeded order; possibly none, never all) leaves and
// the node crashes — the primary that dies while it sends an update to its backups.
// A node that sends nothing in the window crashes at its end. A restart of the node
// must come after the window.
//
// Times are Go durations since the start of the run and must not decrease. A partition
// puts the listed groups apart from each other and from every unlisted node (the
// unlisted nodes form one more group). "cut" drops every message on one directed link
// until a "restore" of that link or a "heal"; "heal" removes every partition and cut.
//
// Parse is strict (see its doc): one object with only "events", no key twice, "at" and
// "kind" on every entry, durations as strings, only the fields of the entry's kind,
// bounded magnitudes (MaxAt, MaxMagnitude, MaxDriftPPM, MaxName), no byte-order mark;
// every error is one line naming the position, or the entry and the field.
package faults

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/internal/inputfile"
	"github.com/simrun-dev/simrun/sim"
)

// Kinds lists the fault kinds a plan may use.
var Kinds = []string{"crash", "crash-send", "restart", "partition", "cut", "restore", "heal", "spike", "skew", "burst"}

// IsCrash reports whether the event crashes a node ("crash" or "crash-send").
func (e Event) IsCrash() bool { return e.Kind == "crash" || e.Kind == "crash-send" }

// Duration is a time.Duration that reads and writes JSON as a Go duration string
// ("1.5s"). A bare number is refused: "at": 2 would otherwise mean two nanoseconds.
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if len(b) == 0 || b[0] != '"' || json.Unmarshal(b, &s) != nil {
		return fmt.Errorf(`a duration is a string such as "1.5s", not %s`, short(string(b)))
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf(`%s is not a duration (e.g. "1.5s")`, short(s))
	}
	*d = Duration(v)
	return nil
}

// Event is one timed fault.
type Event struct {
	At   Duration `json:"at"`
	Kind string   `json:"kind"`
	// Node: crash, crash-send, restart, skew.
	Node string `json:"node,omitempty"`
	// Groups: partition.
	Groups [][]string `json:"groups,omitempty"`
	// From, To: cut, spike ("*" = every node, spike only).
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Extra, For: spike (extra latency for a while); For: burst, crash-send (the
	// window in which the node crashes mid-send).
	Extra Duration `json:"extra,omitempty"`
	For   Duration `json:"for,omitempty"`
	// Step, DriftPPM: skew (clock step; drift set when DriftPPM is given).
	Step     Duration `json:"step,omitempty"`
	DriftPPM *int64   `json:"drift_ppm,omitempty"`
	// Loss, Dup: burst probabilities.
	Loss float64 `json:"loss,omitempty"`
	Dup  float64 `json:"dup,omitempty"`
}

// Plan is a list of fault events in time order.
type Plan struct {
	Events []Event `json:"events"`
}

// Len returns the number of events.
func (p Plan) Len() int { return len(p.Events) }

// ValidationError names the offending entry and field.
type ValidationError struct {
	Entry int    // index in Events
	Kind  string // the entry's kind
	Field string
	Msg   string
}

func (e *ValidationError) Error() string {
	kind := e.Kind
	if kind == "" {
		kind = "?"
	}
	return fmt.Sprintf("faults: entry %d (%s): field %q: %s", e.Entry, kind, e.Field, e.Msg)
}

// Validate checks the plan against the system's node names: known kinds and nodes,
// non-negative and non-decreasing times, restarts only of crashed nodes, crashes only
// of running nodes, heals only of an existing partition or cut, sane parameters.
func (p Plan) Validate(names []string) error {
	idx := map[string]bool{}
	for _, n := range names {
		idx[n] = true
	}
	down := map[string]bool{}
	downUntil := map[string]Duration{} // the end of a crash-send's window
	partitioned := false
	cuts := map[[2]string]bool{}
	var prev Duration
	for i, e := range p.Events {
		bad := func(field, format string, a ...any) error {
			return &ValidationError{Entry: i, Kind: e.Kind, Field: field, Msg: fmt.Sprintf(format, a...)}
		}
		node := func(field, n string, wildcard bool) error {
			if n == "" {
				return bad(field, "missing node name")
			}
			if wildcard && n == "*" {
				return nil
			}
			if !idx[n] {
				return bad(field, "unknown node %s (nodes: %s)", short(n), nodeList(names))
			}
			return nil
		}
		if e.At < 0 {
			return bad("at", "negative time %v", time.Duration(e.At))
		}
		if e.At > Duration(MaxAt) {
			return bad("at", "time %v is later than the limit of %v", time.Duration(e.At), MaxAt)
		}
		if e.At < prev {
			return bad("at", "time %v is before the previous entry's %v (entries must be in time order)", time.Duration(e.At), time.Duration(prev))
		}
		prev = e.At
		switch e.Kind {
		case "crash":
			if err := node("node", e.Node, false); err != nil {
				return err
			}
			if down[e.Node] {
				return bad("node", "%q is already crashed", e.Node)
			}
			down[e.Node] = true
		case "crash-send":
			if err := node("node", e.Node, false); err != nil {
				return err
			}
			if down[e.Node] {
				return bad("node", "%q is already crashed", e.Node)
			}
			if e.For == 0 {
				return bad("for", "missing or zero: the window in which the node crashes mid-send (e.g. \"for\": \"200ms\")")
			}
			if e.For < 0 || e.For > Duration(MaxAt) {
				return bad("for", "duration %v not in (0, %v]", time.Duration(e.For), MaxAt)
			}
			down[e.Node] = true
			downUntil[e.Node] = e.At + e.For
		case "restart":
			if err := node("node", e.Node, false); err != nil {
				return err
			}
			if !down[e.Node] {
				return bad("node", "%q is running (restart needs an earlier crash)", e.Node)
			}
			if u, ok := downUntil[e.Node]; ok && e.At <= u {
				return bad("at", "restart of %q at %v is within its crash-send window (until %v): it must come after", e.Node, time.Duration(e.At), time.Duration(u))
			}
			delete(down, e.Node)
			delete(downUntil, e.Node)
		case "partition":
			if len(e.Groups) == 0 {
				return bad("groups", "a partition needs at least one group")
			}
			seen := map[string]bool{}
			for _, g := range e.Groups {
				if len(g) == 0 {
					return bad("groups", "empty group")
				}
				for _, n := range g {
					if err := node("groups", n, false); err != nil {
						return err
					}
					if seen[n] {
						return bad("groups", "node %q is in two groups", n)
					}
					seen[n] = true
				}
			}
			if len(seen) == len(names) && len(e.Groups) == 1 {
				return bad("groups", "one group holding every node partitions nothing")
			}
			partitioned = true
		case "cut":
			if err := node("from", e.From, false); err != nil {
				return err
			}
			if err := node("to", e.To, false); err != nil {
				return err
			}
			if e.From == e.To {
				return bad("to", "a cut needs two different nodes")
			}
			cuts[[2]string{e.From, e.To}] = true
		case "restore":
			if err := node("from", e.From, false); err != nil {
				return err
			}
			if err := node("to", e.To, false); err != nil {
				return err
			}
			if !cuts[[2]string{e.From, e.To}] {
				return bad("to", "link %s->%s is not cut", e.From, e.To)
			}
			delete(cuts, [2]string{e.From, e.To})
		case "heal":
			if !partitioned && len(cuts) == 0 {
				return bad("kind", "heal without an earlier partition or cut")
			}
			partitioned = false
			clear(cuts)
		case "spike":
			if err := node("from", e.From, true); err != nil {
				return err
			}
			if err := node("to", e.To, true); err != nil {
				return err
			}
			if e.Extra == 0 {
				return bad("extra", "missing or zero: the latency the spike adds (e.g. \"extra\": \"50ms\")")
			}
			if e.Extra < 0 || e.Extra > Duration(MaxMagnitude) {
				return bad("extra", "extra latency %v not in (0, %v]", time.Duration(e.Extra), MaxMagnitude)
			}
			if e.For == 0 {
				return bad("for", "missing or zero: how long the spike lasts (e.g. \"for\": \"500ms\")")
			}
			if e.For < 0 || e.For > Duration(MaxAt) {
				return bad("for", "duration %v not in (0, %v]", time.Duration(e.For), MaxAt)
			}
		case "skew":
			if err := node("node", e.Node, false); err != nil {
				return err
			}
			if e.Step == 0 && e.DriftPPM == nil {
				return bad("step", "a skew needs a step or a drift_ppm")
			}
			if e.Step < -Duration(MaxMagnitude) || e.Step > Duration(MaxMagnitude) {
				return bad("step", "clock step %v is larger than %v", time.Duration(e.Step), MaxMagnitude)
			}
			if e.DriftPPM != nil && (*e.DriftPPM < -MaxDriftPPM || *e.DriftPPM > MaxDriftPPM) {
				return bad("drift_ppm", "%d is outside [%d, %d]", *e.DriftPPM, -MaxDriftPPM, MaxDriftPPM)
			}
		case "burst":
			if e.Loss < 0 || e.Loss > 1 || math.IsNaN(e.Loss) {
				return bad("loss", "probability %v not in [0, 1]", e.Loss)
			}
			if e.Dup < 0 || e.Dup > 1 || math.IsNaN(e.Dup) {
				return bad("dup", "probability %v not in [0, 1]", e.Dup)
			}
			if e.Loss == 0 && e.Dup == 0 {
				return bad("loss", "a burst needs loss or dup above 0")
			}
			if e.For == 0 {
				return bad("for", "missing or zero: how long the burst lasts (e.g. \"for\": \"500ms\")")
			}
			if e.For < 0 || e.For > Duration(MaxAt) {
				return bad("for", "duration %v not in (0, %v]", time.Duration(e.For), MaxAt)
			}
		case "":
			return bad("kind", "missing kind (one of %s)", strings.Join(Kinds, ", "))
		default:
			return bad("kind", "unknown kind %q (one of %s)", e.Kind, strings.Join(Kinds, ", "))
		}
	}
	return nil
}

// nodeList shows a system's node names in an error, the first ten at most.
func nodeList(names []string) string {
	if len(names) <= 10 {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:10], ", ") + fmt.Sprintf(", … %d more", len(names)-10)
}

// Compile validates the plan and converts it to kernel faults with their times.
func (p Plan) Compile(names []string) ([]sim.Time, []sim.Fault, error) {
	if err := p.Validate(names); err != nil {
		return nil, nil, err
	}
	pos := make(map[string]sim.NodeID, len(names))
	for i, n := range names {
		pos[n] = sim.NodeID(i)
	}
	id := func(n string) sim.NodeID {
		if n == "*" {
			return sim.Any
		}
		return pos[n] // Validate found every name
	}
	ts := make([]sim.Time, len(p.Events))
	fs := make([]sim.Fault, len(p.Events))
	for i, e := range p.Events {
		ts[i] = sim.Time(e.At)
		f := sim.Fault{Extra: time.Duration(e.Extra), For: time.Duration(e.For), Step: time.Duration(e.Step), Loss: e.Loss, Dup: e.Dup}
		switch e.Kind {
		case "crash":
			f.Kind, f.Node = sim.FaultCrash, id(e.Node)
		case "crash-send":
			f.Kind, f.Node = sim.FaultCrashSend, id(e.Node)
		case "restart":
			f.Kind, f.Node = sim.FaultRestart, id(e.Node)
		case "partition":
			f.Kind = sim.FaultPartition
			for _, g := range e.Groups {
				ids := make([]sim.NodeID, len(g))
				for j, n := range g {
					ids[j] = id(n)
				}
				f.Groups = append(f.Groups, ids)
			}
		case "cut":
			f.Kind, f.From, f.To = sim.FaultCut, id(e.From), id(e.To)
		case "restore":
			f.Kind, f.From, f.To = sim.FaultRestore, id(e.From), id(e.To)
		case "heal":
			f.Kind = sim.FaultHeal
		case "spike":
			f.Kind, f.From, f.To = sim.FaultSpike, id(e.From), id(e.To)
		case "skew":
			f.Kind, f.Node = sim.FaultSkew, id(e.Node)
			if e.DriftPPM != nil {
				f.SetDrift, f.DriftPPM = true, *e.DriftPPM
			}
		case "burst":
			f.Kind = sim.FaultBurst
		}
		fs[i] = f
	}
	return ts, fs, nil
}

// Apply validates the plan and schedules it on k.
func (p Plan) Apply(k *sim.Kernel) error {
	ts, fs, err := p.Compile(k.Names())
	if err != nil {
		return err
	}
	for i := range fs {
		k.Schedule(ts[i], fs[i])
	}
	return nil
}

// Settlement says when and how a plan leaves the system.
type Settlement struct {
	// At is the time from which no fault is in force any more except the permanent
	// ones below: every node that will restart is up, every spike and burst is over,
	// and (unless Split) no partition or cut remains.
	At sim.Time
	// Down lists nodes crashed for good (never restarted by the plan), sorted.
	Down []string
	// Split reports a partition or cut still in force at the end of the plan.
	Split bool
	// Groups is the partition in force at the end (nil if none): the listed groups;
	// every unlisted node is in one more group. Cuts are the directed links still cut,
	// sorted.
	Groups [][]string
	Cuts   [][2]string
}

// Reachable reports whether a message from node from reaches node to once the plan is
// over (crashes aside): not across the final partition, not over a link left cut.
func (s Settlement) Reachable(from, to string) bool {
	if slices.Contains(s.Cuts, [2]string{from, to}) {
		return false
	}
	if s.Groups == nil {
		return true
	}
	group := func(n string) int {
		for i, g := range s.Groups {
			if slices.Contains(g, n) {
				return i
			}
		}
		return -1 // the unlisted nodes' group
	}
	return group(from) == group(to)
}

// Settled returns when the plan leaves the system whole (or as whole as it will get).
// Liveness bounds count from Settlement.At; a protocol can only be required to make
// progress despite Down nodes or a Split if it claims to tolerate them.
func (p Plan) Settled() Settlement {
	var t Duration
	st := newConnectivity()
	for _, e := range p.Events {
		end := e.At
		if (e.Kind == "spike" || e.Kind == "burst" || e.Kind == "crash-send") && e.At+e.For > end {
			end = e.At + e.For
		}
		t = max(t, end)
		st.apply(e)
	}
	return st.settlement(sim.Time(t))
}

// Timeline returns the connectivity the plan leaves at each instant it has events: a
// Settlement per distinct event time (At: the instant it holds from, until the next
// one's), preceded by the fault-free one from time 0 unless an event is at 0.
func (p Plan) Timeline() []Settlement {
	st := newConnectivity()
	out := []Settlement{st.settlement(0)}
	for i := 0; i < len(p.Events); {
		at := p.Events[i].At
		for ; i < len(p.Events) && p.Events[i].At == at; i++ {
			st.apply(p.Events[i])
		}
		if s := st.settlement(sim.Time(at)); at == 0 {
			out[0] = s
		} else {
			out = append(out, s)
		}
	}
	return out
}

// connectivity is what a plan's events leave in force: nodes down, the partition,
// the cut links.
type connectivity struct {
	down        map[string]bool
	partitioned bool
	groups      [][]string
	cuts        map[[2]string]bool
}

func newConnectivity() *connectivity {
	return &connectivity{down: map[string]bool{}, cuts: map[[2]string]bool{}}
}

func (c *connectivity) apply(e Event) {
	switch e.Kind {
	case "crash", "crash-send":
		c.down[e.Node] = true
	case "restart":
		delete(c.down, e.Node)
	case "partition":
		c.partitioned, c.groups = true, e.Groups
	case "cut":
		c.cuts[[2]string{e.From, e.To}] = true
	case "restore":
		delete(c.cuts, [2]string{e.From, e.To})
	case "heal":
		c.partitioned = false
		clear(c.cuts)
	}
}

func (c *connectivity) settlement(at sim.Time) Settlement {
	s := Settlement{At: at, Split: c.partitioned || len(c.cuts) > 0}
	for n := range c.down {
		s.Down = append(s.Down, n)
	}
	slices.Sort(s.Down)
	if c.partitioned {
		s.Groups = c.groups
	}
	for k := range c.cuts {
		s.Cuts = append(s.Cuts, k)
	}
	slices.SortFunc(s.Cuts, func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) })
	return s
}

// Uses reports whether the plan has an event of the given kind.
func (p Plan) Uses(kind string) bool {
	return slices.ContainsFunc(p.Events, func(e Event) bool { return e.Kind == kind })
}

// Load reads and parses a plan file (validation needs the node names: see Validate).
func Load(path string) (Plan, error) {
	b, err := inputfile.Read(path, MaxPlanBytes)
	if err != nil {
		return Plan{}, fmt.Errorf("faults: %w", err)
	}
	p, err := Parse(b)
	if err != nil {
		return Plan{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// JSON returns the plan as indented JSON.
func (p Plan) JSON() []byte {
	if p.Events == nil {
		p.Events = []Event{}
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return append(b, '\n')
}

// String is a one-line summary ("crash n1@1s, restart n1@3s").
func (p Plan) String() string {
	if len(p.Events) == 0 {
		return "no faults"
	}
	parts := make([]string, len(p.Events))
	for i, e := range p.Events {
		what := e.Kind
		switch e.Kind {
		case "crash", "crash-send", "restart", "skew":
			what += " " + e.Node
		case "partition":
			gs := make([]string, len(e.Groups))
			for j, g := range e.Groups {
				gs[j] = strings.Join(g, ",")
			}
			what += " " + strings.Join(gs, "|")
		case "cut", "restore", "spike":
			what += " " + e.From + "->" + e.To
		}
		parts[i] = fmt.Sprintf("%s@%v", what, time.Duration(e.At))
	}
	return strings.Join(parts, ", ")
}
