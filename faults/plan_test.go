package faults_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/sim"
)

var names = []string{"a", "b", "c"}

func TestValidationErrorsNameEntryAndField(t *testing.T) {
	for _, tc := range []struct {
		name, plan, entry, field, msg string
	}{
		{"unknown node", `[{"at":"1s","kind":"crash","node":"z"}]`, "entry 0 (crash)", `"node"`, `unknown node "z"`},
		{"missing node", `[{"at":"1s","kind":"crash"}]`, "entry 0 (crash)", `"node"`, "missing node"},
		{"restart of running node", `[{"at":"1s","kind":"restart","node":"a"}]`, "entry 0 (restart)", `"node"`, "is running"},
		{"restart twice", `[{"at":"1s","kind":"crash","node":"a"},{"at":"2s","kind":"restart","node":"a"},{"at":"3s","kind":"restart","node":"a"}]`, "entry 2 (restart)", `"node"`, "is running"},
		{"crash twice", `[{"at":"1s","kind":"crash","node":"a"},{"at":"2s","kind":"crash","node":"a"}]`, "entry 1 (crash)", `"node"`, "already crashed"},
		{"heal without partition", `[{"at":"1s","kind":"heal"}]`, "entry 0 (heal)", `"kind"`, "without an earlier partition"},
		{"heal twice", `[{"at":"1s","kind":"cut","from":"a","to":"b"},{"at":"2s","kind":"heal"},{"at":"3s","kind":"heal"}]`, "entry 2 (heal)", `"kind"`, "without"},
		{"negative time", `[{"at":"-1s","kind":"crash","node":"a"}]`, "entry 0 (crash)", `"at"`, "outside [0, 24h0m0s]"},
		{"unordered times", `[{"at":"2s","kind":"crash","node":"a"},{"at":"1s","kind":"crash","node":"b"}]`, "entry 1 (crash)", `"at"`, "before the previous"},
		{"unknown kind", `[{"at":"1s","kind":"meteor"}]`, "entry 0 (meteor)", `"kind"`, `unknown kind "meteor"`},
		{"missing kind", `[{"at":"1s"}]`, "entry 0 (?)", `"kind"`, "missing kind"},
		{"partition unknown node", `[{"at":"1s","kind":"partition","groups":[["a","q"]]}]`, "entry 0 (partition)", `"groups"`, `unknown node "q"`},
		{"partition node twice", `[{"at":"1s","kind":"partition","groups":[["a"],["a","b"]]}]`, "entry 0 (partition)", `"groups"`, "two groups"},
		{"partition no groups", `[{"at":"1s","kind":"partition"}]`, "entry 0 (partition)", `"groups"`, "at least one group"},
		{"partition of everything", `[{"at":"1s","kind":"partition","groups":[["a","b","c"]]}]`, "entry 0 (partition)", `"groups"`, "partitions nothing"},
		{"cut to self", `[{"at":"1s","kind":"cut","from":"a","to":"a"}]`, "entry 0 (cut)", `"to"`, "two different"},
		{"restore uncut link", `[{"at":"1s","kind":"restore","from":"a","to":"b"}]`, "entry 0 (restore)", `"to"`, "not cut"},
		{"spike without extra", `[{"at":"1s","kind":"spike","from":"a","to":"*","for":"1s"}]`, "entry 0 (spike)", `"extra"`, `field "extra": missing or zero: the latency the spike adds`},
		{"spike without duration", `[{"at":"1s","kind":"spike","from":"*","to":"b","extra":"5ms"}]`, "entry 0 (spike)", `"for"`, `field "for": missing or zero: how long the spike lasts`},
		{"skew without change", `[{"at":"1s","kind":"skew","node":"a"}]`, "entry 0 (skew)", `"step"`, "needs a step"},
		{"skew reversing clock", `[{"at":"1s","kind":"skew","node":"a","drift_ppm":-1000000}]`, "entry 0 (skew)", `"drift_ppm"`, "not a whole number in [-500000, 500000]"},
		{"burst probability", `[{"at":"1s","kind":"burst","loss":1.5,"for":"1s"}]`, "entry 0 (burst)", `"loss"`, "not in [0, 1]"},
		{"burst of nothing", `[{"at":"1s","kind":"burst","for":"1s"}]`, "entry 0 (burst)", `"loss"`, "above 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Parse refuses what is wrong in the file itself, Validate what is wrong
			// for the system: either way the error names the entry and the field.
			p, err := faults.Parse([]byte(`{"events":` + tc.plan + `}`))
			if err == nil {
				err = p.Validate(names)
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range []string{tc.entry, "field " + tc.field, tc.msg} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q does not contain %q", err, want)
				}
			}
			if _, _, err := p.Compile(names); err == nil && p.Len() > 0 {
				t.Fatal("Compile accepted an invalid plan")
			}
		})
	}
}

