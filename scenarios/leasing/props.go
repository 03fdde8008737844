package lsscen

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/sim"
)

// env is what a run's properties know about its setup: the ground truth of the
// environment and the runtime configuration (for the bounds).
type env struct {
	g   *ground
	cfg *ls.Config
	li  *lazyIndex
}

func newEnv(g *ground, cfg *ls.Config) *env { return &env{g: g, cfg: cfg, li: &lazyIndex{}} }

// flush bounds how long a reconnected holder takes to get its buffer across: hear a
// beacon (or retransmit), then one latency.
func (e *env) flush() time.Duration {
	return max(e.cfg.Beacon+e.g.lmax, e.cfg.EffectiveRTO()) + e.g.lmax + 10*time.Millisecond
}

// margin is the slack of the transient-tolerance check for a lease of the given
// period: detection and recovery of the discovery layer, retransmission, a few
// latencies, clock disagreement over the period and steps.
func (e *env) margin(period time.Duration) time.Duration {
	return e.cfg.EffectiveSilence() + e.cfg.Beacon + e.cfg.EffectiveRTO() + 4*e.g.lmax +
		e.g.skewOf(period) + e.g.steps + 50*time.Millisecond
}

// bsc bounds how long after its grantor's side ends the holder's side ends (LS-P2,
// server → client), for a lease of the given period: one latency plus the clocks'
// disagreement over the period plus the clock steps (and the time that was left, for
// a revoke whose notice is lost).
func (e *env) bsc(period, left time.Duration) time.Duration {
	return e.g.stretch(left) + e.g.lmax + e.g.skewOf(period) + e.g.steps + 2*time.Millisecond
}

// bcs bounds how long after the holder's side ends the grantor's side ends (LS-P2,
// client → server), for a lease of the given period: one renewal in flight when the
// holder's side ended may still renew the grantor's side by one period (stretched by
// the grantor's drift), plus the two clocks' disagreement over that period, two
// latencies and the clock steps. It used to allow two stretched periods, so a grantor
// lingering a whole extra term passed (issue 16); this bound held on leasing/swarm
// seeds 1–3300 and every leasing test.
func (e *env) bcs(period time.Duration) time.Duration {
	return e.g.stretch(period) + e.g.skewOf(period) + 2*e.g.lmax + e.g.steps + 10*time.Millisecond
}

// leasingProperties are checked on every run of every leasing scenario.
func (e *env) leasingProperties() []checker.Property {
	return []checker.Property{
		// First: a broken user pattern is the root cause of whatever else fails.
		{Name: "LS-3/patterns", Class: checker.Safety, Check: e.patterns},
		{Name: "LS-P1/no-delivery-after-expiry", Class: checker.Safety, Check: e.noDeliveryAfterExpiry},
		{Name: "LS-P2/symmetric-expiry", Class: checker.Safety, Check: e.symmetricExpiry},
		{Name: "LS-P3/transient-tolerance", Class: checker.Safety, Check: e.transientTolerance},
		{Name: "LS-P4/reclamation", Class: checker.Safety, Check: e.reclamation, NeedsCompleteRun: true},
		{Name: "LS-P5/single-call", Class: checker.Safety, Check: e.singleCall},
		e.linearizable(),
		{Name: "LS-4/futures", Class: checker.Safety, Check: e.futures},
		{Name: "LS-2/misuse-refused", Class: checker.Safety, Check: e.misuse},
		{Name: "LS-3/released-dropped", Class: checker.Safety, Check: releasedDropped},
		{Name: "LS-1/buffered-until-acked", Class: checker.Safety, Check: e.bufferedUntilAcked},
		{Name: "LS-1/no-send-after-expiry", Class: checker.Safety, Check: e.noSendAfterExpiry},
		{Name: "LS-2/released-after-listeners", Class: checker.Safety, Check: e.releasedAfterListeners},
		{Name: "LS-2/pattern-view", Class: checker.Safety, Check: e.patternView},
		{Name: "music/no-callback-refused", Class: checker.Safety, Check: e.noCallbackRefused},
	}
}

// allProperties are leasingProperties, the rule checks (rules.go) and the music
// player's rules.
func (e *env) allProperties(pc *ls.PlayerConfig) []checker.Property {
	return append(append(e.leasingProperties(), e.ruleProperties()...), e.musicRules(pc)...)
}

