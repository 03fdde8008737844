// Package rpscen holds the replication scenarios (protocols/replication): a replica
// group with lookup registries serving clients, through crashes of replicas and
// registries, and the properties every run checks.
package rpscen

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

var params = []scenarios.Param{
	{Name: "replicas", Default: "3", Help: "replicas in the group"},
	{Name: "registries", Default: "2", Help: "lookup registries"},
	{Name: "clients", Default: "2", Help: "clients"},
	{Name: "ops", Default: "20", Help: "operations per client"},
	{Name: "period", Default: "50ms", Help: "ping period (§5.2.2)"},
	{Name: "lease", Default: "300ms", Help: "registration lease (renewed every third)"},
	{Name: "retry", Default: "150ms", Help: "client re-send period"},
	{Name: "bound", Default: "5s", Help: "every operation returns within this after the faults settle"},
	{Name: "bug", Default: "none", Help: "plant a bug: none, no-dup, ack-early, no-stepdown"},
}

type kind struct {
	name, help string
	suite      bool
	plan       func(b *scenarios.Build, reps, regs []string) (faults.Plan, error)
}

var kinds = []kind{
	{"basic", "a group of 3 replicas, 2 registries and 2 clients, no faults: the first replica to find no primary with the minimum ID becomes primary", true,
		func(*scenarios.Build, []string, []string) (faults.Plan, error) { return faults.Plan{}, nil }},
	{"crashes", "each replica crashes in turn and restarts (the primary among them): failover by minimum registration ID, duplicate table and backups carry every acknowledged request", true,
		func(b *scenarios.Build, reps, regs []string) (faults.Plan, error) {
			var p faults.Plan
			for i, n := range reps {
				at := 300*time.Millisecond + time.Duration(i)*900*time.Millisecond
				p.Events = append(p.Events, faults.Event{At: faults.Duration(at), Kind: "crash", Node: n}, faults.Event{At: faults.Duration(at + 500*time.Millisecond), Kind: "restart", Node: n})
			}
			slices.SortStableFunc(p.Events, func(a, b faults.Event) int { return int(a.At - b.At) })
			return p, nil
		}},
	{"registry-crash", "a lookup registry crashes for good: the replicas go on through the other", true,
		func(b *scenarios.Build, reps, regs []string) (faults.Plan, error) {
			return faults.Plan{Events: []faults.Event{{At: faults.Duration(200 * time.Millisecond), Kind: "crash", Node: regs[0]}}}, nil
		}},
	{"partition", "outside the thesis' model: each replica in turn is cut off from the registries and the other replicas for 1.5 s, longer than a lease (clients stay with it); the primary among them must step down", false,
		func(b *scenarios.Build, reps, regs []string) (faults.Plan, error) {
			var p faults.Plan
			for i, n := range reps {
				at := 300*time.Millisecond + time.Duration(i)*2500*time.Millisecond
				p.Events = append(p.Events, faults.Event{At: faults.Duration(at), Kind: "partition", Groups: [][]string{append([]string{n}, clientsOf(b)...)}},
					faults.Event{At: faults.Duration(at + 1500*time.Millisecond), Kind: "heal"})
			}
			return p, nil
		}},
	{"swarm", "crashes of a minority of replicas and of registries at a time, drawn from the seed (the thesis' fault model: crash faults, reliable links)", true,
		func(b *scenarios.Build, reps, regs []string) (faults.Plan, error) {
			l := faults.DefaultParams(3 * time.Second)
			l.Partitions, l.Spikes = 0, 0
			l.Crashes, l.MaxDown = 4, (len(reps)-1)/2
			l.MeanDown = 600 * time.Millisecond
			l.Start = 200 * time.Millisecond
			p, err := faults.Generate(b.Seed, reps, faults.Swarm(b.Seed, l))
			if err != nil || len(regs) < 2 {
				return p, err
			}
			r := sim.Stream(b.Seed, "registry-crash")
			if r.Float64() < 0.5 {
				at := 300*time.Millisecond + time.Duration(r.Int64Range(0, int64(2*time.Second)))
				reg := regs[int(r.Int64Range(0, int64(len(regs)-1)))]
				p.Events = append(p.Events, faults.Event{At: faults.Duration(at), Kind: "crash", Node: reg},
					faults.Event{At: faults.Duration(at + 400*time.Millisecond), Kind: "restart", Node: reg})
				slices.SortStableFunc(p.Events, func(a, b faults.Event) int { return int(a.At - b.At) })
			}
			return p, nil
		}},
}

