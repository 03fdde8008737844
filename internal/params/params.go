// Package params resolves `-p name=value` parameters against declared defaults and
// reads them through typed getters. Scenarios (scenarios.Params) and models
// (model.Params) share it, so both report bad input in the same words.
//
// The getters record the first malformed value instead of returning an error, so a
// Build function reads every parameter first and checks Err once; the caller turns
// that error into a one-line input error (exit 2).
package params

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Def documents one parameter: its name, default value and help line.
type Def struct {
	Name    string
	Default string
	Help    string
}

// Set holds resolved parameters: defaults overridden by assignments.
type Set struct {
	what string // "scenario" or "model", for messages
	defs []Def
	vals map[string]string
	err  error
	// wants, when probing, holds what each getter read accepts (see Probe).
	wants map[string]string
}

// New resolves overrides against defs. An unknown name is an error naming the known
// ones; what ("scenario", "model") names the owner in that message.
func New(what string, defs []Def, overrides map[string]string) (*Set, error) {
	p := &Set{what: what, defs: defs, vals: map[string]string{}}
	for _, d := range defs {
		p.vals[d.Name] = d.Default
	}
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		if !slices.ContainsFunc(defs, func(d Def) bool { return d.Name == k }) {
			if len(defs) == 0 {
				return nil, fmt.Errorf("unknown parameter %s (this %s takes none)", short(k), what)
			}
			names := make([]string, len(defs))
			for i, d := range defs {
				names[i] = d.Name
			}
			return nil, fmt.Errorf("unknown parameter %s (known: %s)", short(k), strings.Join(names, ", "))
		}
		p.vals[k] = overrides[k]
	}
	return p, nil
}

// ParseAssignments parses "name=value" strings (the -p flags): a missing "=", an empty
// name or a name given twice is an error.
func ParseAssignments(as []string) (map[string]string, error) {
	m := map[string]string{}
	for _, a := range as {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("malformed parameter %s (want name=value)", short(a))
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("parameter %s given twice", short(k))
		}
		m[k] = v
	}
	return m, nil
}

// Values returns every resolved parameter (for trace headers and reports).
func (p *Set) Values() map[string]string { return maps.Clone(p.vals) }

// NonDefault returns "name=value" for every parameter that differs from its default,
// sorted (for reproduce commands).
func (p *Set) NonDefault() []string {
	var out []string
	for _, d := range p.defs {
		if v := p.vals[d.Name]; v != d.Default {
			out = append(out, d.Name+"="+v)
		}
	}
	slices.Sort(out)
	return out
}

// Err returns the first malformed value met by a getter; while probing, ErrProbe.
func (p *Set) Err() error {
	if p.wants != nil {
		return ErrProbe
	}
	return p.err
}

// ErrProbe is what Err returns on a probing set (see Probe).
var ErrProbe = errors.New("params: probing what the parameters accept")

// Probe makes p record, for every parameter a getter reads, what that getter accepts
// ("an integer in 1..8", in the words of its error), and makes Err return ErrProbe. A
// Build function or an experiment reads its parameters and checks Err before it does
// any work, so calling it on a probing set costs nothing and tells what each of its
// parameters accepts (simrun describe); a check of its own through Reject is recorded
// too.
func (p *Set) Probe() { p.wants = map[string]string{} }

// Wants returns what each parameter read while probing accepts, by name (nil when not
// probing). A parameter no getter read before the first Err check is missing.
func (p *Set) Wants() map[string]string { return maps.Clone(p.wants) }

// note records, while probing, what the getter reading name accepts (the last
// getter's words win: IntRange reads through Int).
func (p *Set) note(name, want string) {
	if p.wants != nil {
		p.wants[name] = want
	}
}

// What the getters accept, in the words of their errors.
const (
	wantInt      = "an integer"
	wantFloat    = "a number in [-1e9, 1e9]"
	wantProb     = "a probability in [0, 1]"
	wantDuration = "a duration from 0 to 24h, such as 500ms or 2s"
	wantPositive = "a duration from 1ms to 24h, such as 500ms or 2s"
	wantBool     = "true or false"
	wantList     = "a comma-separated list"
)

// raw returns a declared parameter's value; reading an undeclared one is a bug in the
// scenario or model, not bad input, hence the panic.
func (p *Set) raw(name string) string {
	v, ok := p.vals[name]
	if !ok {
		panic(fmt.Sprintf("params: %s parameter %s is not declared", p.what, name))
	}
	return v
}

func (p *Set) fail(name, v, want string) {
	if p.err == nil {
		p.err = fmt.Errorf("parameter %s=%s: want %s", name, short(v), want)
	}
}

// String returns the parameter's value.
func (p *Set) String(name string) string { return p.raw(name) }

// Int returns the parameter as an int.
func (p *Set) Int(name string) int {
	p.note(name, wantInt)
	v := p.raw(name)
	n, err := strconv.Atoi(v)
	if err != nil {
		p.fail(name, v, wantInt)
	}
	return n
}

// MaxCount bounds every count read by IntMin: no scenario's run finishes with a
// million of anything per parameter, and an unbounded count ran the process out of
// memory before a single event (a billion stages). Parameters that size a system
// (nodes, stages, agents) use IntRange with bounds of their own.
const MaxCount = 1_000_000

