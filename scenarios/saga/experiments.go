package sagascen

import (
	"fmt"
	"strconv"
	"time"

	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/scenarios/experiment"
	"github.com/simrun-dev/simrun/sim"
)

// The saga experiments measure the paper's claims against the usual alternatives:
// messages and latency per transaction vs the number of sections (the agent layer vs
// an orchestrator), connectivity traffic vs the number of agents (the line vs
// all-to-all heartbeats), and detection and compensation times vs the grace period.

type sectionsPoint struct {
	proto string
	n     int
}

type txCost struct{ msgs, latency float64 }

type connPoint struct {
	exchange string
	n        int
}

type graceRun struct{ detect, compensated float64 }

func init() {
	experiment.Register(experiment.Def[sectionsPoint, txCost]{
		Name: "saga/sections",
		Help: "messages and latency per transaction vs sections (1…8): the agent layer against an orchestrator",
		Params: []scenarios.Param{
			{Name: "max", Default: "8", Help: "largest number of sections (a chain over as many agents)"},
			{Name: "txs", Default: "10", Help: "transactions per run"},
			{Name: "seeds", Default: "5", Help: "runs per point"},
			{Name: "fail", Default: "0", Help: "share of transactions whose last action fails (compensated)"},
		},
		Sweep: sectionsSweep,
	})
	experiment.Register(experiment.Def[connPoint, float64]{
		Name: "saga/connectivity",
		Help: "connectivity traffic vs agents: the paper's line against all-to-all heartbeats, with fits",
		Params: []scenarios.Param{
			{Name: "agents", Default: "2,4,6,8,12,16", Help: "numbers of agents"},
			{Name: "seeds", Default: "3", Help: "runs per point"},
			{Name: "beat", Default: "50ms", Help: "exchange period"},
		},
		Sweep: connectivitySweep,
	})
	experiment.Register(experiment.Def[time.Duration, graceRun]{
		Name: "saga/grace",
		Help: "time to detect a lost agent and to compensate without it vs the grace period (a 4-agent line, the third cut off for good)",
		Params: []scenarios.Param{
			{Name: "graces", Default: "200ms,400ms,800ms,1600ms", Help: "grace periods"},
			{Name: "seeds", Default: "10", Help: "runs per point"},
			{Name: "timeout", Default: "200ms", Help: "silence after which a neighbour is lost"},
		},
		Sweep: graceSweep,
	})
}

// runSystem runs nodes with injected starts until the given time and returns the result.
func runSystem(seed uint64, nodes []sim.NodeSpec, starts []sim.NodeID, msgs []saga.StartTx, spacing time.Duration, until time.Duration, plan faults.Plan) (*sim.Result, error) {
	k, err := sim.New(sim.Config{Seed: seed, Nodes: nodes, Network: network(), Until: sim.Time(until), MaxTime: sim.Time(until + time.Second)})
	if err != nil {
		return nil, err
	}
	if err := plan.Apply(k); err != nil {
		return nil, err
	}
	for i := range msgs {
		k.Inject(sim.Time(time.Millisecond+time.Duration(i)*spacing), starts[i], msgs[i])
	}
	return k.Run(), nil
}

// perTx returns the protocol messages per transaction (connectivity beats apart) and
// each transaction's latency (begin to the initiator's outcome) in ms.
func perTx(res *sim.Result, init string) (msgs float64, lat []float64, err error) {
	begin := map[saga.TrID]sim.Time{}
	n := 0
	for _, o := range res.History {
		switch v := o.Value.(type) {
		case saga.Begin:
			begin[v.Tr] = o.Time
		case saga.OutcomeEv:
			if v.Agent == init || (init == "" && v.Agent == v.Tr.Init) {
				lat = append(lat, float64(o.Time-begin[v.Tr])/1e6)
				n++
			}
		}
	}
	if n != len(begin) || n == 0 {
		return 0, nil, fmt.Errorf("%d of %d transactions ended", n, len(begin))
	}
	sent := res.Messages.Sent
	if c, ok := res.ByKind["CONN"]; ok {
		sent -= c.Sent
	}
	return float64(sent) / float64(n), lat, nil
}

