// Package eoscen registers the exactly-once mobile agent scenarios (names starting
// "exactlyonce/"), their properties (EO-P1 with the records the stages Put, EO-P2
// with porcupine, EO-P3, EO-P5, EO-I1, the atomicity of stage transactions of
// EO-2/EO-3, EO-8's "no selection without a fault", "only a worker sends
// I_AM_ALIVE" and "a selection waits for the higher-priority nodes' answers", EO-5's
// "a Ready orchestrator does not give up", EO-5/EO-8's "a worker steps down only for
// a higher priority or a Ready orchestrator" and EO-1/EO-8's "only the variant's
// messages"; EO-7's "a voter repeats INQUIRY while it holds a vote" and EO-8's "a
// selection asks every higher-priority stage node" and "a node a higher-priority node
// answered does not select itself", which read the periods, latencies and fault plan,
// in props_timed.go; voter-crash adds its own EO-7 property), per-stage metrics, the
// EO-P4 experiment "exactlyonce/blocking", the model "exactlyonce" with its check
// portfolio, and the -p bug= variants (bugs.go). The protocol is in
// github.com/simrun-dev/simrun/protocols/exactlyonce.
//
// Where they live: props.go lists the properties (workload.Properties) with what they
// know of the workload; EO-P1 is in props_p1_commits.go, EO-P2 in
// props_p2_exactly_once.go, EO-P3 in props_p3_completion.go, EO-P5 in
// props_p5_cleanup.go, EO-I1 and the atomicity of stage transactions in
// props_i1_transactions.go, EO-5's and EO-5/EO-8's in props_eo5_priority.go, EO-8's
// and EO-1/EO-8's in props_eo8_selection.go. The model: model.go holds its parameters,
// their reading and the portfolio; model_system.go builds the system (the ghost and
// the invariants); model_props.go names the invariants and holds what they compute;
// model_facts.go reads (and caches) what they need of stable storage.
//
// Every scenario takes the same parameters (see Params); they differ in their default
// itinerary and fault plan. The workload launches agents at their home nodes, spaced
// by "spacing"; each agent follows its itinerary (random per agent unless
// "itinerary" fixes one) and reserves a seat at every stage after the launch stage.
package eoscen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// param defaults shared by every scenario; scenarios override some.
var baseParams = []scenarios.Param{
	{Name: "protocol", Default: "extended", Help: "extended (paper §3-5: observers, voting, selection) or simple (§2, EO-1)"},
	{Name: "nodes", Default: "6", Help: "number of nodes n0..n{N-1}"},
	{Name: "agents", Default: "8", Help: "number of agents"},
	{Name: "stages", Default: "4", Help: "stages per random itinerary, the launch stage included"},
	{Name: "width", Default: "3", Help: "nodes per stage after the launch stage, in random itineraries (worker + observers)"},
	{Name: "itinerary", Default: "", Help: "one itinerary for every agent, e.g. 'n0 | n1,n2,n3 | n4:2,n5:1' (stages split by |, optional :rank, 1 = highest); empty = random per agent"},
	{Name: "work", Default: "20ms", Help: "how long each stage's Execute takes at the worker"},
	{Name: "capacity", Default: "3", Help: "seats per pool per node"},
	{Name: "spacing", Default: "20ms", Help: "time between agent launches"},
	{Name: "majority-select", Default: "false", Help: "majority-ACK variant of the selection protocol (EO-8)"},
	{Name: "static-next", Default: "false", Help: "Put to every itinerary node of the next stage, never leave unreachable ones out"},
	{Name: "horizon", Default: "2s", Help: "faults happen before this time"},
	{Name: "bound", Default: "5s", Help: "EO-P3: every agent completes within this of max(its launch, the faults settling)"},
	{Name: "timescale", Default: "1", Help: "multiply every protocol timeout and period by this factor"},
	{Name: "latency", Default: "1ms-10ms", Help: "link latency, uniform MIN-MAX"},
	{Name: "loss", Default: "0", Help: "message loss probability (breaks the paper's network assumption)"},
	{Name: "dup", Default: "0", Help: "message duplication probability (breaks the paper's network assumption)"},
	{Name: "reorder", Default: "0", Help: "probability a message skips FIFO order (breaks the paper's network assumption)"},
	{Name: "bug", Default: "none", Help: "deliberately broken variant, for tests: " + joinBugs()},
}

