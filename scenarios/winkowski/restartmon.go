package wkscen

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/protocols/winkowski"
	"github.com/simrun-dev/simrun/sim"
)

// Two rules of the agent monitor that need memory across handler calls, and so are
// checked in the simulator only (the model checker's monitor keeps no state between
// calls; its tally is nil):
//
//	WK-1/precedence    §2 WK-1: a task memorizes the tasks it finds in the competition
//	                   phase at its pools as its absolute predecessors and takes a
//	                   ticket only once they have left the game; with E1 it may enter
//	                   before, but with a ticket above every remaining one (a newcomer
//	                   never outranks a task it found competing). The monitor records
//	                   the predecessors itself, from the admissions of the first state
//	                   of each pool that the task takes as its first news — not from
//	                   the task, whose memory is what is checked — and the tickets the
//	                   tasks of every agent hold after each call. When a task is given
//	                   ticket N, no predecessor it recorded may still hold a ticket
//	                   above N. (A predecessor's admission form goes only with its final
//	                   withdrawal, in the call that gives its ticket back, so a task
//	                   that saw it leave never meets it still holding one.) The
//	                   agent's own state cannot hide a violation: a restart that loses
//	                   the predecessors (F2) shows as a ticket taken ahead of them.
//	F2/agent-restart   choice F2: a crashed durable agent resumes where it stopped.
//	                   On a restart the monitor compares the agent rebuilt from stable
//	                   storage with the agent as it was after its last call before the
//	                   crash (a crash-send's stable writes are applied before its sends
//	                   are cut, so that is the stored state): the same jobs' progress,
//	                   the same tasks, each with the same status, ticket, alarm,
//	                   destinations, Heard/Seen masks, execution end, sequence numbers
//	                   (sent and acknowledged), unapplied forms, absolute predecessors
//	                   and blocking requests. The pools' states are not compared: a
//	                   restarted task learns them afresh (F2).
const (
	rulePrecedence   = "WK-1/precedence"
	ruleAgentRestart = "F2/agent-restart"
)

// predRec is an absolute predecessor the monitor recorded for a task: the
// predecessor's task and the pool where the task found it competing.
type predRec struct {
	pool winkowski.PoolID
	task winkowski.TaskID
}

// memory is what the simulator's monitor keeps across calls (in the run's tally).
type memory struct {
	// agents: each agent as it was after its last call. A crashed agent's object is
	// never called again (a restart builds a new one), so it stays as the crash left it.
	agents map[int]*winkowski.Agent
	// firstNews: the (task, pool) pairs whose first news was seen; preds the
	// predecessors recorded then.
	firstNews map[predRec]bool
	preds     map[winkowski.TaskID][]predRec
	// tickets: the ticket every task holds by its agent's last call (0: none).
	tickets map[winkowski.TaskID]winkowski.Ticket
	// Counts: tickets given checked against recorded predecessors, and of those with
	// a predecessor still competing; agent restarts compared, tasks restored in them.
	grants, contested, restarts, restored int
}

func (t *ruleTally) mem() *memory {
	if t.memory == nil {
		t.memory = &memory{agents: map[int]*winkowski.Agent{}, firstNews: map[predRec]bool{},
			preds: map[winkowski.TaskID][]predRec{}, tickets: map[winkowski.TaskID]winkowski.Ticket{}}
	}
	return t.memory
}

// recordFirstNews records the absolute predecessors task x found at pool p, from the
// admissions of the state it takes as its first news there — the first time only.
func (m *memory) recordFirstNews(x winkowski.TaskID, p winkowski.PoolID, adms []winkowski.Adm) {
	key := predRec{pool: p, task: x}
	if m.firstNews[key] {
		return
	}
	m.firstNews[key] = true
	for _, q := range adms {
		if q.Task != x {
			m.preds[x] = append(m.preds[x], predRec{pool: p, task: q.Task})
		}
	}
}

// noteTickets records the tickets agent a's tasks hold after a call.
func (m *memory) noteTickets(a *winkowski.Agent) {
	for _, x := range a.Tasks {
		m.tickets[x.ID] = x.Ticket
	}
}

