package wkscen

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/protocols/winkowski"
	"github.com/simrun-dev/simrun/protocols/winkowski/baseline"
	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/scenarios/experiment"
	"github.com/simrun-dev/simrun/sim"
)

// variantOf names a protocol configuration measured by the experiments.
type variantOf struct {
	name     string
	proto    protocolOf
	variant  winkowski.Variant
	entering winkowski.Entering
}

var allVariants = []variantOf{
	{"winkowski", game, winkowski.Complete, winkowski.EnterAlarm},
	{"winkowski-literal", game, winkowski.Complete, winkowski.EnterLiteral},
	{"winkowski-restricted", game, winkowski.Restricted, winkowski.EnterAlarm},
	{"ordered", ordered, 0, 0},
	{"central", central, 0, 0},
}

func lookupVariants(names []string, allowed []variantOf) ([]variantOf, error) {
	var out []variantOf
	for _, n := range names {
		i := slices.IndexFunc(allowed, func(v variantOf) bool { return v.name == n })
		if i < 0 {
			var known []string
			for _, v := range allowed {
				known = append(known, v.name)
			}
			return nil, &scenarios.InputError{Err: fmt.Errorf("parameter protocols: unknown protocol %q (known: %s)", n, strings.Join(known, ", "))}
		}
		out = append(out, allowed[i])
	}
	return out, nil
}

func nodesFor(v variantOf, sys *winkowski.System) []sim.NodeSpec {
	switch v.proto {
	case ordered:
		n, _ := baseline.Nodes(sys, baseline.Ordered)
		return n
	case central:
		n, _ := baseline.Nodes(sys, baseline.Central)
		return n
	}
	n, _ := winkowski.Nodes(sys)
	return n
}

// ---- WK-P5: cost of conflict-free tasks ----

// costSystem: `agents` agents, each running one job of `tasks` tasks over its own ϱ
// single-unit pools (no other task uses them: every task is conflict-free), the pools
// spread over the other computers so that every form crosses the network.
func costSystem(v variantOf, agents, tasks, rho int, exec time.Duration) (*winkowski.System, error) {
	cfg := winkowski.Config{Agents: agents, K: agents + 1, Gamma: 100 * time.Millisecond, Variant: v.variant, Entering: v.entering}
	for a := range agents {
		job := winkowski.Job{Agent: a}
		var ps []winkowski.PoolID
		for j := range rho {
			ps = append(ps, winkowski.PoolID(len(cfg.Pools)))
			cfg.Pools = append(cfg.Pools, winkowski.Pool{Name: fmt.Sprintf("a%dp%d", a+1, j+1), Capacity: 1, Host: (a + j + 1) % agents})
		}
		for range tasks {
			job.Tasks = append(job.Tasks, winkowski.TaskSpec{Pools: ps, Exec: exec})
		}
		cfg.Jobs = append(cfg.Jobs, job)
	}
	return winkowski.NewSystem(cfg)
}

// contentionSystem: `agents` agents, each running one job of `tasks` tasks; every task
// asks for ϱ distinct single-unit pools drawn from the seed out of a shared set of
// `pools` (hosted round-robin on the computers), so tasks conflict; the draw depends
// only on the seed, so every protocol meets the same conflicts.
func contentionSystem(v variantOf, seed uint64, agents, tasks, rho, pools int, exec time.Duration) (*winkowski.System, error) {
	cfg := winkowski.Config{Agents: agents, K: agents + 1, Gamma: 100 * time.Millisecond, Variant: v.variant, Entering: v.entering}
	for j := range pools {
		cfg.Pools = append(cfg.Pools, winkowski.Pool{Name: fmt.Sprintf("p%d", j+1), Capacity: 1, Host: j % agents})
	}
	r := sim.Stream(seed, "contention")
	for a := range agents {
		job := winkowski.Job{Agent: a}
		for range tasks {
			perm := make([]winkowski.PoolID, pools)
			for i := range perm {
				perm[i] = winkowski.PoolID(i)
			}
			for i := range rho { // a partial Fisher-Yates shuffle: ϱ distinct pools
				k := i + int(r.Int64Range(0, int64(pools-i-1)))
				perm[i], perm[k] = perm[k], perm[i]
			}
			ps := slices.Clone(perm[:rho])
			slices.Sort(ps)
			job.Tasks = append(job.Tasks, winkowski.TaskSpec{Pools: ps, Exec: exec})
		}
		cfg.Jobs = append(cfg.Jobs, job)
	}
	return winkowski.NewSystem(cfg)
}

// taskCost is what one run measured: messages sent per task and the mean response
// time (creation → start of access) in milliseconds.
type taskCost struct{ msgs, resp float64 }

