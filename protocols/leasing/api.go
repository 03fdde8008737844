package leasing

import (
	"fmt"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// This file is the lease API of Fig. 5 and §4 (LS-2), usable from application code
// during a handler call. An operation names a reference by its RefID; the runtime
// knows whether this device is its grantor (server side) or its holder (client side).
// Caller mistakes return an *OpError; nothing here panics on bad input.

// Lease creates a leased reference to the service object named object, valid for term,
// managed by pattern p (nil: Basic), to be held by holder (LS-2 lease:for:,
// renewOnCallLease:for:, singleCallLease:for:). The server-side timer starts now. The
// client side is created when the returned reference is passed to holder in a message
// (Send's pass arguments), with the time left at that moment.
func (rt *Runtime) Lease(object string, term time.Duration, p Interceptor, holder sim.NodeID) (RefID, error) {
	if term <= 0 {
		return RefID{}, &OpError{Op: "lease " + object, Err: fmt.Errorf("term %v: %w", term, ErrTerm)}
	}
	if holder == rt.Self || holder < 0 {
		return RefID{}, &OpError{Op: "lease " + object, Err: fmt.Errorf("holder %d: %w (a lease is held by another device)", holder, ErrPass)}
	}
	if p == nil {
		p = Basic{}
	}
	rt.cover(ruleLease)
	return rt.newExport(object, term, p, holder), nil
}

func (rt *Runtime) newExport(object string, term time.Duration, p Interceptor, holder sim.NodeID) RefID {
	rt.NextN++
	id := RefID{Grantor: rt.Self, GBoot: rt.Boot, N: rt.NextN, Holder: holder}
	p = rt.pattern(p)
	ex := &Export{ID: id, Object: object, Pattern: p, Term: term, Deadline: rt.now.Add(term), Expected: 1}
	rt.Exports[id] = ex
	rt.schedExport(ex)
	rt.out.Observe(KindGrant, rt.obs.grant.put(ObsGrant{Lease: id, Object: object, Pattern: p.Name(), Term: term, At: rt.now, Deadline: ex.Deadline}))
	return id
}

// Renew prolongs a lease (LS-2 renew): the new time left is max(time left, d). At the
// grantor it takes effect at once and the holder is sent the new time left; at the
// holder it is a renewal request, delivered in order with the reference's messages
// (ignored by the grantor if the lease has ended there by then, §3). At the grantor,
// renewing a lease that ended is refused (and observed as a refused renewal).
func (rt *Runtime) Renew(ref RefID, d time.Duration) error {
	if d <= 0 {
		return &OpError{Op: "renew", Ref: ref, Err: fmt.Errorf("renewal time %v: %w", d, ErrTerm)}
	}
	if ex := rt.export(ref); ex != nil || rt.granted(ref) {
		if ex != nil && ex.Pattern == nil {
			return &OpError{Op: "renew", Ref: ref, Err: ErrNotLeased}
		}
		return rt.renewExport(ref, d, "server")
	}
	im, err := rt.liveImport("renew", "", ref)
	if err != nil {
		return err
	}
	if ref.Far() {
		return &OpError{Op: "renew", Ref: ref, Err: ErrNotLeased}
	}
	rt.cover(ruleRenewRequest)
	if rt.requests(OpRenew) {
		rt.enqueue(im, Call{Op: OpRenew, D: d})
	}
	return nil
}

// granted reports whether ref names a lease this incarnation of the device granted
// (live or ended).
func (rt *Runtime) granted(ref RefID) bool {
	return !ref.Far() && ref.Grantor == rt.Self && ref.GBoot == rt.Boot && ref.N <= rt.NextN
}

// renewExport applies the max rule at the grantor (by: "server", "pattern", "client").
func (rt *Runtime) renewExport(id RefID, d time.Duration, by string) error {
	ex := rt.export(id)
	if d <= 0 {
		return &OpError{Op: "renew", Ref: id, Err: fmt.Errorf("renewal time %v: %w", d, ErrTerm)}
	}
	if ex == nil || rt.expiredExport(ex) {
		if ex != nil && ex.Ended == Live {
			rt.endExport(id, Expired, "timer") // deadline reached in this instant
		}
		rt.cover(ruleRenewRefused)
		rt.out.Observe(KindRenew, rt.obs.renew.put(ObsRenew{Lease: id, By: by, D: d, Ok: false, At: rt.now}))
		return &OpError{Op: "renew", Ref: id, Err: ErrEnded}
	}
	before := ex.Deadline
	left := before.Sub(rt.now)
	if d > left {
		rt.cover(ruleRenewExtends)
	} else {
		rt.cover(ruleRenewKeeps)
	}
	nl := rt.renewedLeft(left, d) // LS-2: new time left = max(current time left, renewal time)
	ex.Deadline = rt.now.Add(nl)
	rt.schedExport(ex)
	rt.out.Observe(KindRenew, rt.obs.renew.put(ObsRenew{Lease: id, By: by, D: d, Ok: true, At: rt.now, Before: before, After: ex.Deadline}))
	if by == "server" && id != rt.inCall {
		// Tell the holder at once: its timer follows the grantor's (LS-2).
		rt.cover(ruleRenewNotifies)
		if rt.notifies("renew") {
			rt.out.Send(id.Holder, Ack{Ref: id, SBoot: rt.Boot, UpTo: ex.Expected - 1, Left: nl, Until: ex.Deadline})
		}
	}
	return nil
}

// Revoke ends a lease now without running expiry listeners (LS-2 revoke). At the
// grantor the holder is notified; at the holder the revocation is sent to the grantor
// after the messages already buffered, and the reference accepts nothing more.
func (rt *Runtime) Revoke(ref RefID) error {
	if ex := rt.export(ref); ex != nil {
		if ex.Pattern == nil {
			return &OpError{Op: "revoke", Ref: ref, Err: ErrNotLeased}
		}
		if rt.expiredExport(ex) {
			if ex.Ended == Live {
				rt.endExport(ref, Expired, "timer")
			}
			return &OpError{Op: "revoke", Ref: ref, Err: ErrEnded}
		}
		rt.cover(ruleRevokeGrantor)
		rt.endExport(ref, Revoked, "explicit")
		return nil
	}
	im, err := rt.liveImport("revoke", "", ref)
	if err != nil {
		return err
	}
	if ref.Far() {
		return &OpError{Op: "revoke", Ref: ref, Err: ErrNotLeased}
	}
	rt.cover(ruleRevokeHolder)
	if rt.requests(OpRevoke) {
		rt.enqueue(im, Call{Op: OpRevoke})
	}
	im.Revoking = true
	rt.out.Observe(KindEnd, rt.obs.end.put(ObsEnd{Lease: ref, Side: Client, How: Revoked, Cause: "explicit", At: rt.now, Deadline: im.Deadline, Left: max(0, im.Deadline.Sub(rt.now))}))
	if im.Object != futureObject {
		rt.release(asyncEv{Kind: asyncReleased, Lease: ref, Side: Client, How: Revoked, Object: im.Object}, false)
	}
	if len(im.Buf) == 0 {
		rt.dropImport(ref) // nothing to deliver (a Policy.Enqueue that kept nothing)
	}
	return nil
}

// Expire ends a lease now and runs its expiry listeners (LS-2 expire). At the grantor
// the holder is notified and its listeners run too; at the holder it is local (the
// grantor's timer expires on its own, as after any silence from the holder).
func (rt *Runtime) Expire(ref RefID) error {
	if ex := rt.export(ref); ex != nil {
		if ex.Pattern == nil {
			return &OpError{Op: "expire", Ref: ref, Err: ErrNotLeased}
		}
		if ex.Ended != Live {
			return &OpError{Op: "expire", Ref: ref, Err: ErrEnded}
		}
		cause := "explicit"
		if rt.now >= ex.Deadline {
			cause = "timer"
		}
		rt.cover(ruleExpireGrantor)
		rt.endExport(ref, Expired, cause)
		return nil
	}
	if _, err := rt.liveImport("expire", "", ref); err != nil {
		return err
	}
	if ref.Far() {
		return &OpError{Op: "expire", Ref: ref, Err: ErrNotLeased}
	}
	rt.cover(ruleExpireHolder)
	rt.endImport(ref, rt.holderExpireEnds(), "explicit")
	return nil
}

// WhenExpired registers a listener at this device's side of a lease (LS-2
// when:expired:, symmetric: grantor and holder each register their own). When that
// side expires, App.Expired runs once per registration, asynchronously; a revoke runs
// none.
func (rt *Runtime) WhenExpired(ref RefID, tag string) error {
	var side Side
	switch ex := rt.export(ref); {
	case ex != nil && ex.Ended == Live:
		if ex.Pattern == nil {
			return &OpError{Op: "whenExpired", Ref: ref, Err: ErrNotLeased}
		}
		ex.Listeners = append(ex.Listeners, tag)
		side = Server
	default:
		im, err := rt.liveImport("whenExpired", "", ref)
		if err != nil {
			return err
		}
		if ref.Far() {
			return &OpError{Op: "whenExpired", Ref: ref, Err: ErrNotLeased}
		}
		im.Listeners = append(im.Listeners, tag)
		side = Client
	}
	rt.out.Observe(KindListen, rt.obs.listener.put(ObsListener{Lease: ref, Side: side, Tag: tag}))
	return nil
}

// TimeLeft returns the lease time left at this device's side (LS-2 leaseTimeLeft:);
// 0 if the deadline is reached.
func (rt *Runtime) TimeLeft(ref RefID) (time.Duration, error) {
	var dl sim.Time
	ex, im := rt.export(ref), (*Import)(nil)
	if ex == nil || ex.Ended != Live {
		im = rt.imp(ref)
	}
	switch {
	case ex != nil && ex.Ended == Live:
		if ex.Pattern == nil {
			return 0, &OpError{Op: "timeLeft", Ref: ref, Err: ErrNotLeased}
		}
		dl = ex.Deadline
	case im != nil && !im.Revoking:
		if ref.Far() {
			return 0, &OpError{Op: "timeLeft", Ref: ref, Err: ErrNotLeased}
		}
		dl = im.Deadline
	default:
		return 0, &OpError{Op: "timeLeft", Ref: ref, Err: ErrEnded}
	}
	rt.cover(ruleTimeLeft)
	side := Server
	if ex == nil || ex.Ended != Live {
		side = Client
	}
	return rt.timeLeft(side, max(0, dl.Sub(rt.now))), nil
}

// State returns the reference's state at its holder (LS-1).
func (rt *Runtime) State(ref RefID) RefState {
	im := rt.imp(ref)
	switch {
	case im == nil:
		return NotHeld
	case im.Revoking || (!ref.Far() && rt.now >= im.Deadline):
		return ExpiredRef
	case rt.Connected(ref.Grantor):
		return ConnectedActive
	}
	return DisconnectedActive
}

// Buffered returns how many messages of a reference are not acknowledged yet.
func (rt *Runtime) Buffered(ref RefID) int {
	if im := rt.imp(ref); im != nil {
		return len(im.Buf)
	}
	return 0
}

// Holds reports whether this device holds a live client side of ref.
func (rt *Runtime) Holds(ref RefID) bool {
	s := rt.State(ref)
	return s == ConnectedActive || s == DisconnectedActive
}

// Grants reports whether this device serves a live server side of ref.
func (rt *Runtime) Grants(ref RefID) bool {
	ex := rt.export(ref)
	return ex != nil && !rt.expiredExport(ex)
}

// liveImport returns the live import ref for operation verb (with method, for sends
// and calls: the error names "send m"; the name is built only for an error, since
// every message a device sends comes through here).
func (rt *Runtime) liveImport(verb, method string, ref RefID) (*Import, error) {
	im := rt.imp(ref)
	if im == nil || im.Revoking {
		return nil, &OpError{Op: opName(verb, method), Ref: ref, Err: ErrEnded}
	}
	if !ref.Far() && rt.holderExpired(im.Deadline) && !rt.holderTimerStopped(im) {
		rt.cover(ruleExpiredRefuses)
		rt.endImport(ref, Expired, "timer")
		return nil, &OpError{Op: opName(verb, method), Ref: ref, Err: ErrEnded}
	}
	return im, nil
}

// opName names an operation in an OpError: "renew", or "send m" for a method.
func opName(verb, method string) string {
	if method == "" {
		return verb
	}
	return verb + " " + method
}

// Send sends an asynchronous message through a reference (o<-m(args)): it is buffered
// in order and forwarded while the grantor is in range (LS-1). pass lists leases this
// device grants to the reference's grantor, passed by lease with the message. A
// reference whose lease ended does not transmit (an error says so).
func (rt *Runtime) Send(ref RefID, method string, args any, pass ...RefID) error {
	im, err := rt.liveImport("send", method, ref)
	if err != nil {
		return err
	}
	c := Call{Op: OpApp, Method: method, Args: args}
	if c.Pass, err = rt.checkPass("send", method, ref, pass); err != nil {
		return err
	}
	rt.enqueue(im, c)
	return nil
}

func (rt *Runtime) checkPass(verb, method string, ref RefID, pass []RefID) ([]Passed, error) {
	if len(pass) == 0 {
		return nil, nil
	}
	ps := make([]Passed, len(pass))
	for i, id := range pass {
		ex := rt.export(id)
		if ex == nil || ex.Pattern == nil || id.Holder != ref.Grantor || rt.expiredExport(ex) {
			return nil, &OpError{Op: opName(verb, method), Ref: id, Err: fmt.Errorf("%w (pass only live leases this device grants to %d)", ErrPass, ref.Grantor)}
		}
		ps[i] = Passed{ID: id}
	}
	return ps, nil
}

// Call sends an asynchronous message whose result comes back through a future
// (future-type message passing with @Due(due), LS-4). The future is passed by a
// single-call lease of term due: the first reply resolves it (App.Resolved); if the
// lease expires first the future is ruined with ErrTimeout (App.Ruined). tag labels
// the future for the application. Use TimeLeft(session) as due to tie a call's
// deadline to a lease (@Due(leaseTimeLeft(session))).
func (rt *Runtime) Call(ref RefID, method string, args any, due time.Duration, tag string, pass ...RefID) (Future, error) {
	if due <= 0 {
		return Future{}, &OpError{Op: "call " + method, Ref: ref, Err: fmt.Errorf("due time %v: %w", due, ErrTerm)}
	}
	im, err := rt.liveImport("call", method, ref)
	if err != nil {
		return Future{}, err
	}
	c := Call{Op: OpApp, Method: method, Args: args}
	if c.Pass, err = rt.checkPass("call", method, ref, pass); err != nil {
		return Future{}, err
	}
	fe := rt.newExport(futureObject, due, SingleCall{}, ref.Grantor)
	rt.Futures[fe.N] = &FutureRec{ID: fe.N, Tag: tag, Lease: fe}
	rt.out.Observe(KindFutureCall, rt.obs.future.put(ObsFuture{Future: fe.N, Tag: tag, Lease: fe, Target: ref, Due: due, At: rt.now}))
	c.Reply = &Passed{ID: fe}
	rt.enqueue(im, c)
	return Future{ID: fe.N, Tag: tag}, nil
}

// Reply resolves the future of an invocation (its Reply reference) with value,
// passing leases along if given.
func (rt *Runtime) Reply(reply RefID, value any, pass ...RefID) error {
	if reply.IsZero() {
		return &OpError{Op: "reply", Err: fmt.Errorf("%w: the message carried no future", ErrEnded)}
	}
	return rt.Send(reply, "resolve", value, pass...)
}

// Fail ruins the future of an invocation with a remote error.
func (rt *Runtime) Fail(reply RefID, msg string) error {
	if reply.IsZero() {
		return &OpError{Op: "fail", Err: fmt.Errorf("%w: the message carried no future", ErrEnded)}
	}
	return rt.Send(reply, "ruin", msg)
}

// Far returns the far (unleased) reference to peer's well-known service object, as
// discovery hands it out; its messages are buffered and delivered in order like a
// lease's, and it never expires.
func (rt *Runtime) Far(peer sim.NodeID) (RefID, error) {
	p := rt.peer(peer)
	if p == nil || p.Boot == 0 {
		return RefID{}, &OpError{Op: "far", Err: fmt.Errorf("%w: %d", ErrPeer, peer)}
	}
	id := RefID{Grantor: peer, GBoot: p.Boot, Holder: rt.Self, HBoot: rt.Boot}
	if rt.Imports[id] == nil {
		rt.Imports[id] = &Import{ID: id, Object: FarObject}
	}
	return id, nil
}

// futureArrived resolves or ruins a future when its reply reaches the future's export.
func (rt *Runtime) futureArrived(ex *Export, inv Invocation) {
	f := rt.Futures[ex.ID.N]
	if f == nil {
		return
	}
	if inv.Method == "resolve" {
		rt.settle(f, "resolved", inv.Args, inv.Refs, "")
		return
	}
	rt.settle(f, "failed", nil, nil, fmt.Sprint(inv.Args))
}

// settle completes future f (LS-4) and removes it: resolved by a reply (when:becomes:,
// with its value and references), or ruined (catch:) by the callee's failure (msg), by
// a timeout when its lease expired before a reply, or as revoked when its lease was
// revoked. The application hears of it in its next turn.
func (rt *Runtime) settle(f *FutureRec, outcome string, value any, refs []RefID, msg string) {
	delete(rt.Futures, f.ID)
	ev := asyncEv{Kind: asyncRuined, Lease: f.Lease, Future: f.ID, Tag: f.Tag}
	obs := ObsFuture{Future: f.ID, Tag: f.Tag, Lease: f.Lease, At: rt.now}
	switch rt.settlesAs(outcome) {
	case "resolved":
		rt.cover(ruleFutureDone)
		ev.Kind, ev.Value, ev.Refs, obs.Ok = asyncResolved, value, refs, true
	case "failed":
		rt.cover(ruleFutureFailed)
		ev.Err, obs.Err = msg, msg
	case "revoked":
		rt.cover(ruleFutureRevoke)
		ev.Err, obs.Err = "future revoked before its reply", "revoked"
	default: // timeout: the catch: block of @Due
		rt.cover(ruleFutureTimout)
		obs.Err = "timeout"
	}
	rt.out.Observe(KindFutureDone, rt.obs.future.put(obs))
	rt.Async = append(rt.Async, ev)
}
