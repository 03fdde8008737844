package winkowski

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/simrun-dev/simrun/sim"
)

// Agent is one agent (paper §3, "Local states of agents") together with the tasks it
// controls, for which it plays the game (paper §1: "each agent acts for each task it
// executes as for a player"). Its local state is the paper's: clock (the node's clock,
// read from each input), Controlled (Tasks, sorted by id), Entering, Competing and
// DistributedTickets (Distributed), plus the progress of its jobs.
type Agent struct {
	sys *System
	lay *Layout
	// Index is the 0-based agent index; the agent's ticket residue i is Index+1.
	Index int

	Tasks       []*Task
	Entering    []TaskID
	Competing   []TaskID
	Distributed []Ticket
	Jobs        []JobState

	// Volatile, per handler call: the tasks whose stable record may have changed, the
	// tasks that left, and whether the jobs changed.
	dirty     []TaskID
	gone      []TaskID
	jobsMoved bool
	// Volatile: the encoding of each task's last stored record (Durable only), so that
	// a record is written only when it changed.
	stored map[TaskID][]byte
}

// NewAgent returns the constructor of agent i.
func NewAgent(s *System, l *Layout, i int) func() sim.Node {
	return func() sim.Node { return &Agent{sys: s, lay: l, Index: i} }
}

func taskKey(t TaskID) string { return "task/" + strconv.Itoa(int(t)) }

const (
	alarmPrefix = "alarm/"
	execPrefix  = "exec/"
	jobPrefix   = "job/"
	retryPrefix = "retry/"
	jobsKey     = "jobs"
)

func timerID(prefix string, n int) sim.TimerID { return sim.TimerID(prefix + strconv.Itoa(n)) }

// ctx is one handler call.
type ctx struct {
	in  sim.Input
	out *sim.Outbox
}

// Handle implements sim.Node.
func (a *Agent) Handle(in sim.Input, out *sim.Outbox) {
	c := &ctx{in: in, out: out}
	a.dirty, a.gone, a.jobsMoved = a.dirty[:0], a.gone[:0], false
	switch in.Kind {
	case sim.Start:
		a.start(c)
	case sim.Restart:
		a.restart(c)
	case sim.Receive:
		m, ok := in.Msg.(State)
		if !ok {
			panic(fmt.Sprintf("winkowski: agent received unexpected %s", in.Msg.Kind()))
		}
		if t := a.task(m.Task); t != nil {
			a.learn(t, m, c)
		}
	case sim.Timeout:
		a.timeout(in.Timer, c)
	}
	if a.sys.Durable {
		a.persist(c)
	}
}

// System returns the system the agent plays in.
func (a *Agent) System() *System { return a.sys }

func (a *Agent) task(id TaskID) *Task {
	i, ok := slices.BinarySearchFunc(a.Tasks, id, cmpTask)
	if !ok {
		return nil
	}
	return a.Tasks[i]
}

func cmpTask(t *Task, id TaskID) int { return int(t.ID - id) }

func (a *Agent) touch(t *Task) {
	if !slices.Contains(a.dirty, t.ID) {
		a.dirty = append(a.dirty, t.ID)
	}
}

// ---- agent actions ----

func (a *Agent) start(c *ctx) {
	for j := range a.sys.Jobs {
		job := &a.sys.Jobs[j]
		if job.Agent != a.Index || len(job.Tasks) == 0 {
			continue
		}
		js, due := a.sys.StartJob(j, c.in.Now, c.out)
		a.Jobs = append(a.Jobs, js)
		a.jobsMoved = true
		if due {
			a.create(&a.Jobs[len(a.Jobs)-1], c)
		}
	}
}

func (a *Agent) timeout(id sim.TimerID, c *ctx) {
	s := string(id)
	prefix, num, _ := strings.Cut(s, "/")
	n, _ := strconv.Atoi(num)
	switch prefix + "/" {
	case jobPrefix:
		for i := range a.Jobs {
			if a.Jobs[i].Job == n && a.Jobs[i].Waiting {
				a.create(&a.Jobs[i], c)
			}
		}
	case alarmPrefix:
		if t := a.task(TaskID(n)); t != nil {
			a.alarm(t, c)
		}
	case execPrefix:
		if t := a.task(TaskID(n)); t != nil && t.Status == Accessing {
			a.release(t, c)
		}
	case retryPrefix:
		if t := a.task(TaskID(n)); t != nil {
			a.retry(t, c)
		}
	default:
		panic("winkowski: unknown timer " + s)
	}
}

