package winkowski

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// JobState is an agent's progress through one of its jobs. The game's agents and the
// baselines' (package baseline) drive their jobs alike, with the helpers below.
type JobState struct {
	// Job is the job's index in Config.Jobs; Next the index of its next task to create.
	Job  int
	Next int
	// Waiting: the next task is due at At (agent clock); JobTimer(Job) is set.
	Waiting bool
	At      sim.Time
}

// JobTimer is the timer on which job j's next task is due.
func JobTimer(j int) sim.TimerID { return timerID(jobPrefix, j) }

// wait makes js wait d for its next task (JobTimer set).
func (js *JobState) wait(now sim.Time, d time.Duration, out *sim.Outbox) {
	js.Waiting, js.At = true, now.Add(d)
	out.SetTimer(JobTimer(js.Job), d)
}

// StartJob returns the initial progress of job j (at an agent's start) and whether its
// first task is due now; if not, the job waits for its start time (JobTimer set).
func (s *System) StartJob(j int, now sim.Time, out *sim.Outbox) (js JobState, due bool) {
	js = JobState{Job: j}
	if d := s.Jobs[j].Start; d > 0 {
		js.wait(now, d, out)
		return js, false
	}
	return js, true
}

// NextTask moves js past the task of its job that just left the game and reports
// whether the job's next task is due now. If the job has a next task with a think
// time, js waits for it (JobTimer set); if it has none, the job is over.
func (s *System) NextTask(js *JobState, now sim.Time, out *sim.Outbox) (due bool) {
	js.Next++
	job := &s.Jobs[js.Job]
	switch {
	case js.Next >= len(job.Tasks):
		return false
	case job.Think > 0:
		js.wait(now, job.Think, out)
		return false
	}
	return true
}

// RearmJob sets again, after a restart, the timer of a job waiting for its next task.
func RearmJob(js JobState, now sim.Time, out *sim.Outbox) {
	if js.Waiting {
		out.SetTimer(JobTimer(js.Job), js.At.Sub(now))
	}
}

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

// ---- stable storage (Config.Durable, choice F2) ----

// taskRecord is what a durable agent keeps of a task (key "task/<id>"): exactly what
// a restart needs. The knowledge about the pools is not kept — the restarted task
// polls every pool and learns it afresh — except what cannot be learned again: the
// absolute predecessors (fixed by the first state after registering, WK-1) and the
// registered blocking requests (WK-4).
type taskRecord struct {
	ID           TaskID
	Status       Status
	Ticket       Ticket
	AlarmSet     bool
	Alarm        sim.Time
	Dest         uint64
	Heard        uint64
	Seen         uint64
	ExecEnd      sim.Time
	Predecessors [][]Adm
	Blocking     [][]Req
	Sent         []Seq
	Acked        []Seq
	Unacked      [][]Form
}

func (t *Task) record() taskRecord {
	r := taskRecord{ID: t.ID, Status: t.Status, Ticket: t.Ticket, AlarmSet: t.AlarmSet, Alarm: t.Alarm, Dest: t.Dest,
		Heard: t.Heard, Seen: t.Seen, ExecEnd: t.ExecEnd, Sent: t.Sent, Acked: t.Acked, Unacked: t.Unacked}
	for k := range t.About {
		r.Predecessors = append(r.Predecessors, t.About[k].Predecessors)
		r.Blocking = append(r.Blocking, t.About[k].Blocking)
	}
	return r
}

// AppendState implements sim.StateEncoder (the model checker encodes stable storage).
func (r taskRecord) AppendState(b []byte) []byte {
	b = binary.AppendVarint(b, int64(r.ID))
	b = append(b, byte(r.Status))
	b = binary.AppendVarint(b, int64(r.Ticket))
	b = appendBool(b, r.AlarmSet)
	b = binary.AppendUvarint(b, r.Dest)
	b = binary.AppendUvarint(b, r.Heard)
	b = binary.AppendUvarint(b, r.Seen)
	for k := range r.Sent {
		b = appendAdms(b, r.Predecessors[k])
		b = appendReqs(b, r.Blocking[k])
		b = appendSeq(b, r.Sent[k])
		b = appendSeq(b, r.Acked[k])
		b = binary.AppendUvarint(b, uint64(len(r.Unacked[k])))
		for _, f := range r.Unacked[k] {
			b = f.AppendState(b)
		}
	}
	return b
}

