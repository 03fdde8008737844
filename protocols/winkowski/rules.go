package winkowski

import "github.com/simrun-dev/simrun/sim"

// The game's rule map (rule coverage, sim.NewRuleMap): every rule of the digest
// (../shared/specs/winkowski.md, WK-1…WK-4) and every choice of the package comment
// that has a code branch, tagged with its number and case; out.Cover marks the branch.
// `simrun coverage winkowski` reports which the default swarm and the model portfolio
// reach; scenarios/winkowski/coverage_test.go requires all of them.
var (
	rules = sim.NewRuleMap("winkowski")

	// WK-1, entering phase (agent.go: create; play.go).
	ruleRegister   = rules.Rule("WK-1 register", "a created task sends registration forms to the managers of all its pools")
	ruleFirstNews  = rules.Rule("WK-1 first-news", "the first state after registering sets AboutPredecessors to the pool's admissions")
	rulePredLeft   = rules.Rule("WK-1 pred-left", "a later state drops the absolute predecessors whose admission form is gone")
	ruleNewsWait   = rules.Rule("WK-1 N1 wait-news", "REGISTERING: not every pool has answered yet, so T waits (N1)")
	rulePredWait   = rules.Rule("WK-1 wait", "REGISTERING: absolute predecessors remain, so T waits (arming the E1 alarm)")
	ruleAdmit      = rules.Rule("WK-1 admit", "no absolute predecessor left: T takes the lowest free ticket, sends admission forms, becomes TRYING")
	ruleEnterAlarm = rules.Rule("E1 alarm-enter", "the alarm rang in REGISTERING: T enters with a ticket above every remaining predecessor's")
	ruleEnterRearm = rules.Rule("E1 rearm", "a predecessor left while the entering alarm ran: T waits Γ afresh")

	// WK-3/WK-4, competition phase of a task (play.go, task.go).
	ruleActual       = rules.Rule("P1 actual", "(p1)/(p3) counts the requests in front of T's request, known to be at the pool")
	rulePotential    = rules.Rule("P1 potential", "(p1)/(p3) counts the whole queue: T's request is not known to be there (potential request)")
	ruleStale        = rules.Rule("K1 stale", "a state that predates some of T's forms tells T nothing about its own request")
	ruleCountOrder   = rules.Rule("WK-4 p3-order", "(p3) counts a lower-priority request because its task has an order form")
	ruleRequest      = rules.Rule("WK-3 request", "(p1)/(p3) holds: T sends requests to its destinations")
	ruleRegress      = rules.Rule("WK-3 regress", "(p1)/(p3) fails in TRYING: T withdraws every request it has out (R1)")
	ruleRegressOrder = rules.Rule("WK-4 regress-ordering", "(p3) fails in ORDERING: T withdraws its requests and order forms and is TRYING again")
	ruleWinRestrict  = rules.Rule("WK-3 win", "restricted: every request seen and in front: T becomes WINNING and sends winning forms")
	ruleWaitRestrict = rules.Rule("WK-3 wait", "restricted: every request seen, (p1) holds, some request not in front: T waits")
	ruleOrder        = rules.Rule("WK-4 order", "complete: every request seen and in front: T becomes ORDERING and sends order forms")
	ruleOrderWait    = rules.Rule("WK-4 order-wait", "ORDERING: T's order forms are not yet distributed (O1), T waits")
	ruleWinOrder     = rules.Rule("WK-4 win", "ORDERING: order forms distributed and still in front everywhere: T becomes WINNING (O1)")
	ruleAlarmSet     = rules.Rule("WK-4 alarm", "blocked in TRYING: T sets the alarm to clock+Γ and registers its blocking requests (G1)")
	ruleAlarmOrder   = rules.Rule("O1 blocked-ordering", "blocked in ORDERING (overtaken before its order forms arrived): T sets the alarm like in TRYING")
	ruleAlarmRearm   = rules.Rule("G1 rearm", "the alarm rang and a blocking request was removed: T registers the current ones and waits Γ again")
	ruleAdvance      = rules.Rule("WK-4 advance", "the alarm rang and no blocking request was removed: T sends advancing forms where it is blocked (A1)")
	ruleBooked       = rules.Rule("WK-3 booked", "WINNING: T learns a resource booked for it at a pool")
	ruleAccess       = rules.Rule("WK-3 access", "booked everywhere: T becomes ACCESSING, withdraws its forms (W1), gives its ticket back (T1), executes")
	ruleRelease      = rules.Rule("WK-3 release", "the execution ended: T becomes RELEASING and sends releasing forms")
	ruleLeave        = rules.Rule("WK-3 leave", "every pool applied T's releasing form: T leaves the game; its job goes on")

	// K2 and F2 on the task side (forms.go, durable.go; not-fresh in play.go).
	ruleResend       = rules.Rule("K2 resend", "the retry timer rang: T resends its unapplied forms to a pool that showed no progress")
	rulePoll         = rules.Rule("K2 poll", "the retry timer rang: T polls a quiet pool it still needs news from")
	ruleAgentRestart = rules.Rule("F2 agent-restart", "a durable agent restarts: its tasks resume from stable storage, resend and poll")
	ruleNotFresh     = rules.Rule("F2 not-fresh", "a restarted task has not heard from every pool again: it does not play yet")
	// The restart's branches by what a task was doing (F2): what stable storage must
	// carry over differs, and the sweeps must reach each (the swarm's contention crashes).
	ruleRestartWaiting   = rules.Rule("F2 restart-waiting", "a task restarts in REGISTERING with absolute predecessors recorded: it waits for them as before the crash")
	ruleRestartCompeting = rules.Rule("F2 restart-competing", "a task restarts holding a ticket (competition phase): it keeps the ticket, its forms and its blocking requests")

	// WK-2, the resource manager's actions (manager.go).
	ruleMgrRegister = rules.Rule("WK-2 register", "a registration form joins Applications")
	ruleMgrAdmit    = rules.Rule("WK-2 admit", "an admission form joins Admissions")
	ruleMgrRequest  = rules.Rule("WK-2 request", "a request is appended to the queue")
	ruleMgrOrder    = rules.Rule("WK-2 order", "an order form joins Orders")
	ruleMgrSwap     = rules.Rule("WK-2 advance", "an advancing form swaps T's request with the one in front of it, whose task has no order form")
	ruleMgrNoSwap   = rules.Rule("WK-2 advance-ordered", "an advancing form has no effect: the request in front of T's has an order form")
	ruleMgrAtFront  = rules.Rule("WK-2 advance-none", "an advancing form has no effect: T has no request, or no request precedes it")
	ruleMgrWithdraw = rules.Rule("WK-2 withdraw", "a withdrawal removes T's request and order form")
	ruleMgrFinal    = rules.Rule("W1 withdraw-final", "the final withdrawal (T accessing) also removes T's admission form")
	ruleMgrBook     = rules.Rule("WK-2 win", "a winning form books a free resource for T")
	ruleMgrLastUnit = rules.Rule("WK-2 win-last", "a winning form books the last free resource of a pool of capacity above one")
	ruleMgrRelease  = rules.Rule("WK-2 release", "a releasing form frees T's resource and drops its registration")
	ruleMgrTellT    = rules.Rule("WK-2 tell-released", "the state after T's releasing form goes to T too (no longer registered)")
	ruleMgrAnswer   = rules.Rule("K2 answer", "a poll, a duplicate or a form after a lost one changes nothing and is answered to T alone")
	ruleHostRestart = rules.Rule("F2 host-restart", "a durable manager restarts from its stored pool states and applied sequence numbers")
)

