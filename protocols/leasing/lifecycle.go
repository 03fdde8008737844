package leasing

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// LS-2, the life of a lease after its creation: the expiry timers of both sides, the
// ends (timer, revoke, expire, notice) with their listeners and the release of what
// the lease kept alive, and the tombstones that let a revoke reach a holder out of
// range. Creation is in api.go (Lease) and here (resolve, the client side).

// nextTimers returns the earliest lease deadline of either side and the earliest
// retransmission time (finish runs after every input), from the deadline queues.
func (rt *Runtime) nextTimers() (lease, rto armed) {
	if rt.scan {
		return rt.scanTimers()
	}
	sides := len(rt.Exports) + len(rt.Imports)
	if rt.qdirty&dirtyExport != 0 {
		rt.topEx = armed{}
		if e, ok := rt.exportQ.top(rt.exportLive); ok {
			rt.topEx.earliest(e.At)
		}
		rt.exportQ.compact(sides, rt.exportLive)
	}
	if rt.qdirty&dirtyImport != 0 {
		rt.topIm = armed{}
		if e, ok := rt.importQ.top(rt.importLive); ok && !rt.scanHolders() {
			rt.topIm.earliest(e.At)
		}
		rt.importQ.compact(sides, rt.importLive)
	}
	if rt.qdirty&dirtyRto != 0 {
		rt.topRto = armed{}
		if e, ok := rt.rtoQ.top(rt.rtoLive); ok {
			rt.topRto.earliest(e.At)
		}
		rt.rtoQ.compact(sides, rt.rtoLive)
	}
	rt.qdirty = 0
	lease = rt.topEx
	if len(rt.tombAt) > 0 {
		lease.earliest(rt.tombAt[0])
	}
	if rt.scanHolders() {
		for _, im := range rt.Imports {
			if !im.ID.Far() && !rt.holderTimerStopped(im) {
				lease.earliest(im.Deadline)
			}
		}
	} else if rt.topIm.On {
		lease.earliest(rt.topIm.At)
	}
	return lease, rt.topRto
}

// Bits of Runtime.qdirty: which deadline queues nextTimers must look at again.
const (
	dirtyExport uint8 = 1 << iota
	dirtyImport
	dirtyRto
)

// scanTimers is nextTimers by a pass over every side: for a copy of the runtime (see
// scan), and the reference the tests hold the queues to.
func (rt *Runtime) scanTimers() (lease, rto armed) {
	for _, ex := range rt.Exports {
		if ex.Pattern != nil && ex.Ended == Live {
			lease.earliest(rt.expiry(ex))
		}
	}
	if len(rt.tombAt) > 0 {
		lease.earliest(rt.tombAt[0])
	}
	for _, im := range rt.Imports {
		if !im.ID.Far() && !rt.holderTimerStopped(im) {
			lease.earliest(im.Deadline)
		}
		if im.RtoOn {
			rto.earliest(im.RtoAt)
		}
	}
	return lease, rto
}

// checkTimers makes finish compare the queues with a scan of every side (set by the
// package's tests).
var checkTimers bool

// checkTimerQueues panics unless the queues found what a scan of every export and
// import finds.
func (rt *Runtime) checkTimerQueues(lease, rto armed) {
	if wl, wr := rt.scanTimers(); lease != wl || rto != wr {
		panic(fmt.Sprintf("leasing: timer queues found lease %+v, rto %+v; a scan finds %+v, %+v", lease, rto, wl, wr))
	}
}

// scanHolders says that the holders' timers are found by a scan of every client side:
// with a Policy.HolderTimer, whether a timer runs can change with connectivity, which
// no queue entry follows.
func (rt *Runtime) scanHolders() bool { return rt.Cfg.Policy.HolderTimer != nil }

