package wkscen

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/protocols/winkowski"
	"github.com/simrun-dev/simrun/sim"
)

// The agent monitor's rules for a task's decisions (monitor.go has the others). Each
// evaluates the paper's condition on the task's own knowledge, written afresh here
// from the text (§2, §3 "Actions of tasks") and the choices of protocols/winkowski,
// and checks both ways: the task acts when the condition holds, and only then.
//
//	WK-1/enter     §3 "change of status from REGISTERING to ADMITTED" (with N1 and
//	               E1): on a state, a task takes a ticket only once every pool has
//	               answered (its knowledge of each shows it registered) and no
//	               absolute predecessor is left, and it does so then;
//	               by the alarm (a timeout) only while some predecessor is left. A task
//	               that waits for predecessors in the alarm mode has the alarm set, to
//	               clock+Γ afresh when a predecessor left in the call (E1), else not
//	               moved by a state.
//	WK-3/progress  §2/§3 the winning condition and (WK-4) the ordering condition: with
//	               its requests known at every pool (sent, in current states: K1), each
//	               preceded by fewer requests than accessible resources, and (p1)/(p3)
//	               holding, a task in TRYING wins (restricted) or orders (complete: order
//	               forms to every pool); in ORDERING, once it also sees its order form at
//	               every pool (O1), it wins. Order and winning forms are sent only then.
//	               A task starts accessing only with its resource booked at every pool,
//	               and then withdraws its forms everywhere and gives its ticket back.
//	WK-4/alarm     §2/§3 "setting the alarm-clock": a task of the complete variant in
//	               TRYING or ORDERING that is blocked (the above, except that some
//	               request is not in front) has the alarm set after the call; set in the
//	               call, it is clock+Γ (G1) and BlockingRequests_P are the predecessors
//	               of its request without an order form; a state never moves a running
//	               alarm. The restricted variant never sets it in the competition.
//	WK-4/advance   §2/§3 "noticing that the clock has reached the alarm-clock" (G1, A1):
//	               when the alarm rings on a blocked task and every registered blocking
//	               request still precedes its request, the task sends advancing forms
//	               to exactly the pools where it is not in front; when one was removed,
//	               it registers the current ones and waits Γ again. Advancing forms are
//	               sent only then.

// alarmTimer is the timer of task id's alarm clock (protocols/winkowski's naming).
func alarmTimer(id winkowski.TaskID) sim.TimerID { return sim.TimerID(fmt.Sprintf("alarm/%d", id)) }

// poolFacts is task x's reading of its k-th pool at its decision: its knowledge after
// the call (the state it learned), its forms before it.
type poolFacts struct {
	pos         int // T's request's index, -1 if not known to be there (K1)
	count, free int // the two sides of (p1)/(p3)
	ownOrder    bool
}

func (f poolFacts) seen() bool  { return f.pos >= 0 }
func (f poolFacts) p() bool     { return f.count < f.free }
func (f poolFacts) front() bool { return f.pos >= 0 && f.pos < f.free }

func factsOf(sys *winkowski.System, x *winkowski.Task, b *taskSnap, k int) poolFacts {
	kn := &x.About[k]
	n, free, _ := countP(sys, x, b, k)
	f := poolFacts{pos: -1, count: n, free: free}
	current := x.Acked[k] == b.sent[k]
	if b.dest&bit(k) == 0 && current {
		f.pos = slices.IndexFunc(kn.Requests, func(r winkowski.Req) bool { return r.Task == x.ID })
	}
	f.ownOrder = current && slices.Contains(kn.Orders, x.ID)
	return f
}

// competition summarizes the facts over every pool.
type competition struct {
	facts              []poolFacts
	p, seen, front, os bool // every pool: (p1)/(p3), seen, in front, own order form seen
}

func competitionOf(sys *winkowski.System, x *winkowski.Task, b *taskSnap) competition {
	c := competition{p: true, seen: true, front: true, os: true}
	for k := range sys.Task(x.ID).Pools {
		f := factsOf(sys, x, b, k)
		c.facts = append(c.facts, f)
		c.p, c.seen, c.front, c.os = c.p && f.p(), c.seen && f.seen(), c.front && f.front(), c.os && f.ownOrder
	}
	return c
}

// blocked: (p1)/(p3) holds, every request seen (and in ORDERING every order form),
// some request not in front.
func (c competition) blocked(status winkowski.Status) bool {
	return c.p && c.seen && !c.front && (status == winkowski.Trying || c.os)
}

