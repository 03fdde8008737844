// Package replication implements the passive (primary-backup) replication of Zhu's
// thesis (Enhancing workflow fault tolerance using replication technique, 2002,
// chapters 3-5; digest: shared/specs/replication.md) as pure state machines on the
// sim API: lookup registries with leased registrations, replica managers with the ping
// loop, failover and verification, and front-end clients.
//
// # Rules → files
//
//	RP-1 registries: leased registrations, expiry, notifications   registry.go
//	RP-1 128-bit registration IDs, drawn once, reused              replica.go (Handle: "id")
//	RP-2 backup first, ping loop (§5.2.2)                          replica.go (Handle, tick)
//	RP-2 handle_primary_failure, minimum ID (§5.2.3)               replica.go (lookup, decide)
//	RP-2 verify_primary every 5 periods (§5.2.4)                   replica.go (tick, decide)
//	RP-2 duplicate check, stored response re-sent                  replica.go (request, next)
//	RP-2 update before / done after each call (§5.1.4)             replica.go (next, applyDone, become)
//	front end: lookup, request, re-send with the same ID           client.go
//
// Not here yet (issue 12): RP-3 active replication, RP-4 transitions between groups
// (§4.4-4.5), RP-5 SimpleFlow and the chapter-6 experiment, the model check and the
// experiments.
//
// # Choices where the thesis is silent
//
//   - The replica draws its own 128-bit ID from its random input on first start (the
//     thesis' registry assigns it; either way it is random and reused), and keeps it
//     in stable storage.
//   - Registries keep registrations in volatile memory: a restarted registry is
//     refilled by the renewals (every third of a lease).
//   - A primary answers a client only after every backup the registries list has
//     acknowledged the Done; a backup whose registration expired (crashed) is not
//     waited for. A backup behind the primary (back from a crash) asks for its state.
//   - A primary whose own registration has not been acknowledged for a lease steps
//     down: the registries dropped it, and a backup may have taken over.
//   - Election: the thesis' minimum-ID rule alone elected a replica just back from a
//     crash, without the last acknowledged requests (a sweep found it: swarm seed 174
//     lost an acknowledged request). The elected replica now first gathers the other
//     registered replicas' state and keeps the freshest; a replica that answered it
//     follows it from then on and ignores Done messages of the old primary.
//   - The replicated service is a key-value store (the worklist keeps work items by
//     key); its store and duplicate table are in each replica's stable storage.
//   - Clients keep their progress in stable storage and re-send a pending request
//     with the same ID after a restart.
//
// Outside the thesis' model (partitions), the partition scenario measures what breaks:
// a primary cut off from the registries with its clients steps down within a lease,
// but a request it executed can reach a backup after the new primary took over and is
// then executed again (RP-P1) or, rarely, lost (RP-P4) — fencing needs epochs.
package replication