func sectionsSweep(x *scenarios.Exp) (*experiment.Sweep[sectionsPoint, txCost], error) {
	p := x.Params
	maxN, txs, seeds := p.IntRange("max", 1, 26), p.IntRange("txs", 1, 1000), p.IntRange("seeds", 1, 1000)
	fail := p.Prob("fail")
	if p.Err() != nil {
		return nil, p.Err()
	}
	var points []sectionsPoint
	for _, proto := range []string{"agents", "orchestrator"} {
		for n := 1; n <= maxN; n++ {
			points = append(points, sectionsPoint{proto, n})
		}
	}
	return &experiment.Sweep[sectionsPoint, txCost]{
		Points: points, Runs: seeds,
		Seed: func(pt sectionsPoint, i int) uint64 { return x.Seed*1_000_003 + uint64(pt.n*1000+i+1) },
		Run: func(pt sectionsPoint, seed uint64) (txCost, error) {
			nodes, starts, msgs, init, err := sectionsSystem(pt.proto, pt.n, txs, fail, seed)
			if err != nil {
				return txCost{}, err
			}
			res, err := runSystem(seed, nodes, starts, msgs, 50*time.Millisecond, time.Duration(txs)*50*time.Millisecond+3*time.Second, faults.Plan{})
			if err != nil {
				return txCost{}, err
			}
			m, lat, err := perTx(res, init)
			if err != nil {
				return txCost{}, fmt.Errorf("%s, %d sections, seed %d: %w", pt.proto, pt.n, seed, err)
			}
			return txCost{m, experiment.Mean(lat).V}, nil
		},
		Tables: []experiment.Table[sectionsPoint, txCost]{{
			Title: "Saga cost per transaction vs sections",
			Columns: []string{"protocol", "sections", "runs",
				"messages per transaction", "messages lo", "messages hi", "latency (ms)", "latency lo", "latency hi"},
			Row: func(r *experiment.Result[sectionsPoint, txCost]) []any {
				return []any{r.Point.proto, r.Point.n, r.N(),
					r.Mean(func(c txCost) float64 { return c.msgs }).Fmt("%.2f"), r.Mean(func(c txCost) float64 { return c.latency }).Fmt("%.2f")}
			},
			Notes: []string{
				fmt.Sprintf("A chain of n sections over n agents (one sub-transaction), %d transactions a run, %.0f%% of them failing at the last section; means over %d seeds with 95%% confidence intervals. Connectivity beats are counted apart (saga/connectivity).", txs, 100*fail, seeds),
				"agents: the paper's layer — each section's agent asks the next (SECTION, ACK) and tells every participant what became of its section (NOTICE, ACK), and the initiator tells them the commit: about n² notices. orchestrator: one coordinator sends DO and gets DONE for each section (and UNDO for each compensation): 2n.",
			},
			Figures: []reports.Figure{
				{Name: "saga-messages", Title: "Messages per transaction vs sections", X: "sections", Y: "messages per transaction", Low: "messages lo", High: "messages hi",
					Series: "protocol", XLabel: "sections (agents in the chain)", YLabel: "messages per transaction", Fit: "line",
					Caption: "The agent layer's notices go to every participant, so its messages grow about quadratically with the sections; an orchestrator's grow linearly (a request and an answer per step). Dashed: least-squares lines for reference."},
				{Name: "saga-latency", Title: "Latency per transaction vs sections", X: "sections", Y: "latency (ms)", Low: "latency lo", High: "latency hi",
					Series: "protocol", XLabel: "sections (agents in the chain)", YLabel: "begin → outcome at the initiator (ms)", Fit: "line",
					Caption: "Both pass the work along the chain one step at a time; the agent layer's steps are one message (agent to agent), the orchestrator's two (to the step's agent and back), so the agent layer is faster per section."},
			},
		}},
	}, nil
}

// sectionsSystem builds a chain of n sections, with the agent layer or an
// orchestrator, and the starts of txs transactions (a share failing at the end).
func sectionsSystem(proto string, n, txs int, fail float64, seed uint64) ([]sim.NodeSpec, []sim.NodeID, []saga.StartTx, string, error) {
	s, err := build("chain.saga", chainConfig(n), 0, timing{retry: 40 * time.Millisecond}, nil)
	if err != nil {
		return nil, nil, nil, "", err
	}
	r := sim.Stream(seed, "saga-sections")
	var msgs []saga.StartTx
	for i := 0; i < txs; i++ {
		d := saga.Data{}
		if r.Float64() < fail {
			d.Fail = fmt.Sprintf("a%d:do%d", n, n)
		}
		msgs = append(msgs, saga.StartTx{Start: saga.SecKey{Agent: "a1", St: "main"}, Input: d})
	}
	starts := make([]sim.NodeID, txs)
	if proto == "agents" {
		return s.nodes, starts, msgs, "", nil
	}
	o := &saga.OrchOptions{Conf: s.conf, Names: append([]string{"orchestrator"}, s.opts.Names...), Services: s.opts.Services, Retry: 40 * time.Millisecond}
	if err := o.Prepare(); err != nil {
		return nil, nil, nil, "", err
	}
	nodes := []sim.NodeSpec{{Name: "orchestrator", New: saga.NewOrchestrator(o)}}
	for i := 1; i < len(o.Names); i++ {
		nodes = append(nodes, sim.NodeSpec{Name: o.Names[i], New: saga.NewExecutor(o, i)})
	}
	return nodes, starts, msgs, "orchestrator", nil
}

