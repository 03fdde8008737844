package sagascen

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/scenarios/experiment"
	"github.com/simrun-dev/simrun/sim"
)

// The saga experiments measure the paper's claims against the usual alternatives:
// messages, latency and per-node load per transaction vs the number of sections (the
// agent layer, with the paper's end-of-sub-transaction notices and with a notice per
// section, vs an orchestrator), what a crash of one node stops (the paper: no single
// point of failure), connectivity traffic — messages, bytes and the time a loss
// takes to spread — vs the number of agents (the line vs all-to-all heartbeats), and
// detection and compensation times vs the grace period.

// The protocols of saga/sections.
const (
	agentsPaper   = "agents"
	agentsEvery   = "agents, notice per section"
	orchestration = "orchestrator"
)

// sectionsPoint is a point of saga/sections: a cost point (a protocol and n sections)
// or a crash point (a protocol and the node that crashes, crashed).
type sectionsPoint struct {
	proto   string
	n       int
	crashed string
}

// sectionsRun is what one run measured: messages per transaction, mean latency (ms),
// the busiest node's share of the messages; for a crash run, the transactions
// submitted during the outage and those of them completed during it and by the end.
type sectionsRun struct {
	msgs, latency, busiest        float64
	submitted, duringOutage, done int
}

type sectionsResult = experiment.Result[sectionsPoint, sectionsRun]

type connPoint struct {
	exchange string
	n        int
}

// connRun is one connectivity run: messages and bytes per second while idle, and the
// time (ms) from cutting the line's last agent off to every other agent reporting it
// lost.
type connRun struct{ rate, bytes, spread float64 }

type connResult = experiment.Result[connPoint, connRun]

type graceRun struct{ detect, compensated float64 }