func init() {
	rules.Unbranched("WK-2 broadcast", "every applied form ends in the broadcast to every registered task (Host.broadcast): no branch of its own")
	rules.Unbranched("WK-2 request-once", "holds by construction: K2 applies each form once, and T sends a request only to a destination pool")
	rules.Unbranched("WK-2 win-none", "a winning form that finds no free resource: never in the correct game (the WK-booking property fails when it happens)")
	rules.Unbranched("W1 release-cleanup", "the releasing form drops whatever form of T is left: the final withdrawal precedes it on a FIFO link, so nothing is")
	rules.Unbranched("WK-4 alarm-moot", "defensive: T disarms whenever it stops being blocked (regress, order, win), so the alarm never rings on a task that is not")
	rules.Unbranched("T1 give", "giving a ticket is part of WK-1 admit and E1 alarm-enter (WK-T1/ticket checks each)")
	rules.Unbranched("T1 take", "taking the ticket back is part of WK-3 access")
	rules.Unbranched("U1 one-per-pool", "one resource per pool of interest: by construction (NewSystem, TaskSpec.Pools)")
	rules.Unbranched("D1 delta", "Δ is an assumption of the analysis, not a protocol parameter")
	rules.Unbranched("F1 separate-manager", "an agent and its computer's manager are separate nodes: structure, no branch")
}
