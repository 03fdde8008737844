// Package wkscen registers the scenarios of the failure-resistant resource-management
// game (protocols/winkowski) and of its two baselines (protocols/winkowski/baseline):
//
//	winkowski/dining    dining philosophers: 5 tasks around a ring of single-unit pools
//	winkowski/drinking  drinking philosophers: multi-unit pools on a ring with chords
//	winkowski/jobs      random jobs over random pool sets
//	winkowski/chain     a task that fails for good in the middle of a conflict chain
//	winkowski/poolcrash the manager role of one computer fails for good (measured)
//	winkowski/swarm     random system, variant and fault intensities drawn from the seed
//	winkowski/orders    a fixed configuration where (p3) must count order forms
//	winkowski/rejoin    an agent restarts while a task of it holds a ticket and another
//	                    of its tasks enters (tickets stay unique, WK-T1)
//	winkowski/custom    pools and tasks given as parameters
//	winkowski/cost      experiment: WK-P5, cost of conflict-free tasks for ϱ = 1…8
//	winkowski/locality  experiment: who misses the bound after a task or manager fails
//
// Every single-run scenario takes protocol=winkowski|ordered|central (the game or a
// baseline, on the same workload and, seed for seed, the same fault plan: plans only
// name agent nodes), variant=complete|restricted and entering=alarm|literal for the
// game, and checks WK-P1 (mutual exclusion, also as linearizability of every pool's
// allocate/release history), WK-P2 (all or nothing), WK-P3 (starvation freedom within
// a bound after the faults settle) and WK-P4 (failure locality) on every run; runs of
// the game also check, through the agent monitor (monitor.go) that wraps every agent,
// the paper's rules for the agents' state, the tickets given (T1/E1), the absolute
// predecessors (also that no task outranks one it found competing: WK-1/precedence),
// withdrawing exactly when (p1)/(p3) fails, and a restarted agent's stable state (F2).
//
// Faults: generated plans crash agents only (transiently — the agent resumes from
// stable storage — or, with permanent > 0, for good), partition a minority of the
// agents from everything else (the managers and the other agents) for a while, add
// latency spikes (slow agents, message delays) and clock skews; chain adds a crash for
// good of its middle agent, poolcrash one of a manager host; swarm draws every
// intensity, Γ and the variant (restricted on a quarter of the seeds, without crashes
// for good) from the seed, turns some crashes into crash-sends (the agent stops
// part-way through a call's forms), on half of the seeds adds short crashes of agents
// within the workload's contention window, so that tasks restart mid-protocol
// (contend.go), and crashes manager hosts transiently (the game
// resends and polls what they lose: K2, F3). Plans name agent nodes only, so one plan fits the
// game and both baselines (whose managers are named differently); the one-way cuts the
// generator draws are therefore between agents, which exchange no messages, and drop
// nothing. Partitions lose messages, which the paper's reliable links never do: the
// game survives them by resending (retry, choice K2 of protocols/winkowski); the
// baselines repeat nothing, so they run with partitions=0 (TestBaselinesLoseMessages
// shows why). A plan given with --faults may do anything: crashes for good of agents
// and manager hosts are exempted as props.go says; a manager's transient crash is
// survived like a partition (its state is in stable storage and lost forms are sent
// again).
//
// Also here: the model "winkowski" for `simrun check` and its portfolio (model.go),
// the manager monitor (hostmon.go) beside the agent monitor (monitor.go,
// decisions.go), and the parameter bug=…, which plants a deliberate mistake through
// the protocol's Policy hooks (bugs.go) so that a sweep shows the checkers catch it.
package wkscen

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/protocols/winkowski"
	"github.com/simrun-dev/simrun/protocols/winkowski/baseline"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// commonParams are taken by every single-run scenario; each scenario adds its own.
func commonParams(horizon, bound string, crashes, permanent, partitions, spikes, skews int) []scenarios.Param {
	return []scenarios.Param{
		{Name: "protocol", Default: "winkowski", Help: "winkowski (the game), ordered (ordered locking) or central (central lock manager)"},
		{Name: "variant", Default: "complete", Help: "the game's variant: complete ((p2)/(p3), order forms, alarm clock) or restricted ((p1)); swarm: \"seed\" draws it (restricted on a quarter of the seeds, without crashes for good)"},
		{Name: "entering", Default: "alarm", Help: "the game's entering phase: alarm (stop waiting for stuck absolute predecessors after Γ) or literal"},
		{Name: "gamma", Default: "100ms", Help: "alarm-clock period Γ (swarm: \"seed\" draws it from the seed)"},
		{Name: "k", Default: "0", Help: "ticket modulus K: agent i takes tickets nK+i (0: number of agents + 1)"},
		{Name: "retry", Default: "150ms", Help: "the game's retry period: resend forms not yet applied, poll quiet pools (0s: assume reliable links)"},
		{Name: "horizon", Default: horizon, Help: "faults happen before this time"},
		{Name: "bound", Default: bound, Help: "liveness: every task completes within this of max(its creation, the faults settling)"},
		{Name: "crashes", Default: fmt.Sprint(crashes), Help: "agent crash/restart pairs drawn (the agent resumes from stable storage)"},
		{Name: "permanent", Default: fmt.Sprint(permanent), Help: "agents crashed for good"},
		{Name: "partitions", Default: fmt.Sprint(partitions), Help: "partitions (or one-way cuts) drawn over all nodes; each heals"},
		{Name: "spikes", Default: fmt.Sprint(spikes), Help: "latency spikes drawn (slow agents, message delays)"},
		{Name: "skews", Default: fmt.Sprint(skews), Help: "clock skews drawn"},
		{Name: "bug", Default: "none", Help: bugHelp()},
	}
}

