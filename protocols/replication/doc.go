// Package replication implements the fault-tolerant workflow engine of Zhu's thesis
// (Enhancing workflow fault tolerance using replication technique, 2002, chapters
// 3-6; digest: shared/specs/replication.md) as pure state machines on the sim API:
// lookup registries with leased registrations, passive (primary-backup) replica
// managers with the ping loop, failover and verification, actively replicated groups
// with a sequencer, front ends, and workflow components whose instances move between
// replica groups by fault-tolerant transitions.
//
// # Rules → files
//
//	RP-1 registries: leased registrations, expiry, notifications   registry.go
//	RP-1 128-bit registration IDs, drawn once, reused              replica.go, active.go (Handle: "id")
//	RP-2 backup first, ping loop (§5.2.2)                          replica.go (Handle, tick)
//	RP-2 handle_primary_failure, minimum ID (§5.2.3)               replica.go (lookup, decide, claimed)
//	RP-2 verify_primary every 5 periods (§5.2.4)                   replica.go (tick, decide)
//	RP-2 a lookup at least every 5 periods; a polling primary      replica.go (tick, lookup: "rp/lookup");
//	     every period (§5.2.2)                                      scenarios/replication props.go (lookupCadence)
//	RP-4 a task runs in its hop's ran step (§4.4 step 2)           workflow.go (task); scenarios/replication
//	                                                               flow.go (tasksOnce)
//	RP-2 duplicate check, stored response re-sent                  replica.go (request, next)
//	RP-2 update before / done after each call (§5.1.4)             replica.go (next, applyDone, become)
//	RP-3 active replication: multicast, first reply                caller.go (Call.Found), client.go
//	RP-3 total order by a sequencer, gap fetch, catch-up           active.go (request, Order, Fetch, Pong)
//	RP-3 sequencer failover by epochs                              active.go (membership, startSync, install, follow)
//	RP-4 transition as a passive-replication call (§4.4 steps 1-4) workflow.go (drive, startCall, callDone)
//	RP-4 duplicate transition acknowledged (§4.5.4, §4.5.5)        replica.go (request)
//	RP-4 new primary resumes each instance (§4.5.1, §4.5.3)        workflow.go (drive), replica.go (become)
//	RP-4 predecessor retries a new primary (§4.5.2)                workflow.go (startCall: "call" timer), caller.go
//	RP-5 SimpleFlow's route, tasks calling other components        workflow.go (Flow, Hop); scenarios/replication
//	front end: locator, request, re-send with the same ID          caller.go, client.go
//	RP-2 locator: the primary any of its lookups names (§5.3.3)   caller.go (Call.Found)
//	RP-2 a call refused by a non-primary looks again (§5.3.3)     caller.go (Call.Answered: "rp/refused",
//	                                                               "rp/relook"); scenarios/replication props.go
//	                                                               (refusedLooksAgain)
//
// # Choices where the thesis is silent
//
//   - The replica draws its own 128-bit ID from its random input on first start (the
//     thesis' registry assigns it; either way it is random and reused), and keeps it
//     in stable storage.
//   - Registries keep registrations in volatile memory: a restarted registry is
//     refilled by the renewals (every third of a lease). A replica subscribes to
//     membership events (Options.Notify, the thesis' future work); without it the
//     primary polls the registries every period.
//   - A primary answers a client only after every backup the registries list has
//     acknowledged the Done; a backup whose registration expired (crashed) is not
//     waited for. A backup behind the primary (back from a crash) asks for its state.
//   - A primary whose own registration has not been acknowledged for a lease steps
//     down: the registries dropped it, and a backup may have taken over.
//   - Election: the thesis' minimum-ID rule alone elected a replica just back from a
//     crash, without the last acknowledged requests (a sweep found it: swarm seed 174
//     lost an acknowledged request). The elected replica first gathers the state of
//     every replica the registries list and keeps the freshest (it asks again every
//     period, and stops waiting for one only when the registries drop it); a replica
//     that answered follows it from then on and ignores Done messages of the old
//     primary, and does not claim the role itself from a lookup answered earlier; a
//     claimer that hears from a primary the registries did not list yet adopts it.
//     A replica that the answers so far list alone waits a period for the other
//     registries' answers before taking over alone (a registry restarted empty lists
//     only the replicas that renewed since), and a backup handed to a claimer
//     forgets its unanswered ping to the old primary (sweeps of registry-restart and
//     swarm with polling found both: two primaries, acknowledged requests lost).
//     (The model checker found the last two: startup races that lost an
//     acknowledged request.)
//   - The replicated service is a key-value store (the worklist keeps work items by
//     key); its store and duplicate table are in each replica's stable storage.
//   - Clients keep their progress in stable storage and re-send a pending request
//     with the same ID after a restart.
//   - Active replication (§3.6.2 leaves the total order open): a fixed sequencer, the
//     registered replica with the minimum ID. Its failover is a view change: the new
//     minimum starts epoch e+1, gathers every registered replica's order (a replica
//     that answers joins the epoch and ignores older orders), keeps the longest and
//     sends it to all before ordering anything. A replica that joins a new epoch
//     looks the group up again before acting on membership: a lookup answered before
//     the join made it start an epoch past the one it had joined, fencing off the new
//     sequencer's orders while that one answered clients (the model checker found it:
//     an acknowledged request lost after one crash); and a replica starting an epoch
//     also asks the sequencer it follows, listed or not (a registry back from a crash
//     lists only the replicas that renewed since). The sequencer executes and answers as
//     it orders; its orders reach every live replica because a step's sends are
//     atomic and links reliable (the thesis' model).
//   - Workflow (§4.4): an instance's status at each hop (queued, ran, handed over) is
//     in its group's replicated store, changed by requests the primary makes to
//     itself, so "update"/"done" replicate it like a client's. A transition's ID is
//     fixed by instance and hop, so a new predecessor primary's repeat is a duplicate.
//     A task's calls to other components (worklist, data server, monitor) carry IDs
//     fixed the same way.
//
// Outside the thesis' model (partitions, clock drift and pauses), the partition and
// drift-pause scenarios measure what breaks: a primary cut off from the registries
// steps down within a lease, but a request it executed can reach a backup after the
// new primary took over and is then executed again (RP-P1) or lost (RP-P4) — fencing
// needs epochs in the passive protocol too.
package replication
