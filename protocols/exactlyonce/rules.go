package exactlyonce

import "github.com/simrun-dev/simrun/sim"

// The rule map: every numbered rule of the requirement digest (shared/specs/
// exactlyonce.md) that has a code branch, at the granularity of its cases, tagged
// "EO-n name"; a handler marks the branch where the rule acts with n.out.Cover. Rules
// without a branch of their own are declared Unbranched with the reason. `simrun
// coverage exactlyonce` reports which of them the default swarm and the model's
// portfolio reach.
var rules = sim.NewRuleMap("exactlyonce")

// EO-1 simple protocol (§2).
var (
	ruleSimplePut    = rules.Rule("EO-1 simple put", "the simple protocol Puts the agent to the next stage's highest-priority node only")
	ruleSimpleCommit = rules.Rule("EO-1 simple commit", "the simple protocol's stage transaction commits without a vote (no orchestrator)")
	ruleSimpleResume = rules.Rule("EO-1 simple resume", "a restarted node of the simple protocol resumes every stage in its queue as the worker")
)

// EO-2 stage transaction (§3, Fig. 3).
var (
	ruleLaunch    = rules.Rule("EO-2 launch", "the home node stores a launched agent: stage 0 is Active there (the agent is accepted)")
	ruleBegin     = rules.Rule("EO-2 begin", "a worker begins a stage transaction: Get, Execute (a reservation)")
	rulePutAll    = rules.Rule("EO-2 put", "the stage transaction Puts agent and next stage record to every chosen next-stage node")
	rulePutOnFly  = rules.Rule("EO-2 put on the fly", "the worker leaves suspected next-stage nodes out of the Put while a majority remains (§3 fn. 4)")
	rulePutAllAnd = rules.Rule("EO-2 put all suspected", "too many next-stage nodes are suspected: the Put goes to all of them")
	ruleLast      = rules.Rule("EO-2 last stage", "the last stage's transaction Puts nothing and its commit completes the agent")
)

// EO-3 transaction manager and resource managers (§3, Fig. 4; §4).
var (
	rulePrepare       = rules.Rule("EO-3 prepare", "a next-stage queue manager prepares a Put (stable) and votes rm_yes")
	rulePrepareNo     = rules.Rule("EO-3 prepare no", "a queue manager votes rm_no to a Put of a stage already Active there")
	ruleRemoteNo      = rules.Rule("EO-3 remote no", "a participant's rm_no aborts the stage transaction")
	ruleCommit        = rules.Rule("EO-3 commit", "every participant voted rm_yes: the coordinator logs the decision, commits its local RMs, sends COMMIT")
	ruleCommitResend  = rules.Rule("EO-3 commit resend", "the coordinator re-sends COMMIT to participants that have not ACKed")
	ruleCommitAcked   = rules.Rule("EO-3 commit acked", "every participant ACKed COMMIT: the coordinator deletes its commit record")
	rulePutCommit     = rules.Rule("EO-3 put commit", "a participant commits its prepared Put on COMMIT (the stage becomes Active there)")
	rulePutAbort      = rules.Rule("EO-3 put abort", "a participant rolls its prepared Put back on ABORT")
	ruleStatusAsk     = rules.Rule("EO-3 status ask", "an in-doubt participant asks its coordinator with STATUS")
	ruleStatusCommit  = rules.Rule("EO-3 status commit", "the coordinator answers STATUS of a logged commit with COMMIT")
	ruleStatusWait    = rules.Rule("EO-3 status wait", "the coordinator leaves STATUS of a transaction still in phase 1 unanswered")
	ruleStatusAbort   = rules.Rule("EO-3 status abort", "presumed abort: STATUS of a transaction neither running nor logged is answered ABORT")
	ruleLatePrepared  = rules.Rule("EO-3 late prepared", "a late rm_yes for a transaction already aborted is answered ABORT at once")
	rulePrepTimeout   = rules.Rule("EO-3 prepare timeout", "phase 1 outlasts Timing.Prepare: the transaction aborts and silent participants are suspected")
	ruleRetry         = rules.Rule("EO-3 retry", "a worker restarts its stage transaction after an abort by timeout or rm_no of a participant")
	ruleRecoverCommit = rules.Rule("EO-3 recover commit", "a restarted coordinator re-sends COMMIT of every logged decision")
	ruleRecoverRes    = rules.Rule("EO-3 recover rollback", "a restarted resource manager rolls back prepared reservations without a logged commit")
	ruleRecoverDoubt  = rules.Rule("EO-3 recover in-doubt", "a restarted participant asks about every prepared Put (STATUS)")
	ruleLockWait      = rules.Rule("EO-3 lock wait", "a worker waits for a pool its resource manager has locked for another stage transaction (strict 2PL)")
	ruleLockHandoff   = rules.Rule("EO-3 lock handoff", "a released pool lock lets the first waiting worker begin")
)

