package leasing

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Config configures one device's leasing runtime. It is shared, read-only, by every
// incarnation of the device.
type Config struct {
	// Peers is the neighbourhood the discovery layer beacons to (every other device of
	// the system: whether a beacon arrives is what "in range" means).
	Peers []sim.NodeID
	// Beacon is the discovery period. Zero switches the discovery layer off: every
	// peer counts as connected and has boot 1 (for closed configurations without
	// restarts, such as the model checker's).
	Beacon time.Duration
	// Silence is how long a peer may stay unheard before it counts as disconnected
	// (default 3×Beacon).
	Silence time.Duration
	// RTO is the retransmission period of unacknowledged buffered messages while the
	// grantor counts as connected (default 4×Beacon, or 50ms without discovery).
	RTO time.Duration
	// Broken switches on deliberately broken behaviour, for tests that show the
	// checkers catch it. The zero value is the correct protocol.
	Broken Broken
}

// Broken lists deliberately broken variants of the protocol. Each flag is used only by
// tests (see scenarios/leasing's *_test.go), which assert that a property catches it.
type Broken struct {
	// AcceptAfterExpiry: the grantor keeps an expired lease and accepts (and renews on)
	// messages that arrive after its deadline.
	AcceptAfterExpiry bool
	// ClientNeverExpires: the holder's timer does not fire while the grantor counts as
	// disconnected.
	ClientNeverExpires bool
	// SingleCallKeeps: the single-call pattern forgets to revoke after its call.
	SingleCallKeeps bool
	// RenewMin: renew takes the minimum of time left and renewal time, not the maximum.
	RenewMin bool
	// NoBuffer: messages sent while disconnected are discarded instead of buffered.
	NoBuffer bool
	// ListenersOnRevoke: revoke runs the expiry listeners too.
	ListenersOnRevoke bool
	// IgnorePiggyback: the holder ignores the grantor's piggybacked time left and keeps
	// the deadline it resolved the reference with.
	IgnorePiggyback bool
	// GrantorLate: the grantor's timer and its acceptance check run this much after the
	// lease's deadline, and the deadline it reports in its observations of messages is
	// that late one (its grant and renewal records stay right).
	GrantorLate time.Duration
	// HolderShort: the holder sets its timer to 70% of the grantor's time left (when it
	// resolves the reference and on every piggybacked update).
	HolderShort bool
	// ExpireNoticeRevokes: the holder takes the grantor's notice of an explicit expire
	// for a revoke (its side ends as revoked, its listeners never run).
	ExpireNoticeRevokes bool
	// NoTombstones: the grantor keeps nothing of a lease it revoked or expired
	// explicitly, so a holder that missed the notice never hears of it again.
	NoTombstones bool
	// TakeAfterRevoke: a revoked lease still takes the messages already on their way
	// (the grantor keeps the revoked server side accepting until its old deadline).
	TakeAfterRevoke bool
}

// Validate reports a malformed configuration.
func (c *Config) Validate() error {
	switch {
	case c.Beacon < 0:
		return fmt.Errorf("leasing: beacon period %v is negative", c.Beacon)
	case c.Silence < 0:
		return fmt.Errorf("leasing: silence %v is negative", c.Silence)
	case c.RTO < 0:
		return fmt.Errorf("leasing: retransmission period %v is negative", c.RTO)
	case c.Beacon > 0 && c.Silence > 0 && c.Silence <= c.Beacon:
		return fmt.Errorf("leasing: silence %v must exceed the beacon period %v", c.Silence, c.Beacon)
	}
	return nil
}

// EffectiveSilence returns Silence or its default (3×Beacon).
func (c *Config) EffectiveSilence() time.Duration { return c.silence() }

// EffectiveRTO returns RTO or its default.
func (c *Config) EffectiveRTO() time.Duration { return c.rto() }

func (c *Config) silence() time.Duration {
	if c.Silence > 0 {
		return c.Silence
	}
	return 3 * c.Beacon
}

func (c *Config) rto() time.Duration {
	switch {
	case c.RTO > 0:
		return c.RTO
	case c.Beacon > 0:
		return 4 * c.Beacon
	}
	return 50 * time.Millisecond
}

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
	// Ended is only ever set by the broken variant that keeps expired leases.
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

