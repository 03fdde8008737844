package winkowski

import (
	"fmt"
	"slices"
)

// ---- task actions: the game (WK-1…WK-4) ----

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
