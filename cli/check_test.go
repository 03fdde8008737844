package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/model/twophase"
	"github.com/simrun-dev/simrun/sim"
)

// A test-only model with a seeded bug: the 2PC coordinator never stores its decision
// (so after a crash it presumes abort although it sent commit).
type forgetfulCoord struct{ twophase.Coordinator }

func (f *forgetfulCoord) Handle(in sim.Input, out *sim.Outbox) {
	var inner sim.Outbox
	f.Coordinator.Handle(in, &inner)
	for _, w := range inner.Writes() {
		if w.Key != "decision" {
			out.Store(w.Key, w.Value)
		}
	}
	for _, op := range inner.Timers() {
		if op.Cancel {
			out.CancelTimer(op.ID)
		} else {
			out.SetTimer(op.ID, op.After)
		}
	}
	for _, e := range inner.Sends() {
		out.Send(e.To, e.Msg)
	}
	for i := 0; i < inner.NumObservations(); i++ {
		k, v := inner.Observation(i)
		out.Observe(k, v)
	}
}

// flip toggles a bit on a timer until the workload's stop arrives.
type flip struct{ Bit, Stopped bool }

type stop struct{}

func (stop) Kind() string { return "Stop" }

func (f *flip) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start, sim.Restart:
		out.SetTimer("flip", time.Second)
	case sim.Timeout:
		if !f.Stopped {
			f.Bit = !f.Bit
			out.SetTimer("flip", time.Second)
		}
	case sim.Receive:
		f.Stopped = true
		out.Store("stopped", true)
	}
}

func init() {
	model.Register(model.Model{
		Name:   "test/flip",
		Help:   "a timer flips a bit until a stop input (test only)",
		Params: []model.Param{{Name: "crashes", Default: "0"}},
		Build: func(p *model.Params) (model.System, error) {
			return &model.Actors{
				Nodes:   []sim.NodeSpec{{Name: "f", New: func() sim.Node { return &flip{} }}},
				Inject:  []model.Injection{{To: 0, Msg: stop{}}},
				Crashes: model.Crashes{Budget: p.IntRange("crashes", 0, 1)},
				Properties: []model.Property[*model.State]{model.Eventually("stopped", func(s *model.State) bool {
					_, ok := s.Stable(0).Peek("stopped")
					return ok
				})},
			}, nil
		},
	})
	model.Register(model.Model{
		Name: "test/never",
		Help: "test/flip asked for a state it never reaches (test only)",
		Build: func(p *model.Params) (model.System, error) {
			return &model.Actors{
				Nodes:  []sim.NodeSpec{{Name: "f", New: func() sim.Node { return &flip{} }}},
				Inject: []model.Injection{{To: 0, Msg: stop{}}},
				Properties: []model.Property[*model.State]{model.Sometimes("never stored", func(s *model.State) bool {
					_, ok := s.Stable(0).Peek("never")
					return ok
				})},
			}, nil
		},
	})
	model.Register(model.Model{
		Name: "test/forgetful-2pc",
		Help: "2PC whose coordinator forgets to log its decision (test only)",
		Build: func(p *model.Params) (model.System, error) {
			return twophase.Actors(twophase.Config{Participants: 2, Crashes: 1,
				Coordinator: func(ps []sim.NodeID) sim.Node { return &forgetfulCoord{twophase.Coordinator{Parts: ps}} }})
		},
	})
}

func checkJSONOut(t *testing.T, args ...string) (int, checkJSON, string) {
	t.Helper()
	code, out, errs := cli(t, append([]string{"check"}, args...)...)
	var j checkJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%v: not one JSON object (%v):\n%s%s", args, err, out, errs)
	}
	return code, j, errs
}

func TestCheckListsModels(t *testing.T) {
	code, out, _ := cli(t, "check")
	if code != 0 || !strings.Contains(out, "twophase") || !strings.Contains(out, "2pc") || !strings.Contains(out, "-p rm=3") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestCheckTwoPhaseJSON(t *testing.T) {
	for _, c := range []struct {
		args                   []string
		distinct, total, depth int64
	}{
		{[]string{"-p", "rm=3"}, 288, 1146, 11},
		{[]string{"-p", "rm=5", "--workers", "2"}, 8832, 58146, 17},
		{[]string{"-p", "rm=4", "--strategy", "dfs"}, 1568, 8258, -1},
	} {
		code, j, _ := checkJSONOut(t, append([]string{"twophase", "--json"}, c.args...)...)
		if code != 0 || j.Distinct != c.distinct || j.Total != c.total || (c.depth > 0 && int64(j.Depth) != c.depth) || j.Violation != nil || j.Outcome != "complete" {
			t.Fatalf("%v: exit %d %+v", c.args, code, j)
		}
		if j.Seconds <= 0 || j.Collision != 0 || j.Trace != nil {
			t.Fatalf("%v: %+v", c.args, j)
		}
	}
	// The raw object has at least the documented keys.
	_, out, _ := cli(t, "check", "twophase", "--json")
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"distinct", "total", "depth", "seconds", "violation"} {
		if _, ok := raw[k]; !ok {
			t.Fatalf("key %q missing:\n%s", k, out)
		}
	}
}