func withDefault(ps []scenarios.Param, name, def string) []scenarios.Param {
	for i := range ps {
		if ps[i].Name == name {
			ps[i].Default = def
		}
	}
	return ps
}

func params(common []scenarios.Param, own ...scenarios.Param) []scenarios.Param {
	return append(slices.Clone(common), own...)
}

// protocolOf names what runs.
type protocolOf uint8

const (
	game protocolOf = iota
	ordered
	central
)

func parseProtocol(s string) (protocolOf, error) {
	switch s {
	case "winkowski", "game":
		return game, nil
	case "ordered":
		return ordered, nil
	case "central":
		return central, nil
	}
	return 0, fmt.Errorf("parameter protocol=%q: want winkowski, ordered or central", s)
}

// workload builds a scenario's system (agents, pools, jobs) from its parameters and a
// workload random stream (independent of the fault and network streams).
type workload func(p *scenarios.Params, r *sim.Rand) (winkowski.Config, error)

// planner draws a scenario's fault plan. agents are the agent node names; hosts the
// names of the nodes holding pools (manager hosts or lm), by computer.
type planner func(b *scenarios.Build, knobs faultKnobs, agents []string, hosts func(c int) string, cfg *winkowski.Config) (faults.Plan, error)

// faultKnobs are the fault parameters common to every scenario.
type faultKnobs struct {
	// game: the game runs (not a baseline), so plans may crash manager hosts
	// transiently: the game resends what they lose (K2, F3).
	game                                          bool
	horizon                                       time.Duration
	crashes, permanent, partitions, spikes, skews int
}

// generated is the default planner: faults.Generate over the agents only.
func generated(b *scenarios.Build, k faultKnobs, agents []string, _ func(int) string, _ *winkowski.Config) (faults.Plan, error) {
	return faults.Generate(b.Seed, agents, agentFaults(k, agents))
}

// agentFaults turns the knobs into generator parameters: crashes and permanent
// crashes of agents, partitions and one-way cuts over every node (they heal), spikes,
// skews.
func agentFaults(k faultKnobs, agents []string) faults.Params {
	return faults.Params{
		Horizon:     k.horizon,
		Crashes:     k.crashes,
		MeanDown:    k.horizon / 6,
		MaxDown:     max(1, (len(agents)-1)/2),
		Permanent:   k.permanent,
		Partitions:  k.partitions,
		MeanSplit:   k.horizon / 8,
		CutFrac:     0.3,
		Spikes:      k.spikes,
		SpikeExtra:  60 * time.Millisecond,
		Skews:       k.skews,
		MaxStep:     20 * time.Millisecond,
		MaxDriftPPM: 20_000,
		Crashable:   agents,
	}
}

// run is everything a scenario's properties and metrics need about one run.
type run struct {
	sys   *winkowski.System
	proto protocolOf
	plan  faults.Plan
	// agentOf maps node names to agent indices (-1: not an agent); host names to the
	// computers whose pools they hold.
	names   []string
	agentOf map[string]int
	hostOf  map[string][]int
	bound   time.Duration
	// tally counts what the agent monitor checked (the game only).
	tally *ruleTally
}

func build(b *scenarios.Build, wl workload, plan planner) (*scenarios.Setup, error) {
	s, _, err := buildRun(b, wl, plan)
	return s, err
}

// buildRun is build, also returning what the properties see of the run.
func buildRun(b *scenarios.Build, wl workload, plan planner) (*scenarios.Setup, *run, error) {
	return buildRunWrapped(b, wl, plan, plant{})
}

