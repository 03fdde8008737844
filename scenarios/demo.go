package scenarios

import (
	"fmt"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/sim"
	"github.com/simrun-dev/simrun/sim/demo"
)

// The kernel's own demo protocol (package sim/demo): a counter service with client
// retries and server-side deduplication in stable storage.

var demoParams = []Param{
	{Name: "clients", Default: "3", Help: "number of clients"},
	{Name: "ops", Default: "30", Help: "operations per client"},
	{Name: "keys", Default: "a,b", Help: "comma-separated keys"},
	{Name: "retry", Default: "40ms", Help: "client re-send period"},
	{Name: "think", Default: "50ms", Help: "client pause between operations"},
	{Name: "horizon", Default: "2s", Help: "faults happen before this time"},
	{Name: "bound", Default: "1s", Help: "liveness: each operation returns within this of max(its call, the faults settling)"},
}

// DemoPlan draws a demo scenario's own fault plan from the seed for the named nodes.
type DemoPlan func(seed uint64, names []string, horizon time.Duration) (faults.Plan, error)

// DemoNoFaults is the empty plan.
func DemoNoFaults(uint64, []string, time.Duration) (faults.Plan, error) { return faults.Plan{}, nil }

// DemoFaults is demo/faults' plan: the seeded generator at default intensity with at
// most two nodes down at once.
func DemoFaults(seed uint64, names []string, horizon time.Duration) (faults.Plan, error) {
	p := faults.DefaultParams(horizon)
	p.MaxDown = 2
	return faults.Generate(seed, names, p)
}

// DemoSwarm is demo/swarm's plan: intensities drawn from the seed.
func DemoSwarm(seed uint64, names []string, horizon time.Duration) (faults.Plan, error) {
	limits := faults.DefaultParams(horizon)
	limits.Crashes, limits.Partitions, limits.Spikes, limits.Skews = 8, 4, 4, 3
	limits.MaxStep, limits.MaxDriftPPM = 20*time.Millisecond, 50_000
	limits.MaxDown = 2
	return faults.Generate(seed, names, faults.Swarm(seed, limits))
}

func init() {
	Register(&Scenario{
		Name: "demo/happy", Help: "demo counter service, no faults", Params: demoParams, Suite: true,
		Build: DemoBuild(DemoNoFaults, sim.Network{}, nil),
	})
	Register(&Scenario{
		Name: "demo/faults", Help: "demo counter service under crashes, partitions and latency spikes", Params: demoParams, Suite: true,
		Build: DemoBuild(DemoFaults, sim.Network{}, nil),
	})
	Register(&Scenario{
		Name: "demo/swarm", Help: "demo counter service, fault intensities drawn from the seed (swarm testing)", Params: demoParams, Suite: true,
		Build: DemoBuild(DemoSwarm, sim.Network{}, nil),
	})
	Register(&Scenario{
		Name: "demo/lossy", Help: "demo counter service with message loss, duplication and reordering on", Params: demoParams, Suite: true,
		Build: DemoBuild(DemoNoFaults, sim.Network{Loss: 0.1, Duplicate: 0.1, Reorder: 0.2}, nil),
	})
}

// DemoBuild returns the Build function of a demo scenario with the given fault plan
// generator and network. nodes, when set, replaces demo.System (tests use it to build
// deliberately broken variants of the protocol and check that the properties catch
// them).
func DemoBuild(gen DemoPlan, nw sim.Network, nodes func(cfg *demo.Config, clients int) []sim.NodeSpec) func(*Build) (*Setup, error) {
	if nodes == nil {
		nodes = demo.System
	}
	return func(b *Build) (*Setup, error) { return demoSetup(b, gen, nw, nodes) }
}

func demoSetup(b *Build, gen DemoPlan, nw sim.Network, system func(cfg *demo.Config, clients int) []sim.NodeSpec) (*Setup, error) {
	p := b.Params
	// Sizes are bounded so that a mistyped value is one line, not an exhausted
	// machine: 200 000 clients (a ring of 100 000 nodes runs in under a second),
	// and at most 10 million operations in all.
	clients := p.IntRange("clients", 1, 200_000)
	ops := p.IntRange("ops", 0, 1_000_000)
	keys := p.List("keys")
	retry := p.PositiveDuration("retry")
	think := p.Duration("think")
	horizon := p.PositiveDuration("horizon")
	bound := p.PositiveDuration("bound")
	if p.Err() != nil {
		return nil, p.Err()
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("parameter keys: at least one key")
	}
	if int64(clients)*int64(ops) > 10_000_000 {
		return nil, fmt.Errorf("parameters clients=%d and ops=%d: %d operations in all, more than the limit of 10 000 000", clients, ops, int64(clients)*int64(ops))
	}
	cfg := &demo.Config{Server: 0, Keys: keys, Retry: retry, Think: think, AddFrac: 60}
	nodes := system(cfg, clients)
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	plan, err := b.FaultPlan(func() (faults.Plan, error) { return gen(b.Seed, names, horizon) })
	if err != nil {
		return nil, err
	}
	nw.Latency = sim.Uniform(time.Millisecond, 10*time.Millisecond)
	return &Setup{
		Nodes:   nodes,
		Network: nw,
		Faults:  plan,
		Workload: func(k *sim.Kernel) {
			for c := 1; c <= clients; c++ {
				k.Inject(sim.Time(c)*sim.Time(time.Millisecond), sim.NodeID(c), demo.Begin{Ops: ops})
			}
		},
		// The last client starts after clients milliseconds: the run's
		// limit counts from there, or 100 000 clients end in a false livelock.
		MaxTime:    sim.Time(time.Duration(clients)*time.Millisecond + horizon + bound + time.Minute),
		Properties: DemoProperties(bound, clients),
	}, nil
}

