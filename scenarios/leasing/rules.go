package lsscen

import (
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/sim"
)

// Properties of single rules (LS-1 … LS-5), checked on every run next to LS-P1…P6:
// each judges one rule's branch directly where the paper's properties would see a
// broken one only by chance (a second message through a single-call lease, a session
// long enough to need its renewal, a notice lost in range).

// ruleProperties are the rule checks of every leasing scenario.
func (e *env) ruleProperties() []checker.Property {
	return []checker.Property{
		{Name: "LS-1/out-of-range-detected", Class: checker.Safety, Check: e.outOfRangeDetected},
		{Name: "LS-2/requests", Class: checker.Safety, Check: e.requests},
		{Name: "LS-2/notice-in-range", Class: checker.Safety, Check: e.noticeInRange},
		{Name: "LS-3/pattern-rules", Class: checker.Safety, Check: e.patternRules},
		{Name: "LS-4/outcomes", Class: checker.Safety, Check: e.futureOutcomes},
	}
}

// outOfRangeDetected (LS-1, the reference states): a device that can no longer hear a
// peer it counts as in range counts it as out of range (disconnected-active: its
// messages accumulate) within the silence, stretched by drift, plus a latency for
// the peer's last message and the clock steps. Judged on every interval during which
// one device could not hear another at all (cut, partition, either device down) that
// lasts that long and started while the device's view of the peer was up; exempt when
// the device itself crashed meanwhile, or when the peer was in a crash-send window
// then (counted down from the window's start, it may still run and be heard).
func (e *env) outOfRangeDetected(r *checker.Run) error {
	x := e.li.get(r)
	if e.cfg.Beacon == 0 {
		r.Count(0, 0)
		return nil
	}
	d := e.g.lmax + e.g.stretch(e.cfg.EffectiveSilence()) + e.g.steps + 10*time.Millisecond
	checked, exempt := 0, 0
	defer func() { r.Count(checked, exempt) }()
	n := e.g.n
	for a := range n {
		for b := range n {
			if a == b {
				continue
			}
			views := x.views[[2]sim.NodeID{sim.NodeID(a), sim.NodeID(b)}]
			for _, sp := range e.g.deaf[a*n+b] {
				by := sp.from.Add(d)
				if sp.to < by || by > r.Time {
					continue // too short to be noticed, or noticed after the run
				}
				// b counts down from a crash-send window's start, but may run (and
				// be heard, once a cut is restored) until its window's end.
				if e.g.crashedIn(sim.NodeID(a), sp.from, by) || overlaps(e.g.crashSend[b], sp.from, by) {
					exempt++
					continue
				}
				if !e.viewUp(views, sim.NodeID(a), sp.from) {
					continue // nothing to notice
				}
				checked++
				if !slices.ContainsFunc(views, func(v obsOf[ls.ObsPeer]) bool { return !v.V.Up && v.Time > sp.from && v.Time <= by }) {
					return fmt.Errorf("%s could not hear %s from %v but still counted it in range at %v (silence %v, bound %v)",
						r.Final[a].Name, r.Final[b].Name, sp.from, by, e.cfg.EffectiveSilence(), d)
				}
			}
		}
	}
	return nil
}

// viewUp reports whether node's view of a peer (its discovery observations, views) was
// up at t: the last change at or before t, unless node restarted after it (a
// restarted device counts every peer out of range until it hears from it).
func (e *env) viewUp(views []obsOf[ls.ObsPeer], node sim.NodeID, t sim.Time) bool {
	i, _ := slices.BinarySearchFunc(views, t, func(v obsOf[ls.ObsPeer], t sim.Time) int {
		if v.Time <= t {
			return -1
		}
		return 1
	})
	if i == 0 || !views[i-1].V.Up {
		return false
	}
	for _, s := range e.g.down[node] {
		if s.to > views[i-1].Time && s.to <= t {
			return false
		}
	}
	return true
}

