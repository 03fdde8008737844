package sagascen

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/internal/inputfile"
	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// Parameters every saga scenario takes.
var commonParams = []scenarios.Param{
	{Name: "txs", Default: "4", Help: "transactions started"},
	{Name: "spacing", Default: "60ms", Help: "time between transaction starts"},
	{Name: "retry", Default: "40ms", Help: "re-send period of unacknowledged requests and notices"},
	{Name: "beat", Default: "50ms", Help: "connectivity exchange period (SG-4)"},
	{Name: "timeout", Default: "200ms", Help: "a neighbour silent this long is lost"},
	{Name: "grace", Default: "600ms", Help: "grace period before a lost agent's transactions are compensated"},
	{Name: "bound", Default: "4s", Help: "SG-P4: every transaction ends within this after the faults settle"},
	{Name: "exchange", Default: "line", Help: "connectivity exchange: line (the paper's) or all (every agent, the baseline)"},
	{Name: "bug", Default: "none", Help: "plant a bug: none, eager-compensation, rerun-duplicates, compensate-never-run, run-after-abort, forget-compensation"},
}

func withParams(extra ...scenarios.Param) []scenarios.Param {
	return append(slices.Clone(commonParams), extra...)
}

// seeded returns the common parameters with the named ones drawn from the seed by
// default (the value "seed"; any other value fixes the parameter).
func seeded(names ...string) []scenarios.Param {
	ps := slices.Clone(commonParams)
	for i := range ps {
		if slices.Contains(names, ps[i].Name) {
			ps[i].Default = "seed"
			ps[i].Help += " (default: drawn from the seed)"
		}
	}
	return ps
}

// swarmDraw is what the swarm draws from its seed for the parameters left at "seed":
// the workload's size and pace, the protocol's periods (a grace period from two to
// fourteen beats, so that it always spans a beat: SG-4 has connectivity messages
// tried during it) and, rarely, the all-to-all exchange.
type swarmDraw struct {
	txs                                  int
	spacing, retry, beat, timeout, grace time.Duration
	allToAll                             bool
}

func drawSwarm(seed uint64) swarmDraw {
	r := sim.Stream(seed, "saga-swarm")
	ms := func(lo, hi int64) time.Duration { return time.Duration(r.Int64Range(lo, hi)) * time.Millisecond }
	beat := ms(20, 80)
	return swarmDraw{
		txs:      int(r.Int64Range(1, 6)),
		spacing:  ms(10, 150),
		retry:    ms(20, 80),
		beat:     beat,
		timeout:  beat*time.Duration(r.Int64Range(3, 6)) + ms(0, 20),
		grace:    beat*time.Duration(r.Int64Range(2, 14)) + ms(1, 20),
		allToAll: r.Float64() < 0.125,
	}
}

// kind is how a scenario builds its system, workload and faults.
type kind struct {
	name, help string
	suite      bool
	params     []scenarios.Param
	// system builds the saga system; starts draws each transaction's start and input.
	system func(b *scenarios.Build, tm timing, pol *saga.Policy) (*system, error)
	input  func(b *scenarios.Build, s *system, i int) (saga.SecKey, saga.Data)
	// plan is the scenario's own fault plan.
	plan func(b *scenarios.Build, s *system, tm timing, horizon time.Duration) (faults.Plan, error)
	nw   func(b *scenarios.Build) sim.Network
}