// buildRunWrapped is buildRun with a broken game planted by pl (tests; see plant).
func buildRunWrapped(b *scenarios.Build, wl workload, plan planner, pl plant) (*scenarios.Setup, *run, error) {
	p := b.Params
	proto, perr := parseProtocol(p.String("protocol"))
	var variant winkowski.Variant
	var verr error
	if p.String("variant") == "seed" {
		// Swarm: the restricted variant (p1) on a quarter of the seeds.
		if sim.Stream(b.Seed, "variant").IntN(4) == 0 {
			variant = winkowski.Restricted
		}
	} else {
		variant, verr = winkowski.ParseVariant(p.String("variant"))
	}
	entering, eerr := winkowski.ParseEntering(p.String("entering"))
	policy, berr := bugPolicy(p.String("bug"))
	var gamma time.Duration
	if p.String("gamma") == "seed" {
		// Swarm: Γ drawn from the seed, 1ms…256ms, log-uniform (small Γ makes tasks
		// advance often, large Γ rarely: both must be safe and live).
		gamma = time.Millisecond << sim.Stream(b.Seed, "gamma").IntN(9)
	} else {
		gamma = p.PositiveDuration("gamma")
	}
	k := p.IntRange("k", 0, 1000)
	retry := p.Duration("retry")
	horizon := p.PositiveDuration("horizon")
	bound := p.PositiveDuration("bound")
	knobs := faultKnobs{game: proto == game, horizon: horizon, crashes: p.IntRange("crashes", 0, 1000), permanent: p.IntRange("permanent", 0, 1000),
		partitions: p.IntRange("partitions", 0, 1000), spikes: p.IntRange("spikes", 0, 1000), skews: p.IntRange("skews", 0, 1000)}
	if perr != nil {
		return nil, nil, perr
	}
	for _, pe := range []struct {
		name string
		err  error
	}{{"variant", verr}, {"entering", eerr}, {"bug", berr}} {
		if pe.err != nil {
			return nil, nil, fmt.Errorf("parameter %s: %w", pe.name, pe.err)
		}
	}
	cfg, err := wl(p, sim.Stream(b.Seed, "workload"))
	if p.Err() != nil {
		return nil, nil, p.Err()
	}
	if err != nil {
		return nil, nil, err
	}
	if k == 0 {
		k = cfg.Agents + 1
	}
	cfg.K, cfg.Gamma, cfg.Retry, cfg.Variant, cfg.Entering, cfg.Policy = k, gamma, retry, variant, entering, policy
	// Validate before drawing faults: bad input is reported whatever the plan.
	if _, err := winkowski.NewSystem(cfg); err != nil {
		return nil, nil, err
	}
	agents := winkowski.AgentNames(mustSystem(cfg))
	hostName := func(c int) string {
		if proto == central {
			return baseline.CentralName
		}
		return winkowski.HostName(c)
	}
	fp, err := b.FaultPlan(func() (faults.Plan, error) { return plan(b, knobs, agents, hostName, &cfg) })
	if err != nil {
		return nil, nil, err
	}
	// A restarted agent or manager resumes from stable storage (a "returning late"
	// failure); a node that never restarts needs nothing stored.
	cfg.Durable = fp.Uses("restart")
	if pl.policy != nil {
		pl.policy(&cfg.Policy)
	}
	sys := mustSystem(cfg)
	var nodes []sim.NodeSpec
	tally := &ruleTally{}
	switch proto {
	case game:
		var lay *winkowski.Layout
		nodes, lay = winkowski.Nodes(sys)
		nodes = monitored(sys, nodes, lay, tally, pl) // the agent and manager monitors (monitor.go, hostmon.go)
	case ordered:
		nodes, _ = baseline.Nodes(sys, baseline.Ordered)
	case central:
		nodes, _ = baseline.Nodes(sys, baseline.Central)
	}
	r := &run{sys: sys, proto: proto, plan: fp, bound: bound, agentOf: map[string]int{}, hostOf: map[string][]int{}, tally: tally}
	for _, n := range nodes {
		r.names = append(r.names, n.Name)
	}
	for i, a := range agents {
		r.agentOf[a] = i
	}
	for c := range sys.Agents {
		if len(sys.HostPools[c]) > 0 {
			h := hostName(c)
			r.hostOf[h] = append(r.hostOf[h], c)
		}
	}
	st := fp.Settled()
	expect := 0 // tasks of agents that stay up: the run may stop once all are done
	downSet := map[int]bool{}
	for _, d := range st.Down {
		if i, ok := r.agentOf[d]; ok {
			downSet[i] = true
		}
	}
	for _, t := range sys.Tasks {
		if !downSet[t.Agent] {
			expect++
		}
	}
	seen, done := 0, 0
	until := st.At + sim.Time(bound) + sim.Time(time.Second)
	return &scenarios.Setup{
		Nodes:   nodes,
		Network: sim.Network{Latency: sim.Uniform(time.Millisecond, 10*time.Millisecond)},
		Faults:  fp,
		Until:   until,
		MaxTime: until + sim.Time(time.Second),
		// A livelock must end fast and fail (a bound verdict), never run for minutes:
		// over swarm seeds 1-3000 and 300 seeds of every other scenario a correct run
		// took at most 684 events per task (a task stuck behind a failed one re-arms
		// its alarm every Γ until the run's end), so 1200 per task (plus a floor) is
		// about twice the worst, and a livelocked swarm run costs well under a second.
		MaxEvents: int64(4_000 + 1_200*len(sys.Tasks)),
		Stop: func(k *sim.Kernel) bool {
			h := k.History()
			for ; seen < len(h); seen++ {
				if d, ok := h[seen].Value.(winkowski.Done); ok && !downSet[sys.Task(d.Task).Agent] {
					done++
				}
			}
			return done == expect && k.Now() >= st.At
		},
		Properties: r.properties(),
		Metrics:    r.metrics,
		Notes:      drawnNotes(p, cfg, sys),
	}, r, nil
}

// drawnNotes shows what the swarm drew from the seed (the params line shows
// gamma=seed): Γ, K and the system's shape.
func drawnNotes(p *scenarios.Params, cfg winkowski.Config, sys *winkowski.System) []string {
	if p.String("gamma") != "seed" {
		return nil
	}
	return []string{fmt.Sprintf("gamma=%v k=%d agents=%d pools=%d jobs=%d tasks=%d",
		cfg.Gamma, cfg.K, cfg.Agents, len(cfg.Pools), len(cfg.Jobs), len(sys.Tasks))}
}

func mustSystem(cfg winkowski.Config) *winkowski.System {
	s, err := winkowski.NewSystem(cfg)
	if err != nil {
		panic(err) // validated by the caller
	}
	return s
}

// ---- metrics ----

// Metrics is what `simrun run --format json` reports for a run.
type Metrics struct {
	// Gamma is the alarm period Γ of the run (swarm draws it from the seed).
	Gamma                time.Duration
	Tasks, Created, Done int
	// MeanResponse and MaxResponse: from a task's creation to the start of its access.
	MeanResponse, MaxResponse time.Duration
	// MessagesPerTask: all messages sent divided by the tasks that finished.
	MessagesPerTask float64
	// Liveness says what the liveness properties checked.
	Liveness Liveness
}