// Runtime is one device's leasing runtime: its exports (server sides), imports
// (client sides), discovery view, futures, and the listeners waiting to run. It is a
// plain value inside the device node (deep-copyable, canonically encodable); the
// unexported per-call fields are set only during a handler call.
type Runtime struct {
	Cfg     *Config
	Self    sim.NodeID
	Boot    uint32
	NextN   int64
	Exports map[RefID]*Export
	Imports map[RefID]*Import
	// Tombs holds ended-by-notice leases until their old deadline; TombOrder lists
	// them by (deadline, id).
	Tombs     map[RefID]Tomb
	TombOrder []RefID
	// tombAt[i] is TombOrder[i]'s deadline (derived, not encoded: the order and the
	// first deadline without a map lookup).
	tombAt  []sim.Time
	Peers   []Peer
	Futures map[int64]*FutureRec
	Async   []asyncEv
	// Armed timers (local deadlines), so a timer is re-armed only when it changes.
	LeaseT, RtoT, SilenceT armed
	AsyncArmed             bool
	// LastNow is the local time of the latest handler call (the leak check compares
	// deadlines with it).
	LastNow sim.Time

	// Deadline queues (timerq.go): derived from Exports and Imports, not encoded.
	// A copy (Clone, the model checker's: one per step) has none and scans instead.
	exportQ, importQ, rtoQ tq
	scan                   bool
	// top* hold the earliest valid entry of each queue as nextTimers last found it;
	// a queue is looked at again only after a change that can move its answer
	// (qdirty: a deadline pushed, a side removed or ended, a retransmission disarmed,
	// due entries popped).
	topEx, topIm, topRto armed
	qdirty               uint8

	// obs holds the runtime's observation values (obsarena.go): not device state.
	obs obsArena `inspect:"-"`

	// per call
	releases []asyncEv // releases to hand to the application at the end of the call
	now      sim.Time
	out      *sim.Outbox
	app      App
	rnd      uint64
	inCall   RefID
	callEnd  End
	ctl      *LeaseCtl // dispatch's, reused (zero between dispatches)
	// The sides export and imp found last (a call looks one reference up several
	// times): valid while not gone, cleared at every call's start and end.
	lastEx *Export `inspect:"-"`
	lastIm *Import `inspect:"-"`
}

// outsidePanic marks a panic raised inside a LeaseCtl method, below the pattern: by
// the service object (the application, within Forward) or by the runtime itself (a
// protocol bug). The interceptor's containment is for the pattern's own code only;
// these propagate, unwrapped, to the simulator, which reports them with the seed.
type outsidePanic struct{ v any }

// markOutside is deferred by every LeaseCtl method that runs runtime or application
// code: it re-raises a panic from there as an outsidePanic.
func markOutside() {
	if r := recover(); r != nil {
		if _, ok := r.(outsidePanic); ok {
			panic(r)
		}
		panic(outsidePanic{r})
	}
}

// ---- handler plumbing ----

func (rt *Runtime) begin(in sim.Input, out *sim.Outbox, app App) {
	rt.now, rt.out, rt.app, rt.rnd = in.Now, out, app, in.Rand
	rt.lastEx, rt.lastIm = nil, nil
	rt.LastNow = in.Now
}

func (rt *Runtime) finish() {
	for len(rt.releases) > 0 {
		r := rt.releases[0]
		rt.releases = rt.releases[1:]
		rt.app.Released(rt, Release{Lease: r.Lease, Side: r.Side, How: r.How, Object: r.Object})
	}
	rt.releases = nil
	lease, rto := rt.nextTimers()
	if checkTimers && !rt.scan {
		rt.checkTimerQueues(lease, rto)
	}
	rt.arm("lease", lease, &rt.LeaseT)
	rt.arm("rto", rto, &rt.RtoT)
	rt.arm("silence", rt.nextSilence(), &rt.SilenceT)
	if len(rt.Async) > 0 && !rt.AsyncArmed {
		rt.out.SetTimer("async", 0)
		rt.AsyncArmed = true
	}
	// Clear the per-call scratch: between calls a device is its lease state only (the
	// model checker fingerprints it).
	rt.now, rt.out, rt.app, rt.rnd, rt.inCall, rt.callEnd = 0, nil, nil, 0, RefID{}, Live
	rt.lastEx, rt.lastIm = nil, nil
}

