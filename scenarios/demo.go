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

// maxDemoOps bounds a demo run's operations in all (clients × ops).
const maxDemoOps = 3_000_000

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
	// machine, and so that every size accepted runs: 200 000 clients (100 000 idle
	// clients take 2 KB each), and at most maxDemoOps operations in all (100 000
	// clients of 30 operations: 1.4-1.6 GB peak RSS and 23 s of CPU, simrun bench
	// Scale).
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
	if int64(clients)*int64(ops) > maxDemoOps {
		return nil, fmt.Errorf("parameters clients=%d and ops=%d: %d operations in all, more than the limit of 3 000 000", clients, ops, int64(clients)*int64(ops))
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
		MaxTime: sim.Time(time.Duration(clients)*time.Millisecond + horizon + bound + time.Minute),
		// Each client begins once, then calls, is applied and returns per operation.
		Observations: clients * (1 + 3*ops),
		// A fault-free run takes 2 + 3·ops - 1 events a client; retries after losses
		// and crashes add some. Four times that is a livelock, not a big run.
		MaxEvents:  max(10_000_000, 4*int64(clients)*int64(2+3*ops)),
		Properties: DemoProperties(bound, clients),
	}, nil
}

// DemoProperties are the demo protocol's properties. They index operations densely
// (demoIndex) instead of by maps of identities, so that checking a run of 100 000
// clients costs little beside its history.
func DemoProperties(bound time.Duration, clients int) []checker.Property {
	return []checker.Property{
		{
			// Each (client, seq) is executed by the server at most once.
			Name: "demo/at-most-once", Class: checker.Safety,
			Check: func(r *checker.Run) error {
				ix := newDemoIndex(r.History(), clients)
				seen := make([]sim.Time, ix.n()) // by slot: 1 + when it was applied, 0 if not yet
				n := 0
				for i := range r.History() {
					o := &r.History()[i]
					if o.Kind != "applied" {
						continue
					}
					a := o.Value.(demo.Applied)
					s := ix.slot(a.Client, a.Seq)
					seen = grown(seen, s)
					if seen[s] != 0 {
						return fmt.Errorf("request %d of %s applied twice (at %v and %v)", a.Seq, r.Final[a.Client].Name, seen[s]-1, o.Time)
					}
					seen[s] = o.Time + 1
					n++
				}
				r.Count(n, 0)
				return nil
			},
		},
		{
			// Every reply a client accepts carries the value the server computed.
			Name: "demo/replies-match", Class: checker.Safety,
			Check: func(r *checker.Run) error {
				ix := newDemoIndex(r.History(), clients)
				applied := make([]int64, ix.n()) // by slot: the value last computed
				done := make([]bool, ix.n())
				for i := range r.History() {
					if o := &r.History()[i]; o.Kind == "applied" {
						a := o.Value.(demo.Applied)
						s := ix.slot(a.Client, a.Seq)
						applied, done = grown(applied, s), grown(done, s)
						applied[s], done[s] = a.Value, true
					}
				}
				n := 0
				for i := range r.History() {
					o := &r.History()[i]
					if o.Kind != "return" {
						continue
					}
					ret := o.Value.(demo.Return)
					s := ix.slot(ret.Client, ret.Seq)
					if int(s) >= len(done) || !done[s] {
						return fmt.Errorf("%s got a reply to %d that the server never executed", r.Final[ret.Client].Name, ret.Seq)
					}
					if v := applied[s]; v != ret.Value {
						return fmt.Errorf("%s got %d for request %d, server computed %d", r.Final[ret.Client].Name, ret.Value, ret.Seq, v)
					}
					n++
				}
				r.Count(n, 0)
				return nil
			},
		},
		// The counters behave like one linearizable map of counters, checked key by key.
		demoLinearizable(clients),
		boundedList("demo/completes", bound, func(r *checker.Run) itemList {
			// Every client performs all the operations it accepted (a Begin injected
			// while it was down is lost with its work); each returns within the bound.
			h := r.History()
			ix := newDemoIndex(h, clients)
			n := ix.n()
			calls := make([]int32, 0, n) // the call observation of each item, in call order
			start, doneAt := make([]sim.Time, 0, n), make([]sim.Time, 0, n)
			completed := make([]bool, 0, n)
			itemOf := make([]int32, n) // by slot: 1 + the item of its latest call
			nCalls := make([]int, clients+1)
			owed := make([]int, clients+1)
			for i := range h {
				o := &h[i]
				switch v := o.Value.(type) {
				case demo.Begun:
					if c := int(v.Client); c >= 1 && c <= clients {
						owed[c] += v.Ops
					}
				case demo.Call:
					s := ix.slot(v.Client, v.Seq)
					itemOf = grown(itemOf, s)
					itemOf[s] = int32(len(calls)) + 1
					if c := int(v.Client); c >= 1 && c <= clients {
						nCalls[c]++
					}
					calls, start = append(calls, int32(i)), append(start, o.Time)
					doneAt, completed = append(doneAt, 0), append(completed, false)
				case demo.Return:
					s := ix.slot(v.Client, v.Seq)
					if int(s) < len(itemOf) && itemOf[s] != 0 {
						if it := itemOf[s] - 1; !completed[it] {
							doneAt[it], completed[it] = o.Time, true
						}
					}
				}
			}
			type never struct{ c, n int }
			var missing []never
			for c := 1; c <= clients; c++ {
				for n := nCalls[c]; n < owed[c]; n++ {
					missing = append(missing, never{c, n + 1})
				}
			}
			return itemList{
				n: len(calls) + len(missing),
				at: func(i int) Item {
					if i < len(calls) {
						return Item{Start: start[i], Done: doneAt[i], Completed: completed[i]}
					}
					return Item{}
				},
				name: func(i int) string {
					if i < len(calls) {
						v := h[calls[i]].Value.(demo.Call)
						return fmt.Sprintf("%s#%d", r.Final[v.Client].Name, v.Seq)
					}
					m := missing[i-len(calls)]
					return fmt.Sprintf("c%d#%d (never issued)", m.c, m.n)
				},
			}
		}),
	}
}

