package scenariotest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"

	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
	"github.com/simrun-dev/simrun/sim/demo"
)

// forgetful is a deliberately broken demo server: it forgets its deduplication entry
// for a client before every request, so a retried request is applied twice.
type forgetful struct{ *demo.Server }

func (f forgetful) Handle(in sim.Input, out *sim.Outbox) {
	if req, ok := in.Msg.(demo.Request); ok && in.Kind == sim.Receive {
		delete(f.Last, req.Client)
	}
	f.Server.Handle(in, out)
}

func brokenSystem(cfg *demo.Config, clients int) []sim.NodeSpec {
	specs := demo.System(cfg, clients)
	specs[0].New = func() sim.Node { return forgetful{demo.NewServer(cfg)().(*demo.Server)} }
	return specs
}

var builds atomic.Int64

func init() {
	counted := scenarios.DemoBuild(scenarios.DemoNoFaults, sim.Network{}, nil)
	scenarios.Register(&scenarios.Scenario{
		Name: "test/demo-counted", Help: "the demo, counting its builds",
		Params: paramsOf("demo/happy"),
		Build: func(b *scenarios.Build) (*scenarios.Setup, error) {
			builds.Add(1)
			return counted(b)
		},
	})
	deaf := scenarios.DemoBuild(scenarios.DemoFaults, sim.Network{}, nil)
	scenarios.Register(&scenarios.Scenario{
		Name: "test/demo-deaf", Help: "the demo, ignoring the plan it is given",
		Params: paramsOf("demo/happy"),
		Build: func(b *scenarios.Build) (*scenarios.Setup, error) {
			b.Faults = nil
			return deaf(b)
		},
	})
	scenarios.Register(&scenarios.Scenario{
		Name: "test/demo-forgetful-faults", Help: "the broken demo under demo/faults' seeded plans",
		Params: paramsOf("demo/happy"),
		Build:  scenarios.DemoBuild(scenarios.DemoFaults, sim.Network{}, brokenSystem),
	})
	scenarios.Register(&scenarios.Scenario{
		Name: "test/demo-forgetful", Help: "demo counter service whose server forgets retried requests (broken on purpose)",
		Params: paramsOf("demo/happy"),
		Build:  scenarios.DemoBuild(scenarios.DemoNoFaults, sim.Network{}, brokenSystem),
	})
}

func paramsOf(name string) []scenarios.Param {
	sc, err := scenarios.Lookup(name)
	if err != nil {
		panic(err)
	}
	return sc.Params
}

var small = map[string]string{"ops": "5", "clients": "2", "horizon": "500ms"}

func TestBrokenDemoHappyPathPasses(t *testing.T) {
	// Without faults the broken server is never exercised: replies beat the retry timer.
	rep, err := scenarios.RunName("test/demo-forgetful", scenarios.Options{Seed: 1, Params: small})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() {
		t.Fatalf("fault-free run of the broken variant failed: %s", rep.Verdict)
	}
}