// blockers returns the predecessors of x's request at pool k without an order form.
func blockers(x *winkowski.Task, k int) []winkowski.Req {
	kn := &x.About[k]
	pos := slices.IndexFunc(kn.Requests, func(r winkowski.Req) bool { return r.Task == x.ID })
	var out []winkowski.Req
	for _, r := range kn.Requests[:max(pos, 0)] {
		if !slices.Contains(kn.Orders, r.Task) {
			out = append(out, r)
		}
	}
	return out
}

// formsOf returns the new forms (not resent ones: K2) of kind that task x (b before
// the call) sent in the call.
func formsOf(sys *winkowski.System, sends []sim.Envelope, x *winkowski.Task, b *taskSnap, kind winkowski.FormKind) []winkowski.Form {
	var out []winkowski.Form
	pools := sys.Task(x.ID).Pools
	for _, e := range sends {
		if f, ok := e.Msg.(winkowski.Form); ok && f.Task == x.ID && f.Type == kind {
			if k := slices.Index(pools, f.Pool); k >= 0 && f.Seq > b.sent[k] {
				out = append(out, f)
			}
		}
	}
	return out
}

// toEvery reports whether forms go to every pool of ps exactly once.
func toEvery(forms []winkowski.Form, ps []winkowski.PoolID) bool {
	if len(forms) != len(ps) {
		return false
	}
	for _, p := range ps {
		if !slices.ContainsFunc(forms, func(f winkowski.Form) bool { return f.Pool == p }) {
			return false
		}
	}
	return true
}

func distinctPreds(preds [][]winkowski.Adm) int {
	var seen []winkowski.TaskID
	for _, ps := range preds {
		for _, p := range ps {
			if !slices.Contains(seen, p.Task) {
				seen = append(seen, p.Task)
			}
		}
	}
	return len(seen)
}

// checkEnter checks the end of x's entering phase in this call (WK-1/enter).
func checkEnter(sys *winkowski.System, agent int, x *winkowski.Task, b *taskSnap, in sim.Input, t *ruleTally) []RuleBroken {
	if b.status != winkowski.Registering {
		return nil
	}
	var out []RuleBroken
	broken := func(format string, args ...any) {
		out = append(out, RuleBroken{Rule: ruleEnter, Agent: agent, Task: x.ID, Detail: t.detail(ruleEnter, format, args...)})
	}
	pools := sys.Task(x.ID).Pools
	all := uint64(1)<<uint(len(pools)) - 1
	admitted := b.ticket == 0 && x.Ticket != 0
	switch in.Kind {
	case sim.Timeout:
		if !admitted {
			return nil
		}
		t.entries++
		if in.Timer != alarmTimer(x.ID) || !b.alarmSet || distinctPreds(b.preds) == 0 || sys.Entering != winkowski.EnterAlarm {
			broken("took a ticket on timer %s (alarm set: %v, %d absolute predecessors left, entering %v): E1 enters by the alarm only past remaining predecessors",
				in.Timer, b.alarmSet, distinctPreds(b.preds), sys.Entering)
		}
	case sim.Receive:
		m, ok := in.Msg.(winkowski.State)
		if !ok || m.Task != x.ID || x.Fresh != all {
			return nil
		}
		k := slices.Index(pools, m.Pool)
		if k < 0 || m.Seq < b.acked[k] || m.Seq > b.sent[k] {
			return nil
		}
		t.entries++
		// The absolute predecessors by this state (§3 receiving a message).
		left := slices.Clone(b.preds)
		switch {
		case b.heard&bit(k) == 0 && m.Snap.Registered(x.ID):
			left[k] = slices.DeleteFunc(slices.Clone(m.Snap.Admissions), func(a winkowski.Adm) bool { return a.Task == x.ID })
		default:
			left[k] = slices.DeleteFunc(slices.Clone(b.preds[k]), func(a winkowski.Adm) bool { return !m.Snap.Admitted(a.Task) })
		}
		// N1: every pool has answered, by T's knowledge: each shows T registered.
		heard := x.Heard == all
		for k := range pools {
			heard = heard && slices.ContainsFunc(x.About[k].Registered, func(r winkowski.Reg) bool { return r.Task == x.ID })
		}
		n := distinctPreds(left)
		switch {
		case admitted && (!heard || n > 0):
			broken("took a ticket on a state with %d absolute predecessors left and pools heard %b of %b (WK-1, N1)", n, x.Heard, all)
		case !admitted && heard && n == 0:
			broken("every pool answered and no absolute predecessor is left, yet it is still %v without a ticket (WK-1)", x.Status)
		case !admitted && heard && n > 0 && sys.Entering == winkowski.EnterAlarm:
			want := b.alarm
			if !b.alarmSet || n < distinctPreds(b.preds) {
				want = in.Now.Add(sys.Gamma)
			}
			if !x.AlarmSet || x.Alarm != want {
				broken("waits for %d absolute predecessors with the alarm %v at %v, want set at %v (E1: clock+Γ when none was set or a predecessor left, else kept)",
					n, map[bool]string{true: "set", false: "not set"}[x.AlarmSet], x.Alarm, want)
			}
		}
	}
	return out
}