// runOne runs a protocol on sys with seed; every task must complete.
func runOne(v variantOf, rho int, seed uint64, sys *winkowski.System) (taskCost, error) {
	k, err := sim.New(sim.Config{Seed: seed, Nodes: nodesFor(v, sys), Network: sim.Network{Latency: sim.Uniform(time.Millisecond, 10*time.Millisecond)}})
	if err != nil {
		return taskCost{}, err
	}
	res := k.Run()
	if res.Outcome != sim.Quiescent {
		return taskCost{}, fmt.Errorf("%s ϱ=%d seed %d: run ended %s", v.name, rho, seed, res.Outcome)
	}
	done, sum := 0, 0.0
	for _, r := range winkowski.Records(res.History) {
		if r.HasDone && r.HasAccessed {
			done++
			sum += float64(r.Accessed.Sub(r.Created)) / float64(time.Millisecond)
		}
	}
	if done != len(sys.Tasks) {
		return taskCost{}, fmt.Errorf("%s ϱ=%d seed %d: %d of %d tasks done", v.name, rho, seed, done, len(sys.Tasks))
	}
	return taskCost{float64(res.Messages.Sent) / float64(done), sum / float64(done)}, nil
}

// costPoint is a point of the cost experiments: a protocol and ϱ.
type costPoint struct {
	v   variantOf
	rho int
}

type costResult = experiment.Result[costPoint, taskCost]

func costPoints(vs []variantOf, maxRho int) []costPoint {
	var out []costPoint
	for _, v := range vs {
		for rho := 1; rho <= maxRho; rho++ {
			out = append(out, costPoint{v, rho})
		}
	}
	return out
}

var (
	costColumns = []string{"protocol", "ϱ", "runs", "messages per task", "messages lo", "messages hi", "response (ms)", "response lo", "response hi"}
	msgsOf      = func(c taskCost) float64 { return c.msgs }
	respOf      = func(c taskCost) float64 { return c.resp }
)

func costRow(r *costResult) []any {
	return []any{r.Point.v.name, r.Point.rho, r.N(), r.Mean(msgsOf).Fmt("%.2f"), r.Mean(respOf).Fmt("%.3f")}
}

var costVariants = []variantOf{allVariants[0], allVariants[2], allVariants[3], allVariants[4]}

// messageModel is a protocol's exact message count per conflict-free task: per
// resource the game sends 7 forms (complete: registration, admission, request, order,
// winning, withdrawal, releasing; restricted: 6, no order) and receives a state for
// each; ordered locking requests, is granted and releases each pool; a central
// manager does the three once.
func messageModel(v variantOf) (string, func(rho float64) float64) {
	switch {
	case v.proto == ordered:
		return "3ϱ", func(r float64) float64 { return 3 * r }
	case v.proto == central:
		return "3", func(float64) float64 { return 3 }
	case v.variant == winkowski.Restricted:
		return "12ϱ", func(r float64) float64 { return 12 * r }
	}
	return "14ϱ", func(r float64) float64 { return 14 * r }
}

// maxRoundTrip is the mean of the slowest of rho parallel round trips over links of
// uniform latency in [lo, hi] (a round trip is the sum of two such latencies: a
// triangular distribution on [2lo, 2hi]), in ms: E[max] = 2lo + ∫(1 − F(x)^ϱ) dx.
func maxRoundTrip(rho float64, lo, hi float64) float64 {
	a, b := 2*lo, 2*hi
	c, w := (a+b)/2, hi-lo
	cdf := func(x float64) float64 {
		if x < c {
			return (x - a) * (x - a) / (2 * w * w)
		}
		return 1 - (b-x)*(b-x)/(2*w*w)
	}
	const steps = 4000
	sum, dx := 0.0, (b-a)/steps
	for i := range steps {
		x := a + (float64(i)+0.5)*dx
		sum += (1 - math.Pow(cdf(x), rho)) * dx
	}
	return a + sum
}

// responseModel is the family a protocol's response time follows, as a regressor of
// ϱ: the game's is a fixed number of round trips, each the slowest of ϱ parallel ones
// (E[max of ϱ round trips]); ordered locking's ϱ sequential round trips (ϱ); a central
// manager's one (a constant).
func responseModel(v variantOf) (string, func(rho float64) float64) {
	switch v.proto {
	case ordered:
		return "ϱ", func(r float64) float64 { return r }
	case central:
		return "", func(float64) float64 { return 0 }
	}
	return "E[max of ϱ round trips]", func(r float64) float64 { return maxRoundTrip(r, 1, 10) }
}