// export returns rt.Exports[id]. Within a call a side found before is answered
// without the lookup: every side is stored under its own ID and never replaced while
// in the map, and a removed one is marked gone (dropExport); begin and finish clear it,
// so nothing done between calls (a restart's new maps, a copy) can go stale here.
func (rt *Runtime) export(id RefID) *Export {
	if ex := rt.lastEx; ex != nil && ex.ID == id && !ex.gone {
		return ex
	}
	ex := rt.Exports[id]
	if ex != nil {
		rt.lastEx = ex
	}
	return ex
}

// imp returns rt.Imports[id] (as export does for exports).
func (rt *Runtime) imp(id RefID) *Import {
	if im := rt.lastIm; im != nil && im.ID == id && !im.gone {
		return im
	}
	im := rt.Imports[id]
	if im != nil {
		rt.lastIm = im
	}
	return im
}

// armed is an optional local deadline (clocks may read anything, so no sentinel).
type armed struct {
	At sim.Time
	On bool
}

// earliest folds t into a, keeping the earlier deadline.
func (a *armed) earliest(t sim.Time) {
	if !a.On || t < a.At {
		a.At, a.On = t, true
	}
}

func (rt *Runtime) arm(id sim.TimerID, want armed, cur *armed) {
	if want == *cur {
		return
	}
	if !want.On {
		rt.out.CancelTimer(id)
	} else {
		rt.out.SetTimer(id, want.At.Sub(rt.now))
	}
	*cur = want
}

func (rt *Runtime) init(self sim.NodeID, boot uint32) {
	rt.Self, rt.Boot = self, boot
	rt.Exports = map[RefID]*Export{}
	rt.Imports = map[RefID]*Import{}
	rt.Tombs = map[RefID]Tomb{}
	rt.TombOrder, rt.tombAt = nil, nil
	rt.Futures = map[int64]*FutureRec{}
	rt.exportQ, rt.importQ, rt.rtoQ = nil, nil, nil
	rt.qdirty = dirtyExport | dirtyImport | dirtyRto
	rt.Peers = rt.Peers[:0]
	for _, p := range rt.Cfg.Peers {
		if p == self {
			continue
		}
		pe := Peer{ID: p}
		if rt.Cfg.Beacon == 0 {
			pe.Boot, pe.Up = 1, true
		}
		rt.Peers = append(rt.Peers, pe)
	}
	slices.SortFunc(rt.Peers, func(a, b Peer) int { return int(a.ID) - int(b.ID) })
}

// Device is a sim node made of the leasing runtime and an application.
type Device struct {
	RT  Runtime
	App App
}

// NewDevice returns a constructor for a device (called at start and on every restart:
// the device keeps only its boot counter in stable storage; leases are volatile).
func NewDevice(cfg *Config, app func() App) func() sim.Node {
	return func() sim.Node { return &Device{RT: Runtime{Cfg: cfg}, App: app()} }
}

// Handle implements sim.Node.
func (d *Device) Handle(in sim.Input, out *sim.Outbox) {
	rt := &d.RT
	rt.begin(in, out, d.App)
	switch in.Kind {
	case sim.Start, sim.Restart:
		boot := uint32(1)
		if b, ok := sim.Load[uint32](in.Stable, "boot"); ok {
			boot = b + 1
		}
		out.Store("boot", boot)
		rt.init(in.Self, boot)
		if rt.Cfg.Beacon > 0 {
			rt.beacon()
		}
		d.App.Start(rt)
	case sim.Receive:
		if in.From == sim.Env {
			d.App.Input(rt, in.Msg)
			break
		}
		rt.receive(in.From, in.Msg)
	case sim.Timeout:
		rt.timeout(in.Timer)
	}
	rt.finish()
}

// ---- per-call API available to the application ----

// Now returns the device's local clock reading in the current call.
func (rt *Runtime) Now() sim.Time { return rt.now }

// Rand returns 64 random bits (a stream derived from the input's randomness).
func (rt *Runtime) Rand() uint64 {
	rt.rnd += 0x9e3779b97f4a7c15
	return sim.Mix64(rt.rnd)
}

