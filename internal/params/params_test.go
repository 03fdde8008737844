package params

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

var defs = []Def{
	{Name: "n", Default: "3"},
	{Name: "d", Default: "1s"},
	{Name: "p", Default: "0.5"},
	{Name: "on", Default: "false"},
	{Name: "xs", Default: "a, b,,c"},
}

func TestResolveAndGetters(t *testing.T) {
	p, err := New("scenario", defs, map[string]string{"n": "7", "on": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Int("n") != 7 || p.IntRange("n", 1, 9) != 7 || p.IntMin("n", 7) != 7 || p.Duration("d") != time.Second ||
		p.PositiveDuration("d") != time.Second || p.Prob("p") != 0.5 || !p.Bool("on") ||
		!slices.Equal(p.List("xs"), []string{"a", "b", "c"}) || p.Err() != nil {
		t.Fatalf("getters: %v", p.Err())
	}
	if got := p.NonDefault(); !slices.Equal(got, []string{"n=7", "on=true"}) {
		t.Fatalf("NonDefault %v", got)
	}
	if v := p.Values(); v["d"] != "1s" || v["n"] != "7" {
		t.Fatalf("Values %v", v)
	}
}

func TestErrors(t *testing.T) {
	if _, err := New("model", defs, map[string]string{"zz": "1"}); err == nil || !strings.Contains(err.Error(), `unknown parameter "zz" (known: n, d, p, on, xs)`) {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := New("model", nil, map[string]string{"zz": "1"}); err == nil || !strings.Contains(err.Error(), "this model takes none") {
		t.Fatalf("none: %v", err)
	}
	for _, c := range []struct {
		name, val, want string
		get             func(*Set)
	}{
		{"n", "x", "an integer", func(p *Set) { p.Int("n") }},
		{"n", "10", "an integer in 1..9", func(p *Set) { p.IntRange("n", 1, 9) }},
		{"n", "0", "an integer in 1..1000000", func(p *Set) { p.IntMin("n", 1) }},
		{"p", "1.5", "a probability", func(p *Set) { p.Prob("p") }},
		{"p", "half", "a number in", func(p *Set) { p.Float("p") }},
		{"p", "1e300", "a number in [-1e9, 1e9]", func(p *Set) { p.Float("p") }},
		{"p", "half", "a probability in [0, 1]", func(p *Set) { p.Prob("p") }},
		{"p", "1e10", "a probability in [0, 1]", func(p *Set) { p.Prob("p") }},
		{"d", "-1s", "a duration from 0 to 24h", func(p *Set) { p.Duration("d") }},
		{"d", "1ns", "a duration from 1ms to 24h", func(p *Set) { p.PositiveDuration("d") }},
		{"d", "25h", "a duration from 1ms to 24h", func(p *Set) { p.PositiveDuration("d") }},
		{"d", "1s,1s", "distinct durations", func(p *Set) { p.DurationList("d") }},
		{"d", "1s,25h", "distinct durations from 1ms to 24h", func(p *Set) { p.DurationList("d") }},
		{"n", "1,,2", "distinct integers in 0..9", func(p *Set) { p.IntList("n", 0, 9) }},
		{"n", "1,4,4", "distinct integers in 0..9", func(p *Set) { p.IntList("n", 0, 9) }},
		{"n", strings.Repeat("1,", 100) + "1", "distinct integers", func(p *Set) { p.IntList("n", 0, 9) }},
		{"p", "0.1,0.1", "distinct probabilities", func(p *Set) { p.ProbList("p") }},
		{"n", "1000001", "an integer in 7..1000000", func(p *Set) { p.IntMin("n", 7) }},
		{"d", "25h", "a duration from 0 to 24h", func(p *Set) { p.Duration("d") }},
		{"d", "-25h", "a duration from 0 to 24h", func(p *Set) { p.Duration("d") }},
		{"p", "0.1,2", "a comma-separated list of distinct probabilities", func(p *Set) { p.ProbList("p") }},
		{"p", "", "a comma-separated list of distinct probabilities", func(p *Set) { p.ProbList("p") }},
		{"n", "7", "at most m", func(p *Set) { p.Reject("n", "at most m") }},
		{"d", "-1s", "a duration from 1ms to 24h", func(p *Set) { p.PositiveDuration("d") }},
		{"d", "soon", "a duration", func(p *Set) { p.Duration("d") }},
		{"on", "yes", "true or false", func(p *Set) { p.Bool("on") }},
	} {
		p, err := New("scenario", defs, map[string]string{c.name: c.val})
		if err != nil {
			t.Fatal(err)
		}
		c.get(p)
		p.Int("n") // a later error never replaces the first
		if p.Err() == nil || !strings.Contains(p.Err().Error(), c.name+"=") || !strings.Contains(p.Err().Error(), c.want) {
			t.Errorf("%s=%s: %v, want %q", c.name, c.val, p.Err(), c.want)
		}
	}
	for _, c := range []struct{ in, want string }{{"n", "malformed"}, {"=3", "malformed"}, {"n=1 n=2", "given twice"}} {
		if _, err := ParseAssignments(strings.Fields(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v", c.in, err)
		}
	}
	if m, err := ParseAssignments([]string{"a=b=c", "e="}); err != nil || m["a"] != "b=c" || m["e"] != "" {
		t.Errorf("values with '=' or empty: %v %v", m, err)
	}
}

func TestUndeclaredIsABug(t *testing.T) {
	p, _ := New("scenario", defs, nil)
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "not declared") {
			t.Fatalf("recover %v", r)
		}
	}()
	p.String("missing")
}

// NaN and infinities are not numbers a parameter can mean: a probability of NaN
// passed the range check before.
func TestFloatRefusesNaNAndInf(t *testing.T) {
	for _, v := range []string{"NaN", "nan", "Inf", "-Inf", "+inf", "1e999"} {
		p, err := New("scenario", []Def{{Name: "loss", Default: "0"}}, map[string]string{"loss": v})
		if err != nil {
			t.Fatal(err)
		}
		p.Prob("loss")
		if p.Err() == nil {
			t.Errorf("loss=%s accepted as a probability", v)
		}
	}
}

// Whatever the -p flags say, parsing and every getter either succeed or record one
// short error line; nothing panics.
func FuzzAssignments(f *testing.F) {
	for _, s := range []string{"n=3", "n=-1", "d=1.5s", "p=0.5", "b=true", "l=a,b,,c", "n=", "=3", "n", "p=NaN", "d=-1h", "n=99999999999999999999"} {
		f.Add(s)
	}
	defs := []Def{{Name: "n", Default: "1"}, {Name: "d", Default: "1s"}, {Name: "p", Default: "0"}, {Name: "b", Default: "false"}, {Name: "l", Default: ""}}
	f.Fuzz(func(t *testing.T, a string) {
		m, err := ParseAssignments([]string{a})
		if err != nil {
			oneLine(t, err)
			return
		}
		p, err := New("scenario", defs, m)
		if err != nil {
			oneLine(t, err)
			return
		}
		p.Int("n")
		p.IntRange("n", 0, 10)
		p.Duration("d")
		p.PositiveDuration("d")
		if pr := p.Prob("p"); p.Err() == nil && !(pr >= 0 && pr <= 1) {
			t.Fatalf("probability %v accepted", pr)
		}
		p.Bool("b")
		p.List("l")
		if p.Err() != nil {
			oneLine(t, p.Err())
		}
	})
}

func oneLine(t *testing.T, err error) {
	t.Helper()
	if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 400 {
		t.Fatalf("error is not one short line: %q", msg)
	}
}

// Probe records what every getter read accepts, and Err stops the reader before any
// work (simrun describe).
func TestProbe(t *testing.T) {
	p, err := New("scenario", defs, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Probe()
	p.IntRange("n", 1, 9)
	p.PositiveDuration("d")
	p.ProbList("p")
	p.Bool("on")
	if !errors.Is(p.Err(), ErrProbe) {
		t.Fatalf("Err while probing: %v", p.Err())
	}
	want := map[string]string{"n": "an integer in 1..9", "d": "a duration from 1ms to 24h, such as 500ms or 2s",
		"p": "a comma-separated list of distinct probabilities in [0, 1] (e.g. 0,0.1,0.2)", "on": "true or false"}
	if got := p.Wants(); !maps.Equal(got, want) {
		t.Fatalf("Wants %v", got)
	}
	q, _ := New("scenario", defs, nil)
	if q.IntMin("n", 1); q.Wants() != nil || q.Err() != nil {
		t.Fatalf("not probing: %v %v", q.Wants(), q.Err())
	}
}
