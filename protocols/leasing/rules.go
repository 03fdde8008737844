package leasing

import "github.com/simrun-dev/simrun/sim"

// The rule map of the leasing protocol (rule coverage, sim.NewRuleMap): every numbered
// rule of the digest (../shared/specs/leasing.md, LS-1 … LS-5) that has a code branch,
// at the granularity of its cases, each marked with Runtime.cover where the branch
// acts. The file map (doc.go) says where each group lives; the rules without a branch
// of their own are declared Unbranched, with the reason. `simrun coverage leasing`
// reports which of them the default swarm and the model's portfolio reach.
var (
	rules = sim.NewRuleMap("leasing")

	// LS-1: reference states (Fig. 3), the in-order exactly-once channel, discovery.
	ruleSendConnected    = rules.Rule("LS-1 send connected", "a message through a live reference whose grantor is in range is kept until acknowledged and sent at once (connected-active)")
	ruleSendDisconnected = rules.Rule("LS-1 send disconnected", "a message through a live reference whose grantor is out of range accumulates in the buffer, in order (disconnected-active)")
	ruleExpiredRefuses   = rules.Rule("LS-1 expired sends nothing", "a send, call, renew or revoke through a reference at or after the holder's deadline transmits nothing; the side expires on the spot")
	ruleRetransmit       = rules.Rule("LS-1 retransmit", "unacknowledged messages are resent, in order, every RTO while the grantor is in range")
	ruleAcked            = rules.Rule("LS-1 acked", "an acknowledgement of something new removes those messages from the buffer and restarts the retransmission timer")
	ruleFlush            = rules.Rule("LS-1 flush", "a grantor heard again after counting as out of range gets every unacknowledged message, in order (connected-active again)")
	ruleDuplicate        = rules.Rule("LS-1 duplicate", "a message the grantor took before (a retransmission) is acknowledged again, not processed twice")
	ruleGap              = rules.Rule("LS-1 gap", "a message after a lost one waits for the holder's in-order retransmission")
	ruleOutOfRange       = rules.Rule("LS-1 out of range", "a peer unheard for Silence counts as out of range")
	ruleNewPeer          = rules.Rule("LS-1 new peer", "a device outside the configured neighbourhood is discovered when it is first heard")
	ruleReboot           = rules.Rule("LS-1 reboot", "a restarted device has a new incarnation (boot counter in stable storage) and no lease: leases are volatile; its peers drop its previous incarnation's far channels")

	// LS-2: the lease operations (§4.2, §5.1, Fig. 5) at both sides.
	ruleLease             = rules.Rule("LS-2 lease", "lease(duration, service) creates the server side; its timer starts now")
	ruleResolve           = rules.Rule("LS-2 resolve", "a reference passed with a message creates the holder's side, its timer set from the grantor's time left at transmission")
	ruleRenewExtends      = rules.Rule("LS-2 renew extends", "renew(d) with d above the time left: the time left becomes d")
	ruleRenewKeeps        = rules.Rule("LS-2 renew keeps", "renew(d) with d at most the time left: the time left stays (the max rule)")
	ruleRenewRefused      = rules.Rule("LS-2 renew refused", "a renewal reaching a grantor whose side ended or expired is ignored (§3)")
	ruleRenewNotifies     = rules.Rule("LS-2 renew notifies", "a renewal the grantor makes outside a call is sent to the holder at once")
	ruleRenewRequest      = rules.Rule("LS-2 renew request", "a renewal at the holder is a request, sent in order with its messages")
	rulePiggyback         = rules.Rule("LS-2 piggyback", "the holder's timer follows the time left piggybacked on a newer acknowledgement (an older or equal one is ignored)")
	ruleRevokeGrantor     = rules.Rule("LS-2 revoke grantor", "revoke at the grantor ends its side without listeners and notifies the holder")
	ruleRevokeHolder      = rules.Rule("LS-2 revoke holder", "revoke at the holder ends its side at once (no listeners); the request follows the buffered messages")
	ruleRevokeRequest     = rules.Rule("LS-2 revoke request", "the grantor ends its side, without listeners, on the holder's revoke request")
	ruleExpireGrantor     = rules.Rule("LS-2 expire grantor", "expire at the grantor ends its side, runs its listeners and notifies the holder")
	ruleExpireHolder      = rules.Rule("LS-2 expire holder", "expire at the holder ends its side locally and runs its listeners")
	ruleTimerGrantor      = rules.Rule("LS-2 timer grantor", "the grantor's timer fires at the deadline: its side expires and runs its listeners")
	ruleTimerHolder       = rules.Rule("LS-2 timer holder", "the holder's timer fires at its deadline: its side expires and runs its listeners (permanent disconnection detected)")
	ruleLateArrival       = rules.Rule("LS-2 late arrival", "a message arriving at or after the deadline, before the timer ran in that instant, is not processed: the lease expires now")
	ruleNoticeRevoked     = rules.Rule("LS-2 notice revoked", "the grantor's notice of a revoke ends the holder's side as revoked (no listeners)")
	ruleNoticeExpired     = rules.Rule("LS-2 notice expired", "the grantor's notice of an explicit expire ends the holder's side as expired (listeners run)")
	ruleTombstone         = rules.Rule("LS-2 tombstone", "a lease the grantor ended by notice leaves a tombstone until its old deadline")
	ruleTombstoneAnswers  = rules.Rule("LS-2 tombstone answers", "a message for a tombstoned lease is answered with the end notice")
	ruleTombstoneRenotify = rules.Rule("LS-2 tombstone renotifies", "a holder heard again after counting as out of range gets the notices of its tombstoned leases")
	ruleListenersRun      = rules.Rule("LS-2 listeners run", "an expired side's whenExpired listeners run once each, asynchronously (a later turn)")
	ruleNoListeners       = rules.Rule("LS-2 no listeners on revoke", "a revoked side with registered listeners runs none")
	ruleTimeLeft          = rules.Rule("LS-2 timeLeft", "leaseTimeLeft: the side's time left, 0 once the deadline is reached")
	ruleReleased          = rules.Rule("LS-2 released", "after a side ends (and its listeners ran) the application drops what only the lease kept alive (§3 garbage collection)")

	// LS-3: the leasing patterns (§3, §5.1).
	ruleBasic        = rules.Rule("LS-3 basic", "lease:for: forwards the message while the lease is not expired")
	ruleRenewOnCall  = rules.Rule("LS-3 renew-on-call", "a message through a renew-on-call lease renews it by its initial period, then is forwarded")
	ruleSingleCall   = rules.Rule("LS-3 single-call", "the first message through a single-call lease is forwarded, then the lease is revoked")
	ruleCustomRevoke = rules.Rule("LS-3 custom revoke", "the music player's pattern forwards its revoking message (endExchange), then revokes")
	ruleCustomRenew  = rules.Rule("LS-3 custom renew", "the music player's pattern renews on any other message, then forwards it")
	ruleForwardEnded = rules.Rule("LS-3 forward refused", "a pattern's forward on an ended lease drops the message (it never reaches the service)")
	rulePatternPanic = rules.Rule("LS-3 pattern panic", "a panicking pattern is contained: the lease, if live, expires at both sides")

	// LS-4: futures with due times (§4.4).
	ruleFutureDone   = rules.Rule("LS-4 resolved", "the first reply through the future's lease resolves it (when:becomes:)")
	ruleFutureFailed = rules.Rule("LS-4 failed", "a failure reply ruins the future with the callee's error")
	ruleFutureTimout = rules.Rule("LS-4 timeout", "the future's lease expires before a reply: the future is ruined with a timeout (catch:)")
	ruleFutureRevoke = rules.Rule("LS-4 revoked", "the future's lease is revoked before a reply: the future is ruined")

	// LS-5: the music player (§2.1, §4).
	ruleMPOpen        = rules.Rule("LS-5 open", "a player in range of a peer asks it for a session, passing a single-call callback")
	ruleMPSession     = rules.Rule("LS-5 session", "the responder exports a session (renew-on-call, revoked by endExchange) and returns it through the callback")
	ruleMPRefuse      = rules.Rule("LS-5 refuse", "an openSession without a callback, or whose callback has too little time left, is refused")
	ruleMPUpload      = rules.Rule("LS-5 upload", "each song is uploaded with a future due at the session's time left")
	ruleMPEnd         = rules.Rule("LS-5 end exchange", "when every song is acknowledged the initiator sends endExchange")
	ruleMPMatch       = rules.Rule("LS-5 match", "the responder computes the match ratio and notifies its user when it reaches the threshold")
	ruleMPNoMatch     = rules.Rule("LS-5 no match", "a match ratio below the threshold notifies nobody")
	ruleMPCleanup     = rules.Rule("LS-5 cleanup", "the responder's session listener drops the partially uploaded library")
	ruleMPStop        = rules.Rule("LS-5 stop", "the initiator stops an exchange whose session or upload ended (expiry listener, ruined future, callback expired)")
	ruleMPSessionLost = rules.Rule("LS-5 session lost", "a session reference that arrives dead ends the exchange before its first upload")
)