// Observe records an application observation.
func (rt *Runtime) Observe(kind string, v any) { rt.out.Observe(kind, v) }

// SetTimer arms an application timer (Timer is called with name when it fires).
func (rt *Runtime) SetTimer(name string, d time.Duration) {
	rt.out.SetTimer(sim.TimerID("app/"+name), d)
}

// CancelTimer disarms an application timer.
func (rt *Runtime) CancelTimer(name string) { rt.out.CancelTimer(sim.TimerID("app/" + name)) }

// Connected reports whether the discovery layer counts peer as in range.
func (rt *Runtime) Connected(peer sim.NodeID) bool {
	if p := rt.peer(peer); p != nil {
		return p.Up
	}
	return false
}

// PeerIDs returns the peers of the neighbourhood, in order.
func (rt *Runtime) PeerIDs() []sim.NodeID {
	ids := make([]sim.NodeID, len(rt.Peers))
	for i, p := range rt.Peers {
		ids[i] = p.ID
	}
	return ids
}

// ---- discovery layer ----

func (rt *Runtime) peer(id sim.NodeID) *Peer {
	// A scan of the sorted peers (a neighbourhood is a few devices): the first with
	// that ID, as a binary search finds it.
	for i := range rt.Peers {
		if p := &rt.Peers[i]; p.ID >= id {
			if p.ID == id {
				return p
			}
			return nil
		}
	}
	return nil
}

func (rt *Runtime) beacon() {
	for _, p := range rt.Peers {
		rt.out.Send(p.ID, Beacon{Boot: rt.Boot})
	}
	rt.out.SetTimer("beacon", rt.Cfg.Beacon)
}

// hear updates the discovery view on any message from a peer: it is in range now. It
// reports false for a message from an earlier incarnation of the peer (delivered late,
// or a late duplicate), which the runtime ignores: boots only grow, and a dead
// incarnation's channels are gone.
func (rt *Runtime) hear(from sim.NodeID, boot uint32) bool {
	p := rt.peer(from)
	if p == nil {
		// A node outside the configured neighbourhood: remember it like any peer.
		rt.Peers = append(rt.Peers, Peer{ID: from})
		slices.SortFunc(rt.Peers, func(a, b Peer) int { return int(a.ID) - int(b.ID) })
		p = rt.peer(from)
		if rt.Cfg.Beacon == 0 {
			p.Up, p.Boot = true, 1
		}
	}
	if boot != 0 && boot < p.Boot {
		return false
	}
	if boot != 0 && p.Boot != 0 && boot != p.Boot {
		old := p.Boot
		p.Boot = boot
		rt.peerRebooted(from, old)
		p = rt.peer(from)
	}
	if boot != 0 {
		p.Boot = boot
	}
	if rt.Cfg.Beacon == 0 {
		return true
	}
	p.Last = rt.now
	if !p.Up {
		p.Up = true
		rt.out.Observe(KindPeer, &ObsPeer{Peer: from, Up: true, At: rt.now})
		rt.flushTo(from) // LS-1: reconnected while active: flush the buffers in order
		rt.renotify(from)
		rt.app.Connectivity(rt, from, true)
	}
	return true
}

// peerRebooted drops the far channels of a peer's previous incarnation (its leases
// are left to their timers: a reboot is indistinguishable from a long disconnection
// for them, and their messages are ignored by the new incarnation).
func (rt *Runtime) peerRebooted(peer sim.NodeID, old uint32) {
	for _, id := range sortedKeys(rt.Imports) {
		if id.Far() && id.Grantor == peer && id.GBoot == old {
			rt.dropImport(id)
		}
	}
	for _, id := range sortedKeys(rt.Exports) {
		if id.Far() && id.Holder == peer && id.HBoot == old {
			rt.dropExport(id)
		}
	}
}

func (rt *Runtime) nextSilence() armed {
	var a armed
	if rt.Cfg.Beacon == 0 {
		return a
	}
	for _, p := range rt.Peers {
		if p.Up {
			a.earliest(p.Last.Add(rt.Cfg.silence()))
		}
	}
	return a
}

