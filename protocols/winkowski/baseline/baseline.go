// Package baseline holds the two resource-allocation protocols the game is measured
// against, on the same workloads (a winkowski.System) and with the same observations
// (so the same checkers judge them):
//
//   - Ordered locking: every pool has a lock manager (on the pool's computer, node
//     "m<c>", like the game's resource managers) holding a FIFO queue of lock requests;
//     a task locks the pools of its interest one after another in the global pool
//     order (pool index), which rules out deadlock, uses them, and unlocks them all.
//     A conflict-free task costs 3ϱ messages (Lock, Grant, Unlock per pool) and ϱ
//     sequential round trips.
//   - Central lock manager: one node ("lm") holds every pool. A task sends one Acquire
//     naming all its pools; the manager grants all of them at once when each has a
//     free resource, scanning the waiting tasks in arrival order and granting every
//     one that fits (first fit: a later small task may pass a waiting large one). A
//     task costs 3 messages (Acquire, Grant, Unlock) whatever ϱ.
//
// Failure behaviour, which the scenarios measure rather than assume: with ordered
// locking a stopped task keeps the locks it holds, and every task waiting for them
// keeps the locks *it* holds, so blocking spreads along chains of arbitrary length;
// the central manager gives a stopped task's waiting competitors nothing to wait for
// unless the stopped task holds resources, but the manager itself is a single point of
// failure (its crash stops every task).
//
// Both keep their state in stable storage when Durable is set, and a restarted agent
// repeats its pending Lock/Acquire (the managers answer a repeated one with the grant
// if it was given), as the game's agents refresh their knowledge.
package baseline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/simrun-dev/simrun/protocols/winkowski"
	"github.com/simrun-dev/simrun/sim"
)

// Mode selects a baseline.
type Mode uint8

const (
	// Ordered is ordered locking.
	Ordered Mode = iota + 1
	// Central is the central lock manager.
	Central
)

func (m Mode) String() string {
	if m == Central {
		return "central"
	}
	return "ordered"
}

// CentralName is the node name of the central lock manager.
const CentralName = "lm"

// Lock asks the lock manager of Pool (ordered) for a resource for Task.
type Lock struct {
	Pool  winkowski.PoolID
	Task  winkowski.TaskID
	Agent sim.NodeID
}

// Acquire asks the central manager for one resource of each of Pools for Task.
type Acquire struct {
	Task  winkowski.TaskID
	Pools []winkowski.PoolID
	Agent sim.NodeID
}

// Grant gives Task the resources Units.
type Grant struct {
	Task  winkowski.TaskID
	Units []winkowski.PoolUnit
}

// Unlock gives back Task's resources in Pools.
type Unlock struct {
	Task  winkowski.TaskID
	Pools []winkowski.PoolID
}

// Kind implements sim.Message.
func (Lock) Kind() string { return "Lock" }

// Kind implements sim.Message.
func (Acquire) Kind() string { return "Acquire" }

// Kind implements sim.Message.
func (Grant) Kind() string { return "Grant" }

// Kind implements sim.Message.
func (Unlock) Kind() string { return "Unlock" }

// Layout maps a baseline system to nodes: lock managers (ordered: one per computer,
// "m<c>", idle without pools; central: "lm") first, then the agents "a1".."aN".
type Layout struct {
	Mode  Mode
	Agent []sim.NodeID
	// Host[c] is the lock manager of computer c's pools (ordered), or lm (central).
	Host  []sim.NodeID
	Names []string
}

// Manager returns the node managing pool p.
func (l *Layout) Manager(s *winkowski.System, p winkowski.PoolID) sim.NodeID {
	return l.Host[s.Pools[p].Host]
}

// Nodes returns the simulator nodes of a baseline for s.
func Nodes(s *winkowski.System, mode Mode) ([]sim.NodeSpec, *Layout) {
	l := &Layout{Mode: mode, Host: make([]sim.NodeID, s.Agents), Agent: make([]sim.NodeID, s.Agents)}
	var specs []sim.NodeSpec
	if mode == Central {
		specs = append(specs, sim.NodeSpec{Name: CentralName, New: newLockHost(s, allPools(s), false)})
		l.Names = append(l.Names, CentralName)
		for c := range l.Host {
			l.Host[c] = 0
		}
	} else {
		for c := range s.Agents {
			l.Host[c] = sim.NodeID(len(specs))
			l.Names = append(l.Names, winkowski.HostName(c))
			specs = append(specs, sim.NodeSpec{Name: winkowski.HostName(c), New: newLockHost(s, s.HostPools[c], true)})
		}
	}
	for i := range s.Agents {
		l.Agent[i] = sim.NodeID(len(specs))
		l.Names = append(l.Names, winkowski.AgentName(i))
		specs = append(specs, sim.NodeSpec{Name: winkowski.AgentName(i), New: newAgent(s, l, i)})
	}
	return specs, l
}

