package exactlyonce

import "github.com/simrun-dev/simrun/sim"

// Tid identifies a transaction: the coordinator's node and a sequence number kept in
// its stable storage (so Tids stay unique across crashes). Paper §4 fn. 5: the same
// orchestrator may start several rounds of voting; the Tid tells them apart.
type Tid struct {
	Node sim.NodeID
	Seq  uint32
}

// Every network message carries the StageID of the stage whose processing it belongs
// to (for 2PC messages: the stage whose transaction Puts the agent onward), so
// messages can be counted per stage.
type staged interface {
	sim.Message
	stage() StageID
}

// ---- two-phase commit between transaction managers (EO-2, EO-3) ----

// Prepare is the coordinator TM's rm_prepare to the queue manager of a next-stage
// node: the Put of the agent and the next stage's record, inside transaction Tid.
type Prepare struct {
	Stage  StageID
	Tid    Tid
	Record StageRecord
	Agent  Agent
}

// Prepared answers Prepare: rm_yes (Yes) or rm_no.
type Prepared struct {
	Stage StageID
	Tid   Tid
	Yes   bool
}

// Commit is rm_commit to a remote participant; re-sent until CommitAck.
type Commit struct {
	Stage StageID
	Tid   Tid
}

// Abort is rm_rollback to a remote participant. Under presumed abort it is a courtesy:
// an in-doubt participant that misses it learns the outcome through Status.
type Abort struct {
	Stage StageID
	Tid   Tid
}

// CommitAck is rm_ack for a Commit.
type CommitAck struct {
	Stage StageID
	Tid   Tid
}

// Status is an in-doubt participant asking the coordinator for the outcome of Tid.
type Status struct {
	Stage StageID
	Tid   Tid
}

// ---- voting protocol (EO-5, EO-6, EO-7) ----

// Vote is VOTE(StageId, Tid, OrchId).
type Vote struct {
	Stage StageID
	Tid   Tid
	Orch  sim.NodeID
}

// Yes is YES(StageId, Tid, VoterId).
type Yes struct {
	Stage StageID
	Tid   Tid
	Voter sim.NodeID
}

// No is NO(StageId, Tid, VoterId).
type No struct {
	Stage StageID
	Tid   Tid
	Voter sim.NodeID
}

// CondYes is COND_YES(StageId, Tid, OrchSet, VoterId): a yes provided every voter in
// OrchSet votes yes for the same orchestrator.
type CondYes struct {
	Stage   StageID
	Tid     Tid
	OrchSet []sim.NodeID
	Voter   sim.NodeID
}

// UnVote is UN_VOTE(StageId, Tid, OrchId): withdraw the vote given to OrchId for Tid.
type UnVote struct {
	Stage StageID
	Tid   Tid
	Orch  sim.NodeID
}

// Forget is FORGET(StageId, OrchId): the stage committed at OrchId.
type Forget struct {
	Stage StageID
	Orch  sim.NodeID
}

// ForgetAck is ACK(StageId) for a Forget.
type ForgetAck struct {
	Stage StageID
	Voter sim.NodeID
}

// Inquiry is INQUIRY(StageId, VoterId), extended with the Tid the voter's vote was
// given for (see the package comment: it makes a late answer harmless).
type Inquiry struct {
	Stage StageID
	Tid   Tid
	Voter sim.NodeID
}

// ---- selection protocol (EO-8) ----

// IAmAlive is the worker's periodic I_AM_ALIVE to the observers of its stage.
type IAmAlive struct{ Stage StageID }

// AreYouThere asks the higher-priority stage nodes whether they are available.
type AreYouThere struct{ Stage StageID }

// IAmThere answers AreYouThere.
type IAmThere struct{ Stage StageID }

// IAmSelected announces a newly selected worker to the other stage nodes.
type IAmSelected struct{ Stage StageID }

// SelectedAck acknowledges IAmSelected (majority-ACK variant of EO-8 only).
type SelectedAck struct{ Stage StageID }

// ---- workload ----

