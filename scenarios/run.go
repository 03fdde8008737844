package scenarios

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/sim"
)

// Options selects one run of a scenario.
type Options struct {
	Seed   uint64
	Params map[string]string
	// Faults overrides the scenario's fault plan; FaultsFile is the file it came from
	// (named in reproduce commands).
	Faults     *faults.Plan
	FaultsFile string
	// TraceTo, when set, receives the JSONL trace (header, events, footer).
	TraceTo io.Writer
	// Tracer, when set, also receives every record (e.g. a collector for Mermaid).
	Tracer sim.Tracer
	// ArtifactDir is where checks may write files (porcupine visualizations).
	ArtifactDir string
	// Visualize writes porcupine's visualization of every linearizability check into
	// ArtifactDir, linearizable or not (run reports link it).
	Visualize bool
	// CutAt, when > 0, ends the run after that many events (the outcome is the event
	// bound): simrun explore checks a run's prefixes with it to find the first step at
	// which a safety property fails.
	CutAt int64
	// Coverage counts the rules protocol code covers (Report.Coverage).
	Coverage bool
}

// Report is the outcome of one run.
type Report struct {
	Scenario string            `json:"scenario"`
	Seed     uint64            `json:"seed"`
	Params   map[string]string `json:"params"`
	Faults   faults.Plan       `json:"faults"`
	Result   *sim.Result       `json:"result"`
	Settled  sim.Time          `json:"settled"`
	Verdicts []checker.Verdict `json:"verdicts"`
	Verdict  checker.Verdict   `json:"verdict"`
	Metrics  any               `json:"metrics,omitempty"`
	// Notes are the settings drawn from the seed (Setup.Notes).
	Notes []string `json:"notes,omitempty"`
	// Summary is the scenario's text after the verdicts (Setup.Summary).
	Summary string `json:"summary,omitempty"`
	Repro   string `json:"repro"`
	// Ops are the client operations the linearizability checks read, in virtual time
	// (the run report's latency plot).
	Ops []checker.OpSpan `json:"-"`
	// Coverage is the run's rule and property coverage (Options.Coverage; nil
	// otherwise).
	Coverage *Coverage `json:"coverage,omitempty"`
}

// Failed reports whether any property failed.
func (r *Report) Failed() bool { return r.Verdict.Failed() }

// TraceHeader is the first line of a simulator trace: everything replay needs.
type TraceHeader struct {
	Format   string            `json:"format"`
	Engine   string            `json:"engine"`
	Scenario string            `json:"scenario"`
	Seed     uint64            `json:"seed"`
	Params   map[string]string `json:"params"`
	Faults   faults.Plan       `json:"faults"`
	Network  sim.Network       `json:"network"`
}

// InputError is an error caused by the user's input (bad parameter, bad fault plan):
// the command line exits 2 on it.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErr(format string, a ...any) error { return &InputError{Err: fmt.Errorf(format, a...)} }

// IsInputError reports whether err was caused by bad input.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

// Repro returns the command that reproduces a run.
func Repro(name string, seed uint64, nonDefault []string, faultsFile string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "simrun run %s --seed %d", ShellQuote(name), seed)
	for _, a := range nonDefault {
		fmt.Fprintf(&b, " -p %s", ShellQuote(a))
	}
	if faultsFile != "" {
		fmt.Fprintf(&b, " --faults %s", ShellQuote(faultsFile))
	}
	return b.String()
}

// Prepare builds a scenario's setup without running it.
func Prepare(sc *Scenario, o Options) (*Setup, *Params, error) {
	if sc.Build == nil {
		return nil, nil, inputErr("%s is an experiment: it has no single run (use 'simrun run %s')", sc.Name, sc.Name)
	}
	ps, err := NewParams(sc.Params, o.Params)
	if err != nil {
		return nil, nil, &InputError{Err: fmt.Errorf("%s: %w", sc.Name, err)}
	}
	setup, err := sc.Build(&Build{Seed: o.Seed, Params: ps, Faults: o.Faults})
	if perr := ps.Err(); perr != nil {
		return nil, nil, &InputError{Err: fmt.Errorf("%s: %w", sc.Name, perr)}
	}
	if err != nil {
		return nil, nil, &InputError{Err: fmt.Errorf("%s: %w", sc.Name, err)}
	}
	names := make([]string, len(setup.Nodes))
	for i, n := range setup.Nodes {
		names[i] = n.Name
	}
	if err := setup.Faults.Validate(names); err != nil {
		return nil, nil, &InputError{Err: err}
	}
	return setup, ps, nil
}

