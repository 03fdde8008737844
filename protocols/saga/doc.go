// Package saga implements agent-coordinated distributed transactions for
// microservices (Limón et al., "Hacia transacciones distribuidas coordinadas por
// agentes para la arquitectura de microservicios", §3; digest: shared/specs/saga.md)
// as pure state machines on the sim API, and an orchestrated baseline.
//
// # Rules → files
//
//	SG-1 configuration language (four fact forms), validation   config.go (Parse, Graph)
//	SG-2 normal flow: start, tr_id, sections, next, ends         agent.go (start, request, arrive, run, forward, notify, progress)
//	SG-3 compensation flow: stop, reverse order, done notices    agent.go (abort, progress, compensate)
//	SG-4 connectivity line, loss, pause, grace, re-arrangement   conn.go
//	SG-4 crash extension: log atomic with state, replay          agent.go (persist, replay), service.go (DB)
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
//     waits for both requests.
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
//     period. So a grace-period abort and a commit never cross (they did when every
//     agent could do both: a partition longer than the grace period ended one
//     transaction committed at some agents and compensated at others). A failed
//     section needs no decider: it makes a commit impossible.
//   - A section whose agent is gone past the grace period does not hold the others'
//     compensations up; the transaction ends only when that agent is back and has
//     settled its sections (the paper: "not finished until reconnection and cleanup").
//   - The connectivity view is one entry per agent with a generation number (the larger
//     wins; an agent that hears itself reported lost bumps its own). Gone agents are
//     still sent beats (the paper: "keep trying to contact them").
//   - Restart: the agent reloads its log and its service's data, re-sends its notices
//     and requests (receivers drop duplicates), runs the compensations due, and says
//     hello so that the others re-send what it missed.
//   - Messages to an agent thought lost are kept, not sent: the transaction pauses
//     there, and resumes when the agent is back.
//
// Broken variants for tests and `-p bug=…` are Policy fields (nil: the protocol).
package saga
