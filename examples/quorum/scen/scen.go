// Package scen registers the quorum register's scenarios and model with simrun (an
// outside project: only simrun's public packages).
package scen

import (
	"fmt"
	"time"

	"example.com/quorum/quorum"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

var params = []scenarios.Param{
	{Name: "replicas", Default: "3", Help: "replicas (a majority must be up)"},
	{Name: "clients", Default: "3", Help: "clients"},
	{Name: "ops", Default: "10", Help: "operations per client"},
	{Name: "bug", Default: "none", Help: "none, or no-writeback (reads skip QR-3's write-back)"},
}

func init() {
	for _, v := range []struct {
		name, help string
		suite      bool
		plan       func(seed uint64, names []string) (faults.Plan, error)
	}{
		{"happy", "3 replicas, 3 clients reading and writing, no faults", true,
			func(uint64, []string) (faults.Plan, error) { return faults.Plan{}, nil }},
		{"faults", "a minority of replicas crashing and restarting, partitions, spikes (from the seed)", true,
			func(seed uint64, names []string) (faults.Plan, error) {
				p := faults.DefaultParams(time.Second)
				p.MaxDown = (len(names) - 1) / 2
				return faults.Generate(seed, names, p)
			}},
		{"swarm", "like faults, with every intensity drawn from the seed", false,
			func(seed uint64, names []string) (faults.Plan, error) {
				p := faults.DefaultParams(time.Second)
				p.MaxDown = (len(names) - 1) / 2
				return faults.Generate(seed, names, faults.Swarm(seed, p))
			}},
	} {
		v := v
		scenarios.Register(&scenarios.Scenario{Name: "quorum/" + v.name, Help: v.help, Params: params, Suite: v.suite,
			Build: func(b *scenarios.Build) (*scenarios.Setup, error) { return setup(b, v.plan) }})
	}
	model.Register(model.Model{
		Name: "quorum",
		Help: "3 replicas, a writer and two readers, crash budget 1: reads never go back in time",
		Params: []model.Param{
			{Name: "crashes", Default: "1", Help: "crash budget over the replicas"},
			{Name: "bug", Default: "none", Help: "none, or no-writeback"},
		},
		Build: func(p *model.Params) (model.System, error) {
			crashes, bug := p.IntRange("crashes", 0, 2), p.String("bug")
			if p.Err() != nil {
				return nil, p.Err()
			}
			if bug != "none" && bug != "no-writeback" {
				return nil, fmt.Errorf("parameter bug=%q: want none or no-writeback", bug)
			}
			return System(crashes, bug == "no-writeback"), nil
		},
	})
}

func nodes(replicas int, ops [][]quorum.Op, retry time.Duration, noWriteBack bool) []sim.NodeSpec {
	var ns []sim.NodeSpec
	var ids []sim.NodeID
	for i := 0; i < replicas; i++ {
		ids = append(ids, sim.NodeID(i))
		ns = append(ns, sim.NodeSpec{Name: fmt.Sprintf("r%d", i+1), New: func() sim.Node { return &quorum.Replica{} }})
	}
	for i, os := range ops {
		os := os
		ns = append(ns, sim.NodeSpec{Name: fmt.Sprintf("c%d", i+1), New: func() sim.Node {
			return &quorum.Client{Replicas: ids, Ops: os, Retry: retry, NoWriteBack: noWriteBack}
		}})
	}
	return ns
}

func setup(b *scenarios.Build, plan func(uint64, []string) (faults.Plan, error)) (*scenarios.Setup, error) {
	p := b.Params
	nr, nc, nops := p.IntRange("replicas", 1, 9), p.IntRange("clients", 1, 20), p.IntRange("ops", 0, 1000)
	bug := p.String("bug")
	if p.Err() != nil {
		return nil, p.Err()
	}
	if bug != "none" && bug != "no-writeback" {
		return nil, fmt.Errorf("parameter bug=%q: want none or no-writeback", bug)
	}
	var ops [][]quorum.Op
	for c := 0; c < nc; c++ {
		r := sim.Stream(b.Seed, "quorum-ops", int64(c))
		var os []quorum.Op
		for i := 0; i < nops; i++ {
			os = append(os, quorum.Op{Write: r.Float64() < 0.4, Val: int64(100*(c+1) + i)})
		}
		ops = append(ops, os)
	}
	ns := nodes(nr, ops, 30*time.Millisecond, bug == "no-writeback")
	var reps []string
	for i := 0; i < nr; i++ {
		reps = append(reps, ns[i].Name)
	}
	fp, err := b.FaultPlan(func() (faults.Plan, error) { return plan(b.Seed, reps) })
	if err != nil {
		return nil, err
	}
	until := max(sim.Time(2*time.Second), fp.Settled().At).Add(3 * time.Second)
	return &scenarios.Setup{
		Nodes: ns, Network: sim.Network{Latency: sim.Uniform(time.Millisecond, 10*time.Millisecond)}, Faults: fp,
		Workload: func(k *sim.Kernel) {
			for c := 0; c < nc; c++ {
				k.Inject(sim.Time(time.Millisecond), sim.NodeID(nr+c), quorum.Begin{})
			}
		},
		Until: until, MaxTime: until + sim.Time(time.Second),
		Properties: []checker.Property{
			checker.Linearizable("quorum/linearizable", checker.Register[int64](0), ops2, 0),
			{Name: "quorum/tags-grow", Class: checker.Safety, Check: tagsGrow},
			scenarios.Bounded("quorum/completes", 2*time.Second, items),
		},
	}, nil
}

// ops2 turns calls and returns into register operations.
func ops2(r *checker.Run) ([]checker.Operation, error) {
	return checker.Ops(r.History(), checker.CallReturn[quorum.Call, quorum.Return]{
		Call: "call", Return: "return",
		CallID:   func(c quorum.Call) any { return [2]int64{int64(c.Client), int64(c.N)} },
		ReturnID: func(x quorum.Return) any { return [2]int64{int64(x.Client), int64(x.N)} },
		Input: func(c quorum.Call) any {
			if c.Op.Write {
				return checker.RegisterInput[int64]{Op: checker.RegWrite, Value: c.Op.Val}
			}
			return checker.RegisterInput[int64]{Op: checker.RegRead}
		},
		Output: func(c quorum.Call, x quorum.Return) any {
			if c.Op.Write {
				return true
			}
			return x.Val
		},
	})
}

// tagsGrow: a replica never stores an older tag than it had (QR-1).
func tagsGrow(r *checker.Run) error {
	last := map[sim.NodeID]quorum.Tag{}
	n := 0
	for _, o := range r.History() {
		if t, ok := o.Value.(quorum.Tag); ok && o.Kind == "stored" {
			if t.Less(last[o.Node]) {
				return fmt.Errorf("%s stored tag %v after %v", r.Final[o.Node].Name, t, last[o.Node])
			}
			last[o.Node] = t
			n++
		}
	}
	r.Note(fmt.Sprintf("%d stores checked", n))
	return nil
}

func items(r *checker.Run) []scenarios.Item {
	var its []scenarios.Item
	open := map[string]int{}
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case quorum.Call:
			open[fmt.Sprintf("%d/%d", v.Client, v.N)] = len(its)
			its = append(its, scenarios.Item{Name: fmt.Sprintf("c%d op %d", v.Client, v.N), Start: o.Time})
		case quorum.Return:
			if i, ok := open[fmt.Sprintf("%d/%d", v.Client, v.N)]; ok {
				its[i].Completed, its[i].Done = true, o.Time
			}
		}
	}
	return its
}

