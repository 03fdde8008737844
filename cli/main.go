// Package cli is simrun's whole command line as a library: run, list, sweep, merge,
// check, replay and bench over whatever scenarios (package scenarios) and models
// (package model) the program has registered. The simrun command is its first user;
// a protocol engineer's own program is the next:
//
//	package main
//
//	import (
//		"os"
//
//		"github.com/simrun-dev/simrun/cli"
//		_ "example.com/myproto/scenarios" // registers its scenarios and models in init
//	)
//
//	func main() { os.Exit(cli.Main()) }
//
// and gets `myprog run myproto/happy --seed 3`, `myprog sweep …`, `myprog check …`,
// reports, traces and replay, with the exit codes below. examples/quorum is a complete
// outside project built this way.
//
//	simrun                      run the built-in scenario suite on seed 1
//	simrun list                 list scenarios (--suite, --experiments)
//	simrun describe NAME        a scenario's, experiment's or model's text and parameters
//	simrun run SCENARIO         run one scenario (--seed, --trace, --faults, -p, --format)
//	simrun replay FILE          re-execute a trace and compare it line by line
//	simrun explore FILE|MODEL   step through a trace or browse a state space in the browser
//	simrun bench                kernel benchmarks, as ratios to a reference
//
// Exit codes: 0 ok (every property holds or is witnessed), 1 a property was violated
// (or a replay differs), 2 bad input or usage, 3 internal error, 4 inconclusive (a
// model check that reached a bound, sampled, or could not decide a property), 130 a
// sweep interrupted by Ctrl-C (after printing the summary of the seeds that ran).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"syscall"

	"github.com/simrun-dev/simrun/scenarios"
)

// Exit codes.
const (
	exitOK       = 0
	exitViolated = 1
	exitUsage    = 2
	exitInternal = 3
	// exitInconclusive: nothing failed, but not everything was decided (simrun check
	// with a bound reached, random walks, a property left unknown). Never 0, so a CI
	// job that proved nothing does not pass.
	exitInconclusive = 4
	// exitInterrupted: a sweep stopped by Ctrl-C (the summary of the seeds that ran was
	// printed), as shells report a process ended by SIGINT.
	exitInterrupted = 130
)

// command is one subcommand. Files add theirs with register in an init function.
type command struct {
	name  string
	args  string // synopsis after the name
	short string // one line for the overview
	long  string // more, for 'simrun COMMAND -h' (optional)
	run   func(env *env, args []string) error
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("simrun: duplicate command " + c.name)
	}
	commands[c.name] = c
}

// env is where a command writes; tests use buffers.
type env struct {
	stdout, stderr io.Writer
	// tty reports whether stderr is a terminal (progress lines only then).
	tty bool
	// width is the terminal's width in columns when stdout is one, else 0 (listings
	// are cut to 80 columns then).
	width int
}

// exitError carries an exit code and a one-line message.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageErr(format string, a ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, a...)}
}

func inconclusive(format string, a ...any) error {
	return &exitError{code: exitInconclusive, msg: fmt.Sprintf(format, a...)}
}

func violated(format string, a ...any) error {
	return &exitError{code: exitViolated, msg: fmt.Sprintf(format, a...)}
}

// untuneGC undoes Main's garbage-collector policy (a model check sets its own).
var untuneGC = func() {}

// Main runs the command line on os.Args with the registered scenarios and models and
// returns the exit code (call os.Exit with it). It tunes the garbage collector for
// long searches first (scenarios.TuneGC: GOGC=400 unless GOGC is set).
func Main() int {
	tty := false
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		tty = true
	}
	untuneGC = scenarios.TuneGC()
	return runMain(&env{stdout: os.Stdout, stderr: os.Stderr, tty: tty, width: termWidth(os.Stdout)}, os.Args[1:])
}

// Run runs the command line on args (without the program name), writing to stdout and
// stderr, and returns the exit code; progress lines are off (as when stderr is not a
// terminal). Tests of a user's scenarios call it in-process.
func Run(args []string, stdout, stderr io.Writer) int {
	return runMain(&env{stdout: stdout, stderr: stderr}, args)
}

// runMain runs the command line and returns the exit code. Internal panics become exit
// code 3 with a message, never a crash without one.
func runMain(e *env, args []string) (code int) {
	out := &checkedWriter{w: e.stdout}
	e.stdout = out
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(e.stderr, "simrun: internal error: %v\n", r)
			code = exitInternal
		}
		code = outputFailed(e, out, code)
	}()
	var err error
	switch {
	case len(args) == 0:
		err = runSuite(e)
	case args[0] == "-h" || args[0] == "--help" || args[0] == "help":
		overview(e.stdout)
		return exitOK
	case args[0] == "--version" || args[0] == "version" || args[0] == "-version":
		if len(args) > 1 {
			fmt.Fprintf(e.stderr, "simrun: %s takes no arguments (got %q)\n", args[0], strings.Join(args[1:], " "))
			return exitUsage
		}
		fmt.Fprintln(e.stdout, version())
		return exitOK
	default:
		c, ok := commands[args[0]]
		if !ok {
			fmt.Fprintf(e.stderr, "simrun: unknown command %q (commands: %s)\n", args[0], strings.Join(commandNames(), ", "))
			return exitUsage
		}
		err = c.run(e, args[1:])
	}
	return report(e, err)
}