// timely (LS-P3, LS-1's in-order channel): a message is taken at most one
// retransmission period (plus a latency, the holder's drift and the clock steps) after
// the devices are in range with the holder counting the grantor in range — then the
// holder sends or resends everything unacknowledged at least once per period. A
// message the reference's lease or grantor incarnation ends on first (until), or that
// a crash of either device interrupts, is not judged.
func (e *env) timely(r *checker.Run, x *index, id ls.RefID, sends []obsOf[ls.ObsSend], recvs []obsOf[ls.ObsRecv], until sim.Time) error {
	if len(sends) == 0 || e.cfg.Beacon == 0 {
		return nil
	}
	rto := e.cfg.EffectiveRTO()
	b := e.g.stretch(rto) + e.g.lmax + e.g.steps + 10*time.Millisecond
	wins := e.goodWindows(x, id.Holder, id.Grantor, until)
	w := 0
	for i, s := range sends {
		for w < len(wins) && wins[w].to.Sub(max(wins[w].from, s.Time)) < b {
			w++
		}
		if w == len(wins) {
			return nil // no later window either
		}
		by := max(wins[w].from, s.Time).Add(b)
		if by > until || e.g.crashedIn(id.Grantor, s.Time, by) || e.g.crashedIn(id.Holder, s.Time, by) {
			continue
		}
		if i < len(recvs) && recvs[i].Time <= by {
			continue
		}
		taken := "never"
		if i < len(recvs) {
			taken = "only at " + recvs[i].Time.String()
		}
		return fmt.Errorf("reference %s: message #%d (%s %s) sent at %v was taken %s, though from %v the devices were in range and %s counted %s in range for %v (a retransmission period and a latency)",
			id, s.V.Seq, s.V.Op, s.V.Method, s.Time, taken, max(wins[w].from, s.Time), r.Final[id.Holder].Name, r.Final[id.Grantor].Name, b)
	}
	return nil
}

// goodWindows returns, in order, the intervals before until during which holder and
// grantor were in range of each other and holder's discovery counted grantor in range.
func (e *env) goodWindows(x *index, holder, grantor sim.NodeID, until sim.Time) []span {
	// The holder's view: up between an Up and the next Down or restart.
	var up []span
	views := x.views[[2]sim.NodeID{holder, grantor}]
	for i, v := range views {
		if !v.V.Up {
			continue
		}
		end := until
		if i+1 < len(views) {
			end = min(end, views[i+1].Time)
		}
		for _, d := range e.g.down[holder] {
			if d.from >= v.Time && d.from < end {
				end = d.from
			}
		}
		if end > v.Time {
			up = append(up, span{v.Time, end})
		}
	}
	// Minus the pair's impaired intervals.
	var out []span
	imp := e.g.pair(holder, grantor)
	for _, u := range up {
		t := u.from
		for _, s := range imp {
			if s.to <= t || s.from >= u.to {
				continue
			}
			if s.from > t {
				out = append(out, span{t, s.from})
			}
			t = max(t, s.to)
		}
		if t < u.to {
			out = append(out, span{t, u.to})
		}
	}
	return out
}

// requests (LS-2): a holder's revoke is a request sent to the grantor (an explicit
// revoke at the holder comes with its revoke message in the same step, an explicit
// expire with none: it is local), and a request the grantor takes live acts in that
// step: a revoke ends its side as revoked, a renewal is applied (the max rule).
func (e *env) requests(r *checker.Run) error {
	x := e.li.get(r)
	checked := 0
	defer func() { r.Count(checked, 0) }()
	for id, l := range x.eachLease {
		for _, ce := range l.ends[sideIdx(ls.Client)] {
			if ce.V.Cause != "explicit" {
				continue
			}
			checked++
			sent := slices.ContainsFunc(l.sends, func(s obsOf[ls.ObsSend]) bool {
				return s.V.Op == ls.OpRevoke && s.Node == ce.Node && s.Time == ce.Time && s.Index < ce.Index
			})
			switch {
			case ce.V.How == ls.Revoked && !sent:
				return fmt.Errorf("lease %s: the holder revoked it at %v without sending the revoke request", id, ce.Time)
			case ce.V.How == ls.Expired && sent:
				return fmt.Errorf("lease %s: the holder's explicit expire at %v sent a revoke request (an expire at the holder is local)", id, ce.Time)
			}
		}
		for _, rv := range l.recvs {
			if !rv.V.Live || rv.V.Op == ls.OpApp {
				continue
			}
			checked++
			switch rv.V.Op {
			case ls.OpRevoke:
				if !slices.ContainsFunc(l.ends[sideIdx(ls.Server)], func(en obsOf[ls.ObsEnd]) bool {
					return en.Time == rv.Time && en.Node == rv.Node && en.V.How == ls.Revoked && en.V.Cause == "request"
				}) {
					return fmt.Errorf("lease %s: the grantor took the holder's revoke request #%d at %v but its side did not end revoked", id, rv.V.Seq, rv.Time)
				}
			case ls.OpRenew:
				if !slices.ContainsFunc(l.renews, func(rn obsOf[ls.ObsRenew]) bool {
					return rn.Time == rv.Time && rn.Node == rv.Node && rn.V.By == "client" && rn.V.D == rv.V.D && rn.V.Ok
				}) {
					return fmt.Errorf("lease %s: the grantor took the holder's renewal request #%d (%v) at %v but did not renew", id, rv.V.Seq, rv.V.D, rv.Time)
				}
			}
		}
	}
	return nil
}