// IntMin returns the parameter as an int in lo..MaxCount.
func (p *Set) IntMin(name string, lo int) int { return p.IntRange(name, lo, MaxCount) }

// IntRange returns the parameter as an int in [lo, hi].
func (p *Set) IntRange(name string, lo, hi int) int {
	n := p.Int(name)
	if p.wants != nil || n < lo || n > hi {
		want := fmt.Sprintf("an integer in %d..%d", lo, hi)
		p.note(name, want)
		if n < lo || n > hi {
			p.fail(name, p.raw(name), want)
		}
	}
	return n
}

// MaxFloat bounds the magnitude of every number read by Float.
const MaxFloat = 1e9

// Float returns the parameter as a float64 of magnitude at most MaxFloat.
func (p *Set) Float(name string) float64 {
	p.note(name, wantFloat)
	v := p.raw(name)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.Abs(f) > MaxFloat {
		p.fail(name, v, wantFloat)
		return 0
	}
	return f
}

// Prob returns the parameter as a probability in [0, 1].
func (p *Set) Prob(name string) float64 {
	p.note(name, wantProb)
	v := p.raw(name)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= 0 && f <= 1) {
		p.fail(name, v, wantProb)
		return 0
	}
	return f
}

// MaxDuration bounds every duration parameter: a day of virtual time, the limit
// fault plans have too (a million-hour deadline simulated until memory ran out).
const MaxDuration = 24 * time.Hour

// MinPeriod is the shortest positive duration (PositiveDuration, DurationList): a
// period of a nanosecond scheduled events until memory ran out, and no protocol here
// acts faster than a millisecond.
const MinPeriod = time.Millisecond

// Duration returns the parameter as a duration ("1.5s") in [0, MaxDuration]: no
// parameter is a negative duration (one made a run start its workload before time
// zero and the protocol panic).
func (p *Set) Duration(name string) time.Duration {
	p.note(name, wantDuration)
	v := p.raw(name)
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > MaxDuration {
		p.fail(name, v, wantDuration)
	}
	return d
}

// PositiveDuration returns the parameter as a duration in [MinPeriod, MaxDuration].
func (p *Set) PositiveDuration(name string) time.Duration {
	p.note(name, wantPositive)
	v := p.raw(name)
	d, err := time.ParseDuration(v)
	if err != nil || d < MinPeriod || d > MaxDuration {
		p.fail(name, v, wantPositive)
	}
	return d
}

// Bool returns the parameter as a bool.
func (p *Set) Bool(name string) bool {
	p.note(name, wantBool)
	v := p.raw(name)
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.fail(name, v, wantBool)
	}
	return b
}

// List returns the parameter split on commas, blanks trimmed and empty elements
// dropped.
func (p *Set) List(name string) []string {
	p.note(name, wantList)
	var out []string
	for _, s := range strings.Split(p.raw(name), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// DurationList returns the parameter as a comma-separated list of distinct durations
// in [MinPeriod, MaxDuration] (an empty list, a bad element or a repeated one is an
// input error).
func (p *Set) DurationList(name string) []time.Duration {
	const want = "a comma-separated list of distinct durations from 1ms to 24h (e.g. 50ms,100ms)"
	return listOf(p, name, want, func(s string) (time.Duration, bool) {
		d, err := time.ParseDuration(s)
		return d, err == nil && d >= MinPeriod && d <= MaxDuration
	})
}

// ProbList returns the parameter as a comma-separated list of distinct probabilities
// in [0, 1] (an empty list, a bad element or a repeated one is an input error).
func (p *Set) ProbList(name string) []float64 {
	const want = "a comma-separated list of distinct probabilities in [0, 1] (e.g. 0,0.1,0.2)"
	return listOf(p, name, want, func(s string) (float64, bool) {
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil && f >= 0 && f <= 1
	})
}

// Reject records that the parameter's value is not what the reader wants (a check
// no getter makes, such as one parameter bounded by another): the same one-line
// input error a getter records.
func (p *Set) Reject(name, want string) { p.fail(name, p.raw(name), want) }

// IntList returns the parameter as a comma-separated list of distinct integers in
// lo..hi (an empty list, a bad element or a repeated one is an input error).
func (p *Set) IntList(name string, lo, hi int) []int {
	want := fmt.Sprintf("a comma-separated list of distinct integers in %d..%d", lo, hi)
	return listOf(p, name, want, func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil && n >= lo && n <= hi
	})
}

// MaxList bounds the elements of a list parameter.
const MaxList = 100

// listOf parses a comma-separated list with parse; an empty list, an empty element
// ("1,,2"), a bad, repeated or 101st element records want as the error.
func listOf[T comparable](p *Set, name, want string, parse func(string) (T, bool)) []T {
	p.note(name, want)
	raw := p.raw(name)
	var out []T
	for _, s := range strings.Split(raw, ",") {
		v, ok := parse(strings.TrimSpace(s))
		if !ok || slices.Contains(out, v) || len(out) == MaxList {
			p.fail(name, raw, want)
			return nil
		}
		out = append(out, v)
	}
	return out
}

// short quotes a user's value for an error line, cut to 60 runes.
func short(s string) string {
	if r := []rune(s); len(r) > 60 {
		return strconv.Quote(string(r[:60])) + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return strconv.Quote(s)
}