var kinds = []kind{
	{name: "order", suite: true, help: "the paper's example (§3.2): order and customer agents, orderCreation → orderApproval; -p path=insufficient takes the compensation path",
		params: withParams(
			scenarios.Param{Name: "path", Default: "commit", Help: "commit, or insufficient (each order asks for more credit than the customer has)"},
			scenarios.Param{Name: "credit", Default: "1000", Help: "the customer's initial credit"},
			scenarios.Param{Name: "amount", Default: "100", Help: "credit each order reserves"},
		),
		system: paperSystem, input: paperInput, plan: noFaults},
	{name: "parallel", suite: true, help: "parallel sub-transactions (next/3): a booking and a payment branch join no agent twice; -p fail=AGENT:ACTION makes one action fail",
		params: withParams(scenarios.Param{Name: "fail", Default: "a4:doReceipt", Help: "the action that fails (agent:action), or none"}),
		system: func(b *scenarios.Build, tm timing, pol *saga.Policy) (*system, error) {
			s, err := build("parallel.saga", parallelConfig, 0, tm, pol)
			if err == nil {
				checkFail(b.Params, s.conf, b.Params.String("fail"))
			}
			return s, err
		},
		input: func(b *scenarios.Build, s *system, i int) (saga.SecKey, saga.Data) {
			d := saga.Data{}
			// every other transaction fails at the named action: both flows each run
			if f := b.Params.String("fail"); f != "none" && i%2 == 1 {
				d.Fail = f
			}
			return saga.SecKey{Agent: "a1", St: "booking"}, d
		},
		plan: noFaults},
	{name: "crash", suite: true, help: "the paper's example with agents crashing mid-transaction: each restarts from its log (SG-4 crash extension), replays and finishes",
		params: withParams(
			scenarios.Param{Name: "credit", Default: "300", Help: "the customer's initial credit (the later orders fail for want of it)"},
			scenarios.Param{Name: "amount", Default: "100", Help: "credit each order reserves"},
		),
		system: paperSystem, input: paperInput,
		plan: func(b *scenarios.Build, s *system, tm timing, horizon time.Duration) (faults.Plan, error) {
			return faults.Parse([]byte(`{"events": [
				{"at": "70ms", "kind": "crash", "node": "customer"}, {"at": "160ms", "kind": "restart", "node": "customer"},
				{"at": "190ms", "kind": "crash", "node": "order"}, {"at": "260ms", "kind": "restart", "node": "order"}]}`))
		}},
	{name: "partition-short", suite: true, help: "a line of 4 agents; a3 is cut off for less than the grace period: its transactions pause, then resume and commit",
		params: withParams(), system: chainSystem, input: chainInput,
		plan: func(b *scenarios.Build, s *system, tm timing, horizon time.Duration) (faults.Plan, error) {
			return isolate("a3", 90*time.Millisecond, tm.grace/2), nil
		}},
	{name: "partition-long", suite: true, help: "a line of 4 agents; a3 is cut off past the grace period: the line is re-arranged, its transactions compensated, and finished once a3 is back and cleans up",
		params: withParams(), system: chainSystem, input: chainInput,
		plan: func(b *scenarios.Build, s *system, tm timing, horizon time.Duration) (faults.Plan, error) {
			return isolate("a3", 90*time.Millisecond, 3*tm.grace), nil
		}},
	{name: "lossy", help: "the paper's example over links that lose and duplicate messages (outside the paper's model: re-sends and duplicate checks carry it, and the run says the knobs were on)",
		params: withParams(
			scenarios.Param{Name: "credit", Default: "300", Help: "the customer's initial credit"},
			scenarios.Param{Name: "amount", Default: "100", Help: "credit each order reserves"},
			scenarios.Param{Name: "loss", Default: "0.2", Help: "message loss probability"},
			scenarios.Param{Name: "dup", Default: "0.2", Help: "message duplication probability"},
		),
		system: paperSystem, input: paperInput, plan: noFaults,
		nw: func(b *scenarios.Build) sim.Network {
			nw := network()
			nw.Loss, nw.Duplicate = b.Params.Prob("loss"), b.Params.Prob("dup")
			return nw
		}},
	{name: "config", help: "your own saga: -p file=PATH (the §3.2 language; errors name the file and line, exit 2) -p start=AGENT/ST; agents named order and customer get the paper's services, the others the generic step service (actions do…/undo…)",
		params: withParams(
			scenarios.Param{Name: "file", Default: "", Help: "configuration file (empty: the paper's example)"},
			scenarios.Param{Name: "start", Default: "order/orderCreation", Help: "the section transactions start at (agent/st)"},
			scenarios.Param{Name: "credit", Default: "1000", Help: "the customer service's initial credit"},
			scenarios.Param{Name: "amount", Default: "100", Help: "credit each transaction's order reserves"},
		),
		system: fileSystem,
		input: func(b *scenarios.Build, s *system, i int) (saga.SecKey, saga.Data) {
			return s.starts[0], saga.Data{Customer: "alice", Amount: int64(b.Params.IntRange("amount", 1, 1<<40))}
		},
		plan: noFaults},
	{name: "swarm", suite: true, help: "saga graphs (agents, sections, parallel branches, joins, failing actions; one seed in six the paper's order example, orders competing for credit), workload, timing and faults (crashes, crash-sends, partitions and cuts shorter and longer than the grace period, the initiator's own, spikes, clock skews) all drawn from the seed",
		params: append(seeded("txs", "spacing", "retry", "beat", "timeout", "grace", "exchange"),
			scenarios.Param{Name: "agents", Default: "6", Help: "most agents a drawn graph has"},
			scenarios.Param{Name: "length", Default: "5", Help: "most sections of the main sub-transaction"},
			scenarios.Param{Name: "fail-rate", Default: "0.3", Help: "probability that a transaction has a failing action"},
			scenarios.Param{Name: "paper-rate", Default: "0.17", Help: "probability that a seed runs the paper's order example (agents order and customer) instead of a drawn graph (agents a1…)"},
		),
		system: func(b *scenarios.Build, tm timing, pol *saga.Policy) (*system, error) {
			agents, length := b.Params.IntRange("agents", 2, 26), b.Params.IntRange("length", 1, 26)
			if err := b.Params.Err(); err != nil {
				return nil, err
			}
			if r := sim.Stream(b.Seed, "saga-swarm-paper"); r.Float64() < b.Params.Prob("paper-rate") {
				// The paper's own example, with its order and customer services: orders
				// of two customers compete for credit, so some fail and are compensated.
				s, err := build("paper.saga", saga.PaperConfig, r.Int64Range(100, 400), tm, pol)
				if err != nil {
					return nil, err
				}
				s.paper, s.starts = true, []saga.SecKey{{Agent: "order", St: "orderCreation"}}
				return s, nil
			}
			src, start := genConfig(sim.Stream(b.Seed, "saga-graph"), agents, length)
			s, err := buildWith(fmt.Sprintf("swarm-%d.saga", b.Seed), src, 0, true, tm, pol)
			if err != nil {
				return nil, fmt.Errorf("generated configuration: %w", err)
			}
			s.starts = []saga.SecKey{start}
			return s, nil
		},
		input: func(b *scenarios.Build, s *system, i int) (saga.SecKey, saga.Data) {
			r := sim.Stream(b.Seed, "saga-fail", int64(i))
			if s.paper {
				return s.starts[0], saga.Data{Customer: []string{"alice", "bob"}[r.IntN(2)], Amount: r.Int64Range(50, 200)}
			}
			d := saga.Data{}
			if r.Float64() < b.Params.Prob("fail-rate") {
				g := s.opts.Graph(s.starts[0])
				k := g.Sections[int(r.Int64Range(0, int64(len(g.Sections)-1)))]
				d.Fail = k.Agent + ":" + s.conf.Section(k).Incoming
			}
			return s.starts[0], d
		},
		plan: swarmPlan},
}

