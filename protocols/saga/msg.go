package saga

import "fmt"

// TrID identifies a transaction (SG-2 step 3): the agent that started it and its
// sequence number there (kept in stable storage, so unique across crashes).
type TrID struct {
	Init string
	Seq  int64
}

func (t TrID) String() string { return fmt.Sprintf("%s#%d", t.Init, t.Seq) }

// Status is a section's state (Definition 3), plus Failed (its incoming action failed)
// and Null (it never ran and was closed by a compensation: a recorded no-op).
type Status uint8

// The section states of §3.1 and two more. A handler call is atomic, so the
// transient processing and processing_compensation states never outlive a step; they
// appear in the log only between a request and its action when a join waits.
const (
	Pendant Status = iota
	Processing
	Processed
	PendantCompensation
	ProcessingCompensation
	ProcessedCompensation
	Failed
	Null
)

func (s Status) String() string {
	return [...]string{"pendant", "processing", "processed", "pendant_compensation", "processing_compensation", "processed_compensation", "failed", "null"}[s]
}

// settled reports whether a section needs no more work in a compensated transaction.
func (s Status) settled() bool { return s == ProcessedCompensation || s == Null || s == Failed }

// StartTx is the microservice telling its agent to start a transaction (SG-2 step 1):
// the initial section and the input data.
type StartTx struct {
	Start SecKey
	Input Data
}

// Kind implements sim.Message.
func (StartTx) Kind() string { return "START" }

// Req asks an agent to run a section of a transaction with the output of the
// section before it (SG-2 step 5).
type Req struct {
	Tr    TrID
	Start SecKey
	Input Data // the transaction's input (to build its record)
	Sec   SecKey
	From  SecKey
	Data  Data
}

// Kind implements sim.Message.
func (Req) Kind() string { return "SECTION" }

// Note tells the other agents of a transaction what became of a section: processed
// (EndsSt: it ended its sub-transaction, SG-2 step 6), failed (the stop message of
// SG-3 step 2), compensated or null (SG-3 step 4). Sec is zero and Abort set for an
// abort without a failed section (a lost agent, SG-4).
type Note struct {
	From   string
	Tr     TrID
	Start  SecKey
	Input  Data
	Sec    SecKey
	Status Status
	EndsSt bool
	Abort  bool
	// Decision carries the initiator's commit decision (Sec zero).
	Decision Outcome
}

// Kind implements sim.Message.
func (Note) Kind() string { return "NOTICE" }

// Ack acknowledges a Req or a Note (retransmitted until acknowledged).
type Ack struct {
	Tr       TrID
	Sec      SecKey
	Status   Status
	Req      bool
	Abort    bool
	Decision Outcome
	// Join names the predecessor whose request is acknowledged when Sec is a join
	// (two predecessors, possibly at one agent: each request is kept until its own
	// acknowledgement); empty otherwise.
	Join string `json:",omitempty"`
}

// Kind implements sim.Message.
func (Ack) Kind() string { return "ACK" }

// Beat is the connectivity exchange along the line (SG-4): the sender's view of every
// agent's connectivity.
type Beat struct {
	From string
	View []Entry
}

// Kind implements sim.Message.
func (Beat) Kind() string { return "CONN" }

// Size implements sim.Sizer: a view entry is about 16 bytes.
func (b Beat) Size() int { return 16 + 16*len(b.View) }

// Entry is one agent's connectivity: Lost, at generation Gen (the larger generation
// wins; an agent that hears it is thought lost bumps its own).
type Entry struct {
	Agent string
	Gen   uint32
	Lost  bool
}

// Hello is sent by an agent after a restart (SG-4 crash extension: it reconnects):
// the others re-send what it has not acknowledged.
type Hello struct{ From string }

// Kind implements sim.Message.
func (Hello) Kind() string { return "HELLO" }
