// Package model is simrun's explicit-state model checker. It explores, exhaustively or
// by sampling, two kinds of system:
//
//   - a plain transition system, Spec[S]: initial states, a successor function, a
//     fingerprint and properties — the form of reference models such as the TLA+
//     TwoPhase port (package model/twophase, model "twophase");
//   - an actor system, Actors: the same sim nodes the simulator runs, with the checker
//     owning every nondeterministic choice (which message is delivered, which timer
//     fires, crashes and restarts within a budget, losses, duplicates, link cuts, clock
//     ticks and drift).
//
// Anchors: TLC (statistics, fingerprints, BFS with parent links), Spin (a compact
// state vector, speed), Stateright (the actor model: Deliver/Drop/Timeout/Crash
// actions, network semantics as configuration, always/sometimes/eventually).
//
// # Registering a model
//
// `simrun check MODEL -p key=value ...` finds models in a registry. A package registers
// its models from an init function (protocol models live in scenarios/<name>/, which may
// import model; protocols/ never import model):
//
//	func init() {
//		model.Register(model.Model{
//			Name:   "pingpong",
//			Help:   "two nodes bounce a ball; crash budget 1",
//			Params: []model.Param{{Name: "max", Default: "3", Help: "hits per node"}},
//			Build: func(p *model.Params) (model.System, error) {
//				max := p.IntRange("max", 1, 100)
//				if p.Err() != nil {
//					return nil, p.Err()
//				}
//				return PingPong(max), nil // an *model.Actors or a *model.Spec[S]
//			},
//		})
//	}
//
// Build reads parameters through typed getters (Int, IntRange, Bool, Duration, String,
// List); a malformed or unknown parameter is a one-line input error (exit 2). The
// command line links models in through the packages it imports (the scenarios/<name>
// packages already are; a package that only registers models needs a blank import in
// cmd/simrun, or in a user's own main that calls cli.Main). The complete, runnable version of this example is
// Example_actors in example_test.go.
//
// # Describing an actor system
//
// An Actors value lists the nodes (sim.NodeSpec: a name and a constructor, exactly as
// for the simulator) and configures everything else:
//
//	sys := &model.Actors{
//		Nodes: []sim.NodeSpec{
//			{Name: "a", New: func() sim.Node { return &Player{Peer: 1, Max: max} }},
//			{Name: "b", New: func() sim.Node { return &Player{Peer: 0, Max: max} }},
//		},
//		// Workload: inputs from the environment, a sim.Receive with From == sim.Env,
//		// delivered in order per node (a node that is down may lose one, as in the
//		// simulator).
//		Inject: []model.Injection{{To: 0, Msg: Go{}}},
//		// Network mode: FIFO per link by default; Unordered, Lossy (MaxLosses),
//		// Duplicating (MaxDuplicates) and Guarded (a delivery that changes nothing
//		// and sends nothing is not a transition: the message waits) are options.
//		Network: model.Network{},
//		// Crash budget and which nodes may crash; restart is always possible unless
//		// NoRestart (crash-stop).
//		Crashes: model.Crashes{Budget: 1, Nodes: []sim.NodeID{1}},
//		// Connectivity changes as bounded actions: a cut disconnects a pair (both
//		// directions, or one with OneWay) and counts against Budget; restoring is
//		// always possible. "Disconnect / reconnect" is a cut and a restore.
//		Cuts: model.Cuts{Budget: 1},
//		// Ghost (monitor) value folded over observations: part of the state.
//		Ghost: model.Ghost{Init: 0, Fold: func(g any, o sim.Observation) any {
//			if o.Kind == "hit" {
//				return g.(int) + 1
//			}
//			return g
//		}},
//		Properties: []model.Property[*model.State]{
//			model.Always("hits bounded", func(s *model.State) bool { return model.GhostAs[int](s) <= 2*max }),
//			model.Sometimes("b crashed with the ball in flight", func(s *model.State) bool {
//				return !s.Up(1) && len(s.InFlight()) > 0
//			}),
//			model.Eventually("game over", func(s *model.State) bool { return model.GhostAs[int](s) == 2*max }),
//		},
//	}
//
// Time. By default the system is untimed: Input.Now reads 0 and any pending timer may
// fire at any point (the checker explores every order, which covers every timing).
// Protocols whose safety depends on time (leases) use discrete time:
//
//	Time: model.DiscreteTime{
//		Tick:     100 * time.Millisecond, // Input.Now = local ticks × Tick
//		MaxTicks: 20,                     // the clock stops here (bounds the state space)
//		Drift:    []int{0, 1},            // node 1's clock may be one tick ahead or behind
//		MaxDelay: 3,                      // optional: messages arrive within 3 ticks
//	},
//
// The global clock is part of the state and advances by a "tick" action; a timer set
// for d fires when its node's local clock reaches now + ceil(d/Tick); timers are urgent
// (the global clock does not tick past a due timer, nor does the node's own clock
// lead past it; other nodes' clocks may lead meanwhile). A node's clock may lag (the
// global clock ticks, the node's does not) or lead (the node's ticks alone) as long as
// it stays within its drift bound of the global clock; local clocks never go
// backwards.
//
// Crash semantics match the simulator: a crash loses the node's volatile state, its
// pending timers and every message in flight to it; a restart rebuilds the node with
// NodeSpec.New and hands it a sim.Restart input carrying its stable storage (writes made
// through Outbox.Store/Delete survive). Effects of one handler call are applied together
// in the kernel's order (stable writes, timers, sends, observations); a send to a node
// that is down or over a cut link is lost at once; a message in flight over a link that
// is cut when it is delivered is lost (the "lost" action with why "partition"). The
// system starts atomically (every node built and handed Start, in node order, before
// anything else).
//
// A handler panic is not a crash of the tool: the state that results is marked and the
// built-in invariant "no-panic" fails, with the path that leads to it.
//
// # Properties
//
// Properties are predicates over the global state (*State for actor systems, S for a
// Spec): Always (an invariant; a violation comes with a shortest path under BFS),
// Sometimes (reachability; the witness path is printed; a complete search without a
// witness fails the property), Eventually (on every maximal finite path and every
// admissible infinite path the predicate holds at some point: with Options.Fair the
// infinite paths that are weakly fair, without it all of them).
//
// A State exposes every node's volatile state (Node, NodeAs[T]), whether it is up,
// its stable storage (Stable), pending timers, messages in flight (InFlight), pending
// injections, cut links, clocks, faults used, and the ghost (Ghost, GhostAs[T]). The
// ghost is how observations — what protocol properties are about in the simulator —
// become state properties here: "at most one commit per stage" is an Always over a ghost
// that counts "stage committed" observations per stage, exactly like a TLA+ history
// variable. Keep ghosts small (counts, sets of IDs): they are part of every state.
//
// # Strategies, bounds and statistics
//
// BFS (default) explores level by level on Options.Workers goroutines; the counts are
// identical for any number of workers. DFS keeps only the current path (low memory):
// for a large actor system, whose frontier states are Go objects of a few hundred bytes
// each, DFS may need a tenth of BFS's memory and less time (2pc with 5 participants,
// 2.4M states: BFS ≈ 650 MB, DFS ≈ 70 MB); use BFS when you want shortest
// counterexamples. Random runs seeded walks (Options.Seed, Walks, MaxDepth = walk
// length). MaxStates and MaxDepth bound the search; reaching one ends it with outcome
// BoundReached and the counts so far. MaxMemory does the same when the process's
// resident memory passes it (sampled every 100 ms; Linux): bound "max-memory".
//
// Statistics follow TLC: Distinct states; Total states generated = initial states +
// every successor generated (duplicates and self-loops included); Depth = number of BFS
// levels counting the initial level. Also seconds, states/s, peak RSS, seen-set bytes
// per state, and TLC's optimistic fingerprint-collision estimate
// Distinct·(Total−Distinct)/2⁶⁴ (exactly 0 when the fingerprint is injective, as for the
// packed TwoPhase states).
//
// # Seen-set, frontier and counterexamples
//
// The seen-set stores 64-bit fingerprints only, in an open-addressing table (linear
// probing from an 8-slot, cache-line bucket) between 50% and 75% full after each
// growth by 1.5× (10.7–16 bytes per state). Full states exist only on the frontier (BFS)
// or the current path (DFS). Each BFS worker keeps a parent log of 8 bytes per state
// (parent reference and successor index); a counterexample is rebuilt by following it
// back and re-executing the path (Next must be deterministic). Counterexamples and
// witnesses are written (Result.WriteTrace) in the simulator's JSONL trace format —
// header with "format": sim.TraceFormat and "engine": "model", one record per step
// (actor systems: the same records the simulator writes, one per handler call or
// fault), footer with the counts and hash — and `simrun replay FILE` re-executes them
// (Replay) and compares line by line.
//
// # Agreement with the simulator
//
// FollowTrace checks that a simulator trace of the same nodes is a path of the actor
// system, record for record (same effects). The 2PC tests run the simulator on many
// seeds with random crashes and restarts and follow every trace: the two engines agree
// on crashes, restarts, the messages a crash loses, and timers. Not yet followed:
// traces with network loss (the simulator loses a message at send time, the checker
// by a later "lost" action) or partitions, and discrete-time runs; such a trace is
// reported as "not a transition of the model" rather than followed.
//
// # Performance
//
// For a Spec whose states are packed into integers (TwoPhase), the hot path is: Next
// emits successors into a per-worker batch (fingerprinted at once; self-loops are
// skipped, since the successor is the state being expanded); a tight loop touches the
// home bucket of every successor of the batch (independent loads, so many cache and
// TLB misses are in flight together); then the batch is inserted. The table lives
// outside the Go heap in transparent huge pages (Linux), in two regions that alternate
// on growth so that growing reuses memory instead of faulting in fresh pages; it grows
// between BFS levels when the next level is expected to overflow it, so workers rarely
// stop in the middle of a level. For actor systems, states share every unchanged part
// (node slots, link queues, storages) with their parent: an action copies only what it
// changes, and equal node states, storages and node slots are hash-consed (stored once,
// shared by every state that has them). Garbage collection is a large share of the time
// for big actor models: the Go runtime's GOGC trades memory for speed (GOGC=400 cut CPU
// time by about 40% and doubled the heap on the exactlyonce and winkowski models).
// A system whose handlers' effects do not depend on Input.Rand may say so
// (Actors.Memoize): a handler call then depends only on its node's slot and the input,
// and the checker memoizes calls (memo.go), replaying the resulting slot, sends and
// observations wherever the same call recurs (the crash-free exactlyonce model makes
// 1 000 distinct handler calls for 608 346 successors instead of 608 348 calls). The
// declaration is tested: each call the memo would keep is also made with the
// complement of its random bits and with a hash of them, and the first call whose
// effects differ ends the check with an error (a handler that reads the bits as they
// are is caught at once; one that hashes them or takes their parity on about half of
// its calls, so over a search almost surely). The declaration must still be true: a
// dependence on draws the test never meets is invisible to it.
//
// # Choices and limitations
//
//   - Eventually is decided after the exhaustive search (BFS or DFS) of the system
//     states, on the product graph (system state × one "has held yet" bit per
//     eventually-property; liveness.go), over finite and infinite paths: a maximal
//     finite path (ending in a state with no successors, within Boundary) on which the
//     predicate never holds is a counterexample, and so is an admissible cycle in the
//     region where it has not held (found by Tarjan's strongly connected components;
//     reported as a lasso: a path and a cycle back, marked "cycle" in the trace header
//     with the fairness it was found under, and re-checked by Replay). Without
//     Options.Fair every cycle is admissible (no fairness: Peterson's "process 1
//     eventually enters" fails, as it should); with it only weakly fair ones. Weak
//     fairness is per class: Spec.Fairness gives the classes of a plain spec; an actor
//     system's are built in — deliveries (per link in FIFO mode, per message when
//     unordered), injections, timers, clock ticks, restarts and reconnections are
//     fair; crashes, cuts, losses, duplicates and clock drift are not (faults may
//     happen or not, forever). `simrun check` assumes weak fairness for actor systems
//     (protocol claims assume fair delivery; --fairness none turns it off) and none
//     for plain specs (TLC's default; --fair turns it on). Strong fairness (needed to
//     show that a retry eventually gets through a lossy link) is not offered: under
//     weak fairness a message lost on every try is admissible.
//   - An eventually-property holds only when the search was complete and the whole
//     product graph was checked; a bound (max-states, max-depth), random walks
//     (which report only finite walks where it never held) or a product graph above
//     30 million states leave it unknown, never holding, and `simrun check` exits 4.
//   - Distinct, Total and Depth count system states, whatever the properties (TLC's
//     convention); Result.ProductStates is the size of the liveness graph, which is
//     kept in memory (about 40 bytes per state and 16 per transition), so liveness is
//     meant for small configurations.
//   - Injections to a node that is down may be lost (action "lost") or wait for the
//     restart: in the simulator an injection scheduled while the node is down is lost,
//     one scheduled after its restart is delivered, and the checker covers both.
//   - In untimed mode Input.Now is 0 and timers carry no deadline; use discrete time
//     when the protocol compares clock readings.
//   - A duplicated message is appended to its link, so in FIFO mode the copy arrives
//     after messages sent later (the network re-sends it).
//   - Input.Rand is derived from the state's fingerprint and the action (the checker
//     does not branch on random bits; a protocol that draws must be correct for every
//     value, and the model explores one).
//   - With more than one BFS worker the reported counterexample is a shortest one, but
//     which one may vary between runs; with one worker everything is deterministic.
//     With MaxStates reached, Distinct is exactly MaxStates for any number of
//     workers, but which states those are (hence Total and Depth so far) may differ
//     between worker counts; complete searches and MaxDepth-bounded ones are
//     identical. A MaxStates or MaxDepth equal to the state space's size or depth
//     completes with every statistic unchanged.
//   - Symmetry reduction (symmetry.go): Spec.Symmetry for a plain spec, Actors.Symmetry
//     for interchangeable nodes. An actor state's fingerprint is then the least plain
//     fingerprint among the renamings that sort the declared nodes by a
//     renaming-invariant signature (so only nodes in the same situation are permuted;
//     at most 7 nodes, 5 040 renamings). Counts are orbits; counterexamples are paths of
//     real states. It is refused with eventually-properties; VerifySymmetry checks a
//     declaration by brute force on a small instance (model/twophase's tests use it).
//   - The fingerprint of an actor state is a 64-bit hash of the canonical encodings
//     of its parts (sim.EncodeNode, sim.Storage.AppendState, message encodings with
//     their dynamic type), computed incrementally: only the parts an action changes are
//     re-encoded.
package model
