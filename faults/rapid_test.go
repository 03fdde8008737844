package faults

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// limitsGen draws generator limits, node lists included (swarm-style: every knob
// varies), so the validity property covers odd corners: one node, tiny windows,
// MaxDown 0, restricted Crashable and Splittable lists.
func limitsGen() *rapid.Generator[struct {
	names []string
	p     Params
}] {
	return rapid.Custom(func(t *rapid.T) struct {
		names []string
		p     Params
	} {
		n := rapid.IntRange(1, 6).Draw(t, "nodes")
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("n%d", i)
		}
		p := Params{
			Start:       time.Duration(rapid.Int64Range(0, int64(time.Second)).Draw(t, "start")),
			Crashes:     rapid.IntRange(0, 8).Draw(t, "crashes"),
			MeanDown:    time.Duration(rapid.Int64Range(0, int64(500*time.Millisecond)).Draw(t, "meandown")),
			MaxDown:     rapid.IntRange(0, n).Draw(t, "maxdown"),
			Permanent:   rapid.IntRange(0, 2).Draw(t, "permanent"),
			Partitions:  rapid.IntRange(0, 5).Draw(t, "partitions"),
			MeanSplit:   time.Duration(rapid.Int64Range(0, int64(500*time.Millisecond)).Draw(t, "meansplit")),
			CutFrac:     rapid.Float64Range(0, 1).Draw(t, "cutfrac"),
			Spikes:      rapid.IntRange(0, 4).Draw(t, "spikes"),
			SpikeExtra:  time.Duration(rapid.Int64Range(0, int64(100*time.Millisecond)).Draw(t, "extra")),
			Skews:       rapid.IntRange(0, 4).Draw(t, "skews"),
			MaxStep:     time.Duration(rapid.Int64Range(0, int64(50*time.Millisecond)).Draw(t, "maxstep")),
			MaxDriftPPM: rapid.Int64Range(0, 2_000_000).Draw(t, "drift"),
			Bursts:      rapid.IntRange(0, 3).Draw(t, "bursts"),
			BurstLoss:   rapid.Float64Range(0, 1).Draw(t, "loss"),
			BurstDup:    rapid.Float64Range(0, 1).Draw(t, "dup"),
		}
		p.Horizon = p.Start + time.Duration(rapid.Int64Range(1, int64(5*time.Second)).Draw(t, "span"))
		if rapid.Bool().Draw(t, "restrict") {
			p.Crashable = rapid.SliceOfNDistinct(rapid.SampledFrom(names), 0, n, rapid.ID[string]).Draw(t, "crashable")
			p.Splittable = rapid.SliceOfNDistinct(rapid.SampledFrom(names), 0, n, rapid.ID[string]).Draw(t, "splittable")
			if p.Crashable == nil {
				p.Crashable = []string{} // restricted to none, not "all"
			}
			if p.Splittable == nil {
				p.Splittable = []string{}
			}
		}
		return struct {
			names []string
			p     Params
		}{names, p}
	})
}