// demoLinearizable is the demo's linearizability property: checker.Linearizable over
// DemoOps, except that a history its witness explains (demoWitnessed) passes without
// building porcupine's operations. The verdict is the same either way; a run report
// (Run.Visualize) takes the full check, which draws the operations.
func demoLinearizable(clients int) checker.Property {
	full := checker.Linearizable("demo/linearizable", checker.Counters(), func(r *checker.Run) ([]checker.Operation, error) {
		return demoOps(r, clients)
	}, 0)
	fast := full
	fast.Check = func(r *checker.Run) error {
		if !r.Visualize && demoWitnessed(r.History(), clients) {
			n := 0
			for i := range r.History() {
				if r.History()[i].Kind == "call" {
					n++
				}
			}
			r.Note(fmt.Sprintf("%d operations checked (proved by their points)", n))
			r.Count(n, 0)
			return nil
		}
		return full.Check(r)
	}
	return fast
}

// demoWitnessed reports whether a demo history is linearizable by its witness, as
// checker.CheckLinearizable decides from DemoOps' points (Operation.At, the server's
// first "applied"): every operation that took effect did so between its call and its
// return, and each key's counter stepped in that order gives every reply. One pass over
// the history, with 13 bytes per operation. false means not proved this way (the full
// check decides: it may still be linearizable, or the history may be malformed).
func demoWitnessed(h checker.History, clients int) bool {
	const (
		called   = 1
		applied  = 2
		returned = 3
	)
	ix := newDemoIndex(h, clients)
	state := make([]uint8, ix.n())   // by slot
	callObs := make([]int32, ix.n()) // by slot: its call observation
	want := make([]int64, ix.n())    // by slot: the reply its point gives
	counters := map[string]int64{}
	for i := range h {
		o := &h[i]
		switch o.Kind {
		case "call":
			c, ok := o.Value.(demo.Call)
			if !ok {
				return false
			}
			s := ix.slot(c.Client, c.Seq)
			state, callObs, want = grown(state, s), grown(callObs, s), grown(want, s)
			if state[s] != 0 {
				return false // a second call of one identity: malformed
			}
			state[s], callObs[s] = called, int32(i)
		case "applied":
			a, ok := o.Value.(demo.Applied)
			if !ok {
				continue
			}
			s := ix.slot(a.Client, a.Seq)
			state, callObs, want = grown(state, s), grown(callObs, s), grown(want, s)
			switch state[s] {
			case 0:
				return false // applied before it was called (or never called)
			case called: // its point: the counter steps
				c := h[callObs[s]].Value.(demo.Call)
				if c.Op == demo.OpAdd {
					counters[c.Key] += c.Arg
				}
				want[s], state[s] = counters[c.Key], applied
			}
		case "return":
			v, ok := o.Value.(demo.Return)
			if !ok {
				return false
			}
			s := ix.slot(v.Client, v.Seq)
			state = grown(state, s)
			if state[s] != applied || want[s] != v.Value {
				return false // no point before it, a second return, or another value
			}
			state[s] = returned
		}
	}
	return true
}

// demoIndex numbers the operations of a demo history densely: operation seq of client
// c, when c is a client that issued at least seq calls, is slot base[c]+seq-1 (a
// correct client numbers its calls 1, 2, …); any other identity a broken variant makes
// up gets a slot of its own after those.
type demoIndex struct {
	base  []int32 // by client: the first slot; base[c+1]-base[c] is c's calls
	extra map[demoID]int32
	next  int32 // the next extra slot
}