func init() {
	experiment.Register(experiment.Def[sectionsPoint, sectionsRun]{
		Name: "saga/sections",
		Help: "messages, latency and per-node load per transaction vs sections (1…8): the agent layer (§3.3's notices at a sub-transaction's end, and a notice per section) against an orchestrator; what one node's crash stops",
		Params: []scenarios.Param{
			{Name: "max", Default: "8", Help: "largest number of sections (a chain over as many agents)"},
			{Name: "txs", Default: "10", Help: "transactions per run"},
			{Name: "seeds", Default: "30", Help: "runs per point"},
			{Name: "fail", Default: "0", Help: "share of transactions whose last action fails (compensated)"},
		},
		Sweep: sectionsSweep,
	})
	experiment.Register(experiment.Def[connPoint, connRun]{
		Name: "saga/connectivity",
		Help: "connectivity traffic vs agents: the paper's line against all-to-all heartbeats — messages, bytes, and the time a loss takes to reach every agent",
		Params: []scenarios.Param{
			{Name: "agents", Default: "2,4,6,8,12,16", Help: "numbers of agents"},
			{Name: "seeds", Default: "30", Help: "runs per point"},
			{Name: "beat", Default: "50ms", Help: "exchange period"},
		},
		Sweep: connectivitySweep,
	})
	experiment.Register(experiment.Def[time.Duration, graceRun]{
		Name: "saga/grace",
		Help: "time to detect a lost agent and to compensate without it vs the grace period (a 4-agent line, the third cut off for good)",
		Params: []scenarios.Param{
			{Name: "graces", Default: "200ms,400ms,800ms,1600ms", Help: "grace periods"},
			{Name: "seeds", Default: "30", Help: "runs per point"},
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

// messageModel is a protocol's exact message count per transaction over a chain of n
// sections without failures: the requests along the chain and their
// acknowledgements, 2(n−1), then — with §3.3's notices — the last agent's notice to
// the n−1 others and the initiator's commit to them, each acknowledged, 4(n−1);
// with a notice per section every agent tells the n−1 others, 2n(n−1), and the
// commit adds 2(n−1): 2n²+2n−4; an orchestrator sends DO and gets DONE per section,
// 2n.
func messageModel(proto string) (string, func(n float64) float64) {
	switch proto {
	case agentsEvery:
		return "2n² + 2n − 4", func(n float64) float64 { return 2*n*n + 2*n - 4 }
	case orchestration:
		return "2n", func(n float64) float64 { return 2 * n }
	}
	return "6(n − 1)", func(n float64) float64 { return 6 * (n - 1) }
}

// The crash runs: two chains of crashChain sections over their own agents (a… and
// b…), a transaction submitted every crashSpacing alternating between them; one node
// is down from crashAt to crashBack.
const (
	crashChain   = 3
	crashTxs     = 40
	crashSpacing = 50 * time.Millisecond
	crashAt      = 500 * time.Millisecond
	crashBack    = 1500 * time.Millisecond
	crashEnd     = 4 * time.Second
)

// crashPoints are the crash cases: an agent of chain a down under the agent layer,
// the same agent's executor down under an orchestrator, the orchestrator down.
var crashPoints = []sectionsPoint{{proto: agentsPaper, crashed: "a2"}, {proto: orchestration, crashed: "a2"}, {proto: orchestration, crashed: "orchestrator"}}

func sectionsSweep(x *scenarios.Exp) (*experiment.Sweep[sectionsPoint, sectionsRun], error) {
	p := x.Params
	maxN, txs, seeds := p.IntRange("max", 1, 26), p.IntRange("txs", 1, 1000), p.IntRange("seeds", 1, 1000)
	fail := p.Prob("fail")
	if p.Err() != nil {
		return nil, p.Err()
	}
	var points []sectionsPoint
	for _, proto := range []string{agentsPaper, agentsEvery, orchestration} {
		for n := 1; n <= maxN; n++ {
			points = append(points, sectionsPoint{proto: proto, n: n})
		}
	}
	points = append(points, crashPoints...)
	var curves []reports.Curve
	if fail == 0 {
		for _, proto := range []string{agentsPaper, agentsEvery, orchestration} {
			name, f := messageModel(proto)
			curves = append(curves, reports.Curve{Name: proto + ": " + name + " (exact)", Series: proto, F: f})
		}
	}
	cost := func(pt sectionsPoint) bool { return pt.crashed == "" }
	return &experiment.Sweep[sectionsPoint, sectionsRun]{
		Points: points, Runs: seeds,
		Seed: func(pt sectionsPoint, i int) uint64 { return x.Seed*1_000_003 + uint64(pt.n*1000+i+1) },
		Run: func(pt sectionsPoint, seed uint64) (sectionsRun, error) {
			if pt.crashed != "" {
				return crashRun(pt, seed)
			}
			nodes, starts, msgs, init, err := sectionsSystem(pt.proto, chainConfig(pt.n), []saga.SecKey{{Agent: "a1", St: "main"}}, txs, fail, pt.n, seed)
			if err != nil {
				return sectionsRun{}, err
			}
			res, err := runSystem(seed, nodes, starts, msgs, 50*time.Millisecond, time.Duration(txs)*50*time.Millisecond+3*time.Second, faults.Plan{})
			if err != nil {
				return sectionsRun{}, err
			}
			m, lat, err := perTx(res, init)
			if err != nil {
				return sectionsRun{}, fmt.Errorf("%s, %d sections, seed %d: %w", pt.proto, pt.n, seed, err)
			}
			return sectionsRun{msgs: m, latency: experiment.Mean(lat).V, busiest: busiest(res)}, nil
		},
		Tables: []experiment.Table[sectionsPoint, sectionsRun]{{
			Title: "Saga cost per transaction vs sections",
			Columns: []string{"protocol", "sections", "runs", "messages per transaction", "messages lo", "messages hi", "latency (ms)", "latency lo", "latency hi",
				"busiest node's share", "share lo", "share hi"},
			Where: cost,
			Row: func(r *sectionsResult) []any {
				return []any{r.Point.proto, r.Point.n, r.N(), r.Mean(func(c sectionsRun) float64 { return c.msgs }).Fmt("%.2f"),
					r.Mean(func(c sectionsRun) float64 { return c.latency }).Fmt("%.2f"), r.Mean(func(c sectionsRun) float64 { return c.busiest }).Fmt("%.3f")}
			},
			Notes: []string{
				fmt.Sprintf("A chain of n sections over n agents (one sub-transaction), %d transactions a run, %.0f%% of them failing at the last section; means over %d seeds with 95%% confidence intervals. Connectivity beats are counted apart (saga/connectivity).", txs, 100*fail, seeds),
				"agents: the paper's layer as §3.3 writes it — each section's agent asks the next (SECTION, ACK); the agent ending the sub-transaction tells the others (step 6: NOTICE, ACK); the initiator tells them the commit (simrun's rule: only it decides, so a commit and a grace-period abort never cross). agents, notice per section: every section's agent tells every participant what became of its section (simrun's default, which its checks read). orchestrator: one coordinator sends DO and gets DONE for each section (and UNDO for each compensation).",
				"busiest node's share: the messages sent or received by the node that handles the most, over all messages — the paper's 'no concentration of traffic' (§2.1, §4).",
			},
			FiguresFrom: func(rs []*sectionsResult) []reports.Figure {
				return []reports.Figure{
					{Name: "saga-messages", Title: "Messages per transaction vs sections", X: "sections", Y: "messages per transaction", Low: "messages lo", High: "messages hi",
						Series: "protocol", Legend: "protocol", XLabel: "sections (agents in the chain)", YLabel: "messages per transaction", ZeroY: true, Curves: curves,
						Caption: sectionsCaption(rs, fail)},
					{Name: "saga-latency", Title: "Latency per transaction vs sections", X: "sections", Y: "latency (ms)", Low: "latency lo", High: "latency hi",
						Series: "protocol", Legend: "protocol", XLabel: "sections (agents in the chain)", YLabel: "begin → outcome at the initiator (ms)", Fit: "line", ZeroY: true,
						Caption: "Every protocol passes the work along the chain one step at a time, so latency grows linearly with the sections (dashed: least-squares lines, the family of a fixed cost per step): " + slopes(rs) + "."},
					{Name: "saga-load", Title: "Busiest node's share of the messages vs sections", X: "sections", Y: "busiest node's share", Low: "share lo", High: "share hi",
						Series: "protocol", Legend: "protocol", XLabel: "sections (agents in the chain)", YLabel: "busiest node's share of messages", ZeroY: true,
						Caption: "§2.1, §4: no concentration of traffic. " + loadCaption(rs) + "."},
				}
			},
		}, {
			Title:   "A crash of one node: what stops",
			Columns: []string{"case", "protocol", "crashed", "runs", "submitted during the outage", "completed during it", "lo", "hi", "completed by the end", "end lo", "end hi"},
			Where:   func(pt sectionsPoint) bool { return !cost(pt) },
			Row: func(r *sectionsResult) []any {
				sub := func(c sectionsRun) int { return c.submitted }
				return []any{1 + slices.Index(crashPoints, r.Point), r.Point.proto, r.Point.crashed, r.N(), r.Count(sub),
					r.Share(func(c sectionsRun) int { return c.duringOutage }, sub).Fmt("%.3f"), r.Share(func(c sectionsRun) int { return c.done }, sub).Fmt("%.3f")}
			},
			Notes: []string{fmt.Sprintf("Two chains of %d sections over their own agents (a1…a%d, b1…b%d), a transaction submitted every %v alternating between them (%d in all); the crashed node is down from %v to %v, the run ends at %v. Shares of the transactions submitted during the outage, with 95%% cluster-bootstrap intervals over runs. The agents restart from their log (SG-4's crash extension), the orchestrator from its own.", crashChain, crashChain, crashChain, crashSpacing, crashTxs, crashAt, crashBack, crashEnd)},
			FiguresFrom: func(rs []*sectionsResult) []reports.Figure {
				return []reports.Figure{{Name: "saga-crash", Title: "Transactions completed while one node is down", Bars: true,
					X: "case", Ys: []reports.YSeries{{Name: "during the outage", Y: "completed during it", Low: "lo", High: "hi"}, {Name: "by the end of the run", Y: "completed by the end", Low: "end lo", High: "end hi"}},
					Legend: "transactions submitted during the outage completed", Categories: crashCases(rs), XLabel: "protocol, node crashed", YLabel: "share of those submitted during the outage",
					Caption: "§2.1, §4: no single point of failure. " + crashCaption(rs) + " Bars: 95% cluster-bootstrap intervals over runs."}}
			},
		}},
		Claims: func(rs []*sectionsResult) []reports.Claim { return sectionsClaims(rs, fail) },
	}, nil
}

// sectionsSystem builds the system of config src, with the agent layer (EndNotices
// for agentsPaper) or an orchestrator, and the starts of txs transactions cycling
// over starts (a share failing at the end of a chain of n sections).
func sectionsSystem(proto, src string, starts []saga.SecKey, txs int, fail float64, n int, seed uint64) ([]sim.NodeSpec, []sim.NodeID, []saga.StartTx, string, error) {
	s, err := build("chain.saga", src, 0, timing{retry: 40 * time.Millisecond}, nil)
	if err != nil {
		return nil, nil, nil, "", err
	}
	s.opts.EndNotices = proto == agentsPaper
	r := sim.Stream(seed, "saga-sections")
	var msgs []saga.StartTx
	at := make([]sim.NodeID, txs)
	for i := 0; i < txs; i++ {
		d := saga.Data{}
		if r.Float64() < fail {
			d.Fail = fmt.Sprintf("a%d:do%d", n, n)
		}
		st := starts[i%len(starts)]
		msgs = append(msgs, saga.StartTx{Start: st, Input: d})
		at[i] = sim.NodeID(slices.Index(s.opts.Names, st.Agent))
	}
	if proto != orchestration {
		return s.nodes, at, msgs, "", nil
	}
	o := &saga.OrchOptions{Conf: s.conf, Names: append([]string{"orchestrator"}, s.opts.Names...), Services: s.opts.Services, Retry: 40 * time.Millisecond}
	if err := o.Prepare(); err != nil {
		return nil, nil, nil, "", err
	}
	nodes := []sim.NodeSpec{{Name: "orchestrator", New: saga.NewOrchestrator(o)}}
	for i := 1; i < len(o.Names); i++ {
		nodes = append(nodes, sim.NodeSpec{Name: o.Names[i], New: saga.NewExecutor(o, i)})
	}
	return nodes, make([]sim.NodeID, txs), msgs, "orchestrator", nil
}

// busiest is the share of a run's messages sent or received by its busiest node.
func busiest(res *sim.Result) float64 {
	if res.Messages.Sent == 0 {
		return math.NaN() // a one-section saga runs at one agent: nothing to share out
	}
	most := int64(0)
	for _, c := range res.ByNode {
		most = max(most, c.Sent+c.Delivered)
	}
	return float64(most) / float64(res.Messages.Sent)
}

// twoChains is a configuration of two chains of n sections, a1…an and b1…bn.
func twoChains(n int) string {
	var b strings.Builder
	for _, c := range []string{"a", "b"} {
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "// agent %s%d\nincoming_action(main, do%d).\ncompensation_action(main, undo%d).\n", c, i, i, i)
			if i < n {
				fmt.Fprintf(&b, "next(main, %s%d).\n", c, i+1)
			}
		}
	}
	return b.String()
}

// crashRun runs the two chains with one node down for a while and counts the
// transactions submitted during the outage and completed during it and by the end.
func crashRun(pt sectionsPoint, seed uint64) (sectionsRun, error) {
	nodes, at, msgs, init, err := sectionsSystem(pt.proto, twoChains(crashChain), []saga.SecKey{{Agent: "a1", St: "main"}, {Agent: "b1", St: "main"}}, crashTxs, 0, crashChain, seed)
	if err != nil {
		return sectionsRun{}, err
	}
	plan := faults.Plan{Events: []faults.Event{{At: faults.Duration(crashAt), Kind: "crash", Node: pt.crashed}, {At: faults.Duration(crashBack), Kind: "restart", Node: pt.crashed}}}
	res, err := runSystem(seed, nodes, at, msgs, crashSpacing, crashEnd, plan)
	if err != nil {
		return sectionsRun{}, err
	}
	out := sectionsRun{}
	for i := range msgs {
		if t := time.Millisecond + time.Duration(i)*crashSpacing; t >= crashAt && t < crashBack {
			out.submitted++
		}
	}
	begin := map[saga.TrID]sim.Time{}
	for _, o := range res.History {
		switch v := o.Value.(type) {
		case saga.Begin:
			begin[v.Tr] = o.Time
		case saga.OutcomeEv:
			b, ok := begin[v.Tr]
			if !ok || (v.Agent != init && (init != "" || v.Agent != v.Tr.Init)) || b < sim.Time(crashAt) || b >= sim.Time(crashBack) {
				continue
			}
			out.done++
			if o.Time < sim.Time(crashBack) {
				out.duringOutage++
			}
		}
	}
	return out, nil
}

// crashCases names the crash points in order ("agents, a2").
func crashCases(rs []*sectionsResult) []string {
	var out []string
	for _, r := range rs {
		if r.Point.crashed != "" {
			out = append(out, r.Point.proto+", "+r.Point.crashed+" down")
		}
	}
	return out
}

// sectionsCaption says whether the measured messages equal the exact counts.
func sectionsCaption(rs []*sectionsResult, fail float64) string {
	if fail > 0 {
		return "With failing transactions the counts add the compensations' notices (no exact model is drawn)."
	}
	var off []string
	for _, r := range rs {
		if r.Point.crashed != "" {
			continue
		}
		name, f := messageModel(r.Point.proto)
		if m := r.Mean(func(c sectionsRun) float64 { return c.msgs }).V; math.Abs(m-f(float64(r.Point.n))) > 1e-9 {
			off = append(off, fmt.Sprintf("%s at %d sections: %.2f, model %s", r.Point.proto, r.Point.n, m, name))
		}
	}
	s := "§3.3 step 6 has the agent ending a sub-transaction tell the others: with it the agent layer's messages grow linearly, 6(n − 1), against an orchestrator's 2n; noticing every section to every participant (simrun's default) costs 2n² + 2n − 4. "
	if len(off) == 0 {
		return s + "Every measured mean equals its exact count (dashed)."
	}
	return s + "Measured means off their exact counts: " + strings.Join(off, "; ") + "."
}

// slopes gives each protocol's latency per section (a least-squares slope).
func slopes(rs []*sectionsResult) string {
	var parts []string
	for _, proto := range []string{agentsPaper, agentsEvery, orchestration} {
		var xs, ys []float64
		for _, r := range rs {
			if r.Point.proto == proto && r.Point.crashed == "" {
				xs, ys = append(xs, float64(r.Point.n)), append(ys, r.Mean(func(c sectionsRun) float64 { return c.latency }).V)
			}
		}
		if len(xs) > 1 {
			_, b, _ := reports.LinFit(xs, ys)
			parts = append(parts, fmt.Sprintf("%s %.1f ms per section", proto, b))
		}
	}
	return strings.Join(parts, ", ")
}

// loadCaption compares the busiest node's share at the largest chain.
func loadCaption(rs []*sectionsResult) string {
	last := map[string]*sectionsResult{}
	for _, r := range rs {
		if r.Point.crashed == "" {
			last[r.Point.proto] = r
		}
	}
	var parts []string
	for _, proto := range []string{agentsPaper, agentsEvery, orchestration} {
		if r := last[proto]; r != nil {
			parts = append(parts, fmt.Sprintf("%s %s", proto, reports.Pct(r.Mean(func(c sectionsRun) float64 { return c.busiest }).V)))
		}
	}
	n := 0
	if r := last[orchestration]; r != nil {
		n = r.Point.n
	}
	return fmt.Sprintf("At %d sections the busiest node handles %s of the messages: every message of the orchestrated saga goes to or from its coordinator, while the agent layer spreads them over the agents (its busiest is the initiator, which tells everyone the commit)", n, strings.Join(parts, ", "))
}

// crashCaption says what each crash stopped.
func crashCaption(rs []*sectionsResult) string {
	var parts []string
	for _, r := range rs {
		if r.Point.crashed == "" {
			continue
		}
		sub := func(c sectionsRun) int { return c.submitted }
		parts = append(parts, fmt.Sprintf("%s with %s down completes %s of the transactions submitted meanwhile during the outage (%s by the end)", r.Point.proto, r.Point.crashed,
			reports.Pct(r.Share(func(c sectionsRun) int { return c.duringOutage }, sub).V), reports.Pct(r.Share(func(c sectionsRun) int { return c.done }, sub).V)))
	}
	return strings.Join(parts, "; ") + ": a crashed agent stops only the transactions that need it, a crashed orchestrator stops them all (and loses those submitted to it while it is down)."
}

// sectionsClaims judges §3.3's notices and the no-single-point claims.
func sectionsClaims(rs []*sectionsResult, fail float64) []reports.Claim {
	var out []reports.Claim
	if fail == 0 {
		exact, n := true, 0
		for _, r := range rs {
			if r.Point.proto == agentsPaper && r.Point.crashed == "" {
				_, f := messageModel(agentsPaper)
				exact = exact && math.Abs(r.Mean(func(c sectionsRun) float64 { return c.msgs }).V-f(float64(r.Point.n))) < 1e-9
				n = r.Point.n
			}
		}
		out = append(out, reports.Claim{Source: "Limón et al. §3.3 steps 5–6", Paper: "Each agent passes the work to the next; the agent ending a sub-transaction tells the others (no message count given).",
			Measured: fmt.Sprintf("6(n − 1) messages per transaction (n = 1…%d, %s), against an orchestrator's 2n", n, map[bool]string{true: "exactly at every n", false: "not exactly at every n"}[exact]), Verdict: reports.NoNumber})
	}
	var agentShare, orchShare float64
	for _, r := range rs {
		if r.Point.crashed == "" {
			switch r.Point.proto {
			case agentsPaper:
				agentShare = r.Mean(func(c sectionsRun) float64 { return c.busiest }).V
			case orchestration:
				orchShare = r.Mean(func(c sectionsRun) float64 { return c.busiest }).V
			}
		}
	}
	out = append(out, reports.Claim{Source: "Limón et al. §2.1, §4", Paper: "Unlike an orchestrator, the agent layer concentrates no traffic.",
		Measured: fmt.Sprintf("busiest node's share of the messages at the longest chain: agents %s, orchestrator %s", reports.Pct(agentShare), reports.Pct(orchShare)),
		Verdict:  reports.Judge(agentShare < orchShare)})
	var agentDuring, orchDuring float64
	for _, r := range rs {
		sub := func(c sectionsRun) int { return c.submitted }
		during := r.Share(func(c sectionsRun) int { return c.duringOutage }, sub).V
		switch {
		case r.Point.proto == agentsPaper && r.Point.crashed != "":
			agentDuring = during
		case r.Point.proto == orchestration && r.Point.crashed == "orchestrator":
			orchDuring = during
		}
	}
	out = append(out, reports.Claim{Source: "Limón et al. §2.1, §4", Paper: "Unlike an orchestrator, the agent layer has no single point of failure.",
		Measured: fmt.Sprintf("transactions completed while one node was down: %s with an agent down, %s with the orchestrator down", reports.Pct(agentDuring), reports.Pct(orchDuring)),
		Verdict:  reports.Judge(agentDuring > 0 && orchDuring == 0)})
	return out
}

func connectivitySweep(x *scenarios.Exp) (*experiment.Sweep[connPoint, connRun], error) {
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
	// A beat carries the sender's whole view: 16 bytes and 16 per agent (saga.Beat).
	size := func(n float64) float64 { return 16 + 16*n }
	timing := func(pt connPoint) timing {
		return timing{retry: 40 * time.Millisecond, beat: beat, timeout: 4 * beat, grace: time.Minute, allToAll: pt.exchange == "all"}
	}
	return &experiment.Sweep[connPoint, connRun]{
		Points: points, Runs: seeds,
		Seed: func(_ connPoint, i int) uint64 { return x.Seed + uint64(i+1) },
		Run: func(pt connPoint, seed uint64) (connRun, error) {
			sys, err := build("chain.saga", chainConfig(pt.n), 0, timing(pt), nil)
			if err != nil {
				return connRun{}, err
			}
			res, err := runSystem(seed, sys.nodes, nil, nil, 0, 5*time.Second, faults.Plan{})
			if err != nil {
				return connRun{}, err
			}
			out := connRun{rate: float64(res.ByKind["CONN"].Sent) / 5, bytes: float64(res.ByKind["CONN"].Bytes) / 5}
			// Spread: the line's last agent is cut off at 1 s; how long until every
			// other agent reports it lost?
			if out.spread, err = spread(pt, seed, timing(pt)); err != nil {
				return connRun{}, err
			}
			return out, nil
		},
		Tables: []experiment.Table[connPoint, connRun]{{
			Title:   "Connectivity traffic vs agents",
			Columns: []string{"exchange", "agents", "runs", "messages per second", "messages lo", "messages hi", "bytes per second", "bytes lo", "bytes hi", "spread (ms)", "spread lo", "spread hi"},
			Row: func(r *connResult) []any {
				return []any{r.Point.exchange, r.Point.n, r.N(), r.Mean(func(c connRun) float64 { return c.rate }).Fmt("%.1f"),
					r.Mean(func(c connRun) float64 { return c.bytes }).Fmt("%.0f"), r.Mean(func(c connRun) float64 { return c.spread }).Fmt("%.1f")}
			},
			Notes: []string{
				fmt.Sprintf("Idle agents exchanging connectivity every %v for 5 s (no transactions, no faults); %s a point. Messages and bytes are exact counts (the intervals collapse); a beat carries the sender's whole view, 16 bytes and 16 per agent.", beat, seedsWord(seeds)),
				fmt.Sprintf("spread: the last agent of the line (by name) is cut off at 1 s; from then until every other agent has reported it lost (a neighbour silent for %v is lost; the view travels one hop a beat). Means with 95%% confidence intervals.", 4*beat),
			},
			FiguresFrom: func(rs []*connResult) []reports.Figure {
				return []reports.Figure{
					{Name: "saga-connectivity", Title: "Connectivity messages per second vs agents", X: "agents", Y: "messages per second", Low: "messages lo", High: "messages hi",
						Series: "exchange", Legend: "exchange", XLabel: "agents", YLabel: "connectivity messages per second", ZeroY: true,
						Curves: []reports.Curve{
							{Name: fmt.Sprintf("line: 2(n−1)·%.0f/s (exact)", per), Series: "line", F: func(n float64) float64 { return 2 * (n - 1) * per }},
							{Name: fmt.Sprintf("all-to-all: n(n−1)·%.0f/s (exact)", per), Series: "all", F: func(n float64) float64 { return n * (n - 1) * per }},
						},
						Caption: "SG-4: along the line each agent talks to its one or two neighbours, 2(n−1) messages a round — linear in the agents; all-to-all heartbeats send n(n−1). Dashed: the two formulas."},
					{Name: "saga-connectivity-bytes", Title: "Connectivity bytes per second vs agents", X: "agents", Y: "bytes per second", Low: "bytes lo", High: "bytes hi",
						Series: "exchange", Legend: "exchange", XLabel: "agents", YLabel: "connectivity bytes per second", ZeroY: true,
						Curves: []reports.Curve{
							{Name: fmt.Sprintf("line: 2(n−1)(16+16n)·%.0f/s (exact)", per), Series: "line", F: func(n float64) float64 { return 2 * (n - 1) * size(n) * per }},
							{Name: fmt.Sprintf("all-to-all: n(n−1)(16+16n)·%.0f/s (exact)", per), Series: "all", F: func(n float64) float64 { return n * (n - 1) * size(n) * per }},
						},
						Caption: "Each beat carries the whole view, one entry per agent, so the line's bytes grow quadratically with the agents (and all-to-all's cubically): the line saves a factor n/2 in messages and in bytes alike, but its traffic in bytes is not linear."},
					{Name: "saga-spread", Title: "Time for a loss to reach every agent vs agents", X: "agents", Y: "spread (ms)", Low: "spread lo", High: "spread hi",
						Series: "exchange", Legend: "exchange", XLabel: "agents", YLabel: "cut → the last agent reports it lost (ms)", ZeroY: true,
						Curves: []reports.Curve{
							{Name: fmt.Sprintf("line: timeout + (n−2)·beat = %v + (n−2)·%v", 4*beat, beat), Series: "line", F: func(n float64) float64 { return ms(4*beat) + (n-2)*ms(beat) }},
							{Name: fmt.Sprintf("all-to-all: timeout = %v", 4*beat), Series: "all", F: func(float64) float64 { return ms(4 * beat) }},
						},
						Caption: fmt.Sprintf("The price of the line: the cut agent's neighbour notices the silence after the %v timeout, and the loss then travels one hop a beat, so the farthest agent learns it (n − 2) beats later; all-to-all, every agent notices the silence itself after the timeout. Dashed: those two models; %s.", 4*beat, spreadFit(rs, 4*beat, beat))},
				}
			},
		}},
		Claims: func(rs []*connResult) []reports.Claim {
			exact, n := true, 0
			for _, r := range rs {
				f := float64(r.Point.n)
				want := 2 * (f - 1) * per
				if r.Point.exchange == "all" {
					want = f * (f - 1) * per
				}
				exact = exact && math.Abs(r.Mean(func(c connRun) float64 { return c.rate }).V-want) < 1e-6
				n = max(n, r.Point.n)
			}
			var spreads []string
			for _, r := range rs {
				if r.Point.n == n {
					spreads = append(spreads, fmt.Sprintf("%s %.0f ms", r.Point.exchange, r.Mean(func(c connRun) float64 { return c.spread }).V))
				}
			}
			return []reports.Claim{
				{Source: "Limón et al. §3.4, Fig. 3", Paper: "Each agent exchanges connectivity with one or two agents only, to lighten the network load (against all-to-all).",
					Measured: fmt.Sprintf("messages per round 2(n−1) along the line, n(n−1) all-to-all (%s); but bytes grow as n² along the line (each beat carries the whole view)", map[bool]string{true: "exactly at every n", false: "not exactly at every n"}[exact]),
					Verdict:  reports.Judge(exact)},
				{Source: "Limón et al. §3.4", Paper: "A lost agent is reported to all agents by one of the agents that expected its message (no time given).",
					Measured: fmt.Sprintf("time from the cut to the last agent's report at %d agents: %s", n, strings.Join(spreads, ", ")), Verdict: reports.NoNumber},
			}
		},
	}, nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// spreadFit says how far the measured spread times are from their models.
func spreadFit(rs []*connResult, timeout, beat time.Duration) string {
	dev := 0.0
	for _, r := range rs {
		model := ms(timeout)
		if r.Point.exchange == "line" {
			model += float64(r.Point.n-2) * ms(beat)
		}
		dev = max(dev, math.Abs(r.Mean(func(c connRun) float64 { return c.spread }).V-model))
	}
	return fmt.Sprintf("the measured means are within %.1f ms of them (a latency and the beats' phases)", dev)
}

// spread cuts the line's last agent off at 1 s and returns the time until every other
// agent has reported it lost (ms).
func spread(pt connPoint, seed uint64, tm timing) (float64, error) {
	sys, err := build("chain.saga", chainConfig(pt.n), 0, tm, nil)
	if err != nil {
		return 0, err
	}
	last := slices.Max(sys.opts.Names)
	cut := time.Second
	plan := faults.Plan{Events: []faults.Event{{At: faults.Duration(cut), Kind: "partition", Groups: [][]string{{last}}}}}
	res, err := runSystem(seed, sys.nodes, nil, nil, 0, cut+3*time.Second, plan)
	if err != nil {
		return 0, err
	}
	heard := map[string]sim.Time{}
	for _, o := range res.History {
		if v, ok := o.Value.(saga.ConnEv); ok && o.Kind == saga.ObsLost && v.Peer == last && o.Time >= sim.Time(cut) {
			if _, seen := heard[v.Agent]; !seen {
				heard[v.Agent] = o.Time
			}
		}
	}
	if len(heard) != pt.n-1 {
		return 0, fmt.Errorf("%s, %d agents, seed %d: %d of %d agents reported %s lost", pt.exchange, pt.n, seed, len(heard), pt.n-1, last)
	}
	latest := sim.Time(0)
	for _, t := range heard {
		latest = max(latest, t)
	}
	return float64(latest-sim.Time(cut)) / 1e6, nil
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
	detect := func(g graceRun) float64 { return g.detect }
	comp := func(g graceRun) float64 { return g.compensated }
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
				return []any{r.Point.Milliseconds(), r.N(), r.Mean(detect).Fmt("%.1f"), r.Mean(comp).Fmt("%.1f")}
			},
			Notes: []string{fmt.Sprintf("A line of 4 agents running chained transactions every 40 ms; a3 is cut off for good at 300 ms. detect: from the cut to the first agent that reports a3 lost (timeout %v, beats every 50 ms); compensated: from the cut to the last compensation the reachable agents run for a transaction a3 held up (the transaction itself ends only when a3 comes back). %s a point; means with 95%% confidence intervals.", timeout, seedsWord(seeds))},
			FiguresFrom: func(rs []*experiment.Result[time.Duration, graceRun]) []reports.Figure {
				var xs, ds, cs []float64
				for _, r := range rs {
					xs, ds, cs = append(xs, float64(r.Point.Milliseconds())), append(ds, r.Mean(detect).V), append(cs, r.Mean(comp).V)
				}
				caption := "SG-4: the loss is detected after the neighbour's timeout whatever the grace period"
				if len(xs) > 1 {
					_, b, _ := reports.LinFit(xs, cs)
					caption += fmt.Sprintf(" (%.0f–%.0f ms); compensation waits for the grace period on top, so it grows one for one with it: a least-squares line (the family of grace + a fixed delay) has slope %.3f", slices.Min(ds), slices.Max(ds), b)
				}
				return []reports.Figure{{Name: "saga-grace", Title: "Detection and compensation vs grace period", X: "grace (ms)",
					Ys:     []reports.YSeries{{Name: "loss detected", Y: "detect (ms)", Low: "detect lo", High: "detect hi"}, {Name: "last compensation", Y: "compensated (ms)", Low: "compensated lo", High: "compensated hi"}},
					Legend: "time after the cut until", XLabel: "grace period (ms)", YLabel: "time after the cut (ms)", ZeroY: true, Fit: "line",
					Caption: caption + ". Means with 95% confidence intervals."}}
			},
		}},
		Claims: func(rs []*experiment.Result[time.Duration, graceRun]) []reports.Claim {
			early, n, least := 0, 0, math.Inf(1)
			for _, r := range rs {
				for _, g := range r.Runs {
					n++
					wait := g.compensated - g.detect - float64(r.Point.Milliseconds())
					least = min(least, wait)
					if wait < 0 {
						early++
					}
				}
			}
			return []reports.Claim{{Source: "Limón et al. §3.4", Paper: "The agents wait a grace period after a loss before they recover (compensate); a reconnection within it resumes the work.",
				Measured: fmt.Sprintf("%d of %d runs compensated before the grace period after the detection had passed (the earliest %.1f ms after it)", early, n, least),
				Verdict:  reports.Judge(early == 0)}}
		},
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
