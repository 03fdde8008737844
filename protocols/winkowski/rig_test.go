package winkowski

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// rig drives nodes by hand: one handler call at a time, effects returned for
// inspection, messages held in per-link FIFO queues until delivered explicitly.
type rig struct {
	t     *testing.T
	sys   *System
	lay   *Layout
	nodes []sim.Node
	store []*sim.Storage
	now   sim.Time
	// queue holds sent, undelivered messages in send order.
	queue []sim.Envelope
	from  []sim.NodeID
	obs   []obsRec
	// timers pending per node (id → deadline), set by the protocol.
	timers []map[sim.TimerID]sim.Time
}

type obsRec struct {
	node  sim.NodeID
	kind  string
	value any
}

func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	s, err := NewSystem(cfg)
	if err != nil {
		t.Fatal(err)
	}
	specs, lay := Nodes(s)
	r := &rig{t: t, sys: s, lay: lay}
	for range specs {
		r.store = append(r.store, sim.NewStorage())
		r.timers = append(r.timers, map[sim.TimerID]sim.Time{})
	}
	for _, sp := range specs {
		r.nodes = append(r.nodes, sp.New())
	}
	for i := range specs {
		r.call(sim.NodeID(i), sim.Input{Kind: sim.Start})
	}
	return r
}

// call runs one handler and applies its effects; it returns the outbox.
func (r *rig) call(n sim.NodeID, in sim.Input) *sim.Outbox {
	var out sim.Outbox
	in.Self, in.Now, in.Stable = n, r.now, r.store[n].View()
	r.nodes[n].Handle(in, &out)
	r.store[n].Apply(out.Writes())
	for _, op := range out.Timers() {
		if op.Cancel {
			delete(r.timers[n], op.ID)
		} else {
			r.timers[n][op.ID] = r.now.Add(op.After)
		}
	}
	for _, e := range out.Sends() {
		r.queue = append(r.queue, e)
		r.from = append(r.from, n)
	}
	for i := range out.NumObservations() {
		k, v := out.Observation(i)
		r.obs = append(r.obs, obsRec{n, k, v})
	}
	return &out
}

// deliver delivers the first queued message matching f (nil: the first one).
func (r *rig) deliver(f func(to sim.NodeID, m sim.Message) bool) (sim.Message, bool) {
	for i, e := range r.queue {
		if f == nil || f(e.To, e.Msg) {
			from := r.from[i]
			r.queue = slices.Delete(r.queue, i, i+1)
			r.from = slices.Delete(r.from, i, i+1)
			r.call(e.To, sim.Input{Kind: sim.Receive, From: from, Msg: e.Msg})
			return e.Msg, true
		}
	}
	return nil, false
}

// settle delivers queued messages in FIFO order until none is left (at most n).
func (r *rig) settle() {
	for i := 0; i < 100000; i++ {
		if _, ok := r.deliver(nil); !ok {
			return
		}
	}
	r.t.Fatal("rig: messages did not settle")
}

// fire fires timer id of node n (advancing the clock to its deadline).
func (r *rig) fire(n sim.NodeID, id sim.TimerID) {
	r.t.Helper()
	at, ok := r.timers[n][id]
	if !ok {
		r.t.Fatalf("rig: timer %s of %s not set", id, r.lay.Names[n])
	}
	delete(r.timers[n], id)
	r.now = max(r.now, at)
	r.call(n, sim.Input{Kind: sim.Timeout, Timer: id})
}

// crash and restart node n (stable storage kept, queued messages to it dropped).
func (r *rig) crashRestart(n sim.NodeID, specs func() sim.Node) {
	for i := 0; i < len(r.queue); {
		if r.queue[i].To == n {
			r.queue = slices.Delete(r.queue, i, i+1)
			r.from = slices.Delete(r.from, i, i+1)
			continue
		}
		i++
	}
	r.timers[n] = map[sim.TimerID]sim.Time{}
	r.nodes[n] = specs()
	r.call(n, sim.Input{Kind: sim.Restart})
}

func (r *rig) agent(i int) *Agent   { return r.nodes[r.lay.Agent[i]].(*Agent) }
func (r *rig) host(c int) *Host     { return r.nodes[r.lay.Host[c]].(*Host) }
func (r *rig) task(id TaskID) *Task { return r.agent(r.sys.Task(id).Agent).task(id) }

// pool returns the manager state of pool p.
func (r *rig) pool(p PoolID) *PoolState {
	h := r.host(r.sys.Pools[p].Host)
	return &h.St[slices.Index(h.Pools, p)]
}

// queued returns the queued messages of kind k (in order).
func (r *rig) queued(kind string) []sim.Message {
	var ms []sim.Message
	for _, e := range r.queue {
		if e.Msg.Kind() == kind {
			ms = append(ms, e.Msg)
		}
	}
	return ms
}

// status returns the status of task id (0 if it has left the game).
func (r *rig) status(id TaskID) Status {
	if t := r.task(id); t != nil {
		return t.Status
	}
	return 0
}

func (r *rig) observed(kind string) []any {
	var vs []any
	for _, o := range r.obs {
		if o.kind == kind {
			vs = append(vs, o.value)
		}
	}
	return vs
}

// oneTask is a system of n agents each on its own computer, pools given as
// capacities (pool j on computer j mod n), and one job per entry of tasks.
func oneTaskCfg(agents int, caps []int, tasks ...[]PoolID) Config {
	cfg := Config{Agents: agents, K: agents + 1, Gamma: 100 * time.Millisecond}
	for j, c := range caps {
		cfg.Pools = append(cfg.Pools, Pool{Name: fmt.Sprintf("P%d", j), Capacity: c, Host: j % agents})
	}
	for i, ps := range tasks {
		cfg.Jobs = append(cfg.Jobs, Job{Agent: i % agents, Tasks: []TaskSpec{{Pools: ps, Exec: 10 * time.Millisecond}}})
	}
	return cfg
}