// Liveness counts the tasks each liveness property required (so that a check that
// had nothing to check is visible) and the largest delay among those that completed.
type Liveness struct {
	// P3Tasks and P4Tasks: tasks on WK-P3's and WK-P4's lists.
	P3Tasks, P4Tasks int
	// MaxLateness: the longest time from max(creation, faults settled) to leaving the
	// game among the tasks on WK-P4's list that did (the bound's margin).
	MaxLateness time.Duration
}

// liveness computes Metrics.Liveness the way the properties see the run.
func (r *run) liveness(res *sim.Result) Liveness {
	st := r.plan.Settled()
	cr := &checker.Run{Result: res, Settled: st.At, Down: st.Down, Split: st.Split}
	p4, _ := r.items(cr, true)
	p3, _ := r.items(cr, false)
	l := Liveness{P3Tasks: len(p3), P4Tasks: len(p4)}
	for _, it := range p4 {
		if it.Completed {
			l.MaxLateness = max(l.MaxLateness, it.Done.Sub(max(it.Start, st.At)))
		}
	}
	return l
}

func (r *run) metrics(res *sim.Result) any {
	m := Metrics{Gamma: r.sys.Gamma, Tasks: len(r.sys.Tasks), Liveness: r.liveness(res)}
	var sum time.Duration
	n := 0
	for _, rec := range winkowski.Records(res.History) {
		m.Created++
		if rec.HasDone {
			m.Done++
		}
		if rec.HasAccessed {
			d := rec.Accessed.Sub(rec.Created)
			sum += d
			n++
			m.MaxResponse = max(m.MaxResponse, d)
		}
	}
	if n > 0 {
		m.MeanResponse = sum / time.Duration(n)
	}
	if m.Done > 0 {
		m.MessagesPerTask = math.Round(float64(res.Messages.Sent)/float64(m.Done)*10) / 10
	}
	return m
}

// ---- workloads ----

func jitter(r *sim.Rand, d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d/2 + time.Duration(r.Int64Range(0, int64(d)))
}

// dining: n philosophers, fork i between philosopher i and i+1, each on its own
// computer; every philosopher eats `meals` times.
func dining(p *scenarios.Params, r *sim.Rand) (winkowski.Config, error) {
	n := p.IntRange("n", 2, 1000)
	meals := p.IntRange("meals", 1, 10_000)
	taskBudget(p, n*meals, "meals", "n × meals")
	exec, think := p.Duration("exec"), p.Duration("think")
	if p.Err() != nil {
		return winkowski.Config{}, nil // build reports p.Err()
	}
	cfg := winkowski.Config{Agents: n}
	for i := range n {
		cfg.Pools = append(cfg.Pools, winkowski.Pool{Name: fmt.Sprintf("fork%d", i+1), Capacity: 1, Host: i})
	}
	for i := range n {
		job := winkowski.Job{Agent: i, Think: think}
		for range meals {
			job.Tasks = append(job.Tasks, winkowski.TaskSpec{
				Pools: []winkowski.PoolID{winkowski.PoolID(i), winkowski.PoolID((i + 1) % n)}, Exec: jitter(r, exec)})
		}
		cfg.Jobs = append(cfg.Jobs, job)
	}
	return cfg, nil
}

// drinking: n philosophers on a ring with n/2 chords; every edge is a pool of bottles
// with 1..maxcap units; every drinking session needs a random non-empty subset of the
// philosopher's edges.
func drinking(p *scenarios.Params, r *sim.Rand) (winkowski.Config, error) {
	n := p.IntRange("n", 3, 1000)
	sessions := p.IntRange("sessions", 1, 10_000)
	taskBudget(p, n*sessions, "sessions", "n × sessions")
	maxcap := p.IntRange("maxcap", 1, 1000)
	exec, think := p.Duration("exec"), p.Duration("think")
	if p.Err() != nil {
		return winkowski.Config{}, nil // build reports p.Err()
	}
	cfg := winkowski.Config{Agents: n}
	type edge struct{ a, b int }
	var edges []edge
	has := func(a, b int) bool {
		return slices.ContainsFunc(edges, func(e edge) bool { return (e.a == a && e.b == b) || (e.a == b && e.b == a) })
	}
	for i := range n {
		edges = append(edges, edge{i, (i + 1) % n})
	}
	for range n / 2 {
		a, b := r.IntN(n), r.IntN(n)
		if a != b && !has(a, b) {
			edges = append(edges, edge{a, b})
		}
	}
	incident := make([][]winkowski.PoolID, n)
	for j, e := range edges {
		cfg.Pools = append(cfg.Pools, winkowski.Pool{Name: fmt.Sprintf("bottle%d", j+1), Capacity: 1 + r.IntN(maxcap), Host: min(e.a, e.b)})
		incident[e.a] = append(incident[e.a], winkowski.PoolID(j))
		incident[e.b] = append(incident[e.b], winkowski.PoolID(j))
	}
	for i := range n {
		job := winkowski.Job{Agent: i, Think: think}
		for range sessions {
			job.Tasks = append(job.Tasks, winkowski.TaskSpec{Pools: subset(r, incident[i], len(incident[i])), Exec: jitter(r, exec)})
		}
		cfg.Jobs = append(cfg.Jobs, job)
	}
	return cfg, nil
}