// create is the agent's action "creation of a task T" (paper §3): T joins Controlled
// and Entering in status REGISTERING with TicketsAt = ∅, alarm-clock = ∞ and empty
// knowledge, and sends its registration forms to the managers of all pools of its
// interest (WK-1).
func (a *Agent) create(js *JobState, c *ctx) {
	id := a.sys.JobTasks[js.Job][js.Next]
	js.Waiting = false
	a.jobsMoved = true
	pools := a.sys.Task(id).Pools
	t := newTask(id, len(pools))
	i, _ := slices.BinarySearchFunc(a.Tasks, id, cmpTask)
	a.Tasks = slices.Insert(a.Tasks, i, t)
	a.Entering = insertID(a.Entering, id)
	c.out.Observe(KindCreated, Created{Task: id, Agent: a.Index})
	a.setStatus(t, Registering, c)
	c.out.Cover(ruleRegister)
	for k := range pools {
		a.form(t, k, Form{Type: FormRegistration, Agent: c.in.Self}, c)
	}
	a.armRetry(t, c)
	a.touch(t)
}

// giveTicket is the agent's action "giving a numbered ticket N to T" (paper §3): the
// lowest ticket nK+i that no task of the agent holds and that is larger than floor
// (floor > 0 only when T enters past its predecessors, choice E1).
func (a *Agent) giveTicket(t *Task, floor Ticket) {
	k, i := Ticket(a.sys.K), Ticket(a.Index+1)
	n := Ticket(0)
	if floor >= i {
		n = (floor-i)/k + 1
	}
	for ; ; n++ {
		N := n*k + i
		if _, held := slices.BinarySearch(a.Distributed, N); !held && N > floor {
			a.Distributed = insertTicket(a.Distributed, N)
			t.Ticket = N
			a.Entering = removeID(a.Entering, t.ID)
			a.Competing = insertID(a.Competing, t.ID)
			return
		}
	}
}

// takeTicket is the agent's action "taking a numbered ticket N from T" (paper §3),
// done when T starts accessing its resources: T's competition phase is over.
func (a *Agent) takeTicket(t *Task) {
	if i, ok := slices.BinarySearch(a.Distributed, t.Ticket); ok {
		// Never in place: clones share the slice (Clone).
		a.Distributed = slices.Delete(slices.Clone(a.Distributed), i, i+1)
	}
	a.Competing = removeID(a.Competing, t.ID)
	t.Ticket = 0
}

// ---- helpers ----

func insertID(s []TaskID, id TaskID) []TaskID {
	i, ok := slices.BinarySearch(s, id)
	if ok {
		return s
	}
	return slices.Insert(slices.Clip(s), i, id)
}

func removeID(s []TaskID, id TaskID) []TaskID {
	i, ok := slices.BinarySearch(s, id)
	if !ok {
		return s
	}
	return slices.Delete(slices.Clone(s), i, i+1)
}

func insertTicket(s []Ticket, n Ticket) []Ticket {
	i, _ := slices.BinarySearch(s, n)
	return slices.Insert(slices.Clip(s), i, n)
}

// Clone implements sim.Cloner: tasks are copied, their slices shared. Every slice an
// Agent or Task holds is replaced, never modified in place, once it may be shared
// (Entering, Competing, Distributed, Sent, Acked, Unacked and the knowledge), or
// copied here (Tasks, About, Jobs).
func (a *Agent) Clone() sim.Node {
	c := *a
	c.Tasks = make([]*Task, len(a.Tasks))
	for i, t := range a.Tasks {
		tc := *t
		tc.About = slices.Clone(t.About)
		c.Tasks[i] = &tc
	}
	c.Jobs = slices.Clone(a.Jobs)
	c.dirty, c.gone = nil, nil
	if a.stored != nil {
		c.stored = make(map[TaskID][]byte, len(a.stored))
		for id, e := range a.stored {
			c.stored[id] = e
		}
	}
	return &c
}

// AppendState implements sim.StateEncoder. Clock readings (alarm and execution
// deadlines, job due times) are left out: the engines drive the protocol by timer
// events, never by comparing clock values, so states that differ only in them behave
// alike.
func (a *Agent) AppendState(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(a.Tasks)))
	for _, t := range a.Tasks {
		b = t.appendState(b)
	}
	b = appendIDs(b, a.Entering)
	b = appendIDs(b, a.Competing)
	b = binary.AppendUvarint(b, uint64(len(a.Distributed)))
	for _, n := range a.Distributed {
		b = binary.AppendVarint(b, int64(n))
	}
	for _, j := range a.Jobs {
		b = binary.AppendVarint(b, int64(j.Next))
		b = appendBool(b, j.Waiting)
	}
	return b
}

// AppendState implements sim.StateEncoder for the model checker: like Task.appendState
// it keeps what the receiving task can read (its own registration, the admissions,
// the queue, the order forms, the use count and its own resource) and the sequence
// number.
func (m State) AppendState(b []byte) []byte {
	b = binary.AppendVarint(b, int64(m.Pool))
	b = binary.AppendVarint(b, int64(m.Task))
	b = appendSeq(b, m.Seq)
	b = appendBool(b, m.Snap.Registered(m.Task))
	b = appendAdms(b, m.Snap.Admissions)
	b = appendReqs(b, m.Snap.Requests)
	b = appendIDs(b, m.Snap.Orders)
	return appendOwnUse(b, m.Snap.InUse, m.Task)
}