// Run performs one run of a single-run scenario and checks its properties.
func Run(sc *Scenario, o Options) (*Report, error) {
	setup, ps, err := Prepare(sc, o)
	if err != nil {
		return nil, err
	}
	var tw *sim.TraceWriter
	var tracer sim.Tracer
	if o.TraceTo != nil {
		tw = sim.NewTraceWriter(o.TraceTo)
		tracer = tw
	}
	if o.Tracer != nil {
		if tracer != nil {
			tracer = sim.Tee{tracer, o.Tracer}
		} else {
			tracer = o.Tracer
		}
	}
	k, err := newKernel(sc, o, setup, tracer)
	if err != nil {
		return nil, err
	}
	if tw != nil {
		hdr := TraceHeader{Format: sim.TraceFormat, Engine: "sim", Scenario: sc.Name, Seed: o.Seed,
			Params: ps.Values(), Faults: setup.Faults, Network: setup.Network}
		if hdr.Faults.Events == nil {
			hdr.Faults.Events = []faults.Event{}
		}
		if err := tw.Header(hdr); err != nil {
			return nil, err
		}
	}
	if err := arm(k, setup); err != nil {
		return nil, err
	}
	res := k.Run()
	if tw != nil && tw.Err() != nil {
		return nil, fmt.Errorf("trace: %w", tw.Err())
	}
	st := setup.Faults.Settled()
	run := &checker.Run{Result: res, Scenario: sc.Name, Settled: st.At, Down: st.Down, Split: st.Split, ArtifactDir: o.ArtifactDir, Visualize: o.Visualize}
	vs := checker.Evaluate(run, setup.Properties)
	checker.Expect(vs, setup.Expected)
	repro := Repro(sc.Name, o.Seed, ps.NonDefault(), o.FaultsFile)
	for i := range vs {
		vs[i].Scenario, vs[i].Seed, vs[i].Repro = sc.Name, o.Seed, repro
	}
	w := checker.Worst(vs)
	if w.Class == checker.OK {
		w = checker.Verdict{Class: checker.OK, Property: "all", Scenario: sc.Name, Seed: o.Seed, Repro: repro}
	}
	rep := &Report{
		Scenario: sc.Name, Seed: o.Seed, Params: ps.Values(), Faults: setup.Faults, Result: res,
		Settled: st.At, Verdicts: vs, Verdict: w, Repro: repro, Notes: setup.Notes, Ops: run.Spans(),
	}
	if setup.Metrics != nil {
		rep.Metrics = setup.Metrics(res)
	}
	if setup.Summary != nil {
		rep.Summary = setup.Summary(run)
	}
	if o.Coverage {
		rep.Coverage = runCoverage(sc.Name, res, vs)
	}
	return rep, nil
}

// newKernel builds the kernel of one run.
func newKernel(sc *Scenario, o Options, setup *Setup, tracer sim.Tracer) (*sim.Kernel, error) {
	maxEvents := setup.MaxEvents
	if o.CutAt > 0 && (maxEvents == 0 || o.CutAt < maxEvents) {
		maxEvents = o.CutAt
	}
	k, err := sim.New(sim.Config{
		Seed: o.Seed, Nodes: setup.Nodes, Network: setup.Network, Clocks: setup.Clocks,
		Until: setup.Until, MaxTime: setup.MaxTime, MaxEvents: maxEvents, Trace: tracer,
		Observations: setup.Observations, Coverage: o.Coverage,
	})
	if err != nil {
		return nil, &InputError{Err: fmt.Errorf("%s: %w", sc.Name, err)}
	}
	return k, nil
}

// arm schedules a run's faults and workload and sets its stop rule.
func arm(k *sim.Kernel, setup *Setup) error {
	if err := setup.Faults.Apply(k); err != nil {
		return &InputError{Err: err}
	}
	if setup.Workload != nil {
		setup.Workload(k)
	}
	if setup.Stop != nil {
		k.StopWhen(func() bool { return setup.Stop(k) })
	}
	return nil
}