func joinBugs() string {
	s := ""
	for i, b := range BugNames() {
		if i > 0 {
			s += ", "
		}
		s += b
	}
	return s
}

// Params returns the scenario parameters with some defaults replaced.
func Params(defaults map[string]string) []scenarios.Param {
	ps := slices.Clone(baseParams)
	for i := range ps {
		if v, ok := defaults[ps[i].Name]; ok {
			ps[i].Default = v
		}
	}
	return ps
}

// fixedItinerary is the itinerary of the targeted scenarios: a launch at n0, a stage
// on n1 (worker), n2, n3, and a stage on n4 (worker), n5, n0.
const fixedItinerary = "n0 | n1,n2,n3 | n4,n5,n0"

// planFunc draws or builds a scenario's own fault plan.
type planFunc func(e *env) (faults.Plan, error)

// env is a scenario run being built.
type env struct {
	seed    uint64
	names   []string
	horizon time.Duration
	cfg     *eo.Config
}

func init() {
	reg := func(name, help string, suite bool, defaults map[string]string, plan planFunc, extra ...checker.Property) {
		scenarios.Register(&scenarios.Scenario{
			Name: name, Help: help, Suite: suite, Params: Params(defaults),
			Build: func(b *scenarios.Build) (*scenarios.Setup, error) { return build(b, plan, extra, nil) },
		})
	}
	fixed := map[string]string{"itinerary": fixedItinerary, "agents": "10"}
	reg("exactlyonce/happy", "exactly-once agents, many concurrent agents, no faults", true, nil, noFaults)
	reg("exactlyonce/worker-crash", "the stage worker n1 crashes before its stage transactions commit; observers take over", true, fixed,
		fixedPlan(ev("100ms", "crash", "n1"), ev("1500ms", "restart", "n1")))
	reg("exactlyonce/in-doubt", "the worker n1 crashes while its orchestrator is Ready (the next stage answers slowly)", true, fixed,
		fixedPlan(spike("0s", "n4", "n1", "150ms", "1500ms"), spike("0s", "n5", "n1", "150ms", "1500ms"),
			spike("0s", "n0", "n1", "150ms", "1500ms"), ev("400ms", "crash", "n1"), ev("1200ms", "restart", "n1")))
	reg("exactlyonce/split-worker", "a partition isolates the worker n1: n2 is selected, both compete after the heal (COND_YES)", true, fixed,
		fixedPlan(spike("0s", "n4", "n2", "100ms", "1500ms"), spike("0s", "n5", "n2", "100ms", "1500ms"),
			spike("0s", "n0", "n2", "100ms", "1500ms"), part("100ms", "n1"), heal("700ms")))
	// voter-crash: links n1->n2, n1->n3, n3->n2 and n2->n1 are cut, so n2 is selected
	// and its transactions collect n3's votes but never a majority; n3 crashes at
	// 900ms holding a vote for n2. From 1100ms n1 reaches n2 and n3: n2 gives up (its
	// UN_VOTE to n3 is lost) and n1, the worker, needs n3's vote, since n2's answers
	// still cannot reach n1. n3 restarts at 1300ms: its stale vote for n2 makes it
	// answer n1 COND_YES({n2}) until INQUIRY -> UN_VOTE withdraws it (EO-7). The
	// scenario's own property requires the stage to commit before n2 reaches n1 again
	// at 1500ms, which only the INQUIRY at restart allows.
	reg("exactlyonce/voter-crash", "the observer n3 crashes holding a vote for n2, which gives up meanwhile; at restart n3's INQUIRY withdraws it", true,
		map[string]string{"itinerary": fixedItinerary, "agents": "1"},
		fixedPlan(cut("0s", "n1", "n2"), cut("0s", "n1", "n3"), cut("0s", "n3", "n2"), cut("0s", "n2", "n1"),
			ev("900ms", "crash", "n3"), restore("1100ms", "n1", "n2"), restore("1100ms", "n1", "n3"), restore("1100ms", "n3", "n2"),
			ev("1300ms", "restart", "n3"), heal("1500ms")),
		commitsBefore(PropInquiry, 1, 1500*time.Millisecond))
	// coord-crash: stage 2 is {n4, n1}, so n1 coordinates stage 1 with n4 as its only
	// remote participant (n1's own Put is local), and stage 1's transactions run one
	// after the other at n1 (the seat pool's lock). YES votes of n2 and n3 reach n1
	// 275ms late, so phase 1 outlasts n4's first STATUS (250ms after its PREPARE): the
	// first transaction meets an in-doubt STATUS while still voting. The link n1->n4 is
	// cut at 500ms, while the second transaction votes: its COMMIT never reaches n4,
	// nobody ACKs it, n1 crashes with only its commit record to remember it, restarts
	// and must re-send COMMIT; after the heal only that record can tell n4 "commit".
	reg("exactlyonce/coord-crash", "the coordinator n1 crashes after logging a commit whose COMMIT to n4 was cut off; at restart it re-sends it", true,
		map[string]string{"itinerary": "n0 | n1,n2,n3 | n4,n1", "agents": "10"},
		fixedPlan(spike("0s", "n2", "n1", "275ms", "1500ms"), spike("0s", "n3", "n1", "275ms", "1500ms"),
			cut("500ms", "n1", "n4"), ev("700ms", "crash", "n1"), ev("900ms", "restart", "n1"), heal("1200ms")))
	reg("exactlyonce/majority-loss", "stage {n1,n2,n3} loses n2 and n3: its agents block, then complete after the restart", true, fixed,
		fixedPlan(ev("100ms", "crash", "n2"), ev("100ms", "crash", "n3"), ev("1200ms", "restart", "n2"), ev("1200ms", "restart", "n3")))
	reg("exactlyonce/simple", "the simple protocol of paper §2 (EO-1) under generated crashes and partitions", true,
		map[string]string{"protocol": "simple"}, generated)
	reg("exactlyonce/faults", "the extended protocol under generated crashes and partitions", true, nil, generated)
	reg("exactlyonce/swarm", "everything drawn from the seed: topology, itineraries, variant, fault intensities (swarm testing)", true, nil, nil)
	reg("exactlyonce/lossy", "the extended protocol with message loss, duplication and reordering on (outside the paper's model)", false,
		map[string]string{"loss": "0.05", "dup": "0.05", "reorder": "0.1"}, generated)
}

