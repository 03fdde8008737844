package eoscen

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// The EO-P4 experiment: does adding observers stop a permanent node crash from
// blocking an agent? Every run has a home node n0 and, for each stage after the launch
// stage, a group of maxGroup nodes; the simple protocol uses the first node of each
// group, the extended protocol with k observers the first 1+k. Each non-home node
// crashes for good with probability crash-rate at a uniform time in the crash window;
// the same seed gives every variant the same crashes. An agent completes if its last
// stage commits within the deadline.

const maxGroup = 5 // worker + up to 4 observers

// blockingSpacing is the time between agent launches in the blocking runs (the
// experiment keeps blocking-run's default).
const blockingSpacing = 200 * time.Millisecond

var blockingRunParams = []scenarios.Param{
	{Name: "protocol", Default: "extended", Help: "extended or simple"},
	{Name: "observers", Default: "2", Help: "observers per stage (0-4; the simple protocol has none)"},
	{Name: "crash-rate", Default: "0.2", Help: "probability that each non-home node crashes for good"},
	{Name: "agents", Default: "5", Help: "agents per run"},
	{Name: "stages", Default: "4", Help: "stages per itinerary, the launch stage included"},
	{Name: "work", Default: "100ms", Help: "how long each stage's Execute takes"},
	{Name: "spacing", Default: blockingSpacing.String(), Help: "time between agent launches"},
	{Name: "window", Default: "flight", Help: "crashes happen in [0, window]; flight: while the agents are in flight, (agents-1)·spacing + stages·work"},
	{Name: "deadline", Default: "10s", Help: "an agent completes if it is done within this of its launch (run end: last launch + deadline)"},
}

func init() {
	scenarios.Register(&scenarios.Scenario{
		Name:   "exactlyonce/blocking-run",
		Help:   "one run of the EO-P4 experiment: permanent crashes at a given rate, simple or extended with k observers",
		Params: blockingRunParams,
		Build:  buildBlockingRun,
	})
	scenarios.Register(&scenarios.Scenario{
		Name: "exactlyonce/blocking",
		Help: "EO-P4 experiment: completion rate and time vs crash rate, simple vs extended with 0, 2, 4 observers",
		Params: []scenarios.Param{
			{Name: "rates", Default: "0,0.05,0.1,0.2,0.3,0.4", Help: "crash rates (comma-separated)"},
			{Name: "observers", Default: "0,2,4", Help: "observer counts of the extended protocol (comma-separated)"},
			{Name: "runs", Default: "40", Help: "runs (seeds) per point"},
			{Name: "agents", Default: "5", Help: "agents per run"},
			{Name: "stages", Default: "4", Help: "stages per itinerary, the launch stage included"},
			{Name: "work", Default: "100ms", Help: "how long each stage's Execute takes"},
			{Name: "deadline", Default: "10s", Help: "completion deadline after launch"},
			{Name: "workers", Default: "0", Help: "parallel runs (0: one per CPU); results never depend on it"},
		},
		Experiment: blockingExperiment,
	})
}

// blockingTopology returns the node names and the itinerary of a variant.
func blockingTopology(stages, observers int, simple bool) ([]string, string) {
	names := systemNames(1 + (stages-1)*maxGroup)
	parts := []string{"n0"}
	width := 1 + observers
	if simple {
		width = 1
	}
	for s := 1; s < stages; s++ {
		var ns []string
		for j := 0; j < width; j++ {
			ns = append(ns, names[1+(s-1)*maxGroup+j])
		}
		parts = append(parts, strings.Join(ns, ","))
	}
	return names, strings.Join(parts, " | ")
}

// stageNodes returns each hop's node ids of a variant (hop 0: the home node).
func stageNodes(stages, observers int, simple bool) [][]sim.NodeID {
	names, itinerary := blockingTopology(stages, observers, simple)
	var out [][]sim.NodeID
	for _, part := range strings.Split(itinerary, " | ") {
		var ids []sim.NodeID
		for _, n := range strings.Split(part, ",") {
			ids = append(ids, sim.NodeID(slices.Index(names, n)))
		}
		out = append(out, ids)
	}
	return out
}

