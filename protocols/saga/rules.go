package saga

import "github.com/simrun-dev/simrun/sim"

// The rule map: every rule of the digest (shared/specs/saga.md) that has a code
// branch, at the granularity of its cases, marked with out.Cover where the branch
// acts; the rest declared Unbranched with the reason. `simrun coverage saga` reports
// which of them the default swarm and the model's portfolio reach.
var rules = sim.NewRuleMap("saga")

// SG-2: the normal flow (§3.3).
var (
	ruleStart     = rules.Rule("SG-2 start", "a microservice starts a transaction: a tr_id from the agent's stable sequence, the participants from the configuration (steps 1-3)")
	ruleRun       = rules.Rule("SG-2 run", "a section's request runs its incoming action: processed (step 4)")
	ruleNext      = rules.Rule("SG-2 next", "a processed section's output goes to the next section's agent (step 5)")
	ruleNextLocal = rules.Rule("SG-2 next local", "the next section (a linked sub-transaction) is the agent's own: it runs in the same step")
	ruleParallel  = rules.Rule("SG-2 parallel", "a section with next/3 links starts parallel sub-transactions: its output goes to several sections")
	ruleJoinWait  = rules.Rule("SG-2 join wait", "a section with two predecessors (a join) has one request: it waits for the other")
	ruleJoinRun   = rules.Rule("SG-2 join run", "a join's last predecessor's request arrives: the join runs")
	ruleEnd       = rules.Rule("SG-2 end", "a section without next/2 ends its sub-transaction and says so to the others (step 6)")
	ruleNotice    = rules.Rule("SG-2 notice", "another agent's notice of a processed section: the agent learns it (and that its predecessors ran)")
	ruleCommit    = rules.Rule("SG-2 commit", "the initiator knows every section processed: committed, and it tells the others (step 7)")
	ruleCommitted = rules.Rule("SG-2 commit learned", "a participant learns the initiator's commit: committed there too")
	ruleDuplicate = rules.Rule("SG-P3 duplicate", "a redelivered request for a section that ran runs nothing")
)

// SG-3: the compensation flow (§3.3).
var (
	ruleFail       = rules.Rule("SG-3 fail", "an incoming action fails: the agent stops the transaction and tells the others (steps 1-2)")
	ruleStop       = rules.Rule("SG-3 stop", "another agent's failure notice stops the transaction here (step 2)")
	ruleNull       = rules.Rule("SG-3 null", "a section that never ran is closed as null when its transaction stops: no action")
	ruleLate       = rules.Rule("SG-3 late", "a request arriving after its section was closed as null is not run")
	ruleReverse    = rules.Rule("SG-3 reverse wait", "a processed section waits until every section after it is settled (reverse order)")
	ruleCompensate = rules.Rule("SG-3 compensate", "a processed section's compensation runs with its output data; the others are told (steps 3-4)")
	ruleUndone     = rules.Rule("SG-3 undone", "another agent's notice that a section is compensated or null: the agent learns it")
	ruleEnded      = rules.Rule("SG-3 end", "every section settled: the transaction ends compensated at the agent (step 5)")
)

// SG-4: failure detection and recovery (§3.4), and its crash extension.
var (
	ruleExchange   = rules.Rule("SG-4 exchange", "every beat the agent sends its view of everyone's connectivity to its line neighbours only")
	ruleSpread     = rules.Rule("SG-4 spread", "a newer entry in a neighbour's view is adopted: news crosses the line")
	ruleRefute     = rules.Rule("SG-4 refute", "an agent that hears it is thought lost bumps its own generation: it is not")
	ruleDetect     = rules.Rule("SG-4 detect", "a watched neighbour silent past the timeout is lost")
	ruleLost       = rules.Rule("SG-4 lost", "an agent learns another is lost (detected or told): it reports it and starts the grace period")
	rulePause      = rules.Rule("SG-4 pause", "a message to an agent thought lost is kept, not sent: its transaction pauses")
	ruleResume     = rules.Rule("SG-4 resume", "a lost agent is heard again within the grace period: the paused messages go out")
	ruleGrace      = rules.Rule("SG-4 grace", "the grace period runs out with the agent still lost: it is gone, the line is re-arranged around it")
	ruleGiveUp     = rules.Rule("SG-4 give up", "the grace period runs out: the initiator compensates its transactions that still need the gone agent")
	ruleWaitInit   = rules.Rule("SG-4 initiator lost", "the grace period runs out on a transaction's initiator: a participant keeps it paused (only the initiator decides)")
	ruleAbortNote  = rules.Rule("SG-4 give-up learned", "the initiator's give-up reaches a participant: it stops the transaction too")
	ruleRearranged = rules.Rule("SG-4 re-arranged", "the exchange skips a gone neighbour to the next agent along the line, still trying the gone one")
	ruleNoWait     = rules.Rule("SG-4 no wait", "a compensation does not wait for a later section whose agent is gone past the grace period")
	ruleBack       = rules.Rule("SG-4 back", "a gone agent reconnects: the line is rebuilt and the cleanup owed to it goes out")
	ruleRetry      = rules.Rule("SG-4 retry", "unacknowledged requests and notices are re-sent to the agents not thought lost")
	ruleReplay     = rules.Rule("SG-4 replay", "a restarted agent rebuilds its transactions, data and sequence from its log")
	ruleReplaySend = rules.Rule("SG-4 replay resend", "a restarted agent re-sends the notices and requests its log owes")
	ruleReplayDec  = rules.Rule("SG-4 replay decision", "a restarted initiator re-sends the commit its log holds")
	ruleHello      = rules.Rule("SG-4 reconnect", "a restarted agent says hello: the others re-send what it missed")
)

func init() {
	rules.Unbranched("SG-1 configuration", "parsed before any run, outside the handlers (config.go); config_test.go pins every error")
	rules.Unbranched("SG-2 participants", "every agent holds the whole configuration: Options.Prepare computes each start's graph before the run")
	rules.Unbranched("SG-4 replay compensate", "a step logs its compensations with it (atomic steps), so a restart never finds one due in its log; replay calls progress all the same (the forget-compensation variant reaches it)")
	rules.Unbranched("SG-4 log atomic", "a handler call is atomic: persist writes the record and the service's data with the step's other effects")
	rules.Unbranched("SG-4 segments", "every agent runs the same rules on its own view: a segment cut off from the rest recovers by itself with no code of its own")
}