// releasedAfterListeners (LS-2, the runtime's App contract): a side's Released runs
// after that side's expiry listeners ran (whenExpired listeners run asynchronously,
// and the objects the lease kept alive are dropped after them). Checked on the probe's
// leases, whose application records its Released calls.
func (e *env) releasedAfterListeners(r *checker.Run) error {
	type side struct {
		lease ls.RefID
		side  ls.Side
	}
	released := map[side]sim.Time{}
	checked := 0
	for o := range e.li.get(r).scanned {
		switch v := o.Value.(type) {
		case ls.ProbeReleased:
			checked++
			released[side{v.Lease, v.Side}] = o.Time
		case *ls.ObsListener:
			if o.Kind == ls.KindListen {
				continue
			}
			if at, ok := released[side{v.Lease, v.Side}]; ok {
				return fmt.Errorf("lease %s: %s listener %q ran at %v, after the side's Released (at %v)", v.Lease, v.Side, v.Tag, o.Time, at)
			}
		}
	}
	r.Note(fmt.Sprintf("%d releases checked", checked))
	return nil
}

// noSendAfterExpiry (LS-1): a holder sends nothing through a lease at or after its
// own deadline (the reference is expired then, even before its expiry timer runs).
func (e *env) noSendAfterExpiry(r *checker.Run) error {
	checked := 0
	for o := range e.li.get(r).scanned {
		if v, ok := o.Value.(*ls.ObsSend); ok && v.Deadline != 0 {
			checked++
			if v.At >= v.Deadline {
				return fmt.Errorf("%s sent %s #%d through %s at %v, at or after its deadline %v", r.Final[o.Node].Name, v.Op, v.Seq, v.Ref, v.At, v.Deadline)
			}
		}
	}
	r.Note(fmt.Sprintf("%d sends checked", checked))
	return nil
}

// bufferedUntilAcked (LS-1): a message sent through a reference stays in the holder's
// buffer until the grantor acknowledges it, so right after a ping the API's Buffered
// count is at least 1 (that ping cannot have been acknowledged yet) and at most the
// messages sent through the reference so far.
func (e *env) bufferedUntilAcked(r *checker.Run) error {
	x := e.li.get(r)
	views := 0
	for o := range x.scanned {
		if v, ok := o.Value.(ls.ProbeView); ok {
			views++
			// The messages sent through the reference so far: its sends (in history
			// order) before the view.
			sends := x.lease(v.Ref).sends
			sent, _ := slices.BinarySearchFunc(sends, o.Index, func(s obsOf[ls.ObsSend], i int64) int { return cmp.Compare(s.Index, i) })
			if v.Buffered < 1 || v.Buffered > sent {
				return fmt.Errorf("%s: right after a ping through %s, Buffered is %d (sent so far: %d)", r.Final[o.Node].Name, v.Ref, v.Buffered, sent)
			}
		}
	}
	r.Note(fmt.Sprintf("%d views checked", views))
	return nil
}

// patternView (LS-2 leaseTimeLeft, isExpired): a pattern runs for a message that came
// through a live lease, so its control says the lease is live, with time left in
// (0, 2·term] (the probe's server renews to twice the term at most, the max rule).
func (e *env) patternView(r *checker.Run) error {
	checked := 0
	for o := range e.li.get(r).scanned {
		if o.Kind != ls.KindProbeCtl {
			continue
		}
		c := o.Value.(ls.ProbeCtl)
		checked++
		if c.Expired || c.Left <= 0 || c.Left > 2*c.Term {
			return fmt.Errorf("the pattern of lease %s, running for a message that came through it, was told expired=%v, time left %v (term %v)", c.Lease, c.Expired, c.Left, c.Term)
		}
	}
	r.Note(fmt.Sprintf("%d pattern views checked", checked))
	return nil
}

// noCallbackRefused (LS-5): an openSession without callback is refused, and only the
// probe's deliberately malformed requests lack one (the player's own always carry
// it): per pair, the refusals for a missing callback are at most the malformed
// requests sent.
func (e *env) noCallbackRefused(r *checker.Run) error {
	sent := map[[2]sim.NodeID]int{}
	refused := 0
	for o := range e.li.get(r).scanned {
		switch v := o.Value.(type) {
		case ls.ProbeMalformed:
			sent[[2]sim.NodeID{o.Node, v.To}]++
		case ls.MPEvent:
			if o.Kind != ls.KindMPRefuse || v.Why != ls.WhyNoCallback {
				continue
			}
			k := [2]sim.NodeID{v.From, v.To}
			if sent[k] == 0 {
				return fmt.Errorf("%s refused an openSession from %s for lacking a callback that no probe sent malformed: the player's own request lacked it", r.Final[v.To].Name, r.Final[v.From].Name)
			}
			sent[k]--
			refused++
		}
	}
	r.Note(fmt.Sprintf("%d malformed requests checked: refused", refused))
	return nil
}

