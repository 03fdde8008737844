package leasing

import (
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// The runtime arms one "lease" and one "rto" timer at the earliest deadline of its
// sides and buffers (finish runs after every input). Rescanning every export and
// import for it on every handler call was a large share of a swarm run (issue 16), so
// the deadlines are kept in min-queues with lazy deletion: every assignment of a
// deadline pushes an entry (at, id, side); an entry is valid while its side is still
// in its map (not gone) with that very deadline, and invalid entries are dropped when
// they reach the top (or when the queue grows well past the number of sides). The
// earliest valid entry is the earliest deadline: the same value the scan found, so
// the timers are armed exactly as before. The queues are derived state, not encoded
// (the fingerprint covers the deadlines themselves). A copy of the runtime (Clone:
// the model checker copies a device at every step, and its devices hold a lease or
// two) keeps none and scans, as every call did before. Most calls change no queue's
// answer (a beacon, an acknowledgement that only moves a retransmission), so each
// queue's earliest valid entry is kept (Runtime.topEx, topIm, topRto) and looked up
// again only when the queue is marked dirty: on a push, a side removed, a lease side
// ended or revived, a retransmission disarmed, or due entries popped.

// tq is a min-queue of (deadline, reference) entries ordered by (at, id).
type tq []tqEnt

type tqEnt struct {
	At sim.Time
	ID RefID
	// The side the entry was pushed for (one of them): validity is checked on it, not
	// by a map lookup. A side removed from its map is marked gone.
	ex *Export
	im *Import
}

func (a tqEnt) less(b tqEnt) bool {
	if a.At != b.At {
		return a.At < b.At
	}
	return a.ID.Compare(b.ID) < 0
}

func (q *tq) push(at sim.Time, id RefID, ex *Export, im *Import) {
	*q = append(*q, tqEnt{at, id, ex, im})
	h := *q
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].less(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *tq) pop() {
	h := *q
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	*q = h
	q.down(0)
}

func (q tq) down(i int) {
	n := len(q)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && q[r].less(q[l]) {
			m = r
		}
		if !q[m].less(q[i]) {
			return
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
}

// top drops invalid entries from the top and returns the earliest valid one.
func (q *tq) top(valid func(tqEnt) bool) (tqEnt, bool) {
	for len(*q) > 0 {
		if e := (*q)[0]; valid(e) {
			return e, true
		}
		q.pop()
	}
	return tqEnt{}, false
}

// due pops every valid entry with at <= now and returns their references, sorted and
// without repeats (a deadline set twice to the same value has two entries).
func (q *tq) due(now sim.Time, valid func(tqEnt) bool) []RefID {
	var ids []RefID
	for len(*q) > 0 && (*q)[0].At <= now {
		if e := (*q)[0]; valid(e) {
			ids = append(ids, e.ID)
		}
		q.pop()
	}
	slices.SortFunc(ids, RefID.Compare)
	return slices.Compact(ids)
}

// compact drops the invalid entries once they outnumber the sides by far, so a
// long-lived runtime's queues stay in proportion to its state.
func (q *tq) compact(sides int, valid func(tqEnt) bool) {
	if len(*q) < 64 || len(*q) < 4*sides {
		return
	}
	h := slices.DeleteFunc(*q, func(e tqEnt) bool { return !valid(e) })
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	*q = h
}

// exportLive is the validity of an entry of ExportQ: the server side still runs a
// timer at that instant.
func (rt *Runtime) exportLive(e tqEnt) bool {
	ex := e.ex
	return !ex.gone && ex.Pattern != nil && ex.Ended == Live && rt.expiry(ex) == e.At
}

// importLive is the validity of an entry of importQ: the client side still has that
// deadline.
func (rt *Runtime) importLive(e tqEnt) bool {
	return !e.im.gone && !e.ID.Far() && e.im.Deadline == e.At
}

// rtoLive is the validity of an entry of rtoQ: that retransmission is still armed.
func (rt *Runtime) rtoLive(e tqEnt) bool {
	return !e.im.gone && e.im.RtoOn && e.im.RtoAt == e.At
}

// dropExport removes a server side (marking it gone for the deadline queue).
func (rt *Runtime) dropExport(id RefID) {
	if ex := rt.export(id); ex != nil {
		ex.gone = true
		rt.qdirty |= dirtyExport
		delete(rt.Exports, id)
	}
}

// dropImport removes a client side (marking it gone for the deadline queues).
func (rt *Runtime) dropImport(id RefID) {
	if im := rt.imp(id); im != nil {
		im.gone = true
		rt.qdirty |= dirtyImport | dirtyRto
		delete(rt.Imports, id)
	}
}

// schedExport records a server side's (new) expiry; call it whenever its deadline is
// set or it becomes live again.
func (rt *Runtime) schedExport(ex *Export) {
	if !rt.scan && ex.Pattern != nil && ex.Ended == Live {
		rt.exportQ.push(rt.expiry(ex), ex.ID, ex, nil)
		rt.qdirty |= dirtyExport
	}
}

// schedImport records a client side's (new) deadline.
func (rt *Runtime) schedImport(im *Import) {
	if !rt.scan && !im.ID.Far() {
		rt.importQ.push(im.Deadline, im.ID, nil, im)
		rt.qdirty |= dirtyImport
	}
}

// setRto arms an import's retransmission at at.
func (rt *Runtime) setRto(im *Import, at sim.Time) {
	im.RtoAt, im.RtoOn = at, true
	if !rt.scan {
		rt.rtoQ.push(at, im.ID, nil, im)
		rt.qdirty |= dirtyRto
	}
}