// EO-5 voting, phase 1 (§4).
var (
	ruleVote          = rules.Rule("EO-5 vote", "rm_prepare at the orchestrator: VOTE to every voter of the stage")
	ruleVoteResend    = rules.Rule("EO-5 vote resend", "the orchestrator re-sends VOTE to voters without a final answer")
	ruleVoteInactive  = rules.Rule("EO-5 vote not active", "a voter whose stage is not Active ignores VOTE")
	ruleYes           = rules.Rule("EO-5 yes", "a voter with an empty OrchSet answers YES")
	ruleNo            = rules.Rule("EO-5 no", "a voter answers NO to an orchestrator of lower priority than N")
	ruleCondYes       = rules.Rule("EO-5 cond-yes", "a voter answers COND_YES(OrchSet): OrchId above N, N not its own node")
	ruleAlreadyDone   = rules.Rule("EO-5 already-done", "N is the voter's node and its orchestrator is Ready or Committed: ALREADY_DONE, NO")
	ruleGaveUpYes     = rules.Rule("EO-5 gave-up yes", "N is the voter's node and its orchestrator gave up (GAVE_UP); nothing else in OrchSet: YES")
	ruleGaveUpCond    = rules.Rule("EO-5 gave-up cond-yes", "N is the voter's node and its orchestrator gave up: COND_YES(OrchSet − {N})")
	ruleCondWait      = rules.Rule("EO-5 cond-yes wait", "the orchestrator keeps a COND_YES whose set is not all in YesVotes")
	ruleCondPartial   = rules.Rule("EO-5 cond-yes partial", "a COND_YES whose set is only partly in YesVotes stays conditional")
	ruleCondConvert   = rules.Rule("EO-5 cond-yes convert", "a COND_YES becomes YES once every node of its set is in YesVotes")
	ruleReady         = rules.Rule("EO-5 ready", "a majority of YES (its own voter's included): Ready, rm_yes")
	ruleImpossible    = rules.Rule("EO-5 impossible", "more than half of the voters said NO: rm_no, UN_VOTE, observer")
	ruleTie           = rules.Rule("EO-5 tie", "exactly half of an even stage said NO: a majority is impossible: rm_no, UN_VOTE, observer")
	ruleOwnNo         = rules.Rule("EO-5 own no", "the orchestrator's own voter said NO (it holds a vote for a higher one): rm_no")
	ruleLateYes       = rules.Rule("EO-5 late yes", "a YES arriving after Ready joins YesVotes (phase 2 must reach it)")
	ruleStaleAnswer   = rules.Rule("EO-5 stale answer", "a (COND_)YES for a Tid the orchestrator no longer runs is answered as an INQUIRY")
	ruleHigherPrioOut = rules.Rule("EO-5 gave up", "HIGHER_PRIO at an Unknown orchestrator: GAVE_UP, rm_no, UN_VOTE, observer")
)

// EO-6 voting, phase 2 (§4).
var (
	ruleForgetSend   = rules.Rule("EO-6 committed", "rm_commit: the orchestrator is Committed and sends FORGET to every voter")
	ruleForgetResend = rules.Rule("EO-6 forget resend", "the Committed orchestrator re-sends FORGET to voters that have not ACKed")
	ruleForgetDone   = rules.Rule("EO-6 forget acked", "every voter ACKed FORGET: the orchestrator's state becomes Unknown")
	ruleForget       = rules.Rule("EO-6 forget", "a voter on FORGET forgets the stage (record, agent, OrchSet) and ACKs")
	ruleForgetDrop   = rules.Rule("EO-6 forget drops put", "FORGET drops a Put of the stage still in doubt here")
	ruleGiveUp       = rules.Rule("EO-6 give-up", "FORGET from another orchestrator: GIVE_UP to the local one, which aborts")
	ruleRollback     = rules.Rule("EO-6 rollback", "rm_rollback at a Ready orchestrator: Unknown, UN_VOTE to its voters")
	ruleUnVote       = rules.Rule("EO-6 un-vote", "a voter on UN_VOTE withdraws the matching vote from OrchSet")
	ruleUnVoteOther  = rules.Rule("EO-6 un-vote other", "an UN_VOTE that matches no entry (another Tid) is ignored")
)

