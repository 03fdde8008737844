package model

import (
	"errors"
	"fmt"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Actors describes an actor system made of the same sim nodes the simulator runs. The
// checker owns every nondeterministic choice and enumerates, from each state:
//
//   - deliver: the head message of each link (FIFO, the default) or any in-flight
//     message (Network.Unordered) is handed to its receiver as sim.Receive;
//   - inject: the next workload injection for a node (Inject, in order per node) is
//     handed to it as sim.Receive from sim.Env; an injection for a node that is down
//     may instead be lost, as in the simulator;
//   - fire a timer: any pending timer (untimed mode), or any due timer (discrete time);
//   - crash / restart a node within Crashes;
//   - drop / duplicate a deliverable message when the network is lossy / duplicating;
//   - cut / restore a link within Cuts;
//   - tick the clock, let a node's clock lag or lead (discrete time only).
//
// The state is every node's volatile state, every node's stable storage, the messages in
// flight, the pending timers, the injections not yet delivered, the faults used, the
// cut links, the clocks (discrete time) and the ghost value: all of it is part of the
// fingerprint.
//
// Semantics match the simulator (sim.Kernel): one handler call is atomic; its effects
// are applied in the kernel's order (stable writes, timers, sends, observations); a
// crash loses the volatile state, the pending timers and every message in flight to
// the node; a restart rebuilds the node with NodeSpec.New and hands it a Restart input
// with its stable storage; a send to a node that is down, or over a cut link, is lost
// at once; a message in flight over a link that is cut when it is delivered is lost.
// The system starts atomically: every node is built and handed Start, in node order,
// before anything else happens, and all nodes count as up from the beginning.
//
// An Actors value must not be modified after it is handed to Check.
type Actors struct {
	// Name names the system in traces (the registry's model name is used when empty).
	Name string
	// Nodes are the nodes, by NodeID. Node state should implement sim.Cloner and
	// sim.StateEncoder for speed; otherwise sim.DeepCopy and sim.AppendCanonical are
	// used (exported and unexported fields alike, maps in key order).
	Nodes []sim.NodeSpec
	// Inject is the workload: inputs from the environment, delivered in order per
	// target node, interleaved freely across nodes.
	Inject []Injection
	// Network is the network mode (default: reliable FIFO links).
	Network Network
	// Crashes bounds crash faults (default: none).
	Crashes Crashes
	// Cuts bounds connectivity changes (default: none).
	Cuts Cuts
	// Time selects discrete time (default: untimed; timers fire nondeterministically).
	Time DiscreteTime
	// Ghost is a monitor value folded over the observations the nodes record (default:
	// none). It is part of the state, so properties can be about what has happened.
	Ghost Ghost
	// Properties are checked on every reachable state. A protocol panic is always a
	// violation (of the built-in property "no-panic").
	Properties []Property[*State]
	// Symmetry declares interchangeable nodes (default: none): the checker explores
	// one state per orbit of their permutations. See Symmetry for what it renames and
	// when it is sound; VerifySymmetry checks a declaration on a small instance.
	Symmetry Symmetry
	// The handler-call memo is automatic (memo.go): a handler call depends only on its
	// node's part of the state, the input and Input.Rand (which the checker derives
	// from the whole global state). The first time a node in some state (volatile
	// state, stable storage, timers, clock) is handed some input, the checker makes the
	// call three times — with the action's random bits, their complement and a hash of
	// them — and if the effects are the same, keeps them and replays them wherever the
	// same call recurs, without calling the handler; if they differ, the call depends
	// on the bits, and that call is always made (never memoized). In untimed mode a
	// timer's duration is not part of the state, so a node that draws random bits only
	// for timer jitter is memoized. Counts, verdicts and traces are those of the same
	// system without the memo (traces always call the handlers). The test is three
	// draws, not a proof: a handler whose effects depend on the bits only for draws it
	// never meets is memoized with the effects of the draws it met (as if the model
	// had explored those bits; the checker explores one value per call anyway), and
	// with several BFS workers which call is met first may then vary between runs.
	//
	// Memoize declares instead that no handler's effect depends on the bits: a call
	// whose three draws differ then ends the check with an error naming the node and
	// the input (Check returns it; simrun exits 2). NoMemo turns the memo off. The
	// memo holds an entry per distinct call, about 150 bytes plus what its sends and
	// observations hold, up to 2²⁰ entries; a full memo keeps replaying them and keeps
	// no more calls.
	Memoize bool
	NoMemo  bool
	// Boundary, when set, stops exploration at states for which it returns false (they
	// are counted and checked, not expanded): a way to bound counters and sequence
	// numbers.
	Boundary func(s *State) bool
}

// Injection is one input from the environment (workload): Msg handed to node To as a
// sim.Receive with From == sim.Env. Injections for one node are delivered in the order
// they are listed.
type Injection struct {
	To  sim.NodeID
	Msg sim.Message
	// At is, in discrete time, the earliest global tick at which the injection may be
	// delivered (0 = from the start). It must be 0 in untimed mode.
	At int
}

// Network is the network mode. The zero value is the papers' network: reliable FIFO
// links (per directed pair of nodes), no loss, no duplication.
type Network struct {
	// Unordered lets any in-flight message of a link be delivered next (TCP-less
	// datagrams); by default only the head of each link's queue is deliverable.
	Unordered bool
	// Lossy lets the network drop any deliverable message.
	Lossy bool
	// MaxLosses bounds the messages dropped along one path (0 = unbounded).
	MaxLosses int
	// Duplicating lets the network duplicate a deliverable message: a copy is appended
	// to its link (so in FIFO mode the copy arrives after later messages).
	Duplicating bool
	// MaxDuplicates bounds the duplications along one path; it must be >= 1 when
	// Duplicating is set (unbounded duplication has no finite state space).
	MaxDuplicates int
	// Guarded leaves a message in the network when delivering it would change nothing
	// and do nothing (the receiver's state unchanged, no send, timer, stable write or
	// observation): such a delivery is not a transition (Stateright's rule), so a
	// request that arrives too early waits instead of being consumed and forgotten.
	// It removes the states where such a message was consumed (and the successors
	// through them), so counts drop; a node that must drop stale messages to make
	// progress should not be checked with it (in FIFO mode the inert message blocks
	// its link until the receiver would act on it). Deliveries only: injections and
	// timers are always transitions. A message so kept stays in flight: a Boundary
	// that bounds messages in flight (a maxflight parameter) counts it, so with both
	// a state can be cut only because inert messages wait — eventually-properties
	// then read unknown (the cut), never holds.
	Guarded bool
}

// Crashes bounds crash faults. The zero value allows none.
type Crashes struct {
	// Budget is the number of crashes allowed along one path.
	Budget int
	// Nodes lists the nodes that may crash (nil = every node).
	Nodes []sim.NodeID
	// NoRestart makes crashes permanent (crash-stop); by default a crashed node may
	// restart at any later point (and may also stay down forever).
	NoRestart bool
	// MidSend also lets a crash cut a handler call's sends short (the simulator's
	// crash-send fault): for a call of a crashable node that sends k > 0 messages,
	// k more successors apply the call's stable writes and observations, let the
	// first j of its sends leave (j = 0..k-1, in the order the call sent them) and
	// crash the node, counting against Budget. The thesis' agreement-stage case — a
	// primary that crashed while sending an update, some backups have it and some do
	// not — is one of them.
	MidSend bool
}

// Cuts bounds connectivity changes (the model's partitions, "disconnect/reconnect").
// The zero value allows none.
type Cuts struct {
	// Budget is the number of cut actions allowed along one path. Restoring a cut link
	// is always allowed and does not refund the budget.
	Budget int
	// Pairs lists the node pairs that may be disconnected (nil = every pair of distinct
	// nodes). With OneWay the pair is directed (From, To) = (Pairs[i][0], Pairs[i][1]).
	Pairs [][2]sim.NodeID
	// OneWay makes a cut disconnect one direction only; by default a cut disconnects
	// both directions of the pair at once.
	OneWay bool
}

// DiscreteTime configures discrete time. The zero value is untimed mode: node clocks
// read 0 and a pending timer may fire at any point. With Tick > 0 the global clock
// (in ticks) is part of the state and advances by a Tick action, up to MaxTicks; each
// node has a local clock (ticks) that reads global time give or take its Drift; a
// timer set for d fires when its node's local clock reaches now+ceil(d/Tick).
//
// Timers are urgent: while any up node has a due timer, the global clock does not
// advance, and the node's own clock does not lead past it; the timer fires (as an
// action, interleaved with deliveries) first. Other nodes' clocks may still lead
// (a lead takes no global time). Messages take any
// number of ticks unless MaxDelay bounds it.
type DiscreteTime struct {
	// Tick is the length of one tick (Input.Now = local ticks × Tick).
	Tick time.Duration
	// MaxTicks bounds the global clock (required when Tick > 0).
	MaxTicks int
	// Drift, per node (nil = none), bounds |local - global| in ticks: a node's clock may
	// lag (the global clock ticks, the node's does not) or lead (the node's clock ticks
	// alone) within the bound. Local clocks never go backwards.
	Drift []int
	// MaxDelay, when > 0, bounds message delay: the clock does not tick while a message
	// has been in flight for MaxDelay ticks (it must be delivered or lost first).
	MaxDelay int
	// WithinTick delivers every message within the tick it was sent in: the clock does
	// not tick while any message is in flight (message delays below one tick — a tick
	// as long as a protocol's period, say). Every tick then starts with an empty
	// network, which keeps timer-driven protocols' state spaces small: the messages
	// of a tick interleave only among themselves.
	WithinTick bool
}

// Ghost is a monitor value folded over observations: after every handler call, for each
// observation the call recorded (sim.Outbox.Observe), in order,
// g = Fold(g, observation). The observation's Node, Kind and Value are the call's; Local
// is the node's clock reading; Time is the global clock (discrete time, 0 untimed);
// Index is always -1 (it depends on the path, and the ghost must depend on the state).
// The ghost is part of the state and of its fingerprint (canonical encoding by
// sim.AppendCanonical, or its own sim.StateEncoder). Fold receives a deep copy, so it may
// mutate and return its argument; it must not modify the observation's Value (with
// Actors.Memoize a recorded value is folded again wherever its call recurs, by several
// workers at once).
type Ghost struct {
	Init any
	Fold func(g any, o sim.Observation) any
}

// validate checks the configuration and reports the first problem in one line.
func (a *Actors) validate() error {
	n := len(a.Nodes)
	if n == 0 {
		return errors.New("actor system has no nodes")
	}
	if n > 1<<12 {
		return fmt.Errorf("actor system has %d nodes (at most %d)", n, 1<<12)
	}
	seen := map[string]bool{}
	for i, s := range a.Nodes {
		if s.Name == "" || s.New == nil {
			return fmt.Errorf("node %d needs a name and a constructor", i)
		}
		if s.Name == "env" || seen[s.Name] {
			return fmt.Errorf("node %d: duplicate or reserved name %q", i, s.Name)
		}
		seen[s.Name] = true
	}
	node := func(what string, id sim.NodeID) error {
		if id < 0 || int(id) >= n {
			return fmt.Errorf("%s names unknown node %d (there are %d)", what, id, n)
		}
		return nil
	}
	for i, in := range a.Inject {
		if err := node(fmt.Sprintf("inject[%d]", i), in.To); err != nil {
			return err
		}
		if in.Msg == nil {
			return fmt.Errorf("inject[%d] has no message", i)
		}
		if in.At < 0 || (in.At > 0 && a.Time.Tick <= 0) {
			return fmt.Errorf("inject[%d]: At %d needs discrete time and must be >= 0", i, in.At)
		}
	}
	nw := a.Network
	if nw.MaxLosses < 0 || nw.MaxDuplicates < 0 {
		return errors.New("network: negative loss or duplicate bound")
	}
	if nw.MaxLosses > 0 && !nw.Lossy {
		return errors.New("network: MaxLosses set but the network is not lossy")
	}
	if nw.Duplicating && nw.MaxDuplicates < 1 {
		return errors.New("network: a duplicating network needs MaxDuplicates >= 1")
	}
	if !nw.Duplicating && nw.MaxDuplicates > 0 {
		return errors.New("network: MaxDuplicates set but the network is not duplicating")
	}
	if a.Crashes.Budget < 0 || a.Crashes.Budget > 255 {
		return fmt.Errorf("crash budget %d: want 0..255", a.Crashes.Budget)
	}
	for i, id := range a.Crashes.Nodes {
		if err := node(fmt.Sprintf("crashes.nodes[%d]", i), id); err != nil {
			return err
		}
	}
	if a.Cuts.Budget < 0 || a.Cuts.Budget > 255 {
		return fmt.Errorf("cut budget %d: want 0..255", a.Cuts.Budget)
	}
	for i, p := range a.Cuts.Pairs {
		for _, id := range p {
			if err := node(fmt.Sprintf("cuts.pairs[%d]", i), id); err != nil {
				return err
			}
		}
		if p[0] == p[1] {
			return fmt.Errorf("cuts.pairs[%d]: a node cannot be cut from itself", i)
		}
	}
	t := a.Time
	if t.Tick < 0 {
		return errors.New("time: negative tick")
	}
	if t.Tick == 0 {
		if t.MaxTicks != 0 || t.Drift != nil || t.MaxDelay != 0 || t.WithinTick {
			return errors.New("time: MaxTicks, Drift, MaxDelay and WithinTick need discrete time (Tick > 0)")
		}
	} else {
		if t.MaxTicks <= 0 || t.MaxTicks > 1<<30 {
			return fmt.Errorf("time: MaxTicks %d: want 1..%d with discrete time", t.MaxTicks, 1<<30)
		}
		if t.Drift != nil && len(t.Drift) != n {
			return fmt.Errorf("time: %d drift bounds for %d nodes", len(t.Drift), n)
		}
		for i, d := range t.Drift {
			if d < 0 {
				return fmt.Errorf("time: drift bound of node %d is negative", i)
			}
		}
		if t.MaxDelay < 0 {
			return errors.New("time: negative MaxDelay")
		}
	}
	if a.Ghost.Init != nil && a.Ghost.Fold == nil {
		return errors.New("ghost: Init given without Fold")
	}
	names := map[string]bool{noPanic: true}
	for i, p := range a.Properties {
		if p.Name == "" || p.Check == nil {
			return fmt.Errorf("property %d needs a name and a predicate", i)
		}
		if names[p.Name] {
			return fmt.Errorf("duplicate or reserved property name %q", p.Name)
		}
		names[p.Name] = true
	}
	return nil
}

// noPanic is the built-in property every actor system has: no handler panics.
const noPanic = "no-panic"