func init() {
	rules.Unbranched("LS-1 states", "State is a query over a side's deadline and its grantor's connectivity: the states act in LS-1 send connected/disconnected and expired sends nothing")
	rules.Unbranched("LS-2 symmetric clocks", "both timers run on their device's local clock (the simulator's drift and steps); only intervals are compared, never absolute times")
	rules.Unbranched("LS-1 stale incarnation", "a message for or from an earlier incarnation names references that no longer exist (RefID carries the boots): it finds no side and is dropped or ignored")
	rules.Unbranched("LS-2 ended ignored", "a message for a lease the grantor no longer has finds no side and is dropped without an answer (§3); a tombstoned one is LS-2 tombstone answers")
	rules.Unbranched("LS-2 whenExpired", "registering appends to the side's listener list, with no alternative branch; a lost registration shows in LS-2 listeners run")
	rules.Unbranched("LS-3 interceptor API", "receive is Interceptor.Receive and super.receive LeaseCtl.Forward; pass and resolve are fixed (LS-2 resolve)")
	rules.Unbranched("LS-4 call", "Call always passes its future by a single-call lease of term due (LS-2 lease, LS-3 single-call); how the future settles is LS-4 resolved, failed, timeout and revoked")
	rules.Unbranched("LS-4 due at time left", "@Due(leaseTimeLeft(session)) is the music player's upload: LS-5 upload")
	rules.Unbranched("LS-5 variants", "no disconnection, transient and permanent are the scenarios leasing/music-stable, -transient and -permanent, not branches")
}

// cover records that rule r's branch acted in this call (rule coverage; nothing when
// the engine does not track it).
func (rt *Runtime) cover(r sim.Rule) { rt.out.Cover(r) }
