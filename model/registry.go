package model

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Param documents one model parameter (`simrun check MODEL -p name=value`).
type Param struct {
	Name    string
	Default string
	Help    string
}

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

// Params holds a model's parameters: defaults overridden by -p name=value. Typed getters
// record the first malformed value; Err reports it.
type Params struct {
	defs []Param
	vals map[string]string
	err  error
}

// NewParams resolves overrides against declared parameters; an unknown name is an
// error listing the known ones.
func NewParams(defs []Param, overrides map[string]string) (*Params, error) {
	p := &Params{defs: defs, vals: map[string]string{}}
	for _, d := range defs {
		p.vals[d.Name] = d.Default
	}
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.ContainsFunc(defs, func(d Param) bool { return d.Name == k }) {
			if len(defs) == 0 {
				return nil, fmt.Errorf("unknown parameter %q (this model takes none)", k)
			}
			names := make([]string, len(defs))
			for i, d := range defs {
				names[i] = d.Name
			}
			return nil, fmt.Errorf("unknown parameter %q (known: %s)", k, strings.Join(names, ", "))
		}
		p.vals[k] = overrides[k]
	}
	return p, nil
}

// ParseAssignments parses "name=value" strings (the -p flags).
func ParseAssignments(as []string) (map[string]string, error) {
	m := map[string]string{}
	for _, a := range as {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("malformed parameter %q (want name=value)", a)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("parameter %q given twice", k)
		}
		m[k] = v
	}
	return m, nil
}

// Values returns every resolved parameter (trace headers and reports).
func (p *Params) Values() map[string]string {
	out := make(map[string]string, len(p.vals))
	for k, v := range p.vals {
		out[k] = v
	}
	return out
}

// Err returns the first malformed value met by a getter.
func (p *Params) Err() error { return p.err }

func (p *Params) raw(name string) string {
	v, ok := p.vals[name]
	if !ok {
		panic("model: parameter " + name + " is not declared")
	}
	return v
}

func (p *Params) fail(name, v, want string) {
	if p.err == nil {
		p.err = fmt.Errorf("parameter %s=%q: want %s", name, v, want)
	}
}

// String returns the parameter's value.
func (p *Params) String(name string) string { return p.raw(name) }

// Int returns the parameter as an int.
func (p *Params) Int(name string) int {
	v := p.raw(name)
	n, err := strconv.Atoi(v)
	if err != nil {
		p.fail(name, v, "an integer")
	}
	return n
}

// IntRange returns the parameter as an int in [lo, hi].
func (p *Params) IntRange(name string, lo, hi int) int {
	n := p.Int(name)
	if (n < lo || n > hi) && p.err == nil {
		p.fail(name, p.raw(name), fmt.Sprintf("an integer in %d..%d", lo, hi))
	}
	return n
}

// Bool returns the parameter as a bool.
func (p *Params) Bool(name string) bool {
	v := p.raw(name)
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.fail(name, v, "true or false")
	}
	return b
}

// Duration returns the parameter as a positive duration ("500ms").
func (p *Params) Duration(name string) time.Duration {
	v := p.raw(name)
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		p.fail(name, v, "a positive duration such as 500ms or 2s")
	}
	return d
}

// List returns the parameter split on commas (empty elements dropped).
func (p *Params) List(name string) []string {
	var out []string
	for _, s := range strings.Split(p.raw(name), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
