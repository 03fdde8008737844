package leasing

import (
	"fmt"
	"math"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Meter is the application of the measurements (scenario leasing/detection): one
// client device uses a service object of one server device through a lease, either
// steadily (every Every) or at random (a Poisson process of rate Lambda), under one of
// the leasing policies compared by Gray & Cheriton's load-versus-term curve:
//
//   - "on-demand": a basic lease; when an access finds it expired, the client acquires
//     a new one first (G&C's extend-on-access: one extension per access after expiry);
//   - "on-call": a renew-on-call lease; every access renews it for free (piggybacked);
//     only an access after a gap longer than the term needs a new lease;
//   - "periodic": a basic lease the client keeps renewing every Term/2 (Java RMI's
//     default: renew at half the lease, whether used or not).
//
// Acquiring is a call to the server's far object with a future whose reply passes the
// lease.
type Meter struct {
	Cfg  *MeterConfig
	Ref  RefID
	Open bool // an acquisition is in flight
	Want bool // an access waits for the acquisition
}

// KindMeterAccess records one access of the meter's client (an access sends at most
// one "use" message: at once through a live lease, or when the lease it waits for
// arrives).
const KindMeterAccess = "meter.access"

// MeterAccess is the value of a KindMeterAccess observation.
type MeterAccess struct{}

// MeterConfig configures a Meter.
type MeterConfig struct {
	Server sim.NodeID
	Policy string // on-demand, on-call, periodic
	Term   time.Duration
	// Every is the period of steady accesses; Lambda (per second) the rate of Poisson
	// accesses when Every is 0.
	Every  time.Duration
	Lambda float64
	// Reacquire: an access that finds no live lease acquires a new one (otherwise the
	// client acquires once, when it first discovers the server).
	Reacquire bool
}

// Validate reports a malformed configuration.
func (c *MeterConfig) Validate() error {
	switch {
	case c.Policy != "on-demand" && c.Policy != "on-call" && c.Policy != "periodic":
		return fmt.Errorf("leasing: meter: unknown policy %q (on-demand, on-call or periodic)", c.Policy)
	case c.Term <= 0:
		return fmt.Errorf("leasing: meter: term %v: %w", c.Term, ErrTerm)
	case c.Every < 0 || (c.Every == 0 && !(c.Lambda > 0)):
		return fmt.Errorf("leasing: meter: needs a positive access period or rate")
	}
	return nil
}

func (m *Meter) client(rt *Runtime) bool { return rt.Self != m.Cfg.Server }

// Start implements App.
func (m *Meter) Start(rt *Runtime) {
	m.Ref, m.Open, m.Want = RefID{}, false, false
	if m.client(rt) {
		rt.SetTimer("meter.use", m.gap(rt))
	}
}

func (m *Meter) gap(rt *Runtime) time.Duration {
	if m.Cfg.Every > 0 {
		return m.Cfg.Every
	}
	u := float64(rt.Rand()>>11) * (1.0 / (1 << 53))
	return time.Duration(-math.Log(1-u) / m.Cfg.Lambda * float64(time.Second))
}

// Connectivity implements App: acquire a lease on first discovery.
func (m *Meter) Connectivity(rt *Runtime, peer sim.NodeID, up bool) {
	if up && m.client(rt) && peer == m.Cfg.Server && m.Ref.IsZero() && !m.Open {
		m.acquire(rt)
	}
}

func (m *Meter) acquire(rt *Runtime) {
	far, err := rt.Far(m.Cfg.Server)
	if err != nil {
		return
	}
	if _, err := rt.Call(far, "meter.open", nil, m.Cfg.Term, "meter.open"); err == nil {
		m.Open = true
	}
}

// Timer implements App.
func (m *Meter) Timer(rt *Runtime, name string) {
	switch name {
	case "meter.use":
		rt.SetTimer("meter.use", m.gap(rt))
		rt.Observe(KindMeterAccess, MeterAccess{})
		if rt.Holds(m.Ref) {
			_ = rt.Send(m.Ref, "use", nil)
			return
		}
		if m.Cfg.Reacquire && !m.Open {
			m.Want = true
			m.acquire(rt)
		}
	case "meter.renew":
		if rt.Holds(m.Ref) {
			_ = rt.Renew(m.Ref, m.Cfg.Term)
			rt.SetTimer("meter.renew", m.Cfg.Term/2)
		}
	}
}

// Invoke implements App (server side).
func (m *Meter) Invoke(rt *Runtime, inv Invocation) {
	if inv.Object == FarObject && inv.Method == "meter.open" {
		var p Interceptor = Basic{}
		if m.Cfg.Policy == "on-call" {
			p = RenewOnCall{}
		}
		ref, err := rt.Lease("meter.obj", m.Cfg.Term, p, inv.From)
		must(err)
		_ = rt.Reply(inv.Reply, "ok", ref)
	}
}

// Resolved implements App: the new lease arrived.
func (m *Meter) Resolved(rt *Runtime, _ Future, _ any, refs []RefID) {
	m.Open = false
	if len(refs) == 0 || refs[0].IsZero() {
		return
	}
	m.Ref = refs[0]
	if m.Cfg.Reacquire && m.Cfg.Policy != "periodic" {
		// Accesses come when they come: the lease is not kept alive on purpose, so its
		// expiry between accesses is intended.
		rt.Observe(KindIdle, ObsIdle{Lease: m.Ref})
	}
	if m.Cfg.Policy == "periodic" {
		rt.SetTimer("meter.renew", m.Cfg.Term/2)
	}
	if m.Want {
		m.Want = false
		_ = rt.Send(m.Ref, "use", nil)
	}
}

// Ruined implements App.
func (m *Meter) Ruined(*Runtime, Future, error) { m.Open = false }

// Expired implements App.
func (m *Meter) Expired(*Runtime, Expiry) {}

// Released implements App.
func (m *Meter) Released(*Runtime, Release) {}

// Input implements App.
func (m *Meter) Input(*Runtime, sim.Message) {}
