package exactlyonce

// One test per rule of the paper (Rothermel & Straßer 1997), tagged with the section
// and the requirement number of ../../../shared/specs/exactlyonce.md, in the spirit
// of etcd-io/raft's raft_paper_test.go. The network is driven by hand (harness_test.go).

import (
	"slices"
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

// route is the itinerary of most tests: launch at n0; stage 1 on n1 (worker), n2, n3;
// stage 2 on n4 alone.
const route = "n0 | n1,n2,n3 | n4"

// stage1Tx matches the VOTE and PREPARE messages of stage 1's transactions.
var stage1Tx = and(kind("VOTE", "PREPARE"), func(e envelope) bool { return e.msg.(staged).stage() == st(1, 1) })

// toStage1 launches agent 1 and delivers everything except stage 1's VOTEs and
// PREPAREs, so that stage 1 is Active at n1, n2, n3, and n1's stage transaction is in
// phase 1: its orchestrator asked for votes, its TM asked n4 to prepare the Put.
func toStage1(t *testing.T, mod func(*Config)) *net {
	h := newNet(t, 5, mod)
	h.launch(h.agent(1, route))
	h.deliver(not(stage1Tx))
	for _, n := range []sim.NodeID{1, 2, 3} {
		if _, ok := h.nodes[n].queue[st(1, 1)]; !ok {
			t.Fatalf("stage 1 not Active at n%d", n)
		}
	}
	return h
}

// §2 EO-1: "Begin_Transaction; Get(Agent); Execute(Agent); Put(Agent); Commit" moves
// the agent from queue to queue; the last node does not Put and the agent completes.
func TestEO1SimpleProtocolMovesAgentQueueToQueue(t *testing.T) {
	h := newNet(t, 5, func(c *Config) { c.Simple = true })
	h.launch(h.agent(1, route))
	h.deliverAll()
	done := obsOf[Done](h, ObsDone, -1)
	if len(done) != 1 || done[0].Node != 4 || len(done[0].Results) != 3 {
		t.Fatalf("done = %+v, want one completion at n4 with 3 results", done)
	}
	// Only the highest-priority node of stage 1 took part; no observers, no votes.
	if len(h.nodes[2].queue)+len(h.nodes[3].queue) != 0 || len(h.observed(ObsCondYes, -1)) != 0 {
		t.Fatal("the simple protocol involved observers")
	}
	for _, e := range h.queue {
		t.Fatalf("message left over: %v", e)
	}
	for i := range h.nodes {
		if len(h.nodes[i].queue) != 0 {
			t.Fatalf("n%d still queues the agent", i)
		}
	}
}

// §2 EO-1: "if T_i aborts due to a node or transaction failure, recovery undoes all of
// the agent's effects at N_i and restores the agent ... Any effects in Q_{i+1} are
// undone also. After recovery N_i continues normal processing."
func TestEO1SimpleAbortUndoesEffectsAndRetries(t *testing.T) {
	h := newNet(t, 5, func(c *Config) { c.Simple = true })
	h.launch(h.agent(1, route))
	h.deliver(not(kind("PREPARED", "PREPARE")))
	h.deliver(and(kind("PREPARE", "PREPARED"), func(e envelope) bool { return e.from == 0 || e.to == 0 }))
	h.deliver(not(and(kind("PREPARE"), to(4))))
	// n1 executed stage 1 (a tentative seat) and asked n4 to prepare the Put; n1 crashes.
	if calls := obsOf[ResCall](h, ObsCall, 1); len(calls) != 1 {
		t.Fatalf("n1 made %d reservations, want 1", len(calls))
	}
	h.deliverOne(kind("PREPARE")) // n4 prepares the Put
	h.crash(1)
	h.restart(1)
	// Recovery: the reservation was rolled back and the agent is back in n1's queue.
	if aborts := obsOf[ResAbort](h, ObsAbort, 1); len(aborts) != 1 {
		t.Fatalf("n1 rolled back %d reservations, want 1", len(aborts))
	}
	if _, ok := h.nodes[1].queue[st(1, 1)]; !ok {
		t.Fatal("the agent is not back in n1's input queue")
	}
	// n4's prepared Put is undone (presumed abort) and n1 retries to completion.
	h.fire(4, "st/")
	h.deliverAll()
	if h.stored(4, tidKey(prePrep, Tid{Node: 1, Seq: 1})) {
		t.Fatal("n4 still holds the aborted Put")
	}
	if len(h.observed(ObsDone, -1)) != 1 {
		t.Fatal("the agent did not complete after recovery")
	}
	if rs := obsOf[ResReturn](h, ObsReturn, 1); len(rs) != 1 || rs[0].Seat != 1 {
		t.Fatalf("n1 committed %+v, want one reservation of seat 1", rs)
	}
}

// §2 EO-1: "the agent is caught as long as the node is down": nothing moves while the
// node holding the agent is down.
func TestEO1SimpleBlocksWhileNodeDown(t *testing.T) {
	h := newNet(t, 5, func(c *Config) { c.Simple = true })
	h.launch(h.agent(1, route))
	h.deliver(not(stage1Tx))
	if _, ok := h.nodes[1].queue[st(1, 1)]; !ok {
		t.Fatal("the agent is not in n1's queue")
	}
	h.crash(1)
	h.deliverAll()
	if len(h.observed(ObsCommit, -1)) != 1 || len(h.observed(ObsDone, -1)) != 0 {
		t.Fatal("the agent moved on while n1, which holds it, was down")
	}
	h.restart(1)
	h.deliverAll()
	if len(h.observed(ObsDone, -1)) != 1 {
		t.Fatal("not completed after n1 restarted")
	}
}

// §3 EO-2: "a worker sends the agent not only to the (initial) worker but to all nodes
// of the next stage"; all Puts are in one transaction: no next-stage node has the stage
// before the commit, all have it after.
func TestEO2PutToAllNextStageNodesAtomically(t *testing.T) {
	h := newNet(t, 5, nil)
	h.launch(h.agent(1, route))
	prepares := h.queued(kind("PREPARE"))
	if len(prepares) != 3 {
		t.Fatalf("stage 0 sent %d PREPAREs, want 3 (n1, n2, n3)", len(prepares))
	}
	h.deliver(kind("PREPARE"))
	for _, n := range []sim.NodeID{1, 2, 3} {
		if _, ok := h.nodes[n].queue[st(1, 1)]; ok {
			t.Fatalf("n%d activated the stage before the commit", n)
		}
		if len(h.nodes[n].prepared) != 1 {
			t.Fatalf("n%d did not prepare the Put", n)
		}
	}
	h.deliver(kind("PREPARED"))
	h.deliver(kind("COMMIT"))
	for _, n := range []sim.NodeID{1, 2, 3} {
		e, ok := h.nodes[n].queue[st(1, 1)]
		if !ok || e.Agent.Hop != 1 || !slices.Equal(e.Record.NodeIDs(), []sim.NodeID{1, 2, 3}) {
			t.Fatalf("n%d: stage record %+v after the commit", n, e)
		}
	}
}

// §3, §5 EO-8: "Initially, the stage node with the highest priority becomes the
// worker, while all other nodes take over the observer role."
func TestEO2HighestPriorityIsInitialWorker(t *testing.T) {
	h := newNet(t, 5, nil)
	h.launch(h.agent(1, "n0 | n1:3,n2:1,n3:2 | n4"))
	h.deliver(not(stage1Tx))
	if h.role(2, st(1, 1)) != RoleWorker || h.role(1, st(1, 1)) != RoleObserver || h.role(3, st(1, 1)) != RoleObserver {
		t.Fatalf("roles n1 %v n2 %v n3 %v, want observer worker observer", h.role(1, st(1, 1)), h.role(2, st(1, 1)), h.role(3, st(1, 1)))
	}
}

// §3 fn. 4 EO-2: "the Get operations of the observer nodes are not part of the
// transaction": observers keep the agent until FORGET, after the commit.
func TestEO2ObserversGetOutsideTheTransaction(t *testing.T) {
	h := toStage1(t, nil)
	h.deliver(not(kind("FORGET")))
	if len(h.observed(ObsCommit, 1)) != 1 {
		t.Fatal("stage 1 did not commit")
	}
	if _, ok := h.nodes[2].queue[st(1, 1)]; !ok {
		t.Fatal("observer n2 lost the agent before FORGET")
	}
	h.deliverAll()
	if _, ok := h.nodes[2].queue[st(1, 1)]; ok {
		t.Fatal("observer n2 kept the agent after FORGET")
	}
}

// §4 EO-3: the commit decision is in stable storage before any COMMIT leaves
// (presumed abort: only commits are logged).
func TestEO3CommitLoggedBeforeCommitSent(t *testing.T) {
	h := newNet(t, 5, nil)
	h.launch(h.agent(1, route))
	h.deliver(kind("PREPARE"))
	h.deliverOne(kind("PREPARED"))
	h.deliverOne(kind("PREPARED"))
	out := h.call(0, sim.Input{Kind: sim.Receive, From: 3, Msg: h.queued(kind("PREPARED"))[0].msg})
	h.drop(kind("PREPARED"))
	sentCommit := slices.ContainsFunc(out.Sends(), func(e sim.Envelope) bool { return e.Msg.Kind() == "COMMIT" })
	logged := slices.ContainsFunc(out.Writes(), func(w sim.Write) bool { return w.Key == tidKey(preCommit, Tid{Node: 0, Seq: 1}) && !w.Delete })
	if !sentCommit || !logged {
		t.Fatalf("commit sent %v, logged in the same step %v", sentCommit, logged)
	}
	// The record goes once every participant ACKed.
	h.deliverAll()
	if h.stored(0, tidKey(preCommit, Tid{Node: 0, Seq: 1})) {
		t.Fatal("commit record kept after every ACK")
	}
}

// EO-3: the coordinator's crash in phase 1 aborts the transaction (presumed abort): an
// in-doubt participant asks and is told to abort.
func TestEO3CoordinatorCrashInPhase1IsPresumedAbort(t *testing.T) {
	h := newNet(t, 5, nil)
	h.launch(h.agent(1, route))
	h.deliver(kind("PREPARE"))
	h.crash(0)
	h.restart(0)
	h.fire(2, "st/")
	h.deliver(kind("STATUS"))
	if got := h.queued(kind("ABORT")); len(got) != 1 || got[0].to != 2 {
		t.Fatalf("STATUS answered with %v, want ABORT to n2", got)
	}
	h.deliver(kind("ABORT"))
	if len(h.nodes[2].prepared) != 0 {
		t.Fatal("n2 still in doubt after ABORT")
	}
}

// EO-3: a coordinator that crashes after logging its commit re-sends COMMIT after the
// restart until every participant ACKs.
func TestEO3CoordinatorRecoversLoggedCommit(t *testing.T) {
	h := newNet(t, 5, nil)
	h.launch(h.agent(1, route))
	h.deliver(kind("PREPARE", "PREPARED"))
	h.drop(kind("COMMIT")) // lost with the crash
	h.crash(0)
	if !h.stored(0, tidKey(preCommit, Tid{Node: 0, Seq: 1})) {
		t.Fatal("commit not logged")
	}
	h.restart(0)
	if got := h.queued(kind("COMMIT")); len(got) != 3 {
		t.Fatalf("restart re-sent %d COMMITs, want 3", len(got))
	}
	h.deliverAll()
	if len(h.observed(ObsDone, -1)) != 1 || h.stored(0, tidKey(preCommit, Tid{Node: 0, Seq: 1})) {
		t.Fatal("the agent did not complete, or the commit record stayed")
	}
}

// §4 EO-3: "From a TM's point of view the orchestrator is just another resource
// manager": rm_prepare starts the vote; only Ready (rm_yes) lets the TM commit.
func TestEO3OrchestratorIsAResourceManager(t *testing.T) {
	h := toStage1(t, nil)
	h.deliver(not(kind("VOTE", "YES", "NO", "COND_YES")))
	if len(h.observed(ObsCommit, 1)) != 0 {
		t.Fatal("stage 1 committed without votes")
	}
	if got := h.queued(kind("VOTE")); len(got) != 2 {
		t.Fatalf("%d VOTEs to the other voters, want 2 (n2, n3); the own vote is local", len(got))
	}
	h.deliverAll()
	if len(h.observed(ObsCommit, 1)) != 1 {
		t.Fatal("stage 1 did not commit after the votes")
	}
}

// §4 EO-4: an Active stage is a stage record in stable storage: StageId (AgentId,
// HopCount) and the stage's nodes with priorities; OrchSet is stable too.
func TestEO4StableStageRecordAndOrchSet(t *testing.T) {
	h := toStage1(t, nil)
	v, ok := h.stable[2].Peek(stageKey(preQueue, st(1, 1)))
	if !ok {
		t.Fatal("no stage record in n2's stable storage")
	}
	rec := v.(queueEntry).Record
	if rec.ID != st(1, 1) || !slices.Equal(rec.Nodes, []StageNode{{1, 1}, {2, 2}, {3, 3}}) {
		t.Fatalf("stage record %+v", rec)
	}
	h.deliverOne(and(kind("VOTE"), to(2)))
	h.crash(2)
	h.restart(2)
	if set := h.orchSetOf(2, st(1, 1)); len(set) != 1 || set[0].Orch != 1 {
		t.Fatalf("OrchSet after restart %+v, want the vote for n1", set)
	}
}

// §4 EO-5: "If OrchSet is empty ... OrchId is added to OrchSet and a YES ... is sent".
func TestEO5EmptyOrchSetVotesYes(t *testing.T) {
	h := toStage1(t, nil)
	h.deliverOne(and(kind("VOTE"), to(2)))
	if got := h.queued(kind("YES")); len(got) != 1 || got[0].from != 2 {
		t.Fatalf("n2 answered %v, want YES", got)
	}
	if set := h.orchSetOf(2, st(1, 1)); len(set) != 1 || set[0].Orch != 1 {
		t.Fatalf("OrchSet %+v, want {n1}", set)
	}
}

// voteFrom delivers a VOTE for stage (1,1) from orchestrator o with Tid t to voter v.
func (h *net) voteFrom(o, v sim.NodeID, seq uint32) {
	h.call(v, sim.Input{Kind: sim.Receive, From: o, Msg: Vote{Stage: st(1, 1), Tid: Tid{Node: o, Seq: seq}, Orch: o}})
}

// EO-5: "If OrchSet is not empty and OrchId has a lower priority than N, ... NO".
func TestEO5LowerThanHighestVotesNo(t *testing.T) {
	h := toStage1(t, nil)
	h.deliverOne(and(kind("VOTE"), to(3))) // n3 votes for n1
	h.voteFrom(2, 3, 7)                    // n2 (lower) asks n3
	if got := h.queued(and(kind("NO"), to(2))); len(got) != 1 {
		t.Fatalf("n3 answered n2 with %v, want NO", h.queued(to(2)))
	}
	if set := h.orchSetOf(3, st(1, 1)); len(set) != 1 {
		t.Fatalf("OrchSet %+v: NO must not add", set)
	}
}

// EO-5: "If N is not the voter's node, the voter immediately sends back a
// COND_YES(StageId, Tid, OrchSet, VoterId) and then adds OrchId to its OrchSet."
func TestEO5HigherThanOtherNodeVotesCondYes(t *testing.T) {
	h := toStage1(t, nil)
	h.drop(kind("VOTE"))
	h.voteFrom(2, 3, 7) // n3 votes YES for n2
	h.voteFrom(1, 3, 1) // then n1 (higher) asks
	got := h.queued(and(kind("COND_YES"), to(1)))
	if len(got) != 1 || !slices.Equal(got[0].msg.(CondYes).OrchSet, []sim.NodeID{2}) {
		t.Fatalf("n3 answered n1 with %v, want COND_YES({n2})", h.queued(to(1)))
	}
	set := h.orchSetOf(3, st(1, 1))
	if len(set) != 2 || set[0].Orch != 1 || set[1].Orch != 2 {
		t.Fatalf("OrchSet %+v, want {n1, n2} by priority", set)
	}
}

// selectSelf makes observer n of stage s select itself: its monitor times out, its
// ARE_YOU_THERE messages go unanswered (dropped), and its selection timer fires.
func (h *net) selectSelf(n sim.NodeID, s StageID) {
	h.t.Helper()
	before := len(obsOf[RoleChange](h, ObsRole, n))
	h.fire(n, string(stageTimer(tMonitor, s)))
	h.drop(and(kind("ARE_YOU_THERE"), func(e envelope) bool { return e.from == n }))
	if len(h.pending(n, string(stageTimer(tSelect, s)))) > 0 {
		h.fire(n, string(stageTimer(tSelect, s)))
	}
	if !slices.ContainsFunc(obsOf[RoleChange](h, ObsRole, n)[before:], func(c RoleChange) bool { return c.Role == RoleWorker && c.Selected }) {
		h.t.Fatalf("n%d was not selected as worker of %v", n, s)
	}
}

// EO-5: "If N equals the voter's node ... HIGHER_PRIO request to the local
// orchestrator, which returns ... ALREADY_DONE if the transaction state is already
// Committed or Ready. If ALREADY_DONE is returned, the voter sends a NO".
func TestEO5HigherThanLocalReadyOrchestratorVotesNo(t *testing.T) {
	h := toStage1(t, nil)
	h.drop(kind("VOTE", "I_AM_ALIVE")) // n1's votes and heartbeats never arrive
	h.selectSelf(2, st(1, 1))
	h.drop(kind("I_AM_SELECTED"))
	h.deliver(and(kind("VOTE", "YES"), not(to(1)), func(e envelope) bool { return e.from != 1 }))
	if h.orchState(2, st(1, 1)) != OrchReady {
		t.Fatal("n2 (own YES and n3's) not Ready")
	}
	h.voteFrom(1, 2, 1) // n1 outranks n2
	if got := h.queued(and(kind("NO"), to(1))); len(got) != 1 {
		t.Fatalf("n2 answered n1 with %v, want NO (ALREADY_DONE)", h.queued(to(1)))
	}
	if h.orchState(2, st(1, 1)) != OrchReady || h.role(2, st(1, 1)) != RoleWorker {
		t.Fatal("a Ready orchestrator must not give up")
	}
}

// EO-5: "... GAVE_UP to indicate its stage transaction has been aborted ... a
// COND_YES(StageId, Tid, OrchSet−{N}, VoterId) message otherwise"; the local
// orchestrator sends UN_VOTE, returns rm_no, and its node becomes an observer.
func TestEO5HigherThanLocalUnknownOrchestratorGivesUp(t *testing.T) {
	h := toStage1(t, nil)
	h.drop(kind("VOTE", "I_AM_ALIVE"))
	h.selectSelf(2, st(1, 1))
	h.drop(kind("VOTE", "I_AM_SELECTED", "PREPARE")) // n2 holds only its own YES
	if x := h.nodes[2].txs[st(1, 1)]; x == nil || !slices.Equal(x.yes, []sim.NodeID{2}) {
		t.Fatal("n2 is not collecting votes with its own YES")
	}
	h.voteFrom(1, 2, 1)
	if h.nodes[2].txs[st(1, 1)] != nil || h.role(2, st(1, 1)) != RoleObserver {
		t.Fatal("n2's orchestrator did not give up, or n2 did not become an observer")
	}
	if got := h.queued(and(kind("YES"), to(1))); len(got) != 1 {
		t.Fatalf("n2 answered n1 with %v, want YES (COND_YES of OrchSet−{n2} = ∅)", h.queued(to(1)))
	}
	if set := h.orchSetOf(2, st(1, 1)); len(set) != 1 || set[0].Orch != 1 {
		t.Fatalf("n2's OrchSet %+v, want {n1}", set)
	}
	if aborts := obsOf[ResAbort](h, ObsAbort, 2); len(aborts) != 1 {
		t.Fatal("n2's stage transaction was not rolled back")
	}
}

// EO-5: "this conditional yes becomes a real yes after all nodes in OrchSet voted yes
// ... checked when the pair is added to CondYesVotes and whenever YesVotes changes".
func TestEO5CondYesBecomesYesWhenConditionVotesYes(t *testing.T) {
	h := newNet(t, 6, nil)
	h.launch(h.agent(1, "n0 | n1,n2,n3,n4,n5 | n0"))
	h.deliver(not(stage1Tx))
	h.drop(stage1Tx)
	x := h.nodes[1].txs[st(1, 1)]
	recv := func(from sim.NodeID, m sim.Message) { h.call(1, sim.Input{Kind: sim.Receive, From: from, Msg: m}) }
	recv(3, CondYes{Stage: st(1, 1), Tid: x.tid, OrchSet: []sim.NodeID{2}, Voter: 3})
	recv(4, CondYes{Stage: st(1, 1), Tid: x.tid, OrchSet: []sim.NodeID{2, 5}, Voter: 4})
	if len(x.yes) != 1 || len(x.cond) != 2 {
		t.Fatalf("yes %v cond %v: a COND_YES alone must not count", x.yes, x.cond)
	}
	recv(2, Yes{Stage: st(1, 1), Tid: x.tid, Voter: 2})
	if !slices.Equal(x.yes, []sim.NodeID{1, 2, 3}) || len(x.cond) != 1 {
		t.Fatalf("after n2's YES: yes %v (want n3's COND_YES({n2}) converted), cond %v", x.yes, x.cond)
	}
	if h.orchState(1, st(1, 1)) != OrchReady {
		t.Fatal("3 of 5 YES: not Ready")
	}
}

// EO-5: "Once YesVotes contains a majority of votes, the orchestrator moves into the
// Ready state and then returns rm_yes to its local TM."
func TestEO5MajorityMakesReady(t *testing.T) {
	h := toStage1(t, nil)
	h.drop(and(kind("VOTE"), to(3)))
	h.deliver(kind("VOTE"))
	h.deliverOne(kind("YES"))
	if h.orchState(1, st(1, 1)) != OrchReady {
		t.Fatal("2 of 3 YES (own included): not Ready")
	}
	if got := obsOf[OrchChange](h, ObsOrch, 1); len(got) != 1 || got[0].State != OrchReady {
		t.Fatalf("orchestrator transitions %+v", got)
	}
}

// EO-5: "If a majority becomes impossible (i.e., at least half of the voters voted
// NO), the orchestrator returns a rm_no ..., sends an UN_VOTE ... to all voters
// recorded in its YesVotes and CondYesVotes ... The orchestrator's node then changes
// from the worker to the observer role."
func TestEO5MajorityImpossibleGivesUp(t *testing.T) {
	h := newNet(t, 5, nil)
	h.launch(h.agent(1, "n0 | n1,n2,n3,n4 | n0"))
	h.deliver(not(stage1Tx))
	h.drop(stage1Tx)
	x := h.nodes[1].txs[st(1, 1)]
	recv := func(from sim.NodeID, m sim.Message) { h.call(1, sim.Input{Kind: sim.Receive, From: from, Msg: m}) }
	recv(2, CondYes{Stage: st(1, 1), Tid: x.tid, OrchSet: []sim.NodeID{0}, Voter: 2})
	recv(3, No{Stage: st(1, 1), Tid: x.tid, Voter: 3})
	if h.nodes[1].txs[st(1, 1)] == nil {
		t.Fatal("gave up after 1 NO of 4")
	}
	recv(4, No{Stage: st(1, 1), Tid: x.tid, Voter: 4})
	if h.nodes[1].txs[st(1, 1)] != nil || h.role(1, st(1, 1)) != RoleObserver {
		t.Fatal("2 NO of 4 (half): the orchestrator must give up and its node observe")
	}
	var unvoted []sim.NodeID
	for _, u := range obsOf[UnVoteSent](h, ObsUnVote, 1) {
		unvoted = append(unvoted, u.Voter)
	}
	slices.Sort(unvoted)
	if !slices.Equal(unvoted, []sim.NodeID{1, 2}) {
		t.Fatalf("UN_VOTE went to %v, want YesVotes ∪ CondYesVotes = {n1, n2}", unvoted)
	}
	if h.orchSetOf(1, st(1, 1)) != nil {
		t.Fatal("n1's own voter still holds the withdrawn vote")
	}
}

// EO-5 (deviation, see the package comment): an orchestrator whose own voter answers
// NO gives up; a majority without the own voter does not make it Ready.
func TestEO5OwnVoterNoMeansGiveUp(t *testing.T) {
	h := toStage1(t, nil)
	h.drop(kind("VOTE", "I_AM_ALIVE"))
	h.voteFrom(1, 3, 1) // n3 voted for n1 (rank 1); n3's orchestrator is not running
	h.drop(to(1))
	h.selectSelf(3, st(1, 1)) // n3 selects itself: its own voter says NO (n1 outranks n3)
	if h.nodes[3].txs[st(1, 1)] != nil || h.role(3, st(1, 1)) != RoleObserver {
		t.Fatal("n3 kept collecting votes although its own voter said NO")
	}
	if len(obsOf[OrchChange](h, ObsOrch, 3)) != 0 {
		t.Fatal("n3 became Ready")
	}
}

// EO-5: the VOTE request is re-sent periodically "to all stage nodes that have not yet
// answered".
func TestEO5VoteResentToUnanswered(t *testing.T) {
	h := toStage1(t, nil)
	h.deliverOne(and(kind("VOTE"), to(2)))
	h.drop(kind("VOTE", "YES"))
	h.fire(1, string(stageTimer(tVote, st(1, 1))))
	// n2 answered YES (dropped on the way, so n1 did not see it) and n3 did not
	// answer: both are asked again.
	var got []sim.NodeID
	for _, e := range h.queued(kind("VOTE")) {
		got = append(got, e.to)
	}
	if !slices.Equal(got, []sim.NodeID{2, 3}) {
		t.Fatalf("VOTE re-sent to %v, want [2 3]", got)
	}
	h.deliver(kind("VOTE", "YES"))
	h.fire(1, "prep/") // let the check stop here: n1 is Ready, no more re-sends
	if len(h.pending(1, "vote/")) != 0 {
		t.Fatal("VOTE still re-sent after the transaction ended")
	}
}

// §4 EO-6: "When rm_commit is called, the orchestrator atomically enters the Committed
// state ... sends a FORGET ... periodically resends FORGET until it received an ACK
// from each voter. When the ACKs are complete, it moves to the Unknown state."
func TestEO6CommitForgetsUntilEveryVoterAcks(t *testing.T) {
	h := toStage1(t, nil)
	h.deliver(not(kind("FORGET")))
	if h.orchState(1, st(1, 1)) != OrchCommitted {
		t.Fatal("n1 not Committed after the commit")
	}
	h.deliverOne(and(kind("FORGET"), to(2)))
	h.drop(and(kind("FORGET"), to(3)))
	h.deliver(kind("ACK"))
	h.fire(1, string(stageTimer(tForget, st(1, 1))))
	if got := h.queued(kind("FORGET")); len(got) != 1 || got[0].to != 3 {
		t.Fatalf("FORGET re-sent as %v, want only to n3", got)
	}
	h.deliverAll()
	if h.orchState(1, st(1, 1)) != OrchUnknown || len(h.pending(1, "fgt/")) != 0 {
		t.Fatal("n1 not Unknown after every ACK")
	}
}

// EO-6: "A voter receiving FORGET atomically goes into the Unknown stage state ...
// sends back an ACK ... removes the stage's OrchSet. If there happens to be a local
// orchestrator different from OrchId, the voter sends GIVE_UP to this orchestrator".
func TestEO6ForgetRemovesStageAndGivesUpLocalOrchestrator(t *testing.T) {
	h := toStage1(t, nil)
	h.drop(and(kind("VOTE"), to(2)))
	h.drop(and(kind("I_AM_ALIVE"), to(2)))
	h.selectSelf(2, st(1, 1)) // n2 competes
	h.drop(and(kind("VOTE", "I_AM_SELECTED", "PREPARE"), func(e envelope) bool { return e.from == 2 }))
	if h.nodes[2].txs[st(1, 1)] == nil {
		t.Fatal("n2 runs no transaction")
	}
	h.deliver(not(to(2)))
	h.drop(and(kind("I_AM_ALIVE"), to(2)))
	h.deliver(and(kind("FORGET"), to(2)))
	if _, ok := h.nodes[2].queue[st(1, 1)]; ok || h.stored(2, stageKey(preQueue, st(1, 1))) || h.stored(2, stageKey(preOrchSet, st(1, 1))) {
		t.Fatal("n2 kept the stage after FORGET")
	}
	if h.nodes[2].txs[st(1, 1)] != nil {
		t.Fatal("n2's orchestrator did not get GIVE_UP")
	}
	if got := h.queued(and(kind("ACK"), to(1))); len(got) != 1 {
		t.Fatal("n2 did not ACK")
	}
}

// EO-6: "If the orchestrator receives rm_abort ... enters Unknown, UN_VOTE to YesVotes
// or CondYesVotes. Then the orchestrator's node restarts the transaction. Voters
// receiving an UN_VOTE remove OrchId from their OrchSet."
func TestEO6AbortUnVotesAndRestarts(t *testing.T) {
	h := toStage1(t, nil)
	h.deliver(kind("VOTE", "YES"))
	h.drop(and(kind("PREPARE"), to(4))) // n4 never answers: phase 1 times out
	if h.orchState(1, st(1, 1)) != OrchReady {
		t.Fatal("n1 not Ready")
	}
	h.fire(1, "prep/")
	if h.orchState(1, st(1, 1)) != OrchUnknown {
		t.Fatal("n1 still Ready after the abort")
	}
	h.deliver(kind("UN_VOTE"))
	for _, n := range []sim.NodeID{1, 2, 3} {
		if set := h.orchSetOf(n, st(1, 1)); set != nil {
			t.Fatalf("n%d still holds %v after UN_VOTE", n, set)
		}
	}
	h.fire(1, "retry/")
	if x := h.nodes[1].txs[st(1, 1)]; x == nil || x.tid.Seq != 2 {
		t.Fatal("n1 did not restart the stage transaction with a new Tid")
	}
	// n4 missed the deadline and is suspected, but a Put needs a majority of the next
	// stage: the only node is asked again.
	if got := h.queued(kind("PREPARE")); len(got) != 1 || got[0].to != 4 {
		t.Fatalf("PREPARE %v, want to n4", got)
	}
}

// §3 fn. 4 EO-2: "the observers for the next stage can be determined on the fly from
// the set of available nodes": a next-stage node that missed the PREPARE deadline is
// left out of the next attempt (a majority remains), until it is heard from.
func TestEO2PutLeavesOutUnavailableNextStageNodes(t *testing.T) {
	h := newNet(t, 6, nil)
	h.launch(h.agent(1, "n0 | n1,n2,n3 | n4,n5,n0"))
	h.deliver(not(to(5)))
	h.drop(to(5)) // n5 never answers the PREPARE
	h.fire(1, "prep/")
	h.fire(1, "retry/")
	h.deliver(not(to(5)))
	var next []sim.NodeID
	for _, c := range obsOf[Committed](h, ObsCommit, 1) {
		next = c.Next
	}
	if !slices.Equal(next, []sim.NodeID{4, 0}) {
		t.Fatalf("stage 2 record %v, want [4 0] (n5 left out)", next)
	}
	// Anything heard from n5 clears the suspicion.
	h.call(1, sim.Input{Kind: sim.Receive, From: 5, Msg: IAmThere{Stage: st(9, 9)}})
	if h.nodes[1].suspects[5] {
		t.Fatal("n5 still suspected after n1 heard from it")
	}
	// With StaticNext the Put always goes to every node.
	hs := newNet(t, 6, func(c *Config) { c.StaticNext = true })
	hs.launch(hs.agent(1, "n0 | n1,n2,n3 | n4,n5,n0"))
	hs.deliver(not(to(5)))
	hs.drop(to(5))
	hs.fire(1, "prep/")
	hs.fire(1, "retry/")
	if got := hs.queued(and(kind("PREPARE"), to(5))); len(got) != 1 {
		t.Fatal("StaticNext left a node out")
	}
}

// EO-6: an UN_VOTE withdraws only the vote it names (Tid), not a newer one.
func TestEO6UnVoteMatchesTid(t *testing.T) {
	h := toStage1(t, nil)
	h.drop(kind("VOTE"))
	h.voteFrom(1, 2, 5)
	h.call(2, sim.Input{Kind: sim.Receive, From: 1, Msg: UnVote{Stage: st(1, 1), Tid: Tid{Node: 1, Seq: 4}, Orch: 1}})
	if set := h.orchSetOf(2, st(1, 1)); len(set) != 1 {
		t.Fatal("an UN_VOTE for an older Tid withdrew the newer vote")
	}
	h.call(2, sim.Input{Kind: sim.Receive, From: 1, Msg: UnVote{Stage: st(1, 1), Tid: Tid{Node: 1, Seq: 5}, Orch: 1}})
	if set := h.orchSetOf(2, st(1, 1)); set != nil {
		t.Fatal("the matching UN_VOTE did not withdraw the vote")
	}
}

// §4 EO-7: "When the voter times out while waiting on the response, it sends an
// INQUIRY message ... periodically".
func TestEO7VoterInquiresUntilAnswered(t *testing.T) {
	h := toStage1(t, nil)
	h.deliverOne(and(kind("VOTE"), to(2)))
	h.drop(kind("YES"))
	for i := 0; i < 2; i++ {
		h.fire(2, "inq/")
		if got := h.queued(and(kind("INQUIRY"), to(1))); len(got) != 1 {
			t.Fatalf("round %d: INQUIRY %v", i, got)
		}
		h.drop(kind("INQUIRY"))
	}
	if len(h.pending(2, "inq/")) != 1 {
		t.Fatal("inquiry timer not re-armed")
	}
}

// EO-7: "If the transaction state is Ready, the orchestrator adds VoterId to its
// YesVotes ... Committed → FORGET ... Unknown: no active transaction → UN_VOTE; an
// active transaction (voting in progress) → the INQUIRY can be ignored."
func TestEO7InquiryAnswers(t *testing.T) {
	h := toStage1(t, nil)
	x := h.nodes[1].txs[st(1, 1)]
	inquire := func(from sim.NodeID, t Tid) {
		h.call(1, sim.Input{Kind: sim.Receive, From: from, Msg: Inquiry{Stage: st(1, 1), Tid: t, Voter: from}})
	}
	// Voting in progress: ignored.
	inquire(3, x.tid)
	if len(h.queued(and(to(3), kind("UN_VOTE", "FORGET")))) != 0 {
		t.Fatal("answered an INQUIRY during voting")
	}
	// No transaction with that Tid: UN_VOTE.
	inquire(3, Tid{Node: 1, Seq: 99})
	if len(h.queued(and(to(3), kind("UN_VOTE")))) != 1 {
		t.Fatal("no UN_VOTE for a Tid the orchestrator does not run")
	}
	h.drop(to(3))
	// Ready: the voter joins YesVotes.
	h.deliverOne(and(kind("VOTE"), to(2)))
	h.deliverOne(kind("YES"))
	h.drop(kind("VOTE"))
	inquire(3, x.tid)
	if h.orchState(1, st(1, 1)) != OrchReady || !slices.Contains(x.yes, 3) {
		t.Fatalf("Ready orchestrator did not add n3 to YesVotes: %v", x.yes)
	}
	// Committed: FORGET.
	h.deliver(not(kind("FORGET", "ACK")))
	h.drop(kind("FORGET"))
	inquire(3, x.tid)
	if len(h.queued(and(to(3), kind("FORGET")))) != 1 {
		t.Fatal("Committed orchestrator did not answer FORGET")
	}
}

// EO-7: "If the transaction is Ready after restart, the orchestrator waits until it is
// informed by the local TM about the transaction's outcome" — under presumed abort the
// local TM has no commit record: abort, UN_VOTE to every voter.
func TestEO7RestartInReadyRollsBack(t *testing.T) {
	h := toStage1(t, nil)
	h.deliver(kind("VOTE", "YES"))
	h.drop(kind("PREPARE"))
	if h.orchState(1, st(1, 1)) != OrchReady {
		t.Fatal("n1 not Ready")
	}
	h.crash(1)
	if h.orchState(1, st(1, 1)) != OrchReady {
		t.Fatal("Ready did not survive the crash")
	}
	h.restart(1)
	if h.orchState(1, st(1, 1)) != OrchUnknown {
		t.Fatal("Ready orchestrator not rolled back at restart")
	}
	var unvoted []sim.NodeID
	for _, e := range h.queued(kind("UN_VOTE")) {
		unvoted = append(unvoted, e.to)
	}
	if !slices.Equal(unvoted, []sim.NodeID{2, 3}) {
		t.Fatalf("UN_VOTE to %v, want every other voter [2 3] (and n1's own, locally)", unvoted)
	}
	if h.orchSetOf(1, st(1, 1)) != nil {
		t.Fatal("n1's own voter kept its vote")
	}
	if h.role(1, st(1, 1)) != RoleObserver {
		t.Fatal("a restarted node resumes as an observer")
	}
}

// EO-7: "If the transaction is already Committed instead, the orchestrator sends
// FORGET to all voters of the stage and collects the ACKs."
func TestEO7RestartCommittedResendsForget(t *testing.T) {
	h := toStage1(t, nil)
	h.deliver(not(kind("FORGET")))
	h.drop(kind("FORGET"))
	h.crash(1)
	h.restart(1)
	var got []sim.NodeID
	for _, e := range h.queued(kind("FORGET")) {
		got = append(got, e.to)
	}
	if !slices.Equal(got, []sim.NodeID{2, 3}) {
		t.Fatalf("FORGET after restart to %v, want [2 3] (n1's own voter forgot before the crash)", got)
	}
	h.deliverAll()
	if h.orchState(1, st(1, 1)) != OrchUnknown {
		t.Fatal("not Unknown after the ACKs")
	}
}

// EO-7: "A voter only performs recovery if its stage state is Active. In this case, the
// voter periodically sends INQUIRY requests to all orchestrators recorded in its
// OrchSet."
func TestEO7VoterRecoveryInquires(t *testing.T) {
	h := toStage1(t, nil)
	h.deliverOne(and(kind("VOTE"), to(3)))
	h.drop(kind("YES"))
	h.crash(3)
	h.restart(3)
	if got := h.queued(and(kind("INQUIRY"), to(1))); len(got) != 1 || got[0].from != 3 {
		t.Fatalf("voter recovery sent %v, want INQUIRY to n1", got)
	}
	h.deliver(kind("INQUIRY"))
	// n1 is still voting on that Tid: it ignores the INQUIRY; the voter asks again.
	if len(h.pending(3, "inq/")) != 1 {
		t.Fatal("the recovered voter does not keep inquiring")
	}
}

// §5 EO-8: "A worker, say W, periodically sends I_AM_ALIVE messages to the observers
// of its stage."
func TestEO8WorkerSendsIAmAlive(t *testing.T) {
	h := toStage1(t, nil)
	h.drop(kind("I_AM_ALIVE"))
	h.fire(1, string(stageTimer(tAlive, st(1, 1))))
	var got []sim.NodeID
	for _, e := range h.queued(kind("I_AM_ALIVE")) {
		got = append(got, e.to)
	}
	if !slices.Equal(got, []sim.NodeID{2, 3}) {
		t.Fatalf("I_AM_ALIVE to %v, want the observers [2 3]", got)
	}
	h.deliver(kind("I_AM_ALIVE"))
	if h.role(2, st(1, 1)) != RoleObserver || len(h.pending(2, "mon/")) != 1 {
		t.Fatal("observer n2 not monitoring")
	}
}

// EO-8: "A node initiating the selection procedure sends ARE_YOU_THERE messages to all
// stage nodes with a higher priority. Available nodes reply with I_AM_THERE. If no
// reply arrives ... the initiator is selected ..., sends I_AM_SELECTED to all other
// stage nodes, and starts a new stage transaction."
func TestEO8ObserverSelectsItselfWhenNoHigherNodeAnswers(t *testing.T) {
	h := toStage1(t, nil)
	h.fire(3, "mon/")
	var asked []sim.NodeID
	for _, e := range h.queued(and(kind("ARE_YOU_THERE"), func(e envelope) bool { return e.from == 3 })) {
		asked = append(asked, e.to)
	}
	if !slices.Equal(asked, []sim.NodeID{1, 2}) {
		t.Fatalf("n3 asked %v, want the higher-priority nodes [1 2]", asked)
	}
	h.drop(kind("ARE_YOU_THERE"))
	h.fire(3, "sel/")
	if h.role(3, st(1, 1)) != RoleWorker || h.nodes[3].txs[st(1, 1)] == nil {
		t.Fatal("n3 not selected, or no new stage transaction")
	}
	var told []sim.NodeID
	for _, e := range h.queued(kind("I_AM_SELECTED")) {
		told = append(told, e.to)
	}
	if !slices.Equal(told, []sim.NodeID{1, 2}) {
		t.Fatalf("I_AM_SELECTED to %v, want [1 2]", told)
	}
	if c := obsOf[RoleChange](h, ObsRole, 3); len(c) == 0 || !c[len(c)-1].Selected {
		t.Fatal("the role change is not marked as a selection")
	}
}

// EO-8: "If the initiator receives a reply instead, it waits on the I_AM_SELECTED (or
// I_AM_ALIVE) of the new worker ... When this message arrives, it starts monitoring".
func TestEO8AnsweredInitiatorWaitsForNewWorker(t *testing.T) {
	h := toStage1(t, nil)
	h.fire(3, "mon/")
	h.drop(and(kind("ARE_YOU_THERE"), to(1)))
	h.deliver(and(kind("ARE_YOU_THERE", "I_AM_THERE"), not(to(1))))
	if h.role(3, st(1, 1)) != RoleWaiting {
		t.Fatalf("n3 role %v after I_AM_THERE, want waiting", h.role(3, st(1, 1)))
	}
	h.call(3, sim.Input{Kind: sim.Receive, From: 2, Msg: IAmSelected{Stage: st(1, 1)}})
	if h.role(3, st(1, 1)) != RoleObserver || len(h.pending(3, "mon/")) != 1 {
		t.Fatal("n3 does not monitor the new worker")
	}
}

// EO-8: "If it receives an I_AM_ALIVE or I_AM_SELECTED message from another node ...
// If W' has a higher priority than W, W sends a HIGHER_PRIO request to the local
// orchestrator. If the response is GAVE_UP, W becomes an observer".
func TestEO8WorkerYieldsToHigherPriorityWorker(t *testing.T) {
	h := toStage1(t, nil)
	h.drop(kind("VOTE", "I_AM_ALIVE"))
	h.selectSelf(2, st(1, 1))
	h.drop(kind("VOTE", "I_AM_SELECTED", "PREPARE"))
	// A lower-priority worker's I_AM_ALIVE changes nothing.
	h.call(2, sim.Input{Kind: sim.Receive, From: 3, Msg: IAmAlive{Stage: st(1, 1)}})
	if h.role(2, st(1, 1)) != RoleWorker {
		t.Fatal("n2 yielded to a lower-priority node")
	}
	h.call(2, sim.Input{Kind: sim.Receive, From: 1, Msg: IAmAlive{Stage: st(1, 1)}})
	if h.role(2, st(1, 1)) != RoleObserver || h.nodes[2].txs[st(1, 1)] != nil {
		t.Fatal("n2 (Unknown) did not give up for n1")
	}
}

// EO-8 (majority variant): "Observers getting an I_AM_SELECTED message are supposed to
// reply with an ACK, and the initiator ... becomes the new worker only if it receives
// a majority of ACKs ... or an I_AM_SELECTED from a higher priority node".
func TestEO8MajorityVariantNeedsAcks(t *testing.T) {
	h := toStage1(t, func(c *Config) { c.MajoritySelect = true })
	h.fire(3, "mon/")
	h.drop(kind("ARE_YOU_THERE"))
	h.fire(3, "sel/")
	if h.role(3, st(1, 1)) != RoleClaiming {
		t.Fatalf("role %v, want claiming", h.role(3, st(1, 1)))
	}
	h.fire(3, "sel/") // no ACK yet: I_AM_SELECTED again
	if got := h.queued(kind("I_AM_SELECTED")); len(got) != 4 {
		t.Fatalf("%d I_AM_SELECTED, want 2 rounds to 2 nodes", len(got))
	}
	h.drop(and(kind("I_AM_SELECTED"), to(1)))
	h.deliverOne(and(kind("I_AM_SELECTED"), to(2)))
	h.deliverOne(and(kind("SELECTED_ACK"), to(3)))
	if h.role(3, st(1, 1)) != RoleWorker {
		t.Fatal("2 of 3 (own included) ACKs: not worker")
	}
	// A claim yields to a higher-priority I_AM_SELECTED.
	h2 := toStage1(t, func(c *Config) { c.MajoritySelect = true })
	h2.fire(3, "mon/")
	h2.drop(kind("ARE_YOU_THERE"))
	h2.fire(3, "sel/")
	h2.call(3, sim.Input{Kind: sim.Receive, From: 2, Msg: IAmSelected{Stage: st(1, 1)}})
	if h2.role(3, st(1, 1)) != RoleObserver || len(h2.queued(and(kind("SELECTED_ACK"), to(2)))) != 1 {
		t.Fatal("the claim did not yield to (and ACK) a higher-priority I_AM_SELECTED")
	}
}