// subset draws a random non-empty subset of at most maxSize elements of ps.
func subset(r *sim.Rand, ps []winkowski.PoolID, maxSize int) []winkowski.PoolID {
	size := 1 + r.IntN(min(maxSize, len(ps)))
	perm := r.Perm(len(ps))
	out := make([]winkowski.PoolID, size)
	for i := range out {
		out[i] = ps[perm[i]]
	}
	slices.Sort(out)
	return out
}

// randomJobs: agents, pools with 1..maxcap units on random computers, `jobs` jobs per
// agent of `tasks` tasks each, every task over a random set of 1..rho pools.
func randomJobs(p *scenarios.Params, r *sim.Rand) (winkowski.Config, error) {
	agents := p.IntRange("agents", 1, 1000)
	pools := p.IntRange("pools", 1, 1000)
	maxcap := p.IntRange("maxcap", 1, 1000)
	jobs := p.IntRange("jobs", 1, 1000)
	tasks := p.IntRange("tasks", 1, 10_000)
	taskBudget(p, agents*jobs*tasks, "tasks", "agents × jobs × tasks")
	rho := p.IntRange("rho", 1, 64)
	exec, think := p.Duration("exec"), p.Duration("think")
	if p.Err() != nil {
		return winkowski.Config{}, nil // build reports p.Err()
	}
	return jobsConfig(r, agents, pools, maxcap, jobs, tasks, rho, exec, think), nil
}

func jobsConfig(r *sim.Rand, agents, pools, maxcap, jobs, tasks, rho int, exec, think time.Duration) winkowski.Config {
	cfg := winkowski.Config{Agents: agents}
	all := make([]winkowski.PoolID, pools)
	for j := range pools {
		cfg.Pools = append(cfg.Pools, winkowski.Pool{Name: fmt.Sprintf("pool%d", j+1), Capacity: 1 + r.IntN(maxcap), Host: r.IntN(agents)})
		all[j] = winkowski.PoolID(j)
	}
	for a := range agents {
		for range jobs {
			job := winkowski.Job{Agent: a, Think: think, Start: time.Duration(r.Int64Range(0, int64(20*time.Millisecond)))}
			for range tasks {
				job.Tasks = append(job.Tasks, winkowski.TaskSpec{Pools: subset(r, all, rho), Exec: jitter(r, exec)})
			}
			cfg.Jobs = append(cfg.Jobs, job)
		}
	}
	return cfg
}

// maxTasks bounds the tasks a run's workload holds in all (issue 16 item 4: each size
// was bounded on its own, and their product ran the process out of memory).
const maxTasks = 100_000

// taskBudget records an input error on parameter name when a workload would hold
// total tasks, more than maxTasks; product names the parameters multiplied.
func taskBudget(p *scenarios.Params, total int, name, product string) {
	if total > maxTasks {
		p.Reject(name, fmt.Sprintf("%s at most %d tasks in all (got %d)", product, maxTasks, total))
	}
}

// chain: n tasks in a line, task i (agent i) needing pools i and i+1 (single units);
// every agent repeats its task `meals` times. Pool j is on computer min(j, n-1).
func chain(p *scenarios.Params, r *sim.Rand) (winkowski.Config, error) {
	n := p.IntRange("n", 3, 1000)
	meals := p.IntRange("meals", 1, 10_000)
	taskBudget(p, n*meals, "meals", "n × meals")
	exec, think := p.Duration("exec"), p.Duration("think")
	if p.Err() != nil {
		return winkowski.Config{}, nil // build reports p.Err()
	}
	cfg := winkowski.Config{Agents: n}
	for j := range n + 1 {
		cfg.Pools = append(cfg.Pools, winkowski.Pool{Name: fmt.Sprintf("link%d", j), Capacity: 1, Host: min(j, n-1)})
	}
	for i := range n {
		job := winkowski.Job{Agent: i, Think: think}
		for range meals {
			job.Tasks = append(job.Tasks, winkowski.TaskSpec{Pools: []winkowski.PoolID{winkowski.PoolID(i), winkowski.PoolID(i + 1)}, Exec: jitter(r, exec)})
		}
		cfg.Jobs = append(cfg.Jobs, job)
	}
	return cfg, nil
}

// custom: pools "A:1,B:2" (name:capacity, computer = position mod agents), tasks
// "A+B,B" (one job per entry, on agent = position mod agents, repeated `repeat` times).
func custom(p *scenarios.Params, r *sim.Rand) (winkowski.Config, error) {
	agents := p.IntRange("agents", 1, 1000)
	repeat := p.IntRange("repeat", 1, 10_000)
	taskBudget(p, len(p.List("tasks"))*repeat, "repeat", "the tasks listed × repeat")
	exec, think := p.Duration("exec"), p.Duration("think")
	if p.Err() != nil {
		return winkowski.Config{}, nil // build reports p.Err()
	}
	cfg := winkowski.Config{Agents: agents}
	idx := map[string]winkowski.PoolID{}
	var names []string
	for i, spec := range p.List("pools") {
		name, capS, ok := strings.Cut(spec, ":")
		var capacity int
		if _, err := fmt.Sscanf(capS, "%d", &capacity); !ok || err != nil || name == "" {
			return cfg, fmt.Errorf("parameter pools: %q is not name:capacity", spec)
		}
		if _, dup := idx[name]; dup {
			return cfg, fmt.Errorf("parameter pools: pool %q given twice", name)
		}
		idx[name] = winkowski.PoolID(i)
		names = append(names, name)
		cfg.Pools = append(cfg.Pools, winkowski.Pool{Name: name, Capacity: capacity, Host: i % max(agents, 1)})
	}
	for i, spec := range p.List("tasks") {
		var ps []winkowski.PoolID
		for _, name := range strings.Split(spec, "+") {
			id, ok := idx[strings.TrimSpace(name)]
			if !ok {
				return cfg, fmt.Errorf("parameter tasks: task %d (%q) is interested in unknown pool %q (pools: %s)", i+1, spec, name, strings.Join(names, ", "))
			}
			ps = append(ps, id)
		}
		job := winkowski.Job{Agent: i % max(agents, 1), Think: think}
		for range repeat {
			job.Tasks = append(job.Tasks, winkowski.TaskSpec{Pools: ps, Exec: jitter(r, exec)})
		}
		cfg.Jobs = append(cfg.Jobs, job)
	}
	return cfg, nil
}