// costFits fits each protocol's mean response time to its model's family by least
// squares: the curves to draw and a table row per protocol.
func costFits(rs []*costResult, vs []variantOf) ([]reports.Curve, *reports.Table) {
	t := reports.NewTable("WK-P5 models", "protocol", "metric", "model", "largest deviation", "R²")
	var curves []reports.Curve
	for _, v := range vs {
		var xs, ms, ys []float64
		for _, r := range rs {
			if r.Point.v.name == v.name {
				xs, ms, ys = append(xs, float64(r.Point.rho)), append(ms, r.Mean(msgsOf).V), append(ys, r.Mean(respOf).V)
			}
		}
		mname, mf := messageModel(v)
		dev := 0.0
		for i, x := range xs {
			dev = max(dev, math.Abs(ms[i]-mf(x)))
		}
		t.Add(v.name, "messages per task", "exact: "+mname, fmt.Sprintf("%.3g", dev), "")
		fname, g := responseModel(v)
		gx := make([]float64, len(xs))
		for i, x := range xs {
			gx[i] = g(x)
		}
		var f func(float64) float64
		var model string
		r2 := ""
		if fname == "" {
			m := experiment.Mean(ys).V
			f, model = func(float64) float64 { return m }, fmt.Sprintf("constant %.1f ms", m)
		} else {
			a, b, rr := reports.LinFit(gx, ys)
			f, model, r2 = func(x float64) float64 { return a + b*g(x) }, fmt.Sprintf("least squares %.1f + %.2f·%s ms", a, b, fname), fmt.Sprintf("%.4f", rr)
		}
		dev = 0
		for i, x := range xs {
			dev = max(dev, math.Abs(ys[i]-f(x)))
		}
		t.Add(v.name, "response time (ms)", model, fmt.Sprintf("%.3g", dev), r2)
		curves = append(curves, reports.Curve{Name: v.name + ": " + model, Series: v.name, F: f})
	}
	t.Notes = []string{
		"Messages: the exact count per protocol (largest deviation of the measured mean from it). Response time: the family each protocol's time follows, fitted by least squares to the means — the game's is 4 (restricted: 3) sequential round trips, each the slowest of ϱ parallel ones, so it grows with E[max of ϱ round trips] (links uniform in 1–10 ms: 11 ms at ϱ = 1, computed); ordered locking's ϱ sequential round trips; a central manager's one.",
	}
	return curves, t
}

