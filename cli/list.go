package cli

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/simrun-dev/simrun/internal/params"
	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/scenarios"
)

func init() {
	register(&command{name: "list", args: "[--suite] [--experiments]", short: "list scenarios, one per line (name first), cut to the terminal's width", run: cmdList,
		long: "Each line is the scenario's name, its kind and its description, cut to the terminal's width\n" +
			"(80 columns when stdout is not a terminal; $COLUMNS wins). Kinds: 'suite' is a single run in the\n" +
			"built-in suite that 'simrun' runs with no arguments; 'run' is a single run for 'simrun run' and\n" +
			"'simrun sweep'; 'exp' is an experiment, which makes many runs and prints tables ('simrun run\n" +
			"NAME --out DIR' writes them with figures and an index page). 'simrun describe NAME' prints the\n" +
			"whole description and the parameters."})
	register(&command{name: "describe", args: "NAME", short: "describe a scenario, experiment or model: its whole text, parameters, defaults and bounds", run: cmdDescribe})
}

// defaultWidth is the width listings are cut to when stdout is not a terminal.
const defaultWidth = 80

func (e *env) columns() int {
	if e.width > 0 {
		return e.width
	}
	return defaultWidth
}

// columnsEnv returns $COLUMNS when it is a positive number, else 0.
func columnsEnv() int {
	n, err := strconv.Atoi(os.Getenv("COLUMNS"))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// kind names what a scenario is, for the listing.
func kind(s *scenarios.Scenario) string {
	switch {
	case s.Experiment != nil:
		return "exp"
	case s.Suite:
		return "suite"
	}
	return "run"
}

// cut shortens s to at most width runes, ending in "…" when it cut.
func cut(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	if width < 1 {
		return ""
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:width-1]), " ") + "…"
}

func cmdList(e *env, args []string) error {
	c := commands["list"]
	fs := newFlags(e, c)
	suite := fs.Bool("suite", false, "only the scenarios of the built-in suite")
	exps := fs.Bool("experiments", false, "only the experiments")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := exactlyArgs(c, pos, 0); err != nil {
		return err
	}
	all := slices.DeleteFunc(scenarios.All(), func(s *scenarios.Scenario) bool {
		return (*suite || *exps) && !(*suite && s.Suite || *exps && s.Experiment != nil)
	})
	width := 0
	for _, s := range all {
		width = max(width, utf8.RuneCountInString(s.Name))
	}
	for _, s := range all {
		line := fmt.Sprintf("%-*s  %-5s  %s", width, s.Name, kind(s), s.Help)
		fmt.Fprintln(e.stdout, cut(line, e.columns()))
	}
	return nil
}

func cmdDescribe(e *env, args []string) error {
	c := commands["describe"]
	fs := newFlags(e, c)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := exactlyArgs(c, pos, 1); err != nil {
		return err
	}
	name := pos[0]
	sc, serr := scenarios.Lookup(name)
	m, merr := model.Lookup(name)
	if serr != nil && merr != nil {
		var near []string
		for _, s := range scenarios.All() {
			if strings.Contains(s.Name, name) {
				near = append(near, s.Name)
			}
		}
		for _, m := range model.All() {
			if strings.Contains(m.Name, name) {
				near = append(near, m.Name)
			}
		}
		if len(near) > 0 && len(near) <= 8 {
			return usageErr("describe: no scenario or model %q (did you mean %s?)", name, strings.Join(near, ", "))
		}
		return usageErr("describe: no scenario or model %q (see 'simrun list' and 'simrun check')", name)
	}
	w := &wrapper{w: e.stdout, width: e.columns()}
	if serr == nil {
		if err := describeScenario(w, sc); err != nil {
			return err
		}
	}
	if merr == nil {
		if serr == nil {
			w.line("", "")
		}
		if err := describeModel(w, m); err != nil {
			return err
		}
	}
	return w.err
}

