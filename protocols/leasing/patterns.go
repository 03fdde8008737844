package leasing

import (
	"errors"
	"fmt"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Interceptor is a leasing pattern: the server-side interceptor of §5.1 (Fig. 5,
// right). Receive is called for every message that reaches a live lease, in reference
// order; it decides, through the LeaseCtl, whether to renew, revoke or expire the lease
// and whether to forward the message to the service object (LS-3). Receive is the only
// variation point: pass and resolve (pass-by-lease, §5.1) are the runtime's.
//
// An Interceptor is stored in the device state: it must be a plain value (no
// pointers to shared state, no funcs), so the device can be copied and fingerprinted.
// A Receive that panics is contained by the runtime: the panic is observed as a
// pattern error and the lease, if still live, expires at both sides. What Receive did
// before the panic stands: a message it had not forwarded is dropped; one it had
// forwarded has been processed by the service object. A panic raised inside a LeaseCtl
// method (by the service object during Forward, or by the runtime) is not contained.
type Interceptor interface {
	// Name names the pattern in observations and traces.
	Name() string
	Receive(l *LeaseCtl)
}

// Basic is the default interceptor of lease:for: — forward while not expired:
//
//	def receive(msg, lease) { if: !(lease.isExpired) then: { forward(msg, lease.serviceObject) } }
type Basic struct{}

// Name implements Interceptor.
func (Basic) Name() string { return "basic" }

// Receive implements Interceptor.
func (Basic) Receive(l *LeaseCtl) {
	l.rt.cover(ruleBasic)
	_ = l.Forward()
}

// RenewOnCall is renewOnCallLease:for: — every message received renews the lease by
// its initial period before it is forwarded (LS-3).
type RenewOnCall struct{}

// Name implements Interceptor.
func (RenewOnCall) Name() string { return "renew-on-call" }

// Receive implements Interceptor.
func (RenewOnCall) Receive(l *LeaseCtl) {
	if !l.IsExpired() {
		l.rt.cover(ruleRenewOnCall)
		_ = l.Renew(l.RenewalTime())
	}
	_ = l.Forward()
}

// SingleCall is singleCallLease:for: — the first message is forwarded, then the lease
// is revoked so any later message is dropped (LS-3, LS-P5); if no message comes, the
// lease expires after its term.
type SingleCall struct{}

// Name implements Interceptor.
func (SingleCall) Name() string { return "single-call" }

// Receive implements Interceptor.
func (SingleCall) Receive(l *LeaseCtl) {
	_ = l.Forward()
	if !l.IsExpired() {
		l.rt.cover(ruleSingleCall)
		_ = l.Revoke()
	}
}

// LeaseCtl is what an interceptor sees while handling one message: the lease object's
// methods (Fig. 5, left) and super.receive (Forward). It is valid only during Receive.
type LeaseCtl struct {
	rt   *Runtime
	id   RefID
	ex   *Export // the server side at dispatch (see export)
	call Call
	from sim.NodeID
	fwd  bool
}

// export returns the lease's server side, nil once it has been removed from the
// runtime's exports (rt.Exports[l.id] without the lookup: a removed side is marked
// gone, and no other side takes its reference during the call).
func (l *LeaseCtl) export() *Export {
	if l.ex == nil || l.ex.gone {
		return nil
	}
	return l.ex
}

// Lease returns the reference being intercepted.
func (l *LeaseCtl) Lease() RefID { return l.id }

// Method returns the intercepted message's method name.
func (l *LeaseCtl) Method() string { return l.call.Method }

// Args returns the intercepted message's arguments.
func (l *LeaseCtl) Args() any { return l.call.Args }

// Seq returns the intercepted message's sequence number in its reference (1, 2, … in
// the order the holder sent them).
func (l *LeaseCtl) Seq() int64 { return l.call.Seq }

// From returns the device that sent the intercepted message (the lease's holder).
func (l *LeaseCtl) From() sim.NodeID { return l.from }

// SetPattern replaces the lease's interceptor from the next message on. This is how a
// pattern keeps state of its own: Receive has a value receiver, so a stateful pattern
// installs its updated value (patterns are plain values, copied and fingerprinted
// with the device). It fails with ErrEnded once the lease has ended.
func (l *LeaseCtl) SetPattern(p Interceptor) error {
	defer markOutside()
	ex := l.export()
	switch {
	case p == nil:
		return &OpError{Op: "set pattern", Ref: l.id, Err: errors.New("nil pattern")}
	case ex == nil || l.rt.expiredExport(ex):
		return &OpError{Op: "set pattern", Ref: l.id, Err: ErrEnded}
	}
	ex.Pattern = p
	return nil
}

// IsExpired reports whether the lease has ended (expired or revoked).
func (l *LeaseCtl) IsExpired() bool {
	defer markOutside()
	ex := l.export()
	return ex == nil || l.rt.expiredExport(ex)
}

// RenewalTime returns the lease's renewal time: its initial period (§4.3).
func (l *LeaseCtl) RenewalTime() time.Duration {
	defer markOutside()
	if ex := l.export(); ex != nil {
		return ex.Term
	}
	return 0
}

// TimeLeft returns the lease's time left (0 once ended).
func (l *LeaseCtl) TimeLeft() time.Duration {
	defer markOutside()
	if ex := l.export(); ex != nil && !l.rt.expiredExport(ex) {
		return ex.Deadline.Sub(l.rt.now)
	}
	return 0
}

// Renew prolongs the lease: new time left = max(time left, d).
func (l *LeaseCtl) Renew(d time.Duration) error {
	defer markOutside()
	return l.rt.renewExport(l.id, d, "pattern")
}

// Revoke ends the lease without running listeners; the holder learns it from the
// acknowledgement of this message.
func (l *LeaseCtl) Revoke() error {
	defer markOutside()
	if l.IsExpired() {
		return &OpError{Op: "revoke", Ref: l.id, Err: ErrEnded}
	}
	l.rt.endExport(l.id, Revoked, "pattern")
	return nil
}

// Expire ends the lease and runs the listeners at both sides.
func (l *LeaseCtl) Expire() error {
	defer markOutside()
	if l.IsExpired() {
		return &OpError{Op: "expire", Ref: l.id, Err: ErrEnded}
	}
	l.rt.endExport(l.id, Expired, "pattern")
	return nil
}

// ErrForwarded: Forward called twice for one message.
var ErrForwarded = errors.New("message already forwarded")

// Forward hands the message to the service object (super.receive), unless the lease
// has ended: then the message is dropped and ErrEnded returned (LS-P1). The references
// passed with the message are resolved only when it is forwarded.
func (l *LeaseCtl) Forward() error {
	defer markOutside()
	rt := l.rt
	if l.fwd {
		return &OpError{Op: "forward", Ref: l.id, Err: ErrForwarded}
	}
	ex := l.export()
	if ex == nil || rt.expiredExport(ex) {
		rt.cover(ruleForwardEnded)
		return &OpError{Op: "forward", Ref: l.id, Err: ErrEnded}
	}
	l.fwd = true
	c := l.call
	inv := Invocation{Ref: l.id, Object: ex.Object, From: l.from, Seq: c.Seq, Method: c.Method, Args: c.Args}
	for _, p := range c.Pass {
		inv.Refs = append(inv.Refs, rt.resolve(p, l.from))
	}
	if c.Reply != nil {
		inv.Reply = rt.resolve(*c.Reply, l.from)
	}
	var dl sim.Time
	pat := ""
	if ex.Pattern != nil {
		dl, pat = rt.expiry(ex), ex.Pattern.Name()
	}
	rt.out.Observe(KindForward, rt.obs.forward.put(ObsForward{Ref: l.id, Seq: c.Seq, Method: c.Method, Pattern: pat, At: rt.now, Deadline: dl}))
	if ex.Object == futureObject {
		rt.futureArrived(ex, inv)
		return nil
	}
	rt.app.Invoke(rt, inv)
	return nil
}

// String describes the control for debugging.
func (l *LeaseCtl) String() string {
	return fmt.Sprintf("lease %s message %s#%d", l.id, l.call.Method, l.call.Seq)
}