func noFaults(*env) (faults.Plan, error) { return faults.Plan{}, nil }

func generated(e *env) (faults.Plan, error) {
	p := faults.DefaultParams(e.horizon)
	return faults.Generate(e.seed, e.names, p)
}

func ev(at, kind, node string) faults.Event {
	return faults.Event{At: dur(at), Kind: kind, Node: node}
}

func spike(at, from, to, extra, dur_ string) faults.Event {
	return faults.Event{At: dur(at), Kind: "spike", From: from, To: to, Extra: dur(extra), For: dur(dur_)}
}

func part(at string, group ...string) faults.Event {
	return faults.Event{At: dur(at), Kind: "partition", Groups: [][]string{group}}
}

func cut(at, from, to string) faults.Event {
	return faults.Event{At: dur(at), Kind: "cut", From: from, To: to}
}

func restore(at, from, to string) faults.Event {
	return faults.Event{At: dur(at), Kind: "restore", From: from, To: to}
}

func heal(at string) faults.Event { return faults.Event{At: dur(at), Kind: "heal"} }

func dur(s string) faults.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return faults.Duration(d)
}

func fixedPlan(evs ...faults.Event) planFunc {
	return func(*env) (faults.Plan, error) { return faults.Plan{Events: slices.Clone(evs)}, nil }
}

