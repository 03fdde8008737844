package replication

import (
	"slices"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Registry is a lookup registry (RP-1, the thesis' Jini lookup service): leased
// registrations by group, removed when not renewed, and membership-change
// notifications to the group's members. Its registrations are volatile: a restarted
// registry is empty until the replicas renew, so it stays cold for a lease (the
// longest of the registrations it gets): it answers no lookup and notifies nobody
// until every live replica has renewed, then notifies every group. A registry that
// answered from a partial list made a replica back from a crash take itself for the
// minimum ID: two sequencers (active), two primaries and a backup fencing off the
// older term's (passive; swarm seeds 260, 17048).
type Registry struct {
	Regs []entry
	// Cold: back from a crash since Since; Lease is the longest lease registered since.
	Cold  bool
	Since sim.Time
	Lease time.Duration
	out   *sim.Outbox
	now   sim.Time
}

type entry struct {
	Reg     Reg
	Expires sim.Time // local time
	Notify  bool
}

// NewRegistry returns a registry's constructor.
func NewRegistry() func() sim.Node { return func() sim.Node { return &Registry{} } }

// Handle implements sim.Node.
func (r *Registry) Handle(in sim.Input, out *sim.Outbox) {
	r.out, r.now = out, in.Now
	defer func() { r.out = nil }()
	switch in.Kind {
	case sim.Start, sim.Restart:
		r.Regs = nil
		if in.Kind == sim.Restart {
			r.Cold, r.Since, r.Lease = true, in.Now, 0
		}
		out.SetTimer("expire", 10*time.Millisecond)
	case sim.Timeout:
		r.expire()
		if r.Cold && r.Lease > 0 && r.now.Sub(r.Since) >= r.Lease {
			// RP-1: every live replica has renewed since: the lists are whole again.
			out.Cover(ruleRegWarm)
			r.Cold = false
			for _, g := range r.groups() {
				r.notify(g)
			}
		}
		out.SetTimer("expire", 10*time.Millisecond)
	case sim.Receive:
		switch m := in.Msg.(type) {
		case Register:
			r.register(in.From, m)
		case Lookup:
			if r.Cold {
				out.Cover(ruleRegCold)
				return
			}
			out.Cover(ruleRegLookup)
			out.Send(in.From, Found{Seq: m.Seq, Tag: m.Tag, Regs: r.group(m.Group)})
		}
	}
}

// register adds or renews a registration (RP-1: the same ID is reused; a new role
// replaces the old one).
func (r *Registry) register(from sim.NodeID, m Register) {
	exp := r.now.Add(time.Duration(m.Lease))
	r.Lease = max(r.Lease, time.Duration(m.Lease))
	i := slices.IndexFunc(r.Regs, func(e entry) bool { return e.Reg.ID == m.Reg.ID })
	changed := false
	if i < 0 {
		r.out.Cover(ruleRegNew)
		r.Regs = append(r.Regs, entry{Reg: m.Reg, Expires: exp, Notify: m.Notify})
		changed = true
	} else {
		r.out.Cover(ruleRegRenew)
		changed = r.Regs[i].Reg != m.Reg
		r.Regs[i] = entry{Reg: m.Reg, Expires: exp, Notify: m.Notify}
	}
	r.out.Send(from, Registered{ID: m.Reg.ID, Primary: m.Reg.Primary})
	if changed {
		r.notify(m.Reg.Group)
	}
}

// expire removes the registrations not renewed in time (failure detection, RP-1).
func (r *Registry) expire() {
	var groups []string
	r.Regs = slices.DeleteFunc(r.Regs, func(e entry) bool {
		if e.Expires <= r.now {
			r.out.Cover(ruleRegExpire)
			groups = append(groups, e.Reg.Group)
			return true
		}
		return false
	})
	slices.Sort(groups)
	for _, g := range slices.Compact(groups) {
		r.notify(g)
	}
}

// groups returns the groups registered, sorted.
func (r *Registry) groups() []string {
	var gs []string
	for _, e := range r.Regs {
		gs = append(gs, e.Reg.Group)
	}
	slices.Sort(gs)
	return slices.Compact(gs)
}

func (r *Registry) group(g string) []Reg {
	var out []Reg
	for _, e := range r.Regs {
		if e.Reg.Group == g {
			out = append(out, e.Reg)
		}
	}
	slices.SortFunc(out, func(a, b Reg) int {
		if a.ID.Less(b.ID) {
			return -1
		}
		if b.ID.Less(a.ID) {
			return 1
		}
		return 0
	})
	return out
}

// notify tells the group's members that subscribed that its membership changed (RP-1:
// remote events instead of polling, the thesis' future work).
func (r *Registry) notify(g string) {
	if r.Cold {
		return
	}
	regs := r.group(g)
	for _, e := range r.Regs {
		if e.Reg.Group == g && e.Notify {
			r.out.Cover(ruleRegNotify)
			r.out.Send(e.Reg.Node, Changed{Group: g, Regs: regs})
		}
	}
}

// loadID returns a replica's registration ID (RP-1): 128 random bits drawn from its
// random input on its first start and kept in stable storage, reused on every later
// registration.
func loadID(in sim.Input, out *sim.Outbox) RegID {
	if id, ok := sim.Load[RegID](in.Stable, "id"); ok {
		out.Cover(ruleIDReused)
		return id
	}
	out.Cover(ruleIDDrawn)
	id := RegID{Hi: in.Rand, Lo: sim.Mix64(in.Rand ^ 0x9e3779b97f4a7c15)}
	out.Store("id", id)
	return id
}