// LS-3 (the application side of a lease's end): whatever only a lease kept alive is
// dropped when the lease ends. At the end of a run, on every device that is up, a music
// player serves no session (In) whose lease is no longer exported there, and runs no
// exchange (Out) whose session lease it no longer imports: the runtime calls
// Released or Expired in the same step as it removes a lease, so an entry without its
// lease is one the application kept after being told. A pass says how many entries
// it checked.
func releasedDropped(r *checker.Run) error {
	checked := 0
	var errs []error
	for _, f := range r.Final {
		d, ok := f.State.(*ls.Device)
		if !ok || !f.Up {
			continue
		}
		apps := []ls.App{d.App}
		if m, ok := d.App.(*ls.Mux); ok {
			apps = m.Apps
		}
		for _, a := range apps {
			p, ok := a.(*ls.Player)
			if !ok {
				continue
			}
			for _, id := range slices.SortedFunc(maps.Keys(p.In), func(a, b ls.RefID) int { return strings.Compare(a.String(), b.String()) }) {
				checked++
				if d.RT.Exports[id] == nil {
					errs = append(errs, fmt.Errorf("%s still serves session %s, whose lease it no longer exports", f.Name, id))
				}
			}
			for _, peer := range slices.Sorted(maps.Keys(p.Out)) {
				o := p.Out[peer]
				if o.Session.IsZero() {
					continue
				}
				checked++
				if d.RT.Imports[o.Session] == nil {
					errs = append(errs, fmt.Errorf("%s still runs its exchange with %s over session %s, whose lease it no longer imports", f.Name, r.Final[peer].Name, o.Session))
				}
			}
		}
	}
	r.Note(fmt.Sprintf("%d exchange entries checked", checked))
	if len(errs) > 3 {
		errs = append(errs[:3], fmt.Errorf("… %d more", len(errs)-3))
	}
	return errors.Join(errs...)
}

// LS-P1: the service never processes a message that arrived at or after its lease's
// deadline, or after the lease ended at the grantor. The deadline is not the one the
// protocol reports: it is rebuilt from the grant and the accepted renewals (deadline =
// grant time + term, then max(deadline, renewal time + renewal) — the max rule), on
// the grantor's clock as the simulator read it for each observation (Local). A
// message taken live (the grantor accepted it) at or after that deadline breaks LS-P1
// even when the protocol's own bookkeeping agrees with itself (review item D); so does
// a message taken or processed after the grantor's side ended.
func (e *env) noDeliveryAfterExpiry(r *checker.Run) error {
	x := e.li.get(r)
	checked := 0 // messages taken live and messages processed, each judged
	defer func() { r.Count(checked, 0) }()
	for id, l := range x.eachLease {
		g := l.grant
		end := int64(math.MaxInt64)
		se, ended := l.firstEnd(ls.Server)
		if ended {
			end = se.Index
		}
		how := func() string { return fmt.Sprintf("%s (%s) at %v", se.V.How, se.V.Cause, se.Time) } // for an error only
		dl := g.Local.Add(g.V.Term)
		renews, recvs, fwds := l.renews, l.recvs, l.forwards
		// Walk the grantor's renewals, takes and forwards in history order.
		for ri, vi, fi := 0, 0, 0; vi < len(recvs) || fi < len(fwds); {
			next := int64(math.MaxInt64)
			if vi < len(recvs) {
				next = recvs[vi].Index
			}
			if fi < len(fwds) {
				next = min(next, fwds[fi].Index)
			}
			for ; ri < len(renews) && renews[ri].Index < next; ri++ {
				if rn := renews[ri]; rn.V.Ok {
					dl = max(dl, rn.Local.Add(rn.V.D))
				}
			}
			if vi < len(recvs) && recvs[vi].Index == next {
				rv := recvs[vi]
				vi++
				if !rv.V.Live {
					continue
				}
				checked++
				if rv.Local >= dl {
					return fmt.Errorf("lease %s: message #%d (%s %s) accepted at local %v, at or after the deadline %v (granted at %v for %v, renewals applied; the grantor reported %v)",
						id, rv.V.Seq, rv.V.Op, rv.V.Method, rv.Local, dl, g.Local, g.V.Term, rv.V.Deadline)
				}
				if rv.Index > end {
					return fmt.Errorf("lease %s: message #%d accepted at %v after the lease %s", id, rv.V.Seq, rv.Time, how())
				}
				continue
			}
			f := fwds[fi]
			fi++
			checked++
			if f.Local >= dl || f.V.At >= f.V.Deadline {
				return fmt.Errorf("lease %s: the service processed %s#%d at local %v, at or after the deadline %v", id, f.V.Method, f.V.Seq, f.Local, min(dl, f.V.Deadline))
			}
			if f.Index > end {
				return fmt.Errorf("lease %s: the service processed %s#%d at %v after the lease %s", id, f.V.Method, f.V.Seq, f.Time, how())
			}
		}
	}
	return nil
}

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