// options are the parsed parameters.
type options struct {
	simple, majority, static bool
	nodes, agents, stages    int
	width                    int
	itinerary                string
	capacity                 int
	spacing                  time.Duration
	timescale                float64
	work                     time.Duration
	// launches, when set, are the launch times (the swarm draws them).
	launches           []time.Duration
	horizon, bound     time.Duration
	latMin, latMax     time.Duration
	loss, dup, reorder float64
	policy             eo.Policy // the -p bug= variant's hooks (the zero Policy: none)
}

func parse(p *scenarios.Params) (options, error) {
	var o options
	switch proto := p.String("protocol"); proto {
	case "extended":
	case "simple":
		o.simple = true
	default:
		return o, fmt.Errorf("parameter protocol=%q: want extended or simple", proto)
	}
	// Sizes are bounded so that a run's setup stays small (issue 16 item 4): a
	// million nodes or agents took seconds and gigabytes before the first event.
	o.nodes = p.IntRange("nodes", 1, 1000)
	o.agents = p.IntRange("agents", 0, 10_000)
	o.stages = p.IntRange("stages", 1, 100)
	o.width = p.IntRange("width", 1, 100)
	o.itinerary = p.String("itinerary")
	o.capacity = p.IntRange("capacity", 0, 10_000)
	if n := o.agents * o.stages * o.width; n > 1_000_000 {
		p.Reject("agents", fmt.Sprintf("agents × stages × width at most 1000000 (got %d)", n))
	}
	o.spacing = p.Duration("spacing")
	o.timescale = p.Float("timescale")
	o.work = p.Duration("work")
	o.majority = p.Bool("majority-select")
	o.static = p.Bool("static-next")
	o.horizon = p.PositiveDuration("horizon")
	o.bound = p.PositiveDuration("bound")
	o.loss, o.dup, o.reorder = p.Prob("loss"), p.Prob("dup"), p.Prob("reorder")
	lat := p.String("latency")
	if err := p.Err(); err != nil {
		return o, err
	}
	var err error
	if o.latMin, o.latMax, err = parseLatency(lat); err != nil {
		return o, err
	}
	if o.policy, err = BugPolicy(p.String("bug")); err != nil {
		return o, fmt.Errorf("parameter bug: %w", err)
	}
	if o.timescale <= 0 || o.timescale > 100 {
		return o, fmt.Errorf("parameter timescale=%v: want a factor in (0, 100]", o.timescale)
	}
	if o.work < 0 {
		return o, fmt.Errorf("parameter work=%v: want a duration >= 0", o.work)
	}
	if o.spacing < 0 {
		return o, fmt.Errorf("parameter spacing=%v: want a duration >= 0", o.spacing)
	}
	if o.itinerary == "" && o.width > o.nodes {
		return o, fmt.Errorf("parameter width=%d: a stage cannot have more nodes than the system (%d)", o.width, o.nodes)
	}
	return o, nil
}

func parseLatency(s string) (lo, hi time.Duration, err error) {
	a, b, ok := cutDash(s)
	if lo, err = time.ParseDuration(a); err == nil && ok {
		hi, err = time.ParseDuration(b)
	} else if err == nil {
		hi = lo
	}
	if err != nil || lo < 0 || hi < lo {
		return 0, 0, fmt.Errorf("parameter latency=%q: want MIN-MAX durations with 0 <= MIN <= MAX, e.g. 1ms-10ms", s)
	}
	return lo, hi, nil
}

func cutDash(s string) (string, string, bool) {
	for i := 1; i < len(s); i++ {
		if s[i] == '-' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func systemNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "n" + strconv.Itoa(i)
	}
	return names
}

