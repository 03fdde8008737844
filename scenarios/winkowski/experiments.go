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

// Fit is a least-squares line y = Intercept + Slope·x and its coefficient of
// determination. R2 is NaN when y does not vary (a constant fits exactly but explains
// no variance).
type Fit struct {
	Intercept, Slope, R2 float64
}

// LinearFit fits y = a + b·x by least squares (gonum/stat, through reports.LinFit).
func LinearFit(xs, ys []float64) Fit {
	a, b, r2 := reports.LinFit(xs, ys)
	if slices.Max(ys)-slices.Min(ys) < 1e-12 {
		r2 = math.NaN() // constant: a perfect fit that explains no variance
	}
	return Fit{Intercept: a, Slope: b, R2: r2}
}

func r2String(r float64) string {
	if math.IsNaN(r) {
		return "n/a (constant)"
	}
	return fmt.Sprintf("%.4f", r)
}

var costVariants = []variantOf{allVariants[0], allVariants[2], allVariants[3], allVariants[4]}

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
	tables := []experiment.Table[costPoint, taskCost]{{
		Title: "WK-P5 cost vs ϱ, all protocols", Columns: costColumns, Row: costRow,
		Notes: []string{fmt.Sprintf("Means over %d seeds with 95%% confidence intervals (Student's t over the per-seed values).", seedsN)},
		Figures: []reports.Figure{
			{Name: "wk-messages", Title: "Messages per conflict-free task vs ϱ", X: "ϱ", Y: "messages per task", Low: "messages lo", High: "messages hi",
				Series: "protocol", XLabel: "ϱ (resources per task)", YLabel: "messages per task", Fit: true,
				Caption: "WK-P5: the game's cost is linear in ϱ (7 forms and 7 states per resource, 14·ϱ), ordered locking's 3·ϱ, a central manager's constant; dashed: least-squares fits."},
			{Name: "wk-response", Title: "Response time of a conflict-free task vs ϱ", X: "ϱ", Y: "response (ms)", Low: "response lo", High: "response hi",
				Series: "protocol", XLabel: "ϱ (resources per task)", YLabel: "creation → access (ms)", Fit: true,
				Caption: "The game's response time is a fixed number of round trips, each the slowest of ϱ parallel ones (sub-linear growth); ordered locking's grows with ϱ sequential round trips."},
		},
	}}
	for _, v := range vs {
		tables = append(tables, experiment.Table[costPoint, taskCost]{Make: func(rs []*costResult) ([]*reports.Table, error) {
			t := reports.NewTable("WK-P5 cost per conflict-free task: "+v.name, "ϱ", "messages per task", "response time (ms)")
			var xs, ms, rts []float64
			for _, r := range rs {
				if r.Point.v.name == v.name {
					m, rt := r.Mean(msgsOf).V, r.Mean(respOf).V
					t.Add(r.Point.rho, fmt.Sprintf("%.2f", m), fmt.Sprintf("%.3f", rt))
					xs, ms, rts = append(xs, float64(r.Point.rho)), append(ms, m), append(rts, rt)
				}
			}
			fm, fr := LinearFit(xs, ms), LinearFit(xs, rts)
			t.Notes = []string{
				fmt.Sprintf("fit: messages = %.3f + %.3f·ϱ (R² %s); response = %.3f + %.3f·ϱ ms (R² %s)", fm.Intercept, fm.Slope, r2String(fm.R2), fr.Intercept, fr.Slope, r2String(fr.R2)),
			}
			return []*reports.Table{t}, nil
		}})
	}
	tables = append(tables, experiment.Table[costPoint, taskCost]{Make: func(rs []*costResult) ([]*reports.Table, error) {
		fits := reports.NewTable("WK-P5 linear fits", "protocol", "metric", "intercept", "slope per resource", "R²")
		fits.Notes = []string{
			fmt.Sprintf("Least-squares fit over ϱ = 1…%d of the means of %d seeds; %d agents, %d tasks each, every task conflict-free.", maxRho, seedsN, agents, tasks),
			"The game's message count is exact: per resource a conflict-free task sends 7 forms (complete variant: registration,",
			"admission, request, order, winning, withdrawal, releasing; restricted: 6, no order) and receives one state for each.",
			"Its response time is 4 (restricted: 3) sequential round trips — registration; admission with the request; order;",
			"winning — each the slowest of ϱ parallel ones: it grows with ϱ but sub-linearly (the paper's O(ϱ) is a bound).",
			"Ordered locking takes ϱ sequential round trips; the central manager one. No faults; the game's retry timer is off",
			"(reliable links, as in the paper): resends and polls are not part of the cost of a conflict-free task.",
		}
		for _, v := range vs {
			var xs, ms, rts []float64
			for _, r := range rs {
				if r.Point.v.name == v.name {
					xs, ms, rts = append(xs, float64(r.Point.rho)), append(ms, r.Mean(msgsOf).V), append(rts, r.Mean(respOf).V)
				}
			}
			fm, fr := LinearFit(xs, ms), LinearFit(xs, rts)
			fits.Add(v.name, "messages per task", fmt.Sprintf("%.3f", fm.Intercept), fmt.Sprintf("%.3f", fm.Slope), r2String(fm.R2))
			fits.Add(v.name, "response time (ms)", fmt.Sprintf("%.3f", fr.Intercept), fmt.Sprintf("%.3f", fr.Slope), r2String(fr.R2))
		}
		return []*reports.Table{fits}, nil
	}})
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
		Tables: tables,
	}, nil
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
			Figures: []reports.Figure{
				{Name: "wk-contention-messages", Title: "Messages per task under contention vs ϱ", X: "ϱ", Y: "messages per task", Low: "messages lo", High: "messages hi",
					Series: "protocol", XLabel: "ϱ (resources per task, out of " + fmt.Sprint(pools) + " shared pools)", YLabel: "messages per task", Fit: true,
					Caption: "With conflicts the game's messages grow far beyond its conflict-free 14·ϱ, faster than linearly as conflicts multiply (orders, withdrawals and new rounds when tasks meet); ordered locking waits rather than sends (3·ϱ), the central manager stays constant; dashed: least-squares lines, for reference only."},
				{Name: "wk-contention-response", Title: "Response time under contention vs ϱ", X: "ϱ", Y: "response (ms)", Low: "response lo", High: "response hi",
					Series: "protocol", XLabel: "ϱ (resources per task, out of " + fmt.Sprint(pools) + " shared pools)", YLabel: "creation → access (ms)", Fit: true,
					Caption: "Response time includes waiting for conflicting tasks: it grows with ϱ for every protocol, as more tasks compete for each pool."},
			},
		}},
	}, nil
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
	// counts returns, by distance (1, 2, 3 = 3 or more), the (run, agent) pairs seen
	// and those that missed the bound.
	counts := func(r *experiment.Result[localityPoint, []bool]) (miss, seen [4]int) {
		mid := n / 2
		for _, missed := range r.Runs {
			for a := range n {
				if r.Point.fault == "task" && a == mid {
					continue
				}
				d := min(chainDistance(r.Point.fault, a, mid), 3)
				seen[d]++
				if missed[a] {
					miss[d]++
				}
			}
		}
		return miss, seen
	}
	long := experiment.Table[localityPoint, []bool]{Make: func(rs []*experiment.Result[localityPoint, []bool]) ([]*reports.Table, error) {
		var out []*reports.Table
		for _, fault := range []string{"task", "manager"} {
			lt := reports.NewTable("Failure locality after a "+fault+" failure, by distance",
				"protocol", "distance", "pairs", "missed", "share_missed", "share_lo", "share_hi")
			what := map[string]string{
				"task":    "WK-P4: after a task fails for good only tasks at distance 1 (sharing a pool with it) may miss the bound under the game; ordered locking and a central manager spread the damage further.",
				"manager": "A pool's manager failing for good is outside the paper's model: measured, not hidden.",
			}[fault]
			lt.Figures = []reports.Figure{{Name: "wk-locality-" + fault, Title: "Tasks missing the bound after a " + fault + " failure",
				X: "distance", Y: "share_missed", Low: "share_lo", High: "share_hi", Series: "protocol",
				XLabel: "conflict distance from the failure (3 = 3 or more)", YLabel: "share of (run, agent) pairs that missed",
				Caption: what + " Bars: 95% Wilson intervals."}}
			for _, r := range rs {
				if r.Point.fault != fault {
					continue
				}
				miss, seen := counts(r)
				for d := 1; d <= 3; d++ {
					if seen[d] > 0 {
						lt.Add(r.Point.v.name, d, seen[d], miss[d], experiment.Wilson(miss[d], seen[d]).Fmt("%.4f"))
					}
				}
			}
			out = append(out, lt)
		}
		return out, nil
	}}
	return &experiment.Sweep[localityPoint, []bool]{
		Points: points, Runs: runs,
		Seed: func(_ localityPoint, i int) uint64 { return x.Seed + uint64(i) },
		Run: func(pt localityPoint, seed uint64) ([]bool, error) {
			return localityRun(pt.v, pt.fault, n, meals, bound, seed)
		},
		Tables: []experiment.Table[localityPoint, []bool]{{
			Title:   "Failure locality: share of tasks missing the bound, by conflict distance from the failure",
			Columns: []string{"protocol", "failure", "distance 1", "distance 2", "distance 3+", "runs"},
			Row: func(r *experiment.Result[localityPoint, []bool]) []any {
				miss, seen := counts(r)
				cell := func(d int) string {
					if seen[d] == 0 {
						return "-"
					}
					return fmt.Sprintf("%.3f", float64(miss[d])/float64(seen[d]))
				}
				return []any{r.Point.v.name, r.Point.fault, cell(1), cell(2), cell(3), r.N()}
			},
			Notes: []string{
				fmt.Sprintf("Chain of %d tasks (task i needs pools i and i+1), %d meals each, bound %v; seeds %d..%d. Distance 1: shares a pool with a", n, meals, bound, x.Seed, x.Seed+uint64(runs)-1),
				"failed task (task failure) or uses the lost pool (manager failure); 2: shares a pool with such a task; and so on.",
				"A cell is the share of (run, agent) pairs at that distance whose agent did not finish every meal within the bound.",
				"WK-P4 allows misses at distance 1 only for a task failure; a manager failure is outside the paper's model.",
				"central: the manager failure is the crash of lm, which holds every pool, so every task unfinished at the crash",
				"misses whatever its distance (the crash comes at a random time in [horizon/4, horizon]; many finish before).",
			},
		}, long},
	}, nil
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
		Help: "WK-P5: messages and response time per conflict-free task for ϱ = 1…8, with linear fits, for the game and both baselines",
		Params: []scenarios.Param{
			{Name: "seeds", Default: "5", Help: "seeds per point (from --seed)"},
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
			{Name: "seeds", Default: "5", Help: "seeds per point (from --seed); each draws the tasks' pools"},
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