// Ghost is the model's monitor: the newest tag a completed read returned, and for
// each read in progress the newest completed-read tag when it started.
type Ghost struct {
	Newest quorum.Tag
	Floor  map[int32]quorum.Tag // client → floor at its read's call
	Reads  int
	Stale  bool
}

func fold(g any, o sim.Observation) any {
	x := g.(Ghost)
	switch v := o.Value.(type) {
	case quorum.Call:
		if !v.Op.Write {
			f := make(map[int32]quorum.Tag, len(x.Floor)+1)
			for k, t := range x.Floor {
				f[k] = t
			}
			f[int32(v.Client)] = x.Newest
			x.Floor = f
		}
	case quorum.Return:
		if !v.Op.Write {
			x.Reads++
			if v.Tag.Less(x.Floor[int32(v.Client)]) {
				x.Stale = true
			}
			if x.Newest.Less(v.Tag) {
				x.Newest = v.Tag
			}
		}
	}
	return x
}

// System is the model-checked configuration: 3 replicas, a writer writing once and
// two readers reading once each, each client using its own majority (the writer and
// the first reader r1 and r2, the second reader r2 and r3: any majority is allowed,
// and fixing them keeps the space small); every message order and a crash of a
// replica.
func System(crashes int, noWriteBack bool) *model.Actors {
	ops := [][]quorum.Op{{{Write: true, Val: 7}}, {{}}, {{}}}
	ns := nodes(3, ops, 0, noWriteBack)
	for i, rs := range [][]sim.NodeID{{0, 1}, {0, 1}, {1, 2}} {
		rs := rs
		op, nwb := ops[i], noWriteBack
		ns[3+i].New = func() sim.Node { return &quorum.Client{Replicas: rs, Group: 3, Ops: op, NoWriteBack: nwb} }
	}
	return &model.Actors{
		Name:    "quorum",
		Nodes:   ns,
		Inject:  []model.Injection{{To: 3, Msg: quorum.Begin{}}, {To: 4, Msg: quorum.Begin{}}, {To: 5, Msg: quorum.Begin{}}},
		Crashes: model.Crashes{Budget: crashes, Nodes: []sim.NodeID{0, 1, 2}},
		Ghost:   model.Ghost{Init: Ghost{}, Fold: fold},
		Properties: []model.Property[*model.State]{
			model.Always("reads never go back in time", func(s *model.State) bool { return !model.GhostAs[Ghost](s).Stale }),
			model.Sometimes("both reads return", func(s *model.State) bool { return model.GhostAs[Ghost](s).Reads == 2 }),
		},
	}
}
