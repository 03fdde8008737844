// Package checker turns a finished run into verdicts: safety invariants over the
// history and final node states, bounded liveness after the faults heal, and (see
// linearizability.go) linearizability through porcupine.
//
// Checkers read only the run's Result — observations and final states — never a
// running node. Verdict classes are distinct: a safety violation, a liveness
// violation, a protocol crash (panic), a bound reached (possible livelock) and an
// inconclusive check (unknown) are never folded into one another, and "unknown" is
// never reported as ok.
//
// What is here:
//   - History (history.go): the observations in order, with filters; Invariant (checked
//     at every observation), Always (a fold over the history so far) and FinalStates
//     (over the nodes' final states) build safety properties whose verdict names the
//     first observation that breaks them. Bounded liveness ("after the heal at H every
//     X completes by H+B") is scenarios.Bounded, over the Run's Settled time.
//   - Linearizability (linearizability.go): Ops pairs call and return observations
//     into Operations (an unanswered call is pending); CheckLinearizable partitions
//     them by Operation.Key and then by the model's own Partition, and checks every
//     partition at once on porcupine's goroutines. Only an illegal history is
//     re-checked key by key, in sorted key order, to name the first illegal key and
//     draw porcupine's HTML visualization of it into Run.ArtifactDir; so the key named
//     does not depend on scheduling. A timeout gives Unknown; a panic in a model is
//     caught (porcupine's goroutines would otherwise kill the process) and reported as
//     Unknown too, since it is a bug in the check, not a verdict on the protocol.
//   - Models (models.go): Register, KV, Counters, Semaphore, Pool, Queue and
//     LeaseRegister, each documented with its input and output types. A nil output
//     is a pending operation, accepted by every model from every state.
//
// Choices the issue left open: Operation.Call/Return are observation indices, not
// virtual times (indices are a total order consistent with time, so operations
// recorded in the same instant are still ordered the way they happened); refusals in
// the allocation and lease models are strict by default (Refusals) because a refusal
// while a unit is free is a liveness-relevant bug the protocols should not have.
package checker

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/simrun-dev/simrun/sim"
)

// Class is a verdict class.
type Class uint8

const (
	// OK: the property holds on this run.
	OK Class = iota
	// Safety: something bad happened.
	Safety
	// Crash: a protocol handler panicked (the run was cut short).
	Crash
	// Liveness: something good did not happen within its bound.
	Liveness
	// Bound: the run hit its event or time bound (possible livelock).
	Bound
	// Unknown: the check could not decide (e.g. the linearizability search timed out).
	Unknown
	// Expected: the property was violated in a scenario that breaks an assumption the
	// property rests on (message loss where the protocol assumes reliable links, say),
	// and the scenario declares that violation expected and says why. Not a failure:
	// a sweep's exit 1 always means a bug; expected violations are counted apart.
	Expected
)

var classNames = [...]string{"ok", "safety", "crash", "liveness", "bound", "unknown", "expected"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// MarshalText implements encoding.TextMarshaler.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (c *Class) UnmarshalText(b []byte) error {
	i := slices.Index(classNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("checker: unknown verdict class %q", b)
	}
	*c = Class(i)
	return nil
}

// Classes lists every class in severity order (most severe first, OK last).
var Classes = []Class{Safety, Crash, Liveness, Bound, Unknown, Expected, OK}

func severity(c Class) int { return slices.Index(Classes, c) }

// Verdict is the outcome of one property on one run.
type Verdict struct {
	Class    Class  `json:"class"`
	Property string `json:"property"`
	Detail   string `json:"detail,omitempty"`
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	// Repro is the exact command that reproduces the run.
	Repro string `json:"repro,omitempty"`
	// Artifact is a file written by the check (e.g. porcupine's visualization).
	Artifact string `json:"artifact,omitempty"`
	// Checked and Exempt are how many items a passing check judged and how many it
	// exempted (Run.Count, or read from its note); Counted says it said so. A passing
	// verdict with Counted and Checked 0 is vacuous: it judged nothing.
	Checked int64 `json:"checked,omitempty"`
	Exempt  int64 `json:"exempt,omitempty"`
	Counted bool  `json:"counted,omitempty"`
}

