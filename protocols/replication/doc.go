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
// rules.go is the rule map: every numbered rule of the digest with a code branch, one
// tag per case (RP-1 register, RP-2 §5.2.3 claim, RP-3 view change, RP-4 §4.4 step 3,
// ...), each marked with out.Cover where its branch acts; the rules without a branch
// of their own are declared there with the reason. By file:
//
//	RP-1 registries: leased registrations, expiry, notifications   registry.go
//	RP-1 128-bit registration IDs, drawn once, reused              registry.go (loadID)
//	RP-2 replica manager: ping loop, step down                     replica.go (Handle, tick, receive)
//	RP-2 handle_primary_failure, verify_primary, claims, terms     failover.go (decide, claimed, become)
//	RP-2 a request: duplicate check, update, execute, done, acks,  request.go (request, next, finish, applyDone)
//	     answer; resume (§5.1.4)                                   failover.go (become)
//	RP-2 replica locator and front ends (§5.3)                     caller.go (Call), client.go
//	RP-3 active replication: sequencer, epochs, catch-up           active.go
//	RP-4 transitions (§4.4, §4.5), tasks' calls                    workflow.go
//	RP-5 SimpleFlow, the chapter-6 experiment                      scenarios/replication (flow.go)
//
// Policy (policy.go) names the protocol's decision points (the duplicate check, when
// to answer, when a registration lapsed, the call's retry, what a new primary moves
// on, how long a replica listed alone waits); nil is the protocol, and the broken
// variants tests and -p bug= plant live in scenarios/replication (bugs.go). What a
// passive replica reports to the checkers (ObsRole … ObsAck) is in observe.go.
//
// # Choices where the thesis is silent
//
//   - The replica draws its own 128-bit ID from its random input on first start (the
//     thesis' registry assigns it; either way it is random and reused), and keeps it
//     in stable storage.
//   - Registries keep registrations in volatile memory: a restarted registry is
//     refilled by the renewals (every third of a lease), and stays cold for a lease
//     meanwhile: it answers no lookup and notifies nobody, then notifies every group.
//     Answering from its partial lists made a replica back from a crash take itself
//     for the minimum ID (the default swarm, with the only registry or every one
//     crashing: two sequencers, RP-3; two primaries, RP-2). A replica subscribes to
//     membership events (Options.Notify, the thesis' future work); without it the
//     primary polls the registries every period.
//   - A primary answers a client only after every backup the registries list has
//     acknowledged the Done; a backup whose registration expired (crashed) is not
//     waited for. A backup behind the primary (back from a crash) asks for its state.
//   - A primary whose own registration has not been acknowledged for a lease steps
//     down: the registries dropped it, and a backup may have taken over.
//   - A primary sends the done of the request in progress again, every period, to the
//     backups that have not acknowledged it (they acknowledge what they hold): a
//     backup that applied it and crashed before its ack left, back before the
//     registries dropped it, was otherwise waited for forever (the default swarm with
//     crash-sends found it).
//   - Terms (the thesis has none): a replica taking over starts the term after the
//     freshest state's it gathered, named by its count and the claimer's ID (two
//     replicas taking over at once start two terms); every state carries the term of
//     its history, a done its primary's. Of two states the later term is the
//     fresher, then the longer (a claim keeps the freshest); a backup applies only
//     dones of its own term, and installs the state of the primary it follows when
//     that one's term is another (the primary it follows is the authority, even of an
//     older term: the one that stayed after verify_primary). A primary that ran a
//     request and crashed before its done left (the agreement stage of §3.6.1 cut
//     short) comes back holding it at an index the next primary filled with another:
//     the same length, another history (the default swarm found it: backups unequal,
//     their duplicate tables compared). Two primaries of one moment whose backups
//     acknowledged each its own requests (§5.4.2 resolves them by ID, not by
//     history) can still lose the loser's: the swarm has not found it since.
//   - Election: the thesis' minimum-ID rule alone elected a replica just back from a
//     crash, without the last acknowledged requests (a sweep found it: swarm seed 174
//     lost an acknowledged request). The elected replica first gathers the state of
//     every replica the registries list and keeps the freshest (it asks again every
//     period, and stops waiting for one only when the registries drop it); a replica
//     that answered follows it from then on and ignores Done messages of the old
//     primary, and does not claim the role itself from a lookup answered earlier; a
//     claimer that hears from a primary the registries did not list yet adopts it.
//     A replica its lookups list alone waits until they have done so for a renewal
//     period (a third of the lease) and a period before it takes over alone (a
//     registry back from a crash lists only the replicas that renewed since: with
//     the only registry down for a lease the primary steps down, and the first
//     replica to register again, stale, took over), and a backup handed to a
//     claimer forgets its unanswered ping to the old primary (sweeps of
//     registry-restart and swarm with polling found both: two primaries,
//     acknowledged requests lost).
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
//     atomic and links reliable (the thesis' model: §3.6.2's totally ordered, reliable
//     multicast with uniform agreement): a crash cutting the sequencer's sends short
//     (a crash-send) is outside it. The view change trusts the registries' merged
//     lists, so it needs a registry up that lists every live replica: with every
//     registry back from a crash at once, a replica back from a crash took itself
//     for the minimum and started a second epoch (the swarm keeps a minority of an
//     active group's registries down at a time).
//   - Workflow (§4.4): an instance's status at each hop (queued, ran, handed over) is
//     in its group's replicated store, changed by requests the primary makes to
//     itself, so "update"/"done" replicate it like a client's. A transition's ID is
//     fixed by instance and hop, so a new predecessor primary's repeat is a duplicate.
//     A task's calls to other components (worklist, data server, monitor) carry IDs
//     fixed the same way.
//
// Outside the thesis' model (partitions, clock drift and pauses): a primary cut off
// from the registries steps down within a lease, and the terms fence off the dones it
// sent before (the partition scenario, 2 000 seeds, and drift-pause, 1 000, pass). A
// replica paused or cut off past its lease while a request ran, or after its answer,
// can still have it run again or lost (it acts on a lease it no longer holds): the
// default swarm, which pauses or cuts off a replica in a sixth of its passive seeds,
// counts those as expected violations and passes them. The model's -p losses and -p
// cuts settings lose acknowledged requests too (a lost registration lets a replica
// elect itself with no backup, answer, then crash): the model does not judge RP-P1
// and RP-P4 once a message was lost or a link cut.
package replication