func report(e *env, err error) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(e.stderr, "simrun: %s\n", ee.msg)
		}
		return ee.code
	}
	if scenarios.IsInputError(err) {
		fmt.Fprintf(e.stderr, "simrun: %s\n", oneLine(err.Error()))
		return exitUsage
	}
	// A file the user named cannot be written (a full disk, no permission, a missing
	// directory): the environment's fault, said as such, not an internal error.
	var pe *fs.PathError
	if errors.As(err, &pe) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		fmt.Fprintf(e.stderr, "simrun: I/O error: %s\n", oneLine(err.Error()))
		return exitUsage
	}
	fmt.Fprintf(e.stderr, "simrun: internal error: %s\n", oneLine(err.Error()))
	return exitInternal
}

func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ") }

func commandNames() []string {
	ns := make([]string, 0, len(commands))
	for n := range commands {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

func overview(w io.Writer) {
	fmt.Fprintln(w, "usage: simrun [command] [arguments]")
	fmt.Fprintln(w, "\nWith no command, runs the built-in scenario suite on seed 1 and prints a table.")
	fmt.Fprintln(w, "\ncommands:")
	width := 0
	for _, n := range commandNames() {
		width = max(width, len(n))
	}
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, commands[n].short)
	}
	fmt.Fprintln(w, "\n'simrun COMMAND -h' describes one command; 'simrun --version' names the build.")
	fmt.Fprintln(w, "exit codes: 0 ok, 1 property violated or replay differs, 2 bad input or usage, 3 internal error, 4 inconclusive check (bound reached, sampled, property unknown)")
}

// newFlags returns a flag set whose errors come back as one-line usage errors and
// whose -h prints the command's usage on stdout.
func newFlags(e *env, c *command) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(e.stdout, "usage: simrun %s %s\n\n%s\n", c.name, c.args, c.short)
		if c.long != "" {
			fmt.Fprintf(e.stdout, "\n%s\n", c.long)
		}
		fmt.Fprintf(e.stdout, "\nflags:\n")
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parse parses flags and positional arguments in any order. A flag given twice is an
// error (the flag package would let the last one win silently), except the repeatable
// ones (-p).
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	if err := onceEach(fs, args); err != nil {
		return nil, err
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, flag.ErrHelp // Parse has printed the usage
			}
			return nil, usageErr("%s: %v (see 'simrun %s -h')", fs.Name(), err, fs.Name())
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, checkPaths(fs, pos)
		}
		if args[0] == "--" {
			pos = append(pos, args[1:]...)
			return pos, checkPaths(fs, pos)
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// emptyPaths refuses a file or directory flag given an empty name (--report ”
// would otherwise mean "no report" and the user would wait for nothing).
func emptyPaths(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if kind, _ := flag.UnquoteUsage(f); err == nil && f.Value.String() == "" && (kind == "FILE" || kind == "DIR") {
			err = usageErr("%s: --%s needs a %s name, got an empty one", fs.Name(), f.Name, strings.ToLower(map[string]string{"FILE": "file", "DIR": "directory"}[kind]))
		}
	})
	return err
}

// onceEach refuses a flag given twice (the flag package lets the last one win
// silently), except the repeatable ones (-p). It reads the arguments as Parse will: a
// non-boolean flag without "=" takes the next argument as its value; "--" ends flags.
func onceEach(fs *flag.FlagSet, args []string) error {
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			continue // Parse reports it
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && b.IsBoolFlag()) {
			i++ // the flag's value
		}
		if _, repeatable := f.Value.(*multiFlag); repeatable {
			continue
		}
		if seen[name] {
			return usageErr("%s: flag --%s given twice (see 'simrun %s -h')", fs.Name(), name, fs.Name())
		}
		seen[name] = true
	}
	return nil
}

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// exactlyArgs checks the number of positional arguments.
func exactlyArgs(c *command, pos []string, n int) error {
	if len(pos) != n {
		if len(pos) < n {
			return usageErr("%s: missing argument (usage: simrun %s %s)", c.name, c.name, c.args)
		}
		return usageErr("%s: unexpected argument %q (usage: simrun %s %s)", c.name, pos[n], c.name, c.args)
	}
	return nil
}
