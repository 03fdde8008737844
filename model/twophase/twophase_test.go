package twophase

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/sim"
)

// TLC, Stateright and Spin agree on these counts for TwoPhase.tla.
var tlc = []struct {
	rm              int
	distinct, total int64
	depth           int
}{
	{3, 288, 1146, 11},
	{4, 1568, 8258, 14},
	{5, 8832, 58146, 17},
	{6, 50816, 402306, 20},
	{7, 296448, 2744706, 23},
}

func TestTwoPhaseCountsMatchTLC(t *testing.T) {
	for _, c := range tlc {
		for _, w := range []int{1, 2} {
			sp, err := Spec(c.rm)
			if err != nil {
				t.Fatal(err)
			}
			res, err := model.Check(sp, model.Options{Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != model.Complete || res.Distinct != c.distinct || res.Total != c.total || res.Depth != c.depth {
				t.Fatalf("rm=%d workers=%d: %v %d distinct %d total depth %d; TLC: %d %d %d",
					c.rm, w, res.Outcome, res.Distinct, res.Total, res.Depth, c.distinct, c.total, c.depth)
			}
			if res.Collision != 0 || res.BytesPerState > 16 && res.Distinct > 100_000 {
				t.Fatalf("rm=%d: collision %g, %.1f bytes/state", c.rm, res.Collision, res.BytesPerState)
			}
			// The sometimes-witnesses are shortest paths: commit needs every rm to
			// prepare, be received, then the commit and its receipts (3·rm+1 steps).
			if p := res.Properties[2]; p.Name != "Committed" || p.Status != model.Witnessed || p.Depth != 3*c.rm+2 {
				t.Fatalf("rm=%d: %s %v depth %d", c.rm, p.Name, p.Status, p.Depth)
			}
		}
	}
}

func TestTwoPhaseDFSAndRandom(t *testing.T) {
	for _, c := range tlc[:3] {
		sp, _ := Spec(c.rm)
		res, err := model.Check(sp, model.Options{Strategy: model.DFS})
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != model.Complete || res.Distinct != c.distinct || res.Total != c.total {
			t.Fatalf("dfs rm=%d: %v %d %d", c.rm, res.Outcome, res.Distinct, res.Total)
		}
		res, err = model.Check(sp, model.Options{Strategy: model.Random, Seed: 1, Walks: 200})
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != model.Sampled || res.Distinct == 0 || res.Distinct > c.distinct {
			t.Fatalf("random rm=%d: %v %d", c.rm, res.Outcome, res.Distinct)
		}
	}
}

// A seeded bug: TMCommit without waiting for every Prepared message. TCConsistent
// fails, and BFS finds the shortest counterexample: an rm aborts, the TM commits,
// another rm receives the commit.
func TestTwoPhaseSeededBug(t *testing.T) {
	sp, _ := Spec(3)
	l, _ := NewLayout(3)
	sp.Next = func(s uint64, emit func(model.Action, uint64)) {
		l.Next(s, emit)
		if l.TMState(s) == TMInit && !l.SentCommit(s) {
			emit(actTMCommit<<4|15, s&^(3<<l.tmShift)|TMCommitted<<l.tmShift|l.commitBit) // BUG: no tmPrepared = RM
		}
	}
	for _, w := range []int{1, 2} {
		res, err := model.Check(sp, model.Options{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != model.Violated || res.Violation.Name != "TCConsistent" || res.Violation.Depth != 4 {
			t.Fatalf("workers %d: %v %+v", w, res.Outcome, res.Violation)
		}
	}
	res, _ := model.Check(sp, model.Options{})
	steps, _ := res.Steps(res.Violation)
	want := []string{"init", "RMChooseToAbort(r1)", "TMCommit", "RMRcvCommitMsg(r2)"}
	for i, s := range steps {
		if !strings.HasPrefix(s, want[i]) {
			t.Fatalf("step %d: %s, want %s", i, s, want[i])
		}
	}
}

func TestTwoPhaseTraceReplays(t *testing.T) {
	m, err := model.Lookup("twophase")
	if err != nil {
		t.Fatal(err)
	}
	sys, p, err := m.Instantiate(map[string]string{"rm": "4"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := model.Check(sys, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := res.Properties[2]
	var buf bytes.Buffer
	hdr := model.TraceHeader{Format: sim.TraceFormat, Engine: model.TraceEngine, Scenario: "twophase", Params: p.Values(), Property: w.Name, Kind: w.Kind}
	if err := res.WriteTrace(&buf, w, hdr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"end":"witness of sometimes Committed"`) {
		t.Fatalf("footer:\n%s", buf.String())
	}
	again, err := model.Replay(sys, buf.Bytes())
	if err != nil || !bytes.Equal(again, buf.Bytes()) {
		t.Fatalf("replay: %v\n%s", err, again)
	}
	for _, bad := range []map[string]string{{"rm": "0"}, {"rm": "16"}, {"rm": "x"}, {"n": "3"}} {
		if _, _, err := m.Instantiate(bad); err == nil {
			t.Fatalf("%v accepted", bad)
		}
	}
}

// ---- the actor-system 2PC ----

func check2PC(t *testing.T, cfg Config, o model.Options) *model.Result {
	t.Helper()
	sys, err := Actors(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := model.Check(sys, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestActor2PCSafeAndBlocking(t *testing.T) {
	for _, w := range []int{1, 2} {
		res := check2PC(t, Config{Participants: 2, Crashes: 1}, model.Options{Workers: w})
		if res.Outcome != model.Complete {
			t.Fatalf("workers %d: %v %+v", w, res.Outcome, res.Violation)
		}
		// Regression tripwire (like Stateright's pinned counts).
		if res.Distinct != 1141 || res.Total != 3243 || res.Depth != 12 {
			t.Fatalf("workers %d: %d distinct %d total depth %d", w, res.Distinct, res.Total, res.Depth)
		}
		var blocked *model.PropertyResult
		for _, p := range res.Properties {
			if p.Name == "blocked" {
				blocked = p
			}
		}
		// Begin, a participant prepares, the coordinator crashes: 3 steps after the
		// initial state.
		if blocked == nil || blocked.Status != model.Witnessed || blocked.Depth != 4 {
			t.Fatalf("blocked: %+v", blocked)
		}
		steps, _ := res.Steps(blocked)
		if !strings.HasPrefix(steps[len(steps)-1], "crash c") || !strings.Contains(strings.Join(steps, "\n"), "recv p1 <- c Prepare") {
			t.Fatalf("witness:\n%s", strings.Join(steps, "\n"))
		}
	}
	// Without crashes there is no blocking state, and the model does not ask for one
	// (`simrun check 2pc -p crashes=0` used to exit 1 on the missing witness): the
	// check completes, every property holds or is witnessed.
	res := check2PC(t, Config{Participants: 2, Crashes: 0}, model.Options{})
	if res.Outcome != model.Complete || res.Violation != nil {
		t.Fatalf("no crash: %v %+v", res.Outcome, res.Violation)
	}
	for _, p := range res.Properties {
		if p.Name == "blocked" {
			t.Fatalf("no crash: the unreachable blocking state is still asked for: %+v", p)
		}
	}
}

// forgetful is the seeded bug, a test-only variant: a coordinator that never
// force-writes its decision (it filters that write out of the real coordinator's
// effects). After a crash it presumes abort although it may have sent commit.
type forgetful struct{ Coordinator }

func (f *forgetful) Handle(in sim.Input, out *sim.Outbox) {
	var inner sim.Outbox
	f.Coordinator.Handle(in, &inner)
	for _, w := range inner.Writes() {
		switch {
		case w.Key == "decision":
		case w.Delete:
			out.Delete(w.Key)
		default:
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

func TestActor2PCSeededBugCaught(t *testing.T) {
	cfg := Config{Participants: 2, Crashes: 1, Coordinator: func(ps []sim.NodeID) sim.Node { return &forgetful{Coordinator{Parts: ps}} }}
	for _, w := range []int{1, 2} {
		res := check2PC(t, cfg, model.Options{Workers: w})
		if res.Outcome != model.Violated || res.Violation.Name != "one decision" {
			t.Fatalf("workers %d: %v %+v", w, res.Outcome, res.Violation)
		}
		// Begin, both prepare, both votes (commit decided), crash, restart (presumed
		// abort): 7 steps after the initial state.
		if res.Violation.Depth != 8 {
			t.Fatalf("workers %d: depth %d", w, res.Violation.Depth)
		}
	}
	// The counterexample is a trace that replays.
	sys, _ := Actors(cfg)
	res, _ := model.Check(sys, model.Options{})
	var buf bytes.Buffer
	hdr := model.TraceHeader{Format: sim.TraceFormat, Engine: model.TraceEngine, Scenario: "2pc", Property: res.Violation.Name, Kind: res.Violation.Kind}
	if err := res.WriteTrace(&buf, res.Violation, hdr); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"ev":"crash","node":"c"`, `"ev":"restart","node":"c"`, `"end":"violation of always one decision"`} {
		if !strings.Contains(buf.String(), want) {
			t.Fatalf("trace lacks %s:\n%s", want, buf.String())
		}
	}
	again, err := model.Replay(sys, buf.Bytes())
	if err != nil || !bytes.Equal(again, buf.Bytes()) {
		t.Fatalf("replay: %v\n%s", err, again)
	}
	// Against the correct coordinator the same trace departs (the decision is stored).
	good, _ := Actors(Config{Participants: 2, Crashes: 1})
	again, err = model.Replay(good, buf.Bytes())
	if err != nil || bytes.Equal(again, buf.Bytes()) {
		t.Fatalf("replay against the fixed protocol matched (%v)", err)
	}
}

// The simulator and the checker agree on the semantics: every simulator run of the 2PC
// nodes, with crashes and restarts of any node at random times, is a path the checker
// explores, record for record.
func TestActor2PCSimulatorRunsArePaths(t *testing.T) {
	sys, err := Actors(Config{Participants: 3, Crashes: 3})
	if err != nil {
		t.Fatal(err)
	}
	followed := 0
	for seed := uint64(1); seed <= 150; seed++ {
		r := sim.NewRand(seed)
		col := &sim.RecordCollector{}
		k, err := sim.New(sim.Config{Seed: seed, Nodes: sys.Nodes, Trace: col,
			Network: sim.Network{Latency: sim.Uniform(time.Millisecond, 5*time.Millisecond)}})
		if err != nil {
			t.Fatal(err)
		}
		k.Inject(sim.Time(r.Int64Range(0, int64(3*time.Millisecond))), 0, Begin{})
		for c := 0; c < r.IntN(4); c++ {
			n := sim.NodeID(r.IntN(4))
			at := sim.Time(r.Int64Range(0, int64(12*time.Millisecond)))
			k.Schedule(at, sim.Fault{Kind: sim.FaultCrash, Node: n})
			if r.IntN(4) > 0 {
				k.Schedule(at+sim.Time(r.Int64Range(0, int64(8*time.Millisecond))), sim.Fault{Kind: sim.FaultRestart, Node: n})
			}
		}
		res := k.Run()
		if res.Outcome != sim.Quiescent {
			t.Fatalf("seed %d: %v", seed, res.Outcome)
		}
		n, err := model.FollowTrace(sys, col.Records)
		if err != nil {
			t.Fatalf("seed %d: after %d records: %v", seed, n, err)
		}
		followed += n
	}
	if followed < 150*8 {
		t.Fatalf("only %d records followed", followed)
	}
}

func TestActor2PCParams(t *testing.T) {
	m, err := model.Lookup("2pc")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []map[string]string{{"participants": "0"}, {"participants": "9"}, {"crashes": "-1"}, {"crashes": "x"}, {"rm": "3"}} {
		if _, _, err := m.Instantiate(bad); err == nil {
			t.Fatalf("%v accepted", bad)
		}
	}
}

// model.CheckNamed runs a registered model by name with parameter overrides, as
// `simrun check` does, and refuses an unknown name or parameter.
func TestCheckNamed(t *testing.T) {
	res, err := model.CheckNamed("2pc", map[string]string{"participants": "2", "crashes": "1"}, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Distinct != 1141 {
		t.Fatalf("%d distinct, want 1141 (TestActor2PCSafeAndBlocking's count)", res.Distinct)
	}
	if _, err := model.CheckNamed("no-such-model", nil, model.Options{}); err == nil {
		t.Fatal("unknown model accepted")
	}
	if _, err := model.CheckNamed("2pc", map[string]string{"nope": "1"}, model.Options{}); err == nil {
		t.Fatal("unknown parameter accepted")
	}
}

// TestMaxMemoryEndsTheSearch: a search that passes Options.MaxMemory ends with the
// counts so far and outcome BoundReached, bound "max-memory" (simrun check: exit 4),
// by BFS on two workers and by DFS; the process is never killed by the runtime.
func TestMaxMemoryEndsTheSearch(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the memory bound reads /proc/self/statm (Linux only)")
	}
	sp, err := Spec(8) // 1 745 408 states: more than the first sample's 100 ms
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []model.Options{{Workers: 2}, {Strategy: model.DFS}} {
		o.MaxMemory = 1 // any process is larger
		res, err := model.Check(sp, o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != model.BoundReached || res.Bound != "max-memory" || res.Distinct == 0 || res.Distinct >= 1745408 {
			t.Errorf("%s: outcome %v, bound %q, %d states; want bound reached (max-memory) part way", o.Strategy, res.Outcome, res.Bound, res.Distinct)
		}
	}
	// A bound above what the search needs changes nothing.
	res, err := model.Check(sp, model.Options{MaxMemory: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != model.Complete || res.Distinct != 1745408 {
		t.Errorf("with a 1 TiB bound: outcome %v, %d states", res.Outcome, res.Distinct)
	}
}
