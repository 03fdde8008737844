// Package lsscen registers the leased-object-reference scenarios (protocol
// protocols/leasing), their properties, the measurement experiment and the
// model-checked configuration.
//
// Scenarios:
//
//	leasing/music-stable      the music player (LS-5), two devices always in range
//	leasing/music-transient   a disconnection shorter than the lease in mid-exchange
//	leasing/music-permanent   the devices part for good in mid-exchange
//	leasing/swarm             2 to 5 devices (drawn per seed) moving in and out of range
//	                          (per-pair on/off processes drawn from the seed, some devices
//	                          leaving for good), drifting clocks and clock steps, crashes
//	                          with restarts on half the seeds (some for good, some
//	                          crash-sends: LS-1 reboot, stale incarnations), the music
//	                          player (its callback leased for twice the term on a quarter
//	                          of the seeds) and the probe application (every lease pattern
//	                          and operation, client-side expire included, and the rare
//	                          paths: declined and abandoned calls, renewals refused at the
//	                          grantor, a pattern that revokes before forwarding); on half
//	                          the seeds asymmetric discovery neighbourhoods (-p
//	                          neighbourhood=all turns them off): a device discovers a peer
//	                          it does not beacon to when it first hears from it
//	leasing/detection         the measurements (experiment, CSV with --out)
//
// Model: "leasing" (simrun check leasing), see model.go.
//
// # Properties (every run)
//
// Checkers read the history and final states; they know the environment's ground truth
// from the fault plan (when a pair of devices could exchange messages, crashes, clock
// drift and steps, the latency bound), which the devices themselves never see. Where a
// check needs a lease's deadline it rebuilds it from the grant and the accepted
// renewals (the max rule) on the clock readings the simulator recorded, rather than
// trusting the deadline the protocol reports. "In range" (ground.go): no cut, partition
// or crash between the two devices and no loss burst on (a duplication-only burst loses
// nothing and does not count); a pair parted for good when a cut, partition or crash
// between them starts and never ends (a loss burst just before is not the parting).
// The bounds below are per lease: its period is its term or the longest renewal time
// asked or granted on it (a future's is its due time).
//
//	LS-3/patterns          no leasing pattern panicked (a broken custom pattern is reported
//	                       here first: it is the root cause of what else fails)
//	LS-P1                  no message is taken live or processed at or after its lease's
//	                       deadline (rebuilt), or after the lease ended at the grantor
//	LS-P2                  each side ends at most once; after the grantor's side ends, the
//	                       holder's ends within lmax + drift(period) + clock steps (plus the
//	                       time that was left, for a revoke whose notice is lost); after the
//	                       holder's side ends, the grantor's ends within two lease periods
//	                       (a message sent just before may still renew it, a revoking holder
//	                       delivers until its deadline), or by the deadline of a renewal the
//	                       grantor made on its own; the holder's timer never fires
//	                       before a grantor deadline it was told (at the grant, or by the
//	                       acknowledgement of a renewal sent while in range), less drift and
//	                       steps; both sides end the same way — an expiry at the grantor is
//	                       an expiry at the holder (listeners at both), a revoke a revoke,
//	                       except the holder's own racing revoke or expire, and a holder
//	                       that expired by its timer before any revoke notice could reach it
//	                       (the notice, or its repetition when the grantor hears the holder
//	                       back before the old deadline, sent while in range, arrives within
//	                       lmax); listeners run exactly once per registration on expiry,
//	                       never on revoke. Sides whose device crashed, and bounds that reach
//	                       past the run, are not judged.
//	LS-P3                  per reference: messages are taken in order, exactly once, each
//	                       the one sent; a message never taken must have had no chance — no
//	                       interval of `flush` (a beacon or retransmission period plus two
//	                       latencies) with the devices in range between its send and the end
//	                       of either side (or of its grantor's incarnation); and no lease
//	                       expires by its timer unless its devices were out of range or down
//	                       at some point in its last lease period plus a margin (discovery,
//	                       retransmission, latencies, drift, steps) — no false expiry. A
//	                       lease the application abandoned on purpose (KindIdle) before it
//	                       expired is exempt, and so is one the holder never received, one
//	                       that ended at the other side first and one whose other side's
//	                       incarnation crashed first.
//	LS-P4                  at the end of the run no device keeps state for an ended lease:
//	                       runtime entries past their deadline, ended sides, tombstones past
//	                       their deadline, application state (the music player's partial
//	                       libraries, the probe's records), judged at each device's last
//	                       local time
//	LS-P5                  at most one message is processed through a single-call lease
//	LS-P6                  each lease's history is linearizable (porcupine) against the
//	                       sequential lease register of linmodel.go (grant, deliver, renew
//	                       with the max rule, end; a delivery takes effect where the grantor
//	                       takes the message); see there why checker.LeaseRegister does not
//	                       fit. Each lease's points are replayed through the register first
//	                       (leasesReplay); the porcupine check runs when one does not replay
//	LS-4/futures           each future completes once: resolved before its due time or
//	                       ruined by a timeout at or after it
//	LS-2/misuse-refused    renewing a revoked or expired lease, and a far reference to the
//	                       device itself or to a peer not discovered yet, are refused (the
//	                       probe tries them)
//	LS-2/pattern-view      a pattern's lease control says live, time left in (0, 2·term]
//	LS-1/buffered-until-acked, LS-1/no-send-after-expiry  see props_ls1_references.go
//	LS-2/released-after-listeners  see props_ls2_operations.go
//	LS-3/released-dropped  see props_ls3_patterns.go
//	music/no-callback-refused  an openSession without callback is refused, and only the
//	                       probe's malformed ones lack it
//
// props.go lists them (leasingProperties) with the bounds they share (flush, margin,
// bsc, bcs). Each rule's checks are in a file of its own: LS-P1 to LS-P5 in
// props_p1_expiry.go, props_p2_symmetric.go, props_p3_transient.go,
// props_p4_reclamation.go and props_p5_single_call.go, LS-P6 in linmodel.go; LS-1 to
// LS-4 and the music player's in props_ls1_references.go, props_ls2_operations.go,
// props_ls3_patterns.go, props_ls4_futures.go and props_ls5_music.go.
//
// Rule checks (rules.go): each judges one rule's branch directly, where the paper's
// properties would see it broken only by chance.
//
//	LS-1/out-of-range-detected  a device that cannot hear a peer it counts in range
//	                       counts it out of range within the silence (plus drift, steps
//	                       and a latency)
//	LS-P3 (timely)         a message is taken within a retransmission period and a
//	                       latency of the devices being in range with the holder counting
//	                       the grantor in range
//	LS-2/requests          a holder's revoke sends its request (its expire is local); a
//	                       request taken live acts in that step
//	LS-2/notice-in-range   a grantor's end other than by its timer reaches a holder in
//	                       range within a latency
//	LS-3/pattern-rules     every message a built-in pattern takes live is processed;
//	                       renew-on-call renews by its term first, single-call and the
//	                       music player's endExchange revoke after
//	LS-4/outcomes          a future settles as its reply or its lease says; an upload is
//	                       due when its session runs out at the holder
//	music/match, music/refuse, music/expiry-cleans-up   the ratio and its notification,
//	                       refusals by MinLeft, clean-up and stop on a session's expiry
//
// Every branched rule of the rule map has a bug planted in its branch that one of these
// (or the model's invariants) catches: rulebugs_test.go.
//
// Scenario claims: music/once-per-peer (without Again, one exchange per peer and
// incarnation of the initiator), music/transient-completes (if every disconnection was shorter than the
// lease minus the margin and well apart, both exchanges complete and no lease expires),
// music/permanent-cleans-up (if the devices parted for good, every session not finished
// by then expires at both sides, the partial library is dropped, the initiator stops),
// and music/exchanges-resume (swarm, bounded liveness: after the devices stop moving,
// every two devices still together complete an exchange each way within the bound).
// Claims are checked against the run's actual plan, so they hold under any --faults
// plan.
//
// # Choices
//
//   - Mobility is a cut and a restore of both directions of a link (a device moving out
//     of and back into range); leaving for good is a cut never restored.
//   - music-stable's devices stay in range, but its seeded plan duplicates messages for a
//     while, spikes the latency of one link and steps one clock (faults that lose
//     nothing); transient and permanent add their disconnection.
//   - Time is scaled: the paper's 10-minute leases are seconds here (the protocol only
//     compares intervals); latency 2–12ms, beacons every 100ms.
//   - The bounds of LS-P2 and LS-P3 are derived from the plan and the configuration, not
//     tuned: they hold on 10,000 swarm seeds and fail on the broken variants of the
//     tests (broken_test.go; each is caught by the property naming its fault within 40
//     seeds).
//
// # Model
//
// The model checker runs the same runtime in discrete time (model.go). Its portfolio
// (Model.Portfolio: what `simrun check leasing` runs with no -p; each at most about
// 15 s of one core, 30 s in all) is default (discovery off: the peers always count as in range and
// lost messages come back by retransmission; renew-on-call and single-call leases,
// drift, one transient or permanent disconnection), discovery (silence detection,
// disconnected-active buffering, the flush on reconnection), ops and expire (a basic
// lease renewed, revoked and expired at both sides, with listeners: notices,
// tombstones, refused renewals, listeners on expiry only) and crash (a crash that may
// cut a call's sends short: reboots, stale incarnations). The model reaches the rules
// that need an exact instant — a message or a send at the deadline's very tick — which
// continuous-time sweeps practically never hit; the swarm reaches the rest (the music
// player, futures, custom patterns). coverage_test.go requires the union to reach
// every rule and no property to be vacuous.
package lsscen
