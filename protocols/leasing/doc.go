// Package leasing implements leased object references (Gonzalez Boix, Van Cutsem,
// Vallejos, De Meuter, D'Hondt, "A Leasing Model to Deal with Partial Failures in
// Mobile Ad hoc Networks"; digest ../shared/specs/leasing.md, rules LS-1…LS-5) as a
// pure sim protocol: a per-device Runtime holding the server sides (exports, the lease
// objects of Fig. 5 with their interceptors) and client sides (imports) of leased
// references, a discovery layer, futures with due times, and applications on top (the
// music player of §2.1/§4, a probe exercising every lease operation, a meter for the
// measurements).
//
// Where the rules live. Every rule with a code branch has a tag in rules.go (the rule
// map: "LS-1 flush", "LS-2 renew keeps", "LS-5 match", …), marked where its branch
// acts; the rules without a branch of their own are declared there with the reason.
// The files, by rule:
//
//	LS-1 states, in-order channel   buffer.go (enqueue: send connected/disconnected,
//	     buffering, flush           retransmit, flush, acked), grantor.go (onCall:
//	                                duplicate, gap), api.go (liveImport: expired sends
//	                                nothing; State)
//	     discovery, incarnations    discovery.go (out of range, new peer), runtime.go
//	                                (Handle: reboot)
//	LS-2 lease/renew/revoke/expire  api.go (Lease, Renew/renewExport: extends, keeps,
//	     whenExpired/timeLeft       refused, notifies, request; Revoke, Expire,
//	                                WhenExpired, TimeLeft), buffer.go (onAck: piggyback,
//	                                notices), grantor.go (late arrival, requests,
//	                                tombstone answers), lifecycle.go (timers, ends,
//	                                listeners, release, tombstones, resolve)
//	LS-3 patterns, interceptor hook patterns.go (Basic, RenewOnCall, SingleCall, LeaseCtl:
//	                                forward refused), grantor.go (intercept: pattern
//	                                panic), musicplayer.go (EndExchangeLease)
//	LS-4 futures with due times     api.go (Call, Reply, Fail, settle), lifecycle.go
//	                                (endExport: timeout, revoked)
//	LS-5 the music player           musicplayer.go
//
// Every decision point a one-line bug could change is a hook of Policy (policy.go;
// the music player's, PlayerHooks): nil is the protocol, and the tests plant broken
// rules through them from outside the protocol code.
//
// # Choices the paper leaves open
//
// Timers and clocks. Both ends keep their own timer on their own local clock (drift and
// clock steps come from the simulator). The grantor's timer starts when the lease is
// created; the holder's starts when the reference arrives, from the grantor's time left
// at transmission (Passed.Left), not from the initial term. The holder never extends
// its own timer: it follows the time left the grantor piggybacks (LS-2). Only intervals
// are compared, never absolute times across devices (§3).
//
// Newest information only. Each piggybacked time left comes with the grantor's
// deadline on the grantor's clock (Passed.Until, Ack.Until), which the holder never
// compares with its own clock: it is a version number. A live lease's deadline only
// grows at its grantor (the max rule), so the holder applies a time left only when its
// Until is larger than the one it last applied (Import.Until). A late duplicate of an
// older acknowledgement — a duplicating network delivers one up to a latency after the
// original — would otherwise move the holder's timer later by its extra delay, or
// earlier when a renewal came in between; an acknowledgement that repeats the same
// deadline carries nothing new either (the first arrival's estimate is kept).
//
// Piggybacking. Every message through a reference is acknowledged by the grantor (Ack)
// and the acknowledgement carries the grantor's time left; an explicit server-side
// renew sends one at once. The paper piggybacks "on application-level messages"; the
// acknowledgements are this implementation's per-reference message flow.
//
// Buffering and reliability. The paper relies on AmbientTalk's transport. Here a
// reference is an in-order, exactly-once channel: sequence numbers, cumulative acks,
// retransmission every RTO while the grantor counts as connected, and a flush in order
// when it is heard again (LS-1). A message stays in the buffer until acknowledged, not
// merely until transmitted, so a disconnection not yet noticed loses nothing.
//
// Discovery. Connectivity is learned only from messages: devices beacon every Beacon; a
// peer unheard for Silence is disconnected (disconnected-active references accumulate
// messages); any message from it reconnects it (connected-active: flush). Beacon = 0
// switches discovery off (every peer counts as connected, lost messages are recovered
// by retransmission), for the model checker's small closed system.
//
// Expired leases at the grantor. A message for a lease that expired by its timer is
// ignored, without an answer (§3: "the server will ignore it and the client-side timer
// will expire soon thereafter"). A message that arrives at or after the deadline,
// before the timer has fired in that same instant, expires the lease on the spot and is
// not processed (LS-P1).
//
// Revoke needs communication (§4.2). A revoke (or explicit expire) at the grantor sends
// a notice; so that a holder out of range for less than the lease still learns of it
// (and runs no listener), the grantor keeps a tombstone (the lease's name, next
// sequence number and how it ended; no service state) until the lease's old deadline,
// answers retransmissions with the notice and repeats it when the holder is heard
// again after counting as out of range. A notice lost while the devices stay in range
// (a short outage the discovery layer does not notice) is not repeated unless the
// holder retransmits: that holder's side then expires by its timer, the one case where
// the two sides end differently (the checkers of LS-P2 allow exactly this). A revoke at the holder is a request sent after the messages already buffered;
// the holder's side ends at once (nothing more can be sent, no listener runs) and only
// its buffer lingers until the request is acknowledged or the deadline passes.
//
// Expire. At the grantor, an explicit expire ends the lease and notifies the holder,
// whose listeners run too (symmetric). At the holder it is local: the grantor's timer
// expires on its own, as after any silence from the holder.
//
// Listeners. whenExpired listeners run once per registration, asynchronously — in a
// later turn of the device (a zero-delay timer), never inside the operation that ended
// the lease — on expiry only, never on revoke. Separately, App.Released tells the
// application that a lease ended either way, after its listeners: it models the garbage
// collector that reclaims what only the lease kept alive (§3, §4.3).
//
// Patterns (LS-3). The interceptor hook is Receive (Fig. 5's receive with super.receive
// as LeaseCtl.Forward); pass and resolve are fixed: pass-by-lease creates the client side
// when a lease is passed in a message, and a lease is held by exactly one device, the
// holder named at creation. The renewal time is the initial term (§4.3). Single-call
// forwards, then revokes. The music player's pattern forwards endExchange before
// revoking (the paper's excerpt omits the forward, without which endExchange would never
// reach the session). A pattern's panic is contained (it is user code): the panic is
// observed and the lease, if still live, expires at both sides; what the pattern did
// before it panicked stands (a message it had not forwarded is dropped, one it had
// forwarded was processed). A panic raised inside a LeaseCtl method — by the service
// object during Forward, or by the runtime itself — is not the pattern's and
// propagates (the simulator reports it). A pattern is a plain value; LeaseCtl.Seq and
// From describe the message, and a pattern with state of its own installs its updated
// value with LeaseCtl.SetPattern.
//
// Futures (LS-4). Call(ref, …, due) exports the future as a single-call lease of term
// due held by the callee, passed with the message; the first reply resolves it; its
// expiry ruins it with ErrTimeout (the catch: block). Tying a call to a lease is
// Call(session, …, TimeLeft(session)).
//
// Far references. Each device exports one well-known far object (discovery hands out
// the reference); its channel is buffered and in order like a lease's and never expires.
//
// Crashes. Leases are volatile: a rebooted device has none. It keeps a boot counter in
// stable storage; references name the grantor's incarnation (far ones the holder's
// too); messages from an earlier incarnation of a peer, delivered late, are ignored (boots
// only grow); leases with a dead incarnation expire by their timers, indistinguishable
// from a long disconnection.
//
// The music player. Both devices run the exchange towards each other at once (§2.1).
// The match ratio is the share of the responder's library found in the uploaded one. A
// responder refuses an openSession whose callback has less than MinLeft time left (the
// reply could not arrive in time; the session would only idle until it expires). An
// openSession without a callback is refused too (WhyNoCallback).
//
// The probe (probe.go) exercises what the music player does not: every pattern, client
// and server renew, revoke and expire, misuse, and a quiet "keepalive" lease whose
// holder only renews it on a fixed schedule without looking at its own time left (a
// holder timer that runs short would show as a false expiry); its server also renews
// basic and renew-on-call leases on its own, outside any call (the holder must be told
// at once), and it misbehaves on purpose: a far reference to itself and to an
// undiscovered peer, an openSession without callback, a faulty custom pattern that
// reports what its LeaseCtl says (KindProbeCtl) before it panics.
//
// Leak reports (LS-P4). Device.Leaks and the applications' Leaks run after the run,
// between handler calls, when the per-call clock reads zero: they judge liveness at the
// device's last local time (LastNow; GrantsAtEnd, HoldsAtEnd), never with the per-call
// Grants, Holds, State or TimeLeft.
//
// Observations (observe.go) record every lease event for the checkers of package
// scenarios/leasing (properties LS-P1…LS-P6). Policy (policy.go) names the runtime's
// decision points as hooks, nil being the protocol: the deliberately broken variants
// the tests plant are written outside the protocol (scenarios/leasing/bugs.go).
package leasing