func init() {
	for _, k := range kinds {
		k := k
		scenarios.Register(&scenarios.Scenario{Name: "saga/" + k.name, Help: k.help, Params: k.params, Suite: k.suite,
			Build: func(b *scenarios.Build) (*scenarios.Setup, error) { return setup(b, k) }})
	}
}

// swarmPlan draws the swarm's faults. An outage is noticed within a timeout and a
// beat; one that lasts a grace period more outlasts the grace period (SG-4's recovery
// runs). Outages are drawn around that length, so that some heal within the grace
// period and some do not; in a third of the seeds the faults go on past the
// transactions (their horizon stretched by two such outages), in a quarter they hit
// only the initiator (crashes and isolation of the agent that decides: SG-4's lost
// initiator), in a tenth one agent crashes for good; half the crashes may be
// crash-sends (an agent dying part-way through a step's messages); clocks step and
// drift, latencies spike.
func swarmPlan(b *scenarios.Build, s *system, tm timing, horizon time.Duration) (faults.Plan, error) {
	r := sim.Stream(b.Seed, "saga-swarm-faults")
	outlast := tm.timeout + tm.beat + tm.grace
	limits := faults.DefaultParams(horizon)
	if r.Float64() < 1.0/3 {
		limits.Horizon = horizon + 2*outlast
	}
	limits.Crashes, limits.MaxDown, limits.MeanDown, limits.CrashSendFrac = 4, 2, outlast, 0.5
	limits.Partitions, limits.MeanSplit, limits.CutFrac = 3, outlast, 0.2
	limits.Skews, limits.MaxStep, limits.MaxDriftPPM = 2, 10*time.Millisecond, 5000
	if r.Float64() < 0.25 {
		init := []string{s.starts[0].Agent}
		limits.Crashable, limits.Splittable, limits.MaxDown = init, init, 1
	}
	p := faults.Swarm(b.Seed, limits)
	if r.Float64() < 0.1 {
		p.Permanent = 1
	}
	return faults.Generate(b.Seed, s.opts.Names, p)
}