func costSweep(x *scenarios.Exp) (*experiment.Sweep[costPoint, taskCost], error) {
	p := x.Params
	seedsN := p.IntRange("seeds", 1, 1000)
	agents := p.IntRange("agents", 2, 1000)
	tasks := p.IntRange("tasks", 1, 10_000)
	maxRho := p.IntRange("rho", 2, 64)
	names := p.List("protocols")
	taskBudget(p, agents*tasks, "tasks", "agents × tasks")
	if p.Err() != nil {
		return nil, p.Err()
	}
	vs, err := lookupVariants(names, costVariants)
	if err != nil {
		return nil, err
	}
	return &experiment.Sweep[costPoint, taskCost]{
		Points: costPoints(vs, maxRho), Runs: seedsN,
		Seed: func(_ costPoint, i int) uint64 { return x.Seed + uint64(i) },
		Run: func(pt costPoint, seed uint64) (taskCost, error) {
			sys, err := costSystem(pt.v, agents, tasks, pt.rho, 5*time.Millisecond)
			if err != nil {
				return taskCost{}, err
			}
			return runOne(pt.v, pt.rho, seed, sys)
		},
		Tables: []experiment.Table[costPoint, taskCost]{{Make: func(rs []*costResult) ([]*reports.Table, error) {
			t := reports.NewTable("WK-P5 cost vs ϱ, all protocols", costColumns...)
			for _, r := range rs {
				t.Add(costRow(r)...)
			}
			t.Notes = []string{fmt.Sprintf("%d agents, %d tasks each, every task conflict-free (its own pools, hosted on other computers); no faults, links 1–10 ms, the game's retry timer off (reliable links, as in the paper). Means over %d seeds with 95%% confidence intervals (Student's t over the per-seed values).", agents, tasks, seedsN)}
			curves, fits := costFits(rs, vs)
			var exact []reports.Curve
			for _, v := range vs {
				name, f := messageModel(v)
				exact = append(exact, reports.Curve{Name: v.name + ": " + name + " (exact)", Series: v.name, F: f})
			}
			t.Figures = []reports.Figure{
				{Name: "wk-messages", Title: "Messages per conflict-free task vs ϱ", X: "ϱ", Y: "messages per task", Low: "messages lo", High: "messages hi",
					Series: "protocol", Legend: "protocol", XLabel: "ϱ (resources per task)", YLabel: "messages per task", ZeroY: true, Curves: exact,
					Caption: "WK-P5: " + modelAgreement(rs, vs) + " Dashed: each protocol's exact count (per resource the game sends 7 forms — restricted: 6 — and receives a state for each; ordered locking 3 per pool; a central manager 3)."},
				{Name: "wk-response", Title: "Response time of a conflict-free task vs ϱ", X: "ϱ", Y: "response (ms)", Low: "response lo", High: "response hi",
					Series: "protocol", Legend: "protocol", XLabel: "ϱ (resources per task)", YLabel: "creation → access (ms)", ZeroY: true, Curves: curves,
					Caption: "The game's response time is a fixed number of round trips, each the slowest of ϱ parallel ones: it follows E[max of ϱ round trips], which flattens as ϱ grows (sub-linear; the paper's O(ϱ) is a bound); ordered locking's grows by one round trip per resource; a central manager's is one round trip. Dashed: least-squares fits of those families (table WK-P5 models)."},
			}
			return []*reports.Table{t, fits}, nil
		}}},
		Claims: func(rs []*costResult) []reports.Claim {
			var out []reports.Claim
			for _, v := range vs {
				if v.proto != game {
					continue
				}
				var xs, ms, ys []float64
				for _, r := range rs {
					if r.Point.v.name == v.name {
						xs, ms, ys = append(xs, float64(r.Point.rho)), append(ms, r.Mean(msgsOf).V), append(ys, r.Mean(respOf).V)
					}
				}
				mname, mf := messageModel(v)
				exact := true
				for i, x := range xs {
					exact = exact && math.Abs(ms[i]-mf(x)) < 1e-9
				}
				// O(ϱ): the time per resource never grows (y/ϱ non-increasing).
				linear := true
				for i := 1; i < len(xs); i++ {
					linear = linear && ys[i]/xs[i] <= ys[i-1]/xs[i-1]+1e-9
				}
				out = append(out, reports.Claim{Source: "Winkowski 2000 §5 (WK-P5)",
					Paper:    v.name + ": a conflict-free task's message complexity and response time are O(ϱ).",
					Measured: fmt.Sprintf("messages %s %s at ϱ = 1…%d; response %.1f ms at ϱ = 1, %.1f ms at ϱ = %d (per resource: %.1f → %.1f ms)", map[bool]string{true: "exactly", false: "not exactly"}[exact], mname, len(xs), ys[0], ys[len(ys)-1], int(xs[len(xs)-1]), ys[0]/xs[0], ys[len(ys)-1]/xs[len(xs)-1]),
					Verdict:  reports.Judge(exact && linear)})
			}
			return out
		},
	}, nil
}

// modelAgreement says whether every protocol's measured messages equal its exact
// count at every ϱ, or where they do not.
func modelAgreement(rs []*costResult, vs []variantOf) string {
	var off []string
	for _, r := range rs {
		name, f := messageModel(r.Point.v)
		if m := r.Mean(msgsOf).V; math.Abs(m-f(float64(r.Point.rho))) > 1e-9 {
			off = append(off, fmt.Sprintf("%s at ϱ = %d: %.2f, model %s = %.0f", r.Point.v.name, r.Point.rho, m, name, f(float64(r.Point.rho))))
		}
	}
	if len(off) == 0 {
		return fmt.Sprintf("every protocol's measured messages equal its exact count at every ϱ (%d protocols): the game's grow linearly, 14·ϱ (restricted 12·ϱ), ordered locking's 3·ϱ, a central manager's stay 3.", len(vs))
	}
	return "measured messages differ from the exact counts: " + strings.Join(off, "; ") + "."
}

// ---- the price of economy: the same cost under contention ----

