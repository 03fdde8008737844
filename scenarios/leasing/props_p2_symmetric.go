package lsscen

import (
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/sim"
)

// LS-P2: each side ends at most once; when one side ends the other follows within the
// bound (unless its device crashed or the run ended first); listeners run exactly once
// per registration on expiry and never on revoke.
func (e *env) symmetricExpiry(r *checker.Run) error {
	x := e.li.get(r)
	// Judged: every side that ended (ends, listeners, the other side's following);
	// exempt: a side whose follower's bound reaches past the run or whose other
	// device crashed in the meantime.
	checked, exempt := 0, 0
	defer func() { r.Count(checked, exempt) }()
	for id, l := range x.eachLease {
		for _, side := range []ls.Side{ls.Server, ls.Client} {
			if err := e.listenersOnce(r, x, id, side); err != nil {
				return err
			}
		}
		rs, resolved := l.resolve, l.resolved
		if !resolved {
			continue
		}
		se, sEnded := l.firstEnd(ls.Server)
		ce, cEnded := l.firstEnd(ls.Client)
		if sEnded {
			by := se.Time.Add(e.bsc(l.period, se.V.Left))
			if by > r.Time || e.g.crashedIn(id.Holder, rs.Time, by) {
				exempt++
			} else {
				checked++
			}
			if !(cEnded && ce.Time <= by) && by <= r.Time && !e.g.crashedIn(id.Holder, rs.Time, by) {
				return fmt.Errorf("lease %s: server side %s (%s) at %v but the client side %s, not by %v (bound %v)",
					id, se.V.How, se.V.Cause, se.Time, endedAt(ce, cEnded), by, by.Sub(se.Time))
			}
		}
		if sEnded && cEnded {
			if err := e.sameWay(x, id, se, ce); err != nil {
				return err
			}
		}
		if cEnded && ce.V.Cause == "timer" {
			if err := e.notEarly(x, id, ce); err != nil {
				return err
			}
		}
		if cEnded {
			by := ce.Time.Add(e.bcs(l.period))
			// LS-2: a renewal the grantor makes on its own (the max rule, outside a
			// call) sets its deadline whatever the holder does: after the holder's
			// explicit end (which the grantor is not told of), or while the devices
			// are apart, the grantor lives on to that deadline. So does a renewal by
			// a message the holder sent before its side ended (a renew-on-call
			// message, a renewal request) that the grantor takes after it: a holder
			// that revoked while out of range has its buffer delivered, in order,
			// before its revoke request, and a cut may then lose the request (swarm
			// seed 31607, -p dup=0.3). A renewal the holder heard before its timer
			// fired moved its deadline too (notEarly checks that), so this only
			// admits what the protocol allows.
			for _, rn := range l.renews {
				if rn.V.Ok && rn.Time <= by {
					by = max(by, rn.Time.Add(e.g.stretch(rn.V.After.Sub(rn.Local))+e.g.steps+time.Millisecond))
				}
			}
			if by > r.Time || e.g.crashedIn(id.Grantor, l.grant.Time, by) {
				exempt++
			} else {
				checked++
			}
			if !(sEnded && se.Time <= by) && by <= r.Time && !e.g.crashedIn(id.Grantor, l.grant.Time, by) {
				return fmt.Errorf("lease %s: client side %s (%s) at %v but the server side %s, not by %v (bound %v)",
					id, ce.V.How, ce.V.Cause, ce.Time, endedAt(se, sEnded), by, by.Sub(ce.Time))
			}
		}
	}
	return nil
}

// sameWay: both sides of a lease end the same way (LS-2: expire is symmetric and runs
// the listeners at both sides, revoke runs none at either side). The exceptions are
// the ones the protocol cannot avoid:
//   - the holder's own decision (its revoke or local expire, cause "explicit") may
//     race with anything the grantor does;
//   - a revoke at the grantor reaches the holder only as a notice; a holder whose timer
//     expires first ends expired. That is legitimate only while no notice could have
//     reached it: the notice goes out when the grantor's side ends, and again whenever
//     the grantor hears the holder come back in range before the lease's old deadline,
//     and in answer to every message of the holder's for the lease until then (the
//     tombstone). A notice sent while the pair stays in range (no cut, partition,
//     loss burst or crash) for a latency arrives within lmax; a holder that ends by its
//     timer after such an arrival missed a notice it was sent.
func (e *env) sameWay(x *index, id ls.RefID, se, ce obsOf[ls.ObsEnd]) error {
	if ce.V.Cause == "explicit" || se.V.How == ce.V.How {
		return nil
	}
	if se.V.How == ls.Expired {
		return fmt.Errorf("lease %s: server side expired (%s) at %v but the client side was %s (%s) at %v: an expiry ends both sides as expired, listeners at both",
			id, se.V.Cause, se.Time, ce.V.How, ce.V.Cause, ce.Time)
	}
	// Revoked at the grantor, expired at the holder.
	if ce.V.Cause != "timer" {
		return fmt.Errorf("lease %s: server side revoked (%s) at %v but the client side expired (%s) at %v", id, se.V.Cause, se.Time, ce.V.Cause, ce.Time)
	}
	pair := e.g.pair(id.Grantor, id.Holder)
	clean := func(o sim.Time) bool {
		return !overlaps(pair, o, o.Add(e.g.lmax)) && !e.g.crashedIn(id.Grantor, se.Time, o.Add(e.g.lmax)) &&
			!e.g.crashedIn(id.Holder, o, o.Add(e.g.lmax))
	}
	opportunities := []sim.Time{se.Time}
	for _, up := range x.ups[[2]sim.NodeID{id.Grantor, id.Holder}] {
		if up.Time > se.Time && up.Local < se.V.Deadline {
			opportunities = append(opportunities, up.Time) // the tombstone repeats the notice
		}
	}
	answers := len(opportunities)
	for _, d := range x.lease(id).drops {
		if d.V.Why == "ended" && d.Time > se.Time && d.V.At < se.V.Deadline {
			opportunities = append(opportunities, d.Time) // the tombstone answers a message with the notice
		}
	}
	for i, o := range opportunities {
		if o.Add(e.g.lmax) < ce.Time && clean(o) {
			what := "the revoke's notice"
			switch {
			case i >= answers:
				what = "the notice the tombstone answered a message of the holder with"
			case o != se.Time:
				what = "the notice repeated when the grantor heard the holder again"
			}
			return fmt.Errorf("lease %s: server side revoked (%s) at %v but the client side expired by its timer at %v, though %s, sent at %v while the devices were in range, arrives within %v",
				id, se.V.Cause, se.Time, ce.Time, what, o, e.g.lmax)
		}
	}
	return nil
}