// noticeInRange (LS-2, "revoke needs communication"): when the grantor ends a lease
// other than by its timer (a revoke, an explicit expire, a pattern's end), it tells
// the holder at once — in the acknowledgement of the message that ended it, or in a
// notice — so a holder whose side is still live, up, and in range of the grantor for
// a latency after that, ends its side within that latency. (A renewal it makes outside
// a call is told at once too: LS-P2's notEarly holds the holder to it.)
func (e *env) noticeInRange(r *checker.Run) error {
	x := e.li.get(r)
	checked, exempt := 0, 0
	defer func() { r.Count(checked, exempt) }()
	for id, l := range x.eachLease {
		if !l.resolved {
			continue
		}
		pair := e.g.pair(id.Grantor, id.Holder)
		se, sEnded := l.firstEnd(ls.Server)
		ce, cEnded := l.firstEnd(ls.Client)
		if sEnded && se.V.Cause != "timer" && (!cEnded || ce.Time > se.Time) && l.resolve.Time <= se.Time {
			by := se.Time.Add(e.g.lmax + time.Millisecond)
			switch {
			case by > r.Time:
			case overlaps(pair, se.Time, by) || e.g.crashedIn(id.Holder, l.resolve.Time, by) || e.g.crashedIn(id.Grantor, se.Time, by):
				exempt++
			default:
				checked++
				if !cEnded || ce.Time > by {
					return fmt.Errorf("lease %s: the grantor ended it (%s, %s) at %v while the devices were in range, but the holder's side %s, not by %v",
						id, se.V.How, se.V.Cause, se.Time, endedAt(ce, cEnded), by)
				}
			}
		}
	}
	return nil
}

// builtinPatterns are the runtime's patterns and the music player's, whose rules the
// checks know (custom probe patterns are checked only by LS-3/patterns).
var builtinPatterns = map[string]bool{
	ls.Basic{}.Name(): true, ls.RenewOnCall{}.Name(): true, ls.SingleCall{}.Name(): true,
	ls.EndExchangeLease{RevokeOn: "endExchange"}.Name(): true,
}

// patternRules (LS-3): every message a built-in pattern takes live is processed, and
// each pattern does its part in the same step: renew-on-call renews by the initial
// period before forwarding; single-call revokes after its forward (unless the service
// ended the lease meanwhile); the music player's pattern revokes on endExchange and
// renews on anything else. A message taken live
// through a far reference is processed too.
func (e *env) patternRules(r *checker.Run) error {
	x := e.li.get(r)
	checked := 0
	defer func() { r.Count(checked, 0) }()
	for id, l := range x.eachRef {
		pattern := l.grant.V.Pattern
		if !id.Far() && !builtinPatterns[pattern] {
			continue
		}
		for _, rv := range l.recvs {
			if !rv.V.Live || rv.V.Op != ls.OpApp {
				continue
			}
			checked++
			i := slices.IndexFunc(l.forwards, func(f obsOf[ls.ObsForward]) bool { return f.V.Seq == rv.V.Seq && f.Time == rv.Time })
			if i < 0 {
				return fmt.Errorf("reference %s (%s): message #%d (%s) taken live at %v but never processed", id, pattern, rv.V.Seq, rv.V.Method, rv.Time)
			}
			f := l.forwards[i]
			renewed := slices.ContainsFunc(l.renews, func(rn obsOf[ls.ObsRenew]) bool {
				return rn.Time == f.Time && rn.Node == f.Node && rn.V.By == "pattern" && rn.V.Ok && rn.V.D == l.grant.V.Term && rn.Index < f.Index
			})
			// The pattern's revoke, or the service's own end of the lease while it
			// processed the message (then the pattern finds it ended).
			revoked := slices.ContainsFunc(l.ends[sideIdx(ls.Server)], func(en obsOf[ls.ObsEnd]) bool {
				return en.Time == f.Time && en.Node == f.Node && en.Index > f.Index &&
					((en.V.How == ls.Revoked && en.V.Cause == "pattern") || en.V.Cause == "explicit")
			})
			var want string
			switch {
			case pattern == ls.RenewOnCall{}.Name() && !renewed,
				pattern == ls.EndExchangeLease{RevokeOn: "endExchange"}.Name() && f.V.Method != "endExchange" && !renewed:
				want = "a renewal by its initial period before the forward"
			case pattern == ls.SingleCall{}.Name() && !revoked,
				pattern == ls.EndExchangeLease{RevokeOn: "endExchange"}.Name() && f.V.Method == "endExchange" && !revoked:
				want = "a revoke after the forward"
			}
			if want != "" {
				return fmt.Errorf("lease %s (%s): message #%d (%s) processed at %v without %s", id, pattern, f.V.Seq, f.V.Method, f.Time, want)
			}
		}
	}
	return nil
}