// TestPlanGenValid: every drawn plan validates and respects every limit.
func TestPlanGenValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := limitsGen().Draw(t, "limits")
		names, p := l.names, l.p
		plan := PlanGen(names, p).Draw(t, "plan")
		if err := plan.Validate(names); err != nil {
			t.Fatalf("invalid plan: %v", err)
		}
		crashable, splittable := p.Crashable, p.Splittable
		if crashable == nil {
			crashable = names
		}
		if splittable == nil {
			splittable = names
		}
		maxDown := p.MaxDown
		if maxDown == 0 {
			maxDown = (len(crashable) - 1) / 2
			if len(crashable) == 1 {
				maxDown = 1
			}
		}
		count := map[string]int{}
		down := map[string]bool{}
		for i, e := range plan.Events {
			at := time.Duration(e.At)
			if at < p.Start || at > p.Horizon {
				t.Fatalf("event %d at %v outside [%v, %v]", i, at, p.Start, p.Horizon)
			}
			count[e.Kind]++
			switch e.Kind {
			case "crash":
				if !slices.Contains(crashable, e.Node) {
					t.Fatalf("event %d crashes %s, not crashable", i, e.Node)
				}
				down[e.Node] = true
				if len(down) > maxDown {
					t.Fatalf("event %d: %d nodes down, MaxDown %d", i, len(down), maxDown)
				}
			case "restart":
				delete(down, e.Node)
			case "partition":
				g := e.Groups[0]
				if len(e.Groups) != 1 || len(g) > max(1, (len(names)-1)/2) {
					t.Fatalf("event %d: partition %v is not one minority group", i, e.Groups)
				}
				for _, n := range g {
					if !slices.Contains(splittable, n) {
						t.Fatalf("event %d splits off %s, not splittable", i, n)
					}
				}
			case "cut":
				if p.CutFrac == 0 {
					t.Fatalf("event %d: a cut with CutFrac 0", i)
				}
				if !slices.Contains(splittable, e.From) && !slices.Contains(splittable, e.To) {
					t.Fatalf("event %d: cut %s->%s has no splittable end", i, e.From, e.To)
				}
			case "spike":
				extra := p.SpikeExtra
				if extra <= 0 {
					extra = 50 * time.Millisecond
				}
				if time.Duration(e.Extra) > extra || at+time.Duration(e.For) > p.Horizon {
					t.Fatalf("event %d: spike %+v beyond limits", i, e)
				}
			case "skew":
				if s, most := time.Duration(e.Step), max(p.MaxStep, time.Millisecond); s > most || s < -most {
					t.Fatalf("event %d: step %v beyond ±%v", i, s, p.MaxStep)
				}
				if e.DriftPPM != nil && (*e.DriftPPM > p.MaxDriftPPM || *e.DriftPPM < -p.MaxDriftPPM) {
					t.Fatalf("event %d: drift %d beyond ±%d", i, *e.DriftPPM, p.MaxDriftPPM)
				}
			case "burst":
				if at+time.Duration(e.For) > p.Horizon {
					t.Fatalf("event %d: burst beyond the horizon", i)
				}
			}
		}
		if count["crash"]-count["restart"] > p.Permanent || count["restart"] > p.Crashes {
			t.Fatalf("%d crashes, %d restarts: limits %d crashes, %d permanent", count["crash"], count["restart"], p.Crashes, p.Permanent)
		}
		if count["partition"]+count["cut"] > p.Partitions || count["heal"] != count["partition"]+count["cut"] {
			t.Fatalf("%d partitions, %d cuts, %d heals: limit %d", count["partition"], count["cut"], count["heal"], p.Partitions)
		}
		if count["spike"] > p.Spikes || count["skew"] > p.Skews || count["burst"] > p.Bursts {
			t.Fatalf("counts %v beyond limits", count)
		}
		st := plan.Settled()
		if st.Split || len(st.Down) != count["crash"]-count["restart"] || time.Duration(st.At) > p.Horizon {
			t.Fatalf("plan does not settle by the horizon: %+v", st)
		}
	})
}

func TestPlanGenBadLimitsPanic(t *testing.T) {
	for _, c := range []struct {
		names []string
		p     Params
	}{
		{nil, Params{Horizon: time.Second}},
		{[]string{"a"}, Params{Horizon: 0}},
		{[]string{"a"}, Params{Start: time.Second, Horizon: time.Second}},
		{[]string{"a"}, Params{Horizon: time.Second, Crashable: []string{"b"}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("PlanGen(%v, %+v) did not panic", c.names, c.p)
				}
			}()
			PlanGen(c.names, c.p)
		}()
	}
}

// minimal runs rapid over prop with a recording TB and returns the last (minimal)
// value prop saw fail.
func minimal[V any](t *testing.T, gen *rapid.Generator[V], fails func(V) bool) (V, bool) {
	t.Helper()
	for _, f := range []string{"rapid.nofailfile", "rapid.seed"} {
		fl := flag.Lookup(f)
		old := fl.Value.String()
		v := "true"
		if f == "rapid.seed" {
			v = "12345"
		}
		if err := fl.Value.Set(v); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = fl.Value.Set(old) }()
	}
	var last V
	var failed bool
	tb := &recTB{name: t.Name()}
	func() {
		defer func() {
			if x := recover(); x != nil && x != errStop {
				panic(x)
			}
		}()
		rapid.Check(tb, func(rt *rapid.T) {
			v := gen.Draw(rt, "v")
			if fails(v) {
				last, failed = v, true
				rt.Fatalf("fails")
			}
		})
	}()
	return last, failed && tb.failed
}

var errStop = errors.New("stop")

type recTB struct {
	name   string
	failed bool
}

