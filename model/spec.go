package model

import (
	"errors"
	"fmt"

	"github.com/simrun-dev/simrun/sim"
)

// Action labels one transition of a Spec. The checker never interprets it: it passes it
// back to Spec.ActionName when it renders a trace. A spec is free to pack whatever it
// needs into the 64 bits (an action kind and its parameters, typically).
type Action uint64

// Spec is a plain transition system over states of type S: initial states, a
// deterministic successor function, a fingerprint, and properties. It is the form a
// reference model (the TLA+ TwoPhase port in model/twophase) takes, and what an Actors
// system compiles to.
//
// Contract:
//   - Init and Next are deterministic: the same state gives the same successors in the
//     same order (a counterexample is stored as "the k-th successor of ..." and
//     re-executed to be printed and replayed).
//   - Next, Fingerprint, Boundary, Describe and the properties are called from several
//     goroutines at once (parallel BFS) and must not mutate their arguments: a state,
//     once emitted, is immutable.
//   - Fingerprint is a function of the state's canonical value: equal states give equal
//     fingerprints. Distinct states should give distinct fingerprints; when the
//     fingerprint is injective (a compact state packed into 64 bits) set Injective and
//     the reported collision probability is exactly zero.
type Spec[S any] struct {
	// Name names the model in traces and reports.
	Name string
	// Init returns the initial states (at least one).
	Init func() []S
	// Next calls emit once per enabled action, with the action's label and the successor
	// state. Self-loops are emitted like any other successor: TLC counts them in the
	// total of generated states, and so do we.
	Next func(s S, emit func(a Action, next S))
	// Fingerprint returns a 64-bit hash of the state's canonical value.
	Fingerprint func(s S) uint64
	// Injective says Fingerprint never maps two distinct states to one value.
	Injective bool
	// Properties are checked on every reachable state (see Always, Sometimes,
	// Eventually).
	Properties []Property[S]
	// Boundary, when set, bounds the state space (Stateright's within_boundary): a state
	// for which it returns false is counted and checked but not expanded.
	Boundary func(s S) bool
	// ActionName renders an action label for traces ("RMPrepare(r2)"). Optional.
	ActionName func(a Action) string
	// Describe renders a state as a JSON-encodable value for traces. Optional.
	Describe func(s S) any
	// Fairness, for the fair-cycle check (Options.Fair), gives the weak-fairness class
	// of action a from state s: an infinite path on which a class stays enabled must
	// take it. Actions for which it returns false are not fair (a fault, say). Without
	// it no action is fair, and every cycle is admissible.
	Fairness func(s S, a Action) (class uint64, fair bool)
	// Symmetry, when set, declares interchangeable indices (symmetry reduction): it
	// returns the canonical representative of s's orbit under the permutations of
	// those indices — one state per orbit, the same whatever member of the orbit it is
	// given (sorting the whole per-index signature is canonical; sorting a part of the
	// state is not, and makes counts depend on the order states are found). The checker
	// fingerprints representatives, so it explores and counts orbits. Sound only if
	// every property is invariant under the permutations (the checker cannot tell; the
	// model must); it preserves invariant violations and sometimes-witnesses, and is
	// refused with eventually-properties (a cycle up to symmetry is not a cycle of the
	// system). Counterexamples are paths of real states and replay as usual.
	Symmetry func(s S) S

	// record, when set (actor systems), renders trace records instead of the generic
	// init/step records built from ActionName and Describe.
	record recorder[S]
	// failed, when set, is asked after a search: a non-nil error replaces the result
	// (actor systems: a Memoize declaration the search refuted).
	failed func() error
	// weight, when set (actor systems), weighs the actions a random walk chooses from
	// (Options.Strategy Random); without it a walk picks uniformly.
	weight func(s S, a Action) float64
	// cover, when set (actor systems), starts counting the rules handler calls cover
	// (Options.Coverage); the function it returns stops and reports the counts.
	cover func() func() *sim.Coverage
	// worker, when set (actor systems), gives a search worker its own Next and a
	// function that takes back a successor the worker discarded without keeping a
	// reference to it (a state already seen, a self-loop), so that the worker's Next
	// may build another successor in its memory.
	worker func() (next func(S, func(Action, S)), recycle func(S))
}

// recorder renders the trace of a path for systems with richer traces than a plain
// spec (actor systems: one simulator record per handler call).
type recorder[S any] interface {
	// initRecords returns the records that create initial state s.
	initRecords(s S) []sim.TraceRecord
	// stepRecord re-executes action a from s and returns its record.
	stepRecord(s S, a Action, next S) sim.TraceRecord
}

// Kind is the kind of a property.
type Kind uint8