// planting plants a broken variant from test code (planted_test.go): hooks set on the
// run's policy, and a wrapper around every node.
type planting struct {
	policy func(*eo.Policy)
	wrap   func(sim.Node) sim.Node
}

// build sets a scenario up. plan == nil means the swarm: every setting is drawn from
// the seed. pl, when set, plants a broken variant (tests).
func build(b *scenarios.Build, plan planFunc, extra []checker.Property, pl *planting) (*scenarios.Setup, error) {
	o, err := parse(b.Params)
	if err != nil {
		return nil, err
	}
	var limits *faults.Params
	var drawn *SwarmSettings
	if plan == nil {
		if err := swarmRejects(b.Params); err != nil {
			return nil, err
		}
		limits = swarmDraw(b.Seed, &o)
		drawn = swarmSettings(o)
	}
	names := systemNames(o.nodes)
	its, err := itineraries(b.Seed, o, names)
	if err != nil {
		return nil, err
	}
	cfg := &eo.Config{
		Names: names, Simple: o.simple, MajoritySelect: o.majority, StaticNext: o.static,
		Capacity: int32(o.capacity), Timing: eo.DefaultTiming().Scaled(o.timescale), CountMessages: true, Policy: o.policy,
		Work: o.work,
	}
	nodes := eo.System(cfg)
	if pl != nil {
		if pl.policy != nil {
			pl.policy(&cfg.Policy)
		}
		if pl.wrap != nil {
			for i := range nodes {
				build := nodes[i].New
				nodes[i].New = func() sim.Node { return pl.wrap(build()) }
			}
		}
	}
	e := &env{seed: b.Seed, names: names, horizon: o.horizon, cfg: cfg}
	fp, err := b.FaultPlan(func() (faults.Plan, error) {
		if limits != nil {
			return faults.Generate(b.Seed, names, *limits)
		}
		return plan(e)
	})
	if err != nil {
		return nil, err
	}
	if err := fp.Validate(names); err != nil {
		return nil, err
	}
	crashes := map[string][]crashWindow{}
	for _, e := range fp.Events {
		if e.IsCrash() {
			crashes[e.Node] = append(crashes[e.Node], windowOf(e))
		}
	}
	w := &workload{crashes: crashes, majority: o.majority, names: names, capacity: int32(o.capacity), simple: o.simple, static: o.static, permanent: permanentCrashes(fp), settle: fp.Settled(),
		quiet: len(fp.Events) == 0 && o.loss == 0 && o.dup == 0 && o.reorder == 0 && o.latMax < cfg.Timing.Alive,
		timed: timedOf(cfg.Timing, o.latMax, fp, o.loss > 0 || o.dup > 0 || o.reorder > 0)}
	var lastLaunch sim.Time
	for i, it := range its {
		at := sim.Time(time.Duration(i) * o.spacing).Add(time.Millisecond)
		if o.launches != nil {
			at = sim.Time(o.launches[i])
		}
		a := eo.Agent{ID: eo.AgentID(i + 1), Itinerary: it}
		lost, maybe := downAt(fp, names[it.Home()], at)
		w.agents = append(w.agents, agentInfo{agent: a, launch: at, lost: lost, maybeLost: maybe})
		lastLaunch = at
	}
	nw := sim.Network{Latency: sim.Uniform(o.latMin, o.latMax), Loss: o.loss, Duplicate: o.dup, Reorder: o.reorder}
	settle := fp.Settled().At
	until := max(settle, lastLaunch).Add(o.bound + time.Second)
	return &scenarios.Setup{
		Nodes:   nodes,
		Network: nw,
		Faults:  fp,
		Workload: func(k *sim.Kernel) {
			for _, ai := range w.agents {
				k.Inject(ai.launch, ai.agent.Itinerary.Home(), eo.Launch{Agent: ai.agent})
			}
		},
		Until:      until,
		Notes:      drawn.notes(),
		Properties: append(w.Properties(o.bound), ownPlanOnly(b, extra)...),
		Metrics: func(r *sim.Result) any {
			m := computeMetrics(r, w, fp)
			m.Swarm = drawn
			return m
		},
	}, nil
}

