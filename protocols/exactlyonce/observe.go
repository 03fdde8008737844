package exactlyonce

import "github.com/simrun-dev/simrun/sim"

// Observation kinds recorded for the checkers and metrics. Checkers read only these
// and the final stable storage; they never look into a running node.
const (
	ObsAccepted = "eo/accepted" // Accepted: the agent is in its home queue (stage 0 Active)
	ObsActive   = "eo/active"   // Activated: a stage became Active at a node (its Put committed there)
	ObsBegin    = "eo/begin"    // Began: a worker began a stage transaction
	ObsPrepare  = "eo/prepare"  // Preparing: the stage transaction's 2PC phase 1 began (votes requested)
	ObsTxEnd    = "eo/txend"    // TxEnded: a stage transaction ended (committed or aborted)
	ObsCommit   = "eo/commit"   // Committed: a stage transaction's commit decision was logged
	ObsDone     = "eo/done"     // Done: the agent's last stage committed
	ObsOrch     = "eo/orch"     // OrchChange: an orchestrator's stable transaction state changed
	ObsRole     = "eo/role"     // RoleChange: a node became worker or observer of a stage
	ObsCondYes  = "eo/condyes"  // CondYesGiven: a voter answered COND_YES
	ObsForgot   = "eo/forgot"   // Forgot: a voter forgot a stage (FORGET)
	ObsUnVote   = "eo/unvote"   // UnVoteSent: an orchestrator sent UN_VOTE
	ObsCall     = "eo/call"     // ResCall: a stage's Execute called the resource service
	ObsReturn   = "eo/return"   // ResReturn: the call's transaction committed at the service
	ObsAbort    = "eo/abort"    // ResAbort: the call's transaction rolled back at the service
	ObsSent     = "eo/sent"     // Sent: a protocol message left a node (Config.CountMessages)
	ObsPut      = "eo/put"      // PutChange: a next-stage participant's Put was prepared, committed, aborted or dropped
)

// Accepted is observed when the home node stores a launched agent.
type Accepted struct {
	Agent  AgentID
	Stages int
}

// Activated is observed when a stage record becomes Active at a node.
type Activated struct {
	Stage StageID
	Node  sim.NodeID
}

// Began is observed when a worker begins a stage transaction.
type Began struct {
	Stage StageID
	Tid   Tid
	Node  sim.NodeID
}

// Preparing is observed when a stage transaction enters phase 1 (rm_prepare to every
// participant; the orchestrator starts collecting votes).
type Preparing struct {
	Stage StageID
	Tid   Tid
	Node  sim.NodeID
}

// TxEnded is observed when a stage transaction ends at its coordinator.
type TxEnded struct {
	Stage     StageID
	Tid       Tid
	Node      sim.NodeID
	Committed bool
	// Why an aborted transaction ended: timeout, remote-no, orch-no, gave-up
	// (HIGHER_PRIO) or give-up (FORGET from another orchestrator); empty if committed.
	Why string `json:",omitempty"`
}

// Committed is observed when a stage transaction commits (decision logged). Record is
// the committed stage's node list (the worker's record), Next the record Put to the
// next stage (nil for the last stage).
type Committed struct {
	Stage  StageID
	Tid    Tid
	Node   sim.NodeID
	Record []sim.NodeID
	Next   []sim.NodeID
	Last   bool
	Agent  Agent // the agent as Put onward (after this stage's Execute)
}

// Put outcomes at a participant (PutChange.State).
const (
	PutPrepared  = "prepared"  // rm_prepare: the Put is in stable storage, in doubt
	PutCommitted = "committed" // rm_commit: the stage became Active here
	PutAborted   = "aborted"   // rm_rollback: ABORT from the coordinator (or its own abort)
	PutDropped   = "dropped"   // dropped on FORGET of its stage: the stage committed elsewhere and is over
)

// PutChange is observed when the Put of transaction Tid (coordinated by Coord) at
// participant Node changes state. Stage is the stage the Put creates (one after the
// coordinating transaction's). The scenario package checks EO-2/EO-3 atomicity with
// it: no Put of a committed Tid is aborted, no Put of an uncommitted Tid commits.
type PutChange struct {
	Stage StageID
	Tid   Tid
	Node  sim.NodeID
	Coord sim.NodeID
	State string
}

// Done is observed when an agent's last stage commits.
type Done struct {
	Agent   AgentID
	Node    sim.NodeID
	Results []Result
}

// OrchState is an orchestrator's transaction state (EO-4).
type OrchState uint8

const (
	// OrchUnknown: nothing stored for the transaction.
	OrchUnknown OrchState = iota
	// OrchReady: a majority voted yes; rm_yes returned; waiting for the TM's outcome.
	OrchReady
	// OrchCommitted: rm_commit received; FORGET being sent until every voter ACKs.
	OrchCommitted
)

func (s OrchState) String() string {
	switch s {
	case OrchReady:
		return "Ready"
	case OrchCommitted:
		return "Committed"
	}
	return "Unknown"
}

// MarshalText names the state in traces and JSON.
func (s OrchState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// OrchChange is observed when an orchestrator's stable state changes.
type OrchChange struct {
	Stage StageID
	Node  sim.NodeID
	Tid   Tid
	State OrchState
}

// Role is a node's role in a stage (EO-8).
type Role uint8

const (
	// RoleNone: the node holds no role (stage unknown here).
	RoleNone Role = iota
	// RoleObserver monitors the worker.
	RoleObserver
	// RoleSelecting: the observer timed out and asked the higher-priority nodes.
	RoleSelecting
	// RoleWaiting: a higher-priority node answered; waiting for the new worker.
	RoleWaiting
	// RoleClaiming: selected, collecting a majority of ACKs (majority variant).
	RoleClaiming
	// RoleWorker executes the stage.
	RoleWorker
)

var roleNames = [...]string{"none", "observer", "selecting", "waiting", "claiming", "worker"}

func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "role?"
}

// MarshalText names the role in traces and JSON.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// RoleChange is observed when a node becomes worker or observer of a stage. Selected
// is set when the node became worker through the selection protocol (a failover).
type RoleChange struct {
	Stage    StageID
	Node     sim.NodeID
	Role     Role
	Selected bool
}

// CondYesGiven is observed when a voter answers COND_YES.
type CondYesGiven struct {
	Stage StageID
	Voter sim.NodeID
	Orch  sim.NodeID
	Cond  []sim.NodeID
}

// UnVoteSent is observed when an orchestrator sends UN_VOTE(Stage, Tid) to Voter.
type UnVoteSent struct {
	Stage StageID
	Orch  sim.NodeID
	Voter sim.NodeID
	Tid   Tid
}

// Forgot is observed when a voter forgets a stage on FORGET.
type Forgot struct {
	Stage StageID
	Node  sim.NodeID
}

// ResCall is observed when a stage's Execute calls Reserve at a node's resource
// service, inside transaction Tid.
type ResCall struct {
	Node  sim.NodeID
	Pool  string
	Agent AgentID
	Hop   int32
	Tid   Tid
}

// ResReturn is observed when the service commits the reservation of Tid; Seat is the
// reserved seat (0: the pool was full).
type ResReturn struct {
	Node  sim.NodeID
	Pool  string
	Agent AgentID
	Hop   int32
	Tid   Tid
	Seat  int32
}

// ResAbort is observed when the service rolls the reservation of Tid back.
type ResAbort struct {
	Node sim.NodeID
	Pool string
	Tid  Tid
}

// Sent is observed for every protocol message a node sends to another node (local
// interactions between a node's own components are not messages).
type Sent struct {
	Stage StageID
	Kind  string
}
