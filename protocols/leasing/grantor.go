package leasing

import (
	"fmt"

	"github.com/simrun-dev/simrun/sim"
)

// The grantor's side of a reference: taking the holder's messages in order and exactly
// once (LS-1, LS-P3), refusing those that arrive at or after the deadline (LS-P1),
// running the lease's interceptor (LS-3) and acknowledging with the time left
// piggybacked (LS-2).

func (rt *Runtime) receive(from sim.NodeID, m sim.Message) {
	if boot, ok := bootOf(m); ok && !rt.hear(from, boot) {
		return
	}
	switch m := m.(type) {
	case Beacon:
	case Call:
		rt.onCall(from, m)
	case Ack:
		rt.onAck(m)
	default:
		panic(fmt.Sprintf("leasing: unexpected message %s", m.Kind()))
	}
}

// onCall is the grantor's side of a reference: in-order, exactly-once processing of
// the holder's messages, the LS-P1 deadline check, the interceptor, and the ack that
// piggybacks the time left.
func (rt *Runtime) onCall(from sim.NodeID, c Call) {
	id := c.Ref
	drop := func(why string) {
		rt.out.Observe(KindDrop, &ObsDrop{Ref: id, Seq: c.Seq, Op: c.Op, Why: why, At: rt.now})
	}
	if id.Grantor != rt.Self || id.GBoot != rt.Boot {
		drop("stale incarnation")
		return
	}
	if id.Holder != from || (id.Far() && id.HBoot != c.SBoot) {
		drop("not the holder")
		return
	}
	ex := rt.export(id)
	if ex == nil {
		if tb, ok := rt.Tombs[id]; ok {
			// Revoked or expired explicitly: tell the holder (again).
			rt.cover(ruleTombstoneAnswers)
			if c.Seq >= tb.Expected {
				drop("ended")
			}
			if rt.repeats("answer") {
				rt.ack(id, tb.Expected-1, tb.How)
			}
			return
		}
		if !id.Far() {
			// §3: a message for an expired or revoked lease is ignored; the holder's
			// own timer will expire.
			drop("ended")
			return
		}
		ex = &Export{ID: id, Object: FarObject, Expected: 1}
		rt.Exports[id] = ex
	}
	// LS-P3: in order and exactly once per reference (sequence numbers; a gap waits for
	// the holder's in-order retransmission).
	if !rt.takes(c.Seq, ex.Expected) {
		if c.Seq < ex.Expected {
			rt.cover(ruleDuplicate)
			rt.ack(id, ex.Expected-1, Live) // a retransmission: acknowledge again
			return
		}
		rt.cover(ruleGap)
		return // an earlier message was lost: the holder retransmits in order
	}
	live := !rt.expiredExport(ex)
	rt.out.Observe(KindRecv, rt.obs.recv.put(ObsRecv{Ref: id, Seq: c.Seq, Op: c.Op, Method: c.Method, D: c.D, Live: live, At: rt.now, Deadline: rt.expiry(ex)}))
	if !live {
		// LS-P1: it arrived at or after the deadline (the timer has not fired yet in
		// this instant): the lease expires now and the message is not processed.
		if ex.Ended == Live {
			rt.cover(ruleLateArrival)
			rt.endExport(id, Expired, "timer")
		}
		return
	}
	ex.Expected++
	rt.inCall, rt.callEnd = id, Live
	switch c.Op {
	case OpApp:
		rt.dispatch(ex, from, c)
	case OpRenew:
		if rt.obeys(OpRenew) {
			_ = rt.renewExport(id, c.D, "client")
		}
	case OpRevoke:
		if rt.export(id) != nil && rt.obeys(OpRevoke) {
			rt.cover(ruleRevokeRequest)
			rt.endExport(id, Revoked, "request")
		}
	}
	rt.inCall = RefID{}
	rt.ack(id, c.Seq, rt.callEnd)
}

// ack acknowledges up to upTo on reference id, piggybacking the time left (LS-2), or
// how the lease ended during this call.
func (rt *Runtime) ack(id RefID, upTo int64, end End) {
	a := Ack{Ref: id, SBoot: rt.Boot, UpTo: upTo}
	if ex := rt.export(id); ex != nil && ex.Ended == Live {
		if ex.Pattern != nil {
			a.Left, a.Until = ex.Deadline.Sub(rt.now), ex.Deadline
		}
	} else {
		a.End = end
		if a.End == Live {
			a.End = Expired
		}
	}
	rt.out.Send(id.Holder, a)
}

// dispatch runs the lease's interceptor (or forwards directly on a far reference).
func (rt *Runtime) dispatch(ex *Export, from sim.NodeID, c Call) {
	// One control per runtime, reused: a LeaseCtl is valid only during Receive, and a
	// call dispatches one message (nothing is dispatched from inside another).
	lc := rt.ctl
	if lc == nil {
		lc = new(LeaseCtl)
		rt.ctl = lc
	}
	*lc = LeaseCtl{rt: rt, id: ex.ID, ex: ex, call: c, from: from}
	defer func() { *lc = LeaseCtl{} }() // keep nothing of the message
	if ex.Pattern == nil {
		defer func() {
			if r := recover(); r != nil {
				if op, ok := r.(outsidePanic); ok {
					panic(op.v)
				}
				panic(r)
			}
		}()
		_ = lc.Forward()
		return
	}
	rt.intercept(ex.Pattern, lc)
}

// expiredExport reports whether a server side no longer accepts messages: ended, or
// its deadline reached (the timer may not have fired yet in this instant). A far
// reference never expires.
func (rt *Runtime) expiredExport(ex *Export) bool {
	return ex.Pattern != nil && !rt.accepts(ex)
}

// expiry is when a live server side expires: its deadline (Policy.GrantorExpiry).
func (rt *Runtime) expiry(ex *Export) sim.Time { return rt.grantorExpiry(ex.Deadline) }

// intercept runs a pattern's Receive. A panicking pattern is contained (LS-3 custom
// patterns are user code): the panic is observed and the lease, if still live, expires
// at both sides, so the failure is reported and never takes the device down. What the
// pattern did before it panicked stands: if it had not forwarded the message, the
// message is dropped (taken in order, never processed); if it had, the service object
// has already processed it. A panic raised inside a LeaseCtl method — by the service
// object or by the runtime itself — is not the pattern's: it propagates.
func (rt *Runtime) intercept(p Interceptor, lc *LeaseCtl) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if op, ok := r.(outsidePanic); ok {
			panic(op.v)
		}
		rt.cover(rulePatternPanic)
		rt.out.Observe(KindPatternError, &ObsPatternError{Lease: lc.id, Pattern: p.Name(), Panic: fmt.Sprint(r)})
		if ex := rt.export(lc.id); ex != nil && ex.Ended == Live && rt.panicExpires() {
			rt.endExport(lc.id, Expired, "pattern-panic")
		}
	}()
	p.Receive(lc)
}

// passed describes a lease this device grants as it is passed in a message now
// (pass-by-lease): its time left at this transmission, or dead once it ended.
func (rt *Runtime) passed(id RefID) Passed {
	ex := rt.export(id)
	if ex == nil || ex.Ended != Live || rt.now >= ex.Deadline {
		return Passed{ID: id, Dead: true}
	}
	return Passed{ID: id, Object: ex.Object, Pattern: ex.Pattern.Name(), Term: ex.Term, Left: ex.Deadline.Sub(rt.now), Until: ex.Deadline}
}