// futureOutcomes (LS-4): a future ends the way its reply says — resolved by a resolve,
// ruined with the callee's error by a failure — and, without a reply, as its lease
// ended: ruined as revoked when the callee revoked it, by a timeout when it expired.
// A music player's upload is due when the session's lease runs out at the holder
// (@Due(leaseTimeLeft(session))), never later.
func (e *env) futureOutcomes(r *checker.Run) error {
	x := e.li.get(r)
	checked := 0
	defer func() { r.Count(checked, 0) }()
	for i := range x.futs {
		f := &x.futs[i]
		if f.call == nil {
			continue
		}
		c := f.call.Value.(*ls.ObsFuture)
		if c.Tag == "mp.upload" {
			checked++
			sends := x.lease(c.Target).sends
			j := slices.IndexFunc(sends, func(s obsOf[ls.ObsSend]) bool { return s.Index > f.call.Index && s.Node == f.call.Node })
			if j >= 0 && sends[j].Time == f.call.Time && c.At.Add(c.Due) > sends[j].V.Deadline {
				return fmt.Errorf("upload future %d of %s: due %v at local %v, after the session's deadline %v at the holder", c.Future, r.Final[f.key.Node].Name, c.Due, c.At, sends[j].V.Deadline)
			}
		}
		if f.done == 0 {
			continue
		}
		checked++
		d := f.first.Value.(*ls.ObsFuture)
		l := x.lease(c.Lease)
		want := ""
		if len(l.forwards) > 0 && l.forwards[0].Index < f.first.Index {
			if l.forwards[0].V.Method == "resolve" {
				want = "resolved"
			} else {
				want = "ruined by the callee's error"
			}
		} else if se, ok := l.firstEnd(ls.Server); ok && se.Index <= f.first.Index {
			if se.V.How == ls.Revoked {
				want = "ruined as revoked"
			} else {
				want = "ruined by a timeout"
			}
		}
		got := "ruined by the callee's error"
		switch {
		case d.Ok:
			got = "resolved"
		case d.Err == "timeout":
			got = "ruined by a timeout"
		case d.Err == "revoked":
			got = "ruined as revoked"
		}
		if want != "" && got != want {
			return fmt.Errorf("future %d (%s) of %s %s at %v, want %s", c.Future, c.Tag, r.Final[f.key.Node].Name, got, f.first.Time, want)
		}
	}
	return nil
}

// musicRules are the music player's rules (LS-5), on every run that has players: the
// match ratio and its notification, the refusal of openSession, and the clean-up on
// expiry at both sides.
func (e *env) musicRules(pc *ls.PlayerConfig) []checker.Property {
	return []checker.Property{
		{Name: "music/match", Class: checker.Safety, Check: func(r *checker.Run) error { return e.musicMatch(r, pc) }},
		{Name: "music/refuse", Class: checker.Safety, Check: func(r *checker.Run) error { return e.musicRefuse(r, pc) }},
		{Name: "music/expiry-cleans-up", Class: checker.Safety, NeedsCompleteRun: true, Check: e.musicCleanup},
	}
}

// matchRatio is the share of own found in got (an independent copy of the player's).
func matchRatioOf(own, got []ls.Song) float64 {
	if len(own) == 0 {
		return 0
	}
	common := 0
	for _, s := range own {
		if slices.Contains(got, s) {
			common++
		}
	}
	return float64(common) / float64(len(own))
}

// musicMatch (LS-5): a completed exchange's ratio is the share of the responder's
// library found in the songs uploaded (the initiator's, in order), and the user is
// notified exactly when it reaches the threshold.
func (e *env) musicMatch(r *checker.Run, pc *ls.PlayerConfig) error {
	h := r.History()
	checked := 0
	defer func() { r.Count(checked, 0) }()
	for i := range h {
		o := &h[i]
		if o.Kind != ls.KindMPDone {
			continue
		}
		d := o.Value.(ls.MPDone)
		if int(d.From) >= len(pc.Libraries) || int(d.To) >= len(pc.Libraries) || d.Songs > len(pc.Libraries[d.From]) {
			continue
		}
		checked++
		if want := matchRatioOf(pc.Libraries[d.To], pc.Libraries[d.From][:d.Songs]); d.Ratio != want {
			return fmt.Errorf("exchange %s→%s (%d songs) at %v: match ratio %v, want %v", r.Final[d.From].Name, r.Final[d.To].Name, d.Songs, o.Time, d.Ratio, want)
		}
		notified := i+1 < len(h) && h[i+1].Kind == ls.KindMPMatch && h[i+1].Node == o.Node
		if notified != (d.Ratio >= pc.Threshold) {
			return fmt.Errorf("exchange %s→%s at %v: ratio %v, threshold %v, user notified %v", r.Final[d.From].Name, r.Final[d.To].Name, o.Time, d.Ratio, pc.Threshold, notified)
		}
	}
	return nil
}