const (
	// AlwaysKind: the predicate holds in every reachable state (an invariant). A
	// violation is reported with a shortest path (BFS) to a state where it fails.
	AlwaysKind Kind = iota + 1
	// SometimesKind: the predicate holds in at least one reachable state
	// (reachability). The witness path is reported; a complete search without one is a
	// failure of the property.
	SometimesKind
	// EventuallyKind: on every maximal finite path the predicate holds in some state.
	// Checked by keeping, for each path, whether the predicate has held yet (one bit
	// per eventually-property, part of the explored state and its fingerprint, like a
	// TLA+ history variable). A path that ends in a state without successors and never
	// satisfied the predicate is a violation. Infinite paths (cycles) are checked only
	// with Options.Fair, under weak fairness (see the package doc).
	EventuallyKind
)

func (k Kind) String() string {
	switch k {
	case AlwaysKind:
		return "always"
	case SometimesKind:
		return "sometimes"
	case EventuallyKind:
		return "eventually"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// MarshalText encodes the kind by name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText decodes a kind name.
func (k *Kind) UnmarshalText(b []byte) error {
	for _, c := range []Kind{AlwaysKind, SometimesKind, EventuallyKind} {
		if string(b) == c.String() {
			*k = c
			return nil
		}
	}
	return fmt.Errorf("unknown property kind %q", b)
}

// Property is a named predicate over states with a kind.
type Property[S any] struct {
	Name  string
	Kind  Kind
	Check func(s S) bool
	// Relevant, when set, says in which states the property is about something (an
	// invariant over commits is relevant once something committed): with
	// Options.Coverage the checker counts the distinct states where it held
	// (PropertyResult.Relevant), and a property relevant nowhere is vacuous. Without
	// it, an always-property's relevance is not known; a sometimes-property is
	// non-vacuous when witnessed.
	Relevant func(s S) bool
}

// When returns p with its relevance predicate set (see Property.Relevant).
func (p Property[S]) When(relevant func(s S) bool) Property[S] {
	p.Relevant = relevant
	return p
}

// Always returns an invariant: check must hold in every reachable state.
func Always[S any](name string, check func(s S) bool) Property[S] {
	return Property[S]{Name: name, Kind: AlwaysKind, Check: check}
}

// Sometimes returns a reachability property: check must hold in some reachable state.
func Sometimes[S any](name string, check func(s S) bool) Property[S] {
	return Property[S]{Name: name, Kind: SometimesKind, Check: check}
}

// Eventually returns a property that must hold at some point of every maximal finite
// path (see EventuallyKind for what is and is not checked).
func Eventually[S any](name string, check func(s S) bool) Property[S] {
	return Property[S]{Name: name, Kind: EventuallyKind, Check: check}
}

// maxEventually bounds the number of eventually-properties (one bit each).
const maxEventually = 32

// validate reports a malformed spec (a programming error in the model, reported as an
// error so that the command line exits cleanly).
func (sp *Spec[S]) validate() error {
	if sp.Init == nil || sp.Next == nil || sp.Fingerprint == nil {
		return fmt.Errorf("model %s: Init, Next and Fingerprint are required", sp.Name)
	}
	names := map[string]bool{}
	nev := 0
	for i, p := range sp.Properties {
		if p.Name == "" || p.Check == nil {
			return fmt.Errorf("model %s: property %d needs a name and a predicate", sp.Name, i)
		}
		if names[p.Name] {
			return fmt.Errorf("model %s: duplicate property %q", sp.Name, p.Name)
		}
		names[p.Name] = true
		switch p.Kind {
		case AlwaysKind, SometimesKind:
		case EventuallyKind:
			nev++
		default:
			return fmt.Errorf("model %s: property %q has no kind (use Always, Sometimes or Eventually)", sp.Name, p.Name)
		}
	}
	if nev > 0 && sp.Symmetry != nil {
		return fmt.Errorf("model %s: symmetry reduction preserves invariants and sometimes-witnesses only; it is refused with eventually-properties", sp.Name)
	}
	if nev > maxEventually {
		return fmt.Errorf("model %s: %d eventually-properties (at most %d)", sp.Name, nev, maxEventually)
	}
	return nil
}

// System is what a registered model builds and Check explores: a *Spec[S] (for any S)
// or an *Actors. The interface is closed (its method is unexported).
type System interface {
	compile() (runner, error)
}

// compile implements System.
func (sp *Spec[S]) compile() (runner, error) {
	if sp == nil {
		return nil, errors.New("model: nil spec")
	}
	if err := sp.validate(); err != nil {
		return nil, err
	}
	if sp.Symmetry != nil {
		// Explore orbits: every fingerprint is the representative's.
		red := *sp
		fp, canon := sp.Fingerprint, sp.Symmetry
		red.Fingerprint = func(s S) uint64 { return fp(canon(s)) }
		return &checker[S]{sp: &red}, nil
	}
	return &checker[S]{sp: sp}, nil
}
