package cli

import (
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/scenarios"
)

// Issue 33: `simrun list` lines ran to 591 characters. They are cut to the terminal's
// width, 80 columns when stdout is not one, and filter by kind.
func TestListFitsTheWidth(t *testing.T) {
	for _, width := range []int{0, 120, 40} {
		var out strings.Builder
		if code := runMain(&env{stdout: &out, stderr: &out, width: width}, []string{"list"}); code != 0 {
			t.Fatalf("exit %d: %s", code, out.String())
		}
		want := width
		if want == 0 {
			want = 80
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != len(scenarios.All()) {
			t.Fatalf("width %d: %d lines for %d scenarios", width, len(lines), len(scenarios.All()))
		}
		cutLines := 0
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > want {
				t.Fatalf("width %d: a line of %d columns: %q", width, n, l)
			}
			if strings.HasSuffix(l, "…") {
				cutLines++
			}
		}
		if width != 120 && cutLines == 0 {
			t.Fatalf("width %d: no line was cut", want)
		}
	}
}

func TestListKinds(t *testing.T) {
	for _, c := range []struct {
		flags []string
		kind  string
		n     int
	}{
		{[]string{"--suite"}, "suite", len(scenarios.Suite())},
		{[]string{"--experiments"}, "exp", countExperiments()},
		{[]string{"--suite", "--experiments"}, "", len(scenarios.Suite()) + countExperiments()},
	} {
		code, out, errs := cli(t, append([]string{"list"}, c.flags...)...)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if code != 0 || len(lines) != c.n {
			t.Fatalf("%v: exit %d, %d lines, want %d: %s", c.flags, code, len(lines), c.n, errs)
		}
		for _, l := range lines {
			f := strings.Fields(l)
			if c.kind != "" && f[1] != c.kind || c.kind == "" && f[1] == "run" {
				t.Fatalf("%v: %q", c.flags, l)
			}
		}
	}
	oneLineErr(t, "unexpected argument", "list", "demo")
}

func countExperiments() int {
	n := 0
	for _, s := range scenarios.All() {
		if s.Experiment != nil {
			n++
		}
	}
	return n
}

// `simrun describe NAME` prints the whole description and every parameter with its
// default and, where the scenario's or model's Build reads it through a bounded
// getter, what it accepts — without running anything: all of them together allocate
// little (an experiment that ran would allocate far more).
func TestDescribeEveryName(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	described := 0
	for _, sc := range scenarios.All() {
		code, out, errs := cli(t, "describe", sc.Name)
		if code != 0 || !strings.HasPrefix(out, sc.Name+": ") || errs != "" {
			t.Fatalf("describe %s: exit %d %s%s", sc.Name, code, out, errs)
		}
		if !strings.Contains(strings.Join(strings.Fields(out), " "), sc.Help) {
			t.Errorf("describe %s: the whole description is missing:\n%s", sc.Name, out)
		}
		for _, d := range sc.Params {
			if !strings.Contains(out, "\n  "+d.Name+" (default ") {
				t.Errorf("describe %s: parameter %s missing:\n%s", sc.Name, d.Name, out)
			}
		}
		described++
	}
	for _, m := range model.All() {
		code, out, errs := cli(t, "describe", m.Name)
		if code != 0 || !strings.Contains(out, m.Name+": a model") || errs != "" {
			t.Fatalf("describe %s: exit %d %s%s", m.Name, code, out, errs)
		}
		for _, d := range m.Params {
			if !strings.Contains(out, "\n  "+d.Name+" (default ") {
				t.Errorf("describe %s: parameter %s missing:\n%s", m.Name, d.Name, out)
			}
		}
		described++
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Fatalf("describing %d names allocated %d MiB: something ran", described, alloc>>20)
	}
	for _, c := range []struct{ name, want string }{
		{"exactlyonce/blocking", "accepts a comma-separated list of distinct probabilities in [0, 1]"},
		{"exactlyonce/blocking", "simrun run exactlyonce/blocking [-p name=value]... [--out DIR]"},
		{"demo/faults", "in the built-in suite"},
		{"2pc", "participants (default \"2\")\n      number of participants (1..8)\n      accepts an integer in 1..8"},
	} {
		if _, out, _ := cli(t, "describe", c.name); !strings.Contains(out, c.want) {
			t.Errorf("describe %s: no %q in\n%s", c.name, c.want, out)
		}
	}
	oneLineErr(t, "did you mean", "describe", "blocking")
	oneLineErr(t, "no scenario or model", "describe", "zz9")
	oneLineErr(t, "missing argument", "describe")
}