// blockingPlan crashes each non-home node for good with probability rate, at a
// uniform time in [0, window]; node by node from its own stream, so the crashes of a
// seed are the same for every variant and rate changes move nodes in or out only.
func blockingPlan(seed uint64, names []string, rate float64, window time.Duration) faults.Plan {
	type c struct {
		at   time.Duration
		node string
	}
	var cs []c
	for i := 1; i < len(names); i++ {
		r := sim.Stream(seed, "blocking-crash", int64(i))
		u := r.Float64()
		at := time.Duration(r.Int64Range(0, int64(window)))
		if u < rate {
			cs = append(cs, c{at, names[i]})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].at < cs[j].at })
	var p faults.Plan
	for _, x := range cs {
		p.Events = append(p.Events, faults.Event{At: faults.Duration(x.at), Kind: "crash", Node: x.node})
	}
	return p
}

func buildBlockingRun(b *scenarios.Build) (*scenarios.Setup, error) {
	p := b.Params
	proto := p.String("protocol")
	observers := p.IntRange("observers", 0, maxGroup-1)
	rate := p.Prob("crash-rate")
	agents := p.IntRange("agents", 1, maxAgents)
	stages := p.IntRange("stages", 2, maxStages)
	work := p.Duration("work")
	spacing := p.Duration("spacing")
	var window time.Duration
	if p.String("window") != "flight" {
		window = p.PositiveDuration("window")
	}
	deadline := p.PositiveDuration("deadline")
	if err := p.Err(); err != nil {
		return nil, err
	}
	if window == 0 {
		// The agents' flight: the last launch plus one Execute per stage. Crashes drawn
		// over a longer window mostly come after the agents are done and change nothing.
		window = time.Duration(agents-1)*spacing + time.Duration(stages)*work
		if window > scenarios.MaxDuration {
			return nil, fmt.Errorf("parameters agents, spacing, stages and work: the agents' flight (%v) is longer than %v", window, scenarios.MaxDuration)
		}
	}
	if proto != "extended" && proto != "simple" {
		return nil, fmt.Errorf("parameter protocol=%q: want extended or simple", proto)
	}
	names, itinerary := blockingTopology(stages, observers, proto == "simple")
	params := map[string]string{
		"protocol": proto, "nodes": strconv.Itoa(len(names)), "agents": strconv.Itoa(agents),
		"itinerary": itinerary, "work": work.String(), "spacing": spacing.String(),
		"horizon": window.String(), "bound": deadline.String(), "capacity": "100",
	}
	ps, err := scenarios.NewParams(Params(nil), params)
	if err != nil {
		return nil, err
	}
	return build(&scenarios.Build{Seed: b.Seed, Params: ps, Faults: b.Faults}, func(e *env) (faults.Plan, error) {
		return blockingPlan(b.Seed, names, rate, window), nil
	}, nil, nil)
}

// point is one cell of the experiment.
type point struct {
	proto     string
	observers int
	rate      float64
}

type pointResult struct {
	runs, agents, completed int
	times                   []time.Duration
	safety                  int // runs with a safety (or crash) verdict: must stay 0
	liveness                int // runs failing EO-P3 (agents the protocol should have finished)
	messages                int64
	perAgent                []float64 // per run: messages sent / agents accepted
	failing                 []uint64
	// blocked agents by cause (see blockCause)
	noMajority, inDoubt, other int
	// failover: from a stage's worker crashing mid-stage to the stage committing
	// elsewhere (ms); failoverLost: such stages that never committed
	failover     []float64
	failoverLost int
}

// The experiment's bounds: enough for any figure, small enough that a run's setup and
// the experiment's summaries fit in memory (a billion stages or runs did not).
const (
	maxJobs   = 1_000_000
	maxRuns   = 100_000
	maxAgents = 1_000
	maxStages = 100
)