func allPools(s *winkowski.System) []winkowski.PoolID {
	ps := make([]winkowski.PoolID, len(s.Pools))
	for i := range ps {
		ps[i] = winkowski.PoolID(i)
	}
	return ps
}

// ---- lock managers ----

// waiter is a task waiting for resources: one pool (ordered) or several (central).
type waiter struct {
	Task  winkowski.TaskID
	Agent sim.NodeID
	Pools []winkowski.PoolID
}

// LockHost manages a set of pools: per pool the units in use (with their users) and,
// shared by them, one FIFO queue of waiting tasks.
type LockHost struct {
	sys   *winkowski.System
	fifo  bool // ordered locking: strict FIFO per pool; central: first fit
	Pools []winkowski.PoolID
	// Use[i] are the units of Pools[i] in use, sorted by unit.
	Use   [][]winkowski.Use
	Queue []waiter
}

func newLockHost(s *winkowski.System, pools []winkowski.PoolID, fifo bool) func() sim.Node {
	return func() sim.Node { return &LockHost{sys: s, Pools: pools, fifo: fifo} }
}

type lockHostStable struct {
	Use   [][]winkowski.Use
	Queue []waiter
}

// Handle implements sim.Node.
func (h *LockHost) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start:
		h.Use = make([][]winkowski.Use, len(h.Pools))
		return
	case sim.Restart:
		h.Use = make([][]winkowski.Use, len(h.Pools))
		if st, ok := sim.Load[lockHostStable](in.Stable, "locks"); ok {
			h.Use, h.Queue = st.Use, st.Queue
		}
		return
	case sim.Receive:
	default:
		return
	}
	switch m := in.Msg.(type) {
	case Lock:
		h.ask(waiter{Task: m.Task, Agent: m.Agent, Pools: []winkowski.PoolID{m.Pool}}, out)
	case Acquire:
		h.ask(waiter{Task: m.Task, Agent: m.Agent, Pools: m.Pools}, out)
	case Unlock:
		for _, p := range m.Pools {
			i := h.index(p)
			for _, u := range h.Use[i] {
				if u.Task == m.Task {
					out.Observe(winkowski.KindFree, winkowski.Freed{Pool: p, Unit: u.Unit, Task: m.Task})
				}
			}
			h.Use[i] = slices.DeleteFunc(slices.Clone(h.Use[i]), func(u winkowski.Use) bool { return u.Task == m.Task })
		}
		h.grant(out)
	default:
		panic(fmt.Sprintf("baseline: lock manager received unexpected %s", in.Msg.Kind()))
	}
	if h.sys.Durable {
		out.Store("locks", lockHostStable{Use: h.Use, Queue: h.Queue})
	}
}

func (h *LockHost) index(p winkowski.PoolID) int {
	i := slices.Index(h.Pools, p)
	if i < 0 {
		panic(fmt.Sprintf("baseline: lock manager asked for pool %d it does not manage", p))
	}
	return i
}

// held returns the units task t holds in pools ps, and whether it holds one in each.
func (h *LockHost) held(t winkowski.TaskID, ps []winkowski.PoolID) ([]winkowski.PoolUnit, bool) {
	var units []winkowski.PoolUnit
	for _, p := range ps {
		i := h.index(p)
		j := slices.IndexFunc(h.Use[i], func(u winkowski.Use) bool { return u.Task == t })
		if j < 0 {
			return nil, false
		}
		units = append(units, winkowski.PoolUnit{Pool: p, Unit: h.Use[i][j].Unit})
	}
	return units, true
}

