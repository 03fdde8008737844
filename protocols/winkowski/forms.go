package winkowski

import "slices"

// ---- task actions: sending forms, resending and polling (choice K2) ----

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