// Launch hands an agent to its home node (the launch stage's node). It is injected by
// the workload, not sent over the network.
type Launch struct{ Agent Agent }

// Kind implements sim.Message.
func (Launch) Kind() string { return "LAUNCH" }

func (m Prepare) Kind() string     { return "PREPARE" }
func (m Prepared) Kind() string    { return "PREPARED" }
func (m Commit) Kind() string      { return "COMMIT" }
func (m Abort) Kind() string       { return "ABORT" }
func (m CommitAck) Kind() string   { return "COMMIT_ACK" }
func (m Status) Kind() string      { return "STATUS" }
func (m Vote) Kind() string        { return "VOTE" }
func (m Yes) Kind() string         { return "YES" }
func (m No) Kind() string          { return "NO" }
func (m CondYes) Kind() string     { return "COND_YES" }
func (m UnVote) Kind() string      { return "UN_VOTE" }
func (m Forget) Kind() string      { return "FORGET" }
func (m ForgetAck) Kind() string   { return "ACK" }
func (m Inquiry) Kind() string     { return "INQUIRY" }
func (m IAmAlive) Kind() string    { return "I_AM_ALIVE" }
func (m AreYouThere) Kind() string { return "ARE_YOU_THERE" }
func (m IAmThere) Kind() string    { return "I_AM_THERE" }
func (m IAmSelected) Kind() string { return "I_AM_SELECTED" }
func (m SelectedAck) Kind() string { return "SELECTED_ACK" }

func (m Prepare) stage() StageID     { return m.Stage }
func (m Prepared) stage() StageID    { return m.Stage }
func (m Commit) stage() StageID      { return m.Stage }
func (m Abort) stage() StageID       { return m.Stage }
func (m CommitAck) stage() StageID   { return m.Stage }
func (m Status) stage() StageID      { return m.Stage }
func (m Vote) stage() StageID        { return m.Stage }
func (m Yes) stage() StageID         { return m.Stage }
func (m No) stage() StageID          { return m.Stage }
func (m CondYes) stage() StageID     { return m.Stage }
func (m UnVote) stage() StageID      { return m.Stage }
func (m Forget) stage() StageID      { return m.Stage }
func (m ForgetAck) stage() StageID   { return m.Stage }
func (m Inquiry) stage() StageID     { return m.Stage }
func (m IAmAlive) stage() StageID    { return m.Stage }
func (m AreYouThere) stage() StageID { return m.Stage }
func (m IAmThere) stage() StageID    { return m.Stage }
func (m IAmSelected) stage() StageID { return m.Stage }
func (m SelectedAck) stage() StageID { return m.Stage }

// Sizes: a 16-byte header (kind, StageId) plus the payload, roughly as a compact
// binary encoding would have it. Only Prepare carries the agent.
const hdr = 16

func (m Prepare) Size() int {
	return hdr + 8 + 8*len(m.Record.Nodes) + 16 + 8*len(m.Agent.Itinerary.Stages) + 16*len(m.Agent.Results)
}
func (Prepared) Size() int    { return hdr + 9 }
func (Commit) Size() int      { return hdr + 8 }
func (Abort) Size() int       { return hdr + 8 }
func (CommitAck) Size() int   { return hdr + 8 }
func (Status) Size() int      { return hdr + 8 }
func (Vote) Size() int        { return hdr + 12 }
func (Yes) Size() int         { return hdr + 12 }
func (No) Size() int          { return hdr + 12 }
func (m CondYes) Size() int   { return hdr + 12 + 4*len(m.OrchSet) }
func (UnVote) Size() int      { return hdr + 12 }
func (Forget) Size() int      { return hdr + 4 }
func (ForgetAck) Size() int   { return hdr + 4 }
func (Inquiry) Size() int     { return hdr + 12 }
func (IAmAlive) Size() int    { return hdr }
func (AreYouThere) Size() int { return hdr }
func (IAmThere) Size() int    { return hdr }
func (IAmSelected) Size() int { return hdr }
func (SelectedAck) Size() int { return hdr }
