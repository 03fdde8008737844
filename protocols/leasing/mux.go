package leasing

import (
	"fmt"
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/sim"
)

// Mux runs several applications on one device, routing by name prefix: object names,
// far methods, listener tags, future tags and timer names start with one of the
// prefixes of the application that owns them (e.g. "mp." and "openSession" for the
// music player, "probe." for the probe). Unmatched names go to the first application.
type Mux struct {
	Apps     []App
	Prefixes [][]string
}

func (m *Mux) route(name string) App {
	for i, ps := range m.Prefixes {
		for _, p := range ps {
			if strings.HasPrefix(name, p) {
				return m.Apps[i]
			}
		}
	}
	return m.Apps[0]
}

// Start implements App.
func (m *Mux) Start(rt *Runtime) {
	for _, a := range m.Apps {
		a.Start(rt)
	}
}

// Connectivity implements App.
func (m *Mux) Connectivity(rt *Runtime, peer sim.NodeID, up bool) {
	for _, a := range m.Apps {
		a.Connectivity(rt, peer, up)
	}
}

// Invoke implements App (far messages route by method, others by object).
func (m *Mux) Invoke(rt *Runtime, inv Invocation) {
	if inv.Object == FarObject {
		m.route(inv.Method).Invoke(rt, inv)
		return
	}
	m.route(inv.Object).Invoke(rt, inv)
}

// Expired implements App.
func (m *Mux) Expired(rt *Runtime, e Expiry) { m.route(e.Tag).Expired(rt, e) }

// Released implements App.
func (m *Mux) Released(rt *Runtime, r Release) { m.route(r.Object).Released(rt, r) }

// Resolved implements App.
func (m *Mux) Resolved(rt *Runtime, f Future, v any, refs []RefID) {
	m.route(f.Tag).Resolved(rt, f, v, refs)
}

// Ruined implements App.
func (m *Mux) Ruined(rt *Runtime, f Future, err error) { m.route(f.Tag).Ruined(rt, f, err) }

// Timer implements App.
func (m *Mux) Timer(rt *Runtime, name string) { m.route(name).Timer(rt, name) }

// Input implements App.
func (m *Mux) Input(rt *Runtime, msg sim.Message) {
	for _, a := range m.Apps {
		a.Input(rt, msg)
	}
}

// Leaker is implemented by applications that can list leaked state (LS-P4). Leaks
// runs after the run, between handler calls, when the runtime's per-call clock reads
// zero: it must judge liveness with GrantsAtEnd and HoldsAtEnd (at LastNow), not with
// Grants, Holds, State or TimeLeft.
type Leaker interface{ Leaks(rt *Runtime) []string }

// GrantsAtEnd reports whether the device still serves a live server side of ref at its
// last local time (LastNow): for leak reports after a run.
func (rt *Runtime) GrantsAtEnd(ref RefID) bool {
	ex := rt.Exports[ref]
	return ex != nil && ex.Ended == Live && (ex.Pattern == nil || ex.Deadline >= rt.LastNow)
}

// HoldsAtEnd reports whether the device still holds a live client side of ref at its
// last local time (LastNow): for leak reports after a run.
func (rt *Runtime) HoldsAtEnd(ref RefID) bool {
	im := rt.Imports[ref]
	return im != nil && !im.Revoking && (ref.Far() || im.Deadline >= rt.LastNow)
}

// Leaks implements Leaker over the multiplexed applications.
func (m *Mux) Leaks(rt *Runtime) []string {
	var out []string
	for _, a := range m.Apps {
		if l, ok := a.(Leaker); ok {
			out = append(out, l.Leaks(rt)...)
		}
	}
	return out
}

// Leaks lists every piece of state this device keeps for a lease that has ended
// (LS-P4), at the end of a run: runtime entries past their deadline (their timer
// should have fired), ended server sides kept around, and application state. Work
// still queued for the next turn (listeners, releases) exempts the leases it concerns:
// pending is how many leases were not judged for that reason (every other one was).
func (d *Device) Leaks() (leaks []string, pending int) {
	rt := &d.RT
	// Asynchronous work still queued (listeners, future resolutions) may end or touch
	// its leases: those leases are not judged; every other one is.
	busy := map[RefID]bool{}
	for _, a := range rt.Async {
		busy[a.Lease] = true
	}
	pending = len(busy)
	for _, id := range sortedKeys(rt.Exports) {
		ex := rt.Exports[id]
		if ex.Pattern == nil || busy[id] {
			continue
		}
		if ex.Ended != Live {
			leaks = append(leaks, fmt.Sprintf("server side of %s kept after it %s", id, ex.Ended))
		} else if ex.Deadline < rt.LastNow {
			leaks = append(leaks, fmt.Sprintf("server side of %s kept past its deadline %v (now %v)", id, ex.Deadline, rt.LastNow))
		}
	}
	for _, id := range sortedKeys(rt.Imports) {
		im := rt.Imports[id]
		if !busy[id] && !id.Far() && im.Deadline < rt.LastNow {
			leaks = append(leaks, fmt.Sprintf("client side of %s kept past its deadline %v (now %v)", id, im.Deadline, rt.LastNow))
		}
	}
	for _, id := range rt.TombOrder {
		if tb := rt.Tombs[id]; !busy[id] && tb.Deadline < rt.LastNow {
			leaks = append(leaks, fmt.Sprintf("tombstone of %s kept past its deadline %v (now %v)", id, tb.Deadline, rt.LastNow))
		}
	}
	for _, n := range rt.futureIDs() {
		if f := rt.Futures[n]; !busy[f.Lease] && rt.Exports[f.Lease] == nil {
			leaks = append(leaks, fmt.Sprintf("future %d kept after its lease %s ended", n, f.Lease))
		}
	}
	if l, ok := d.App.(Leaker); ok && len(rt.Async) == 0 {
		leaks = append(leaks, l.Leaks(rt)...)
	}
	return leaks, pending
}

// PendingLeases lists, sorted, the leases that asynchronous work still queued for the
// next turn concerns (for checkers: such a lease may still change state).
func (rt *Runtime) PendingLeases() []RefID {
	var out []RefID
	for _, a := range rt.Async {
		if !slices.Contains(out, a.Lease) {
			out = append(out, a.Lease)
		}
	}
	slices.SortFunc(out, func(a, b RefID) int { return strings.Compare(a.String(), b.String()) })
	return out
}