// LS-P3: per reference, the grantor takes messages in order, exactly once, each the
// one the holder sent; no message is lost while the reference stays live and the
// devices are in range; and no lease expires by its timer unless its devices were out
// of range (or down) at some point within a lease period before (no false expiry).
func (e *env) transientTolerance(r *checker.Run) error {
	x := e.li.get(r)
	flush := e.flush()
	var fwd []bool
	// Judged: every reference's messages (order, exactly once, none lost) and every
	// lease expiry by timer (no false expiry); exempt: an expiry the lease's holder
	// never saw, abandoned on purpose, after a crash, or after the other side ended.
	checked, exempt := 0, 0
	defer func() { r.Count(checked, exempt) }()
	for id, l := range x.eachRef {
		checked++
		sends, recvs := l.sends, l.recvs
		for i, rv := range recvs {
			if rv.V.Seq != int64(i+1) {
				return fmt.Errorf("reference %s: took message #%d in position %d (order broken)", id, rv.V.Seq, i+1)
			}
			if i >= len(sends) || sends[i].Index > rv.Index {
				return fmt.Errorf("reference %s: took message #%d that was never sent", id, rv.V.Seq)
			}
			if s := sends[i].V; s.Op != rv.V.Op || s.Method != rv.V.Method {
				return fmt.Errorf("reference %s: message #%d sent as %s %s, taken as %s %s", id, rv.V.Seq, s.Op, s.Method, rv.V.Op, rv.V.Method)
			}
		}
		// Which messages were processed: by sequence number 1…len(recvs) (any other
		// number fails below the first time it is seen; the map is for the numbers
		// below 1, which a correct run never has).
		fwd = fwd[:0]
		for range len(recvs) + 1 {
			fwd = append(fwd, false)
		}
		var odd map[int64]bool
		for _, f := range l.forwards {
			seq := f.V.Seq
			inRange := seq >= 1 && seq <= int64(len(recvs))
			if (inRange && fwd[seq]) || (!inRange && odd[seq]) {
				return fmt.Errorf("reference %s: message #%d processed twice", id, f.V.Seq)
			}
			if inRange {
				fwd[seq] = true
			} else {
				if odd == nil {
					odd = map[int64]bool{}
				}
				odd[seq] = true
			}
			if f.V.Seq > int64(len(recvs)) || !recvs[f.V.Seq-1].V.Live {
				return fmt.Errorf("reference %s: message #%d processed without being taken live", id, f.V.Seq)
			}
		}
		until := r.Time
		if se, ok := l.firstEnd(ls.Server); ok {
			until = min(until, se.Time)
		}
		if ce, ok := l.firstEnd(ls.Client); ok {
			until = min(until, ce.Time)
		}
		until = min(until, e.g.incarnationEnd(id.Grantor, id.GBoot)) // addressed to a dead incarnation
		if err := e.timely(r, x, id, sends, recvs, until); err != nil {
			return err
		}
		if len(sends) > len(recvs) {
			// The first message never taken must have had no chance: no time, between its
			// send and the end of either side (or of the run), when the devices were in
			// range long enough to get it across.
			s := sends[len(recvs)]
			switch {
			case e.g.crashedIn(id.Grantor, s.Time, until) || e.g.crashedIn(id.Holder, s.Time, until):
			case !window(e.g.pair(id.Grantor, id.Holder), s.Time, until, flush):
			default:
				return fmt.Errorf("reference %s: message #%d (%s %s) sent at %v was never taken, though the devices were in range for %v or more before %v and both sides were live",
					id, s.V.Seq, s.V.Op, s.V.Method, s.Time, flush, until)
			}
		}
	}
	for id, l := range x.eachLease {
		period := l.period
		m := e.margin(period)
		w := e.g.stretch(period) + m
		for _, side := range []ls.Side{ls.Server, ls.Client} {
			end, ok := l.firstEnd(side)
			if !ok || end.V.How != ls.Expired || end.V.Cause != "timer" {
				continue
			}
			exempt++ // until it is judged below
			if l.idled && l.idle <= end.Time {
				continue // abandoned on purpose before it expired
			}
			if !l.resolved {
				continue // the holder never received it: nobody used or renewed it
			}
			hboot := uint32(1 + e.g.restartsBy(id.Holder, l.resolve.Time)) // the holder's incarnation that took it
			if min(e.g.incarnationEnd(id.Holder, hboot), e.g.incarnationEnd(id.Grantor, id.GBoot)) < end.Time {
				continue // a side's incarnation crashed first: its state for the lease is gone
			}
			other := ls.Client
			if side == ls.Client {
				other = ls.Server
			}
			if oe, ok := l.firstEnd(other); ok && oe.Time < end.Time {
				continue // ended at the other side first (that end is judged on its own)
			}
			exempt--
			checked++
			if !overlaps(e.g.pair(id.Grantor, id.Holder), end.Time.Add(-w), end.Time) {
				return fmt.Errorf("lease %s (%s, %s): %s side expired at %v though its devices stayed in range since %v (its lease period %v plus margin %v): a false expiry",
					id, l.grant.V.Object, l.grant.V.Pattern, side, end.Time, end.Time.Add(-w), period, m)
			}
		}
	}
	return nil
}