func (rt *Runtime) checkSilence() {
	for i := range rt.Peers {
		p := &rt.Peers[i]
		if p.Up && rt.now >= p.Last.Add(rt.Cfg.silence()) {
			p.Up = false
			rt.out.Observe(KindPeer, &ObsPeer{Peer: p.ID, Up: false, At: rt.now})
			rt.app.Connectivity(rt, p.ID, false)
		}
	}
}

// ---- timers ----

func (rt *Runtime) timeout(id sim.TimerID) {
	switch id {
	case "beacon":
		rt.beacon()
	case "silence":
		rt.SilenceT = armed{}
		rt.checkSilence()
	case "lease":
		rt.LeaseT = armed{}
		rt.expireDue()
	case "rto":
		rt.RtoT = armed{}
		rt.retransmitDue()
	case "async":
		rt.AsyncArmed = false
		rt.drainAsync()
	default:
		if name, ok := strings.CutPrefix(string(id), "app/"); ok {
			rt.app.Timer(rt, name)
			return
		}
		panic(fmt.Sprintf("leasing: unknown timer %q", id))
	}
}

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
		if e, ok := rt.importQ.top(rt.importLive); ok && !rt.Cfg.Broken.ClientNeverExpires {
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
	if rt.Cfg.Broken.ClientNeverExpires {
		// Broken variant only: a holder's timer stops while its grantor counts as
		// disconnected, which no queue entry follows: scan.
		for _, im := range rt.Imports {
			if !im.ID.Far() && !rt.clientFrozen(im) {
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
		if !im.ID.Far() && !rt.clientFrozen(im) {
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

// clientFrozen is the broken variant whose holder timer stops while disconnected.
func (rt *Runtime) clientFrozen(im *Import) bool {
	return rt.Cfg.Broken.ClientNeverExpires && !rt.Connected(im.ID.Grantor)
}

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
		rt.endExport(id, Expired, "timer")
	}
	if rt.scan || rt.Cfg.Broken.ClientNeverExpires {
		due = due[:0]
		for id, im := range rt.Imports {
			if !id.Far() && rt.now >= im.Deadline && !rt.clientFrozen(im) {
				due = append(due, id)
			}
		}
		slices.SortFunc(due, RefID.Compare)
	} else {
		due = rt.importQ.due(rt.now, rt.importLive)
		rt.qdirty |= dirtyImport
	}
	for _, id := range due {
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

// ---- receiving ----

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
			if c.Seq >= tb.Expected {
				drop("ended")
			}
			rt.ack(id, tb.Expected-1, tb.How)
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
	switch {
	case c.Seq < ex.Expected:
		rt.ack(id, ex.Expected-1, Live) // a retransmission: acknowledge again
		return
	case c.Seq > ex.Expected:
		return // an earlier message was lost: the holder retransmits in order
	}
	if ex.Ended == Revoked && rt.Cfg.Broken.TakeAfterRevoke {
		rt.takeRevoked(ex, from, c)
		return
	}
	live := !rt.expiredExport(ex)
	rt.out.Observe(KindRecv, rt.obs.recv.put(ObsRecv{Ref: id, Seq: c.Seq, Op: c.Op, Method: c.Method, D: c.D, Live: live, At: rt.now, Deadline: rt.expiry(ex)}))
	if !live {
		// LS-P1: it arrived at or after the deadline (the timer has not fired yet in
		// this instant): the lease expires now and the message is not processed.
		rt.endExport(id, Expired, "timer")
		return
	}
	ex.Expected++
	if ex.Ended != Live && rt.Cfg.Broken.AcceptAfterExpiry { // broken variant only: revive the expired lease
		ex.Ended = Live
		rt.qdirty |= dirtyExport
		rt.schedExport(ex)
	}
	rt.inCall, rt.callEnd = id, Live
	switch c.Op {
	case OpApp:
		rt.dispatch(ex, from, c)
	case OpRenew:
		_ = rt.renewExport(id, c.D, "client")
	case OpRevoke:
		if rt.export(id) != nil {
			rt.endExport(id, Revoked, "request")
		}
	}
	rt.inCall = RefID{}
	rt.ack(id, c.Seq, rt.callEnd)
}

// takeRevoked is the broken variant TakeAfterRevoke: a revoked lease still takes (and
// hands to the service) a message that was on its way, until its old deadline.
func (rt *Runtime) takeRevoked(ex *Export, from sim.NodeID, c Call) {
	if rt.now >= ex.Deadline {
		rt.out.Observe(KindDrop, &ObsDrop{Ref: ex.ID, Seq: c.Seq, Op: c.Op, Why: "ended", At: rt.now})
		return
	}
	rt.out.Observe(KindRecv, rt.obs.recv.put(ObsRecv{Ref: ex.ID, Seq: c.Seq, Op: c.Op, Method: c.Method, D: c.D, Live: true, At: rt.now, Deadline: ex.Deadline}))
	ex.Expected++
	if c.Op == OpApp {
		rt.out.Observe(KindForward, rt.obs.forward.put(ObsForward{Ref: ex.ID, Seq: c.Seq, Method: c.Method, Pattern: ex.Pattern.Name(), At: rt.now, Deadline: ex.Deadline}))
		rt.app.Invoke(rt, Invocation{Ref: ex.ID, Object: ex.Object, From: from, Seq: c.Seq, Method: c.Method, Args: c.Args})
	}
	rt.ack(ex.ID, c.Seq, Revoked)
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
// its deadline reached (the timer may not have fired yet in this instant).
func (rt *Runtime) expiredExport(ex *Export) bool {
	if ex.Pattern == nil {
		return false
	}
	if rt.Cfg.Broken.AcceptAfterExpiry {
		return false
	}
	return ex.Ended != Live || rt.now >= rt.expiry(ex)
}

// expiry is when a live server side expires: its deadline (later only in the broken
// variant GrantorLate).
func (rt *Runtime) expiry(ex *Export) sim.Time {
	return ex.Deadline.Add(rt.Cfg.Broken.GrantorLate)
}

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
		rt.out.Observe(KindPatternError, &ObsPatternError{Lease: lc.id, Pattern: p.Name(), Panic: fmt.Sprint(r)})
		if ex := rt.export(lc.id); ex != nil && ex.Ended == Live {
			rt.endExport(lc.id, Expired, "pattern-panic")
		}
	}()
	p.Receive(lc)
}

func (rt *Runtime) onAck(a Ack) {
	im := rt.imp(a.Ref)
	if im == nil || a.Ref.GBoot != a.SBoot {
		return
	}
	if a.UpTo > im.Acked {
		n := min(a.UpTo-im.Acked, int64(len(im.Buf)))
		im.Buf = slices.Delete(im.Buf, 0, int(n))
		im.Acked = a.UpTo
	}
	if len(im.Buf) == 0 {
		im.RtoOn = false
		rt.qdirty |= dirtyRto
	} else {
		rt.setRto(im, rt.now.Add(rt.Cfg.rto()))
	}
	if im.Revoking {
		if len(im.Buf) == 0 || a.End != Live {
			rt.dropImport(a.Ref) // the revoke was delivered: reclaim silently
		}
		return
	}
	switch a.End {
	case Revoked:
		rt.endImport(a.Ref, Revoked, "notice")
	case Expired:
		if rt.Cfg.Broken.ExpireNoticeRevokes {
			rt.endImport(a.Ref, Revoked, "notice")
			break
		}
		rt.endImport(a.Ref, Expired, "notice")
	default:
		if !a.Ref.Far() && a.Left > 0 && a.Until > im.Until && !rt.Cfg.Broken.IgnorePiggyback {
			// LS-2: the holder's timer follows the grantor's remaining time, from the
			// newest information only (a late duplicate of an older ack is ignored).
			im.Deadline, im.Until = rt.now.Add(rt.holderLeft(a.Left)), a.Until
			rt.schedImport(im)
		}
	}
}

// ---- sending ----

func (rt *Runtime) retransmitDue() {
	var due []RefID
	if rt.scan {
		for id, im := range rt.Imports {
			if im.RtoOn && rt.now >= im.RtoAt {
				due = append(due, id)
			}
		}
		slices.SortFunc(due, RefID.Compare)
	} else {
		due = rt.rtoQ.due(rt.now, rt.rtoLive)
		rt.qdirty |= dirtyRto
	}
	for _, id := range due {
		im := rt.imp(id)
		if !rt.Connected(id.Grantor) {
			im.RtoOn = false // resumes when the grantor is heard again
			rt.qdirty |= dirtyRto
			continue
		}
		for _, c := range im.Buf {
			rt.transmit(im, c)
		}
		rt.setRto(im, rt.now.Add(rt.Cfg.rto()))
	}
}

// flushTo retransmits, in order, everything still unacknowledged towards peer.
func (rt *Runtime) flushTo(peer sim.NodeID) {
	var ids []RefID
	for id, im := range rt.Imports {
		if id.Grantor == peer && len(im.Buf) > 0 {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, RefID.Compare)
	for _, id := range ids {
		im := rt.imp(id)
		for _, c := range im.Buf {
			rt.transmit(im, c)
		}
		rt.setRto(im, rt.now.Add(rt.Cfg.rto()))
	}
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
	for _, id := range ids {
		tb := rt.Tombs[id]
		rt.out.Send(peer, Ack{Ref: id, SBoot: rt.Boot, UpTo: tb.Expected - 1, End: tb.How})
	}
}

// bury keeps a tombstone for id, ordered by deadline.
func (rt *Runtime) bury(id RefID, tb Tomb) {
	if rt.Cfg.Broken.NoTombstones {
		return
	}
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

// transmit sends one buffered call, filling in the passed references' time left as it
// is now (pass-by-lease: the holder's timer starts from the grantor's remaining time
// at transmission).
func (rt *Runtime) transmit(im *Import, c Call) {
	if len(c.Pass) > 0 {
		ps := make([]Passed, len(c.Pass))
		for i, p := range c.Pass {
			ps[i] = rt.passed(p.ID)
		}
		c.Pass = ps
	}
	if c.Reply != nil {
		p := rt.passed(c.Reply.ID)
		c.Reply = &p
	}
	rt.out.Send(im.ID.Grantor, c)
}

// transmitNew is transmit for a call enqueued in this very handler call: its Pass
// array and Reply were made for it (Send, Call) and nothing has been sent with them,
// so they are filled in place rather than copied. The buffered copy shares them; the
// buffer reads only their IDs (a retransmission fills fresh copies).
func (rt *Runtime) transmitNew(im *Import, c Call) {
	for i := range c.Pass {
		c.Pass[i] = rt.passed(c.Pass[i].ID)
	}
	if c.Reply != nil {
		*c.Reply = rt.passed(c.Reply.ID)
	}
	rt.out.Send(im.ID.Grantor, c)
}

func (rt *Runtime) passed(id RefID) Passed {
	ex := rt.export(id)
	if ex == nil || ex.Ended != Live || rt.now >= ex.Deadline {
		return Passed{ID: id, Dead: true}
	}
	return Passed{ID: id, Object: ex.Object, Pattern: ex.Pattern.Name(), Term: ex.Term, Left: ex.Deadline.Sub(rt.now), Until: ex.Deadline}
}

// enqueue appends a call to the reference's buffer and sends it at once when the
// grantor is in range (LS-1).
func (rt *Runtime) enqueue(im *Import, c Call) {
	im.Next++
	c.Ref, c.SBoot, c.Seq = im.ID, rt.Boot, im.Next
	var until sim.Time
	if !im.ID.Far() {
		until = im.Deadline
	}
	rt.out.Observe(KindSend, rt.obs.send.put(ObsSend{Ref: im.ID, Seq: c.Seq, Op: c.Op, Method: c.Method, D: c.D, At: rt.now, Deadline: until}))
	connected := rt.Connected(im.ID.Grantor)
	if rt.Cfg.Broken.NoBuffer && !connected {
		return
	}
	im.Buf = append(im.Buf, c)
	if connected {
		rt.transmitNew(im, c)
		if !im.RtoOn {
			rt.setRto(im, rt.now.Add(rt.Cfg.rto()))
		}
	}
}

// holderLeft is the time left the holder's timer is set to from the grantor's: the same
// (shorter only in the broken variant HolderShort). LS-P2: both timers aim at the same
// instant, so the sides end within a latency plus the clocks' drift of each other.
func (rt *Runtime) holderLeft(left time.Duration) time.Duration {
	if rt.Cfg.Broken.HolderShort {
		return left * 7 / 10
	}
	return left
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
	im := &Import{ID: id, Object: p.Object, Pattern: p.Pattern, Term: p.Term, Deadline: rt.now.Add(rt.holderLeft(p.Left)), Until: p.Until}
	rt.Imports[id] = im
	rt.schedImport(im)
	rt.out.Observe(KindResolve, rt.obs.resolve.put(ObsResolve{Lease: id, Object: p.Object, Pattern: p.Pattern, Term: p.Term, Left: p.Left, At: rt.now, Deadline: im.Deadline}))
	return id
}

// ---- ending ----

// endExport ends the server side: observation, listeners (on expiry only), reclaim,
// and a notice to the holder when the end was not a natural expiry.
func (rt *Runtime) endExport(id RefID, how End, cause string) {
	ex := rt.export(id)
	left := max(0, ex.Deadline.Sub(rt.now))
	n := 0
	if how == Expired || rt.Cfg.Broken.ListenersOnRevoke {
		for _, tag := range ex.Listeners {
			rt.Async = append(rt.Async, asyncEv{Kind: asyncListener, Lease: id, Side: Server, Tag: tag})
			n++
		}
	}
	rt.out.Observe(KindEnd, rt.obs.end.put(ObsEnd{Lease: id, Side: Server, How: how, Cause: cause, At: rt.now, Deadline: ex.Deadline, Left: left, Listeners: n}))
	if f, ok := rt.Futures[id.N]; ok && ex.Object == futureObject {
		// LS-4: the future's lease ended before the reply: the future is ruined, with
		// a timeout when it expired (the catch: block of @Due).
		delete(rt.Futures, id.N)
		ev := asyncEv{Kind: asyncRuined, Lease: id, Future: f.ID, Tag: f.Tag}
		errText := "timeout"
		if how == Revoked {
			ev.Err, errText = "future revoked before its reply", "revoked"
		}
		rt.out.Observe(KindFutureDone, rt.obs.future.put(ObsFuture{Future: f.ID, Tag: f.Tag, Lease: id, At: rt.now, Err: errText}))
		rt.Async = append(rt.Async, ev)
	}
	switch {
	case how == Revoked && rt.Cfg.Broken.TakeAfterRevoke:
		ex.Ended = how // broken variant only: keep taking messages
		rt.qdirty |= dirtyExport
	case cause != "timer":
		rt.dropExport(id)
		rt.bury(id, Tomb{Deadline: ex.Deadline, Expected: ex.Expected, How: how})
		if ex.Object != futureObject {
			rt.release(asyncEv{Kind: asyncReleased, Lease: id, Side: Server, How: how, Object: ex.Object}, n > 0)
		}
	case rt.Cfg.Broken.AcceptAfterExpiry:
		ex.Ended = how
		rt.qdirty |= dirtyExport
	default:
		rt.dropExport(id)
		if ex.Object != futureObject {
			rt.release(asyncEv{Kind: asyncReleased, Lease: id, Side: Server, How: how, Object: ex.Object}, n > 0)
		}
	}
	if id == rt.inCall {
		rt.callEnd = how // the call's ack carries the end
		return
	}
	if cause != "timer" {
		rt.out.Send(id.Holder, Ack{Ref: id, SBoot: rt.Boot, UpTo: ex.Expected - 1, End: how})
	}
}

// endImport ends the client side: observation, listeners (on expiry only), reclaim.
func (rt *Runtime) endImport(id RefID, how End, cause string) {
	im := rt.imp(id)
	if im.Revoking {
		rt.dropImport(id) // already ended (revoked) when the holder asked
		return
	}
	n := 0
	if how == Expired || rt.Cfg.Broken.ListenersOnRevoke {
		for _, tag := range im.Listeners {
			rt.Async = append(rt.Async, asyncEv{Kind: asyncListener, Lease: id, Side: Client, Tag: tag})
			n++
		}
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
	if afterListeners {
		rt.Async = append(rt.Async, e)
		return
	}
	rt.releases = append(rt.releases, e)
}

// sortedKeys returns a map's RefID keys in order (no map order may reach an output).
func sortedKeys[V any](m map[RefID]V) []RefID { return slices.SortedFunc(maps.Keys(m), RefID.Compare) }

// futureIDs returns the runtime's outstanding futures in order.
func (rt *Runtime) futureIDs() []int64 { return slices.Sorted(maps.Keys(rt.Futures)) }