// ownPlanOnly returns a scenario's own properties when the run uses the scenario's
// own fault plan and no parameter other than bug and bound differs from its default:
// they state what that plan, with those timings, must lead to.
func ownPlanOnly(b *scenarios.Build, extra []checker.Property) []checker.Property {
	if b.Faults != nil {
		return nil
	}
	for _, nd := range b.Params.NonDefault() {
		if name, _, _ := strings.Cut(nd, "="); name != "bug" && name != "bound" {
			return nil
		}
	}
	return extra
}

// crashWindow is when a crash of the plan happened: at one instant for "crash", at
// some call in [from, to] for "crash-send" (the node's last call in its window, which
// only the run knows).
type crashWindow struct{ from, to sim.Time }

func windowOf(e faults.Event) crashWindow {
	w := crashWindow{sim.Time(e.At), sim.Time(e.At)}
	if e.Kind == "crash-send" {
		w.to = sim.Time(e.At + e.For)
	}
	return w
}

// permanentCrashes lists the crashes of plan never followed by a restart, each at
// the latest time it may have happened.
func permanentCrashes(plan faults.Plan) []permCrash {
	last := map[string]int{}
	for i, e := range plan.Events {
		if e.IsCrash() || e.Kind == "restart" {
			last[e.Node] = i
		}
	}
	var out []permCrash
	for i, e := range plan.Events {
		if e.IsCrash() && last[e.Node] == i {
			out = append(out, permCrash{node: e.Node, at: windowOf(e).to})
		}
	}
	return out
}

// downAt reports whether node is down at time t under plan (a fault at t happens
// before a launch at t: the kernel runs them in scheduling order); maybe, whether
// it may be down or up: t falls in the window of a crash-send, whose crash time
// only the run knows.
func downAt(plan faults.Plan, node string, t sim.Time) (down, maybe bool) {
	for _, e := range plan.Events {
		if sim.Time(e.At) > t {
			break
		}
		if e.Node == node {
			switch {
			case e.IsCrash():
				down, maybe = true, false
				if w := windowOf(e); t <= w.to {
					down, maybe = false, true
				}
			case e.Kind == "restart":
				down, maybe = false, false
			}
		}
	}
	return down, maybe
}

// itineraries returns one itinerary per agent: the fixed one, or random ones drawn
// from the seed (home = a random node; each later stage = width distinct random
// nodes in random priority order).
func itineraries(seed uint64, o options, names []string) ([]eo.Itinerary, error) {
	its := make([]eo.Itinerary, o.agents)
	if o.itinerary != "" {
		it, err := eo.ParseItinerary(o.itinerary, names, "seats")
		if err != nil {
			return nil, fmt.Errorf("parameter itinerary: %w", err)
		}
		for i := range its {
			its[i] = it
		}
		return its, nil
	}
	r := sim.Stream(seed, "exactlyonce-workload")
	for i := range its {
		it := eo.Itinerary{Stages: []eo.Stage{{Nodes: []eo.StageNode{{Node: sim.NodeID(r.IntN(o.nodes)), Rank: 1}}}}}
		for s := 1; s < o.stages; s++ {
			perm := r.Perm(o.nodes)
			st := eo.Stage{Pool: "seats"}
			for j := 0; j < o.width; j++ {
				st.Nodes = append(st.Nodes, eo.StageNode{Node: sim.NodeID(perm[j]), Rank: int32(j + 1)})
			}
			it.Stages = append(it.Stages, st)
		}
		if err := it.Validate(names); err != nil {
			return nil, fmt.Errorf("generated itinerary (a bug): %w", err)
		}
		its[i] = it
	}
	return its, nil
}