// checkCompetition checks x's decisions to order, win, arm its alarm and advance in
// this call (WK-3/progress, WK-4/alarm, WK-4/advance).
func checkCompetition(sys *winkowski.System, agent int, x *winkowski.Task, b *taskSnap, in sim.Input, sends []sim.Envelope, t *ruleTally) []RuleBroken {
	var out []RuleBroken
	broken := func(rule, format string, args ...any) {
		out = append(out, RuleBroken{Rule: rule, Agent: agent, Task: x.ID, Detail: t.detail(rule, format, args...)})
	}
	pools := sys.Task(x.ID).Pools
	all := uint64(1)<<uint(len(pools)) - 1
	orders, wins, advances := formsOf(sys, sends, x, b, winkowski.FormOrder), formsOf(sys, sends, x, b, winkowski.FormWinning), formsOf(sys, sends, x, b, winkowski.FormAdvancing)
	if b.status == winkowski.Winning && x.Status == winkowski.Accessing {
		// WK-3 (W1, T1): booked everywhere, T withdraws its forms at every pool and
		// gives its ticket back.
		t.progress++
		var final []winkowski.Form
		for _, f := range formsOf(sys, sends, x, b, winkowski.FormWithdrawal) {
			if f.Final {
				final = append(final, f)
			}
		}
		for k, p := range pools {
			if _, ok := x.About[k].UnitOf(x.ID); !ok {
				broken(ruleProgress, "started accessing without seeing its resource of %s booked", sys.PoolName(p))
			}
		}
		if !toEvery(final, pools) || x.Ticket != 0 {
			broken(ruleProgress, "started accessing with final withdrawals to %d of %d pools and ticket %d kept (W1, T1)", len(final), len(pools), x.Ticket)
		}
	}
	// WK-3 (§3 "sending a request"): a pool leaves Destinations only by a request
	// sent to it — in the call that admits T (every pool is a destination then) or
	// later.
	if x.Status == winkowski.Trying || x.Status == winkowski.Ordering {
		dest := b.dest
		if b.ticket == 0 && x.Ticket != 0 {
			dest = all
		}
		reqs := formsOf(sys, sends, x, b, winkowski.FormRequest)
		for k, p := range pools {
			if dest&bit(k) != 0 && x.Dest&bit(k) == 0 && !slices.ContainsFunc(reqs, func(f winkowski.Form) bool { return f.Pool == p }) {
				broken(ruleRegress, "%s is no longer a destination, yet no request was sent to it", sys.PoolName(p))
			}
		}
	}
	competing := b.status == winkowski.Trying || b.status == winkowski.Ordering
	if !competing {
		if len(orders)+len(wins)+len(advances) > 0 && b.status != winkowski.Registering {
			broken(ruleProgress, "sent %d order, %d winning and %d advancing forms in status %v", len(orders), len(wins), len(advances), b.status)
		}
		return out
	}
	if x.Fresh != all || b.dest != 0 && len(orders)+len(wins)+len(advances) == 0 {
		return out // not playing yet (F2), or distributing its requests (WK-3/regress checks)
	}
	c := competitionOf(sys, x, b)
	restricted := sys.Variant == winkowski.Restricted
	name := map[bool]string{true: "(p1)", false: "(p3)"}[restricted]
	why := func() string {
		return fmt.Sprintf("%s %v, requests seen %v, in front %v, own order forms seen %v", name, c.p, c.seen, c.front, c.os)
	}
	// Only when: order and winning forms.
	mayOrder := !restricted && b.status == winkowski.Trying && b.dest == 0 && c.p && c.seen && c.front
	mayWin := b.dest == 0 && c.p && c.seen && c.front &&
		((restricted && b.status == winkowski.Trying) || (!restricted && b.status == winkowski.Ordering && c.os))
	if len(orders) > 0 || len(wins) > 0 {
		t.progress++
	}
	if len(orders) > 0 && (!mayOrder || !toEvery(orders, pools)) {
		broken(ruleProgress, "sent order forms to %d of %d pools in %v: %s", len(orders), len(pools), b.status, why())
	}
	if len(wins) > 0 && (!mayWin || !toEvery(wins, pools)) {
		broken(ruleProgress, "sent winning forms to %d of %d pools in %v: %s", len(wins), len(pools), b.status, why())
	}
	// Advancing forms: only when the alarm rings on a blocked task whose blocking
	// requests all stay, to the pools where it is not in front.
	ring := in.Kind == sim.Timeout && in.Timer == alarmTimer(x.ID) && b.alarmSet && !restricted
	var stay bool
	if ring && c.blocked(b.status) {
		stay = true
		for k := range pools {
			pos := c.facts[k].pos
			for _, r := range b.blocking[k] {
				stay = stay && slices.Contains(x.About[k].Requests[:pos], r)
			}
		}
	}
	if ring {
		t.rings++
	}
	if len(advances) > 0 || (ring && c.blocked(b.status)) {
		for k, p := range pools {
			sent := slices.ContainsFunc(advances, func(f winkowski.Form) bool { return f.Pool == p })
			want := ring && c.blocked(b.status) && stay && !c.facts[k].front()
			if sent != want {
				broken(ruleAdvance, "%s an advancing form to %s (alarm rang: %v, blocked: %v, blocking requests stayed: %v, in front there: %v)",
					map[bool]string{true: "sent", false: "sent no"}[sent], sys.PoolName(p), ring, c.blocked(b.status), stay, c.facts[k].front())
			}
		}
		if ring && c.blocked(b.status) && !stay && (!x.AlarmSet || x.Alarm != in.Now.Add(sys.Gamma)) {
			broken(ruleAdvance, "a blocking request was removed when the alarm rang, yet the alarm is not set to clock+Γ again (G1)")
		}
		if len(advances) > 0 && x.Status != b.status {
			broken(ruleAdvance, "is %v after sending advancing forms in %v (ADVANCING lasts for the sending, A1)", x.Status, b.status)
		}
	}
	// Must: decisions on a state (a new view) the task played on.
	m, isState := in.Msg.(winkowski.State)
	if in.Kind != sim.Receive || !isState || m.Task != x.ID {
		return out
	}
	k := slices.Index(pools, m.Pool)
	if k < 0 || m.Seq < b.acked[k] || m.Seq > b.sent[k] || !c.p {
		return out // ignored (older), or regressing (WK-3/regress checks)
	}
	switch {
	case mayOrder:
		t.progress++
		if len(orders) == 0 {
			broken(ruleProgress, "may order (%s) yet sent no order form", why())
		}
	case mayWin:
		t.progress++
		if len(wins) == 0 {
			broken(ruleProgress, "may win in %v (%s) yet sent no winning form", b.status, why())
		}
	case b.dest == 0 && c.blocked(b.status):
		t.alarms++
		if restricted {
			if x.AlarmSet {
				broken(ruleAlarm, "set the alarm in %v: the restricted variant has no alarm in the competition", b.status)
			}
			break
		}
		if !x.AlarmSet {
			broken(ruleAlarm, "is blocked in %v (%s) without its alarm set", b.status, why())
			break
		}
		if b.alarmSet {
			if x.Alarm != b.alarm {
				broken(ruleAlarm, "a state moved its running alarm from %v to %v", b.alarm, x.Alarm)
			}
			break
		}
		if x.Alarm != in.Now.Add(sys.Gamma) {
			broken(ruleAlarm, "set its alarm to %v at %v, want clock+Γ = %v (G1)", x.Alarm, in.Now, in.Now.Add(sys.Gamma))
		}
		for k, p := range pools {
			if want := blockers(x, k); !slices.Equal(x.About[k].Blocking, want) {
				broken(ruleAlarm, "registered blocking requests %v at %s, want the predecessors without an order form %v", x.About[k].Blocking, sys.PoolName(p), want)
			}
		}
	}
	return out
}