func contentionSweep(x *scenarios.Exp) (*experiment.Sweep[costPoint, taskCost], error) {
	p := x.Params
	seedsN := p.IntRange("seeds", 1, 1000)
	agents := p.IntRange("agents", 2, 1000)
	tasks := p.IntRange("tasks", 1, 10_000)
	maxRho := p.IntRange("rho", 1, 64)
	pools := p.IntRange("pools", 2, 1000)
	exec := p.PositiveDuration("exec")
	names := p.List("protocols")
	taskBudget(p, agents*tasks, "tasks", "agents × tasks")
	// Tasks that conflict may run one after another: all of them must fit well inside
	// a run's time bound (an hour), or the runs end on it.
	if serial := time.Duration(agents*tasks) * exec; p.Err() == nil && serial > 30*time.Minute {
		p.Reject("exec", fmt.Sprintf("agents × tasks × exec at most 30m (got %v: conflicting tasks may run one after another)", serial))
	}
	if p.Err() != nil {
		return nil, p.Err()
	}
	if maxRho > pools {
		return nil, &scenarios.InputError{Err: fmt.Errorf("parameter rho=%d: a task cannot ask for more than the %d pools", maxRho, pools)}
	}
	vs, err := lookupVariants(names, costVariants)
	if err != nil {
		return nil, err
	}
	var free []reports.Curve
	for _, v := range vs {
		name, f := messageModel(v)
		free = append(free, reports.Curve{Name: v.name + " without conflicts: " + name, Series: v.name, F: f, Reference: true})
	}
	return &experiment.Sweep[costPoint, taskCost]{
		Points: costPoints(vs, maxRho), Runs: seedsN,
		Seed: func(_ costPoint, i int) uint64 { return x.Seed + uint64(i) },
		Run: func(pt costPoint, seed uint64) (taskCost, error) {
			sys, err := contentionSystem(pt.v, seed, agents, tasks, pt.rho, pools, exec)
			if err != nil {
				return taskCost{}, err
			}
			return runOne(pt.v, pt.rho, seed, sys)
		},
		Tables: []experiment.Table[costPoint, taskCost]{{
			Title: "WK-P5 under contention: cost vs ϱ, all protocols", Columns: costColumns, Row: costRow,
			Notes: []string{
				fmt.Sprintf("%d agents run %d tasks each; every task asks for ϱ distinct single-unit pools drawn from the seed out of %d shared pools and uses them for %v, so tasks conflict (the same draw for every protocol). Means over %d seeds with 95%% confidence intervals.", agents, tasks, pools, exec, seedsN),
				"Compare with winkowski/cost (no conflicts): the game pays for deciding locally, without a central manager or a global order, with orders, withdrawals and repeated forms when tasks meet — the price of economy the paper mentions.",
			},
			FiguresFrom: func(rs []*costResult) []reports.Figure {
				return []reports.Figure{
					{Name: "wk-contention-messages", Title: "Messages per task under contention vs ϱ", X: "ϱ", Y: "messages per task", Low: "messages lo", High: "messages hi",
						Series: "protocol", Legend: "protocol", XLabel: "ϱ (resources per task, out of " + fmt.Sprint(pools) + " shared pools)", YLabel: "messages per task", ZeroY: true, Curves: free,
						Caption: contentionCaption(rs) + " Dashed: each protocol's conflict-free count (winkowski/cost); no fit is drawn: no model of the conflicts is known."},
					{Name: "wk-contention-response", Title: "Response time under contention vs ϱ", X: "ϱ", Y: "response (ms)", Low: "response lo", High: "response hi",
						Series: "protocol", Legend: "protocol", XLabel: "ϱ (resources per task, out of " + fmt.Sprint(pools) + " shared pools)", YLabel: "creation → access (ms)", ZeroY: true,
						Caption: "Response time includes waiting for conflicting tasks: " + lowestCaption(rs, respOf, "ms") + "."},
				}
			},
		}},
		Claims: func(rs []*costResult) []reports.Claim {
			return []reports.Claim{{Source: "Winkowski 2000 §1", Paper: "The best possible failure locality is achieved for the price of economy (response time and message complexity; no number given).",
				Measured: contentionCaption(rs), Verdict: reports.NoNumber}}
		},
	}, nil
}

// contentionCaption says, from the numbers, how far each protocol's messages exceed
// its conflict-free count.
func contentionCaption(rs []*costResult) string {
	var parts []string
	byName := map[string][]*costResult{}
	var order []string
	for _, r := range rs {
		if byName[r.Point.v.name] == nil {
			order = append(order, r.Point.v.name)
		}
		byName[r.Point.v.name] = append(byName[r.Point.v.name], r)
	}
	for _, n := range order {
		first, last := byName[n][0], byName[n][len(byName[n])-1]
		_, f := messageModel(first.Point.v)
		a, b := first.Mean(msgsOf).V/f(float64(first.Point.rho)), last.Mean(msgsOf).V/f(float64(last.Point.rho))
		parts = append(parts, fmt.Sprintf("%s %.2f× at ϱ = %d and %.2f× at ϱ = %d", n, a, first.Point.rho, b, last.Point.rho))
	}
	return "Under contention the messages per task against each protocol's conflict-free count: " + strings.Join(parts, "; ") + " — the game pays for its conflicts with orders, withdrawals and new rounds, the baselines wait instead of sending."
}

