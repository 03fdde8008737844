// Package sim is the protocol-facing API and the deterministic discrete-event kernel
// of simrun.
//
// # The protocol contract
//
// A protocol is a set of nodes. A node is a value implementing Node: it handles one
// Input at a time — Start, Restart (after a crash, rebuilt from stable storage alone),
// Receive (a message) or Timeout (a timer firing) — and writes its effects into an
// Outbox: Send, SetTimer, CancelTimer, Store/Delete (stable storage), Observe (an event
// for the checkers). The engine that drives the node (the simulator in this package or
// the model checker in package model) performs the effects after the call returns.
//
//   - One handler call is atomic, like a local transaction: a crash happens between
//     calls, never inside one, and the effects of a call are applied together. Stable
//     writes are applied before the call's messages leave.
//   - Stable storage changes only through the Outbox; everything else the node holds is
//     volatile and is lost on a crash.
//   - Time and randomness come in through the Input (Input.Now is the node's local,
//     possibly drifting, clock; Input.Rand is fresh random bits from a stream the
//     engine owns). Protocol code never reads a clock, never uses global randomness,
//     never starts goroutines, never does I/O, and never lets a map's iteration order
//     reach an output.
//   - Nodes can be deep-copied and canonically encoded, so the model checker can branch
//     and fingerprint them: keep state in value types and slices; maps are fine (they
//     are encoded in key order). Implement Cloner and StateEncoder for speed; otherwise
//     DeepCopy and AppendCanonical do it by reflection.
//   - Messages are plain value structs with exported fields, a kind name (for per-kind
//     counts) and optionally a size (Sizer). A handler must not modify a message it
//     received, nor anything the message references (slices, maps, pointers): the
//     model checker shares one in-flight message between every state that holds it,
//     and the simulator may deliver the same value twice (duplication). Copy before
//     changing.
//
// Broken internal invariants in protocol code should panic: the simulator turns a panic
// into a failed run carrying its seed, never a crash of the tool.
package sim

import (
	"fmt"
	"time"
)

// Time is a point in virtual time, in nanoseconds since the start of a run. Durations
// are ordinary time.Duration values (no wall clock is ever read).
type Time int64

// Add returns t+d.
func (t Time) Add(d time.Duration) Time { return t + Time(d) }

// Sub returns t-u as a duration.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// String formats t as a duration since the start ("1.5s").
func (t Time) String() string { return time.Duration(t).String() }

// NodeID names a node: its index in the system's node list.
type NodeID int32

// Env is the sender of inputs injected by the workload (not a node).
const Env NodeID = -1

// Message is a protocol message: a plain value struct with exported fields. Received
// messages are read-only (see the package doc).
type Message interface {
	// Kind names the message type for per-kind counts and traces ("VOTE", "Ping").
	Kind() string
}

// Sizer is implemented by messages that report a size in bytes (for byte counts).
type Sizer interface{ Size() int }

// TimerID names a timer of one node. Setting a timer that is already pending re-arms
// it; at most one timer per ID is pending.
type TimerID string

// InputKind says which of the four inputs a node is handling.
type InputKind uint8

const (
	// Start is the first input of a node's first incarnation.
	Start InputKind = iota + 1
	// Restart is the first input after a crash: volatile state is gone, Input.Stable
	// holds exactly what the node stored before it crashed.
	Restart
	// Receive delivers Input.Msg from Input.From.
	Receive
	// Timeout fires timer Input.Timer.
	Timeout
)

func (k InputKind) String() string {
	switch k {
	case Start:
		return "start"
	case Restart:
		return "restart"
	case Receive:
		return "recv"
	case Timeout:
		return "timer"
	}
	return fmt.Sprintf("input(%d)", uint8(k))
}

// Input is one thing that happens to a node.
type Input struct {
	Kind InputKind
	// Self is the node handling the input.
	Self NodeID
	// Now is the node's local clock reading (offset and drift applied).
	Now Time
	// From and Msg are set for Receive. From is Env for workload injections.
	From NodeID
	Msg  Message
	// Timer is set for Timeout.
	Timer TimerID
	// Rand is 64 fresh random bits from the node's stream (the model checker passes a
	// value derived from the state and action; it does not branch on it).
	Rand uint64
	// Stable is a read-only view of the node's stable storage as it is before this
	// call's writes.
	Stable StableView
}

// Node is a protocol state machine.
type Node interface {
	Handle(in Input, out *Outbox)
}

// NodeSpec describes one node of a system: its display name and a constructor. New is
// called once at start and again on every restart after a crash; it must return a node
// holding only configuration (the stable state arrives in the Restart input).
type NodeSpec struct {
	Name string
	New  func() Node
}