// expireDue ends every side whose deadline has passed (LS-2 expiry by timer).
func (rt *Runtime) expireDue() {
	for len(rt.tombAt) > 0 && rt.now >= rt.tombAt[0] {
		delete(rt.Tombs, rt.TombOrder[0]) // the holder's side has ended by now anyway
		rt.TombOrder, rt.tombAt = rt.TombOrder[1:], rt.tombAt[1:]
	}
	var due []RefID
	if rt.scan {
		for id, ex := range rt.Exports {
			if ex.Pattern != nil && ex.Ended == Live && rt.now >= rt.expiry(ex) {
				due = append(due, id)
			}
		}
		slices.SortFunc(due, RefID.Compare)
	} else {
		due = rt.exportQ.due(rt.now, rt.exportLive)
		rt.qdirty |= dirtyExport
	}
	for _, id := range due {
		rt.cover(ruleTimerGrantor)
		rt.endExport(id, Expired, "timer")
	}
	if rt.scan || rt.scanHolders() {
		due = due[:0]
		for id, im := range rt.Imports {
			if !id.Far() && rt.now >= im.Deadline && !rt.holderTimerStopped(im) {
				due = append(due, id)
			}
		}
		slices.SortFunc(due, RefID.Compare)
	} else {
		due = rt.importQ.due(rt.now, rt.importLive)
		rt.qdirty |= dirtyImport
	}
	for _, id := range due {
		rt.cover(ruleTimerHolder)
		rt.endImport(id, Expired, "timer")
	}
}

func (rt *Runtime) drainAsync() {
	evs := rt.Async
	rt.Async = nil
	defer func() {
		if len(rt.Async) == 0 {
			clear(evs)
			rt.Async = evs[:0] // reuse the array (the events it held have run)
		}
	}()
	for _, e := range evs {
		switch e.Kind {
		case asyncListener:
			rt.cover(ruleListenersRun)
			rt.out.Observe(KindListener, rt.obs.listener.put(ObsListener{Lease: e.Lease, Side: e.Side, Tag: e.Tag}))
			rt.app.Expired(rt, Expiry{Lease: e.Lease, Side: e.Side, Tag: e.Tag})
		case asyncResolved:
			rt.app.Resolved(rt, Future{ID: e.Future, Tag: e.Tag}, e.Value, e.Refs)
		case asyncRuined:
			var err error = &OpError{Op: "future", Ref: e.Lease, Err: ErrTimeout}
			if e.Err != "" {
				err = &RemoteError{Msg: e.Err}
			}
			rt.app.Ruined(rt, Future{ID: e.Future, Tag: e.Tag}, err)
		case asyncReleased:
			rt.app.Released(rt, Release{Lease: e.Lease, Side: e.Side, How: e.How, Object: e.Object})
		}
	}
}

// resolve creates the client side of a passed reference (pass-by-lease resolution).
func (rt *Runtime) resolve(p Passed, from sim.NodeID) RefID {
	id := p.ID
	if p.Dead || p.Left <= 0 || id.Far() || id.Holder != rt.Self || id.Grantor != from {
		return RefID{}
	}
	if rt.imp(id) != nil {
		return id
	}
	rt.cover(ruleResolve)
	im := &Import{ID: id, Object: p.Object, Pattern: p.Pattern, Term: p.Term, Deadline: rt.now.Add(rt.holderLeft(p.Left)), Until: p.Until}
	rt.Imports[id] = im
	rt.schedImport(im)
	rt.out.Observe(KindResolve, rt.obs.resolve.put(ObsResolve{Lease: id, Object: p.Object, Pattern: p.Pattern, Term: p.Term, Left: p.Left, At: rt.now, Deadline: im.Deadline}))
	return id
}

// endExport ends the server side: observation, listeners (on expiry only), reclaim,
// and a notice to the holder when the end was not a natural expiry.
func (rt *Runtime) endExport(id RefID, how End, cause string) {
	ex := rt.export(id)
	left := max(0, ex.Deadline.Sub(rt.now))
	n := 0
	if rt.listeners(Server, how) {
		for _, tag := range ex.Listeners {
			rt.Async = append(rt.Async, asyncEv{Kind: asyncListener, Lease: id, Side: Server, Tag: tag})
			n++
		}
	} else if len(ex.Listeners) > 0 {
		rt.cover(ruleNoListeners)
	}
	rt.out.Observe(KindEnd, rt.obs.end.put(ObsEnd{Lease: id, Side: Server, How: how, Cause: cause, At: rt.now, Deadline: ex.Deadline, Left: left, Listeners: n}))
	if f, ok := rt.Futures[id.N]; ok && ex.Object == futureObject {
		// LS-4: the future's lease ended before the reply: the future is ruined, with
		// a timeout when it expired (the catch: block of @Due).
		outcome := "timeout"
		if how == Revoked {
			outcome = "revoked"
		}
		rt.settle(f, outcome, nil, nil, "")
	}
	if rt.reclaims(how, cause) {
		rt.dropExport(id)
		if cause != "timer" {
			// Ended by notice (revoke, explicit expire): the holder may have to hear of
			// it again (tombstone).
			rt.bury(id, Tomb{Deadline: ex.Deadline, Expected: ex.Expected, How: how})
		}
		if ex.Object != futureObject {
			rt.release(asyncEv{Kind: asyncReleased, Lease: id, Side: Server, How: how, Object: ex.Object}, n > 0)
		}
	} else {
		ex.Ended = how // kept, marked ended (Policy.Reclaims)
		rt.qdirty |= dirtyExport
	}
	if id == rt.inCall {
		rt.callEnd = how // the call's ack carries the end
		return
	}
	if cause != "timer" && rt.notifies(endVerb(how)) {
		rt.out.Send(id.Holder, Ack{Ref: id, SBoot: rt.Boot, UpTo: ex.Expected - 1, End: how})
	}
}

