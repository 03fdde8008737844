package replication

import (
	"fmt"

	"github.com/simrun-dev/simrun/sim"
)

// RegID is a 128-bit registration ID (RP-1): drawn at random on a replica's first
// registration and reused for every later one (kept in stable storage).
type RegID struct{ Hi, Lo uint64 }

func (r RegID) String() string { return fmt.Sprintf("%016x%016x", r.Hi, r.Lo) }

// Less orders IDs (the minimum becomes primary, §5.2.3).
func (r RegID) Less(o RegID) bool { return r.Hi < o.Hi || (r.Hi == o.Hi && r.Lo < o.Lo) }

// Reg is one registration at a lookup registry.
type Reg struct {
	Group   string
	ID      RegID
	Node    sim.NodeID
	Primary bool
}

// Register registers (or renews) a replica with a registry under its group name for
// Lease (RP-1, §5.2.1).
type Register struct {
	Reg   Reg
	Lease int64 // nanoseconds
	// Notify subscribes the replica to membership-change events (Changed): remote
	// events instead of polling, the thesis' future work.
	Notify bool
}

// Kind implements sim.Message.
func (Register) Kind() string { return "REGISTER" }

// Registered acknowledges a registration (the replica's lease runs from its send).
type Registered struct {
	ID      RegID
	Primary bool
	Seq     int64
}

// Kind implements sim.Message.
func (Registered) Kind() string { return "REGISTERED" }

// Lookup asks a registry for a group's registrations (§5.2.3). Tag says which of the
// asker's lookups it is (a replica's own, or one made for a call to another group).
type Lookup struct {
	Group string
	Seq   int64
	Tag   string
}

// Kind implements sim.Message.
func (Lookup) Kind() string { return "LOOKUP" }

// Found answers a Lookup.
type Found struct {
	Seq  int64
	Tag  string
	Regs []Reg
}

// Kind implements sim.Message.
func (Found) Kind() string { return "FOUND" }

// Changed notifies a subscriber that a group's membership changed (RP-1).
type Changed struct {
	Group string
	Regs  []Reg
}

// Kind implements sim.Message.
func (Changed) Kind() string { return "CHANGED" }

// Ping is the ping loop's is_primary call (§5.2.2).
type Ping struct{ Seq int64 }

// Kind implements sim.Message.
func (Ping) Kind() string { return "PING" }

// Pong answers a Ping: whether the callee is primary, and how many requests it has
// applied (a backup behind asks for the state).
type Pong struct {
	Seq     int64
	Primary bool
	Applied int64
	// Term and TermOf: the term of the history the callee holds (passive replicas).
	Term   int64
	TermOf RegID
	// Claiming: not primary yet, but gathering the others' state to take over
	// (passive replicas).
	Claiming bool
}

// Kind implements sim.Message.
func (Pong) Kind() string { return "PONG" }

// Op is a client operation on the replicated service (a key-value store, as the
// worklist keeps work items by key).
type Op struct {
	Key   string
	Write bool
	Val   int64
}

// Request is a client request. ID is unique (a client's node and sequence number, or,
// for a transition, the instance and hop: the same after the predecessor fails over);
// the response goes to Client (none when it is -1: a primary's own step).
type Request struct {
	ID     string
	Client sim.NodeID
	Seq    int64
	Op     Op
}

// Kind implements sim.Message.
func (Request) Kind() string { return "REQUEST" }

// Response answers a request (Val: the value read, or written).
type Response struct {
	ID     string
	Client sim.NodeID
	Seq    int64
	Val    int64
	// NotPrimary: the callee is not the primary (the client looks again).
	NotPrimary bool
}

// Kind implements sim.Message.
func (Response) Kind() string { return "RESPONSE" }

// Update tells the backups, before the service call, which request the primary is
// about to execute (§5.1.4: a new primary knows where to resume).
type Update struct {
	ID     string
	Client sim.NodeID
	Seq    int64
	Op     Op
}

// Kind implements sim.Message.
func (Update) Kind() string { return "UPDATE" }

// DoneMsg tells the backups, after the call, its result: they apply it and store the
// response for the duplicate check.
type DoneMsg struct {
	ID     string
	Client sim.NodeID
	Seq    int64
	Op     Op
	Resp   int64
	Index  int64 // the primary's applied count after it
	Term   int64 // the primary's term (TermOf: begun by)
	TermOf RegID
}

// Kind implements sim.Message.
func (DoneMsg) Kind() string { return "DONE" }

// BackupAck acknowledges a DoneMsg.
type BackupAck struct {
	ID     string
	Client sim.NodeID
	Seq    int64
	// Index: the backup has applied everything up to it.
	Index int64
}

// Kind implements sim.Message.
func (BackupAck) Kind() string { return "ACK" }

// SyncReq asks the primary for its state (a backup that is behind), or a replica for
// its state (a claimer; Claimer is its registration ID, zero otherwise).
type SyncReq struct{ Claimer RegID }

// Kind implements sim.Message.
func (SyncReq) Kind() string { return "SYNC" }

// Snapshot is a replica's state (Primary: the sender is primary). Term is the term of
// the primary whose history it is: of two states, the one of the later term is the
// fresher, then the longer (a primary that crashed before its done left, and came
// back, holds a request nobody else has at an index the next primary filled).
type Snapshot struct {
	Store   map[string]int64
	Dup     map[string]int64
	Applied int64
	Term    int64
	TermOf  RegID
	Primary bool
}

// Kind implements sim.Message.
func (Snapshot) Kind() string { return "SNAPSHOT" }

// ClientID is the request ID of a client's seq-th request.
func ClientID(c sim.NodeID, seq int64) string { return fmt.Sprintf("%d/%d", c, seq) }

// ---- active replication (RP-3) ----

// Order is the sequencer's assignment of the Index-th place of the total order to a
// request, multicast to every replica of the group (RP-3).
type Order struct {
	Epoch int64
	Index int64
	Req   Request
}

// Kind implements sim.Message.
func (Order) Kind() string { return "ORDER" }

// Fetch asks the sequencer for the order from index From on (a replica that saw a gap,
// or is behind after a restart).
type Fetch struct{ From int64 }

// Kind implements sim.Message.
func (Fetch) Kind() string { return "FETCH" }

// Orders re-sends a run of the order from Start on.
type Orders struct {
	Epoch int64
	Start int64
	Reqs  []Request
}

// Kind implements sim.Message.
func (Orders) Kind() string { return "ORDERS" }

// SeqSync is a new sequencer's request for a replica's order (sequencer failover):
// a replica that answers joins Epoch and ignores orders of older epochs from then on.
type SeqSync struct{ Epoch int64 }

// Kind implements sim.Message.
func (SeqSync) Kind() string { return "SEQSYNC" }

// SeqState answers a SeqSync with the replica's order. Joined: the replica joined the
// asker's epoch; if not, Epoch is the epoch it follows another sequencer in.
type SeqState struct {
	Asked  int64
	Epoch  int64
	Joined bool
	Log    []Request
}

// Kind implements sim.Message.
func (SeqState) Kind() string { return "SEQSTATE" }

// NewView is a new sequencer's order, sent once it has taken over.
type NewView struct {
	Epoch int64
	Log   []Request
}

// Kind implements sim.Message.
func (NewView) Kind() string { return "NEWVIEW" }