// Vacuous reports whether v passed without judging anything.
func (v Verdict) Vacuous() bool { return v.Class == OK && v.Counted && v.Checked == 0 }

// Failed reports whether v is anything but OK or an expected violation.
func (v Verdict) Failed() bool { return v.Class != OK && v.Class != Expected }

// Expect turns the safety or liveness violations in vs of the properties listed in
// expected (property name → why the scenario expects it to fail) into Expected
// verdicts whose detail says why; other verdicts are left as they are.
func Expect(vs []Verdict, expected map[string]string) {
	for i := range vs {
		why, ok := expected[vs[i].Property]
		if ok && (vs[i].Class == Safety || vs[i].Class == Liveness) {
			vs[i].Class = Expected
			vs[i].Detail = "expected here (" + why + "): " + vs[i].Detail
		}
	}
}

func (v Verdict) String() string {
	s := fmt.Sprintf("%s %s", v.Class, v.Property)
	if v.Detail != "" {
		s += ": " + v.Detail
	}
	return s
}

// Run is what a property sees: the finished run and its context.
type Run struct {
	*sim.Result
	Scenario string
	// Settled is the time from which the fault plan left the system whole (all nodes
	// that will restart are up, no partition); liveness bounds count from it.
	Settled sim.Time
	// Down lists nodes the plan crashed for good.
	Down []string
	// Split reports a partition or cut the plan never healed.
	Split bool
	// ArtifactDir is where a check may write files ("" = nowhere).
	ArtifactDir string
	// Visualize asks linearizability checks to write porcupine's visualization into
	// ArtifactDir even when the history is linearizable (a run report links it);
	// otherwise only an illegal history gets one.
	Visualize bool
	// Artifacts collects the files written (set by checks through AddArtifact).
	artifacts []string
	// spans are the client operations linearizability checks read (see Spans).
	spans []OpSpan
	// note is what the property being evaluated said about a pass (see Note).
	note string
	// checked, exempt and counted: what it counted (see Count).
	checked, exempt int64
	counted         bool
}

// Count lets a check say how many items it judged and how many it exempted (a
// crashed-for-good node's work, say): they become the verdict's Checked and Exempt,
// and a pass that judged nothing is reported as vacuous. Checks that only Note a text
// of the form "N ... checked, M ... exempt" are counted from it.
func (r *Run) Count(checked, exempt int) {
	r.checked, r.exempt, r.counted = int64(checked), int64(exempt), true
}

var (
	checkedNote = regexp.MustCompile(`^(\d+) (?:[^,;()]* )?(?:checked|compared)\b`)
	exemptNote  = regexp.MustCompile(`\b(\d+) (?:[a-zA-Z-]+ ){0,2}exempt\b`)
)

// countsOf reads "N ... checked" at the start of a note and "M ... exempt" in it.
func countsOf(note string) (checked, exempt int64, ok bool) {
	m := checkedNote.FindStringSubmatch(note)
	if m == nil {
		return 0, 0, false
	}
	checked, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if e := exemptNote.FindStringSubmatch(note); e != nil {
		exempt, _ = strconv.ParseInt(e[1], 10, 64)
	}
	return checked, exempt, true
}

// Note lets a check say what a pass covered ("12 checked"): it becomes the detail of
// an ok verdict, so a check that passed because it had nothing to look at is visible
// as such. A failing or inconclusive check's error replaces the note.
func (r *Run) Note(s string) { r.note = s }

// AddArtifact records a file a check wrote (reported in its verdict).
func (r *Run) AddArtifact(path string) { r.artifacts = append(r.artifacts, path) }

// OpSpan is one client operation of a run in virtual time, as a linearizability check
// read it: the run report plots latency over time from these.
type OpSpan struct {
	Property string   `json:"property"`
	Key      string   `json:"key,omitempty"`
	Client   int      `json:"client"`
	Call     sim.Time `json:"call"`
	Return   sim.Time `json:"return,omitempty"`
	// Pending: the call never returned (Return is unset).
	Pending bool `json:"pending,omitempty"`
}