// endVerb names an explicit end for Policy.Notifies.
func endVerb(how End) string {
	if how == Revoked {
		return "revoke"
	}
	return "expire"
}

// endImport ends the client side: observation, listeners (on expiry only), reclaim.
func (rt *Runtime) endImport(id RefID, how End, cause string) {
	im := rt.imp(id)
	if im.Revoking {
		rt.dropImport(id) // already ended (revoked) when the holder asked
		return
	}
	n := 0
	if rt.listeners(Client, how) {
		for _, tag := range im.Listeners {
			rt.Async = append(rt.Async, asyncEv{Kind: asyncListener, Lease: id, Side: Client, Tag: tag})
			n++
		}
	} else if len(im.Listeners) > 0 {
		rt.cover(ruleNoListeners)
	}
	rt.out.Observe(KindEnd, rt.obs.end.put(ObsEnd{Lease: id, Side: Client, How: how, Cause: cause, At: rt.now, Deadline: im.Deadline, Left: max(0, im.Deadline.Sub(rt.now)), Listeners: n}))
	rt.dropImport(id)
	if im.Object != futureObject {
		rt.release(asyncEv{Kind: asyncReleased, Lease: id, Side: Client, How: how, Object: im.Object}, n > 0)
	}
}

// release hands a lease's end to the application's garbage collection (App.Released):
// after the listeners, in their turn, when there are any; otherwise at the end of the
// current call (never in the middle of an operation).
func (rt *Runtime) release(e asyncEv, afterListeners bool) {
	rt.cover(ruleReleased)
	if !rt.tellsRelease(e.Side, e.How) {
		return
	}
	if afterListeners {
		rt.Async = append(rt.Async, e)
		return
	}
	rt.releases = append(rt.releases, e)
}

// renotify repeats the end notices of tombstoned leases held by peer.
func (rt *Runtime) renotify(peer sim.NodeID) {
	var ids []RefID
	for id := range rt.Tombs {
		if id.Holder == peer {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, RefID.Compare)
	if len(ids) > 0 {
		rt.cover(ruleTombstoneRenotify)
	}
	if !rt.repeats("renotify") {
		return
	}
	for _, id := range ids {
		tb := rt.Tombs[id]
		rt.out.Send(peer, Ack{Ref: id, SBoot: rt.Boot, UpTo: tb.Expected - 1, End: tb.How})
	}
}

// bury keeps a tombstone for id, ordered by deadline.
func (rt *Runtime) bury(id RefID, tb Tomb) {
	if !rt.tombstones(tb.How) {
		return
	}
	rt.cover(ruleTombstone)
	rt.Tombs[id] = tb
	// By (deadline, id): the first entry after every earlier deadline, then by id
	// among equal ones (usually the end: deadlines mostly come in order).
	i := len(rt.tombAt)
	for i > 0 && (rt.tombAt[i-1] > tb.Deadline || (rt.tombAt[i-1] == tb.Deadline && rt.TombOrder[i-1].Compare(id) > 0)) {
		i--
	}
	rt.TombOrder = slices.Insert(rt.TombOrder, i, id)
	rt.tombAt = slices.Insert(rt.tombAt, i, tb.Deadline)
}