// runSummary is what the blocking experiment keeps of one run.
type runSummary struct {
	agents           int             // Accepted observations
	launched         int             // distinct agents accepted
	times            []time.Duration // completion times of the agents that completed
	noMajority       int             // blocked agents by cause (blockCause)
	inDoubt, other   int
	failover         []float64
	failoverLost     int
	messages         int64
	safety, liveness int // verdicts of the safety (or crash) and liveness classes
}

// summarizeRun reduces one run's report to what the experiment's tables need; hops
// lists each hop's node ids.
func summarizeRun(rep *scenarios.Report, hops [][]sim.NodeID) runSummary {
	var sum runSummary
	launch := map[eo.AgentID]sim.Time{}
	finished := map[eo.AgentID]bool{}
	var order []eo.AgentID
	for _, o := range rep.Result.History {
		switch v := o.Value.(type) {
		case eo.Accepted:
			launch[v.Agent] = o.Time
			order = append(order, v.Agent)
			sum.agents++
		case eo.Done:
			finished[v.Agent] = true
			sum.times = append(sum.times, o.Time.Sub(launch[v.Agent]))
		}
	}
	for _, a := range order {
		if finished[a] {
			continue
		}
		switch blockCause(rep, a, hops) {
		case "no majority":
			sum.noMajority++
		case "in doubt":
			sum.inDoubt++
		default:
			sum.other++
		}
	}
	sum.launched = len(launch)
	sum.failover, sum.failoverLost = failovers(rep)
	sum.messages = rep.Result.Messages.Sent
	for _, v := range rep.Verdicts {
		switch v.Class {
		case checker.Safety, checker.Crash:
			sum.safety++
		case checker.Liveness:
			sum.liveness++
		}
	}
	return sum
}

// blockCause says why an agent that did not complete is stuck: "no majority" when at
// most half of the nodes are up at the stage the agent is at or at the stage its
// transaction must move it to (the stage cannot vote, or cannot take the agent: for
// the simple protocol, the one node is down), "in doubt" when a node holds a prepared
// Put of it whose coordinator is down (the 2PC blocks), "other" otherwise (still
// running at the deadline, say). stages lists each hop's node ids.
func blockCause(rep *scenarios.Report, agent eo.AgentID, stages [][]sim.NodeID) string {
	hop := 0 // the stage the agent is at: one after its last committed stage
	for _, o := range rep.Result.History {
		if c, ok := o.Value.(eo.Committed); ok && c.Stage.Agent == agent {
			hop = max(hop, int(c.Stage.Hop)+1)
		}
	}
	for h := hop; h <= hop+1 && h < len(stages); h++ {
		up := 0
		for _, n := range stages[h] {
			if rep.Result.Final[n].Up {
				up++
			}
		}
		if 2*up <= len(stages[h]) {
			return "no majority"
		}
	}
	for _, f := range rep.Result.Final {
		if !f.Up {
			continue
		}
		for _, it := range eo.Inspect(f.Stable) {
			if it.Kind == eo.StablePrepared && it.Stage.Agent == agent && len(it.Waits) > 0 && !rep.Result.Final[it.Waits[0]].Up {
				return "in doubt"
			}
		}
	}
	return "other"
}

