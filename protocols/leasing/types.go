package leasing

import (
	"errors"
	"fmt"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Errors returned by the runtime's API (wrapped with the operation and reference).
var (
	// ErrEnded: the reference is not held any more (expired, revoked) or never was.
	ErrEnded = errors.New("lease has ended (expired or revoked) or is not held here")
	// ErrTerm: a lease term, renewal time or due time that is not positive.
	ErrTerm = errors.New("time must be positive")
	// ErrNotLeased: a lease operation on a far (unleased) reference.
	ErrNotLeased = errors.New("far references have no lease")
	// ErrPass: a reference that cannot be passed in this message.
	ErrPass = errors.New("cannot pass this reference")
	// ErrPeer: a peer the discovery layer has not heard from.
	ErrPeer = errors.New("peer not discovered yet")
	// ErrTimeout ruins a future whose due time passed (the TimeoutException of §4.4).
	ErrTimeout = errors.New("future timed out (due time passed)")
)

// OpError is an API error: the operation, the reference and the reason.
type OpError struct {
	Op  string
	Ref RefID
	Err error
}

func (e *OpError) Error() string {
	if e.Ref.IsZero() {
		return fmt.Sprintf("leasing: %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("leasing: %s %s: %v", e.Op, e.Ref, e.Err)
}

func (e *OpError) Unwrap() error { return e.Err }

// RemoteError ruins a future that the callee failed explicitly (Runtime.Fail).
type RemoteError struct{ Msg string }

func (e *RemoteError) Error() string { return "leasing: remote failure: " + e.Msg }

// RefState is the state of a reference as its holder sees it (LS-1, Fig. 3).
type RefState uint8

const (
	// NotHeld: no such reference here (never resolved, or reclaimed after it ended).
	NotHeld RefState = iota
	// ConnectedActive: lease live, grantor in range: buffered messages are forwarded.
	ConnectedActive
	// DisconnectedActive: lease live, grantor out of range: messages accumulate in order.
	DisconnectedActive
	// ExpiredRef: the lease ended; the reference behaves as permanently disconnected.
	ExpiredRef
)

func (s RefState) String() string {
	switch s {
	case ConnectedActive:
		return "connected-active"
	case DisconnectedActive:
		return "disconnected-active"
	case ExpiredRef:
		return "expired"
	}
	return "not-held"
}

// FarObject is the Object name of every device's well-known far service.
const FarObject = "far"

// futureObject is the Object name of the runtime's future exports (LS-4).
const futureObject = "future"

// Export is the server side of a reference: the lease object of Fig. 5 plus the
// reference's in-order receive channel.
type Export struct {
	ID     RefID
	Object string
	// Pattern is the lease's interceptor (nil for far references).
	Pattern Interceptor
	// Term is the initial lease period, the default renewal time (§5.1).
	Term time.Duration
	// Deadline is when the lease expires, on the grantor's local clock.
	Deadline sim.Time
	// Expected is the next sequence number to process (messages arrive in order,
	// retransmissions repeat numbers).
	Expected  int64
	Listeners []string
	// Ended is Live for every side in Exports: the protocol removes a side when it
	// ends. Only a Policy.Reclaims that keeps ended sides (a broken variant) sets it.
	Ended End

	gone bool // removed from Exports (the deadline queue's entries for it are stale)
}

// Tomb is what the grantor keeps of a lease it revoked or expired explicitly, until
// the lease's old deadline: enough to answer the holder's retransmissions with the
// notice and to repeat the notice when the holder comes back in range, so that a
// revocation reaches a holder that was out of range for less than the lease ("revoke
// needs client-server communication", §4.2). It holds no service state.
type Tomb struct {
	Deadline sim.Time
	Expected int64
	How      End
}

// Import is the client side of a reference: the holder's lease object (its own timer,
// kept in step with the grantor's by the piggybacked time left) and the buffer of
// messages not yet acknowledged (LS-1: kept in order while disconnected, flushed on
// reconnection).
type Import struct {
	ID      RefID
	Object  string
	Pattern string
	Term    time.Duration
	// Deadline is on the holder's local clock (unused for far references).
	Deadline sim.Time
	// Until is the grantor's deadline (on the grantor's clock) that Deadline was last
	// derived from: only an ack with a larger Until moves Deadline (see Ack).
	Until sim.Time
	// Next is the last sequence number assigned; Acked the last acknowledged; Buf
	// holds Acked+1 … Next in order.
	Next  int64
	Acked int64
	Buf   []Call
	// RtoAt is when unacknowledged messages are retransmitted, if RtoOn.
	RtoAt sim.Time
	RtoOn bool
	// Revoking: the holder revoked the lease; the buffer (ending with the revoke
	// request) is still being delivered. No new message is accepted and no listener
	// runs.
	Revoking  bool
	Listeners []string

	gone bool // removed from Imports (the deadline queues' entries for it are stale)
}

// Peer is the discovery layer's view of one peer.
type Peer struct {
	ID   sim.NodeID
	Boot uint32 // 0 until heard
	Up   bool
	Last sim.Time // when last heard (local clock)
}

// FutureRec is an outstanding future: Lease is the single-call lease on its reply.
type FutureRec struct {
	ID    int64
	Tag   string
	Lease RefID
}

// Future names a future returned by Runtime.Call; Tag is the caller's label.
type Future struct {
	ID  int64
	Tag string
}

// Release is what App.Released receives.
type Release struct {
	Lease  RefID
	Side   Side
	How    End
	Object string
}

// Expiry is what a whenExpired listener receives.
type Expiry struct {
	Lease RefID
	Side  Side
	Tag   string
}

type asyncKind uint8

const (
	asyncListener asyncKind = iota + 1
	asyncResolved
	asyncRuined
	asyncReleased
)

// asyncEv is a listener or future block waiting for its own turn: listeners and
// when:becomes: blocks run asynchronously (§3, §4.4), never inside the call that
// triggered them.
type asyncEv struct {
	Kind   asyncKind
	Lease  RefID
	Side   Side
	Tag    string
	Future int64
	Value  any
	Refs   []RefID
	Err    string
	How    End
	Object string
}

// App is the application running on a device: its service objects and their clients.
// Every callback runs inside one handler call and uses rt for its effects.
type App interface {
	// Start runs when the device (re)starts, after the runtime is ready.
	Start(rt *Runtime)
	// Connectivity reports the discovery layer's view of a peer changing.
	Connectivity(rt *Runtime, peer sim.NodeID, up bool)
	// Invoke delivers a message to one of the device's service objects (the export
	// inv.Ref; inv.Object names the object).
	Invoke(rt *Runtime, inv Invocation)
	// Expired runs a whenExpired listener (asynchronously, once per registration).
	Expired(rt *Runtime, e Expiry)
	// Resolved runs when a future is resolved (when:becomes:).
	Resolved(rt *Runtime, f Future, value any, refs []RefID)
	// Ruined runs when a future is ruined (catch:); err is ErrTimeout (wrapped) or a
	// *RemoteError.
	Ruined(rt *Runtime, f Future, err error)
	// Released runs after a side of a lease this device grants or holds ended
	// (expired or revoked) and its listeners ran (at the end of the ending call when
	// there are none): the application drops the objects only that lease kept alive. This models the garbage collector of §3 ("once all
	// leased references to a service object have expired, the object becomes subject
	// to garbage collection"); it is not an expiry listener and also runs on revoke.
	Released(rt *Runtime, r Release)
	// Timer runs when an application timer set with Runtime.SetTimer fires.
	Timer(rt *Runtime, name string)
	// Input delivers a workload injection.
	Input(rt *Runtime, m sim.Message)
}

// Invocation is a message delivered to a service object.
type Invocation struct {
	Ref    RefID
	Object string
	From   sim.NodeID
	Seq    int64
	Method string
	Args   any
	// Refs are the client-side handles of the references passed with the message, in
	// order; a reference whose lease had already ended is the zero RefID.
	Refs []RefID
	// Reply is the future to resolve (Runtime.Reply), zero if the sender expects none.
	Reply RefID
}