// EO-7 failure recovery (§4).
var (
	ruleInquiry          = rules.Rule("EO-7 inquiry", "a voter holding votes sends INQUIRY to their orchestrators, every Timing.Inquiry")
	ruleInquiryReady     = rules.Rule("EO-7 inquiry ready", "INQUIRY at a Ready orchestrator: the voter joins YesVotes")
	ruleInquiryCommitted = rules.Rule("EO-7 inquiry committed", "INQUIRY at a Committed orchestrator: FORGET")
	ruleInquiryRunning   = rules.Rule("EO-7 inquiry running", "INQUIRY while the voted transaction still votes: ignored")
	ruleInquiryUnknown   = rules.Rule("EO-7 inquiry unknown", "INQUIRY about a transaction the orchestrator does not run: UN_VOTE")
	ruleRecoverReady     = rules.Rule("EO-7 recover ready", "a restarted orchestrator found Ready learns abort: Unknown, UN_VOTE to every voter")
	ruleRecoverCommitted = rules.Rule("EO-7 recover committed", "a restarted orchestrator found Committed re-sends FORGET")
	ruleRecoverVoter     = rules.Rule("EO-7 recover voter", "a restarted voter holding votes sends INQUIRY at once")
)

// EO-8 selection (§5).
var (
	ruleInitialWorker   = rules.Rule("EO-8 initial worker", "the highest-priority node of a newly Active stage becomes its worker")
	ruleInitialObserver = rules.Rule("EO-8 initial observer", "the other nodes of a newly Active stage observe the worker")
	ruleRestartObserver = rules.Rule("EO-8 restart observer", "a restarted node resumes every Active stage as an observer")
	ruleAlive           = rules.Rule("EO-8 alive", "the worker sends I_AM_ALIVE to the stage's other nodes, every Timing.Alive")
	ruleMonitor         = rules.Rule("EO-8 monitor", "an observer (or a selecting node) hears a worker and monitors it")
	ruleSuspect         = rules.Rule("EO-8 suspect", "an observer's monitor times out: it starts a selection")
	ruleAsk             = rules.Rule("EO-8 ask", "a selecting node sends ARE_YOU_THERE to every higher-priority stage node")
	ruleTop             = rules.Rule("EO-8 top", "a selecting node with no higher-priority stage node is selected at once")
	ruleThere           = rules.Rule("EO-8 there", "a live stage node answers ARE_YOU_THERE with I_AM_THERE")
	ruleThereAlive      = rules.Rule("EO-8 there alive", "a worker answers ARE_YOU_THERE also with I_AM_ALIVE")
	ruleThereTakeover   = rules.Rule("EO-8 there takeover", "an observer asked while its worker has been silent starts its own selection (bully)")
	ruleThereCommitted  = rules.Rule("EO-8 there committed", "a Committed orchestrator still collecting FORGET ACKs answers ARE_YOU_THERE")
	ruleNoAnswer        = rules.Rule("EO-8 no answer", "no I_AM_THERE in time: the selecting node is selected")
	ruleAnswered        = rules.Rule("EO-8 answered", "an I_AM_THERE arrived: the selecting node waits for the new worker")
	ruleWaitOver        = rules.Rule("EO-8 wait over", "no new worker announced itself within Timing.SelectedWait: the selection starts over")
	ruleSelected        = rules.Rule("EO-8 selected", "a selected node sends I_AM_SELECTED to the stage's other nodes and becomes worker")
	ruleStepDown        = rules.Rule("EO-8 step down", "a worker hears a higher-priority worker; its orchestrator gives up (GAVE_UP): observer")
	ruleStayWorker      = rules.Rule("EO-8 stay worker", "a worker hears a higher-priority worker but its orchestrator is Ready: ALREADY_DONE, it stays")
	ruleClaim           = rules.Rule("EO-8 claim", "majority variant: the selected node repeats I_AM_SELECTED until a majority ACKs")
	ruleClaimAck        = rules.Rule("EO-8 claim ack", "majority variant: a stage node ACKs I_AM_SELECTED")
	ruleClaimWon        = rules.Rule("EO-8 claim won", "majority variant: a majority ACKed (the claimant counted): worker")
	ruleClaimYield      = rules.Rule("EO-8 claim yield", "majority variant: a claimant hears a higher-priority I_AM_SELECTED or I_AM_ALIVE: observer")
)

func init() {
	rules.Unbranched("EO-4 stable state", "every record (stage record, OrchSet, transaction state) is written through in the call that changes it (node.go store*); Inspect and the EO-4 invariants read it, no branch decides it")
	rules.Unbranched("EO-4 atomic activation", "a stage becomes Active at every next-stage node through the Puts of one transaction: EO-3 put commit is its branch")
	rules.Unbranched("EO-8 several workers", "several workers of one stage are allowed: no branch prevents them, voting (EO-5) lets one commit")
}