// orders: the configuration in which (p3) must count order forms (WK-4). Agents a1
// (task T, pools P and Q), a2 (task U, pool Q, `meals` times from 1.5s) and a3 (task
// F, pools P and R); P, Q, R have one resource each, on computers 1, 2, 3. T and F
// start together and take tickets without seeing each other (T's 1 outranks F's 3);
// ordersPlan slows F's link to R and T's link to Q, so that F's request comes first at
// P and F sits in ORDERING, its order form at P, when it crashes for good. T must then
// count F's lower-priority request (it has an order form) and withdraw everything; a T
// that ignores order forms keeps its request in front of U's at Q for ever, and U —
// which shares no pool with F — starves (WK-P4).
func orders(p *scenarios.Params, r *sim.Rand) (winkowski.Config, error) {
	meals := p.IntRange("meals", 1, 10_000)
	exec := p.Duration("exec")
	if p.Err() != nil {
		return winkowski.Config{}, nil // build reports p.Err()
	}
	cfg := winkowski.Config{Agents: 3, Pools: []winkowski.Pool{
		{Name: "P", Capacity: 1, Host: 0}, {Name: "Q", Capacity: 1, Host: 1}, {Name: "R", Capacity: 1, Host: 2}}}
	cfg.Jobs = []winkowski.Job{
		// Start after the plan's spikes are in place (sends at time 0 precede them).
		{Agent: 0, Start: time.Millisecond, Tasks: []winkowski.TaskSpec{{Pools: []winkowski.PoolID{0, 1}, Exec: exec}}},
		{Agent: 2, Start: time.Millisecond, Tasks: []winkowski.TaskSpec{{Pools: []winkowski.PoolID{0, 2}, Exec: exec}}},
	}
	u := winkowski.Job{Agent: 1, Start: 1500 * time.Millisecond, Think: 5 * time.Millisecond}
	for range meals {
		u.Tasks = append(u.Tasks, winkowski.TaskSpec{Pools: []winkowski.PoolID{1}, Exec: jitter(r, exec)})
	}
	cfg.Jobs = append(cfg.Jobs, u)
	return cfg, nil
}

// ordersPlan: F's forms to R and T's forms to Q take 200ms and 600ms longer for the
// first 2s, and F's agent crashes for good at 500ms. F is then in ORDERING on every
// seed: it orders at about 410ms (two round trips to R) and would win at about 615ms;
// T is admitted at about 605ms (one round trip to Q), after F's request reached P.
func ordersPlan(b *scenarios.Build, k faultKnobs, agents []string, hosts func(int) string, _ *winkowski.Config) (faults.Plan, error) {
	return faults.Plan{Events: []faults.Event{
		{At: 0, Kind: "spike", From: agents[2], To: hosts(2), Extra: faults.Duration(200 * time.Millisecond), For: faults.Duration(2 * time.Second)},
		{At: 0, Kind: "spike", From: agents[0], To: hosts(1), Extra: faults.Duration(600 * time.Millisecond), For: faults.Duration(2 * time.Second)},
		{At: faults.Duration(500 * time.Millisecond), Kind: "crash", Node: agents[2]},
	}}, nil
}

// rejoin: the shape in which a restarted agent must remember which tickets its tasks
// hold (WK-agent-state, WK-T1/ticket). Agents a1 and a2; pools P (one resource, on
// computer 2) and Q (one resource, on computer 1). a2's task V takes P at once and
// holds it for `hold`; a1's task T (pool P, from 30ms) takes ticket 1 and waits in
// TRYING for P all that time. rejoinPlan crashes a1 at about 150ms and restarts it
// from stable storage at about 250ms (F2): T is restored holding ticket 1 while a1's
// second job, due at 200ms, creates U (pool Q) on the restart; U meets no predecessor
// and takes a ticket at once — 4, the lowest one no task of a1 holds, unless the
// restarted agent forgot T's.
func rejoin(p *scenarios.Params, r *sim.Rand) (winkowski.Config, error) {
	hold, exec := p.Duration("hold"), p.Duration("exec")
	if p.Err() != nil {
		return winkowski.Config{}, nil // build reports p.Err()
	}
	ps := func(ids ...winkowski.PoolID) []winkowski.PoolID { return ids }
	return winkowski.Config{Agents: 2, Pools: []winkowski.Pool{{Name: "P", Capacity: 1, Host: 1}, {Name: "Q", Capacity: 1, Host: 0}},
		Jobs: []winkowski.Job{
			{Agent: 1, Start: time.Millisecond, Tasks: []winkowski.TaskSpec{{Pools: ps(0), Exec: hold}}},
			{Agent: 0, Start: 30 * time.Millisecond, Tasks: []winkowski.TaskSpec{{Pools: ps(0), Exec: jitter(r, exec)}}},
			{Agent: 0, Start: 200 * time.Millisecond, Tasks: []winkowski.TaskSpec{{Pools: ps(1), Exec: jitter(r, exec)}}},
		}}, nil
}

