package saga

import (
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// The orchestrated baseline: one central coordinator drives every step and every
// compensation, as orchestration frameworks do (Temporal, Camunda, AWS Step
// Functions). It runs the same configuration's graph: it asks each section's agent to
// run its incoming action (Do), waits for the result (Done), and on a failure asks
// for the compensations, in reverse order, one section at a time. The agents are
// plain executors: they keep their service's data and a record of what they ran, so
// a re-sent Do or Undo runs nothing twice. The coordinator's log is its stable
// storage; a crash of it pauses every transaction until it restarts.

// Do asks an executor to run a section's action (Undo: its compensation).
type Do struct {
	Tr     TrID
	Sec    SecKey
	Action string
	Data   Data
	Undo   bool
}

// Kind implements sim.Message.
func (d Do) Kind() string {
	if d.Undo {
		return "UNDO"
	}
	return "DO"
}

// Done is an executor's answer.
type Done struct {
	Tr   TrID
	Sec  SecKey
	Undo bool
	Ok   bool
	Out  Data
}

// Kind implements sim.Message.
func (Done) Kind() string { return "DONE" }

// OrchOptions configure an orchestrated system: node 0 is the coordinator, the
// others the executors (one per agent of the configuration, Names[i+1]).
type OrchOptions struct {
	Conf     *Config
	Names    []string // node names: "orchestrator", then the agents
	Services map[string]Service
	Retry    time.Duration
	graphs   map[SecKey]*Graph
	ids      map[string]sim.NodeID
}

// Prepare precomputes the graphs.
func (o *OrchOptions) Prepare() error {
	o.ids = map[string]sim.NodeID{}
	for i, n := range o.Names {
		o.ids[n] = sim.NodeID(i)
	}
	o.graphs = map[SecKey]*Graph{}
	for _, a := range o.Conf.Order {
		if _, ok := o.ids[a]; !ok {
			return fmt.Errorf("saga: agent %s has no node", a)
		}
		for _, st := range sortedKeys(o.Conf.Agents[a].Sections) {
			g, err := o.Conf.Graph(SecKey{a, st})
			if err != nil {
				return err
			}
			o.graphs[SecKey{a, st}] = g
		}
	}
	return nil
}

// OTx is the coordinator's record of a transaction.
type OTx struct {
	ID      TrID
	Start   SecKey
	Input   Data
	State   map[string]Status
	Out     map[string]Data
	Aborted bool
	Outcome Outcome
}

// Orchestrator is the central coordinator.
type Orchestrator struct {
	O   *OrchOptions
	Seq int64
	Txs map[TrID]*OTx
	out *sim.Outbox
}

// NewOrchestrator returns the coordinator's constructor.
func NewOrchestrator(o *OrchOptions) func() sim.Node {
	return func() sim.Node { return &Orchestrator{O: o} }
}

// Handle implements sim.Node.
func (c *Orchestrator) Handle(in sim.Input, out *sim.Outbox) {
	c.out = out
	defer func() { c.out = nil }()
	switch in.Kind {
	case sim.Start, sim.Restart:
		c.Txs = map[TrID]*OTx{}
		for _, k := range in.Stable.Keys() {
			if k == "seq" {
				c.Seq, _ = sim.Load[int64](in.Stable, k)
			} else if t, ok := sim.Load[OTx](in.Stable, k); ok {
				c.Txs[t.ID] = &t
			}
		}
		for _, id := range c.ids() {
			c.drive(c.Txs[id])
		}
	case sim.Receive:
		switch m := in.Msg.(type) {
		case StartTx:
			c.Seq++
			out.Store("seq", c.Seq)
			id := TrID{Init: "orchestrator", Seq: c.Seq}
			data := m.Input
			if data.Order == 0 {
				data.Order = c.Seq
			}
			t := &OTx{ID: id, Start: m.Start, Input: data, State: map[string]Status{}, Out: map[string]Data{}}
			c.Txs[id] = t
			g := c.O.graphs[m.Start]
			out.Observe(ObsBegin, Begin{Tr: id, Start: m.Start, Input: data, Agents: g.Agents, Sections: len(g.Sections)})
			c.drive(t)
		case Done:
			t := c.Txs[m.Tr]
			if t == nil {
				return
			}
			switch {
			case m.Undo && t.State[m.Sec.String()] == PendantCompensation:
				t.State[m.Sec.String()] = ProcessedCompensation
			case !m.Undo && t.State[m.Sec.String()] == Processing && m.Ok:
				t.State[m.Sec.String()], t.Out[m.Sec.String()] = Processed, m.Out
			case !m.Undo && t.State[m.Sec.String()] == Processing:
				t.State[m.Sec.String()] = Failed
				t.Aborted = true
			default:
				return // a duplicate answer
			}
			c.drive(t)
		}
	case sim.Timeout:
		for _, id := range c.ids() {
			c.resend(c.Txs[id])
		}
		c.arm()
	}
}

func (c *Orchestrator) ids() []TrID {
	ids := make([]TrID, 0, len(c.Txs))
	for id := range c.Txs {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b TrID) int { return int(a.Seq - b.Seq) })
	return ids
}

