package replication

import "github.com/simrun-dev/simrun/sim"

// The rule map (rule coverage, sim.NewRuleMap): every numbered rule of the digest
// (shared/specs/replication.md) that has a code branch, at the granularity of its
// cases; out.Cover marks the branch where each acts. Rules without a branch of their
// own are declared Unbranched with the reason.
var (
	rules = sim.NewRuleMap("replication")

	// RP-1 registries with leased registration (§3.5, §5.2.1).
	ruleRegNew     = rules.Rule("RP-1 register", "a registry adds a registration it does not hold (a new ID), and notifies the group")
	ruleRegRenew   = rules.Rule("RP-1 renew", "a registry renews a registration it holds (same ID); a role change replaces it and notifies the group")
	ruleRegExpire  = rules.Rule("RP-1 expire", "a registry drops a registration not renewed within its lease (failure detection) and notifies the group")
	ruleRegNotify  = rules.Rule("RP-1 notify", "a registry sends a subscriber the group's registrations after a change (remote events)")
	ruleRegLookup  = rules.Rule("RP-1 lookup", "a registry answers a lookup with the group's registrations")
	ruleIDDrawn    = rules.Rule("RP-1 id drawn", "a replica's first start draws its 128-bit registration ID and keeps it in stable storage")
	ruleIDReused   = rules.Rule("RP-1 id reused", "a replica back from a crash reuses the registration ID in its stable storage")
	ruleRenewTimer = rules.Rule("RP-1 renewal", "a replica renews its registration with every registry every third of a lease")

	// RP-2 passive replication: the replica manager (§5.2).
	ruleBackupFirst  = rules.Rule("RP-2 §5.2.1 backup first", "a replica (re)starting registers as a backup and looks its group up")
	rulePing         = rules.Rule("RP-2 §5.2.2 ping", "a backup pings the primary it follows every period")
	rulePingLost     = rules.Rule("RP-2 §5.2.2 ping unanswered", "a ping unanswered within a period: handle_primary_failure (a lookup)")
	rulePongBackup   = rules.Rule("RP-2 §5.2.2 not primary", "the replica followed answers it is not primary: stop following it (unless it claims) and look up")
	rulePongBehind   = rules.Rule("RP-2 §5.2.2 behind", "the primary's pong shows more requests applied: the backup asks for its state")
	ruleVerify       = rules.Rule("RP-2 §5.2.4 verify", "every 5 periods a replica looks its group up to verify one and only one primary")
	rulePollPrimary  = rules.Rule("RP-2 §5.2.2 polling primary", "without notifications the primary looks its group up every period")
	ruleChanged      = rules.Rule("RP-2 notified", "a replica acts on a registry's membership notice as on a verification")
	ruleNoRegistry   = rules.Rule("RP-2 §5.4.1 none found", "a lookup that found no registration: stay alive, try later (no registry, no primary)")
	ruleAdopt        = rules.Rule("RP-2 §5.2.3 adopt", "handle_primary_failure finds a registered primary and follows it (a claim in progress ends)")
	ruleFollowMin    = rules.Rule("RP-2 §5.2.3 follow minimum", "no primary registered: a replica follows the minimum registration ID (a claim in progress ends)")
	ruleFollowing    = rules.Rule("RP-2 §5.2.3 following a claimer", "a replica that answered a claimer does not claim from a lookup answered earlier")
	ruleAloneWait    = rules.Rule("RP-2 §5.2.3 alone: wait", "the lookups list the replica alone: it waits a renewal period and a period (a registry back from a crash lists only the replicas that renewed since)")
	ruleAloneClaim   = rules.Rule("RP-2 §5.2.3 alone: claim", "the lookups have listed the replica alone for a renewal period and a period: it claims alone")
	ruleClaim        = rules.Rule("RP-2 §5.2.3 claim", "the minimum ID with no primary registered gathers the others' state before it takes over")
	ruleClaimRetry   = rules.Rule("RP-2 §5.2.3 claim retry", "a claim's period passed: it asks again, and looks the group up")
	ruleClaimDrop    = rules.Rule("RP-2 §5.2.3 claim drops gone", "a claim stops waiting for a replica the registries no longer list")
	ruleClaimed      = rules.Rule("RP-2 §5.2.3 take over", "every replica asked answered (or is gone): the claimer becomes primary and registers so")
	ruleFollowClaim  = rules.Rule("RP-2 §5.2.3 follow the claimer", "a backup asked for its state by a claimer follows it and forgets its unanswered ping")
	ruleClaimAdopt   = rules.Rule("RP-2 §5.2.3 claimer adopts", "a claimer asked a replica that is primary: it follows it instead")
	ruleFresher      = rules.Rule("RP-2 §5.2.3 fresher state", "a backup or claimer installs a state fresher than its own")
	ruleSyncPrimary  = rules.Rule("RP-2 state transfer", "the primary sends its state to a replica that asks (behind, or claiming)")
	ruleSnapAck      = rules.Rule("RP-2 state acknowledged", "a backup acknowledges the state it got from the primary (its index)")
	ruleTwoPrimaries = rules.Rule("RP-2 §5.2.4 two primaries", "verify_primary: a primary that sees another with a smaller ID steps down and follows it")
	ruleDropGone     = rules.Rule("RP-2 §5.2.4 backups gone", "the primary stops waiting for the acks of backups the registries no longer list")
	ruleLapsed       = rules.Rule("RP-2 step down", "a primary whose registration was not acknowledged for a lease steps down")
	ruleLeaseAcked   = rules.Rule("RP-2 registration acknowledged", "a registry's acknowledgement of the current role renews the replica's own view of its lease")
	ruleStepDown     = rules.Rule("RP-2 backup again", "a replica that steps down drops its queue, its request in progress and its call")

	// RP-2 passive replication: a request (§3.6.1, §5.1.4).
	ruleNotPrimary = rules.Rule("RP-2 §3.6.1 not primary", "a replica that is not primary answers a request \"not primary\"")
	ruleDuplicate  = rules.Rule("RP-2 §3.6.1 duplicate", "a request already executed is answered from the duplicate table, not executed")
	ruleInProgress = rules.Rule("RP-2 §3.6.1 in progress", "a re-send of the request in progress is not answered before its backups acknowledge")
	ruleQueuedDup  = rules.Rule("RP-2 §3.6.1 queued", "a re-send of a queued request is dropped (it runs once)")
	ruleExecute    = rules.Rule("RP-2 §3.6.1 execute", "the primary sends the update to its backups, executes, stores the response and sends done (§5.1.4)")
	ruleAnswer     = rules.Rule("RP-2 §3.6.1 answer", "the primary answers once every backup it waits for acknowledged")
	ruleDoneAgain  = rules.Rule("RP-2 §3.6.1 done again", "a backup that has not acknowledged the done for a period gets it again")
	ruleUpdate     = rules.Rule("RP-2 §5.1.4 update", "a backup records the update of a request about to run")
	ruleApply      = rules.Rule("RP-2 §3.6.1 apply", "a backup applies the next done in order, stores the response and acknowledges")
	ruleApplied    = rules.Rule("RP-2 §3.6.1 already applied", "a backup acknowledges a done it holds already")
	ruleGap        = rules.Rule("RP-2 §3.6.1 gap", "a backup behind a done asks the primary for its state and does not acknowledge")
	ruleFence      = rules.Rule("RP-2 fence", "a backup ignores a done from a replica other than the primary it follows, or of an older term")
	ruleNewTerm    = rules.Rule("RP-2 term", "a backup holding an older term's history asks the primary for its state before it applies the new term's dones")
	ruleResume     = rules.Rule("RP-2 §5.1.4 resume", "a new primary queues the requests whose update arrived without their done")

	// RP-2 the replica locator and front ends (§5.3).
	ruleCallLookup  = rules.Rule("RP-2 §5.3.3 lookup", "a call looks its group up in every registry")
	ruleCallKnown   = rules.Rule("RP-2 §5.3.3 known", "a call goes straight to the replica(s) that answered the last one")
	ruleCallFound   = rules.Rule("RP-2 §5.3.3 primary found", "a lookup's answer names a primary: the request goes to it")
	ruleRefused     = rules.Rule("RP-2 §5.3.3 refused", "a request answered \"not primary\": the call looks the group up again")
	ruleRefusedMore = rules.Rule("RP-2 §5.3.3 refused again", "a second refusal of one call waits for its re-send (a primary stepping down is listed a while)")
	ruleResend      = rules.Rule("RP-2 §3.6.1 re-send", "a client's request unanswered within its retry period: a new lookup and the same request again")
	ruleClientBack  = rules.Rule("RP-2 client restart", "a client back from a crash re-sends its pending request with the same ID")

	// RP-3 active replication (§3.6.2).
	ruleMulticast   = rules.Rule("RP-3 multicast", "an active call sends its request to every registered replica")
	ruleLateReply   = rules.Rule("RP-3 first reply", "a front end takes the first reply; a later one for an answered call is ignored")
	ruleOrder       = rules.Rule("RP-3 order", "the sequencer gives a new request the next index, multicasts it and executes it")
	ruleADuplicate  = rules.Rule("RP-3 duplicate", "a replica answers a request it delivered from its table")
	ruleNotSeq      = rules.Rule("RP-3 not the sequencer", "a replica not ordering leaves a new request to the sequencer")
	ruleDeliver     = rules.Rule("RP-3 deliver", "a replica delivers the next index of the order, executes and answers")
	ruleOrderGap    = rules.Rule("RP-3 gap", "an order past the next index: the replica fetches the gap from the sequencer")
	ruleFetch       = rules.Rule("RP-3 fetch", "the sequencer re-sends the order from the index asked")
	ruleCatchUp     = rules.Rule("RP-3 catch up", "a replica delivers a run of re-sent orders in index order")
	rulePingSeq     = rules.Rule("RP-3 behind", "a replica's ping shows the sequencer ahead: it fetches the rest")
	ruleEpochFence  = rules.Rule("RP-3 fence", "an order of an older epoch, or of another sequencer in the epoch, is ignored")
	ruleEpochJoin   = rules.Rule("RP-3 join by order", "an order of a newer epoch: the replica joins it and follows its sequencer")
	ruleLearnSeq    = rules.Rule("RP-3 learn sequencer", "a replica back from a crash learns the sequencer from its registration")
	ruleViewChange  = rules.Rule("RP-3 view change", "the minimum ID not ordering starts a new epoch and asks every registered replica for its order")
	ruleAskFollowed = rules.Rule("RP-3 ask the sequencer followed", "a view change also asks the sequencer the replica follows, listed or not")
	ruleSeqJoin     = rules.Rule("RP-3 join by sync", "a replica asked for its order by a newer epoch joins it, stops ordering and looks up again")
	ruleSeqRefuse   = rules.Rule("RP-3 epoch taken", "a replica in that epoch or a later one under another sequencer: the view change starts after it")
	ruleLongest     = rules.Rule("RP-3 longest order", "the new sequencer keeps the longest order it gathered")
	ruleInstall     = rules.Rule("RP-3 install", "every replica asked answered: the new sequencer takes over and sends its order to all")
	ruleInstallLate = rules.Rule("RP-3 install after a period", "a replica asked did not answer within a period: the sequencer takes over without it")
	ruleNewView     = rules.Rule("RP-3 new view", "a replica adopts the new sequencer's order")
	ruleSeqStepDown = rules.Rule("RP-3 step down", "a sequencer (or one taking over) that is not the minimum ID steps down")
	ruleASlowReg    = rules.Rule("RP-3 registry silent", "a registry did not answer within a period: act on the others' lists")
	ruleAChanged    = rules.Rule("RP-3 notified", "a membership notice makes an active replica look its group up in every registry")
	ruleReplay      = rules.Rule("RP-3 replay", "a replica back from a crash re-executes the order in its stable storage")

	// RP-4 fault-tolerant transitions (§4.4, §4.5).
	ruleTransition  = rules.Rule("RP-4 §4.4 step 1", "the primary predecessor requests the transition from the primary successor")
	ruleSideCall    = rules.Rule("RP-4 task call", "a queued instance's task calls a component (an ID fixed by instance and hop)")
	ruleRan         = rules.Rule("RP-4 §4.4 step 2 ran", "a queued instance whose calls are done runs its task (the hop's ran step, replicated)")
	ruleTransAck    = rules.Rule("RP-4 §4.4 step 3", "the primary successor acknowledges a transition (after its backups hold it)")
	ruleHanded      = rules.Rule("RP-4 §4.4 step 4", "the acknowledged predecessor tells its backups \"done\" (the handed-over step)")
	ruleSideDone    = rules.Rule("RP-4 task call answered", "a task's call is answered: the next call, or the ran step")
	ruleRouteEnd    = rules.Rule("RP-4 route end", "an instance that ran the route's last hop is complete")
	ruleFlowResume  = rules.Rule("RP-4 §4.5.1 §4.5.3 resume", "a new primary moves on every instance its group holds from its replicated status")
	ruleCallRetry   = rules.Rule("RP-4 §4.5.2 retry", "a transition or task call left unanswered is made again to the primary found anew")
	ruleTransDup    = rules.Rule("RP-4 §4.5.4 §4.5.5 done already", "a transition the successor holds already is acknowledged, not queued again")
	ruleCallStopped = rules.Rule("RP-4 call dropped", "a primary stepping down drops its call (the new primary makes it)")
)

func init() {
	rules.Unbranched("RP-1 subscribe", "a replica's registration carries Options.Notify; the registry's notify branch is RP-1 notify")
	rules.Unbranched("RP-2 §3.6.1 order", "the primary takes requests one at a time from its queue: no branch of its own (RP-2 §3.6.1 execute)")
	rules.Unbranched("RP-3 total order", "one sequencer per epoch orders: a property of RP-3 order, view change and fence, checked as \"RP-3 one total order\"")
	rules.Unbranched("RP-4 §4.5 item 6 partitions", "outside the thesis' model: no branch; the case-partition scenario reports what breaks")
	rules.Unbranched("RP-5 SimpleFlow", "a route (data, scenarios/replication flow.go) and the chapter-6 experiment: no protocol branch")
}