func connectivitySweep(x *scenarios.Exp) (*experiment.Sweep[connPoint, float64], error) {
	p := x.Params
	counts := p.IntList("agents", 2, 200)
	seeds := p.IntRange("seeds", 1, 1000)
	beat := p.PositiveDuration("beat")
	if p.Err() != nil {
		return nil, p.Err()
	}
	per := float64(time.Second) / float64(beat)
	var points []connPoint
	for _, ex := range []string{"line", "all"} {
		for _, n := range counts {
			points = append(points, connPoint{ex, n})
		}
	}
	// The fits read the table's means as printed (%.1f).
	mean := func(r *experiment.Result[connPoint, float64]) float64 {
		v, _ := strconv.ParseFloat(fmt.Sprintf("%.1f", experiment.Mean(r.Runs).V), 64)
		return v
	}
	notes := []string{fmt.Sprintf("Idle agents exchanging connectivity every %v for 5 s (no transactions, no faults); %s a point (the count is exact: the intervals collapse).", beat, seedsWord(seeds))}
	if len(counts) < 3 {
		// two points fit any line exactly and one fits none: R² would say nothing
		notes = append(notes, fmt.Sprintf("No fits: telling a line from n(n−1) takes at least 3 agent counts (got %d; e.g. -p agents=2,4,8).", len(counts)))
	}
	return &experiment.Sweep[connPoint, float64]{
		Points: points, Runs: seeds,
		Seed: func(_ connPoint, i int) uint64 { return x.Seed + uint64(i+1) },
		Run: func(pt connPoint, seed uint64) (float64, error) {
			sys, err := build("chain.saga", chainConfig(pt.n), 0, timing{retry: 40 * time.Millisecond, beat: beat, timeout: 4 * beat, grace: time.Second, allToAll: pt.exchange == "all"}, nil)
			if err != nil {
				return 0, err
			}
			res, err := runSystem(seed, sys.nodes, nil, nil, 0, 5*time.Second, faults.Plan{})
			if err != nil {
				return 0, err
			}
			return float64(res.ByKind["CONN"].Sent) / 5, nil
		},
		Tables: []experiment.Table[connPoint, float64]{{
			Title:   "Connectivity traffic vs agents",
			Columns: []string{"exchange", "agents", "runs", "messages per second", "messages lo", "messages hi"},
			Row: func(r *experiment.Result[connPoint, float64]) []any {
				return []any{r.Point.exchange, r.Point.n, r.N(), experiment.Mean(r.Runs).Fmt("%.1f")}
			},
			Notes: notes,
			Figures: []reports.Figure{{Name: "saga-connectivity", Title: "Connectivity messages per second vs agents", X: "agents", Y: "messages per second", Low: "messages lo", High: "messages hi",
				Series: "exchange", XLabel: "agents", YLabel: "connectivity messages per second",
				Curves: []reports.Curve{
					{Name: fmt.Sprintf("line: 2(n−1)·%.0f/s", per), F: func(n float64) float64 { return 2 * (n - 1) * per }},
					{Name: fmt.Sprintf("all-to-all: n(n−1)·%.0f/s", per), F: func(n float64) float64 { return n * (n - 1) * per }},
				},
				Caption: "SG-4: along the line each agent talks to its two neighbours, so the traffic grows linearly with the agents, 2(n−1) messages a round; all-to-all heartbeats grow quadratically, n(n−1). Dashed: the two formulas."}},
		}, {
			Make: func(rs []*experiment.Result[connPoint, float64]) ([]*reports.Table, error) {
				if len(counts) < 3 {
					return nil, nil
				}
				var xs, sq, ls, as []float64
				for _, r := range rs {
					if r.Point.exchange == "line" {
						xs, sq, ls = append(xs, float64(r.Point.n)), append(sq, float64(r.Point.n*(r.Point.n-1))), append(ls, mean(r))
					} else {
						as = append(as, mean(r))
					}
				}
				fits := reports.NewTable("Connectivity traffic fits", "exchange", "model", "intercept", "slope", "R²")
				for _, f := range []struct {
					exchange, model string
					xs, ys          []float64
				}{{"line", "a + b·n", xs, ls}, {"all-to-all", "a + b·n(n−1)", sq, as}, {"all-to-all", "a + b·n (a line fits it worse)", xs, as}} {
					a, b, r2 := reports.LinFit(f.xs, f.ys)
					fits.Add(f.exchange, f.model, fmt.Sprintf("%.2f", a), fmt.Sprintf("%.2f", b), fmt.Sprintf("%.4f", r2))
				}
				return []*reports.Table{fits}, nil
			},
		}},
	}, nil
}