func clientsOf(b *scenarios.Build) []string {
	var cs []string
	for i := 1; i <= b.Params.IntRange("clients", 1, 50); i++ {
		cs = append(cs, fmt.Sprintf("c%d", i))
	}
	return cs
}

func init() {
	for _, k := range kinds {
		k := k
		scenarios.Register(&scenarios.Scenario{Name: "replication/" + k.name, Help: k.help, Params: params, Suite: k.suite,
			Build: func(b *scenarios.Build) (*scenarios.Setup, error) { return setup(b, k) }})
	}
}

// Policy returns the bug a -p bug=… value names.
func Policy(name string) (*rp.Policy, error) {
	switch name {
	case "none":
		return nil, nil
	case "no-dup":
		return &rp.Policy{NoDupCheck: true}, nil
	case "ack-early":
		return &rp.Policy{AckEarly: true}, nil
	case "no-stepdown":
		return &rp.Policy{NoStepDown: true}, nil
	}
	return nil, fmt.Errorf("parameter bug=%q: want none, no-dup, ack-early or no-stepdown", name)
}

func setup(b *scenarios.Build, k kind) (*scenarios.Setup, error) {
	p := b.Params
	nr, ng, nc := p.IntRange("replicas", 1, 9), p.IntRange("registries", 1, 5), p.IntRange("clients", 1, 50)
	ops := p.IntRange("ops", 0, 10_000)
	period, lease, retry, bound := p.PositiveDuration("period"), p.PositiveDuration("lease"), p.PositiveDuration("retry"), p.PositiveDuration("bound")
	pol, err := Policy(p.String("bug"))
	if err != nil {
		return nil, err
	}
	if p.Err() != nil {
		return nil, p.Err()
	}
	var reps, regs []string
	o := &rp.Options{Group: "worklist", Period: period, Lease: lease, Policy: pol}
	var nodes []sim.NodeSpec
	for i := 1; i <= ng; i++ {
		n := fmt.Sprintf("r%d", i)
		regs = append(regs, n)
		o.Registries = append(o.Registries, sim.NodeID(len(nodes)))
		nodes = append(nodes, sim.NodeSpec{Name: n, New: rp.NewRegistry()})
	}
	first := len(nodes)
	for i := 1; i <= nr; i++ {
		n := fmt.Sprintf("p%d", i)
		reps = append(reps, n)
		nodes = append(nodes, sim.NodeSpec{Name: n, New: rp.NewReplica(o)})
	}
	firstClient := len(nodes)
	for i := 1; i <= nc; i++ {
		r := sim.Stream(b.Seed, "rp-ops", int64(i))
		var os []rp.Op
		for j := 0; j < ops; j++ {
			op := rp.Op{Key: fmt.Sprintf("k%d", r.Int64Range(1, 2))}
			if r.Float64() < 0.5 {
				op.Write, op.Val = true, int64(i*1000+j+1)
			}
			os = append(os, op)
		}
		nodes = append(nodes, sim.NodeSpec{Name: fmt.Sprintf("c%d", i), New: rp.NewClient(o, os, retry)})
	}
	plan, err := b.FaultPlan(func() (faults.Plan, error) { return k.plan(b, reps, regs) })
	if err != nil {
		return nil, err
	}
	settled := plan.Settled().At
	until := max(sim.Time(3*time.Second), settled).Add(bound + time.Second)
	e := &env{first: first, firstClient: firstClient, replicas: nr, period: period, lease: lease, plan: plan}
	return &scenarios.Setup{
		Nodes: nodes, Network: sim.Network{Latency: sim.Uniform(time.Millisecond, 8*time.Millisecond)}, Faults: plan,
		Workload: func(kk *sim.Kernel) {
			for i := 0; i < nc; i++ {
				kk.Inject(sim.Time(100*time.Millisecond), sim.NodeID(firstClient+i), rp.Go{})
			}
		},
		Until: until, MaxTime: until + sim.Time(time.Second),
		Properties: []checker.Property{
			{Name: "RP-P1 at most once", Class: checker.Safety, Check: e.atMostOnce},
			{Name: "RP-P2 single primary", Class: checker.Safety, NeedsCompleteRun: true, Check: e.singlePrimary},
			checker.LinearizableKeyed("RP-P3 linearizable", func(string) porcupineModel { return registerModel() }, e.ops, 0),
			{Name: "RP-P4 no acknowledged request lost", Class: checker.Safety, NeedsCompleteRun: true, Check: e.noLostAck},
			{Name: "RP-P4 backups equal the primary", Class: checker.Safety, NeedsCompleteRun: true, Check: e.backupsEqual},
			scenarios.Bounded("RP-P1 every operation returns", bound, e.items),
		},
	}, nil
}