// Cloner is implemented by nodes that deep-copy themselves faster than DeepCopy. A
// clone may share state with the original copy-on-write, as long as neither ever sees
// the other's later changes; Clone must not modify the original (the model checker
// clones stored nodes from several goroutines at once).
type Cloner interface{ Clone() Node }

// StateEncoder is implemented by nodes (or any state value) that encode themselves
// canonically faster than AppendCanonical. Equal states must give equal bytes.
type StateEncoder interface{ AppendState(b []byte) []byte }

// CloneNode deep-copies n, through Cloner when implemented.
func CloneNode(n Node) Node {
	if n == nil {
		return nil
	}
	if c, ok := n.(Cloner); ok {
		return c.Clone()
	}
	return DeepCopy(n)
}

// Observation is an event recorded for the checkers: "stage committed", "resource
// granted", an operation's call or return. Kind names it; Payload is a plain value.
type Observation struct {
	// Index orders observations of a run totally (stable across engines).
	Index int64
	// Time is the global virtual time (not the node's local clock) of the call that
	// recorded it; Local is the node's clock reading in that call.
	Time  Time
	Local Time
	Node  NodeID
	Kind  string
	Value any
}

// Envelope is a message addressed to a node.
type Envelope struct {
	To  NodeID
	Msg Message
}

// TimerOp sets (After >= 0) or cancels (Cancel) a timer.
type TimerOp struct {
	ID     TimerID
	After  time.Duration // on the node's local clock
	Cancel bool
}

// Write is a stable-storage write (Delete removes the key).
type Write struct {
	Key    string
	Value  any
	Delete bool
}

// Outbox collects the effects of one handler call. The engine resets it before every
// call; a node must not keep a reference to it.
type Outbox struct {
	sends  []Envelope
	timers []TimerOp
	writes []Write
	obs    []obsEffect
	// track and cover: rule coverage (rules.go).
	track bool
	cover []int32
}

type obsEffect struct {
	kind  string
	value any
}

// Send queues m for delivery to node to.
func (o *Outbox) Send(to NodeID, m Message) {
	if m == nil {
		panic("sim: Send of a nil message")
	}
	o.sends = append(o.sends, Envelope{To: to, Msg: m})
}

// Broadcast sends m to every node in to.
func (o *Outbox) Broadcast(to []NodeID, m Message) {
	for _, n := range to {
		o.Send(n, m)
	}
}

// SetTimer arms (or re-arms) timer id to fire after d on the node's local clock.
func (o *Outbox) SetTimer(id TimerID, d time.Duration) {
	if d < 0 {
		d = 0
	}
	o.timers = append(o.timers, TimerOp{ID: id, After: d})
}

// CancelTimer disarms timer id if it is pending.
func (o *Outbox) CancelTimer(id TimerID) {
	o.timers = append(o.timers, TimerOp{ID: id, Cancel: true})
}

// Store writes v under key in stable storage. The engine keeps a deep copy, so the
// caller may go on mutating v.
func (o *Outbox) Store(key string, v any) {
	o.writes = append(o.writes, Write{Key: key, Value: v})
}

// Delete removes key from stable storage.
func (o *Outbox) Delete(key string) {
	o.writes = append(o.writes, Write{Key: key, Delete: true})
}

// Observe records an observation for the checkers.
func (o *Outbox) Observe(kind string, v any) {
	o.obs = append(o.obs, obsEffect{kind: kind, value: v})
}

// Reset empties the outbox, keeping its buffers (engines call it before every call).
func (o *Outbox) Reset() {
	clear(o.sends)
	clear(o.timers)
	clear(o.writes)
	clear(o.obs)
	o.sends = o.sends[:0]
	o.timers = o.timers[:0]
	o.writes = o.writes[:0]
	o.obs = o.obs[:0]
	o.cover = o.cover[:0]
}

// Sends returns the queued messages (for engines).
func (o *Outbox) Sends() []Envelope { return o.sends }

// Timers returns the queued timer operations in call order (for engines).
func (o *Outbox) Timers() []TimerOp { return o.timers }

// Writes returns the queued stable writes in call order (for engines).
func (o *Outbox) Writes() []Write { return o.writes }

// NumObservations returns how many observations are queued.
func (o *Outbox) NumObservations() int { return len(o.obs) }

// Observation returns the i-th queued observation's kind and value.
func (o *Outbox) Observation(i int) (string, any) { return o.obs[i].kind, o.obs[i].value }

// PanicError is a protocol handler panic captured by an engine.
type PanicError struct {
	Node  NodeID
	Input InputKind
	Value any
	Stack string
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("protocol panic at node %d during %s: %v", e.Node, e.Input, e.Value)
}