// Spans returns the operations the run's linearizability checks read, in the order
// the checks ran.
func (r *Run) Spans() []OpSpan { return r.spans }

// NodeID returns the id of the named node, or -1.
func (r *Run) NodeID(name string) sim.NodeID {
	for i, f := range r.Final {
		if f.Name == name {
			return sim.NodeID(i)
		}
	}
	return -1
}

// Property is a named check over a finished run. Check returns nil when the property
// holds, an error describing the violation otherwise, or an Inconclusive error when it
// cannot decide.
type Property struct {
	Name string
	// Class is the class of a violation: Safety or Liveness.
	Class Class
	Check func(r *Run) error
	// NeedsCompleteRun skips the check (verdict Bound or Crash instead) when the run
	// ended at a bound or by a panic, e.g. liveness and leftover checks that only make
	// sense at the planned end.
	NeedsCompleteRun bool
}

// InconclusiveError marks a check that could not decide.
type InconclusiveError struct{ Reason string }

func (e *InconclusiveError) Error() string { return "inconclusive: " + e.Reason }

// Inconclusive returns an InconclusiveError.
func Inconclusive(format string, a ...any) error {
	return &InconclusiveError{Reason: fmt.Sprintf(format, a...)}
}

// Evaluate runs every property on r and returns one verdict per property, preceded by a
// Crash verdict if a handler panicked and a Bound verdict if the run hit a bound.
// Scenario, seed and repro are filled in by the caller.
func Evaluate(r *Run, props []Property) []Verdict {
	var vs []Verdict
	r.spans = nil // each evaluation records the operations afresh
	complete := true
	switch r.Outcome {
	case sim.Panicked:
		complete = false
		d := "protocol panic"
		if r.Panic != nil {
			d = r.Panic.Error()
		}
		vs = append(vs, Verdict{Class: Crash, Property: "no-panic", Detail: d})
	case sim.TimeBound, sim.EventBound:
		complete = false
		vs = append(vs, Verdict{Class: Bound, Property: "run-limit",
			Detail: fmt.Sprintf("%s reached at %v after %d events (possible livelock)", r.Outcome, r.Time, r.Events)})
	}
	for _, p := range props {
		if p.NeedsCompleteRun && !complete {
			continue
		}
		v := Verdict{Class: OK, Property: p.Name}
		n := len(r.artifacts)
		r.note, r.checked, r.exempt, r.counted = "", 0, 0, false
		err := safeCheck(p, r)
		var inc *InconclusiveError
		switch {
		case err == nil:
			v.Detail = r.note
			if r.counted {
				v.Checked, v.Exempt, v.Counted = r.checked, r.exempt, true
			} else if c, e, ok := countsOf(r.note); ok {
				v.Checked, v.Exempt, v.Counted = c, e, true
			}
		case errors.As(err, &inc):
			v.Class, v.Detail = Unknown, err.Error()
		default:
			v.Class, v.Detail = p.Class, err.Error()
			if v.Class == OK {
				v.Class = Safety
			}
		}
		if len(r.artifacts) > n {
			v.Artifact = r.artifacts[len(r.artifacts)-1]
		}
		vs = append(vs, v)
	}
	return vs
}

// safeCheck runs a check; a panicking checker is reported as an inconclusive check
// naming the panic (a checker bug must not pass as ok, nor crash a sweep).
func safeCheck(p Property, r *Run) (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = Inconclusive("checker %s panicked: %v", p.Name, x)
		}
	}()
	return p.Check(r)
}

// Worst returns the most severe verdict (the first of that class), or an OK verdict if
// vs is empty.
func Worst(vs []Verdict) Verdict {
	if len(vs) == 0 {
		return Verdict{Class: OK, Property: "all"}
	}
	w := vs[0]
	for _, v := range vs[1:] {
		if severity(v.Class) < severity(w.Class) {
			w = v
		}
	}
	return w
}