// checkPrecedence is WK-1/precedence for task x, just given ticket n.
func (m *memory) checkPrecedence(sys *winkowski.System, x winkowski.TaskID, n winkowski.Ticket, broken func(rule string, task winkowski.TaskID, format string, args ...any)) {
	m.grants++
	contested := false
	for _, q := range m.preds[x] {
		tq := m.tickets[q.task]
		if tq == 0 {
			continue // left the competition (or never recorded a ticket: not competing)
		}
		contested = true
		if tq > n {
			broken(rulePrecedence, x, "took ticket %d, ranking ahead of its absolute predecessor task %d (ticket %d), which it found competing at %s and which still competes",
				n, q.task, tq, sys.PoolName(q.pool))
			return
		}
	}
	if contested {
		m.contested++
	}
}

// checkRestart is F2/agent-restart: agent a, just restarted, against prev, the agent
// as the crash left it.
func (m *memory) checkRestart(sys *winkowski.System, a, prev *winkowski.Agent, broken func(rule string, task winkowski.TaskID, format string, args ...any)) {
	m.restarts++
	if !slices.Equal(a.Jobs, prev.Jobs) {
		broken(ruleAgentRestart, 0, "restarted with jobs' progress %v, but had %v before the crash", a.Jobs, prev.Jobs)
	}
	ids := func(ts []*winkowski.Task) []winkowski.TaskID {
		out := make([]winkowski.TaskID, len(ts))
		for i, t := range ts {
			out[i] = t.ID
		}
		return out
	}
	if got, want := ids(a.Tasks), ids(prev.Tasks); !slices.Equal(got, want) {
		broken(ruleAgentRestart, 0, "restarted with tasks %v, but had %v before the crash", got, want)
		return
	}
	for i, x := range a.Tasks {
		m.restored++
		if diff := restoredDiff(sys, x, prev.Tasks[i]); diff != "" {
			broken(ruleAgentRestart, x.ID, "restarted in status %v with %s (F2: stable storage keeps it)", x.Status, diff)
		}
	}
}

// restoredDiff names the first stable field of task x (restored) that differs from
// was (before the crash), "" if none does.
func restoredDiff(sys *winkowski.System, x, was *winkowski.Task) string {
	f := func(name string, got, want any) string {
		return fmt.Sprintf("%s %v, but it had %v before the crash", name, got, want)
	}
	switch {
	case x.Status != was.Status:
		return f("status", x.Status, was.Status)
	case x.Ticket != was.Ticket:
		return f("ticket", x.Ticket, was.Ticket)
	case x.AlarmSet != was.AlarmSet || x.AlarmSet && x.Alarm != was.Alarm:
		return f("alarm (set, at)", []any{x.AlarmSet, x.Alarm}, []any{was.AlarmSet, was.Alarm})
	case x.Dest != was.Dest:
		return f("destinations", fmt.Sprintf("%b", x.Dest), fmt.Sprintf("%b", was.Dest))
	case x.Heard != was.Heard:
		return f("heard pools", fmt.Sprintf("%b", x.Heard), fmt.Sprintf("%b", was.Heard))
	case x.Seen != was.Seen:
		return f("bookings seen", fmt.Sprintf("%b", x.Seen), fmt.Sprintf("%b", was.Seen))
	case x.ExecEnd != was.ExecEnd:
		return f("execution end", x.ExecEnd, was.ExecEnd)
	case !slices.Equal(x.Sent, was.Sent):
		return f("sent sequence numbers", x.Sent, was.Sent)
	case !slices.Equal(x.Acked, was.Acked):
		return f("acknowledged sequence numbers", x.Acked, was.Acked)
	}
	pools := sys.Task(x.ID).Pools
	for k := range pools {
		if k >= len(x.About) || k >= len(was.About) || k >= len(x.Unacked) || k >= len(was.Unacked) {
			return f("pools of interest", len(x.About), len(was.About))
		}
		at := sys.PoolName(pools[k])
		switch {
		case !slices.Equal(x.Unacked[k], was.Unacked[k]):
			return f("unapplied forms to "+at, x.Unacked[k], was.Unacked[k])
		case !slices.Equal(x.About[k].Predecessors, was.About[k].Predecessors):
			return f("absolute predecessors at "+at, x.About[k].Predecessors, was.About[k].Predecessors)
		case !slices.Equal(x.About[k].Blocking, was.About[k].Blocking):
			return f("blocking requests at "+at, x.About[k].Blocking, was.About[k].Blocking)
		}
	}
	return ""
}

// remember keeps what the next calls' checks need of agent a after a call: the agent
// itself (for a restart) and its tasks' tickets.
func (m *memory) remember(a *winkowski.Agent) {
	m.agents[a.Index] = a
	m.noteTickets(a)
}

// isRestart reports whether in is the first input after a crash.
func isRestart(in sim.Input) bool { return in.Kind == sim.Restart }