type demoID struct {
	c sim.NodeID
	s int64
}

func newDemoIndex(h checker.History, clients int) *demoIndex {
	base := make([]int32, clients+2)
	for i := range h {
		if v, ok := h[i].Value.(demo.Call); ok && v.Client >= 1 && int(v.Client) <= clients {
			base[v.Client+1]++
		}
	}
	for c := 1; c < len(base); c++ {
		base[c] += base[c-1]
	}
	return &demoIndex{base: base, next: base[len(base)-1]}
}

// n is the number of dense slots (every call of a client): the properties size their
// arrays by it, so that only a broken variant's made-up identities grow them.
func (x *demoIndex) n() int { return int(x.base[len(x.base)-1]) }

// slot returns the slot of operation seq of client c.
func (x *demoIndex) slot(c sim.NodeID, seq int64) int32 {
	if c >= 0 && int(c)+1 < len(x.base) && seq >= 1 && seq <= int64(x.base[c+1]-x.base[c]) {
		return x.base[c] + int32(seq-1)
	}
	id := demoID{c, seq}
	s, ok := x.extra[id]
	if !ok {
		if x.extra == nil {
			x.extra = map[demoID]int32{}
		}
		s = x.next
		x.extra[id] = s
		x.next++
	}
	return s
}

// grown returns xs with room for index i (new elements zero).
func grown[T any](xs []T, i int32) []T {
	if int(i) < len(xs) {
		return xs
	}
	return append(xs, make([]T, int(i)+1-len(xs))...)
}

// DemoOps pairs the demo's call and return observations into operations on
// checker.Counters, partitioned by key. A call still unanswered at the end of the run
// is pending. The server's "applied" observation is each operation's witnessed
// linearization point (checker.Operation.At): the check replays that order and
// searches only if it does not explain the history.
func DemoOps(r *checker.Run) ([]checker.Operation, error) {
	clients := 0
	for i := range r.History() {
		if v, ok := r.History()[i].Value.(demo.Call); ok {
			clients = max(clients, int(v.Client))
		}
	}
	return demoOps(r, clients)
}

// demoOps is DemoOps for a run of the given number of clients.
func demoOps(r *checker.Run, clients int) ([]checker.Operation, error) {
	h := r.History()
	ix := newDemoIndex(h, clients)
	opOf := make([]int32, ix.n())               // by slot: 1 + its operation
	closed := make([]bool, ix.n())              // by slot: returned
	firstAt := make([]int64, ix.n())            // by slot: its first "applied" observation
	ops := make([]checker.Operation, 0, ix.n()) // every call of a client
	for i := range h {
		o := &h[i]
		switch o.Kind {
		case "call":
			c, ok := o.Value.(demo.Call)
			if !ok {
				return nil, fmt.Errorf("observation #%d: call payload is %T, want %T", o.Index, o.Value, c)
			}
			s := ix.slot(c.Client, c.Seq)
			opOf, closed = grown(opOf, s), grown(closed, s)
			if opOf[s] != 0 {
				return nil, fmt.Errorf("observation #%d: second call with identity %v", o.Index, demoID{c.Client, c.Seq})
			}
			in := checker.CounterInput{Op: checker.CounterGet, Key: c.Key}
			if c.Op == demo.OpAdd {
				in = checker.CounterInput{Op: checker.CounterAdd, Key: c.Key, Delta: c.Arg}
			}
			ops = append(ops, checker.Operation{Key: c.Key, Client: int(o.Node), Input: in, Call: o.Index, Pending: true})
			opOf[s] = int32(len(ops))
		case "return":
			v, ok := o.Value.(demo.Return)
			if !ok {
				return nil, fmt.Errorf("observation #%d: return payload is %T, want %T", o.Index, o.Value, v)
			}
			s := ix.slot(v.Client, v.Seq)
			opOf, closed = grown(opOf, s), grown(closed, s)
			switch {
			case closed[s]:
				return nil, fmt.Errorf("observation #%d: second return for identity %v", o.Index, demoID{v.Client, v.Seq})
			case opOf[s] == 0:
				return nil, fmt.Errorf("observation #%d: return for identity %v without a call", o.Index, demoID{v.Client, v.Seq})
			}
			closed[s] = true
			op := &ops[opOf[s]-1]
			op.Pending, op.Return, op.Output = false, o.Index, v.Value
		case "applied":
			a, ok := o.Value.(demo.Applied)
			if !ok {
				continue
			}
			s := ix.slot(a.Client, a.Seq)
			firstAt = grown(firstAt, s)
			if firstAt[s] == 0 {
				firstAt[s] = o.Index
			}
		}
	}
	for s, op := range opOf {
		if op != 0 && s < len(firstAt) {
			ops[op-1].At = firstAt[s]
		}
	}
	return ops, nil
}