// LS-P4: at the end of the run no device keeps state for a lease that has ended.
func (e *env) reclamation(r *checker.Run) error {
	x := e.li.get(r)
	devices, exempt := 0, 0
	defer func() {
		r.Note(fmt.Sprintf("%d devices checked, %d leases exempt (asynchronous work for them still queued)", devices, exempt))
	}()
	for i, f := range r.Final {
		if !f.Up || f.State == nil {
			continue
		}
		d, ok := f.State.(*ls.Device)
		if !ok {
			continue
		}
		leaks, pending := d.Leaks()
		devices++
		exempt += pending
		busy := map[ls.RefID]bool{}
		for _, a := range d.RT.PendingLeases() {
			busy[a] = true
		}
		for id := range x.eachLease {
			if busy[id] {
				continue
			}
			if id.Grantor == sim.NodeID(i) && id.GBoot == d.RT.Boot && d.RT.Exports[id] != nil {
				if se, ok := x.firstEnd(id, ls.Server); ok {
					leaks = append(leaks, fmt.Sprintf("server side of %s kept after it %s at %v", id, se.V.How, se.Time))
				}
			}
			if id.Holder == sim.NodeID(i) && d.RT.Imports[id] != nil && !d.RT.Imports[id].Revoking {
				if ce, ok := x.firstEnd(id, ls.Client); ok {
					leaks = append(leaks, fmt.Sprintf("client side of %s kept after it %s at %v", id, ce.V.How, ce.Time))
				}
			}
		}
		if len(leaks) > 0 {
			more := ""
			if len(leaks) > 3 {
				more = fmt.Sprintf(" (and %d more)", len(leaks)-3)
				leaks = leaks[:3]
			}
			return fmt.Errorf("%s at the end: %s%s", f.Name, strings.Join(leaks, "; "), more)
		}
	}
	return nil
}

// LS-P5: at most one message is processed through a single-call lease. A pass says how
// many single-call leases it checked and how many of them received a second message at
// the grantor (the ones the property could have caught: a sweep in which none did
// tested nothing).
func (e *env) singleCall(r *checker.Run) error {
	x := e.li.get(r)
	checked, second := 0, 0
	defer func() {
		r.Note(fmt.Sprintf("%d single-call leases checked, %d received a second message", checked, second))
	}()
	for id, l := range x.eachLease {
		if l.grant.V.Pattern != "single-call" {
			continue
		}
		checked++
		if len(l.recvs)+len(l.drops) > 1 { // received (processed or not) or dropped at the grantor
			second++
		}
		if fs := l.forwards; len(fs) > 1 {
			return fmt.Errorf("single-call lease %s (%s) processed %d messages (%s#%d at %v, then %s#%d at %v)",
				id, l.grant.V.Object, len(fs), fs[0].V.Method, fs[0].V.Seq, fs[0].Time, fs[1].V.Method, fs[1].V.Seq, fs[1].Time)
		}
	}
	return nil
}

