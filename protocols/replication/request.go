package replication

import (
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/sim"
)

// Requests at the primary (RP-2 §3.6.1), and the primary's dones at the backups.

func (r *Replica) request(from sim.NodeID, m Request) {
	if !r.S.Primary {
		r.out.Cover(ruleNotPrimary)
		r.out.Send(from, Response{ID: m.ID, Client: m.Client, Seq: m.Seq, NotPrimary: true})
		return
	}
	k := m.ID
	if r.S.Current != nil && r.S.Current.Req.ID == k {
		// In progress: executed, its result already in the duplicate table, but not
		// yet acknowledged by every backup. Answering the re-send now would
		// acknowledge a request a crash of this primary could still lose (RP-P4).
		r.out.Cover(ruleInProgress)
		return
	}
	if v, ok := r.O.Policy.duplicate(r.S.Dup, k); ok {
		// RP-2: a duplicate: re-send the stored response, execute nothing (§4.5.4,
		// §4.5.5: a transition already done is simply acknowledged).
		r.out.Cover(ruleDuplicate)
		if strings.HasPrefix(k, PrefixTransition) {
			r.out.Cover(ruleTransDup)
		}
		r.respond(m, v, 0)
		return
	}
	for _, q := range r.S.Queue {
		if q.ID == k {
			r.out.Cover(ruleQueuedDup)
			return
		}
	}
	r.S.Queue = append(r.S.Queue, m)
	r.next()
}

// next executes the queued request: Update to the backups before the call, the call,
// Done after it, and the answer once every backup acknowledged (RP-2).
func (r *Replica) next() {
	if r.S.Current != nil || len(r.S.Queue) == 0 || !r.S.Primary {
		return
	}
	m := r.S.Queue[0]
	r.S.Queue = r.S.Queue[1:]
	k := m.ID
	if v, ok := r.O.Policy.duplicate(r.S.Dup, k); ok {
		r.out.Cover(ruleDuplicate)
		r.respond(m, v, 0)
		r.next()
		return
	}
	r.out.Cover(ruleExecute)
	for _, b := range r.S.Backups {
		r.out.Send(b, Update(m))
	}
	resp := r.apply(m.Op)
	r.S.Dup[k] = resp
	r.S.Applied++
	r.save()
	r.out.Observe(ObsExec, Exec{Group: r.O.Group, ID: k, Client: m.Client, Seq: m.Seq, Op: m.Op, Resp: resp, Index: r.S.Applied, Backups: slices.Clone(r.S.Backups)})
	r.task(m)
	for _, b := range r.S.Backups {
		r.out.Send(b, DoneMsg{ID: k, Client: m.Client, Seq: m.Seq, Op: m.Op, Resp: resp, Index: r.S.Applied, Term: r.S.Term, TermOf: r.S.TermOf})
	}
	r.S.Current = &inflight{Req: m, Resp: resp, Index: r.S.Applied, Waiting: slices.Clone(r.S.Backups)}
	r.finish()
}

func (r *Replica) acked(from sim.NodeID, m BackupAck) {
	cur := r.S.Current
	if cur == nil || m.Index < cur.Index {
		return
	}
	cur.Waiting = slices.DeleteFunc(cur.Waiting, func(n sim.NodeID) bool { return n == from })
	r.finish()
}

// dropGone stops waiting for backups the registries no longer list (crashed: their
// registration expired).
func (r *Replica) dropGone() {
	if cur := r.S.Current; cur != nil {
		cur.Waiting = slices.DeleteFunc(cur.Waiting, func(n sim.NodeID) bool {
			gone := !slices.Contains(r.S.Members, n)
			if gone {
				r.out.Cover(ruleDropGone)
			}
			return gone
		})
		r.finish()
	}
}

// finish answers the client once every backup waited for acknowledged (§3.6.1 step
// 5), and then takes the next request.
func (r *Replica) finish() {
	cur := r.S.Current
	if cur == nil {
		return
	}
	if !cur.Answered && r.O.Policy.answer(cur.Waiting) {
		cur.Answered = true
		r.out.Cover(ruleAnswer)
		r.respond(cur.Req, cur.Resp, cur.Index)
	}
	if len(cur.Waiting) > 0 {
		return
	}
	r.S.Current = nil
	r.next()
	r.drive()
}

// applyDone: a backup applies the primary's result in order, or asks for the state
// when it is behind.
func (r *Replica) applyDone(from sim.NodeID, m DoneMsg) {
	if r.S.Primary || (r.S.PrimaryNode >= 0 && from != r.S.PrimaryNode) {
		r.out.Cover(ruleFence)
		return // not from the primary this replica follows: fenced off
	}
	if !r.sameTerm(m.Term, m.TermOf) {
		if r.S.Applied > 0 || m.Index != 1 {
			// A done of another term than the history held here: install the
			// primary's state first (its requests at the indexes this replica may
			// hold others at; the primary followed is the authority, its term
			// older or not).
			r.out.Cover(ruleNewTerm)
			r.out.Send(from, SyncReq{})
			return
		}
		r.S.Term, r.S.TermOf = m.Term, m.TermOf // nothing held yet: the term's first request is the first
	}
	k := m.ID
	switch {
	case m.Index <= r.S.Applied:
		// already applied (or covered by a snapshot)
		r.out.Cover(ruleApplied)
	case m.Index == r.S.Applied+1:
		r.out.Cover(ruleApply)
		r.apply(m.Op)
		r.S.Dup[k] = m.Resp
		r.S.Applied = m.Index
		delete(r.S.Pending, k)
		r.save()
		r.out.Observe(ObsApply, Exec{Group: r.O.Group, ID: k, Client: m.Client, Seq: m.Seq, Op: m.Op, Resp: m.Resp, Index: m.Index})
	default:
		r.out.Cover(ruleGap)
		r.out.Send(from, SyncReq{})
		return
	}
	r.ack(from, BackupAck{ID: k, Client: m.Client, Seq: m.Seq, Index: r.S.Applied})
}

// ack acknowledges to the primary that this backup holds every request up to m.Index.
func (r *Replica) ack(to sim.NodeID, m BackupAck) {
	r.out.Observe(ObsAck, Ack{Group: r.O.Group, To: to, Index: m.Index, Applied: r.S.Applied})
	r.out.Send(to, m)
}

// respond answers a request's client (none for a primary's own steps): the request
// in progress (its index), or a duplicate (index 0).
func (r *Replica) respond(m Request, v int64, index int64) {
	if m.Client < 0 {
		return
	}
	r.out.Observe(ObsRespond, Answer{Group: r.O.Group, ID: m.ID, Index: index, Dup: index == 0})
	r.out.Send(m.Client, Response{ID: m.ID, Client: m.Client, Seq: m.Seq, Val: v})
	if r.O.Flow != nil && strings.HasPrefix(m.ID, PrefixTransition) {
		if inst, hop, ok := r.hopOf(m.Op.Key); ok {
			r.out.Cover(ruleTransAck)
			r.out.Observe(ObsAnswer, Task{Group: r.O.Group, Inst: inst, Hop: hop, Name: r.O.Flow.Route[hop].Task})
		}
	}
}

// apply runs an operation on the store and returns its response.
func (r *Replica) apply(op Op) int64 {
	if op.Write {
		r.S.Store[op.Key] = op.Val
		return op.Val
	}
	return r.S.Store[op.Key]
}