// rejoinPlan: a1 crashes at 140-160ms and restarts at 240-260ms (drawn from the seed),
// on top of the generated spikes and skews (no other crash or partition: they would
// blur the shape).
func rejoinPlan(b *scenarios.Build, k faultKnobs, agents []string, _ func(int) string, _ *winkowski.Config) (faults.Plan, error) {
	gen, err := faults.Generate(b.Seed, agents, agentFaults(k, agents))
	if err != nil {
		return gen, err
	}
	r := sim.Stream(b.Seed, "rejoin")
	crash := 140*time.Millisecond + time.Duration(r.Int64Range(0, int64(20*time.Millisecond)))
	restart := 240*time.Millisecond + time.Duration(r.Int64Range(0, int64(20*time.Millisecond)))
	gen = insertEvent(gen, faults.Event{At: faults.Duration(crash), Kind: "crash", Node: agents[0]})
	return insertEvent(gen, faults.Event{At: faults.Duration(restart), Kind: "restart", Node: agents[0]}), nil
}

// ---- planners ----

// chainPlan crashes the middle agent for good at a random time in [horizon/4,
// horizon] (while its tasks are in the queues), on top of the generated faults.
func chainPlan(b *scenarios.Build, k faultKnobs, agents []string, hosts func(int) string, cfg *winkowski.Config) (faults.Plan, error) {
	mid := agents[len(agents)/2]
	others := slices.DeleteFunc(slices.Clone(agents), func(a string) bool { return a == mid })
	gen, err := faults.Generate(b.Seed, agents, withCrashable(agentFaults(k, agents), others))
	if err != nil {
		return gen, err
	}
	r := sim.Stream(b.Seed, "chain-crash")
	at := k.horizon/4 + time.Duration(r.Int64Range(0, int64(k.horizon-k.horizon/4)))
	return insertEvent(gen, faults.Event{At: faults.Duration(at), Kind: "crash", Node: mid}), nil
}

func withCrashable(p faults.Params, crashable []string) faults.Params {
	p.Crashable = crashable
	p.MaxDown = max(1, min(p.MaxDown, len(crashable)))
	return p
}

// hostPlan crashes the manager role of one computer holding pools for good, on top
// of generated agent faults.
func hostPlan(b *scenarios.Build, k faultKnobs, agents []string, hosts func(int) string, cfg *winkowski.Config) (faults.Plan, error) {
	gen, err := faults.Generate(b.Seed, agents, agentFaults(k, agents))
	if err != nil {
		return gen, err
	}
	var withPools []int
	for c := range cfg.Agents {
		if slices.ContainsFunc(cfg.Pools, func(p winkowski.Pool) bool { return p.Host == c }) {
			withPools = append(withPools, c)
		}
	}
	r := sim.Stream(b.Seed, "host-crash")
	c := withPools[r.IntN(len(withPools))]
	at := k.horizon/4 + time.Duration(r.Int64Range(0, int64(k.horizon-k.horizon/4)))
	return insertEvent(gen, faults.Event{At: faults.Duration(at), Kind: "crash", Node: hosts(c)}), nil
}

// insertEvent adds e to plan in time order (after events at the same time).
func insertEvent(plan faults.Plan, e faults.Event) faults.Plan {
	i := 0
	for i < len(plan.Events) && plan.Events[i].At <= e.At {
		i++
	}
	plan.Events = slices.Insert(slices.Clone(plan.Events), i, e)
	return plan
}

// swarm draws the whole system (3–6 agents, 3–8 pools of 1–3 resources, jobs, ϱ,
// execution and think times) from the seed; swarmPlan draws the fault intensities.
func swarm(p *scenarios.Params, r *sim.Rand) (winkowski.Config, error) {
	agents := 3 + r.IntN(4)
	pools := 3 + r.IntN(6)
	jobs := 1 + r.IntN(2)
	tasks := 2 + r.IntN(4)
	rho := 1 + r.IntN(min(4, pools))
	exec := time.Duration(2+r.IntN(15)) * time.Millisecond
	think := time.Duration(r.IntN(10)) * time.Millisecond
	return jobsConfig(r, agents, pools, 3, jobs, tasks, rho, exec, think), nil
}

// swarmPlan draws the swarm's faults: agent crashes (some of them crash-sends: the
// agent stops part-way through a call's forms), crashes for good (not in the
// restricted variant, which assumes no failures), partitions, spikes and skews, with
// intensities drawn from the seed; on half of the seeds, short crashes of agents
// within the workload's contention window (contend.go); and, for the game, transient crashes of manager
// hosts (one down at a time; some cut a broadcast short), which the game survives by
// resending and polling (K2, F3).
func swarmPlan(b *scenarios.Build, k faultKnobs, agents []string, hosts func(int) string, cfg *winkowski.Config) (faults.Plan, error) {
	limits := agentFaults(k, agents)
	limits.CrashSendFrac = 0.6
	if cfg.Variant == winkowski.Restricted {
		limits.Permanent = 0
	}
	plan, err := faults.Generate(b.Seed, agents, faults.Swarm(b.Seed, limits))
	if err != nil {
		return plan, err
	}
	// Agents crashed and restarted while their tasks contend (contend.go).
	plan = addContentionCrashes(b.Seed, plan, agents, limits.MaxDown, k.horizon, cfg)
	if !k.game {
		return plan, nil
	}
	var withPools []string
	for c := range cfg.Agents {
		if slices.ContainsFunc(cfg.Pools, func(p winkowski.Pool) bool { return p.Host == c }) {
			withPools = append(withPools, hosts(c))
		}
	}
	hs := sim.StreamSeed(b.Seed, "host-faults")
	hp := faults.Params{Horizon: k.horizon, Crashes: sim.Stream(b.Seed, "host-crashes").IntN(3), MeanDown: k.horizon / 10,
		MaxDown: 1, CrashSendFrac: 0.5, Crashable: withPools}
	hplan, err := faults.Generate(hs, withPools, hp)
	if err != nil {
		return plan, err
	}
	for _, e := range hplan.Events {
		plan = insertEvent(plan, e)
	}
	return plan, nil
}

