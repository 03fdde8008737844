// Package winkowski implements J. Winkowski's failure-resistant resource management
// game ("Failure-resistant resource management in a distributed multi-agent system",
// ICS PAS report 913, 2000) as pure simulator nodes, in its restricted variant (p1)
// and its complete variant (p2)/(p3). The digest ../shared/specs/winkowski.md numbers
// the rules (WK-1…WK-4) and properties (WK-P1…WK-P5); the code names them.
//
// # Shape
//
// Every computer runs an agent (node "a<c>", type Agent) and, if it has pools, a
// resource-manager host (node "m<c>", type Host) with the managers of its pools. The
// agent holds the paper's agent state (clock, Controlled, Entering, Competing,
// DistributedTickets) and plays the game for the tasks it creates (paper §1: "each
// agent acts for each task it executes as for a player"): a Task holds exactly the
// paper's task state (status, TicketsAt, alarm-clock, Destinations, and per pool of
// interest AboutPredecessors, AboutRegistered, AboutRequests, AboutOrders, AboutUse,
// BlockingRequests) plus the bookkeeping listed on Task. A manager holds the paper's
// pool state (PoolState: Applications, Admissions, the Requests queue, Orders, InUse
// with user). Tasks talk to managers only by forms (registration, admission, request,
// order, advancing, withdrawal, winning, releasing), and a manager answers every
// action by sending its new state to every registered task (WK-2), which is what
// the message counts include. Agents create the tasks of their jobs themselves (a job
// is a sequence of tasks; the next one is created when the previous one has left the
// game), so no workload input is lost while an agent is down.
//
// Tickets: agent i (1-based) takes tickets nK+i, n ≥ 0, K > number of agents
// (NewSystem rejects the rest). Bad input — a task interested in an unknown pool, a
// pool of capacity 0, K not above the number of agents, Γ ≤ 0 — is rejected by
// NewSystem with a one-line error before anything runs.
//
// # Choices where the text is garbled or silent
//
// The paper is a text extraction with its figures missing and several formulas
// garbled. Each choice below keeps the properties the paper states (§1, §4); the code
// carries the tag.
//
//	E1  Entering phase. WK-1 as written (wait until every absolute predecessor has left
//	    the game) breaks the failure locality the paper claims: a task T blocked for
//	    ever by a failed task F (T shares a pool with F: allowed) keeps its admission
//	    forms, so every task U registering later at any pool of T waits for T for ever,
//	    though U shares no pool with F. The default (EnterAlarm) keeps the paper's wait
//	    but arms the alarm clock in REGISTERING: when none of U's absolute predecessors
//	    has left the game for Γ, U takes a ticket of lower priority than every remaining
//	    predecessor (their tickets are on their admission forms) and enters the
//	    competition. A newcomer thus still never outranks a task it found competing;
//	    T, blocked, holds no request (below), so U is not delayed by it. Starvation
//	    freedom (§4, Facts 2–4) then holds for every finite workload rather than under
//	    any arrival pattern. EnterLiteral is the text as written; the winkowski/locality
//	    experiment and the sweeps measure the difference. E1 concerns the entering
//	    phase, which both variants share, so the restricted variant (p1) takes the
//	    same alarm in REGISTERING (its only use of the alarm clock); but (p1) assumes
//	    no failures and does not claim WK-P4 anyway: a task blocked behind a failed
//	    higher-priority request keeps its other requests, and tasks at distance 2 can
//	    miss the bound. On winkowski/chain seeds 1–200 (partitions=0) the restricted
//	    variant misses WK-P4 on 1 seed with the alarm and on 16 read literally (the
//	    complete variant: 0 and 26). The tests run the restricted variant under
//	    transient failures only.
//	W1  At ACCESSING the task "withdraws its admission forms and requests": its last
//	    withdrawal carries Final and removes the admission form too. A releasing form
//	    also drops whatever admission, request or order form of T is left, because the
//	    paper's consistency condition (every admission has a registration) must survive
//	    the removal of the registration.
//	R1  Regressive behaviour: when (p1)/(p3) fails, T withdraws every request it has
//	    sent (a withdrawal is sent to each pool that is not a destination, which then
//	    becomes one again: the text's "P ∈ Destinations" is read as its complement).
//	    From ORDERING this also withdraws the order forms and T returns to TRYING.
//	P1  (p1)/(p3) count the requests in front of T's actual request, or of its
//	    potential one (the end of the queue) when T's request is not known to be there,
//	    from tasks with a ticket not above T's ("priority not lower") or, in (p3), with
//	    an order form; the right side is capacity − |AboutUse|. "Free" and "accessible"
//	    resources are the same number.
//	G1  The alarm is set to clock + Γ (the text's "alarm-clock = clock_A(a)" drops Γ).
//	    BlockingRequests_P is the sequence of predecessors of T's request without an
//	    order form (the paper's consistency condition), registered when the alarm is
//	    set. When the alarm rings and T is still blocked, T follows §2 ("waits for some
//	    of these requests to be removed. If none of the blocking requests is removed
//	    ..."): if every registered blocking request still precedes T's request (a
//	    subset test: requests that came in front meanwhile do not count), T becomes
//	    ADVANCING; if one was removed, T registers the current blocking requests and
//	    waits Γ again. The formal action of §3 instead compares "the proper prefix"
//	    of T's request with the registered sequence; that prefix includes order-form
//	    holders, so it would never match when one is present, and any newcomer in
//	    front would re-arm the alarm, so that a steady stream of newcomers could keep
//	    T from ever advancing. The alarm is not re-armed while it runs (T arms it only
//	    when none is set), also not when a request is added.
//	A1  Advancing forms go to the pools where T is blocked only (the formal rule sets
//	    Destinations to every pool of interest; a transposition where T is not blocked
//	    gains T nothing and can make a lower-priority competitor block on T). ADVANCING
//	    lasts for the sending, then T resumes its previous status.
//	O1  ORDERING → WINNING needs, besides every order form sent (the text), T's order
//	    form seen at every pool in a state that reflects all T's forms, (p3), and the
//	    winning condition (every request preceded by fewer requests than free
//	    resources): "proceeds further as in the restricted variant" (§2). Without the
//	    last two a task advancing past T before T's order form arrived can take the
//	    resource T counted on, and T's winning form then finds none free and T waits
//	    for ever (-p bug=no-order-wait shows it). A task in ORDERING that is blocked (such an
//	    overtaker failed) uses the alarm and advancing forms like one in TRYING.
//	K1  A state tells T about its own request and order form only if it reflects every
//	    form T has sent to that pool (Task.acked: the state's Seq is T's last form's).
//	    The paper's tasks simply trust the latest state; with delays that state can
//	    predate T's last withdrawal and show T's old request and order form, and T
//	    then wins on a stale view (found by the swarm sweep: a winning form that found
//	    no free resource; -p bug=no-ack keeps it, pinned to swarm seed 111).
//	K2  Sequence numbers and resending, so that lost messages act as delays. Every
//	    form of T to pool P carries T's next sequence number for P (1, 2, …; kept in
//	    stable storage, so numbers survive a restart of T's agent). The manager
//	    applies a form only if it is T's next one (Host.Applied), so each form takes
//	    effect once and in order; a duplicate, a form after a lost one, and a Poll
//	    change nothing and are answered with the current state to T alone. Every
//	    state carries the number of the recipient's last applied form (State.Seq).
//	    With Config.Retry > 0, T keeps its forms until a state shows them applied and,
//	    every Retry, resends them to a pool that showed no progress since the last
//	    ring, or polls a pool it still needs news from that sent it nothing. Retry = 0
//	    is the paper's reliable network (the model checker's default); the scenarios
//	    use 150ms, which lets them partition agents from managers and crash managers
//	    transiently (F3).
//	T1  The agent gives the lowest ticket nK+i it has not given out (above a floor, E1)
//	    and takes it back when T starts accessing (the end of T's competition phase: T
//	    leaves Competing then, and Controlled when it leaves the game).
//	N1  REGISTERING → ADMITTED needs news from every pool of interest, not only empty
//	    AboutPredecessors (which are empty before any news arrives).
//	U1  One resource per pool per task, as in the paper; multi-unit pools have capacity
//	    above one. ϱ is the largest number of pools of a task.
//	D1  Δ (the maximal creation-to-registration delay of Fig. 6) is an assumption of the
//	    analysis, not a protocol parameter: a task here registers in the step that
//	    creates it, so Δ is the network's delay bound.
//
// # Failures
//
//	F1  An agent and its computer's resource-manager role are separate nodes. A crashed
//	    agent stops its tasks (the paper's faulty tasks) while its pools stay, as the
//	    paper assumes. A crash of the manager host itself — outside the paper's model —
//	    loses those pools: tasks interested in them may wait for ever, and so may tasks
//	    sharing a pool with those (a task waiting for its booking at a lost pool can
//	    hold resources elsewhere). The scenarios measure it (winkowski/poolcrash,
//	    winkowski/locality) rather than assume it away.
//	F2  With Config.Durable, agents and managers keep what a restart needs in stable
//	    storage: a manager its pools' states and applied sequence numbers, an agent
//	    its jobs' progress and, per task, the status, ticket, alarm, destinations,
//	    bookkeeping masks, sequence numbers and unapplied forms, the absolute
//	    predecessors and the registered blocking requests (what cannot be learned
//	    again) — not the pools' states, which a restarted task polls and learns
//	    afresh. A crash followed by a restart is the paper's task that "returns after
//	    a long time": states sent to it meanwhile are lost; on restart each task
//	    resends its unapplied forms, polls every pool, and plays again only once every
//	    pool has answered (Task.Fresh). Unapplied forms are kept with Durable even
//	    without Retry: a crash can cut a call's forms short (the simulator's crash-send,
//	    the model checker's Crashes.MidSend), and the restart resends what never left.
//	    The scenarios turn Durable on only when the fault plan restarts a node: a node
//	    that never returns needs nothing stored.
//	F3  The paper's links are reliable with finite delay. Simulated partitions, cuts
//	    and a manager's transient crash lose messages; with Config.Retry > 0 (K2) the
//	    game repeats what was lost, so they act as long delays and the scenarios'
//	    generated plans partition agents from the managers. With Retry = 0 a lost form
//	    or state is never repeated and the task it concerns may wait for ever.
//
// # Rules and their code
//
// rules.go is the rule map: every rule of the digest and every choice above that has
// a code branch, tagged like "WK-2 advance-ordered", "WK-4 alarm", "E1 rearm", "K2
// poll", with out.Cover at the branch; the rules without a branch of their own are
// declared there with the reason. Where they live:
//
//	WK-1, E1, N1        agent.go: create; play.go: learn (first news, predecessors), step
//	                    (REGISTERING), admit, alarm (REGISTERING)
//	WK-2, W1, K2 answer manager.go: PoolState actions (register … release), Host.receive,
//	                    Host.broadcast; F2 host-restart in Host.Handle
//	WK-3, WK-4, R1, P1, play.go: step (TRYING, ORDERING, WINNING), regress, win, access,
//	K1, O1, G1, A1      release, learn (RELEASING: leave), alarm; task.go: view ((p1)/(p3),
//	                    the winning condition), blocking, blockersStay, ordersSeen
//	T1                  agent.go: giveTicket, takeTicket
//	K2, F2              forms.go: form, retry, resend, poll; durable.go: restart, persist
//
// An agent's jobs (JobState, StartJob, NextTask), which the baselines' agents drive
// alike, are in jobs.go.
//
// # Policy: the decision points
//
// Config.Policy (policy.go) holds hooks at the game's decision points — which requests
// count in (p1)/(p3), how many resources are accessible, the winning condition per
// pool, whether a state is current (K1), whether order forms are distributed (O1),
// which requests block (G1), which unit a manager books, whether an advancing form
// transposes, whether a manager tells an unregistered task. Nil hooks are the protocol.
// Broken variants are planted through them from outside the protocol
// (scenarios/winkowski/bugs.go for -p bug=NAME, and tests), so that the sweeps and the
// model checker can be shown to catch them.
package winkowski
