package experiment

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
)

// Def declares an experiment: its name and parameters, and Sweep, which reads the
// parameters and returns what to run and how to report it. P is a point of the grid
// (a series and an x: "ordered, ϱ = 3"), S what one run measured.
type Def[P, S any] struct {
	Name string
	// Help is the one line of `simrun list`.
	Help   string
	Params []scenarios.Param
	// Sweep reads x.Params, refusing bad values (a getter's error, p.Reject, or a
	// scenarios.InputError: the command line exits 2), and returns the sweep. It must
	// refuse before any run: the bounds test sets every parameter out of scale.
	Sweep func(x *scenarios.Exp) (*Sweep[P, S], error)
}

// Sweep is an experiment's work: every point of Points is run Runs times (RunsOf(p)
// when set), run i of point p with seed Seed(p, i); Run makes one run; Tables
// aggregate the results. Runs are independent: the framework runs them on Workers
// goroutines (0: one per CPU) and orders the results by point and run, so the output
// never depends on the workers.
type Sweep[P, S any] struct {
	Points []P
	Runs   int
	RunsOf func(p P) int
	// Seed is the seed of run i (from 0) of point p. Points that share seeds meet the
	// same random draws (common random numbers: the same crashes for every variant).
	Seed func(p P, i int) uint64
	// Run makes one run and returns what it measured; an error ends the experiment
	// (the first failing run in point and run order is reported).
	Run func(p P, seed uint64) (S, error)
	// Tables are the experiment's tables, in page order.
	Tables []Table[P, S]
	// Claims, when set, are the paper's claims the experiment measures, judged from
	// the results: the page shows them first and `simrun experiments` collects them.
	Claims  func(rs []*Result[P, S]) []reports.Claim
	Workers int
}

// Result is one point's runs: their seeds and measurements, in run order.
type Result[P, S any] struct {
	Point P
	Seeds []uint64
	Runs  []S
}

// Table is one table of an experiment: one row per point (the points Where admits,
// all when nil) made by Row, whose cells Add formats (a []string cell, such as an
// Est's Fmt, spreads over as many columns). Make, instead, builds tables of any other
// shape from every result (fits, breakdowns, distributions); Notes and Figures then
// belong to the tables Make returns.
type Table[P, S any] struct {
	Title   string
	Columns []string
	Where   func(p P) bool
	Row     func(r *Result[P, S]) []any
	Notes   []string
	// NotesFrom, when set, adds notes drawn from the results (the seeds of runs that
	// failed a property, say).
	NotesFrom func(rs []*Result[P, S]) []string
	Figures   []reports.Figure
	// FiguresFrom, when set, adds figures whose captions are drawn from the results
	// (which series is lowest where: a caption must not contradict the data).
	FiguresFrom func(rs []*Result[P, S]) []reports.Figure
	Make        func(rs []*Result[P, S]) ([]*reports.Table, error)
}

// Register adds the experiment to the scenario registry (`simrun list` tags it
// [experiment]; `simrun run NAME --out DIR` writes its directory).
func Register[P, S any](d Def[P, S]) {
	scenarios.Register(&scenarios.Scenario{Name: d.Name, Help: d.Help, Params: d.Params, Experiment: d.Run})
}

// Run runs the experiment: scenarios.Scenario's Experiment function (for an experiment
// registered by hand).
func (d Def[P, S]) Run(x *scenarios.Exp) ([]*reports.Table, error) {
	sw, err := d.Sweep(x)
	if err != nil {
		return nil, err
	}
	if err := x.Params.Err(); err != nil {
		return nil, err
	}
	rs, err := sw.run(x.Progress)
	if err != nil {
		return nil, err
	}
	var out []*reports.Table
	if sw.Claims != nil {
		out = append(out, reports.ClaimsTable(sw.Claims(rs)...))
	}
	for _, ts := range sw.Tables {
		if ts.Make != nil {
			more, err := ts.Make(rs)
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
			continue
		}
		t := reports.NewTable(ts.Title, ts.Columns...)
		t.Notes, t.Figures = slices.Clone(ts.Notes), slices.Clone(ts.Figures)
		for _, r := range rs {
			if ts.Where == nil || ts.Where(r.Point) {
				t.Add(ts.Row(r)...)
			}
		}
		if ts.NotesFrom != nil {
			t.Notes = append(t.Notes, ts.NotesFrom(rs)...)
		}
		if ts.FiguresFrom != nil {
			t.Figures = append(t.Figures, ts.FiguresFrom(rs)...)
		}
		out = append(out, t)
	}
	return out, nil
}