// env holds what the properties need.
type env struct {
	first, firstClient, replicas int
	period, lease                time.Duration
	plan                         faults.Plan
}

// RP-P1: no request executed twice with effect: once a backup applied a request's
// result (it was committed), no primary executes it again (the duplicate table
// survives failover).
func (e *env) atMostOnce(r *checker.Run) error {
	committed := map[string]bool{}
	n := 0
	for _, o := range r.History() {
		v, ok := o.Value.(rp.Exec)
		if !ok {
			continue
		}
		k := fmt.Sprintf("c%d/%d", v.Client, v.Seq)
		switch o.Kind {
		case rp.ObsApply:
			committed[k] = true
		case rp.ObsExec:
			n++
			if committed[k] {
				return fmt.Errorf("request %s executed again by %s after it was committed", k, r.Final[o.Node].Name)
			}
		}
	}
	r.Note(fmt.Sprintf("%d executions checked", n))
	return nil
}

// RP-P2: every interval during which two replicas both held the primary role is
// measured and reported; none lasts longer than 5 ping periods and a lease, and after
// stabilization (the faults settled, plus the same) there is none. A crash ends a
// replica's role.
func (e *env) singlePrimary(r *checker.Run) error {
	type span struct {
		node     int
		from, to sim.Time
	}
	open := map[int]sim.Time{}
	var spans []span
	crashes := map[string][]sim.Time{}
	for _, ev := range e.plan.Events {
		if ev.Kind == "crash" {
			crashes[ev.Node] = append(crashes[ev.Node], sim.Time(ev.At))
		}
	}
	endAt := func(node int, from, to sim.Time) sim.Time {
		for _, c := range crashes[r.Final[node].Name] {
			if c >= from && c < to {
				return c
			}
		}
		return to
	}
	for _, o := range r.History() {
		v, ok := o.Value.(rp.Role)
		if !ok {
			continue
		}
		n := int(o.Node)
		if from, was := open[n]; was {
			spans = append(spans, span{n, from, endAt(n, from, o.Time)})
			delete(open, n)
		}
		if v.Primary {
			open[n] = o.Time
		}
	}
	for n, from := range open {
		spans = append(spans, span{n, from, endAt(n, from, r.Time)})
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.from - b.from) })
	stable := r.Settled.Add(5*e.period + e.lease)
	var worst time.Duration
	windows := 0
	for i, a := range spans {
		for _, b := range spans[i+1:] {
			lo, hi := max(a.from, b.from), min(a.to, b.to)
			if a.node == b.node || lo >= hi {
				continue
			}
			windows++
			worst = max(worst, hi.Sub(lo))
			if hi > stable {
				return fmt.Errorf("%s and %s were both primary from %v to %v, after stabilization at %v", r.Final[a.node].Name, r.Final[b.node].Name, lo, hi, stable)
			}
			// verify_primary resolves a race within 5 periods (§5.2.4); a primary cut
			// off from the registries steps down within a lease: no dual window lasts
			// longer than both.
			if limit := 5*e.period + e.lease; hi.Sub(lo) > limit {
				return fmt.Errorf("%s and %s were both primary for %v (from %v), longer than 5 ping periods and a lease (%v)", r.Final[a.node].Name, r.Final[b.node].Name, hi.Sub(lo), lo, limit)
			}
		}
	}
	r.Note(fmt.Sprintf("%d primary terms, %d dual-primary windows (longest %v)", len(spans), windows, worst))
	return nil
}

