package leasing

import (
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Observation kinds recorded by the runtime (the checkers read them; see package
// scenarios/leasing for the properties). Times are the node's local clock; the
// observation itself also carries the global time.
const (
	// KindGrant: a lease was created at its grantor (ObsGrant).
	KindGrant = "lease.grant"
	// KindResolve: the client side of a lease was created at its holder (ObsResolve).
	KindResolve = "lease.resolve"
	// KindRenew: a renewal took effect, or was refused, at the grantor (ObsRenew).
	KindRenew = "lease.renew"
	// KindEnd: one side of a lease ended and its state was reclaimed (ObsEnd).
	KindEnd = "lease.end"
	// KindListen: a whenExpired listener was registered (ObsListener).
	KindListen = "lease.listen"
	// KindListener: a whenExpired listener ran (ObsListener).
	KindListener = "lease.listener"
	// KindSend: the holder put a message into a reference's buffer (ObsSend).
	KindSend = "ref.send"
	// KindRecv: the grantor took a message in reference order (ObsRecv).
	KindRecv = "ref.recv"
	// KindDrop: the grantor ignored a message for a reference it no longer serves
	// (ObsDrop).
	KindDrop = "ref.drop"
	// KindForward: a message reached the service object (ObsForward).
	KindForward = "ref.forward"
	// KindFutureCall: an asynchronous call with a future was issued (ObsFuture).
	KindFutureCall = "future.call"
	// KindFutureDone: a future was resolved or ruined (ObsFuture).
	KindFutureDone = "future.done"
	// KindPatternError: a leasing pattern (interceptor) panicked (ObsPatternError).
	KindPatternError = "pattern.error"
	// KindPeer: the discovery layer's view of a peer changed (ObsPeer).
	KindPeer = "peer"
	// KindIdle: the application stopped using a lease on purpose and lets it expire
	// (ObsIdle, recorded by applications): its expiry is intended, not a consequence
	// of a disconnection.
	KindIdle = "lease.idle"
)

// ObsIdle is an application's note that it abandoned a lease.
type ObsIdle struct {
	Lease RefID `json:"lease"`
}

// Side names an end of a lease.
type Side string

const (
	// Server is the grantor's side (the export).
	Server Side = "server"
	// Client is the holder's side (the import).
	Client Side = "client"
)

// ObsGrant records lease(duration, service) (LS-2).
type ObsGrant struct {
	Lease    RefID         `json:"lease"`
	Object   string        `json:"object"`
	Pattern  string        `json:"pattern"`
	Term     time.Duration `json:"term"`
	At       sim.Time      `json:"at"`
	Deadline sim.Time      `json:"deadline"`
}

// ObsResolve records the creation of a lease's client side from a passed reference.
type ObsResolve struct {
	Lease    RefID         `json:"lease"`
	Object   string        `json:"object"`
	Pattern  string        `json:"pattern"`
	Term     time.Duration `json:"term"`
	Left     time.Duration `json:"left"`
	At       sim.Time      `json:"at"`
	Deadline sim.Time      `json:"deadline"`
}

// ObsRenew records a renewal at the grantor. By is "server" (the service's code),
// "pattern" (an interceptor) or "client" (a holder's request). Ok is false for a
// refused renewal (the lease had ended; Before and After are then zero).
type ObsRenew struct {
	Lease  RefID         `json:"lease"`
	By     string        `json:"by"`
	D      time.Duration `json:"d"`
	Ok     bool          `json:"ok"`
	At     sim.Time      `json:"at"`
	Before sim.Time      `json:"before"`
	After  sim.Time      `json:"after"`
}

// ObsEnd records the end of one side of a lease. Cause is "timer", "explicit",
// "notice" (the other side told us), "request" (the holder asked the grantor to
// revoke), "pattern" (a single-call or custom interceptor) or "pattern-panic" (a
// panicking interceptor, contained). A reboot ends nothing observably: the rebooted
// device's sides are simply gone and the other side ends by its timer. Deadline is the side's deadline when it ended and
// Left the time that was still left (0 for a timer expiry).
type ObsEnd struct {
	Lease    RefID         `json:"lease"`
	Side     Side          `json:"side"`
	How      End           `json:"how"`
	Cause    string        `json:"cause"`
	At       sim.Time      `json:"at"`
	Deadline sim.Time      `json:"deadline"`
	Left     time.Duration `json:"left"`
	// Listeners is the number of whenExpired listeners scheduled (0 on revoke).
	Listeners int `json:"listeners"`
}

// ObsListener records a whenExpired registration or invocation.
type ObsListener struct {
	Lease RefID  `json:"lease"`
	Side  Side   `json:"side"`
	Tag   string `json:"tag"`
}

// ObsSend records a message put into a reference's buffer by its holder.
type ObsSend struct {
	Ref    RefID         `json:"ref"`
	Seq    int64         `json:"seq"`
	Op     Op            `json:"op"`
	Method string        `json:"method,omitempty"`
	D      time.Duration `json:"d,omitempty"`
	At     sim.Time      `json:"at"`
	// Deadline is the holder's deadline for the lease when it sent (local clock; zero
	// for far references): LS-1, an expired reference sends nothing, so At < Deadline.
	Deadline sim.Time `json:"deadline,omitempty"`
}

// ObsRecv records a message the grantor took in reference order (Seq is the next
// expected). Live says whether the lease was live when it arrived; a message arriving
// at or after the deadline is refused (LS-P1) and the lease expires on the spot.
type ObsRecv struct {
	Ref      RefID         `json:"ref"`
	Seq      int64         `json:"seq"`
	Op       Op            `json:"op"`
	Method   string        `json:"method,omitempty"`
	D        time.Duration `json:"d,omitempty"`
	Live     bool          `json:"live"`
	At       sim.Time      `json:"at"`
	Deadline sim.Time      `json:"deadline"`
}

// ObsDrop records a message for a reference the grantor does not serve (any more).
type ObsDrop struct {
	Ref RefID    `json:"ref"`
	Seq int64    `json:"seq"`
	Op  Op       `json:"op"`
	Why string   `json:"why"`
	At  sim.Time `json:"at"`
}

// ObsForward records a message handed to the service object (Deadline is the lease's
// deadline at that moment; 0 for far references).
type ObsForward struct {
	Ref      RefID    `json:"ref"`
	Seq      int64    `json:"seq"`
	Method   string   `json:"method"`
	Pattern  string   `json:"pattern,omitempty"`
	At       sim.Time `json:"at"`
	Deadline sim.Time `json:"deadline"`
}

// ObsFuture records a future's call (Due set) or outcome (Ok, Err set).
type ObsFuture struct {
	Future int64         `json:"future"`
	Tag    string        `json:"tag"`
	Lease  RefID         `json:"lease"`
	Target RefID         `json:"target,omitzero"`
	Due    time.Duration `json:"due,omitempty"`
	At     sim.Time      `json:"at"`
	Ok     bool          `json:"ok,omitempty"`
	Err    string        `json:"err,omitempty"`
}

// ObsPatternError records an interceptor that panicked. The runtime contains the
// panic: the lease, if still live, expires at both sides; the message is dropped
// unless the pattern had forwarded it before it panicked.
type ObsPatternError struct {
	Lease   RefID  `json:"lease"`
	Pattern string `json:"pattern"`
	Panic   string `json:"panic"`
}

// ObsPeer records a connectivity change seen by the discovery layer.
type ObsPeer struct {
	Peer sim.NodeID `json:"peer"`
	Up   bool       `json:"up"`
	At   sim.Time   `json:"at"`
}