func TestCheckText(t *testing.T) {
	code, out, _ := cli(t, "check", "2pc")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{"1141 distinct, 3243 generated, depth 12", "sometimes  blocked: witnessed (depth 4)", "crash c"} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q:\n%s", want, out)
		}
	}
}

func TestCheckViolationTraceReplay(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "cx.jsonl")
	code, out, errs := cli(t, "check", "test/forgetful-2pc", "--trace", trace)
	if code != 1 {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "always one decision violated at depth 8") || !strings.Contains(errs, trace) || strings.Count(errs, "\n") != 1 {
		t.Fatalf("stderr: %q", errs)
	}
	code, out, errs = cli(t, "replay", trace)
	if code != 0 || !strings.Contains(out, "replay ok") || !strings.Contains(out, "reproduced: violation of always one decision") {
		t.Fatalf("replay exit %d: %s%s", code, out, errs)
	}
	// A tampered trace: the replay departs at the changed line and exits 1.
	data, _ := os.ReadFile(trace)
	bad := bytes.Replace(data, []byte(`"Commit":true`), []byte(`"Commit":false`), 1)
	if bytes.Equal(bad, data) {
		t.Fatal("nothing to tamper with")
	}
	tampered := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(tampered, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = cli(t, "replay", tampered)
	if code != 1 || !strings.Contains(out, "differs") {
		t.Fatalf("tampered replay exit %d:\n%s", code, out)
	}
	// JSON names the violation and the trace.
	code, j, _ := checkJSONOut(t, "test/forgetful-2pc", "--json", "--trace", trace, "--workers", "2")
	if code != 1 || j.Violation == nil || *j.Violation != "one decision" || j.Trace == nil || *j.Trace != trace || j.Kind != "always" {
		t.Fatalf("exit %d %+v", code, j)
	}
}

