package cli

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/histories"
	"github.com/simrun-dev/simrun/internal/inputfile"
)

func init() {
	register(&command{
		name:  "lincheck",
		args:  "HISTORY --model register|cas-register|kv|counter|queue [--format edn|jepsen-log|jsonl] [--timeout D] [--viz FILE]",
		short: "check a history recorded outside simrun for linearizability (Jepsen EDN, Jepsen logs, JSON Lines)",
		long: "Exit 0: linearizable; 1: not (porcupine's visualization is written to --viz, default HISTORY.html);\n" +
			"4: undecided within --timeout; 2: bad input (one line naming the file and line).\n" +
			"Line formats and the models' operations are documented in package histories.",
		run: cmdLincheck,
	})
}

func cmdLincheck(e *env, args []string) error {
	c := commands["lincheck"]
	fs := newFlags(e, c)
	modelName := fs.String("model", "", "register, cas-register, kv (partitioned by key), counter or queue")
	format := fs.String("format", "", "edn, jepsen-log or jsonl (default: detected from the first line)")
	timeout := fs.Duration("timeout", time.Minute, "give up (exit 4) after this long")
	viz := fs.String("viz", "", "where to write the visualization of an illegal history (`FILE`, default HISTORY.html)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("lincheck: want one history file (usage: simrun lincheck %s)", c.args)
	}
	if *modelName == "" {
		return usageErr("lincheck: --model is required (register, cas-register, kv, counter or queue)")
	}
	if *timeout <= 0 {
		return usageErr("lincheck: --timeout must be positive")
	}
	f, err := inputfile.Open(pos[0], histories.MaxBytes)
	if err != nil {
		return usageErr("lincheck: %v", err)
	}
	defer f.Close()
	evs, err := histories.Parse(pos[0], f, *format)
	if err != nil {
		return usageErr("lincheck: %v", err)
	}
	ops, err := histories.Operations(pos[0], *modelName, evs)
	if err != nil {
		return usageErr("lincheck: %v", err)
	}
	res := histories.Check(*modelName, ops, *timeout)
	fmt.Fprintf(e.stdout, "history   %s: %d events, %d operations, %d keys, model %s\n", pos[0], len(evs), res.Ops, res.Keys, *modelName)
	switch {
	case res.Err != nil:
		return fmt.Errorf("lincheck: %v", res.Err)
	case res.Result == porcupine.Ok:
		if res.Ops <= explainMax {
			explain(e, *modelName, evs, ops, *timeout)
		}
		fmt.Fprintln(e.stdout, "verdict   linearizable")
		return nil
	case res.Result == porcupine.Unknown:
		fmt.Fprintf(e.stdout, "verdict   unknown: no answer within %v\n", *timeout)
		return inconclusive("lincheck: %s: undecided within %v", pos[0], *timeout)
	}
	msg := "not linearizable"
	if res.Located {
		if res.Key != "" {
			msg += fmt.Sprintf(" (key %q)", res.Key)
		}
		out := *viz
		if out == "" {
			out = strings.TrimSuffix(pos[0], ".gz") + ".html"
		}
		if err := porcupine.VisualizePath(res.Model, res.Info, out); err != nil {
			return usageErr("lincheck: --viz: %v", err)
		}
		fmt.Fprintf(e.stdout, "visual    %s\n", out)
	}
	fmt.Fprintf(e.stdout, "verdict   %s\n", msg)
	return violated("lincheck: %s: %s", pos[0], msg)
}

// explainMax is the most operations a linearizable history may have for lincheck to
// print the order that explains it (a longer order explains nothing to a reader).
const explainMax = 20

// explain prints a linearization: the order in which the operations can have taken
// effect, each with the model's state after it, and where each came from (process,
// line); a pending operation is placed where it took effect, if it did.
func explain(e *env, model string, evs []histories.Event, ops []checker.Operation, timeout time.Duration) {
	steps, ok := histories.Explain(model, ops, timeout)
	if !ok {
		return
	}
	fmt.Fprintln(e.stdout, "order     an order the operations can have taken effect in, with the state after each:")
	width, keys := 0, map[string]bool{}
	for _, s := range steps {
		width = max(width, utf8.RuneCountInString(s.Does))
		keys[s.Key] = true
	}
	for i, s := range steps {
		key := ""
		if len(keys) > 1 {
			key = fmt.Sprintf("key %q: ", s.Key)
		}
		from := fmt.Sprintf("process %d, line %d", s.Op.Client, evs[s.Op.Call].Line)
		if s.Op.Pending {
			from += ": pending (it never returned), took effect here"
		}
		pad := strings.Repeat(" ", width-utf8.RuneCountInString(s.Does))
		fmt.Fprintf(e.stdout, "  %2d. %s%s%s   state %s   %s\n", i+1, key, s.Does, pad, s.State, from)
	}
}