// notEarly: the holder's timer never fires before the grantor's deadline it was told
// about (LS-2: the client timer follows the server's; review item F). The grantor
// sets a deadline D at local time L, global time t — at the grant (D = L + term) and
// at every accepted renewal (the max rule, rebuilt as LS-P1 does) — and sends the time
// left D - L to the holder: with the reference (the grant) or in the acknowledgement
// sent in the same call (a renewal). Once the holder has that information its timer
// cannot fire before t + (D - L), give or take the clocks' drift over that interval
// and the clock steps: a later update only carries a later grantor deadline, sent
// later. The grant's information always reaches a holder (it resolved the reference
// from it); a renewal's reaches it if the devices stayed in range (no cut, partition,
// loss burst or crash) for a latency after t and the holder's side was still there
// (its timer had not fired by t + lmax).
func (e *env) notEarly(x *index, id ls.RefID, ce obsOf[ls.ObsEnd]) error {
	g := x.lease(id).grant
	pair := e.g.pair(id.Grantor, id.Holder)
	check := func(t sim.Time, left time.Duration, what string) error {
		earliest := t.Add(left - e.g.skewOf(left) - 2*e.g.steps - time.Millisecond)
		if ce.Time < earliest {
			return fmt.Errorf("lease %s (%s, %s): client side expired by its timer at %v, before %v: %s at %v left %v, and the holder knew it",
				id, g.V.Object, g.V.Pattern, ce.Time, earliest, what, t, left)
		}
		return nil
	}
	if err := check(g.Time, g.V.Term, "the grant"); err != nil {
		return err
	}
	dl := g.Local.Add(g.V.Term)
	for _, rn := range x.lease(id).renews {
		if !rn.V.Ok {
			continue
		}
		dl = max(dl, rn.Local.Add(rn.V.D))
		reach := rn.Time.Add(e.g.lmax)
		if reach >= ce.Time || overlaps(pair, rn.Time, reach) || e.g.crashedIn(id.Holder, rn.Time, reach) || e.g.crashedIn(id.Grantor, rn.Time, reach) {
			continue
		}
		if err := check(rn.Time, dl.Sub(rn.Local), fmt.Sprintf("a renewal (%s)", rn.V.By)); err != nil {
			return err
		}
	}
	return nil
}

func endedAt(o obsOf[ls.ObsEnd], ok bool) string {
	if !ok {
		return "never ended"
	}
	return fmt.Sprintf("ended only at %v", o.Time)
}

func (e *env) listenersOnce(r *checker.Run, x *index, id ls.RefID, side ls.Side) error {
	l, k := x.lease(id), sideIdx(side)
	ends, fired := l.ends[k], l.fired[k]
	if len(ends) > 1 {
		return fmt.Errorf("lease %s: %s side ended %d times (%s at %v, then %s at %v)", id, side, len(ends), ends[0].V.How, ends[0].Time, ends[1].V.How, ends[1].Time)
	}
	if len(ends) == 0 {
		if len(fired) > 0 {
			return fmt.Errorf("lease %s: %s listener %q ran at %v but the side never ended", id, side, fired[0].V.Tag, fired[0].Time)
		}
		return nil
	}
	end := ends[0]
	if end.V.How == ls.Revoked {
		if len(fired) > 0 {
			return fmt.Errorf("lease %s: %s listener %q ran at %v after a revoke (listeners run only on expiry)", id, side, fired[0].V.Tag, fired[0].Time)
		}
		return nil
	}
	node := id.Grantor
	if side == ls.Client {
		node = id.Holder
	}
	want := slices.Clone(l.listens[k])
	got := make([]string, 0, len(fired))
	for _, f := range fired {
		got = append(got, f.V.Tag)
	}
	slices.Sort(want)
	slices.Sort(got)
	if end.V.Listeners != len(want) {
		return fmt.Errorf("lease %s: %s side expired (%s) at %v announcing %d listeners, %d registered", id, side, end.V.Cause, end.Time, end.V.Listeners, len(want))
	}
	if slices.Equal(want, got) {
		return nil
	}
	// The listeners run in the next turn: a crash or the end of the run in between may
	// prevent them (never a wrong count otherwise).
	if len(got) < len(want) && (e.g.crashedIn(node, end.Time, end.Time.Add(time.Millisecond)) || r.Time <= end.Time) {
		return nil
	}
	return fmt.Errorf("lease %s: %s side expired (%s) at %v: listeners ran %v, registered %v (each must run exactly once)", id, side, end.V.Cause, end.Time, got, want)
}