// lowestCaption says which protocol has the lowest mean of f at each ϱ.
func lowestCaption(rs []*costResult, f func(taskCost) float64, unit string) string {
	best := map[int]*costResult{}
	var rhos []int
	for _, r := range rs {
		b, ok := best[r.Point.rho]
		if !ok {
			rhos = append(rhos, r.Point.rho)
		}
		if !ok || r.Mean(f).V < b.Mean(f).V {
			best[r.Point.rho] = r
		}
	}
	slices.Sort(rhos)
	var runs []string
	for i := 0; i < len(rhos); {
		j := i
		for j+1 < len(rhos) && best[rhos[j+1]].Point.v.name == best[rhos[i]].Point.v.name {
			j++
		}
		span := fmt.Sprintf("ϱ = %d", rhos[i])
		if j > i {
			span = fmt.Sprintf("ϱ = %d…%d", rhos[i], rhos[j])
		}
		runs = append(runs, fmt.Sprintf("%s is fastest at %s", best[rhos[i]].Point.v.name, span))
		i = j + 1
	}
	return strings.Join(runs, ", ")
}

// ---- failure locality ----

// localityPlan crashes, for good, either the middle agent of the chain (fault "task")
// or the manager of the middle pool (fault "manager"), at a time drawn in [horizon/4,
// horizon] from the seed; no other fault.
func localityPlan(fault string) planner {
	return func(b *scenarios.Build, k faultKnobs, agents []string, hosts func(int) string, cfg *winkowski.Config) (faults.Plan, error) {
		r := sim.Stream(b.Seed, "locality")
		at := faults.Duration(k.horizon/4 + time.Duration(r.Int64Range(0, int64(k.horizon-k.horizon/4))))
		mid := len(agents) / 2
		node := agents[mid]
		if fault == "manager" {
			node = hosts(cfg.Pools[mid].Host)
		}
		return faults.Plan{Events: []faults.Event{{At: at, Kind: "crash", Node: node}}}, nil
	}
}