// run makes every run of the sweep and returns the results in point order.
func (sw *Sweep[P, S]) run(progress func(done, total int)) ([]*Result[P, S], error) {
	type job struct{ point, run int }
	rs := make([]*Result[P, S], len(sw.Points))
	var jobs []job
	for pi, p := range sw.Points {
		n := sw.Runs
		if sw.RunsOf != nil {
			n = sw.RunsOf(p)
		}
		rs[pi] = &Result[P, S]{Point: p, Seeds: make([]uint64, n), Runs: make([]S, n)}
		for i := range n {
			rs[pi].Seeds[i] = sw.Seed(p, i)
			jobs = append(jobs, job{pi, i})
		}
	}
	workers := sw.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	errs := make([]error, len(jobs))
	var mu sync.Mutex
	failed := len(jobs) // the least failing job so far
	// Workers run the jobs; this goroutine hands them out and reports progress, so a
	// progress function never runs on a worker (it may panic to stop the experiment:
	// stop then ends the feeder and the workers).
	next, finished, stop := make(chan int), make(chan int), make(chan struct{})
	defer close(stop)
	go func() {
		defer close(next)
		for i := range jobs {
			select {
			case next <- i:
			case <-stop:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range min(workers, max(1, len(jobs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				mu.Lock()
				skip := i > failed // a later job than one that failed: its result is not needed
				mu.Unlock()
				if !skip {
					j := jobs[i]
					r := rs[j.point]
					s, err := sw.Run(r.Point, r.Seeds[j.run])
					mu.Lock()
					if err != nil {
						errs[i], failed = err, min(failed, i)
					} else {
						r.Runs[j.run] = s
					}
					mu.Unlock()
				}
				select {
				case finished <- i:
				case <-stop:
					return
				}
			}
		}()
	}
	for done := 1; done <= len(jobs); done++ {
		<-finished
		if progress != nil {
			progress(done, len(jobs))
		}
	}
	wg.Wait()
	if failed < len(jobs) {
		return nil, errs[failed]
	}
	return rs, nil
}

// N is the point's number of runs.
func (r *Result[P, S]) N() int { return len(r.Runs) }

// Values returns f of every run, in run order.
func (r *Result[P, S]) Values(f func(S) float64) []float64 {
	out := make([]float64, len(r.Runs))
	for i, s := range r.Runs {
		out[i] = f(s)
	}
	return out
}

// Mean is the mean over the runs of f with its 95% confidence interval (Student's t
// over the runs: the run is the unit).
func (r *Result[P, S]) Mean(f func(S) float64) Est { return Mean(r.Values(f)) }

// Sum is the sum over the runs of f.
func (r *Result[P, S]) Sum(f func(S) float64) float64 {
	t := 0.0
	for _, s := range r.Runs {
		t += f(s)
	}
	return t
}

// Est is an estimate and its 95% interval.
type Est struct{ V, Lo, Hi float64 }

// Below reports whether e is below o beyond the noise: e's interval ends below o's.
// Captions and claims compare estimates with it (or Above), never their point values
// alone: two means within each other's intervals are not "less" or "more".
func (e Est) Below(o Est) bool { return e.Hi < o.Lo }

// Above reports whether e is above o beyond the noise.
func (e Est) Above(o Est) bool { return o.Below(e) }

// Mean is the mean of xs with its 95% confidence interval (reports.MeanCI).
func Mean(xs []float64) Est {
	m, lo, hi := reports.MeanCI(xs)
	return Est{m, lo, hi}
}

// Wilson is the proportion k/n with its 95% Wilson score interval (reports.Wilson).
func Wilson(k, n int) Est {
	p, lo, hi := reports.Wilson(k, n)
	return Est{p, lo, hi}
}

// Fmt formats the estimate and its interval's ends with format: three table cells
// ("-" for a value not measured: NaN; figures leave such points out).
func (e Est) Fmt(format string) []string {
	f := func(v float64) string {
		if math.IsNaN(v) {
			return "-"
		}
		return fmt.Sprintf(format, v)
	}
	return []string{f(e.V), f(e.Lo), f(e.Hi)}
}

// Cells is the estimate and its interval's ends as numbers: three table cells that
// Table.Add formats with %.4g.
func (e Est) Cells() []any { return []any{e.V, e.Lo, e.Hi} }

// Share is the pooled share Σk/Σn of units over the runs (agents completed of agents
// launched) with its 95% cluster-bootstrap interval: the run is the unit (the units
// of one run share its faults; reports.ClusterShare).
func (r *Result[P, S]) Share(k, n func(S) int) Est {
	ks, ns := make([]int, len(r.Runs)), make([]int, len(r.Runs))
	for i, s := range r.Runs {
		ks[i], ns[i] = k(s), n(s)
	}
	p, lo, hi := reports.ClusterShare(ks, ns, 2000, 1)
	return Est{p, lo, hi}
}

// Count is the sum over the runs of an integer measure.
func (r *Result[P, S]) Count(f func(S) int) int {
	t := 0
	for _, s := range r.Runs {
		t += f(s)
	}
	return t
}