// ops turns client calls and returns into register operations per key.
func (e *env) ops(r *checker.Run) ([]checker.Operation, error) {
	calls := map[string]sim.Observation{}
	var out []checker.Operation
	for _, o := range r.History() {
		v, ok := o.Value.(rp.ClientOp)
		if !ok {
			continue
		}
		k := fmt.Sprintf("%d/%d", v.Client, v.Seq)
		switch o.Kind {
		case rp.ObsCall:
			calls[k] = o
		case rp.ObsReturn:
			c, ok := calls[k]
			if !ok {
				return nil, fmt.Errorf("return without call: %s", k)
			}
			delete(calls, k)
			out = append(out, regOp(v, c.Index, o.Index, false))
		}
	}
	for _, k := range sortedKeys(calls) {
		c := calls[k]
		out = append(out, regOp(c.Value.(rp.ClientOp), c.Index, 0, true))
	}
	return out, nil
}

// RP-P4: every acknowledged request is in the duplicate table of the final primary
// (it survived every failover), with the response the client got.
func (e *env) noLostAck(r *checker.Run) error {
	prim := e.primaries(r)
	if len(prim) != 1 {
		r.Note(fmt.Sprintf("skipped: %d primaries at the end", len(prim)))
		return nil
	}
	st := prim[0]
	n := 0
	for _, o := range r.History() {
		v, ok := o.Value.(rp.ClientOp)
		if !ok || o.Kind != rp.ObsReturn {
			continue
		}
		n++
		k := fmt.Sprintf("%d/%d", v.Client, v.Seq)
		got, ok := st.S.Dup[k]
		if !ok {
			return fmt.Errorf("acknowledged request %s (%+v) is not in the final primary's duplicate table: lost", k, v.Op)
		}
		if got != v.Val {
			return fmt.Errorf("acknowledged request %s answered %d, the primary recorded %d", k, v.Val, got)
		}
	}
	r.Note(fmt.Sprintf("%d acknowledged requests checked", n))
	return nil
}

// RP-P4: at quiescence every replica that is up holds the primary's state.
func (e *env) backupsEqual(r *checker.Run) error {
	prim := e.primaries(r)
	if len(prim) != 1 {
		return nil
	}
	var errs []error
	for i := e.first; i < e.first+e.replicas; i++ {
		f := r.Final[i]
		rep, ok := f.State.(*rp.Replica)
		if !ok || !f.Up || rep.S.Primary {
			continue
		}
		if rep.S.Applied != prim[0].S.Applied || fmt.Sprint(rep.S.Store) != fmt.Sprint(prim[0].S.Store) {
			errs = append(errs, fmt.Errorf("%s holds %d requests %v, the primary %d %v", f.Name, rep.S.Applied, rep.S.Store, prim[0].S.Applied, prim[0].S.Store))
		}
	}
	return errors.Join(errs...)
}

func (e *env) primaries(r *checker.Run) []*rp.Replica {
	var out []*rp.Replica
	for i := e.first; i < e.first+e.replicas; i++ {
		if rep, ok := r.Final[i].State.(*rp.Replica); ok && r.Final[i].Up && rep.S.Primary {
			out = append(out, rep)
		}
	}
	return out
}

func (e *env) items(r *checker.Run) []scenarios.Item {
	var items []scenarios.Item
	open := map[string]int{}
	for _, o := range r.History() {
		v, ok := o.Value.(rp.ClientOp)
		if !ok {
			continue
		}
		k := fmt.Sprintf("c%d/%d", v.Client, v.Seq)
		switch o.Kind {
		case rp.ObsCall:
			open[k] = len(items)
			items = append(items, scenarios.Item{Name: "request " + k, Start: o.Time})
		case rp.ObsReturn:
			if i, ok := open[k]; ok {
				items[i].Completed, items[i].Done = true, o.Time
			}
		}
	}
	return items
}
