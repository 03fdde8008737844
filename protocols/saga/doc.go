// Package saga implements agent-coordinated distributed transactions for
// microservices (Limón et al., "Hacia transacciones distribuidas coordinadas por
// agentes para la arquitectura de microservicios", §3; digest: shared/specs/saga.md)
// as pure state machines on the sim API, and an orchestrated baseline.
//
// # Rules → files
//
// rules.go holds the rule map: every rule of the digest with a code branch, by tag
// (out.Cover marks where each acts), and the rules without one, with the reason.
//
//	SG-1 configuration language (four fact forms), validation   config.go (Parse, Graph)
//	SG-2 start, run, next (local, parallel), join wait and run,  agent.go (start, request, arrive, run, forward,
//	     end, notice, commit and commit learned, P3 duplicate         notify, note, progress)
//	SG-3 fail, stop, null, late, reverse wait, compensate,       agent.go (run, note, abort, arrive, progress,
//	     undone, end                                                  compensate)
//	SG-4 exchange, spread, refute, detect, lost, grace, give up, conn.go (tick, beat, hear, apply, graceOver,
//	     initiator lost, re-arranged, back, resume                    neighbours)
//	SG-4 pause, retry, give-up learned, no wait                  agent.go (send, timer, note, progress)
//	SG-4 crash extension: replay, replay resend and decision,    agent.go (persist, replay), service.go (DB)
//	     reconnect; log atomic with state
//	decision points broken variants hook into                   policy.go (Policy)
//	services with their own store (order, customer, generic)    service.go
//	orchestrated baseline (one coordinator)                     orch.go
//	observations the checkers read                              observe.go
//
// # Choices where the paper is silent
//
//   - Configuration files: one file holds several agents' sections; a comment line
//     "//Agente NAME" (the paper's) or "// agent NAME" opens a section. Comments are
//     "//" and "%" to the end of a line. Every agent loads the whole configuration, so
//     each knows the participants of a transaction from its start section (SG-2 step
//     2: "known beforehand").
//   - A section is identified by (agent, sub-transaction): the configuration gives
//     each agent at most one section per sub-transaction name. next/3 starts a
//     parallel sub-transaction; a section with predecessors from two paths (a join)
//     waits for both requests, each kept and acknowledged apart (Ack.Join) — the two
//     predecessors may be sections of one agent.
//   - tr_id is the initiating agent's name and a sequence number in its stable storage.
//   - The agent and its microservice share a node: a handler step calls the service
//     and writes the log in one atomic step (the paper's "local transaction"), so the
//     states processing and processing_compensation are transient.
//   - Notices (what became of a section) go to every participant, and are re-sent
//     until acknowledged; requests too. Receivers drop duplicates (SG-P3).
//   - Abort makes every section that has not run null (a recorded no-op); a request
//     arriving later is not run (no dangling action). Processed sections are
//     compensated once every section after them is settled (reverse order; for
//     parallel branches, reverse dependency order).
//   - Only the initiator decides a commit (when it knows every section processed) and
//     tells the others; only the initiator gives up on a lost agent after the grace
//     period (§3.4's "the agents affected by incomplete transactions start the
//     compensation flow" is read as: the initiator does, and tells the others). So a
//     grace-period abort and a commit never cross (they did when every agent could do
//     both: a partition longer than the grace period ended one transaction committed
//     at some agents and compensated at others). A failed section needs no decider:
//     it makes a commit impossible. A lost initiator therefore leaves its transactions
//     paused at the others until it is back (or a section fails).
//   - A section whose agent is gone past the grace period does not hold the others'
//     compensations up; the transaction ends only when that agent is back and has
//     settled its sections (the paper: "not finished until reconnection and cleanup").
//   - The connectivity view is one entry per agent with a generation number (the larger
//     wins; an agent that hears itself reported lost bumps its own). Lost agents are
//     still sent beats, during the grace period ("connectivity messages are sent as
//     usual") and after it ("keep trying to contact them"); so the grace period must
//     span a beat.
//   - Restart: the agent reloads its log and its service's data, re-sends its notices
//     and requests (receivers drop duplicates), runs the compensations due, and says
//     hello so that the others re-send what it missed.
//   - Messages to an agent thought lost are kept, not sent: the transaction pauses
//     there, and resumes when the agent is back.
//
// Broken variants for tests and `-p bug=…` are hooks of a Policy at the protocol's
// decision points (policy.go; nil: the protocol); the broken code itself lives in
// scenarios/saga (bugs.go) and tests.
package saga