func (h *LockHost) ask(w waiter, out *sim.Outbox) {
	if units, ok := h.held(w.Task, w.Pools); ok {
		out.Send(w.Agent, Grant{Task: w.Task, Units: units}) // a repeated request: grant again
		return
	}
	if slices.ContainsFunc(h.Queue, func(x waiter) bool { return x.Task == w.Task }) {
		return
	}
	h.Queue = append(slices.Clip(h.Queue), w)
	h.grant(out)
}

// free returns the lowest free unit of pool index i, if any.
func (h *LockHost) free(i int) (winkowski.Unit, bool) {
	capacity := h.sys.Pools[h.Pools[i]].Capacity
	for u := winkowski.Unit(0); int(u) < capacity; u++ {
		if !slices.ContainsFunc(h.Use[i], func(x winkowski.Use) bool { return x.Unit == u }) {
			return u, true
		}
	}
	return 0, false
}

// grant serves the queue. Ordered: strict FIFO per pool (a waiter is served only when
// no earlier waiter wants the same pool). Central: first fit in arrival order.
func (h *LockHost) grant(out *sim.Outbox) {
	var blocked []winkowski.PoolID // pools an earlier waiter is still waiting for (FIFO)
	var rest []waiter
	for _, w := range h.Queue {
		fits := true
		for _, p := range w.Pools {
			if _, ok := h.free(h.index(p)); !ok || (h.fifo && slices.Contains(blocked, p)) {
				fits = false
			}
		}
		if !fits {
			rest = append(rest, w)
			blocked = append(blocked, w.Pools...)
			continue
		}
		units := make([]winkowski.PoolUnit, 0, len(w.Pools))
		for _, p := range w.Pools {
			i := h.index(p)
			u, _ := h.free(i)
			j, _ := slices.BinarySearchFunc(h.Use[i], u, func(x winkowski.Use, u winkowski.Unit) int { return int(x.Unit - u) })
			h.Use[i] = slices.Insert(slices.Clone(h.Use[i]), j, winkowski.Use{Unit: u, Task: w.Task})
			units = append(units, winkowski.PoolUnit{Pool: p, Unit: u})
			out.Observe(winkowski.KindBook, winkowski.Booked{Pool: p, Unit: u, Task: w.Task})
		}
		out.Send(w.Agent, Grant{Task: w.Task, Units: units})
	}
	h.Queue = rest
}

// ---- agents ----

// task is a baseline task: it locks Pools[:Next] (ordered) and holds Units.
type task struct {
	ID      winkowski.TaskID
	Next    int
	Units   []winkowski.PoolUnit
	Access  bool
	ExecEnd sim.Time
}

// agent runs its jobs' tasks one at a time per job, like the game's agent.
type agent struct {
	sys   *winkowski.System
	lay   *Layout
	Index int
	Tasks []task
	Jobs  []winkowski.JobState
}

type agentStable struct {
	Tasks []task
	Jobs  []winkowski.JobState
}

func newAgent(s *winkowski.System, l *Layout, i int) func() sim.Node {
	return func() sim.Node { return &agent{sys: s, lay: l, Index: i} }
}