// ---- registration ----

func init() {
	dp := func(name, def, help string) scenarios.Param {
		return scenarios.Param{Name: name, Default: def, Help: help}
	}
	timing := []scenarios.Param{dp("exec", "8ms", "mean execution time of a task"), dp("think", "5ms", "pause between the tasks of a job")}
	reg := func(name, help string, suite bool, ps []scenarios.Param, wl workload, pl planner) {
		scenarios.Register(&scenarios.Scenario{Name: name, Help: help, Params: ps, Suite: suite,
			Build: func(b *scenarios.Build) (*scenarios.Setup, error) { return build(b, wl, pl) }})
	}
	reg("winkowski/dining", "dining philosophers: 5 tasks around a ring of single-unit pools, agents crash and return, slow links", true,
		params(commonParams("1s", "3s", 2, 0, 2, 2, 1), append([]scenarios.Param{dp("n", "5", "philosophers"), dp("meals", "6", "meals per philosopher")}, timing...)...),
		dining, generated)
	reg("winkowski/drinking", "drinking philosophers: multi-unit pools on a ring with chords, random subsets per session", true,
		params(commonParams("1s", "3s", 2, 0, 2, 2, 1), append([]scenarios.Param{dp("n", "6", "philosophers"), dp("sessions", "5", "drinking sessions per philosopher"), dp("maxcap", "3", "largest pool capacity")}, timing...)...),
		drinking, generated)
	reg("winkowski/jobs", "random jobs of tasks over random pool sets", true,
		params(commonParams("1s", "3s", 2, 0, 2, 2, 1), append([]scenarios.Param{dp("agents", "4", "agents (computers)"), dp("pools", "6", "pools"), dp("maxcap", "3", "largest pool capacity"),
			dp("jobs", "2", "jobs per agent"), dp("tasks", "4", "tasks per job"), dp("rho", "3", "most pools a task needs (ϱ)")}, timing...)...),
		randomJobs, generated)
	reg("winkowski/chain", "a task fails for good in the middle of a conflict chain: only its neighbours may be delayed (WK-P4)", true,
		params(commonParams("1s", "3s", 0, 0, 1, 2, 1), append([]scenarios.Param{dp("n", "7", "tasks in the chain"), dp("meals", "8", "times each agent repeats its task")}, timing...)...),
		chain, chainPlan)
	reg("winkowski/poolcrash", "the manager role of one computer fails for good: its pools are lost (measured, outside the paper's model)", false,
		params(commonParams("1s", "3s", 0, 0, 1, 2, 0), append([]scenarios.Param{dp("agents", "5", "agents (computers)"), dp("pools", "8", "pools"), dp("maxcap", "2", "largest pool capacity"),
			dp("jobs", "1", "jobs per agent"), dp("tasks", "5", "tasks per job"), dp("rho", "2", "most pools a task needs (ϱ)")}, timing...)...),
		randomJobs, hostPlan)
	reg("winkowski/swarm", "random system and workload; crash, permanent-crash, spike and skew intensities drawn from the seed", false,
		withDefault(withDefault(params(commonParams("1s", "3s", 6, 1, 4, 4, 2)), "gamma", "seed"), "variant", "seed"),
		swarm, swarmPlan)
	reg("winkowski/orders", "a lower-priority task fails in ORDERING in front of a higher-priority one: (p3) must count its order form (WK-4)", false,
		withDefault(params(commonParams("1s", "3s", 0, 0, 0, 0, 0), dp("meals", "2", "tasks of the bystander U"), dp("exec", "8ms", "mean execution time of a task")), "gamma", "1s"),
		orders, ordersPlan)
	reg("winkowski/rejoin", "an agent restarts while one of its tasks holds a ticket and another enters: tickets stay unique (WK-T1)", false,
		params(commonParams("1s", "3s", 0, 0, 0, 2, 1), dp("hold", "400ms", "how long a2's task holds P"), dp("exec", "8ms", "mean execution time of a1's tasks")),
		rejoin, rejoinPlan)
	reg("winkowski/custom", "pools and tasks from parameters (pools=A:1,B:2 tasks=A+B,B)", false,
		params(commonParams("1s", "3s", 2, 0, 1, 2, 1), append([]scenarios.Param{dp("agents", "2", "agents (computers)"), dp("pools", "A:1,B:1", "pools as name:capacity, on computer (position mod agents)"),
			dp("tasks", "A+B,B", "one job per entry: the pools of its task, joined by +, on agent (position mod agents)"), dp("repeat", "3", "tasks per job")}, timing...)...),
		custom, generated)
}
