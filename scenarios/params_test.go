package scenarios

import (
	"strings"
	"testing"
	"time"
)

func TestParams(t *testing.T) {
	defs := []Param{{Name: "n", Default: "3"}, {Name: "d", Default: "1s"}, {Name: "p", Default: "0.5"}, {Name: "b", Default: "true"}, {Name: "l", Default: "a, b,,c"}}
	ps, err := NewParams(defs, map[string]string{"n": "7"})
	if err != nil {
		t.Fatal(err)
	}
	if ps.Int("n") != 7 || ps.Duration("d") != time.Second || ps.Prob("p") != 0.5 || !ps.Bool("b") || strings.Join(ps.List("l"), "|") != "a|b|c" || ps.Err() != nil {
		t.Fatal("getters disagree with the values")
	}
	if nd := ps.NonDefault(); len(nd) != 1 || nd[0] != "n=7" {
		t.Fatalf("non-default %v", nd)
	}
	if _, err := NewParams(defs, map[string]string{"x": "1"}); err == nil || !strings.Contains(err.Error(), "known: n, d, p, b, l") {
		t.Fatalf("unknown parameter: %v", err)
	}
	bad, _ := NewParams(defs, map[string]string{"n": "x", "p": "2"})
	bad.Int("n")
	bad.Prob("p")
	if bad.Err() == nil || !strings.Contains(bad.Err().Error(), `n="x"`) {
		t.Fatalf("first malformed value not reported: %v", bad.Err())
	}
	if _, err := ParseAssignments([]string{"a=1", "a=2"}); err == nil {
		t.Fatal("duplicate assignment accepted")
	}
	if m, err := ParseAssignments([]string{"a=x=y"}); err != nil || m["a"] != "x=y" {
		t.Fatalf("value with '=': %v %v", m, err)
	}
}

func TestLookupSuggests(t *testing.T) {
	if _, err := Lookup("demo/happy"); err != nil {
		t.Fatal(err)
	}
	_, err := Lookup("happy")
	if err == nil || !strings.Contains(err.Error(), "did you mean demo/happy") {
		t.Fatalf("no suggestion: %v", err)
	}
}

func TestCompareLines(t *testing.T) {
	if r := CompareLines([]byte("a\nb\n"), []byte("a\nb\n")); !r.Same() || r.Lines != 2 {
		t.Fatalf("%+v", r)
	}
	if r := CompareLines([]byte("a\nb\n"), []byte("a\nc\n")); r.Line != 2 || r.Want != "b" || r.Got != "c" {
		t.Fatalf("%+v", r)
	}
	if r := CompareLines([]byte("a\n"), []byte("a\nc\n")); r.Line != 2 || r.Want != "" {
		t.Fatalf("%+v", r)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"exactlyonce/happy":   "exactlyonce/happy",
		"crash-rate=0.2":      "crash-rate=0.2",
		"tasks=P1,P1+P2":      "tasks=P1,P1+P2",
		"name=a b":            "'name=a b'",
		"x=it's":              `'x=it'\''s'`,
		"":                    "''",
		"/tmp/dir with space": "'/tmp/dir with space'",
		"a*b":                 "'a*b'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
	if got := Repro("demo/swarm", 3, []string{"note=a b"}, "my plan.json"); got != "simrun run demo/swarm --seed 3 -p 'note=a b' --faults 'my plan.json'" {
		t.Errorf("Repro = %s", got)
	}
}