// TestFindShrinksBrokenDemo: rapid catches the broken server and shrinks the fault
// plan to two events: isolating the server for 4ms makes a client retry a request the
// server already applied, and the forgetful server applies it again. Pinned: a change
// in PlanGen's drawing or shrinking shows here.
func TestFindShrinksBrokenDemo(t *testing.T) {
	f, err := Find("TestFindShrinksBrokenDemo", "test/demo-forgetful", Options{Checks: 100, Params: small, PlanDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if f == nil {
		t.Fatal("the broken variant passed every case")
	}
	t.Logf("%s", f.Message())
	if f.Plan.Len() > 2 {
		t.Errorf("minimal plan has %d events, want at most 2", f.Plan.Len())
	}
	if got, want := f.Plan.String(), "partition s@4ms, heal@8ms"; got != want || f.Seed != 9 {
		t.Errorf("minimal case: seed %d, plan %q; pinned seed 9, plan %q", f.Seed, got, want)
	}
	if f.Verdict.Class != checker.Safety || f.Verdict.Property != "demo/at-most-once" {
		t.Errorf("verdict %v", f.Verdict)
	}
	// The plan file holds the plan, and the command replays the same failure.
	b, err := os.ReadFile(f.PlanFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(f.Plan.JSON()) {
		t.Errorf("plan file holds\n%s\nwant\n%s", b, f.Plan.JSON())
	}
	wantCmd := "simrun run test/demo-forgetful --seed 9 -p clients=2 -p horizon=500ms -p ops=5 --faults " + f.PlanFile
	if f.Command != wantCmd {
		t.Errorf("command %q, want %q", f.Command, wantCmd)
	}
	plan, err := faults.Load(f.PlanFile)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := scenarios.RunName("test/demo-forgetful", scenarios.Options{Seed: f.Seed, Params: small, Faults: &plan})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict.Property != "demo/at-most-once" {
		t.Errorf("replay verdict %v", rep.Verdict)
	}
	// Linearizability fails too, and its visualization was written beside the plan.
	var vis string
	for _, v := range f.Verdicts {
		if v.Property == "demo/linearizable" {
			vis = v.Artifact
		}
	}
	if _, err := os.Stat(vis); vis == "" || err != nil || filepath.Dir(vis) != filepath.Dir(f.PlanFile) {
		t.Errorf("no visualization beside the plan: %q (%v)", vis, err)
	}
}

// TestFindPasses: Find on a correct scenario finds nothing, after exactly Checks cases
// (whatever -short says).
func TestFindPasses(t *testing.T) {
	builds.Store(0)
	f, err := Find("TestFindPasses", "test/demo-counted", Options{Checks: 37, Params: small})
	if err != nil || f != nil {
		t.Fatalf("failure %v, error %v", f, err)
	}
	if n := builds.Load(); n != 37+2 { // two builds: the node names and the plan probe
		t.Fatalf("%d builds, want 37 cases + 2", n)
	}
}

func TestHarnessErrors(t *testing.T) {
	for _, c := range []struct {
		scenario string
		o        Options
		want     string
	}{
		{"nope", Options{}, "unknown scenario"},
		{"demo/faults", Options{Params: map[string]string{"x": "1"}}, "unknown parameter"},
		{"demo/faults", Options{Checks: -1}, "Checks"},
		{"test/demo-deaf", Options{}, "ignores the fault plan"},
		{"demo/faults", Options{Limits: faults.Params{Horizon: time.Second, Crashable: []string{"zz"}}}, "unknown node"},
	} {
		if _, err := Find("x", c.scenario, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: error %v, want %q", c.scenario, c.o, err, c.want)
		}
	}
}

// TestPlansFailureOutput runs TestHelperPlansFails in a child process (a failing test
// cannot run in this one) and checks what a failing Plans prints: the minimal plan as
// JSON, the plan file, and the replay command.
func TestPlansFailureOutput(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPlansFails$", "-rapid.nofailfile")
	cmd.Env = append(os.Environ(), "SCENARIOTEST_CHILD=plans", "SIMRUN_PLAN_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child passed:\n%s", out)
	}
	file := filepath.Join(dir, "simrun-plan-TestHelperPlansFails--test_demo-forgetful.json")
	plan, lerr := faults.Load(file)
	if lerr != nil {
		t.Fatalf("%v\n%s", lerr, out)
	}
	for _, want := range []string{
		"scenario test/demo-forgetful fails on seed ",
		"verdict:   safety demo/at-most-once",
		"plan file: " + file,
		"replay:    simrun run test/demo-forgetful --seed ",
		"-p clients=2 -p horizon=500ms -p ops=5 --faults " + file,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(plan.JSON())), "\n") {
		if !strings.Contains(string(out), line+"\n") {
			t.Errorf("output lacks the plan's line %q:\n%s", line, out)
		}
	}
	if plan.Len() == 0 || plan.Len() > 2 {
		t.Errorf("plan of %d events:\n%s", plan.Len(), plan.JSON())
	}
}

// TestHelperPlansFails is the child half of TestPlansFailureOutput; it does nothing
// unless started by it.
func TestHelperPlansFails(t *testing.T) {
	if os.Getenv("SCENARIOTEST_CHILD") != "plans" {
		return
	}
	Plans(t, "test/demo-forgetful", Options{Checks: 50, Params: small})
}

// TestSeedsFailureOutput: what a failing Seeds prints (in a child process).
func TestSeedsFailureOutput(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSeedsFails$")
	cmd.Env = append(os.Environ(), "SCENARIOTEST_CHILD=seeds")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child passed:\n%s", out)
	}
	for _, want := range []string{
		"scenariotest: test/demo-forgetful-faults fails on seed 1 (the lowest failing seed of 1-50):",
		"safety demo/at-most-once",
		"faults:    ",
		"reproduce: simrun run test/demo-forgetful-faults --seed 1\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestHelperSeedsFails is the child half of TestSeedsFailureOutput.
func TestHelperSeedsFails(t *testing.T) {
	if os.Getenv("SCENARIOTEST_CHILD") != "seeds" {
		return
	}
	Seeds(t, "test/demo-forgetful-faults", 1, 50, nil)
}

// TestPlansDemo: the real demo protocol survives every drawn plan (crashes of any node,
// partitions, cuts, spikes, skews) within the default limits.
func TestPlansDemo(t *testing.T) {
	Plans(t, "demo/faults", Options{Checks: 100})
}

// Under a mutation pass (tools/mutate sets SIMRUN_MUTANT) pinned counts are not
// compared and the bound is four times the count; otherwise twice.
func TestUnpinnedUnderMutationPass(t *testing.T) {
	t.Setenv(MutantEnv, "")
	if Unpinned() || Bound(100) != 200 {
		t.Fatalf("outside a pass: Unpinned %v, Bound %d", Unpinned(), Bound(100))
	}
	t.Setenv(MutantEnv, "1")
	if !Unpinned() || Bound(100) != 400 {
		t.Fatalf("in a pass: Unpinned %v, Bound %d", Unpinned(), Bound(100))
	}
}