// failovers measures, for every stage whose worker (the node that last began its
// transaction) crashed before the stage committed, the time from the crash to the
// commit by another worker; stages that never commit are counted apart.
func failovers(rep *scenarios.Report) (times []float64, lost int) {
	type began struct {
		at   sim.Time
		node sim.NodeID
	}
	workers := map[eo.StageID][]began{}
	committed := map[eo.StageID]sim.Time{}
	for _, o := range rep.Result.History {
		switch v := o.Value.(type) {
		case eo.Began:
			workers[v.Stage] = append(workers[v.Stage], began{o.Time, v.Node})
		case eo.Committed:
			if _, ok := committed[v.Stage]; !ok {
				committed[v.Stage] = o.Time
			}
		}
	}
	crashed := map[string]sim.Time{}
	for _, e := range rep.Faults.Events {
		if e.IsCrash() {
			crashed[e.Node] = sim.Time(e.At)
		}
	}
	stages := make([]eo.StageID, 0, len(workers))
	for st := range workers {
		stages = append(stages, st)
	}
	slices.SortFunc(stages, func(a, b eo.StageID) int {
		if a.Agent != b.Agent {
			return int(a.Agent) - int(b.Agent)
		}
		return int(a.Hop - b.Hop)
	})
	for _, st := range stages {
		// the worker at the time of its crash: the last to begin before it
		for _, b := range workers[st] {
			tc, ok := crashed[rep.Result.Final[b.node].Name]
			if !ok || tc < b.at {
				continue
			}
			later := false
			for _, b2 := range workers[st] {
				if b2.at > b.at && b2.at <= tc && b2.node != b.node {
					later = true
				}
			}
			tcm, done := committed[st]
			if later || (done && tcm <= tc) {
				continue
			}
			if done {
				times = append(times, float64(tcm-tc)/1e6)
			} else {
				lost++
			}
			break
		}
	}
	return times, lost
}