func TestCheckFairCycles(t *testing.T) {
	// An actor system is checked under weak fairness by default (protocol claims
	// assume fair delivery), on finite and infinite paths.
	for _, args := range [][]string{{"test/flip", "--json"}, {"test/flip", "--fair", "--json"}, {"test/flip", "--fairness", "weak", "--json"}} {
		code, j, _ := checkJSONOut(t, args...)
		if code != 0 || !j.Fair || !j.Liveness || j.Violation != nil {
			t.Fatalf("%v: exit %d %+v", args, code, j)
		}
	}
	if _, out, _ := cli(t, "check", "test/flip"); !strings.Contains(out, "finite and infinite paths (weak fairness)") {
		t.Fatalf("text output does not state the liveness check:\n%s", out)
	}
	// Without fairness the flip cycle is admissible: a lasso, not "holds" (it used to
	// be reported holding, checked on maximal finite paths only).
	dir := t.TempDir()
	trace := filepath.Join(dir, "nofair.jsonl")
	code, out, errs := cli(t, "check", "test/flip", "--fairness", "none", "--trace", trace)
	if code != 1 || !strings.Contains(out, "a cycle (no fairness assumed) back to step") || !strings.Contains(errs, "eventually stopped violated") {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	if code, out, errs = cli(t, "replay", trace); code != 0 {
		t.Fatalf("replay exit %d: %s%s", code, out, errs)
	}
	// With a crash, even a weakly fair run can flip forever.
	trace = filepath.Join(dir, "lasso.jsonl")
	code, out, errs = cli(t, "check", "test/flip", "-p", "crashes=1", "--trace", trace)
	if code != 1 || !strings.Contains(out, "a fair cycle back to step") || !strings.Contains(errs, "eventually stopped violated") {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	if code, out, errs = cli(t, "replay", trace); code != 0 {
		t.Fatalf("replay exit %d: %s%s", code, out, errs)
	}
	oneLineErr(t, "--fair", "check", "test/flip", "--fair", "--strategy", "random")
	oneLineErr(t, "--fairness", "check", "test/flip", "--fairness", "strong")
	oneLineErr(t, "contradicts", "check", "test/flip", "--fair", "--fairness", "none")
}

func TestCheckUnwitnessedSometimes(t *testing.T) {
	code, j, errs := checkJSONOut(t, "test/never", "--json")
	if code != 1 || j.Violation == nil || *j.Violation != "never stored" || j.Trace != nil {
		t.Fatalf("exit %d %+v", code, j)
	}
	if !strings.Contains(errs, "no reachable state satisfies it") {
		t.Fatalf("stderr %q", errs)
	}
	// Issue 33: 2PC without crashes has no blocking state, and the model does not ask
	// for a witness there.
	if code, j, errs := checkJSONOut(t, "2pc", "-p", "crashes=0", "--json"); code != 0 || j.Violation != nil {
		t.Fatalf("2pc -p crashes=0: exit %d %+v %s", code, j, errs)
	}
}

// A check that proved nothing never exits 0: a bound, sampling or an undecided
// property exits 4 (inconclusive), with one line on stderr saying why.
func TestCheckBoundReached(t *testing.T) {
	code, out, errs := cli(t, "check", "twophase", "-p", "rm=7", "--max-states", "1000")
	if code != 4 || !strings.Contains(out, "bound reached (max-states)") || !strings.Contains(out, "1000 distinct") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(errs, "inconclusive: bound reached (max-states); 4 of 4 properties undecided") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("stderr %q", errs)
	}
	code, j, _ := checkJSONOut(t, "twophase", "-p", "rm=7", "--max-depth", "5", "--json")
	if code != 4 || j.Outcome != "bound reached" || j.Bound != "max-depth" || j.Depth != 5 {
		t.Fatalf("exit %d %+v", code, j)
	}
	code, j, _ = checkJSONOut(t, "twophase", "--strategy", "random", "--seed", "3", "--walks", "10", "--json")
	if code != 4 || j.Outcome != "sampled" || j.Distinct == 0 {
		t.Fatalf("random: exit %d %+v", code, j)
	}
	// A Boundary (maxflight) that cut paths before an eventually-property held leaves
	// it undecided: exit 4 with the reason, never "holds" (a reviewer found exit 0).
	code, out, errs = cli(t, "check", "winkowski", "-p", "bug=silent-release", "-p", "maxflight=1")
	if code != 4 || !strings.Contains(out, "all tasks done: unknown (the search stopped at") || !strings.Contains(errs, "1 of 8 properties undecided (all tasks done)") {
		t.Fatalf("boundary: exit %d\n%s\n%s", code, out, errs)
	}
	// A complete search exits 0.
	if code, _, errs := cli(t, "check", "twophase", "-p", "rm=3"); code != 0 {
		t.Fatalf("complete search: exit %d %s", code, errs)
	}
}

func TestCheckBadInput(t *testing.T) {
	for _, c := range []struct {
		want string
		args []string
	}{
		{"unknown model", []string{"check", "nosuch"}},
		{"rm", []string{"check", "twophase", "-p", "rm=x"}},
		{"rm", []string{"check", "twophase", "-p", "rm=16"}},
		{"unknown parameter", []string{"check", "twophase", "-p", "n=3"}},
		{"malformed parameter", []string{"check", "twophase", "-p", "rm"}},
		{"given twice", []string{"check", "twophase", "-p", "rm=3", "-p", "rm=4"}},
		{"--max-states", []string{"check", "twophase", "--max-states", "0"}},
		{"--max-depth", []string{"check", "twophase", "--max-depth", "-3"}},
		{"--workers", []string{"check", "twophase", "--workers", "0"}},
		{"--walks", []string{"check", "twophase", "--strategy", "random", "--walks", "0"}},
		{"strategy", []string{"check", "twophase", "--strategy", "bogus"}},
		{"bfs only", []string{"check", "twophase", "--strategy", "dfs", "--workers", "2"}},
		{"random", []string{"check", "twophase", "--walks", "5"}},
		{"unexpected argument", []string{"check", "twophase", "2pc"}},
		{"need a MODEL", []string{"check", "--json"}},
		{"max-states", []string{"check", "twophase", "--max-states", "lots"}},
		{"8 interchangeable nodes (want 2..7)", []string{"check", "2pc", "-p", "participants=8", "-p", "symmetry=true"}},
	} {
		oneLineErr(t, c.want, c.args...)
	}
}

func TestCheckProgressOnTerminal(t *testing.T) {
	old := checkProgressEvery
	checkProgressEvery = time.Millisecond
	defer func() { checkProgressEvery = old }()
	var out, errb bytes.Buffer
	code := runMain(&env{stdout: &out, stderr: &errb, tty: true}, []string{"check", "twophase", "-p", "rm=7"})
	if code != 0 || !strings.Contains(errb.String(), "\rcheck twophase: ") || !strings.HasSuffix(errb.String(), "\n") {
		t.Fatalf("exit %d stderr %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	runMain(&env{stdout: &out, stderr: &errb}, []string{"check", "twophase", "-p", "rm=7"})
	if errb.Len() != 0 {
		t.Fatalf("progress without a terminal: %q", errb.String())
	}
}