// musicRefuse (LS-5): the responder opens a session only for a callback with at least
// MinLeft left, and refuses one with less ("the reply could not arrive in time").
func (e *env) musicRefuse(r *checker.Run, pc *ls.PlayerConfig) error {
	h := r.History()
	checked := 0
	defer func() { r.Count(checked, 0) }()
	for i := range h {
		o := &h[i]
		ev, ok := o.Value.(ls.MPEvent)
		if !ok || (o.Kind != ls.KindMPSession && o.Kind != ls.KindMPRefuse) || ev.Why == ls.WhyNoCallback {
			continue
		}
		// The callback was resolved in the same step, just before.
		left := time.Duration(-1)
		for j := i - 1; j >= 0 && h[j].Node == o.Node && h[j].Time == o.Time; j-- {
			if rs, ok := h[j].Value.(*ls.ObsResolve); ok && rs.Object == "mp.callback" && rs.Lease.Grantor == ev.From {
				left = rs.Left
				break
			}
		}
		checked++
		switch {
		case o.Kind == ls.KindMPSession && left < pc.MinLeft:
			return fmt.Errorf("%s opened a session for %s at %v on a callback with %v left (< %v, or dead)", r.Final[o.Node].Name, r.Final[ev.From].Name, o.Time, left, pc.MinLeft)
		case o.Kind == ls.KindMPRefuse && left >= pc.MinLeft:
			return fmt.Errorf("%s refused %s's openSession at %v though its callback had %v left", r.Final[o.Node].Name, r.Final[ev.From].Name, o.Time, left)
		}
	}
	return nil
}

// musicCleanup (LS-5, §4.5): when a session's lease expires at the responder before
// its endExchange, the responder drops the partially uploaded library (its listener,
// in the same instant's next turn); when the initiator's side of a session ends
// before it sent endExchange, the initiator stops the exchange. Exempt when the
// device crashed first.
func (e *env) musicCleanup(r *checker.Run) error {
	x := e.li.get(r)
	h := r.History()
	cleaned, stopped, ended := map[ls.RefID]bool{}, map[ls.RefID]bool{}, map[ls.RefID]bool{}
	var sessions []ls.MPEvent
	for i := range h {
		switch v := h[i].Value.(type) {
		case ls.MPEvent:
			switch h[i].Kind {
			case ls.KindMPCleanup:
				cleaned[v.Session] = true
			case ls.KindMPStopped:
				stopped[v.Session] = true
			case ls.KindMPSent:
				ended[v.Session] = true
			case ls.KindMPSession:
				sessions = append(sessions, v)
			}
		case *ls.ObsForward:
			if v.Method == "endExchange" {
				ended[v.Ref] = true
			}
		}
	}
	checked, exempt := 0, 0
	defer func() { r.Count(checked, exempt) }()
	for _, s := range sessions {
		l := x.lease(s.Session)
		if se, ok := l.firstEnd(ls.Server); ok && se.V.How == ls.Expired && !ended[s.Session] {
			switch by := se.Time.Add(time.Millisecond); {
			case by > r.Time || e.g.crashedIn(s.To, se.Time, by):
				exempt++
			default:
				checked++
				if !cleaned[s.Session] {
					return fmt.Errorf("session %s (%s→%s) expired at %v at the responder, which kept the partial library", s.Session, r.Final[s.From].Name, r.Final[s.To].Name, se.Time)
				}
			}
		}
		if ce, ok := l.firstEnd(ls.Client); ok && l.resolved && !ended[s.Session] {
			switch by := ce.Time.Add(time.Millisecond); {
			case by > r.Time || e.g.crashedIn(s.From, l.resolve.Time, by):
				exempt++
			default:
				checked++
				if !stopped[s.Session] {
					return fmt.Errorf("session %s (%s→%s) ended (%s) at %v at the initiator, which did not stop the exchange", s.Session, r.Final[s.From].Name, r.Final[s.To].Name, ce.V.How, ce.Time)
				}
			}
		}
	}
	return nil
}