func network() sim.Network {
	return sim.Network{Latency: sim.Uniform(time.Millisecond, 8*time.Millisecond)}
}

func noFaults(*scenarios.Build, *system, timing, time.Duration) (faults.Plan, error) {
	return faults.Plan{}, nil
}

// isolate cuts one agent off from every other for a while, then heals.
func isolate(node string, at, d time.Duration) faults.Plan {
	return faults.Plan{Events: []faults.Event{
		{At: faults.Duration(at), Kind: "partition", Groups: [][]string{{node}}},
		{At: faults.Duration(at + d), Kind: "heal"},
	}}
}

func paperSystem(b *scenarios.Build, tm timing, pol *saga.Policy) (*system, error) {
	credit := int64(b.Params.IntRange("credit", 0, 1<<40))
	s, err := build("paper.saga", saga.PaperConfig, credit, tm, pol)
	if err != nil {
		return nil, err
	}
	s.paper = true
	return s, nil
}

func paperInput(b *scenarios.Build, s *system, i int) (saga.SecKey, saga.Data) {
	amt := int64(b.Params.IntRange("amount", 1, 1<<40))
	if s.insufficient {
		amt = s.credit + 1
	}
	return saga.SecKey{Agent: "order", St: "orderCreation"}, saga.Data{Customer: "alice", Amount: amt}
}

// fileSystem reads a user's configuration (the paper's example when none is given).
func fileSystem(b *scenarios.Build, tm timing, pol *saga.Policy) (*system, error) {
	file, src := b.Params.String("file"), saga.PaperConfig
	credit := int64(b.Params.IntRange("credit", 0, 1<<40))
	if file == "" {
		file = "paper.saga"
	} else {
		data, err := inputfile.Read(file, saga.MaxConfigBytes)
		if err != nil {
			return nil, fmt.Errorf("parameter file: %v", err)
		}
		src = string(data)
	}
	s, err := build(file, src, credit, tm, pol)
	if err != nil {
		return nil, err
	}
	agent, st, ok := strings.Cut(b.Params.String("start"), "/")
	start := saga.SecKey{Agent: agent, St: st}
	if !ok || s.opts.Graph(start) == nil {
		return nil, fmt.Errorf("parameter start=%q: no section agent/st of %s starts there", b.Params.String("start"), file)
	}
	s.starts = []saga.SecKey{start}
	s.paper = slices.Contains(s.conf.Order, "customer")
	return s, nil
}

func chainSystem(b *scenarios.Build, tm timing, pol *saga.Policy) (*system, error) {
	return build("chain.saga", chainConfig(4), 0, tm, pol)
}

func chainInput(*scenarios.Build, *system, int) (saga.SecKey, saga.Data) {
	return saga.SecKey{Agent: "a1", St: "main"}, saga.Data{}
}

