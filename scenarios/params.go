package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Params holds a scenario's parameters: defaults overridden by -p name=value. Typed
// getters record the first malformed value; Err reports it (Run checks it after
// Build, so a scenario may read everything first and fail once).
type Params struct {
	defs []Param
	vals map[string]string
	err  error
}

// NewParams resolves overrides against the scenario's declared parameters. An unknown
// name is an error naming the known ones.
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
			names := make([]string, len(defs))
			for i, d := range defs {
				names[i] = d.Name
			}
			if len(names) == 0 {
				return nil, fmt.Errorf("unknown parameter %q (this scenario takes none)", k)
			}
			return nil, fmt.Errorf("unknown parameter %q (known: %s)", k, strings.Join(names, ", "))
		}
		p.vals[k] = overrides[k]
	}
	return p, nil
}

// ParseAssignments parses "name=value" strings.
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

// Values returns every resolved parameter (for trace headers and reports).
func (p *Params) Values() map[string]string {
	out := make(map[string]string, len(p.vals))
	for k, v := range p.vals {
		out[k] = v
	}
	return out
}

// NonDefault returns "name=value" for every parameter that differs from its default,
// sorted (for reproduce commands).
func (p *Params) NonDefault() []string {
	var out []string
	for _, d := range p.defs {
		if v := p.vals[d.Name]; v != d.Default {
			out = append(out, d.Name+"="+v)
		}
	}
	slices.Sort(out)
	return out
}

// Err returns the first malformed value met by a getter.
func (p *Params) Err() error { return p.err }

func (p *Params) raw(name string) string {
	v, ok := p.vals[name]
	if !ok {
		panic("scenarios: parameter " + name + " is not declared")
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

// IntMin returns the parameter as an int and records an error if it is below lo.
func (p *Params) IntMin(name string, lo int) int {
	n := p.Int(name)
	if n < lo && p.err == nil {
		p.fail(name, p.raw(name), fmt.Sprintf("an integer >= %d", lo))
	}
	return n
}

// Float returns the parameter as a float64.
func (p *Params) Float(name string) float64 {
	v := p.raw(name)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		p.fail(name, v, "a number")
	}
	return f
}

// Prob returns the parameter as a probability in [0, 1].
func (p *Params) Prob(name string) float64 {
	f := p.Float(name)
	if (f < 0 || f > 1) && p.err == nil {
		p.fail(name, p.raw(name), "a probability in [0, 1]")
	}
	return f
}

// Duration returns the parameter as a duration ("1.5s").
func (p *Params) Duration(name string) time.Duration {
	v := p.raw(name)
	d, err := time.ParseDuration(v)
	if err != nil {
		p.fail(name, v, "a duration such as 500ms or 2s")
	}
	return d
}

// PositiveDuration returns the parameter as a duration > 0.
func (p *Params) PositiveDuration(name string) time.Duration {
	d := p.Duration(name)
	if d <= 0 && p.err == nil {
		p.fail(name, p.raw(name), "a positive duration")
	}
	return d
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
