package leasing

import (
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// LS-1, the connectivity half of the reference states: the discovery layer learns who is
// in range only from messages (beacons and any other message), and a peer unheard for
// Silence counts as out of range. Reconnecting flushes the buffers (buffer.go) and
// repeats pending end notices (lifecycle.go).

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
		rt.cover(ruleNewPeer)
		if !rt.discovers(from) {
			return false
		}
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
		rt.cover(ruleReboot) // seen from the peer: its previous incarnation is gone
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
		if rt.flushes(from) {
			rt.flushTo(from) // LS-1: reconnected while active: flush the buffers in order
		}
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
			a.earliest(p.Last.Add(rt.silence()))
		}
	}
	return a
}

func (rt *Runtime) checkSilence() {
	for i := range rt.Peers {
		p := &rt.Peers[i]
		if p.Up && rt.now >= p.Last.Add(rt.silence()) {
			rt.cover(ruleOutOfRange)
			p.Up = false
			rt.out.Observe(KindPeer, &ObsPeer{Peer: p.ID, Up: false, At: rt.now})
			rt.app.Connectivity(rt, p.ID, false)
		}
	}
}
