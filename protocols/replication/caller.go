package replication

import (
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// Call is one request a front end makes to a replica group until it is answered: the
// client's replica locator (§5, "clients only need to specify the group name") and, for
// RP-4, the primary predecessor acting as the client of the successor group (§4.4: "the
// primary predecessor is the client of the successor task scheduler. If the predecessor
// does not receive a response from the primary successor, it tries again").
//
// A passive group's request goes to the primary the registries list; an active
// group's to every registered replica (RP-3: the front end multicasts, and takes the
// first reply). Known caches the targets of the last answered call.
type Call struct {
	Group  string
	Active bool
	Req    Request
	// Lk numbers the lookups; this call's are Base+1 … Lk. Acted is the newest of
	// them whose answer the request was sent on.
	Lk, Base, Acted int64
	Sent            []sim.NodeID
	// Relooked: a NotPrimary made the call look again; a second one waits for the
	// retry (a primary just stepping down is listed for a while).
	Relooked bool
}

// callTag marks the lookups made for calls.
const callTag = "call"

// Start sends the request to known targets, or looks the group up first.
func (c *Call) Start(out *sim.Outbox, registries, known []sim.NodeID) {
	c.Base = c.Lk
	if len(known) > 0 {
		out.Cover(ruleCallKnown)
		c.send(out, known)
		return
	}
	c.Lookup(out, registries)
}

// Lookup asks every registry for the group again (after a timeout, or a NotPrimary).
func (c *Call) Lookup(out *sim.Outbox, registries []sim.NodeID) {
	out.Cover(ruleCallLookup)
	out.Observe(ObsRelook, CallEvent{Group: c.Group, Active: c.Active, ID: c.Req.ID})
	c.Lk++
	c.Sent = nil
	for _, g := range registries {
		out.Send(g, Lookup{Group: c.Group, Seq: c.Lk, Tag: callTag})
	}
}

// Found acts on a registry's answer: the request goes to the primary (passive) or to
// every registered replica not sent to yet (active).
//
// RP-2, §5.3.3 (handle_failure): the replica locator looks the group up in each registry
// and takes the primary an answer names. An answer to any of this call's lookups
// counts, not only to the newest: each re-send starts a new lookup, so with a re-send
// period below the lookup's round trip an answer to the newest never arrived in time
// and the call never completed. Only an answer older than one the request was already
// sent on is ignored (passive: also the rest of that one's, and any while a primary
// found since the last lookup has not answered).
func (c *Call) Found(out *sim.Outbox, m Found) {
	if m.Tag != callTag || m.Seq <= c.Base || m.Seq > c.Lk || m.Seq < c.Acted {
		return // not this call's lookup, or older than an answer acted on
	}
	if !c.Active && (len(c.Sent) > 0 || m.Seq == c.Acted) {
		return // the primary was found already
	}
	var to []sim.NodeID
	for _, g := range m.Regs {
		if (c.Active || g.Primary) && !slices.Contains(c.Sent, g.Node) {
			to = append(to, g.Node)
		}
	}
	if len(to) > 0 {
		c.Acted = m.Seq
		if c.Active {
			out.Cover(ruleMulticast)
		} else {
			out.Cover(ruleCallFound)
		}
	}
	c.send(out, to)
}

// send sends the request: to one primary (passive), or to each replica (active).
func (c *Call) send(out *sim.Outbox, to []sim.NodeID) {
	if !c.Active && len(to) > 1 {
		to = to[:1]
	}
	for _, n := range to {
		c.Sent = append(c.Sent, n)
		out.Send(n, c.Req)
	}
}

// Answered reports whether m answers the call. A NotPrimary answer makes it look again.
func (c *Call) Answered(out *sim.Outbox, registries []sim.NodeID, m Response) bool {
	if m.ID != c.Req.ID {
		return false
	}
	if m.NotPrimary {
		out.Observe(ObsRefused, CallEvent{Group: c.Group, Active: c.Active, ID: c.Req.ID})
		// RP-2, §5.3.3: a failed invocation calls handle_failure, which looks the
		// group up again, and invokes again (once: see Relooked).
		switch {
		case c.Active:
			// the multicast's other replies stand (active replicas never refuse)
		case !c.Relooked:
			out.Cover(ruleRefused)
			c.Relooked = true
			c.Lookup(out, registries)
		default:
			out.Cover(ruleRefusedMore)
		}
		return false
	}
	return true
}
