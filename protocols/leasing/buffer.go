package leasing

import (
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// LS-1 at the holder: a reference is an in-order, exactly-once channel. A message is
// kept in the buffer until the grantor acknowledges it, sent at once while the grantor
// is in range, retransmitted every RTO while it stays in range, and flushed in order
// when it is heard again. Acknowledgements also carry the grantor's time left (the
// holder's timer follows it, LS-2) and end notices.

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
	if connected {
		rt.cover(ruleSendConnected)
	} else {
		rt.cover(ruleSendDisconnected)
	}
	keep, send := rt.enqueueAs(connected)
	if !keep {
		return
	}
	im.Buf = append(im.Buf, c)
	if send {
		rt.transmitNew(im, c)
		if !im.RtoOn {
			rt.setRto(im, rt.now.Add(rt.Cfg.rto()))
		}
	}
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
		if !rt.retransmits(rt.Connected(id.Grantor)) {
			im.RtoOn = false // resumes when the grantor is heard again
			rt.qdirty |= dirtyRto
			continue
		}
		rt.cover(ruleRetransmit)
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
	if len(ids) > 0 {
		rt.cover(ruleFlush)
	}
	for _, id := range ids {
		im := rt.imp(id)
		for _, c := range im.Buf {
			rt.transmit(im, c)
		}
		rt.setRto(im, rt.now.Add(rt.Cfg.rto()))
	}
}

func (rt *Runtime) onAck(a Ack) {
	im := rt.imp(a.Ref)
	if im == nil || a.Ref.GBoot != a.SBoot {
		return
	}
	progress := a.UpTo > im.Acked
	if progress {
		rt.cover(ruleAcked)
		n := min(a.UpTo-im.Acked, int64(len(im.Buf)))
		im.Buf = slices.Delete(im.Buf, 0, int(n))
		im.Acked = a.UpTo
	}
	switch {
	case len(im.Buf) == 0:
		im.RtoOn = false
		rt.qdirty |= dirtyRto
	case rt.restartsRto(progress):
		rt.setRto(im, rt.now.Add(rt.Cfg.rto()))
	}
	if im.Revoking {
		if len(im.Buf) == 0 || a.End != Live {
			rt.dropImport(a.Ref) // the revoke was delivered: reclaim silently
		}
		return
	}
	switch a.End {
	case Revoked, Expired:
		// LS-2: the grantor revoked or expired the lease explicitly and told us.
		how := rt.noticeEnd(a.End)
		if how == Revoked {
			rt.cover(ruleNoticeRevoked)
		} else {
			rt.cover(ruleNoticeExpired)
		}
		rt.endImport(a.Ref, how, "notice")
	default:
		if a.Ref.Far() {
			return
		}
		if !rt.piggyback(a.Left, a.Until, im.Until) {
			return // nothing newer than what the holder's timer follows
		}
		// LS-2: the holder's timer follows the grantor's remaining time, from the
		// newest information only (a late duplicate of an older ack is ignored).
		rt.cover(rulePiggyback)
		im.Deadline, im.Until = rt.now.Add(rt.holderLeft(a.Left)), a.Until
		rt.schedImport(im)
	}
}