// Handle implements sim.Node.
func (a *agent) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start:
		for j := range a.sys.Jobs {
			job := &a.sys.Jobs[j]
			if job.Agent != a.Index || len(job.Tasks) == 0 {
				continue
			}
			js, due := a.sys.StartJob(j, in.Now, out)
			a.Jobs = append(a.Jobs, js)
			if due {
				a.create(len(a.Jobs)-1, in, out)
			}
		}
	case sim.Restart:
		st, ok := sim.Load[agentStable](in.Stable, "agent")
		if !ok {
			return
		}
		a.Tasks, a.Jobs = st.Tasks, st.Jobs
		for i := range a.Tasks {
			t := &a.Tasks[i]
			if t.Access {
				out.SetTimer(sim.TimerID("exec/"+strconv.Itoa(int(t.ID))), t.ExecEnd.Sub(in.Now))
			} else {
				a.ask(t, in, out, false)
			}
		}
		for _, js := range a.Jobs {
			winkowski.RearmJob(js, in.Now, out)
		}
	case sim.Receive:
		g, ok := in.Msg.(Grant)
		if !ok {
			panic(fmt.Sprintf("baseline: agent received unexpected %s", in.Msg.Kind()))
		}
		i := slices.IndexFunc(a.Tasks, func(t task) bool { return t.ID == g.Task })
		if i < 0 || a.Tasks[i].Access {
			break
		}
		t := &a.Tasks[i]
		for _, u := range g.Units {
			if !slices.ContainsFunc(t.Units, func(x winkowski.PoolUnit) bool { return x.Pool == u.Pool }) {
				t.Units = append(t.Units, u)
				out.Observe(winkowski.KindAcquired, winkowski.Acquired{Task: t.ID, Pool: u.Pool, Unit: u.Unit})
			}
		}
		pools := a.sys.Task(t.ID).Pools
		if len(t.Units) < len(pools) {
			t.Next = len(t.Units)
			a.ask(t, in, out, true)
			break
		}
		t.Access = true
		slices.SortFunc(t.Units, func(x, y winkowski.PoolUnit) int { return int(x.Pool - y.Pool) })
		out.Observe(winkowski.KindAccess, winkowski.Access{Task: t.ID, Units: slices.Clone(t.Units)})
		exec := a.sys.Task(t.ID).Exec
		t.ExecEnd = in.Now.Add(exec)
		out.SetTimer(sim.TimerID("exec/"+strconv.Itoa(int(t.ID))), exec)
	case sim.Timeout:
		s := string(in.Timer)
		n, _ := strconv.Atoi(s[strings.IndexByte(s, '/')+1:])
		if in.Timer == winkowski.JobTimer(n) {
			for i := range a.Jobs {
				if a.Jobs[i].Job == n && a.Jobs[i].Waiting {
					a.create(i, in, out)
				}
			}
			break
		}
		i := slices.IndexFunc(a.Tasks, func(t task) bool { return t.ID == winkowski.TaskID(n) })
		if i >= 0 && a.Tasks[i].Access {
			a.finish(i, in, out)
		}
	}
	if a.sys.Durable {
		out.Store("agent", agentStable{Tasks: a.Tasks, Jobs: a.Jobs})
	}
}

func (a *agent) create(j int, in sim.Input, out *sim.Outbox) {
	js := &a.Jobs[j]
	js.Waiting = false
	id := a.sys.JobTasks[js.Job][js.Next]
	a.Tasks = append(a.Tasks, task{ID: id})
	out.Observe(winkowski.KindCreated, winkowski.Created{Task: id, Agent: a.Index})
	a.ask(&a.Tasks[len(a.Tasks)-1], in, out, true)
}

// ask sends the task's pending lock request (observing the allocate call only the
// first time: a repeat after a restart is the same call).
func (a *agent) ask(t *task, in sim.Input, out *sim.Outbox, first bool) {
	pools := a.sys.Task(t.ID).Pools
	if a.lay.Mode == Central {
		if first {
			for _, p := range pools {
				out.Observe(winkowski.KindAcquire, winkowski.AcquireCall{Task: t.ID, Pool: p})
			}
		}
		out.Send(a.lay.Host[0], Acquire{Task: t.ID, Pools: pools, Agent: in.Self})
		return
	}
	p := pools[t.Next]
	if first {
		out.Observe(winkowski.KindAcquire, winkowski.AcquireCall{Task: t.ID, Pool: p})
	}
	out.Send(a.lay.Manager(a.sys, p), Lock{Pool: p, Task: t.ID, Agent: in.Self})
}

// finish ends task i's execution: it unlocks everything and leaves; its job goes on.
func (a *agent) finish(i int, in sim.Input, out *sim.Outbox) {
	t := a.Tasks[i]
	out.Observe(winkowski.KindAccessEnd, winkowski.AccessEnd{Task: t.ID})
	pools := a.sys.Task(t.ID).Pools
	if a.lay.Mode == Central {
		out.Send(a.lay.Host[0], Unlock{Task: t.ID, Pools: pools})
	} else {
		for _, p := range pools {
			out.Send(a.lay.Manager(a.sys, p), Unlock{Task: t.ID, Pools: []winkowski.PoolID{p}})
		}
	}
	out.Observe(winkowski.KindDone, winkowski.Done{Task: t.ID})
	a.Tasks = slices.Delete(a.Tasks, i, i+1)
	if j := slices.IndexFunc(a.Jobs, func(js winkowski.JobState) bool { return js.Job == a.sys.Task(t.ID).Job }); j >= 0 {
		if a.sys.NextTask(&a.Jobs[j], in.Now, out) {
			a.create(j, in, out)
		}
	}
}