// persist writes the records of the tasks changed by this handler call, when they
// changed, and the jobs' progress when it moved; the agent's Entering, Competing and
// DistributedTickets follow from the tasks' statuses and tickets.
func (a *Agent) persist(c *ctx) {
	if a.stored == nil {
		a.stored = map[TaskID][]byte{}
	}
	for _, id := range a.dirty {
		t := a.task(id)
		if t == nil {
			continue
		}
		rec := t.record()
		// The canonical encoding leaves the clock readings out (as the model checker
		// does); the comparison needs them.
		enc := rec.AppendState(nil)
		enc = binary.AppendVarint(enc, int64(rec.Alarm))
		enc = binary.AppendVarint(enc, int64(rec.ExecEnd))
		if !bytes.Equal(enc, a.stored[id]) {
			a.stored[id] = enc
			c.out.Store(taskKey(id), rec)
		}
	}
	for _, id := range a.gone {
		delete(a.stored, id)
		c.out.Delete(taskKey(id))
	}
	if a.jobsMoved {
		c.out.Store(jobsKey, slices.Clone(a.Jobs))
	}
}

// restart rebuilds the agent from stable storage (Config.Durable): a crashed agent
// resumes where it stopped (choice F2). States sent to it while it was down are lost,
// so every task polls all its pools (and resends the forms not yet applied) and
// plays again only once it has heard from each.
func (a *Agent) restart(c *ctx) {
	jobs, ok := sim.Load[[]JobState](c.in.Stable, jobsKey)
	if !ok {
		return // nothing stored: Durable is off
	}
	c.out.Cover(ruleAgentRestart)
	a.Jobs = jobs
	now := c.in.Now
	for _, key := range c.in.Stable.Keys() {
		if !strings.HasPrefix(key, "task/") {
			continue
		}
		r, _ := sim.Load[taskRecord](c.in.Stable, key)
		n := len(a.sys.Task(r.ID).Pools)
		t := newTask(r.ID, n)
		t.Status, t.Ticket, t.AlarmSet, t.Alarm, t.Dest = r.Status, r.Ticket, r.AlarmSet, r.Alarm, r.Dest
		t.Heard, t.Seen, t.ExecEnd, t.Sent, t.Acked, t.Unacked = r.Heard, r.Seen, r.ExecEnd, r.Sent, r.Acked, r.Unacked
		for k := range t.About {
			t.About[k].Predecessors, t.About[k].Blocking = r.Predecessors[k], r.Blocking[k]
		}
		t.Fresh = 0 // Quiet is full: nothing heard yet
		i, _ := slices.BinarySearchFunc(a.Tasks, t.ID, cmpTask)
		a.Tasks = slices.Insert(a.Tasks, i, t)
		switch {
		case t.Status == Registering:
			a.Entering = insertID(a.Entering, t.ID)
		case t.Ticket != 0:
			a.Competing = insertID(a.Competing, t.ID)
			a.Distributed = insertTicket(a.Distributed, t.Ticket)
		}
	}
	for _, t := range a.Tasks {
		a.touch(t)
		if t.AlarmSet {
			c.out.SetTimer(timerID(alarmPrefix, int(t.ID)), t.Alarm.Sub(now))
		}
		if t.Status == Accessing {
			c.out.SetTimer(timerID(execPrefix, int(t.ID)), t.ExecEnd.Sub(now))
		}
		for k := range t.About {
			a.resend(t, k, c)
			a.poll(t, k, c)
		}
		a.armRetry(t, c)
	}
	for _, js := range a.Jobs {
		RearmJob(js, now, c.out)
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

// ---- task actions ----

// form sends one of T's forms (f.Type, and f.Ticket, f.Final or f.Agent where they
// apply) to the manager of T's k-th pool, with T's next sequence number for that pool
// (choice K2). With Retry, or Durable, it is kept until a state shows it applied: a
// restarted agent resends it (F2) — also without Retry, since a crash can cut a
// call's forms short (the model checker's Crashes.MidSend found a task that waited
// for ever for a request its crashed agent never sent).
func (a *Agent) form(t *Task, k int, f Form, c *ctx) {
	f.Pool, f.Task = a.sys.Task(t.ID).Pools[k], t.ID
	t.Sent = slices.Clone(t.Sent) // never in place: stored records and clones share it
	t.Sent[k]++
	f.Seq = t.Sent[k]
	if a.sys.Retry > 0 || a.sys.Durable {
		t.Unacked = slices.Clone(t.Unacked)
		t.Unacked[k] = append(slices.Clip(t.Unacked[k]), f)
	}
	c.out.Send(a.lay.Manager(a.sys, f.Pool), f)
}

// armRetry sets T's retry timer (choice K2), when Retry is on.
func (a *Agent) armRetry(t *Task, c *ctx) {
	if a.sys.Retry > 0 {
		c.out.SetTimer(timerID(retryPrefix, int(t.ID)), a.sys.Retry)
	}
}

// retry: T's retry timer rang (choice K2). To every pool where T has forms not yet
// applied and no state showed any of them applied since the last ring, T resends them
// (they, or the states answering them, may have been lost); to every pool where all
// its forms are applied but that sent T no state since the last ring, T sends a poll if
// it still needs news of the pool (a state that would have told it something may have
// been lost).
func (a *Agent) retry(t *Task, c *ctx) {
	pools := a.sys.Task(t.ID).Pools
	needNews := t.Status != Accessing && t.Status != Releasing
	for k := range pools {
		if t.Quiet&bit(k) == 0 {
			continue
		}
		switch {
		case !t.acked(k):
			c.out.Cover(ruleResend)
			a.resend(t, k, c)
		case needNews:
			c.out.Cover(rulePoll)
			a.poll(t, k, c)
		}
	}
	t.Quiet = full(len(pools))
	a.armRetry(t, c)
}

// resend sends again T's forms to its k-th pool that the pool has not applied (K2).
func (a *Agent) resend(t *Task, k int, c *ctx) {
	to := a.lay.Manager(a.sys, a.sys.Task(t.ID).Pools[k])
	for _, f := range t.Unacked[k] {
		c.out.Send(to, f)
	}
}

// poll asks T's k-th pool for its current state (K2).
func (a *Agent) poll(t *Task, k int, c *ctx) {
	p := a.sys.Task(t.ID).Pools[k]
	c.out.Send(a.lay.Manager(a.sys, p), Form{Type: FormPoll, Pool: p, Task: t.ID, Agent: c.in.Self})
}

func (a *Agent) setStatus(t *Task, s Status, c *ctx) {
	c.out.Observe(KindStatus, StatusChange{Task: t.ID, From: t.Status, To: s})
	t.Status = s
}

func (a *Agent) arm(t *Task, c *ctx) {
	t.AlarmSet, t.Alarm = true, c.in.Now.Add(a.sys.Gamma)
	c.out.SetTimer(timerID(alarmPrefix, int(t.ID)), a.sys.Gamma)
}

func (a *Agent) disarm(t *Task, c *ctx) {
	if t.AlarmSet {
		t.AlarmSet = false
		c.out.CancelTimer(timerID(alarmPrefix, int(t.ID)))
	}
	for k := range t.About {
		t.About[k].Blocking = nil
	}
}

// learn is the task action "receiving a message m from the manager of P" (paper §3):
// T updates its knowledge of P, then plays.
func (a *Agent) learn(t *Task, m State, c *ctx) {
	pools := a.sys.Task(t.ID).Pools
	k := slices.Index(pools, m.Pool)
	if k < 0 {
		panic(fmt.Sprintf("winkowski: task %d got the state of pool %d, not of its interest", t.ID, m.Pool))
	}
	if m.Seq < t.Acked[k] || m.Seq > t.Sent[k] {
		return // older than a state T has seen (links are FIFO: only if reordered)
	}
	a.touch(t)
	t.Fresh |= bit(k)
	progress := m.Seq > t.Acked[k]
	if progress {
		// K1/K2: the manager has applied T's forms up to m.Seq.
		t.Acked = slices.Clone(t.Acked)
		t.Acked[k] = m.Seq
		if len(t.Unacked[k]) > 0 {
			t.Unacked = slices.Clone(t.Unacked)
			t.Unacked[k] = slices.DeleteFunc(slices.Clone(t.Unacked[k]), func(f Form) bool { return f.Seq <= m.Seq })
		}
	}
	if progress || t.acked(k) {
		// K2: the pool is not quiet. A state that shows none of T's outstanding forms
		// applied does not count: T resends them all the same (the pool may be busy
		// with other tasks' forms while T's were lost).
		t.Quiet &^= bit(k)
	}
	if t.Status == Releasing {
		// WK-3: T leaves the game once every pool has applied its releasing form (its
		// last form there): released everywhere.
		for k := range pools {
			if !t.acked(k) {
				return
			}
		}
		c.out.Cover(ruleLeave)
		a.leave(t, c)
		return
	}
	kn := &t.About[k]
	snap := m.Snap
	before, _ := t.predecessors()
	if t.Status == Registering && !t.heard(k) && snap.Registered(t.ID) {
		// WK-1: the first news after registering: every task admitted here (in the
		// competition phase) is an absolute predecessor.
		c.out.Cover(ruleFirstNews)
		t.Heard |= bit(k)
		ps := make([]Adm, 0, len(snap.Admissions))
		for _, x := range snap.Admissions {
			if x.Task != t.ID {
				ps = append(ps, x)
			}
		}
		kn.Predecessors = ps
	} else if len(kn.Predecessors) > 0 {
		// A predecessor has left once its admission form is gone.
		left := slices.DeleteFunc(slices.Clone(kn.Predecessors), func(x Adm) bool { return !snap.Admitted(x.Task) })
		if len(left) < len(kn.Predecessors) {
			c.out.Cover(rulePredLeft)
		}
		kn.Predecessors = left
	}
	kn.Registered, kn.Requests, kn.Orders, kn.Use = snap.Applications, snap.Requests, snap.Orders, snap.InUse
	if t.Status == Registering && t.AlarmSet {
		if after, _ := t.predecessors(); after < before {
			c.out.Cover(ruleEnterRearm)
			a.disarm(t, c) // E1: a predecessor left; wait Γ afresh
		}
	}
	if t.Fresh != full(len(pools)) {
		c.out.Cover(ruleNotFresh)
		return // F2: restarted; play once every pool has been heard from again
	}
	a.play(t, c)
}

// play performs every action of T enabled by its current knowledge, until none is.
func (a *Agent) play(t *Task, c *ctx) {
	for a.step(t, c) {
	}
}

// step performs T's enabled actions for its status and reports whether T's status
// changed (so that play looks again).
func (a *Agent) step(t *Task, c *ctx) bool {
	s := a.sys
	pools := s.Task(t.ID).Pools
	n := len(pools)
	switch t.Status {
	case Registering:
		// WK-1 (N1): REGISTERING → ADMITTED once every pool has answered and every
		// absolute predecessor has left the game.
		if t.Heard != full(n) {
			c.out.Cover(ruleNewsWait)
			return false
		}
		preds, _ := t.predecessors()
		if preds == 0 {
			c.out.Cover(ruleAdmit)
			a.admit(t, 0, c)
			return true
		}
		c.out.Cover(rulePredWait)
		if s.Entering == EnterAlarm && !t.AlarmSet {
			a.arm(t, c) // E1
		}
		return false

	case Trying, Ordering:
		views := make([]poolView, n)
		p3, seen, front := true, true, true
		for k, p := range pools {
			v := t.view(s, k, p, c.out)
			views[k] = v
			p3 = p3 && v.p()
			seen = seen && v.seen()
			front = front && v.front()
		}
		if !p3 {
			// WK-3/WK-4: regressive behaviour is obligatory when (p1)/(p3) fails.
			a.regress(t, c)
			if t.Status == Ordering {
				c.out.Cover(ruleRegressOrder)
				a.setStatus(t, Trying, c)
				return true
			}
			c.out.Cover(ruleRegress)
			return false
		}
		if t.Status == Trying {
			if t.Dest != 0 {
				// WK-3: distribute the requests while (p1)/(p3) holds.
				c.out.Cover(ruleRequest)
				for k := range pools {
					if t.Dest&bit(k) != 0 {
						a.form(t, k, Form{Type: FormRequest, Ticket: t.Ticket}, c)
					}
				}
				t.Dest = 0
				return false
			}
			if !seen {
				return false
			}
			if front {
				a.disarm(t, c)
				if s.Variant == Restricted {
					c.out.Cover(ruleWinRestrict)
					a.win(t, c) // WK-3: every request is preceded by fewer requests than free resources
					return true
				}
				// WK-4: → ORDERING, send order forms.
				c.out.Cover(ruleOrder)
				a.setStatus(t, Ordering, c)
				for k := range pools {
					a.form(t, k, Form{Type: FormOrder, Ticket: t.Ticket}, c)
				}
				// T becomes an actual winner once its order forms are distributed (O1:
				// seen at every pool, which they are not yet, unless the policy reads
				// "distributed" as "sent", the formal rule's Destinations = ∅).
				if s.ordersDistributed(t) {
					a.win(t, c)
				}
				return true
			}
		} else { // Ordering
			if !seen || !s.ordersDistributed(t) {
				c.out.Cover(ruleOrderWait)
				return false
			}
			if front {
				// WK-4: order forms everywhere and still in front → WINNING (choice O1).
				c.out.Cover(ruleWinOrder)
				a.disarm(t, c)
				a.win(t, c)
				return true
			}
		}
		if s.Variant == Restricted {
			c.out.Cover(ruleWaitRestrict) // WK-3: wait for the requests in front to go
		} else if !t.AlarmSet {
			// WK-4: blocked by at least as many requests as accessible resources: set
			// the alarm clock and register the blocking requests (G1).
			if t.Status == Ordering {
				c.out.Cover(ruleAlarmOrder)
			} else {
				c.out.Cover(ruleAlarmSet)
			}
			a.arm(t, c)
			for k := range pools {
				t.About[k].Blocking = t.blocking(s, k)
			}
		}
		return false

	case Winning:
		for k, p := range pools {
			if t.Seen&bit(k) == 0 {
				if u, ok := unitOf(t.About[k].Use, t.ID); ok {
					c.out.Cover(ruleBooked)
					t.Seen |= bit(k)
					c.out.Observe(KindAcquired, Acquired{Task: t.ID, Pool: p, Unit: u})
				}
			}
		}
		if t.Seen == full(n) {
			c.out.Cover(ruleAccess)
			a.access(t, c)
			return true
		}
	}
	return false
}

// admit takes T from REGISTERING through ADMITTED to TRYING (WK-1): the agent gives
// T a ticket above floor, T sends its admission forms to all its pools, and with every
// form sent and a ticket held it becomes TRYING with every pool a destination for a
// request.
func (a *Agent) admit(t *Task, floor Ticket, c *ctx) {
	a.disarm(t, c)
	a.setStatus(t, Admitted, c)
	a.giveTicket(t, floor)
	for k := range t.About {
		a.form(t, k, Form{Type: FormAdmission, Ticket: t.Ticket}, c)
		t.About[k].Predecessors = nil
	}
	t.Dest = full(len(t.About))
	a.setStatus(t, Trying, c)
}

// regress withdraws every request T has sent (the regressive behaviour, R1): each pool
// whose request is withdrawn becomes a destination again.
func (a *Agent) regress(t *Task, c *ctx) {
	for k := range t.About {
		if t.Dest&bit(k) == 0 {
			a.form(t, k, Form{Type: FormWithdrawal, Ticket: t.Ticket}, c)
		}
	}
	t.Dest = full(len(t.About))
	a.disarm(t, c)
}

// win makes T a winner: status WINNING, winning forms to all its pools.
func (a *Agent) win(t *Task, c *ctx) {
	a.setStatus(t, Winning, c)
	for k, p := range a.sys.Task(t.ID).Pools {
		c.out.Observe(KindAcquire, AcquireCall{Task: t.ID, Pool: p})
		a.form(t, k, Form{Type: FormWinning, Ticket: t.Ticket}, c)
	}
}

// access: T learned its bookings everywhere → ACCESSING. It withdraws its admission
// forms and requests (final withdrawals, W1), gives its ticket back (T1), and
// executes (paper §2).
func (a *Agent) access(t *Task, c *ctx) {
	a.setStatus(t, Accessing, c)
	info := a.sys.Task(t.ID)
	units := make([]PoolUnit, len(info.Pools))
	for k, p := range info.Pools {
		u, _ := unitOf(t.About[k].Use, t.ID)
		units[k] = PoolUnit{Pool: p, Unit: u}
		a.form(t, k, Form{Type: FormWithdrawal, Ticket: t.Ticket, Final: true}, c)
	}
	a.takeTicket(t)
	c.out.Observe(KindAccess, Access{Task: t.ID, Units: units})
	t.ExecEnd = c.in.Now.Add(info.Exec)
	c.out.SetTimer(timerID(execPrefix, int(t.ID)), info.Exec)
}

// release: the execution ended → RELEASING, releasing forms to all pools.
func (a *Agent) release(t *Task, c *ctx) {
	c.out.Cover(ruleRelease)
	a.setStatus(t, Releasing, c)
	c.out.Observe(KindAccessEnd, AccessEnd{Task: t.ID})
	for k := range t.About {
		a.form(t, k, Form{Type: FormReleasing}, c)
	}
	a.touch(t)
}

// leave: every pool released T → T leaves the game and the agent's control; its job
// goes on with its next task.
func (a *Agent) leave(t *Task, c *ctx) {
	c.out.Observe(KindDone, Done{Task: t.ID})
	if a.sys.Retry > 0 {
		c.out.CancelTimer(timerID(retryPrefix, int(t.ID)))
	}
	i := slices.Index(a.Tasks, t)
	a.Tasks = slices.Delete(a.Tasks, i, i+1)
	a.gone = append(a.gone, t.ID)
	a.dirty = slices.DeleteFunc(a.dirty, func(id TaskID) bool { return id == t.ID })
	a.jobsMoved = true
	if i := slices.IndexFunc(a.Jobs, func(js JobState) bool { return js.Job == a.sys.Task(t.ID).Job }); i >= 0 {
		if a.sys.NextTask(&a.Jobs[i], c.in.Now, c.out) {
			a.create(&a.Jobs[i], c)
		}
	}
}

// alarm: the agent's clock reached T's alarm-clock (WK-4; in REGISTERING, choice E1).
func (a *Agent) alarm(t *Task, c *ctx) {
	if !t.AlarmSet {
		return
	}
	t.AlarmSet = false
	a.touch(t)
	if t.Fresh != full(len(t.About)) {
		return // F2: restarted and not yet heard from every pool; play will re-arm
	}
	switch t.Status {
	case Registering:
		if n, maxTicket := t.predecessors(); n > 0 {
			// E1: no predecessor left for Γ: enter with a ticket below all of theirs.
			c.out.Cover(ruleEnterAlarm)
			a.admit(t, maxTicket, c)
		}
	case Trying, Ordering:
		s := a.sys
		pools := s.Task(t.ID).Pools
		var blocked uint64
		for k, p := range pools {
			v := t.view(s, k, p, c.out)
			if !v.p() || !v.seen() {
				blocked = 0
				break
			}
			if !v.front() {
				blocked |= bit(k)
			}
		}
		if blocked == 0 || (t.Status == Ordering && !t.ordersSeen(s)) {
			break // the situation changed: play decides afresh
		}
		stay := true
		for k := range pools {
			stay = stay && t.blockersStay(k)
		}
		if !stay {
			// G1: some blocking request was removed: register the current blocking
			// requests and wait Γ again.
			c.out.Cover(ruleAlarmRearm)
			a.arm(t, c)
			for k := range pools {
				t.About[k].Blocking = t.blocking(s, k)
			}
			break
		}
		// None of the blocking requests was removed for Γ: ADVANCING, send advancing
		// forms to the pools where T is blocked (choice A1), then play on.
		c.out.Cover(ruleAdvance)
		prev := t.Status
		a.setStatus(t, Advancing, c)
		for k := range pools {
			if blocked&bit(k) != 0 {
				a.form(t, k, Form{Type: FormAdvancing, Ticket: t.Ticket}, c)
			}
		}
		a.disarm(t, c)
		a.setStatus(t, prev, c)
	}
	a.play(t, c)
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
