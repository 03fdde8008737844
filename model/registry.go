package model

import (
	"fmt"
	"sort"
	"strings"

	"github.com/simrun-dev/simrun/internal/params"
)

// Param documents one model parameter (`simrun check MODEL -p name=value`).
type Param = params.Def

// Params holds a model's parameters: defaults overridden by -p name=value. Typed
// getters (String, Int, IntMin, IntRange, Float, Prob, Duration, PositiveDuration,
// Bool, List) record the first malformed value; Err reports it.
type Params = params.Set

// Model is a named, parameterised system that `simrun check` lists and explores.
// Packages register theirs with Register from an init function (scenarios/<name>/ for
// protocol models, model/twophase for the reference models).
type Model struct {
	// Name is what the command line takes ("twophase", "exactlyonce/small").
	Name string
	// Help is one line for the listing.
	Help   string
	Params []Param
	// Build builds the system for the given parameters. Read parameters through the
	// typed getters of p; a malformed value is reported by the registry after Build
	// returns, so Build may read everything first. An error returned by Build is a
	// bad-input error (exit 2 on the command line).
	Build func(p *Params) (System, error)
	// Portfolio, when set, is what `simrun check MODEL` runs with no -p: a few
	// configurations that together reach every rule of the protocol (TLC's several
	// configurations per spec), each small enough to finish in about a minute on one
	// core. -p picks one configuration instead.
	Portfolio []Config
}

// Config is one configuration of a model's portfolio.
type Config struct {
	// Name labels the configuration in the portfolio's table ("even-stage").
	Name string
	// Help says, in a line, what it is there to reach.
	Help string
	// Params are the parameter overrides (name → value) of the configuration.
	Params map[string]string
	// MaxStates, when > 0, bounds the configuration's search: reaching it makes the
	// configuration inconclusive (a portfolio entry must complete to prove anything).
	MaxStates int64
}

var registry = map[string]*Model{}

// Register adds a model. A duplicate name, a missing Build or a duplicate parameter
// panics: it is a programming error caught by any test run.
func Register(m Model) {
	if m.Name == "" || m.Build == nil {
		panic(fmt.Sprintf("model: Register: %q needs a name and a Build function", m.Name))
	}
	if _, dup := registry[m.Name]; dup {
		panic("model: duplicate model " + m.Name)
	}
	seen := map[string]bool{}
	for _, p := range m.Params {
		if p.Name == "" || seen[p.Name] {
			panic(fmt.Sprintf("model: %s: empty or duplicate parameter %q", m.Name, p.Name))
		}
		seen[p.Name] = true
	}
	names := map[string]bool{}
	for _, c := range m.Portfolio {
		if c.Name == "" || names[c.Name] {
			panic(fmt.Sprintf("model: %s: empty or duplicate portfolio configuration %q", m.Name, c.Name))
		}
		names[c.Name] = true
	}
	mm := m
	registry[m.Name] = &mm
}

// All returns every registered model, sorted by name.
func All() []*Model {
	out := make([]*Model, 0, len(registry))
	for _, m := range registry {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds a registered model by name.
func Lookup(name string) (*Model, error) {
	if m, ok := registry[name]; ok {
		return m, nil
	}
	var near []string
	for _, m := range All() {
		if strings.Contains(m.Name, name) {
			near = append(near, m.Name)
		}
	}
	if len(near) > 0 && len(near) <= 8 {
		return nil, fmt.Errorf("unknown model %q (did you mean %s?)", name, strings.Join(near, ", "))
	}
	return nil, fmt.Errorf("unknown model %q (see 'simrun check' for the list)", name)
}

// Instantiate resolves overrides against the model's parameters and builds the system.
// Every error it returns is caused by the input (unknown or malformed parameter, a
// configuration Build rejects) and names what is wrong in one line.
func (m *Model) Instantiate(overrides map[string]string) (System, *Params, error) {
	p, err := NewParams(m.Params, overrides)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	sys, err := m.Build(p)
	if perr := p.Err(); perr != nil {
		return nil, nil, fmt.Errorf("%s: %w", m.Name, perr)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	if sys == nil {
		return nil, nil, fmt.Errorf("%s: Build returned no system", m.Name)
	}
	return sys, p, nil
}

// NewParams resolves overrides against declared parameters; an unknown name is an
// error listing the known ones.
func NewParams(defs []Param, overrides map[string]string) (*Params, error) {
	return params.New("model", defs, overrides)
}

// ParseAssignments parses "name=value" strings (the -p flags).
func ParseAssignments(as []string) (map[string]string, error) {
	return params.ParseAssignments(as)
}

// CheckNamed looks a registered model up, builds it with the parameter overrides and
// checks it: what `simrun check NAME -p …` does, for tests and programs.
func CheckNamed(name string, overrides map[string]string, o Options) (*Result, error) {
	m, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	sys, _, err := m.Instantiate(overrides)
	if err != nil {
		return nil, err
	}
	return Check(sys, o)
}