// swarmDrawn lists the parameters the swarm draws from the seed: setting one is an
// error rather than silently ignored. (protocol=simple is honoured: every run then
// uses the simple protocol; with the default, extended, the swarm draws simple for
// about 15% of the seeds.)
var swarmDrawn = []string{"nodes", "agents", "stages", "width", "capacity", "spacing", "timescale", "work",
	"majority-select", "static-next", "latency", "itinerary"}

func swarmRejects(p *scenarios.Params) error {
	for _, nd := range p.NonDefault() {
		if name, _, _ := strings.Cut(nd, "="); slices.Contains(swarmDrawn, name) {
			return fmt.Errorf("parameter %s: exactlyonce/swarm draws it from the seed (see the metrics' \"swarm\" settings); use another exactlyonce scenario to set it", name)
		}
	}
	return nil
}

// swarmDraw draws the swarm's settings from the seed (overriding the corresponding
// parameters) and returns the fault intensity limits, themselves drawn by
// faults.Swarm, with at most one node crashing for good (see workload.required for
// what EO-P3 then requires).
func swarmDraw(seed uint64, o *options) *faults.Params {
	r := sim.Stream(seed, "exactlyonce-swarm")
	o.nodes = 4 + r.IntN(4)               // 4..7
	o.agents = 2 + r.IntN(9)              // 2..10
	o.stages = 1 + r.IntN(5)              // 1..5 (1: the agent runs at home only)
	o.width = 1 + r.IntN(min(o.nodes, 5)) // 1..5
	o.capacity = r.IntN(5)                // 0..4
	// Launches spread over most of the fault window, so faults meet running agents.
	o.launches = make([]time.Duration, o.agents)
	for i := range o.launches {
		o.launches[i] = time.Millisecond + time.Duration(r.Int64Range(0, int64(o.horizon*3/4)))
	}
	slices.Sort(o.launches)
	o.timescale = 0.25 + 1.75*r.Float64()
	o.work = time.Duration(r.IntN(100)) * time.Millisecond
	o.majority = r.Bernoulli(0.5)
	o.static = r.Bernoulli(0.25)
	o.simple = o.simple || r.Bernoulli(0.15)
	o.latMin = time.Duration(r.IntN(3)) * time.Millisecond
	o.latMax = o.latMin + time.Duration(1+r.IntN(20))*time.Millisecond
	limits := faults.DefaultParams(o.horizon)
	limits.Crashes, limits.Partitions, limits.Spikes, limits.Skews = 8, 4, 4, 3
	limits.MaxStep, limits.MaxDriftPPM = 50*time.Millisecond, 50_000
	limits.MaxDown = (o.nodes - 1) / 2
	limits.Permanent = 1
	// Dimensions added later draw from a stream of their own, so every setting above
	// stays what it was for a seed. Crash-sends: a crash may cut a call's broadcast
	// short (PREPARE, COMMIT, VOTE, FORGET, I_AM_SELECTED reach some nodes only).
	// Long partitions, on some seeds: each side selects its own worker and votes, so
	// several orchestrators compete once it heals (COND_YES, HIGHER_PRIO, ties).
	// Quiet seeds: no fault at all and links faster than I_AM_ALIVE, where EO-8
	// promises that no observer suspects the worker.
	r2 := sim.Stream(seed, "exactlyonce-swarm-2")
	limits.CrashSendFrac = 0.5
	if r2.Bernoulli(0.3) {
		limits.MeanSplit = o.horizon / 3
	}
	if r2.Bernoulli(0.06) {
		p := faults.DefaultParams(o.horizon)
		p.Crashes, p.Partitions, p.Spikes = 0, 0, 0
		if alive := time.Duration(float64(eo.DefaultTiming().Alive) * o.timescale); o.latMax >= alive {
			o.latMin, o.latMax = 0, alive/2
		}
		return &p
	}
	p := faults.Swarm(seed, limits)
	return &p
}