// LS-4: every future completes exactly once: resolved before its due time, or ruined
// with a timeout at or after it.
func (e *env) futures(r *checker.Run) error {
	x := e.li.get(r)
	// Every future is judged; the error reported is the one of the first failing
	// future in (node, boot, number) order.
	var first *futObs
	var firstErr error
	checked := 0
	for i := range x.futs {
		f := &x.futs[i]
		if f.call == nil {
			continue
		}
		checked++
		if first != nil && futKeyCompare(f.key, first.key) >= 0 {
			continue
		}
		if err := e.future(r, f); err != nil {
			first, firstErr = f, err
		}
	}
	r.Count(checked, 0)
	return firstErr
}

// future judges one called future (LS-4).
func (e *env) future(r *checker.Run, f *futObs) error {
	k, c := f.key, obsOf[ls.ObsFuture]{f.call, f.call.Value.(*ls.ObsFuture)}
	due := c.V.At.Add(c.V.Due)
	switch {
	case f.done > 1:
		return fmt.Errorf("future %d of %s completed %d times", k.ID, r.Final[k.Node].Name, f.done)
	case f.done == 0:
		by := c.Time.Add(e.g.stretch(c.V.Due) + e.g.steps + 2*time.Millisecond)
		if by <= r.Time && !e.g.crashedIn(k.Node, c.Time, by) {
			return fmt.Errorf("future %d (%s) of %s called at %v with due %v never completed", k.ID, c.V.Tag, r.Final[k.Node].Name, c.Time, c.V.Due)
		}
		return nil
	}
	switch d := f.first.Value.(*ls.ObsFuture); {
	case d.Ok && d.At >= due:
		return fmt.Errorf("future %d (%s) resolved at local %v, at or after its due time %v", k.ID, c.V.Tag, d.At, due)
	case !d.Ok && d.Err == "timeout" && d.At < due:
		return fmt.Errorf("future %d (%s) ruined by a timeout at local %v, before its due time %v", k.ID, c.V.Tag, d.At, due)
	}
	return nil
}

// LS-3: no leasing pattern panicked (a broken custom pattern is reported here: the
// runtime contained it and expired the lease; the message was dropped unless the
// pattern had forwarded it first).
func (e *env) patterns(r *checker.Run) error {
	x := e.li.get(r)
	contained := 0
	for _, p := range x.perrors {
		if p.V.Pattern != ls.ProbeFaultyName {
			return fmt.Errorf("custom pattern %q panicked on lease %s at %v: %s (%d pattern errors; the lease expired at both sides)",
				p.V.Pattern, p.V.Lease, p.Time, p.V.Panic, len(x.perrors))
		}
		// The probe's deliberately faulty pattern: the runtime contains the panic by
		// expiring the lease's grantor side in the same step (the holder learns it
		// like any expiry).
		if !slices.ContainsFunc(x.lease(p.V.Lease).ends[sideIdx(ls.Server)], func(en obsOf[ls.ObsEnd]) bool {
			return en.V.How == ls.Expired && en.V.Cause == "pattern-panic" && en.Time == p.Time && en.Node == p.Node
		}) {
			return fmt.Errorf("the probe's faulty pattern panicked on lease %s at %v, but the lease did not expire there and then (containment, LS-3)", p.V.Lease, p.Time)
		}
		contained++
	}
	r.Note(fmt.Sprintf("%d deliberate pattern panics checked: contained", contained))
	return nil
}

// LS-2: renewing a revoked or expired lease is refused, and so is a far reference to a
// device that is no discovered peer (the probe tries both on purpose).
func (e *env) misuse(r *checker.Run) error {
	checked := 0
	for o := range e.li.get(r).scanned {
		if o.Kind != ls.KindProbeMisuse {
			continue
		}
		m := o.Value.(ls.ProbeMisuse)
		checked++
		if !m.Rejected {
			return fmt.Errorf("%s of %s was accepted", m.Op, m.Ref)
		}
	}
	r.Note(fmt.Sprintf("%d misuses checked", checked))
	return nil
}