// drive issues what the transaction can do next: the sections whose predecessors are
// processed; after a failure, the compensation of the processed section whose
// successors are all settled, one at a time, last first.
func (c *Orchestrator) drive(t *OTx) {
	g := c.O.graphs[t.Start]
	if !t.Aborted {
		done := true
		for _, k := range g.Sections {
			if t.State[k.String()] != Processed {
				done = false
			}
			if t.State[k.String()] != Pendant {
				continue
			}
			ready := true
			data := t.Input
			for _, p := range g.Preds[k] {
				if t.State[p.String()] != Processed {
					ready = false
				}
				data = t.Out[p.String()]
			}
			if ready {
				t.State[k.String()] = Processing
				c.do(t, k, c.O.Conf.Section(k).Incoming, data, false)
			}
		}
		if done && t.Outcome == Running {
			t.Outcome = Committed
			c.out.Observe(ObsOutcome, OutcomeEv{Tr: t.ID, Agent: "orchestrator", Outcome: Committed})
		}
		c.save(t)
		return
	}
	busy := false
	for i := len(g.Sections) - 1; i >= 0; i-- {
		k := g.Sections[i]
		switch t.State[k.String()] {
		case Processing, PendantCompensation:
			busy = true
		case Pendant:
			t.State[k.String()] = Null
		}
	}
	if !busy {
		for i := len(g.Sections) - 1; i >= 0 && !busy; i-- {
			k := g.Sections[i]
			if t.State[k.String()] != Processed {
				continue
			}
			ready := true
			for _, n := range g.Succs[k] {
				if !t.State[n.String()].settled() {
					ready = false
				}
			}
			if ready {
				t.State[k.String()] = PendantCompensation
				c.do(t, k, c.O.Conf.Section(k).Compensation, t.Out[k.String()], true)
				busy = true
			}
		}
	}
	settled := true
	for _, k := range g.Sections {
		settled = settled && t.State[k.String()].settled()
	}
	if settled && t.Outcome == Running {
		t.Outcome = Compensated
		c.out.Observe(ObsOutcome, OutcomeEv{Tr: t.ID, Agent: "orchestrator", Outcome: Compensated})
	}
	c.save(t)
}

func (c *Orchestrator) do(t *OTx, k SecKey, action string, data Data, undo bool) {
	c.out.Send(c.O.ids[k.Agent], Do{Tr: t.ID, Sec: k, Action: action, Data: data, Undo: undo})
	c.arm()
}

// resend re-sends the requests still unanswered.
func (c *Orchestrator) resend(t *OTx) {
	g := c.O.graphs[t.Start]
	for _, k := range g.Sections {
		switch t.State[k.String()] {
		case Processing:
			data := t.Input
			for _, p := range g.Preds[k] {
				data = t.Out[p.String()]
			}
			c.out.Send(c.O.ids[k.Agent], Do{Tr: t.ID, Sec: k, Action: c.O.Conf.Section(k).Incoming, Data: data})
		case PendantCompensation:
			c.out.Send(c.O.ids[k.Agent], Do{Tr: t.ID, Sec: k, Action: c.O.Conf.Section(k).Compensation, Data: t.Out[k.String()], Undo: true})
		}
	}
}

func (c *Orchestrator) arm() {
	if c.O.Retry > 0 {
		c.out.SetTimer("retry", c.O.Retry)
	}
}

func (c *Orchestrator) save(t *OTx) { c.out.Store("tx/"+t.ID.String(), sim.DeepCopy(*t)) }

// Executor runs an agent's actions for the coordinator.
type Executor struct {
	O    *OrchOptions
	Name string
	DB   map[string]int64
	// Ran records the answer to every Do it ran, so a re-sent one is answered again
	// without running twice.
	Ran map[string]Done
	db  DB
}

// NewExecutor returns executor i's constructor (node i).
func NewExecutor(o *OrchOptions, i int) func() sim.Node {
	return func() sim.Node { return &Executor{O: o, Name: o.Names[i]} }
}

// Handle implements sim.Node.
func (x *Executor) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start, sim.Restart:
		x.DB, x.Ran = map[string]int64{}, map[string]Done{}
		for _, k := range in.Stable.Keys() {
			switch {
			case len(k) > 4 && k[:4] == "svc/":
				v, _ := sim.Load[int64](in.Stable, k)
				x.DB[k[4:]] = v
			case len(k) > 4 && k[:4] == "ran/":
				d, _ := sim.Load[Done](in.Stable, k)
				x.Ran[k[4:]] = d
			}
		}
	case sim.Receive:
		m, ok := in.Msg.(Do)
		if !ok {
			return
		}
		key := fmt.Sprintf("%s %s %v", m.Tr, m.Sec, m.Undo)
		if d, ok := x.Ran[key]; ok {
			out.Send(in.From, d)
			return
		}
		x.db.m = x.DB
		c := Call{Agent: x.Name, Tr: m.Tr, Sec: m.Sec, Action: m.Action, In: m.Data, Comp: m.Undo}
		out.Observe(ObsCall, c)
		res, ok2, why := x.O.Services[x.Name].Call(&x.db, m.Action, m.Data)
		out.Observe(ObsReturn, Return{Call: c, Out: res, Ok: ok2, Why: why})
		st := Processed
		switch {
		case m.Undo:
			st = ProcessedCompensation
		case !ok2:
			st = Failed
		}
		out.Observe(ObsSection, SectionEv{Tr: m.Tr, Sec: m.Sec, State: st, Why: why})
		d := Done{Tr: m.Tr, Sec: m.Sec, Undo: m.Undo, Ok: ok2, Out: res}
		x.Ran[key] = d
		out.Store("ran/"+key, d)
		for _, k := range sortedKeys(x.db.changed) {
			if v, ok := x.DB[k]; ok {
				out.Store("svc/"+k, v)
			} else {
				out.Delete("svc/" + k)
			}
		}
		x.db.changed = nil
		out.Send(in.From, d)
	}
}
