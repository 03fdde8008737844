package leasing

import (
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Policy names the runtime's decision points, one hook per rule case (LS-1 … LS-4)
// whose outcome a one-line bug would change. Every hook is optional: nil is the
// protocol's own rule, stated in the field's comment and implemented by the unexported
// Runtime method (below) the runtime calls at that point. The zero Policy is the
// protocol.
//
// The hooks exist so that tests and the scenarios' deliberately broken variants
// (scenarios/leasing/bugs.go, `-p bug=NAME`) can plant a broken rule from outside the
// protocol code and show that the checkers catch it. A hook receives what the rule
// decides from (and, where it helps, the protocol's own answer) and returns the
// decision; it must be a pure function of its arguments (the model checker explores
// the same runtime, and determinism must hold).
type Policy struct {
	// LS-1: the reference states, the in-order channel, discovery.
	//
	// Enqueue (LS-1) says what happens to a message put into a reference whose
	// grantor is (connected) or is not in range: whether it is kept in the buffer
	// until acknowledged, and whether it is sent at once (and a retransmission armed).
	// The protocol: kept, and sent at once when connected.
	Enqueue func(connected bool) (keep, send bool)
	// Retransmits (LS-1) says whether a due retransmission resends a reference's
	// unacknowledged messages, given whether its grantor counts as in range; if not,
	// retransmission pauses until the grantor is heard again (flush). The protocol:
	// while in range.
	Retransmits func(connected bool) bool
	// Flushes (LS-1) says whether a peer heard again after counting as out of range
	// gets everything unacknowledged towards it at once. The protocol: true.
	Flushes func(peer sim.NodeID) bool
	// RestartsRto (LS-1) says whether an acknowledgement restarts the retransmission
	// timer of a reference that still has unacknowledged messages; progress says
	// whether it acknowledged something new. The protocol: only on progress.
	RestartsRto func(progress bool) bool
	// Takes (LS-1, LS-P3) says whether the grantor takes a message numbered seq when
	// it expects expected next; a message not taken is a retransmission (seq below:
	// acknowledged again) or comes after a lost one (seq above: it waits for the
	// holder's in-order retransmission). The protocol: seq == expected.
	Takes func(seq, expected int64) bool
	// HolderExpired (LS-1) says whether the holder's side, whose deadline is
	// deadline, counts as expired at local time now: nothing more is sent through it
	// (it expires on the spot, before its timer has run in this instant). The
	// protocol: now >= deadline.
	HolderExpired func(now, deadline sim.Time) bool
	// Silence (LS-1) is how long a peer may stay unheard before it counts as out of
	// range, given the configured silence d. The protocol: d.
	Silence func(d time.Duration) time.Duration
	// Discovers (LS-1) says whether a device outside the configured neighbourhood is
	// discovered when it is first heard (else its message is ignored). The protocol:
	// true.
	Discovers func(peer sim.NodeID) bool
	// Boot (LS-1) is a (re)started device's incarnation, given the one stored (0 at
	// the first start). The protocol: stored + 1.
	Boot func(stored uint32) uint32

	// LS-2: the lease operations at both sides.
	//
	// GrantorExpiry (LS-2, LS-P1) is the instant, on the grantor's clock, at which a
	// live server side whose deadline is deadline expires: its timer fires and no
	// message arriving at or after it is taken. The protocol: deadline itself.
	GrantorExpiry func(deadline sim.Time) sim.Time
	// Accepts (LS-P1) says whether the grantor still takes a message through its side
	// ex at local time now. live is the protocol's answer: the side has not ended
	// and now is before its expiry.
	Accepts func(ex *Export, now sim.Time, live bool) bool
	// Reclaims (LS-P4) says whether the grantor reclaims its side of a lease that
	// ended (how, cause) — the protocol: always — or keeps it in its exports, marked
	// ended (Export.Ended).
	Reclaims func(how End, cause string) bool
	// RenewedLeft (LS-2 renew) is a lease's time left after a renewal by d when left
	// was left. The protocol: max(left, d).
	RenewedLeft func(left, d time.Duration) time.Duration
	// HolderLeft (LS-2) is the time left the holder sets its timer to from the
	// grantor's time left (when it resolves the reference and on every piggybacked
	// update). The protocol: left.
	HolderLeft func(left time.Duration) time.Duration
	// Piggyback (LS-2) says whether the holder applies an acknowledgement's time left
	// left, carrying the grantor deadline until, when the last one it applied carried
	// last. The protocol: left > 0 and until > last (newest information only).
	Piggyback func(left time.Duration, until, last sim.Time) bool
	// Notifies (LS-2) says whether the grantor tells the holder at once of what it did
	// outside a call: "revoke", "expire" (its explicit end of the lease) or "renew".
	// The protocol: always.
	Notifies func(what string) bool
	// Requests (LS-2) says whether the holder sends its request op (OpRenew,
	// OpRevoke) to the grantor. The protocol: always.
	Requests func(op Op) bool
	// Obeys (LS-2) says whether the grantor acts on a holder's request op (OpRenew,
	// OpRevoke) it takes live. The protocol: always.
	Obeys func(op Op) bool
	// NoticeEnd (LS-2) is how the holder's side ends on the grantor's notice that the
	// lease ended how. The protocol: how (a revoke is a revoke, an expire an expire).
	NoticeEnd func(how End) End
	// Tombstones (LS-2, "revoke needs communication") says whether the grantor keeps
	// a tombstone of a lease it ended how by revoke or explicit expire, so that a
	// holder that missed the notice hears of it. The protocol: true.
	Tombstones func(how End) bool
	// Repeats (LS-2) says whether a tombstone repeats its end notice: "answer" to a
	// message for the lease, "renotify" to its holder heard again after counting as
	// out of range. The protocol: always.
	Repeats func(when string) bool
	// Listeners (LS-2) says whether the side of a lease that ended how runs its
	// whenExpired listeners. The protocol: on expiry only, never on revoke.
	Listeners func(side Side, how End) bool
	// ExpireHolder (LS-2) is how the holder's own expire ends its side. The
	// protocol: Expired (its listeners run; the grantor is not told).
	ExpireHolder func() End
	// HolderTimer (LS-2) says whether the holder's timer of im runs now, given whether
	// its grantor counts as in range. The protocol: always (a holder detects a
	// permanent disconnection by its own timer). When the hook is set, the runtime
	// finds due holder timers by scanning every client side.
	HolderTimer func(im *Import, grantorInRange bool) bool
	// TimeLeft (LS-2 leaseTimeLeft) is what the API reports of a side's time left left.
	// The protocol: left.
	TimeLeft func(side Side, left time.Duration) time.Duration
	// Releases (LS-2, the garbage collection of §3) says whether the application is
	// told that a side ended (how) so that it drops what only the lease kept alive.
	// The protocol: always.
	Releases func(side Side, how End) bool

	// LS-3: the patterns.
	//
	// Pattern (LS-3) gives the interceptor a lease created with pattern p runs. The
	// protocol: p itself. A broken pattern keeps p's Name (the checkers know
	// patterns by name).
	Pattern func(p Interceptor) Interceptor
	// PanicExpires (LS-3) says whether a lease whose pattern panicked expires at both
	// sides (the containment of a broken custom pattern). The protocol: true.
	PanicExpires func() bool

	// LS-4: futures.
	//
	// Settles (LS-4) is how a future settles, given how the protocol settles it:
	// "resolved" (a reply resolved it), "failed" (the callee failed it), "timeout"
	// (its lease expired first), "revoked" (its lease was revoked first). The
	// protocol: as given.
	Settles func(outcome string) string
}

// pattern is the interceptor of a lease created with p (Policy.Pattern).
func (rt *Runtime) pattern(p Interceptor) Interceptor {
	if h := rt.Cfg.Policy.Pattern; h != nil {
		return h(p)
	}
	return p
}

// grantorExpiry is when a live server side with that deadline expires (LS-P1).
func (rt *Runtime) grantorExpiry(deadline sim.Time) sim.Time {
	if h := rt.Cfg.Policy.GrantorExpiry; h != nil {
		return h(deadline)
	}
	return deadline
}

// accepts says whether the grantor takes a message through ex now (LS-P1): the side
// has not ended and its expiry has not come.
func (rt *Runtime) accepts(ex *Export) bool {
	live := ex.Ended == Live && rt.now < rt.expiry(ex)
	if h := rt.Cfg.Policy.Accepts; h != nil {
		return h(ex, rt.now, live)
	}
	return live
}

// reclaims says whether an ended server side is removed (LS-P4: always).
func (rt *Runtime) reclaims(how End, cause string) bool {
	if h := rt.Cfg.Policy.Reclaims; h != nil {
		return h(how, cause)
	}
	return true
}

// renewedLeft is the max rule of LS-2: new time left = max(current time left, d).
func (rt *Runtime) renewedLeft(left, d time.Duration) time.Duration {
	if h := rt.Cfg.Policy.RenewedLeft; h != nil {
		return h(left, d)
	}
	return max(left, d)
}

// holderLeft is the time left the holder's timer is set to from the grantor's: the
// same. LS-P2: both timers aim at the same instant, so the sides end within a latency
// plus the clocks' drift of each other.
func (rt *Runtime) holderLeft(left time.Duration) time.Duration {
	if h := rt.Cfg.Policy.HolderLeft; h != nil {
		return h(left)
	}
	return left
}

// piggyback says whether the holder applies a piggybacked time left (LS-2): only a
// positive one, from newer information than it last applied (a late duplicate of an
// older acknowledgement carries an older grantor deadline).
func (rt *Runtime) piggyback(left time.Duration, until, last sim.Time) bool {
	if h := rt.Cfg.Policy.Piggyback; h != nil {
		return h(left, until, last)
	}
	return left > 0 && until > last
}

// noticeEnd is how the holder's side ends on the grantor's notice: the same way.
func (rt *Runtime) noticeEnd(how End) End {
	if h := rt.Cfg.Policy.NoticeEnd; h != nil {
		return h(how)
	}
	return how
}

// tombstones says whether the grantor keeps a tombstone of a lease it ended by notice.
func (rt *Runtime) tombstones(how End) bool {
	if h := rt.Cfg.Policy.Tombstones; h != nil {
		return h(how)
	}
	return true
}

// enqueueAs is LS-1: a message is kept until acknowledged, and sent at once while the
// grantor is in range (connected-active); otherwise it accumulates (disconnected-active).
func (rt *Runtime) enqueueAs(connected bool) (keep, send bool) {
	if h := rt.Cfg.Policy.Enqueue; h != nil {
		return h(connected)
	}
	return true, connected
}

// takes says whether the grantor takes message seq (LS-1: in order, exactly once).
func (rt *Runtime) takes(seq, expected int64) bool {
	if h := rt.Cfg.Policy.Takes; h != nil {
		return h(seq, expected)
	}
	return seq == expected
}

// silence is how long a peer may stay unheard before it counts as out of range (LS-1).
func (rt *Runtime) silence() time.Duration {
	d := rt.Cfg.silence()
	if h := rt.Cfg.Policy.Silence; h != nil {
		return h(d)
	}
	return d
}

// retransmits says whether a due retransmission resends (LS-1: while the grantor is in
// range; out of range, messages accumulate until the flush).
func (rt *Runtime) retransmits(connected bool) bool {
	if h := rt.Cfg.Policy.Retransmits; h != nil {
		return h(connected)
	}
	return connected
}

// flushes says whether a reconnected peer gets the buffers flushed (LS-1: always).
func (rt *Runtime) flushes(peer sim.NodeID) bool {
	if h := rt.Cfg.Policy.Flushes; h != nil {
		return h(peer)
	}
	return true
}

// restartsRto says whether an acknowledgement restarts the retransmission timer (LS-1):
// only one that acknowledges something new, as TCP's does (RFC 6298 §5.3). One that
// acknowledges nothing new — a grantor's renewal notice, a repeated end notice — must
// not postpone it: a stream of them would keep a lost message from ever being resent
// while the devices stay in range (LS-P3; swarm seeds 1983 and 4910 before the fix).
func (rt *Runtime) restartsRto(progress bool) bool {
	if h := rt.Cfg.Policy.RestartsRto; h != nil {
		return h(progress)
	}
	return progress
}

// listeners says whether a side that ended how runs its expiry listeners (LS-2: on
// expiry, never on revoke).
func (rt *Runtime) listeners(side Side, how End) bool {
	if h := rt.Cfg.Policy.Listeners; h != nil {
		return h(side, how)
	}
	return how == Expired
}

// holderExpired says whether the holder's side with that deadline counts as expired now
// (LS-1: at its deadline, even before its timer has run in this instant).
func (rt *Runtime) holderExpired(deadline sim.Time) bool {
	if h := rt.Cfg.Policy.HolderExpired; h != nil {
		return h(rt.now, deadline)
	}
	return rt.now >= deadline
}

// discovers says whether a device outside the neighbourhood is discovered (LS-1: yes).
func (rt *Runtime) discovers(peer sim.NodeID) bool {
	if h := rt.Cfg.Policy.Discovers; h != nil {
		return h(peer)
	}
	return true
}

// nextBoot is a (re)started device's incarnation (LS-1: one more than the stored one).
func (rt *Runtime) nextBoot(stored uint32) uint32 {
	if h := rt.Cfg.Policy.Boot; h != nil {
		return h(stored)
	}
	return stored + 1
}

// notifies says whether the grantor tells the holder at once of its revoke, expire or
// renewal outside a call (LS-2: always; a revoke needs communication).
func (rt *Runtime) notifies(what string) bool {
	if h := rt.Cfg.Policy.Notifies; h != nil {
		return h(what)
	}
	return true
}

// requests says whether the holder sends its renew or revoke request (LS-2: always).
func (rt *Runtime) requests(op Op) bool {
	if h := rt.Cfg.Policy.Requests; h != nil {
		return h(op)
	}
	return true
}

// obeys says whether the grantor acts on a holder's request (LS-2: always).
func (rt *Runtime) obeys(op Op) bool {
	if h := rt.Cfg.Policy.Obeys; h != nil {
		return h(op)
	}
	return true
}

// tellsRelease says whether the application is told a side ended (LS-2: always).
func (rt *Runtime) tellsRelease(side Side, how End) bool {
	if h := rt.Cfg.Policy.Releases; h != nil {
		return h(side, how)
	}
	return true
}

// timeLeft is what leaseTimeLeft reports (LS-2: the side's time left).
func (rt *Runtime) timeLeft(side Side, left time.Duration) time.Duration {
	if h := rt.Cfg.Policy.TimeLeft; h != nil {
		return h(side, left)
	}
	return left
}

// holderExpireEnds is how the holder's own expire ends its side (LS-2: expired).
func (rt *Runtime) holderExpireEnds() End {
	if h := rt.Cfg.Policy.ExpireHolder; h != nil {
		return h()
	}
	return Expired
}

// repeats says whether a tombstone repeats its notice (LS-2: to every message for the
// lease, and to the holder heard again).
func (rt *Runtime) repeats(when string) bool {
	if h := rt.Cfg.Policy.Repeats; h != nil {
		return h(when)
	}
	return true
}

// panicExpires says whether a lease whose pattern panicked expires (LS-3: contained).
func (rt *Runtime) panicExpires() bool {
	if h := rt.Cfg.Policy.PanicExpires; h != nil {
		return h()
	}
	return true
}

// settlesAs is how a future settles (LS-4: as its reply or its lease says).
func (rt *Runtime) settlesAs(outcome string) string {
	if h := rt.Cfg.Policy.Settles; h != nil {
		return h(outcome)
	}
	return outcome
}

// holderTimerStopped reports whether the holder's timer of im is stopped now (never,
// in the protocol; see Policy.HolderTimer).
func (rt *Runtime) holderTimerStopped(im *Import) bool {
	h := rt.Cfg.Policy.HolderTimer
	return h != nil && !h(im, rt.Connected(im.ID.Grantor))
}