func TestParse(t *testing.T) {
	p, err := faults.Parse([]byte(`{"events":[{"at":"1.5s","kind":"crash","node":"a"},{"at":"2s","kind":"restart","node":"a"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Events[0].At != faults.Duration(1500*time.Millisecond) || p.Events[1].At != faults.Duration(2*time.Second) {
		t.Fatalf("times %v %v", p.Events[0].At, p.Events[1].At)
	}
	if err := p.Validate(names); err != nil {
		t.Fatal(err)
	}
	// Round trip through JSON.
	q, err := faults.Parse(p.JSON())
	if err != nil || q.String() != p.String() {
		t.Fatalf("round trip: %v %q vs %q", err, q, p)
	}
	for _, bad := range []string{
		`{"events":[{"at":"1s","kind":"crash","nod":"a"}]}`, // misspelt field
		`{"events":[{"at":"soon","kind":"crash","node":"a"}]}`,
		`{"events":[{"at":1.5,"kind":"crash","node":"a"}]}`,
		`{"events":[{"at":2000000000,"kind":"crash","node":"a"}]}`, // bare number: nanoseconds?
		`{"events":[]} {}`,
		`not json`,
	} {
		if _, err := faults.Parse([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestCompileAndSettlement(t *testing.T) {
	p, err := faults.Parse([]byte(`{"events": [
		{"at":"1s","kind":"crash","node":"a"},
		{"at":"1s","kind":"partition","groups":[["b"]]},
		{"at":"2s","kind":"spike","from":"b","to":"*","extra":"5ms","for":"3s"},
		{"at":"3s","kind":"heal"},
		{"at":"3s","kind":"cut","from":"b","to":"c"},
		{"at":"4s","kind":"skew","node":"c","step":"-2ms","drift_ppm":300}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	ts, fs, err := p.Compile(names)
	if err != nil {
		t.Fatal(err)
	}
	if ts[2] != sim.Time(2*time.Second) || fs[2].Kind != sim.FaultSpike || fs[2].From != 1 || fs[2].To != sim.Any {
		t.Fatalf("spike compiled to %v %+v", ts[2], fs[2])
	}
	if fs[1].Kind != sim.FaultPartition || len(fs[1].Groups) != 1 || fs[1].Groups[0][0] != 1 {
		t.Fatalf("partition compiled to %+v", fs[1])
	}
	if !fs[5].SetDrift || fs[5].DriftPPM != 300 || fs[5].Step != -2*time.Millisecond {
		t.Fatalf("skew compiled to %+v", fs[5])
	}
	s := p.Settled()
	if s.At != sim.Time(5*time.Second) || len(s.Down) != 1 || s.Down[0] != "a" || !s.Split {
		t.Fatalf("settlement %+v: want at 5s (spike end), a down for good, split (cut never healed)", s)
	}
	if s.Groups != nil || len(s.Cuts) != 1 || s.Reachable("b", "c") || !s.Reachable("c", "b") || !s.Reachable("a", "b") {
		t.Fatalf("final connectivity %+v: want the b->c cut only (the partition was healed)", s)
	}
	p2, err := faults.Parse([]byte(`{"events": [{"at":"1s","kind":"partition","groups":[["a"],["b"]]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s2 := p2.Settled()
	if s2.Reachable("a", "b") || s2.Reachable("a", "c") || s2.Reachable("c", "b") || !s2.Reachable("a", "a") {
		t.Fatalf("final partition {a}|{b}|{c}: %+v", s2)
	}
}

func TestGeneratedPlansAreValidAndDeterministic(t *testing.T) {
	nodes := []string{"n0", "n1", "n2", "n3", "n4"}
	limits := faults.DefaultParams(2 * time.Second)
	limits.Crashes, limits.Partitions, limits.Spikes, limits.Skews, limits.Bursts = 10, 4, 3, 3, 2
	limits.Permanent, limits.MaxStep, limits.MaxDriftPPM, limits.BurstLoss = 1, 10*time.Millisecond, 100, 0.3
	kinds := map[string]bool{}
	for seed := uint64(0); seed < 300; seed++ {
		p := faults.Swarm(seed, limits)
		a, err := faults.Generate(seed, nodes, p)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		b, _ := faults.Generate(seed, nodes, p)
		if a.String() != b.String() {
			t.Fatalf("seed %d: two generations differ", seed)
		}
		if err := a.Validate(nodes); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		st := a.Settled()
		if st.Split || st.At > sim.Time(p.Horizon) || len(st.Down) > p.Permanent {
			t.Fatalf("seed %d: plan does not settle by the horizon: %+v", seed, st)
		}
		// At most MaxDown (a minority: 2 of 5) nodes are down at any time.
		down := map[string]bool{}
		for _, e := range a.Events {
			switch e.Kind {
			case "crash":
				down[e.Node] = true
			case "restart":
				delete(down, e.Node)
			}
			if len(down) > 2 {
				t.Fatalf("seed %d: %d nodes down at %v", seed, len(down), e.At)
			}
			kinds[e.Kind] = true
		}
	}
	for _, k := range []string{"crash", "restart", "partition", "cut", "heal", "spike", "skew", "burst"} {
		if !kinds[k] {
			t.Errorf("300 swarm plans never used %q", k)
		}
	}
	if _, err := faults.Generate(1, nodes, faults.Params{Horizon: 0}); err == nil {
		t.Error("zero horizon accepted")
	}
	if _, err := faults.Generate(1, nodes, faults.Params{Horizon: time.Second, Crashable: []string{"zz"}}); err == nil {
		t.Error("unknown crashable node accepted")
	}
}

func TestSwarmDrawsDifferentIntensities(t *testing.T) {
	limits := faults.DefaultParams(time.Second)
	limits.Crashes, limits.Partitions = 8, 4
	seen := map[[2]int]bool{}
	for seed := uint64(0); seed < 50; seed++ {
		p := faults.Swarm(seed, limits)
		if p.Crashes > 8 || p.Partitions > 4 || p.Bursts != 0 {
			t.Fatalf("seed %d: %+v exceeds the limits", seed, p)
		}
		seen[[2]int{p.Crashes, p.Partitions}] = true
	}
	if len(seen) < 10 {
		t.Fatalf("only %d distinct (crashes, partitions) settings in 50 seeds", len(seen))
	}
}

// Timeline: the connectivity from each event time on, merged per instant, starting
// fault-free at 0; its last entry agrees with Settled on what is left in force.
func TestTimeline(t *testing.T) {
	p, err := faults.Parse([]byte(`{"events":[
		{"at":"100ms","kind":"crash","node":"a"},
		{"at":"100ms","kind":"partition","groups":[["b"]]},
		{"at":"200ms","kind":"cut","from":"c","to":"d"},
		{"at":"300ms","kind":"heal"},
		{"at":"400ms","kind":"restart","node":"a"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tl := p.Timeline()
	if len(tl) != 5 {
		t.Fatalf("%d entries, want 5 (0, 100, 200, 300, 400 ms): %+v", len(tl), tl)
	}
	if tl[0].At != 0 || tl[0].Split || len(tl[0].Down) != 0 {
		t.Errorf("start: %+v", tl[0])
	}
	if s := tl[1]; s.At != sim.Time(100*time.Millisecond) || !slices.Equal(s.Down, []string{"a"}) || s.Reachable("b", "c") || !s.Reachable("c", "d") {
		t.Errorf("100ms: %+v", s)
	}
	if s := tl[2]; s.Reachable("c", "d") || !s.Reachable("d", "c") {
		t.Errorf("200ms: the cut c→d is one-way: %+v", s)
	}
	if s := tl[3]; s.Split || !s.Reachable("b", "c") || !s.Reachable("c", "d") || len(s.Down) != 1 {
		t.Errorf("300ms: healed, a still down: %+v", s)
	}
	last, end := tl[4], p.Settled()
	if len(last.Down) != 0 || last.Split != end.Split || len(end.Down) != 0 {
		t.Errorf("end: %+v, Settled %+v", last, end)
	}
	at0, _ := faults.Parse([]byte(`{"events":[{"at":"0s","kind":"crash","node":"a"}]}`))
	if tl := at0.Timeline(); len(tl) != 1 || !slices.Equal(tl[0].Down, []string{"a"}) {
		t.Errorf("an event at 0 replaces the fault-free start: %+v", tl)
	}
}
