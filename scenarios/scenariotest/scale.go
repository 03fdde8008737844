package scenariotest

import (
	"fmt"
	"runtime"
	"time"

	"github.com/simrun-dev/simrun/internal/procmem"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
	"github.com/simrun-dev/simrun/sim/demo"
)

// Scale benchmark settings: the scale target of the design (simulations of 100 000
// nodes in at most 2 GB, at most 20 KB per idle node, linear in nodes plus events) on
// the demo, and within 60 s on one core.
const (
	ScaleScenario = "demo/happy"
	ScaleClients  = 100_000
	ScaleOps      = 30 // the demo's default operations per client
	ScaleTarget   = 2 << 30
	ScaleIdleNode = 20 << 10
	ScaleSeconds  = 60
)

// ScaleRow is one measured run of the scale benchmark beside its reference.
type ScaleRow struct {
	Name, Reference string
	Nodes           int
	Events          int64
	Run, Ref        procmem.Usage
}

// PerNode is the run's peak resident memory per node.
func (r ScaleRow) PerNode() float64 { return float64(r.Run.Peak) / float64(r.Nodes) }

// MemRatio is the run's peak over the reference's (growth over each one's base).
func (r ScaleRow) MemRatio() float64 {
	return float64(r.Run.Peak-r.Run.Base) / float64(max(r.Ref.Peak-r.Ref.Base, 1))
}

// CPURatio is the run's CPU time over the reference's.
func (r ScaleRow) CPURatio() float64 { return float64(r.Run.CPU) / float64(max(r.Ref.CPU, 1)) }

// Scale runs ScaleScenario with clients clients of ops operations each, on one core
// (GOMAXPROCS=1) and with the collector set as the simrun command sets it
// (scenarios.TuneGC), and measures it beside its reference: the same number of
// observations, of the demo's payload types, appended to one bare history — the
// memory any simulator keeping the run's history for its checkers needs, and the time
// it takes to build it. With ops = 0 the nodes stay idle (each takes one Begin of no
// work); the reference is then a bare kernel with as many nodes that do nothing.
func Scale(clients, ops int) (ScaleRow, error) {
	defer scenarios.TuneGC()()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	row := ScaleRow{Name: fmt.Sprintf("%s clients=%d ops=%d", ScaleScenario, clients, ops), Nodes: clients + 1}
	var rep *scenarios.Report
	var err error
	row.Run, err = procmem.Measure(func() error {
		rep, err = scenarios.RunName(ScaleScenario, scenarios.Options{Seed: 1, Params: map[string]string{
			"clients": fmt.Sprint(clients), "ops": fmt.Sprint(ops)}})
		if err == nil && rep.Failed() {
			err = fmt.Errorf("%s: %s", row.Name, rep.Verdict.Detail)
		}
		return err
	})
	if err != nil {
		return row, err
	}
	row.Events = rep.Result.Events
	obs := len(rep.Result.History)
	rep = nil
	if ops == 0 {
		row.Reference = fmt.Sprintf("bare kernel, %d idle nodes", row.Nodes)
		row.Ref, err = procmem.Measure(func() error { return idleKernel(row.Nodes) })
		return row, err
	}
	row.Reference = fmt.Sprintf("bare history of %d observations", obs)
	var keep []sim.Observation
	row.Ref, err = procmem.Measure(func() error {
		keep = bareHistory(obs)
		return nil
	})
	runtime.KeepAlive(keep)
	return row, err
}

// bareHistory makes n observations with the demo's payloads (a call, an apply and a
// return per operation) in one slice of their exact size.
func bareHistory(n int) []sim.Observation {
	h := make([]sim.Observation, 0, n)
	for i := range n {
		o := sim.Observation{Index: int64(i), Time: sim.Time(i), Local: sim.Time(i), Node: sim.NodeID(i % 1000)}
		switch i % 3 {
		case 0:
			o.Kind, o.Value = "call", demo.Call{Client: o.Node, Seq: int64(i), Op: demo.OpAdd, Key: "a", Arg: 1}
		case 1:
			o.Kind, o.Value = "applied", demo.Applied{Client: o.Node, Seq: int64(i), Key: "a", Value: int64(i)}
		default:
			o.Kind, o.Value = "return", demo.Return{Client: o.Node, Seq: int64(i), Value: int64(i)}
		}
		h = append(h, o)
	}
	return h
}

type idle struct{}

func (idle) Handle(sim.Input, *sim.Outbox) {}

// idleKernel runs a kernel of n nodes that do nothing (each handles its start).
func idleKernel(n int) error {
	specs := make([]sim.NodeSpec, n)
	for i := range specs {
		specs[i] = sim.NodeSpec{Name: fmt.Sprintf("n%d", i), New: func() sim.Node { return idle{} }}
	}
	k, err := sim.New(sim.Config{Seed: 1, Nodes: specs, MaxTime: sim.Time(time.Hour)})
	if err != nil {
		return err
	}
	k.Run()
	return nil
}