// distance of chain agent i from the fault: the number of tasks on the shortest
// conflict path from a failed task (fault "task": the middle task; fault "manager":
// the tasks using the middle pool, mid-1 and mid) to task i, plus one.
func chainDistance(fault string, i, mid int) int {
	if fault == "task" {
		return abs(i - mid)
	}
	return min(abs(i-(mid-1)), abs(i-mid)) + 1
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// localityPoint is a point of the locality experiment: a protocol and what fails.
type localityPoint struct {
	v     variantOf
	fault string
}

func localitySweep(x *scenarios.Exp) (*experiment.Sweep[localityPoint, []bool], error) {
	p := x.Params
	runs := p.IntRange("runs", 1, 10_000)
	n := p.IntRange("n", 5, 1000)
	meals := p.IntRange("meals", 1, 10_000)
	bound := p.PositiveDuration("bound")
	names := p.List("protocols")
	if p.Err() != nil {
		return nil, p.Err()
	}
	vs, err := lookupVariants(names, allVariants)
	if err != nil {
		return nil, err
	}
	var points []localityPoint
	for _, v := range vs {
		for _, fault := range []string{"task", "manager"} {
			points = append(points, localityPoint{v, fault})
		}
	}
	// missed returns, per run, the agents at distance d (3: 3 or more) from the
	// failure that missed the bound, and those at that distance.
	missed := func(r *localityResult, d int) (k, m []int) {
		mid := n / 2
		for _, miss := range r.Runs {
			kk, mm := 0, 0
			for a := range n {
				if (r.Point.fault == "task" && a == mid) || min(chainDistance(r.Point.fault, a, mid), 3) != d {
					continue
				}
				mm++
				if miss[a] {
					kk++
				}
			}
			k, m = append(k, kk), append(m, mm)
		}
		return k, m
	}
	share := func(r *localityResult, d int) experiment.Est {
		k, m := missed(r, d)
		p, lo, hi := reports.ClusterShare(k, m, 2000, 1)
		return experiment.Est{V: p, Lo: lo, Hi: hi}
	}
	return &experiment.Sweep[localityPoint, []bool]{
		Points: points, Runs: runs,
		Seed: func(_ localityPoint, i int) uint64 { return x.Seed + uint64(i) },
		Run: func(pt localityPoint, seed uint64) ([]bool, error) {
			return localityRun(pt.v, pt.fault, n, meals, bound, seed)
		},
		Tables: []experiment.Table[localityPoint, []bool]{{Make: func(rs []*localityResult) ([]*reports.Table, error) {
			t := reports.NewTable("Failure locality: tasks missing the bound, by conflict distance from the failure",
				"protocol", "failure", "distance", "runs", "pairs", "missed", "share_missed", "share_lo", "share_hi")
			for _, r := range rs {
				for d := 1; d <= 3; d++ {
					k, m := missed(r, d)
					if slices.Max(m) > 0 {
						t.Add(r.Point.v.name, r.Point.fault, d, r.N(), sum(m), sum(k), share(r, d).Fmt("%.4f"))
					}
				}
			}
			t.Notes = []string{
				fmt.Sprintf("Chain of %d tasks (task i needs pools i and i+1), %d meals each, bound %v; seeds %d..%d. Distance 1: shares a pool with the", n, meals, bound, x.Seed, x.Seed+uint64(runs)-1) +
					" failed task (task failure) or uses the lost pool (manager failure); 2: shares a pool with such a task; 3: three or more. A share is of the (run, agent) pairs at that distance whose agent did not finish every meal within the bound; 95% cluster-bootstrap intervals over runs (the agents of one run share its failure).",
				"winkowski: the paper's game, complete variant, with simrun's reading of the entering rule (protocols/winkowski, choice E1: a task that has waited Γ for its absolute predecessors takes a ticket below theirs). winkowski-literal: WK-1 as written (wait until every absolute predecessor has left the game) — a task blocked by the failed one keeps its admission forms, so tasks registering later at its pools wait for it too. winkowski-restricted: the paper's variant (p1), which assumes no failures. ordered: ordered locking; central: a central lock manager.",
				"WK-P4 allows misses at distance 1 only, for a task failure; a manager failure is outside the paper's model (measured, not hidden). central's manager failure is the crash of lm, which holds every pool: every task unfinished at the crash misses, whatever its distance (the crash comes at a random time in [horizon/4, horizon]; many finish before).",
			}
			t.Figures = []reports.Figure{{Name: "wk-locality", Title: "Tasks missing the bound, by distance from the failure", Bars: true,
				X: "distance", Y: "share_missed", Low: "share_lo", High: "share_hi", Series: "protocol", Legend: "protocol", Facet: "failure",
				Categories: []string{"1", "2", "3 or more"}, XLabel: "conflict distance from the failure", YLabel: "share of (run, agent) pairs that missed",
				Caption: localityCaption(rs, share) + " Bars: 95% cluster-bootstrap intervals over runs."}}
			return []*reports.Table{t}, nil
		}}},
		Claims: func(rs []*localityResult) []reports.Claim {
			var out []reports.Claim
			for _, r := range rs {
				if r.Point.fault != "task" || r.Point.v.proto != game || r.Point.v.variant != winkowski.Complete {
					continue
				}
				far := share(r, 2)
				if e := share(r, 3); e.V > far.V {
					far = e
				}
				reading := "simrun's reading of WK-1 (E1: alarm)"
				if r.Point.v.entering == winkowski.EnterLiteral {
					reading = "WK-1 read literally"
				}
				out = append(out, reports.Claim{Source: "Winkowski 2000 §4 (WK-P4)",
					Paper:    "With one task failed for good, only tasks in direct conflict with it (sharing a pool) may be delayed beyond the bound; " + reading + ".",
					Measured: fmt.Sprintf("%s of the tasks at distance 2 or more missed the bound (%s at distance 1)", reports.Pct(far.V), reports.Pct(share(r, 1).V)),
					Verdict:  reports.Judge(far.V == 0)})
			}
			return out
		},
	}, nil
}

type localityResult = experiment.Result[localityPoint, []bool]

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// localityCaption says, from the numbers, which protocols let a failure delay tasks
// beyond distance 1 and which do not.
func localityCaption(rs []*localityResult, share func(*localityResult, int) experiment.Est) string {
	var parts []string
	for _, fault := range []string{"task", "manager"} {
		var far, near []string
		for _, r := range rs {
			if r.Point.fault != fault {
				continue
			}
			var ds []string
			for d := 2; d <= 3; d++ {
				if e := share(r, d); e.V > 0 {
					ds = append(ds, fmt.Sprintf("%s at distance %s", reports.Pct(e.V), map[int]string{2: "2", 3: "3+"}[d]))
				}
			}
			if len(ds) > 0 {
				far = append(far, r.Point.v.name+" "+strings.Join(ds, ", "))
			} else {
				near = append(near, r.Point.v.name)
			}
		}
		s := fmt.Sprintf("After a %s failure, ", fault)
		if len(far) > 0 {
			s += "tasks beyond distance 1 missed the bound under " + strings.Join(far, "; ")
			if len(near) > 0 {
				s += "; under " + strings.Join(near, ", ") + " none did"
			}
		} else {
			s += "no task beyond distance 1 missed the bound under any protocol"
		}
		parts = append(parts, s+".")
	}
	return "WK-P4: after a task fails for good only tasks sharing a pool with it (distance 1) may miss the bound. " + strings.Join(parts, " ")
}

// localityRun runs the chain with one failure and reports which agents missed the
// bound (some task of the agent's job not done within max(creation, faults settled) +
// the scenario's bound).
func localityRun(v variantOf, fault string, n, meals int, bound time.Duration, seed uint64) ([]bool, error) {
	var r *run
	sc := &scenarios.Scenario{Name: "winkowski/locality-run", Params: params(commonParams("1s", bound.String(), 0, 0, 0, 0, 0),
		scenarios.Param{Name: "n", Default: fmt.Sprint(n)}, scenarios.Param{Name: "meals", Default: fmt.Sprint(meals)},
		scenarios.Param{Name: "exec", Default: "8ms"}, scenarios.Param{Name: "think", Default: "5ms"}),
		Build: func(b *scenarios.Build) (*scenarios.Setup, error) {
			s, rr, err := buildRun(b, chain, localityPlan(fault))
			r = rr
			return s, err
		}}
	ps := map[string]string{"protocol": map[protocolOf]string{game: "winkowski", ordered: "ordered", central: "central"}[v.proto],
		"variant": v.variant.String(), "entering": v.entering.String()}
	rep, err := scenarios.Run(sc, scenarios.Options{Seed: seed, Params: ps})
	if err != nil {
		return nil, err
	}
	missed := make([]bool, n)
	byTask := map[winkowski.TaskID]winkowski.TaskRecord{}
	for _, rec := range winkowski.Records(rep.Result.History) {
		byTask[rec.Task] = rec
	}
	for a, job := range r.sys.JobTasks { // the chain: job a is agent a's
		for _, id := range job {
			rec, ok := byTask[id]
			if !ok || !rec.HasDone || rec.Done > max(rec.Created, rep.Settled).Add(r.bound) {
				missed[a] = true
			}
		}
	}
	return missed, nil
}

func init() {
	experiment.Register(experiment.Def[costPoint, taskCost]{
		Name: "winkowski/cost",
		Help: "WK-P5: messages (against their exact counts) and response time (against its model's family) per conflict-free task for ϱ = 1…8, the game and both baselines",
		Params: []scenarios.Param{
			{Name: "seeds", Default: "30", Help: "seeds per point (from --seed)"},
			{Name: "agents", Default: "8", Help: "agents, each with its own pools"},
			{Name: "tasks", Default: "10", Help: "tasks per agent (run one after another)"},
			{Name: "rho", Default: "8", Help: "largest ϱ"},
			{Name: "protocols", Default: "winkowski,winkowski-restricted,ordered,central", Help: "protocols to measure"},
		},
		Sweep: costSweep,
	})
	experiment.Register(experiment.Def[costPoint, taskCost]{
		Name: "winkowski/contention",
		Help: "WK-P5 under contention (the price of economy): messages and response time per task vs ϱ when tasks share pools, the game and both baselines",
		Params: []scenarios.Param{
			{Name: "seeds", Default: "30", Help: "seeds per point (from --seed); each draws the tasks' pools"},
			{Name: "agents", Default: "6", Help: "agents"},
			{Name: "tasks", Default: "6", Help: "tasks per agent (run one after another)"},
			{Name: "pools", Default: "8", Help: "shared single-unit pools the tasks draw from"},
			{Name: "rho", Default: "6", Help: "largest ϱ (at most pools)"},
			{Name: "exec", Default: "5ms", Help: "how long a task uses its resources"},
			{Name: "protocols", Default: "winkowski,winkowski-restricted,ordered,central", Help: "protocols to measure"},
		},
		Sweep: contentionSweep,
	})
	experiment.Register(experiment.Def[localityPoint, []bool]{
		Name: "winkowski/locality",
		Help: "who misses the liveness bound when a task, or the manager of a pool, fails for good in a conflict chain",
		Params: []scenarios.Param{
			{Name: "runs", Default: "100", Help: "seeds per protocol and failure (from --seed)"},
			{Name: "n", Default: "7", Help: "tasks in the chain"},
			{Name: "meals", Default: "8", Help: "times each agent repeats its task"},
			{Name: "bound", Default: "3s", Help: "liveness bound after max(creation, the failure)"},
			{Name: "protocols", Default: "winkowski,winkowski-literal,winkowski-restricted,ordered,central", Help: "protocols to measure"},
		},
		Sweep: localitySweep,
	})
}