func describeScenario(w *wrapper, sc *scenarios.Scenario) error {
	ps, err := scenarios.NewParams(sc.Params, nil)
	if err != nil {
		return err
	}
	ps.Probe()
	switch {
	case sc.Experiment != nil:
		w.line("", sc.Name+": an experiment (many runs, tables)")
		w.line("  ", sc.Help)
		w.line("", "")
		w.raw("  simrun run " + sc.Name + " [-p name=value]... [--out DIR]")
		w.line("      ", "prints its tables; with --out, writes them as CSV with figures (PNG, SVG) and DIR/index.html")
		_, err = sc.Experiment(&scenarios.Exp{Seed: 1, Params: ps})
		err = probeErr(err)
	default:
		what := "a single run"
		if sc.Suite {
			what += ", in the built-in suite ('simrun' runs it on seed 1)"
		}
		w.line("", sc.Name+": "+what)
		w.line("  ", sc.Help)
		w.line("", "")
		w.raw("  simrun run " + sc.Name + " [--seed N] [-p name=value]... [--trace FILE] [--report DIR]")
		w.raw("  simrun sweep " + sc.Name + " --seeds 1-1000 [-p name=value]...")
		_, err = sc.Build(&scenarios.Build{Seed: 1, Params: ps})
		err = probeErr(err)
	}
	if err != nil {
		return fmt.Errorf("describe %s: %w", sc.Name, err)
	}
	describeParams(w, sc.Params, ps.Wants())
	return nil
}

func describeModel(w *wrapper, m *model.Model) error {
	ps, err := model.NewParams(m.Params, nil)
	if err != nil {
		return err
	}
	ps.Probe()
	if _, err := m.Build(ps); probeErr(err) != nil {
		return fmt.Errorf("describe %s: %w", m.Name, err)
	}
	w.line("", m.Name+": a model for the model checker")
	w.line("  ", m.Help)
	w.line("", "")
	w.raw("  simrun check " + m.Name + " [-p name=value]... [--strategy bfs|dfs|random] [--workers N]")
	w.raw("  simrun explore " + m.Name + " [-p name=value]...")
	describeParams(w, m.Params, ps.Wants())
	if len(m.Portfolio) > 0 {
		w.line("", "")
		w.line("", "portfolio ('simrun check "+m.Name+"' with no -p runs each of these):")
		for _, c := range m.Portfolio {
			var as []string
			for _, k := range slices.Sorted(maps.Keys(c.Params)) {
				as = append(as, "-p "+k+"="+c.Params[k])
			}
			head := "  " + c.Name
			if len(as) > 0 {
				head += "  " + strings.Join(as, " ")
			}
			if c.MaxStates > 0 {
				head += fmt.Sprintf("  (at most %d states)", c.MaxStates)
			}
			w.raw(head)
			w.line("      ", c.Help)
		}
	}
	return nil
}

// describeParams prints each parameter: name and default, its help, and what it
// accepts (recorded by probing the scenario's or model's Build; a parameter read only
// later, or only as text, shows none).
func describeParams(w *wrapper, defs []params.Def, wants map[string]string) {
	w.line("", "")
	if len(defs) == 0 {
		w.line("", "parameters: none")
		return
	}
	w.line("", "parameters (-p name=value):")
	for _, d := range defs {
		w.raw("  " + d.Name + " (default " + strconv.Quote(d.Default) + ")")
		if d.Help != "" {
			w.line("      ", d.Help)
		}
		if want := wants[d.Name]; want != "" {
			w.line("      ", "accepts "+want)
		}
	}
}

// probeErr drops the error a probing parameter set makes its reader return.
func probeErr(err error) error {
	if errors.Is(err, params.ErrProbe) {
		return nil
	}
	return err
}

// wrapper writes text word-wrapped to a width, each line with an indent.
type wrapper struct {
	w     io.Writer
	width int
	err   error
}

// raw writes a line as it is (a command is not broken across lines).
func (w *wrapper) raw(text string) {
	if w.err == nil {
		_, w.err = fmt.Fprintln(w.w, text)
	}
}

// line writes text word-wrapped, every line after indent.
func (w *wrapper) line(indent, text string) {
	if w.err != nil {
		return
	}
	if text == "" {
		_, w.err = fmt.Fprintln(w.w)
		return
	}
	room := max(w.width-utf8.RuneCountInString(indent), 20)
	cur := ""
	for _, word := range strings.Fields(text) {
		if cur != "" && utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(word) > room {
			if _, w.err = fmt.Fprintln(w.w, indent+cur); w.err != nil {
				return
			}
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += word
	}
	_, w.err = fmt.Fprintln(w.w, indent+cur)
}
