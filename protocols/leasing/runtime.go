package leasing

import (
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
	// Policy holds the hooks of the runtime's decision points (policy.go). The zero
	// value is the protocol; tests plant deliberately broken rules through it.
	Policy Policy
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
		if in.Kind == sim.Restart {
			rt.cover(ruleReboot) // LS-1: a new incarnation, no lease (they are volatile)
		}
		b, _ := sim.Load[uint32](in.Stable, "boot")
		boot := rt.nextBoot(b)
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

// sortedKeys returns a map's RefID keys in order (no map order may reach an output).
func sortedKeys[V any](m map[RefID]V) []RefID { return slices.SortedFunc(maps.Keys(m), RefID.Compare) }

// futureIDs returns the runtime's outstanding futures in order.
func (rt *Runtime) futureIDs() []int64 { return slices.Sorted(maps.Keys(rt.Futures)) }