// DemoProperties are the demo protocol's properties.
func DemoProperties(bound time.Duration, clients int) []checker.Property {
	return []checker.Property{
		{
			// Each (client, seq) is executed by the server at most once.
			Name: "demo/at-most-once", Class: checker.Safety,
			Check: func(r *checker.Run) error {
				type id struct {
					c sim.NodeID
					s int64
				}
				seen := map[id]sim.Time{}
				for _, o := range r.History().Kind("applied") {
					a := o.Value.(demo.Applied)
					if t, dup := seen[id{a.Client, a.Seq}]; dup {
						return fmt.Errorf("request %d of %s applied twice (at %v and %v)", a.Seq, r.Final[a.Client].Name, t, o.Time)
					}
					seen[id{a.Client, a.Seq}] = o.Time
				}
				r.Count(len(seen), 0)
				return nil
			},
		},
		{
			// Every reply a client accepts carries the value the server computed.
			Name: "demo/replies-match", Class: checker.Safety,
			Check: func(r *checker.Run) error {
				type id struct {
					c sim.NodeID
					s int64
				}
				applied := map[id]int64{}
				for _, a := range checker.Values[demo.Applied](r.History(), "applied") {
					applied[id{a.Client, a.Seq}] = a.Value
				}
				n := 0
				for _, ret := range checker.Values[demo.Return](r.History(), "return") {
					v, ok := applied[id{ret.Client, ret.Seq}]
					if !ok {
						return fmt.Errorf("%s got a reply to %d that the server never executed", r.Final[ret.Client].Name, ret.Seq)
					}
					if v != ret.Value {
						return fmt.Errorf("%s got %d for request %d, server computed %d", r.Final[ret.Client].Name, ret.Value, ret.Seq, v)
					}
					n++
				}
				r.Count(n, 0)
				return nil
			},
		},
		// The counters behave like one linearizable map of counters, checked key by key.
		checker.Linearizable("demo/linearizable", checker.Counters(), DemoOps, 0),
		Bounded("demo/completes", bound, func(r *checker.Run) []Item {
			// Every client performs all the operations it accepted (a Begin injected
			// while it was down is lost with its work); each returns within the bound.
			type id struct {
				c sim.NodeID
				s int64
			}
			var items []Item
			at := map[id]int{}
			calls := map[sim.NodeID]int{}
			owed := map[sim.NodeID]int{}
			for _, o := range r.History() {
				switch v := o.Value.(type) {
				case demo.Begun:
					owed[v.Client] += v.Ops
				case demo.Call:
					at[id{v.Client, v.Seq}] = len(items)
					calls[v.Client]++
					items = append(items, Item{Name: fmt.Sprintf("%s#%d", r.Final[v.Client].Name, v.Seq), Start: o.Time})
				case demo.Return:
					if i, ok := at[id{v.Client, v.Seq}]; ok && !items[i].Completed {
						items[i].Done, items[i].Completed = o.Time, true
					}
				}
			}
			for c := 1; c <= clients; c++ {
				for n := calls[sim.NodeID(c)]; n < owed[sim.NodeID(c)]; n++ {
					items = append(items, Item{Name: fmt.Sprintf("c%d#%d (never issued)", c, n+1)})
				}
			}
			return items
		}),
	}
}

// DemoOps pairs the demo's call and return observations into operations on
// checker.Counters, partitioned by key. A call still unanswered at the end of the run
// is pending. The server's "applied" observation is each operation's witnessed
// linearization point (checker.Operation.At): the check replays that order and
// searches only if it does not explain the history.
func DemoOps(r *checker.Run) ([]checker.Operation, error) {
	type id struct {
		c sim.NodeID
		s int64
	}
	ops, err := checker.Ops(r.History(), checker.CallReturn[demo.Call, demo.Return]{
		Call: "call", Return: "return",
		CallID:   func(c demo.Call) any { return id{c.Client, c.Seq} },
		ReturnID: func(v demo.Return) any { return id{v.Client, v.Seq} },
		Key:      func(c demo.Call) string { return c.Key },
		Input: func(c demo.Call) any {
			if c.Op == demo.OpAdd {
				return checker.CounterInput{Op: checker.CounterAdd, Key: c.Key, Delta: c.Arg}
			}
			return checker.CounterInput{Op: checker.CounterGet, Key: c.Key}
		},
		Output: func(_ demo.Call, v demo.Return) any { return v.Value },
	})
	if err != nil {
		return nil, err
	}
	calls := map[int64]id{} // call observation index → operation
	applied := map[id]int64{}
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case demo.Call:
			calls[o.Index] = id{v.Client, v.Seq}
		case demo.Applied:
			if _, dup := applied[id{v.Client, v.Seq}]; !dup {
				applied[id{v.Client, v.Seq}] = o.Index
			}
		}
	}
	for i := range ops {
		ops[i].At = applied[calls[ops[i].Call]]
	}
	return ops, nil
}
