package winkowski

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/sim"
)

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
			if slices.ContainsFunc(r.Predecessors, func(ps []Adm) bool { return len(ps) > 0 }) {
				c.out.Cover(ruleRestartWaiting)
			}
		case t.Ticket != 0:
			a.Competing = insertID(a.Competing, t.ID)
			a.Distributed = insertTicket(a.Distributed, t.Ticket)
			c.out.Cover(ruleRestartCompeting)
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