func graceSweep(x *scenarios.Exp) (*experiment.Sweep[time.Duration, graceRun], error) {
	p := x.Params
	seeds := p.IntRange("seeds", 1, 1000)
	timeout := p.PositiveDuration("timeout")
	graces := p.DurationList("graces")
	if p.Err() != nil {
		return nil, p.Err()
	}
	for _, d := range graces {
		if d > time.Minute {
			return nil, &scenarios.InputError{Err: fmt.Errorf("parameter graces: %v is longer than 1m", d)}
		}
	}
	if timeout > 2*time.Second {
		// each run ends 3 s after the grace period: the loss must be detected before
		return nil, &scenarios.InputError{Err: fmt.Errorf("parameter timeout=%v: want at most 2s (a run ends 3 s after the grace period)", timeout)}
	}
	return &experiment.Sweep[time.Duration, graceRun]{
		Points: graces, Runs: seeds,
		Seed: func(_ time.Duration, i int) uint64 { return x.Seed + uint64(i+1) },
		Run: func(g time.Duration, seed uint64) (graceRun, error) {
			return graceOne(g, timeout, seed)
		},
		Tables: []experiment.Table[time.Duration, graceRun]{{
			Title:   "Detection and compensation vs grace period",
			Columns: []string{"grace (ms)", "runs", "detect (ms)", "detect lo", "detect hi", "compensated (ms)", "compensated lo", "compensated hi"},
			Row: func(r *experiment.Result[time.Duration, graceRun]) []any {
				return []any{r.Point.Milliseconds(), r.N(),
					r.Mean(func(g graceRun) float64 { return g.detect }).Fmt("%.1f"), r.Mean(func(g graceRun) float64 { return g.compensated }).Fmt("%.1f")}
			},
			Notes: []string{fmt.Sprintf("A line of 4 agents running chained transactions every 40 ms; a3 is cut off for good at 300 ms. detect: from the cut to the first agent that reports a3 lost (timeout %v, beats every 50 ms); compensated: from the cut to the last compensation the reachable agents run for a transaction a3 held up (the transaction itself ends only when a3 comes back). %s a point.", timeout, seedsWord(seeds))},
			Figures: []reports.Figure{
				{Name: "saga-grace", Title: "Detection and compensation vs grace period", X: "grace (ms)", Y: "compensated (ms)", Low: "compensated lo", High: "compensated hi",
					XLabel: "grace period (ms)", YLabel: "time after the cut (ms)", Fit: "line",
					Caption: "SG-4: the loss is detected after the neighbour's timeout whatever the grace period (table: detect); compensation waits for the grace period on top, so it grows one for one with it (slope ≈ 1)."},
			},
		}},
	}, nil
}

// graceOne runs the 4-agent line with a3 cut off for good at 300 ms and returns when
// the loss was first detected and when the last compensation ran (ms after the cut).
func graceOne(g, timeout time.Duration, seed uint64) (graceRun, error) {
	sys, err := build("chain.saga", chainConfig(4), 0, timing{retry: 40 * time.Millisecond, beat: 50 * time.Millisecond, timeout: timeout, grace: g}, nil)
	if err != nil {
		return graceRun{}, err
	}
	cut := 300 * time.Millisecond
	plan := faults.Plan{Events: []faults.Event{{At: faults.Duration(cut), Kind: "partition", Groups: [][]string{{"a3"}}}}}
	var msgs []saga.StartTx
	for i := 0; i < 20; i++ {
		msgs = append(msgs, saga.StartTx{Start: saga.SecKey{Agent: "a1", St: "main"}})
	}
	res, err := runSystem(seed, sys.nodes, make([]sim.NodeID, len(msgs)), msgs, 40*time.Millisecond, cut+g+3*time.Second, plan)
	if err != nil {
		return graceRun{}, err
	}
	first, last := sim.Time(-1), sim.Time(-1)
	held := map[saga.TrID]bool{}
	for _, o := range res.History {
		switch v := o.Value.(type) {
		case saga.ConnEv:
			if o.Kind == saga.ObsLost && v.Peer == "a3" && first < 0 {
				first = o.Time
			}
		case saga.AbortEv:
			held[v.Tr] = true
		case saga.SectionEv:
			if o.Kind == saga.ObsSection && v.State == saga.ProcessedCompensation && held[v.Tr] && v.Sec.Agent != "a3" {
				last = max(last, o.Time)
			}
		}
	}
	if first < 0 || last < 0 {
		return graceRun{}, fmt.Errorf("grace %v seed %d: no detection or no compensation", g, seed)
	}
	return graceRun{float64(first-sim.Time(cut)) / 1e6, float64(last-sim.Time(cut)) / 1e6}, nil
}

// seedsWord says "1 seed" or "n seeds".
func seedsWord(n int) string {
	if n == 1 {
		return "1 seed"
	}
	return fmt.Sprintf("%d seeds", n)
}
