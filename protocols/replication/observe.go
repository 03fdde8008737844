package replication

import (
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Observation kinds.
const (
	ObsRole     = "rp/role"     // Role: a replica became primary or backup
	ObsExec     = "rp/exec"     // Exec: the primary executed a request (its Done went out)
	ObsApply    = "rp/apply"    // Exec: a backup applied a Done
	ObsCall     = "rp/call"     // ClientOp: a client called
	ObsReturn   = "rp/return"   // ClientOp: it returned
	ObsFailover = "rp/failover" // Failover: a replica handled a primary failure (§5.2.3)
	ObsLookup   = "rp/lookup"   // Looked: a passive replica looked its group up in every registry
	ObsRefused  = "rp/refused"  // CallEvent: a call's request was answered "not primary"
	ObsRelook   = "rp/relook"   // CallEvent: a call looked its group up in every registry
	ObsRespond  = "rp/respond"  // Answer: a passive primary answered a request's client
	ObsAck      = "rp/ack"      // Ack: a backup acknowledged the primary's done or state
)

// Role is observed when a replica's role changes.
type Role struct {
	ID      RegID
	Primary bool
	Why     string
}

// Exec is observed when a request is executed (primary) or applied (backup).
type Exec struct {
	Group  string
	ID     string
	Client sim.NodeID
	Seq    int64
	Op     Op
	Resp   int64
	Index  int64
	// Backups: the backups whose acknowledgements the primary waits for before it
	// answers (ObsExec of a passive primary).
	Backups []sim.NodeID `json:",omitempty"`
}

// Answer is observed when a passive primary answers a request's client: the request
// in progress once its backups acknowledged (Index: its place), or a duplicate from
// the table (Dup).
type Answer struct {
	Group string
	ID    string
	Index int64 `json:",omitempty"`
	Dup   bool  `json:",omitempty"`
}

// Ack is observed when a backup acknowledges to the primary To that it holds every
// request up to Index; Applied is how many it has applied.
type Ack struct {
	Group   string
	To      sim.NodeID
	Index   int64
	Applied int64
}

// ClientOp is a client call or return.
type ClientOp struct {
	Client sim.NodeID
	Seq    int64
	Op     Op
	Val    int64
}

// Failover is observed when a replica runs handle_primary_failure and settles on a
// primary.
type Failover struct {
	Primary sim.NodeID
	Self    bool
	// Listed is how many registrations the lookup found; Alone, when it listed the
	// replica alone, for how long the lookups have done so.
	Listed int
	Alone  time.Duration
}

// Looked is observed when a passive replica looks its group up in the registries: the
// ping thread's verify_primary or handle_primary_failure (§5.2.2-5.2.4), or a claim's
// refresh; Purpose says which ("verify", "failure" or "claim").
type Looked struct {
	Group   string
	Purpose string
	// ID is the replica's registration ID (RP-1: the same across restarts).
	ID RegID
}

// CallEvent is a step of a call's replica locator (caller.go): the called group,
// whether it is active, and the request's ID.
type CallEvent struct {
	Group  string
	Active bool
	ID     string
}
