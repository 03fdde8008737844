package eoscen

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/scenarios/experiment"
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
	experiment.Register(experiment.Def[point, runSummary]{
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
		Sweep: blockingSweep,
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

type blockingResult = experiment.Result[point, runSummary]

// variant names a point's protocol configuration.
func (pt point) variant() string {
	if pt.proto == "extended" {
		return fmt.Sprintf("extended, %d observers", pt.observers)
	}
	return "simple"
}

func blockingSweep(x *scenarios.Exp) (*experiment.Sweep[point, runSummary], error) {
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
	return &experiment.Sweep[point, runSummary]{
		Points: points, Runs: runs, Workers: workers,
		Seed: func(_ point, i int) uint64 { return x.Seed*1_000_003 + uint64(i+1) },
		Run: func(pt point, seed uint64) (runSummary, error) {
			rep, err := scenarios.Run(sc, scenarios.Options{Seed: seed, Params: map[string]string{
				"protocol": pt.proto, "observers": strconv.Itoa(pt.observers), "crash-rate": strconv.FormatFloat(pt.rate, 'g', -1, 64),
				"agents": strconv.Itoa(agentsN), "stages": strconv.Itoa(stagesN), "work": work, "deadline": deadline,
			}})
			if err != nil {
				return runSummary{}, err
			}
			// Only the run's summary is kept: a report holds the whole history, and
			// thousands of them outgrew memory.
			return summarizeRun(rep, stageNodes(stagesN, pt.observers, pt.proto == "simple")), nil
		},
		Tables: []experiment.Table[point, runSummary]{{
			Title: "EO-P4 blocking: completion vs crash rate",
			Columns: []string{"protocol", "observers", "variant", "crash_rate", "runs", "agents", "completed", "completion_rate", "completion_lo", "completion_hi",
				"mean_completion_ms", "p95_completion_ms", "msgs_per_agent", "msgs_lo", "msgs_hi", "safety_violations", "eo_p3_violations"},
			Row: func(r *blockingResult) []any {
				var times []time.Duration
				var perAgent []float64
				for _, s := range r.Runs {
					times = append(times, s.times...)
					if s.launched > 0 {
						perAgent = append(perAgent, float64(s.messages)/float64(s.launched))
					}
				}
				mean, p95 := meanP95(times)
				pt := r.Point
				return []any{pt.proto, pt.observers, pt.variant(), pt.rate, r.N(), r.Count(agentsOf), r.Count(completedOf), completion(r).Fmt("%.4f"),
					mean, p95, experiment.Mean(perAgent).Fmt("%.1f"), r.Count(func(s runSummary) int { return s.safety }), r.Count(func(s runSummary) int { return s.liveness })}
			},
			Notes: []string{
				fmt.Sprintf("Each non-home node crashes for good with probability crash_rate at a uniform time while the agents are in flight (blocking-run's window); %d agents per run, %d stages, Execute %s, deadline %s. The same seed gives every variant the same crashes.", agentsN, stagesN, work, deadline),
				"Completion: agents completed of agents launched, pooled over the runs, with a 95% cluster-bootstrap interval over runs (the agents of one run share its crashes: the run is the unit). Messages per agent: mean over runs, 95% Student's t interval.",
				"Reproduce a run: simrun run exactlyonce/blocking-run --seed SEED -p protocol=P -p observers=K -p crash-rate=R (seeds: base*1000003+i).",
			},
			NotesFrom: func(rs []*blockingResult) []string {
				var bad []string
				for _, r := range rs {
					var f []uint64
					for i, s := range r.Runs {
						for range s.safety + s.liveness {
							f = append(f, r.Seeds[i])
						}
					}
					if len(f) > 0 {
						bad = append(bad, fmt.Sprintf("%s/%d/%g: seeds %v", r.Point.proto, r.Point.observers, r.Point.rate, f[:min(3, len(f))]))
					}
				}
				if len(bad) > 0 {
					return []string{"runs with a failed property: " + strings.Join(bad, "; ")}
				}
				return nil
			},
			FiguresFrom: blockingFigures,
		}, {Make: blockedTable}, {Make: failoverTable(obs)}},
		Claims: blockingClaims,
	}, nil
}

var (
	agentsOf    = func(s runSummary) int { return s.agents }
	completedOf = func(s runSummary) int { return len(s.times) }
)

// completion is a point's share of agents completed, with its cluster-bootstrap
// interval over runs.
func completion(r *blockingResult) experiment.Est { return r.Share(completedOf, agentsOf) }

// byVariant groups the results by variant, in point order, and lists the crash rates.
func byVariant(rs []*blockingResult) (variants []string, rates []float64, at map[string]map[float64]*blockingResult) {
	at = map[string]map[float64]*blockingResult{}
	for _, r := range rs {
		v := r.Point.variant()
		if at[v] == nil {
			at[v] = map[float64]*blockingResult{}
			variants = append(variants, v)
		}
		at[v][r.Point.rate] = r
		if !slices.Contains(rates, r.Point.rate) {
			rates = append(rates, r.Point.rate)
		}
	}
	return variants, rates, at
}

// versusSimple says, for each variant with observers, at which crash rates it
// completes more agents than the simple protocol and at which fewer, beyond the noise
// (95% intervals apart); the rest are within it.
func versusSimple(rs []*blockingResult) (sentences []string, reversed bool) {
	variants, rates, at := byVariant(rs)
	for _, v := range variants {
		if v == "simple" || at["simple"] == nil || at[v][rates[0]].Point.observers == 0 {
			continue
		}
		var better, worse, same []string
		for _, rate := range rates {
			if rate == 0 {
				continue
			}
			e, s := completion(at[v][rate]), completion(at["simple"][rate])
			switch {
			case e.Above(s):
				better = append(better, fmt.Sprintf("%g", rate))
			case e.Below(s):
				worse = append(worse, fmt.Sprintf("%g (%s vs %s)", rate, reports.Pct(e.V), reports.Pct(s.V)))
			default:
				same = append(same, fmt.Sprintf("%g", rate))
			}
		}
		name := strings.ToUpper(v[:1]) + v[1:]
		sent := fmt.Sprintf("%s completes more agents than the simple protocol at crash rate %s", name, strings.Join(better, ", "))
		if len(better) == 0 {
			sent = fmt.Sprintf("%s completes more agents than the simple protocol at no crash rate", name)
		}
		if len(worse) > 0 {
			reversed = true
			sent += "; fewer at " + strings.Join(worse, ", ")
		}
		if len(same) > 0 {
			sent += "; within the 95% intervals of it at " + strings.Join(same, ", ")
		}
		sentences = append(sentences, sent+".")
	}
	return sentences, reversed
}

// blockingFigures: completion and messages per agent vs crash rate, the captions
// drawn from the numbers.
func blockingFigures(rs []*blockingResult) []reports.Figure {
	vs, reversed := versusSimple(rs)
	caption := "EO-P4: a permanent crash of the one node of a stage blocks the simple protocol's agents; observers let the extended protocol select a new worker — but only while a majority of each stage is up. " + strings.Join(vs, " ")
	if reversed {
		caption += " Where a variant completes fewer, its stages of 1 + k nodes lacked a majority more often than the simple protocol's single node was down: observers help only while crashes are rare enough."
	}
	caption += " With 0 observers the extended protocol is the simple one (same crashes, same numbers: one series). Bars: 95% cluster-bootstrap intervals over runs."
	return []reports.Figure{
		{Name: "eo-completion", Title: "Agents completed vs crash rate", X: "crash_rate", Y: "completion_rate", Low: "completion_lo", High: "completion_hi",
			Series: "variant", Legend: "protocol", XLabel: "probability that each non-home node crashes for good", YLabel: "share of agents completed", Caption: caption},
		{Name: "eo-messages", Title: "Messages per agent vs crash rate", X: "crash_rate", Y: "msgs_per_agent", Low: "msgs_lo", High: "msgs_hi",
			Series: "variant", Legend: "protocol", XLabel: "probability that each non-home node crashes for good", YLabel: "messages sent per agent", ZeroY: true,
			Caption: "The price of the extended protocol's fault tolerance: messages per agent (stage transactions, voting, selection) against the simple protocol's one transfer per stage. Bars: 95% confidence intervals over runs."},
	}
}

// causes are the reasons an agent did not complete (blockCause), with their counts.
var causes = []struct {
	name string
	n    func(s runSummary) int
}{
	{"no majority", func(s runSummary) int { return s.noMajority }},
	{"in doubt", func(s runSummary) int { return s.inDoubt }},
	{"other", func(s runSummary) int { return s.other }},
}

// blockedTable: blocked agents by cause and variant, one panel per variant on a shared
// scale.
func blockedTable(rs []*blockingResult) ([]*reports.Table, error) {
	bt := reports.NewTable("EO-P4 blocked agents by cause", "variant", "crash_rate", "cause", "runs", "agents", "blocked", "share", "share_lo", "share_hi")
	for _, r := range rs {
		for _, c := range causes {
			bt.Add(r.Point.variant(), r.Point.rate, c.name, r.N(), r.Count(agentsOf), r.Count(c.n), r.Share(c.n, agentsOf).Fmt("%.4f"))
		}
	}
	bt.Figures = []reports.Figure{{Name: "eo-blocked", Title: "Agents blocked, by cause", X: "crash_rate", Y: "share", Low: "share_lo", High: "share_hi",
		Series: "cause", Legend: "why the agent did not complete", Facet: "variant", XLabel: "crash rate", YLabel: "share of agents blocked",
		Caption: "Why agents did not complete, one panel per variant on one scale: no majority — at most half the nodes are up at the stage the agent is at or at the one it must move to (for the simple protocol: its one node down); in doubt — a node holds a prepared Put whose coordinator is down (2PC blocking); other — neither (still running at the deadline). Bars: 95% cluster-bootstrap intervals over runs."}}
	return []*reports.Table{bt}, nil
}

// failoverTable: failover after a worker crash, the extended protocol with observers.
func failoverTable(obs []int) func(rs []*blockingResult) ([]*reports.Table, error) {
	return func(rs []*blockingResult) ([]*reports.Table, error) {
		ft := reports.NewTable("EO-P4 failover after a worker crash", "variant", "failover_ms", "fraction", "stages")
		var fnotes []string
		for _, k := range obs {
			if k == 0 {
				continue
			}
			var all []float64
			lost := 0
			for _, r := range rs {
				if r.Point.proto == "extended" && r.Point.observers == k {
					for _, s := range r.Runs {
						all = append(all, s.failover...)
						lost += s.failoverLost
					}
				}
			}
			slices.Sort(all)
			variant := fmt.Sprintf("extended, %d observers", k)
			for i, v := range all {
				ft.Add(variant, fmt.Sprintf("%.1f", v), fmt.Sprintf("%.4f", float64(i+1)/float64(len(all)+lost)), len(all)+lost)
			}
			fnotes = append(fnotes, fmt.Sprintf("%s: %d stages lost their worker mid-stage, %d of them never committed (the curve tops out below 1 by that share)", variant, len(all)+lost, lost))
		}
		if len(ft.Rows) == 0 {
			return nil, nil
		}
		ft.Notes = append(fnotes, "Failover time: from the crash of the node that last began a stage's transaction, before the stage committed, to the stage's commit by another worker; pooled over every crash rate.")
		ft.Figures = []reports.Figure{{Name: "eo-failover-cdf", Title: "Failover time after a worker crash (CDF)", X: "failover_ms", Y: "fraction", Series: "variant", Legend: "protocol", Lines: true, Steps: true,
			XLabel: "time from the worker's crash to the stage's commit (ms)", YLabel: "fraction of stages that lost their worker",
			Caption: "How long the observers take to select a new worker and commit the stage after the worker crashes mid-stage (EO-5/EO-6: the observers' timeout, the election and the new transaction). Stages that never committed keep the curve below 1."}}
		return []*reports.Table{ft}, nil
	}
}

// blockingClaims judges EO-P4 and the paper's claim that observers reduce blocking.
func blockingClaims(rs []*blockingResult) []reports.Claim {
	majorityUp, withObs, simpleOther, simpleBlocked := 0, 0, 0, 0
	for _, r := range rs {
		if r.Point.proto == "extended" && r.Point.observers > 0 {
			majorityUp += r.Count(func(s runSummary) int { return s.inDoubt + s.other })
			withObs += r.Count(agentsOf)
		}
		if r.Point.proto == "simple" {
			simpleOther += r.Count(func(s runSummary) int { return s.inDoubt + s.other })
			simpleBlocked += r.Count(func(s runSummary) int { return s.noMajority + s.inDoubt + s.other })
		}
	}
	vs, reversed := versusSimple(rs)
	var price []string
	_, rates, at := byVariant(rs)
	variants, _, _ := byVariant(rs)
	for _, v := range variants {
		if r := at[v][rates[0]]; r != nil && r.Point.rate == 0 {
			m := 0.0
			for _, s := range r.Runs {
				m += float64(s.messages) / float64(max(1, s.launched))
			}
			price = append(price, fmt.Sprintf("%s %.1f", v, m/float64(r.N())))
		}
	}
	return []reports.Claim{
		{Source: "Rothermel & Straßer 1997 §3–5 (EO-P4)", Paper: "With observers, a permanent worker crash does not block an agent while a majority of its stage is up.",
			Measured: fmt.Sprintf("%d of %d agents of the extended protocol with observers blocked while a majority was up (in doubt: a prepared Put whose coordinator crashed — 2PC blocking — or still running)", majorityUp, withObs),
			Verdict:  reports.Judge(majorityUp == 0)},
		{Source: "Rothermel & Straßer 1997 §1, §3", Paper: "The extended protocol reduces the probability that agents are blocked.",
			Measured: strings.Join(vs, " "), Verdict: reports.Judge(!reversed)},
		{Source: "Rothermel & Straßer 1997 §2", Paper: "The simple protocol blocks an agent while the node it waits on is down.",
			Measured: fmt.Sprintf("%d agents blocked, %d of them for a reason other than their stage's node being down", simpleBlocked, simpleOther),
			Verdict:  reports.Judge(simpleBlocked > 0 && simpleOther == 0)},
		{Source: "Rothermel & Straßer 1997 §3–5", Paper: "Observers cost extra messages (voting, selection, I_AM_ALIVE); no number given.",
			Measured: "messages per agent without crashes: " + strings.Join(price, ", "), Verdict: reports.NoNumber},
	}
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