func (r *recTB) Helper()               {}
func (r *recTB) Name() string          { return r.name }
func (r *recTB) Logf(string, ...any)   {}
func (r *recTB) Log(...any)            {}
func (r *recTB) Skipf(string, ...any)  { panic(errStop) }
func (r *recTB) Skip(...any)           { panic(errStop) }
func (r *recTB) SkipNow()              { panic(errStop) }
func (r *recTB) Errorf(string, ...any) { r.failed = true }
func (r *recTB) Error(...any)          { r.failed = true }
func (r *recTB) Fatalf(string, ...any) { r.failed = true; panic(errStop) }
func (r *recTB) Fatal(...any)          { r.failed = true; panic(errStop) }
func (r *recTB) FailNow()              { r.failed = true; panic(errStop) }
func (r *recTB) Fail()                 { r.failed = true }
func (r *recTB) Failed() bool          { return r.failed }

// TestPlanGenShrinks pins the minimal plans rapid finds for simple failure conditions:
// shrinking removes whole faults, moves times to the earliest that still fails and
// picks the plainest kind.
func TestPlanGenShrinks(t *testing.T) {
	names := []string{"s", "c1", "c2", "c3", "c4"}
	limits := DefaultParams(2 * time.Second)
	limits.Skews, limits.MaxStep, limits.MaxDriftPPM = 3, 20*time.Millisecond, 1000
	limits.MaxDown = 2
	gen := PlanGen(names, limits)
	for _, c := range []struct {
		name  string
		fails func(Plan) bool
		want  string
	}{
		{
			// Any crash of c2 fails: the minimal plan is one crash of c2 at the start, down
			// for one millisecond.
			"crash c2", func(p Plan) bool {
				return slices.ContainsFunc(p.Events, func(e Event) bool { return e.Kind == "crash" && e.Node == "c2" })
			},
			"crash c2@0s, restart c2@1ms",
		},
		{
			// A crash after 500ms fails: the time shrinks to exactly 500ms.
			"late crash", func(p Plan) bool {
				return slices.ContainsFunc(p.Events, func(e Event) bool { return e.Kind == "crash" && e.At >= Duration(500*time.Millisecond) })
			},
			"crash s@500ms, restart s@501ms",
		},
		{
			// Two nodes down at once fails: two overlapping crashes of the first nodes.
			"two down", func(p Plan) bool {
				down := map[string]bool{}
				for _, e := range p.Events {
					switch e.Kind {
					case "crash":
						down[e.Node] = true
						if len(down) >= 2 {
							return true
						}
					case "restart":
						delete(down, e.Node)
					}
				}
				return false
			},
			"crash s@0s, crash c1@0s, restart s@1ms, restart c1@1ms",
		},
		{
			// Any partition or cut that isolates c3 fails.
			"isolate c3", func(p Plan) bool {
				return slices.ContainsFunc(p.Events, func(e Event) bool {
					return (e.Kind == "partition" && slices.Contains(e.Groups[0], "c3")) || (e.Kind == "cut" && (e.From == "c3" || e.To == "c3"))
				})
			},
			"partition c3@0s, heal@1ms",
		},
		{
			// Any drift fails.
			"drift", func(p Plan) bool {
				return slices.ContainsFunc(p.Events, func(e Event) bool { return e.DriftPPM != nil })
			},
			"skew s@0s",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, ok := minimal(t, gen, c.fails)
			if !ok {
				t.Fatal("rapid found no failing plan")
			}
			if got := p.String(); got != c.want {
				t.Errorf("minimal plan %q, want %q\n%s", got, c.want, p.JSON())
			}
		})
	}
}

// TestPlanGenUnits: a window shorter than 20ms is cut into twentieths; drawn times are
// whole units.
func TestPlanGenUnits(t *testing.T) {
	names := []string{"a", "b", "c"}
	p := Params{Start: 5 * time.Millisecond, Horizon: 15 * time.Millisecond, Crashes: 3, Partitions: 2, Spikes: 2}
	rapid.Check(t, func(t *rapid.T) {
		plan := PlanGen(names, p).Draw(t, "plan")
		for _, e := range plan.Events {
			if (time.Duration(e.At)-p.Start)%(500*time.Microsecond) != 0 {
				t.Fatalf("event at %v is not a whole unit of 500µs from the start", time.Duration(e.At))
			}
		}
	})
}