// setup builds one run of a scenario kind.
func setup(b *scenarios.Build, k kind) (*scenarios.Setup, error) {
	p := b.Params
	draw := drawSwarm(b.Seed)
	// seed: a parameter left to the seed (the swarm's defaults) takes the drawn value.
	seed := func(name string) bool { return p.String(name) == "seed" }
	txs := draw.txs
	if !seed("txs") {
		txs = p.IntRange("txs", 0, 10_000)
	}
	// The protocol's periods are bounded so that every schedule built from them (a
	// partition healed after three grace periods, say) stays within a fault plan's
	// day; the launches too.
	hour := func(name string, d time.Duration) time.Duration {
		if d > time.Hour {
			p.Reject(name, "a duration of at most 1h")
		}
		return d
	}
	period := func(name string, drawn time.Duration) time.Duration {
		if seed(name) {
			return drawn
		}
		return hour(name, p.PositiveDuration(name))
	}
	spacing := draw.spacing
	if !seed("spacing") {
		spacing = hour("spacing", p.Duration("spacing"))
	}
	tm := timing{retry: period("retry", draw.retry), beat: period("beat", draw.beat),
		timeout: period("timeout", draw.timeout), grace: period("grace", draw.grace)}
	bound := p.PositiveDuration("bound")
	if p.Err() == nil && time.Duration(txs)*spacing > 12*time.Hour {
		return nil, fmt.Errorf("parameters txs and spacing: the launches span %v, more than 12h", time.Duration(txs)*spacing)
	}
	switch ex := p.String("exchange"); ex {
	case "line":
	case "all":
		tm.allToAll = true
	case "seed":
		tm.allToAll = draw.allToAll
	default:
		return nil, fmt.Errorf("parameter exchange=%q: want line or all", ex)
	}
	pol, err := Policy(p.String("bug"))
	if err != nil {
		return nil, err
	}
	insufficient := false
	if k.name == "order" {
		path := p.String("path")
		if path != "commit" && path != "insufficient" {
			return nil, fmt.Errorf("parameter path=%q: want commit or insufficient", path)
		}
		insufficient = path == "insufficient"
	}
	if p.Err() != nil {
		return nil, p.Err()
	}
	s, err := k.system(b, tm, pol)
	if err != nil {
		return nil, err
	}
	s.insufficient = insufficient
	if p.Err() != nil {
		return nil, p.Err()
	}
	horizon := time.Duration(txs)*spacing + 300*time.Millisecond
	plan, err := b.FaultPlan(func() (faults.Plan, error) { return k.plan(b, s, tm, horizon) })
	if err != nil {
		return nil, err
	}
	type start struct {
		at  sim.Time
		to  sim.NodeID
		msg saga.StartTx
	}
	var starts []start
	for i := 0; i < txs; i++ {
		st, in := k.input(b, s, i)
		if p.Err() != nil {
			return nil, p.Err()
		}
		starts = append(starts, start{sim.Time(5*time.Millisecond + time.Duration(i)*spacing), sim.NodeID(slices.Index(s.opts.Names, st.Agent)), saga.StartTx{Start: st, Input: in}})
	}
	nw := network()
	if k.nw != nil {
		nw = k.nw(b)
	}
	settled := plan.Settled().At
	until := max(sim.Time(horizon), settled).Add(bound + time.Second)
	e := &env{sys: s, bound: bound, plan: plan, maxLatency: latencyBound(nw, plan)}
	notes := []string{}
	if k.name == "swarm" {
		g := s.opts.Graph(s.starts[0])
		var secs []string
		for _, x := range g.Sections {
			secs = append(secs, x.String())
		}
		exchange := "line"
		if tm.allToAll {
			exchange = "all-to-all"
		}
		notes = append(notes, fmt.Sprintf("graph: %d agents, %d sections (%s), %d sub-transactions", len(g.Agents), len(g.Sections), strings.Join(secs, " "), len(g.Ends)),
			fmt.Sprintf("workload and timing: %d transactions %v apart; retry %v, beat %v, timeout %v, grace %v, %s exchange", txs, spacing, tm.retry, tm.beat, tm.timeout, tm.grace, exchange))
	}
	return &scenarios.Setup{
		Nodes: wrapped(p.String("bug"), s.nodes), Network: nw, Faults: plan,
		Workload: func(kk *sim.Kernel) {
			for _, x := range starts {
				kk.Inject(x.at, x.to, x.msg)
			}
		},
		Until: until, MaxTime: until + sim.Time(time.Second),
		Properties: e.properties(),
		Notes:      notes,
	}, nil
}