// Start builds one run of sc exactly as Run does — faults scheduled, workload injected,
// stop rule set — and returns its kernel before the first event, for a caller that
// steps through it (simrun explore rebuilds states by re-execution). Tracer, when set,
// receives the records.
func Start(sc *Scenario, o Options) (*sim.Kernel, *Setup, error) {
	setup, _, err := Prepare(sc, o)
	if err != nil {
		return nil, nil, err
	}
	k, err := newKernel(sc, o, setup, o.Tracer)
	if err != nil {
		return nil, nil, err
	}
	if err := arm(k, setup); err != nil {
		return nil, nil, err
	}
	return k, setup, nil
}

// RunName looks a scenario up and runs it.
func RunName(name string, o Options) (*Report, error) {
	sc, err := Lookup(name)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	return Run(sc, o)
}

// ReplayResult says whether a re-execution matched a trace file.
type ReplayResult struct {
	Lines int // lines compared
	// Line is the first differing line (1-based), 0 if none; Want and Got are its
	// contents in the file and in the re-execution ("" past the end).
	Line      int
	Want, Got string
}

// Same reports whether the re-execution matched.
func (r ReplayResult) Same() bool { return r.Line == 0 }

// ReadHeader reads the first line of a trace.
func ReadHeader(data []byte) (TraceHeader, error) {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	var h TraceHeader
	if err := json.Unmarshal(line, &h); err != nil {
		return h, inputErr("not a simrun trace: first line: %v", err)
	}
	if h.Format != sim.TraceFormat {
		return h, inputErr("not a simrun trace (format %q, want %q)", h.Format, sim.TraceFormat)
	}
	return h, nil
}

// Replay re-executes a simulator trace from its header and compares every line.
func Replay(data []byte) (ReplayResult, error) {
	h, err := ReadHeader(data)
	if err != nil {
		return ReplayResult{}, err
	}
	if h.Engine != "sim" {
		return ReplayResult{}, inputErr("trace engine %q: not a simulator trace", h.Engine)
	}
	sc, err := Lookup(h.Scenario)
	if err != nil {
		return ReplayResult{}, &InputError{Err: err}
	}
	var buf bytes.Buffer
	plan := h.Faults
	if _, err := Run(sc, Options{Seed: h.Seed, Params: h.Params, Faults: &plan, TraceTo: &buf}); err != nil {
		return ReplayResult{}, err
	}
	return CompareLines(data, buf.Bytes()), nil
}

// CompareLines compares two traces line by line.
func CompareLines(want, got []byte) ReplayResult {
	ws := bufio.NewScanner(bytes.NewReader(want))
	gs := bufio.NewScanner(bytes.NewReader(got))
	ws.Buffer(make([]byte, 1<<20), 1<<30)
	gs.Buffer(make([]byte, 1<<20), 1<<30)
	n := 0
	for {
		wok, gok := ws.Scan(), gs.Scan()
		if !wok && !gok {
			return ReplayResult{Lines: n}
		}
		n++
		var w, g string
		if wok {
			w = ws.Text()
		}
		if gok {
			g = gs.Text()
		}
		if !wok || !gok || w != g {
			return ReplayResult{Lines: n, Line: n, Want: w, Got: g}
		}
	}
}

// FooterEnd returns the "end" of a trace's footer line — what the run or the path
// showed ("quiescent", "violation of always P") — or "" if the trace has no footer.
func FooterEnd(data []byte) string {
	last := bytes.TrimRight(data, "\n")
	if i := bytes.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:]
	}
	var f struct {
		End string `json:"end"`
		Ev  string `json:"ev"`
	}
	if json.Unmarshal(last, &f) != nil || f.Ev != "" {
		return ""
	}
	return f.End
}

// ReadTrace reads a trace file (a clear error for a missing or unreadable file).
func ReadTrace(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	return b, nil
}

// ShellQuote quotes s for a POSIX shell when it needs it (a parameter value with a
// space, a quote or a glob character), so that a printed command pastes as it reads.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellJoin quotes each argument (ShellQuote) and joins them with spaces.
func ShellJoin(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}
