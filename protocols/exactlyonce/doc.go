// Package exactlyonce implements the exactly-once mobile agent protocol of Rothermel
// and Straßer, "A Protocol for Preserving the Exactly-Once Property of Mobile Agents"
// (Universität Stuttgart, Bericht 1997/18), as pure simulator nodes, together with the
// paper's simple protocol (§2) as a baseline.
//
// An agent runs in stages along an itinerary; every stage has a set of nodes with
// priorities. The highest-priority node is the worker, the others observe it. A stage
// transaction — Begin; Get(agent); Execute(agent); Put(agent, next stage record) to
// all next-stage nodes; Commit — runs at the worker under two-phase commit. The
// worker's orchestrator, a resource manager of that transaction, commits only if a
// majority of the stage's voters agree, so one stage transaction commits per stage
// even when observers, fearing the worker dead, select a second worker.
//
// # Where the paper's rules live
//
// rules.go is the rule map: a tag per case of every numbered rule of the digest
// ("EO-5 cond-yes", "EO-5 tie", "EO-8 ask", ...), each marked with out.Cover where its
// branch acts, and the rules without a branch of their own with the reason. By file:
//
//	EO-1 simple protocol (§2)       Config.Simple; tm.go (the same TM, one node per stage)
//	EO-2 stage transaction (§3)     tm.go begin, putAndCommit, nextNodes, tmCommit
//	EO-3 TM, XA RMs, crash-safe 2PC tm.go (TM, queue manager), resource.go (resource RM), orch.go
//	EO-4 stable state               node.go (keys), orch.go (transaction state), voter.go (OrchSet)
//	EO-5 voting phase 1             voter.go voterOnVote; orch.go orchOnAnswer, orchHigherPrio
//	EO-6 voting phase 2             orch.go orchCommit, orchRollback; voter.go voterOnForget, voterOnUnVote
//	EO-7 failure recovery           voter.go voterInquire; orch.go orchOnInquiry, orchRecover; node.go recover
//	EO-8 selection (§5)             select.go; Config.MajoritySelect
//
// and the rules' decisions themselves in policy.go: ChoosePutTargets (EO-1, EO-2),
// AnswerStatus (EO-3), DecideVote, CountVotes, CondYesHolds (EO-5), UnVoteMatches
// (EO-6), AnswerInquiry (EO-7), HigherNodes (EO-8).
//
// Policy (policy.go) names the protocol's decision points as hooks — a voter's answer,
// an orchestrator's tally and its conversion of COND_YES, the answers to INQUIRY and
// STATUS, the Put targets, whom a selection asks, ... —, each nil for the rule as the
// paper gives it (the exported function its comment names). Tests, and the scenario
// package's -p bug= variants, plant broken variants through them; the protocol's code
// holds no broken variant.
//
// Observations (observe.go) are what the checkers read; Inspect lists a node's stable
// records without exposing the storage layout.
//
// # Choices the paper leaves open
//
// Itinerary and launch. Stage 0 of an itinerary is the launch stage: exactly one node,
// the agent's home, into whose input queue the owner hands the agent (§2: "once the
// agent has been stored in the initial queue ... the owner can be informed"; Fig. 2's
// S1 has no observers). The Launch input stores the agent there, which is what
// "accepted" means. Priorities are ranks, 1 the highest (Fig. 2 labels the
// highest-priority node "1"). The last stage's commit completes the agent (observation
// Done; §2: "the last node ... simply destroys the agent").
//
// Two-phase commit: presumed abort. The coordinator logs only commit decisions (key
// "c/N/S"), in the same atomic step as the local resource managers' rm_commit and
// before any COMMIT leaves, re-sends COMMIT until every remote participant ACKs, then
// deletes the record. A participant in doubt asks with STATUS; a coordinator with
// neither a commit record nor a running transaction of that Tid answers ABORT. ABORT
// is also sent when a transaction aborts, as a courtesy. Local resource managers —
// input-queue manager (the Get), resource service (the Execute's reservation) and
// orchestrator — are called as functions; a resource manager's prepared state is
// stable ("rp/..", the orchestrator's Ready). A coordinator crash in phase 1 aborts
// (presumed abort), so an orchestrator found Ready at restart learns "abort" from its
// local TM at once (EO-7: "waits until it is informed by the local TM"), rolls back
// and sends UN_VOTE to every voter of the stage (YesVotes was volatile). Tids are
// (node, a sequence number kept in stable storage).
//
// Local interactions. A node is one state machine: TM, queue manager, resource
// service, orchestrator, voter and selection monitor. HIGHER_PRIO / ALREADY_DONE /
// GAVE_UP / GIVE_UP and the rm_* calls are function calls; protocol messages a node
// sends to itself (a VOTE to its own voter, FORGET to its own voter, ...) go through a
// local queue drained before the handler returns. All of it is atomic with the input
// that caused it, and none of it counts as a network message.
//
// Execute takes Config.Work (a timer); voting starts at Commit, as in the paper, so a
// worker that crashes while executing holds no votes and its observers take over
// cleanly. The resource service isolates stage transactions by strict two-phase
// locking per pool (a worker waits for the pool), and deliberately does not
// deduplicate: exactly-once effects are the protocol's job, and EO-P2 checks them.
//
// Voter (EO-5, EO-6, EO-7):
//   - Only the voter of an Active stage votes. A VOTE for a stage that is not Active
//     here — its Put still in doubt, or the stage already forgotten — is ignored; the
//     orchestrator re-sends it.
//   - OrchSet entries carry the Tid the vote was given for. UN_VOTE removes an entry
//     only if the Tid matches, INQUIRY carries the Tid, and an orchestrator answers an
//     INQUIRY with UN_VOTE when it runs no transaction with that Tid (the paper's
//     "Unknown with no active transaction", made exact). Without Tids a late UN_VOTE
//     answering an old INQUIRY could withdraw a newer vote of the same orchestrator.
//   - A VOTE from an orchestrator already in OrchSet (a new transaction, or a re-sent
//     VOTE) is judged against the other entries, and replaces its old entry: the
//     paper covers only "lower than N" and "higher than N". An older transaction of
//     that orchestrator is over (FIFO links deliver its UN_VOTE first, when it sent
//     one).
//   - NO does not remove an entry: a COND_YES given earlier may already count as YES at
//     the orchestrator.
//   - On FORGET for a stage that is not Active here, prepared Puts of that stage are
//     dropped and FORGET is ACKed: the stage is over, and a later COMMIT of such a Put
//     finds nothing prepared (it is only ACKed), so it cannot bring the stage back.
//
// Orchestrator (EO-5, EO-6, EO-7):
//   - Per voter and Tid, YES and NO are final; a COND_YES may be replaced by a newer
//     answer. VOTE is re-sent every Timing.VoteResend to voters whose answer is not
//     final (unanswered or COND_YES), since their OrchSet may have changed.
//   - Deviation (needed for EO-I1): an orchestrator becomes Ready only with a majority
//     that includes its own node's voter, and gives up (majority impossible) if its own
//     voter says NO. The paper lets a local voter that already voted for a
//     higher-priority orchestrator H answer NO to its own orchestrator N, and N still
//     collect a majority from the others. H's COND_YES({N}) votes then turn into YES
//     through the local voter's earlier YES for H, so H and N are both Ready. The
//     simulator's swarm found it (the seed that did no longer does: the swarm's
//     draws changed since); a Policy.Tally that ignores the own vote restores the
//     literal rule (-p bug=ready-without-own-vote), and the model checker finds the
//     violation (pinned in the scenario package's model tests). The paper's own
//     correctness argument assumes exactly this rule: a node's YES for a higher
//     orchestrator certifies that its local orchestrator gave up.
//   - YES votes arriving after Ready are added to YesVotes (phase 2 must reach them). A
//     (COND_)YES for a Tid the orchestrator no longer runs is answered at once as an
//     INQUIRY would be.
//   - GIVE_UP (the local voter got FORGET from another orchestrator) aborts without
//     UN_VOTE: every voter forgets the stage anyway.
//   - A Committed orchestrator still collecting FORGET ACKs answers ARE_YOU_THERE: the
//     stage has a worker, and it is done.
//
// Transaction manager and worker: the phase-1 timeout (Timing.Prepare) covers every
// participant, the orchestrator's voting included; on a timeout or a remote rm_no the
// worker restarts the stage transaction after Timing.Retry plus jitter ("the
// orchestrator's node restarts the transaction"); on the orchestrator's rm_no it
// becomes an observer (EO-5). Next-stage membership follows §3 fn. 4 ("the observers
// for the next stage can be determined on the fly from the set of available nodes"):
// a node that missed a PREPARE deadline is suspected until anything is heard from it,
// and Puts leave suspected nodes out as long as a majority of the next stage's
// itinerary nodes remain; Config.StaticNext always Puts to every node.
//
// Selection (EO-8): the worker sends I_AM_ALIVE every Timing.Alive, the first one
// Alive after it became worker (a selected worker has just announced itself with
// I_AM_SELECTED; observers of a fresh stage wait Timing.Monitor before suspecting).
// A restarted node resumes every Active stage as an observer; selection decides who
// works (a bully-style restart would disturb a working successor). A worker answers
// ARE_YOU_THERE with I_AM_THERE and an immediate I_AM_ALIVE; an observer that has not
// heard a worker for two Alive periods answers I_AM_THERE and starts its own selection
// (the bully algorithm's "the higher node takes over"). An observer that got
// I_AM_THERE waits Timing.SelectedWait for the new worker, then starts over. The
// majority-ACK variant (§5, last paragraph) is off by default (Config.MajoritySelect):
// the initiator counts itself, only observers ACK, and it yields to a higher-priority
// I_AM_SELECTED or I_AM_ALIVE.
//
// Simple protocol (EO-1): the same node with Config.Simple: each stage runs on its
// highest-priority node only, without orchestrator, voters or selection; the stage
// transaction's Put goes to the next stage's highest-priority node; an aborted
// transaction is retried, and a crashed node resumes its queue after restart.
//
// # Model checking
//
// Five Config fields exist for the model checker (scenario package, model
// "exactlyonce") and are off in every simulation: MaxAttempts bounds the stage
// transactions and self-selections per node and stage, Resends the rounds of periodic
// re-sending, AbstractSelection replaces EO-8 by "an observer may become a worker at
// any time", Selectors restricts which nodes may select themselves (fewer competing
// orchestrators), and NoRecoveryTimers leaves out the STATUS and INQUIRY timers in
// crash-free configurations (without a crash they only ask again). The bound counters
// live in stable storage, so a restart does not renew them, and a retry or monitor
// timer that could only start what MaxAttempts forbids is not armed (a pending no-op
// timer would double the states to explore without adding a behaviour; this cut the
// crash-free model from 1.3 million states to 242,468).
// Maps of the node stay nil until first written, because the checker clones a node for
// every step.
//
// # What it cannot do (as in the paper)
//
// Like two-phase commit, the protocol blocks when a node dies for good at the wrong
// moment: a voter that holds a vote for an orchestrator that never comes back cannot
// tell it from one that is Ready, so it never votes for another; a next-stage node
// whose Put is in doubt when its coordinator dies stays in doubt. The scenario
// package's EO-P3 check exempts these cases (scenarios/exactlyonce/liveness.go: only
// when the orchestrator or coordinator is down for good, and only blocking it can
// cause), a stage that keeps no majority of up nodes, agents whose home node was down
// at launch, and — the paper assumes partitions heal — every agent of a run whose
// fault plan leaves a partition or cut unhealed. The EO-P4 experiment measures how
// much blocking remains.
package exactlyonce
