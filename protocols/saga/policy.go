package saga

// Policy is a set of hooks at the protocol's decision points, for broken variants
// (scenarios' -p bug=…, tests): each hook is handed the protocol's own decision and
// returns the one to act on. A nil Policy, or a nil hook, is the protocol. The broken
// behaviour lives with the hooks (scenarios/saga/bugs.go, tests), never here.
type Policy struct {
	// Runs decides whether a request runs its section, found in state s. The
	// protocol's run is true only for a section that has not run (pendant, or
	// processing while a join waits): SG-P3 (once) and SG-3 (a section closed by an
	// abort stays closed).
	Runs func(s Status, run bool) bool
	// Compensates decides whether stopping a transaction calls the compensation
	// action of a section in state s (SG-3 step 3: "en caso de ser necesario"). The
	// protocol's comp is true for a processed section only; one that never ran is
	// closed as null, with no action.
	Compensates func(s Status, comp bool) bool
	// Ready decides whether processed section k of t, followed by sections succs, may
	// be compensated now. The protocol's ready is true once every section after k is
	// settled (or its agent is gone past the grace period): SG-3's reverse order.
	Ready func(t *Tx, k SecKey, succs []SecKey, ready bool) bool
	// Log edits the transaction record a step writes to the log (the protocol writes
	// the record as it is: SG-4's log is the state).
	Log func(rec *Tx)
	// GivesUp decides whether an agent whose grace period for gone ran out stops
	// transaction t. The protocol's stop is true when the agent is t's initiator
	// (the one that decides: a stop and a commit never cross) and t still needs gone
	// (a section of gone's not known processed).
	GivesUp func(t *Tx, gone string, stop bool) bool
}

// runs: SG-P3 and SG-3: a section runs once, and only while its transaction runs.
func (a *Agent) runs(s Status) bool {
	run := s == Pendant || s == Processing
	if p := a.O.Policy; p != nil && p.Runs != nil {
		return p.Runs(s, run)
	}
	return run
}

// compensates: SG-3 step 3: only a processed section has an action to undo.
func (a *Agent) compensates(s Status) bool {
	comp := s == Processed
	if p := a.O.Policy; p != nil && p.Compensates != nil {
		return p.Compensates(s, comp)
	}
	return comp
}

// ready: the Policy's say on SG-3's reverse order (see progress).
func (a *Agent) ready(t *Tx, k SecKey, ready bool) bool {
	if p := a.O.Policy; p != nil && p.Ready != nil {
		return p.Ready(t, k, a.O.Graph(t.Start).Succs[k], ready)
	}
	return ready
}

// givesUp: the Policy's say on SG-4's recovery after the grace period (see graceOver).
func (a *Agent) givesUp(t *Tx, gone string, stop bool) bool {
	if p := a.O.Policy; p != nil && p.GivesUp != nil {
		return p.GivesUp(t, gone, stop)
	}
	return stop
}

// logged: the Policy's say on the record the log stores (see persist).
func (a *Agent) logged(rec *Tx) {
	if p := a.O.Policy; p != nil && p.Log != nil {
		p.Log(rec)
	}
}