func blockingExperiment(x *scenarios.Exp) ([]*reports.Table, error) {
	p := x.Params
	rates := p.ProbList("rates")
	obs := p.IntList("observers", 0, maxGroup-1)
	runs := p.IntRange("runs", 1, maxRuns)
	work := p.String("work")
	deadline := p.String("deadline")
	workers := p.IntRange("workers", 0, 256)
	agentsN := p.IntRange("agents", 1, maxAgents)
	stagesN := p.IntRange("stages", 2, maxStages)
	workD := p.Duration("work")
	p.PositiveDuration("deadline")
	if n := len(rates) * (1 + len(obs)) * runs; p.Err() == nil && n > maxJobs {
		p.Reject("runs", fmt.Sprintf("rates × (1 + observers) × runs at most %d runs in all (got %d)", maxJobs, n))
	}
	// the runs' crash window, the agents' flight, must fit in a fault plan's day
	if flight := time.Duration(agentsN-1)*blockingSpacing + time.Duration(stagesN)*workD; p.Err() == nil && flight > scenarios.MaxDuration {
		p.Reject("work", fmt.Sprintf("(agents−1)·%v + stages·work at most 24h (got %v)", blockingSpacing, flight))
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	sc, err := scenarios.Lookup("exactlyonce/blocking-run")
	if err != nil {
		return nil, err
	}
	var points []point
	for _, r := range rates {
		points = append(points, point{"simple", 0, r})
		for _, k := range obs {
			points = append(points, point{"extended", k, r})
		}
	}
	type job struct {
		pi   int
		seed uint64
	}
	results := make([]pointResult, len(points))
	var jobs []job
	for pi := range points {
		for s := 1; s <= runs; s++ {
			jobs = append(jobs, job{pi, x.Seed*1_000_003 + uint64(s)})
		}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	type outcome struct {
		sum runSummary
		err error
	}
	outs := make([]outcome, len(jobs))
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				pt := points[j.pi]
				rep, err := scenarios.Run(sc, scenarios.Options{Seed: j.seed, Params: map[string]string{
					"protocol": pt.proto, "observers": strconv.Itoa(pt.observers), "crash-rate": strconv.FormatFloat(pt.rate, 'g', -1, 64),
					"agents": strconv.Itoa(agentsN), "stages": strconv.Itoa(stagesN), "work": work, "deadline": deadline,
				}})
				// Only the run's summary is kept: a report holds the whole history, and
				// thousands of them outgrew memory.
				if err == nil {
					outs[i] = outcome{sum: summarizeRun(rep, stageNodes(stagesN, pt.observers, pt.proto == "simple"))}
				} else {
					outs[i] = outcome{err: err}
				}
				mu.Lock()
				done++
				if x.Progress != nil {
					x.Progress(done, len(jobs))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, j := range jobs {
		if outs[i].err != nil {
			return nil, outs[i].err
		}
		sum := outs[i].sum
		res := &results[j.pi]
		res.runs++
		res.agents += sum.agents
		res.completed += len(sum.times)
		res.times = append(res.times, sum.times...)
		res.noMajority += sum.noMajority
		res.inDoubt += sum.inDoubt
		res.other += sum.other
		res.failover = append(res.failover, sum.failover...)
		res.failoverLost += sum.failoverLost
		res.messages += sum.messages
		if sum.launched > 0 {
			res.perAgent = append(res.perAgent, float64(sum.messages)/float64(sum.launched))
		}
		res.safety += sum.safety
		res.liveness += sum.liveness
		for k := 0; k < sum.safety+sum.liveness; k++ {
			res.failing = append(res.failing, j.seed)
		}
	}
	t := reports.NewTable("EO-P4 blocking: completion vs crash rate",
		"protocol", "observers", "variant", "crash_rate", "runs", "agents", "completed", "completion_rate", "completion_lo", "completion_hi",
		"mean_completion_ms", "p95_completion_ms", "msgs_per_agent", "msgs_lo", "msgs_hi", "safety_violations", "eo_p3_violations")
	t.Figures = []reports.Figure{
		{Name: "eo-completion", Title: "Agents completed vs crash rate", X: "crash_rate", Y: "completion_rate", Low: "completion_lo", High: "completion_hi",
			Series: "variant", XLabel: "probability that each non-home node crashes for good", YLabel: "share of agents completed",
			Caption: "EO-P4: a permanent crash of the one node of a stage blocks the simple protocol's agents; observers let the extended protocol select a new worker. Bars: 95% Wilson intervals over the agents of all runs (agents of one run share crashes, so the intervals are optimistic)."},
		{Name: "eo-messages", Title: "Messages per agent vs crash rate", X: "crash_rate", Y: "msgs_per_agent", Low: "msgs_lo", High: "msgs_hi",
			Series: "variant", XLabel: "probability that each non-home node crashes for good", YLabel: "messages sent per agent",
			Caption: "The price of the extended protocol's fault tolerance: messages per agent (stage transactions, voting, selection) against the simple protocol's one transfer per stage. Bars: 95% confidence intervals over runs."},
	}
	for pi, pt := range points {
		r := results[pi]
		rate := 0.0
		if r.agents > 0 {
			rate = float64(r.completed) / float64(r.agents)
		}
		mean, p95 := meanP95(r.times)
		_, clo, chi := reports.Wilson(r.completed, r.agents)
		perAgent, plo, phi := reports.MeanCI(r.perAgent)
		variant := "simple"
		if pt.proto == "extended" {
			variant = fmt.Sprintf("extended, %d observers", pt.observers)
		}
		_ = rate
		t.Add(pt.proto, pt.observers, variant, pt.rate, r.runs, r.agents, r.completed, fmt.Sprintf("%.4f", rate), fmt.Sprintf("%.4f", clo), fmt.Sprintf("%.4f", chi),
			mean, p95, fmt.Sprintf("%.1f", perAgent), fmt.Sprintf("%.1f", plo), fmt.Sprintf("%.1f", phi), r.safety, r.liveness)
	}
	t.Notes = append(t.Notes,
		fmt.Sprintf("Each non-home node crashes for good with probability crash_rate at a uniform time while the agents are in flight (blocking-run's window); %d agents per run, %d stages, Execute %s, deadline %s.", agentsN, stagesN, work, deadline),
		"Reproduce a run: simrun run exactlyonce/blocking-run --seed SEED -p protocol=P -p observers=K -p crash-rate=R (seeds: base*1000003+i).")
	var bad []string
	for pi, pt := range points {
		if f := results[pi].failing; len(f) > 0 {
			bad = append(bad, fmt.Sprintf("%s/%d/%g: seeds %v", pt.proto, pt.observers, pt.rate, f[:min(3, len(f))]))
		}
	}
	if len(bad) > 0 {
		t.Notes = append(t.Notes, "runs with a failed property: "+strings.Join(bad, "; "))
	}
	tables := []*reports.Table{t}
	// Blocked agents by cause, one table (and figure) per variant.
	for vi, pt := range points {
		if pt.rate != points[0].rate && vi >= len(obs)+1 {
			break
		}
		if vi > len(obs) {
			break
		}
		variant, slug := "simple", "simple"
		if pt.proto == "extended" {
			variant, slug = fmt.Sprintf("extended, %d observers", pt.observers), fmt.Sprintf("ext%d", pt.observers)
		}
		bt := reports.NewTable("EO-P4 blocked agents by cause: "+variant, "crash_rate", "cause", "runs", "agents", "blocked", "share", "share_lo", "share_hi")
		for pi, q := range points {
			if q.proto != pt.proto || q.observers != pt.observers {
				continue
			}
			r := results[pi]
			for _, c := range []struct {
				name string
				n    int
			}{{"no majority", r.noMajority}, {"in doubt", r.inDoubt}, {"other", r.other}} {
				sh, lo, hi := reports.Wilson(c.n, r.agents)
				bt.Add(q.rate, c.name, r.runs, r.agents, c.n, fmt.Sprintf("%.4f", sh), fmt.Sprintf("%.4f", lo), fmt.Sprintf("%.4f", hi))
			}
		}
		bt.Figures = []reports.Figure{{Name: "eo-blocked-" + slug, Title: "Agents blocked, by cause: " + variant, X: "crash_rate", Y: "share", Low: "share_lo", High: "share_hi",
			Series: "cause", XLabel: "probability that each non-home node crashes for good", YLabel: "share of agents blocked",
			Caption: "Why agents did not complete (" + variant + "): no majority — at most half the nodes are up at the stage the agent is at or at the one it must move to (for the simple protocol: one node down); in doubt — a node holds a prepared Put whose coordinator is down (2PC blocking); other — neither (still running at the deadline). Bars: 95% Wilson intervals."}}
		tables = append(tables, bt)
	}
	// Failover after a worker crash: the extended protocol with observers.
	ft := reports.NewTable("EO-P4 failover after a worker crash", "variant", "failover_ms", "fraction", "stages")
	var fnotes []string
	for _, k := range obs {
		if k == 0 {
			continue
		}
		var all []float64
		lost := 0
		for pi, q := range points {
			if q.proto == "extended" && q.observers == k {
				all = append(all, results[pi].failover...)
				lost += results[pi].failoverLost
			}
		}
		slices.Sort(all)
		variant := fmt.Sprintf("extended, %d observers", k)
		for i, v := range all {
			ft.Add(variant, fmt.Sprintf("%.1f", v), fmt.Sprintf("%.4f", float64(i+1)/float64(len(all)+lost)), len(all)+lost)
		}
		fnotes = append(fnotes, fmt.Sprintf("%s: %d stages lost their worker mid-stage, %d of them never committed (the curve tops out below 1 by that share)", variant, len(all)+lost, lost))
	}
	if len(ft.Rows) > 0 {
		ft.Notes = append(fnotes, "Failover time: from the crash of the node that last began a stage's transaction, before the stage committed, to the stage's commit by another worker; pooled over every crash rate.")
		ft.Figures = []reports.Figure{{Name: "eo-failover-cdf", Title: "Failover time after a worker crash (CDF)", X: "failover_ms", Y: "fraction", Series: "variant",
			XLabel: "time from the worker's crash to the stage's commit (ms)", YLabel: "fraction of stages that lost their worker",
			Caption: "How long the observers take to select a new worker and commit the stage after the worker crashes mid-stage (EO-5/EO-6: the observers' timeout, the election and the new transaction). Stages that never committed keep the curve below 1."}}
		tables = append(tables, ft)
	}
	return tables, nil
}

func meanP95(ds []time.Duration) (float64, float64) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return ms(sum) / float64(len(s)), ms(s[(len(s)*95+99)/100-1])
}
