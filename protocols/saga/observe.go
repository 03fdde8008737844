package saga

// Observation kinds recorded for the checkers (they read these and the final stable
// storage, never a running agent).
const (
	ObsBegin      = "saga/begin"       // Begin: a transaction started (SG-2 steps 1-3)
	ObsSection    = "saga/section"     // SectionEv: a section changed state
	ObsCall       = "saga/call"        // Call: a service action was called (SG-P5)
	ObsReturn     = "saga/return"      // Return: it returned
	ObsAbort      = "saga/abort"       // AbortEv: an agent stopped a transaction (SG-3, SG-4)
	ObsOutcome    = "saga/outcome"     // OutcomeEv: a transaction ended at an agent
	ObsLate       = "saga/late"        // Late: a request arrived after the abort; not run
	ObsDuplicate  = "saga/duplicate"   // Duplicate: a redelivered request; nothing ran
	ObsReplayed   = "saga/replayed"    // Replayed: the agent rebuilt itself from its log
	ObsRefused    = "saga/refused"     // Refused: a start for a section the agent does not run
	ObsCompFailed = "saga/comp-failed" // SectionEv: a compensation action failed
	ObsLost       = "saga/lost"        // ConnEv: an agent learned another is lost (SG-4)
	ObsBack       = "saga/back"        // ConnEv: a lost agent reconnected
	ObsGraceOver  = "saga/grace-over"  // GraceEv: the grace period ran out; the line is re-arranged
)

// Begin is observed by the initiator when a transaction starts.
type Begin struct {
	Tr       TrID
	Start    SecKey
	Input    Data
	Agents   []string
	Sections int
}

// SectionEv is observed when a section changes state at its agent.
type SectionEv struct {
	Tr     TrID
	Sec    SecKey
	State  Status
	EndsSt bool
	Why    string
}

// Call is a service action's call; Comp marks a compensation.
type Call struct {
	Agent  string
	Tr     TrID
	Sec    SecKey
	Action string
	In     Data
	Comp   bool
}

// Return is a service action's return.
type Return struct {
	Call Call
	Out  Data
	Ok   bool
	Why  string
}

// AbortEv is observed when an agent stops a transaction.
type AbortEv struct {
	Tr    TrID
	Agent string
	Why   string
}

// OutcomeEv is observed when a transaction ends at an agent (once per agent).
type OutcomeEv struct {
	Tr      TrID
	Agent   string
	Outcome Outcome
}

// Late is observed when a section's request arrives after its transaction aborted.
type Late struct {
	Tr  TrID
	Sec SecKey
}

// Duplicate is observed when a request for a section that already ran arrives again.
type Duplicate struct {
	Tr    TrID
	Sec   SecKey
	State Status
}

// Replayed is observed at a restart: the agent's transaction state as its log rebuilt
// it (Agent.Summary).
type Replayed struct {
	Agent string
	Lines []string
}

// Refused is observed when a start names a section the agent cannot start.
type Refused struct {
	Agent string
	Start SecKey
	Why   string
}

// ConnEv is observed by Agent about Peer's connectivity.
type ConnEv struct {
	Agent, Peer string
}

// GraceEv is observed by Agent when its grace period for Peer runs out. Tried says
// whether it sent Peer a connectivity message meanwhile (SG-4: during the grace
// period they are sent as usual).
type GraceEv struct {
	Agent, Peer string
	Tried       bool
}
