package exactlyonce

import (
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// The selection protocol (paper §5, EO-8): observers monitor the worker through its
// I_AM_ALIVE messages; one that times out asks the higher-priority stage nodes
// (ARE_YOU_THERE, after the bully algorithm) and, if none answers, selects itself. Two
// workers in one stage are allowed: voting lets only one commit. Selection state is
// volatile: a restarted node resumes every Active stage as an observer.

// selection is a node's volatile selection state for one Active stage.
type selection struct {
	role      Role
	acks      []sim.NodeID // majority variant: SelectedAcks collected (self included)
	lastHeard sim.Time     // when the last I_AM_ALIVE / I_AM_SELECTED arrived
}

func (n *Node) selFor(s StageID) *selection {
	if n.sel[s] == nil {
		n.selW()[s] = &selection{}
	}
	return n.selW()[s]
}

// becomeWorker makes this node the stage's worker: it sends I_AM_ALIVE every
// Timing.Alive and begins the stage transaction.
func (n *Node) becomeWorker(s StageID, selected bool) {
	e := n.queue[s]
	if e == nil {
		return
	}
	sl := n.selFor(s)
	if sl.role != RoleWorker {
		sl.role = RoleWorker
		sl.acks = nil
		n.out.Observe(ObsRole, RoleChange{Stage: s, Node: n.id, Role: RoleWorker, Selected: selected})
	}
	n.out.CancelTimer(stageTimer(tMonitor, s))
	n.out.CancelTimer(stageTimer(tSelect, s))
	if !n.cfg.Simple && !n.cfg.AbstractSelection && len(e.Record.Nodes) > 1 {
		// I_AM_ALIVE every Alive; a selected worker has just announced itself with
		// I_AM_SELECTED, an initial one is expected by its observers.
		n.out.SetTimer(stageTimer(tAlive, s), n.cfg.Timing.Alive)
	}
	n.kick(s)
}

// becomeObserver makes this node an observer of the stage: it waits for the worker's
// I_AM_ALIVE (EO-8). The simple protocol has no observers.
func (n *Node) becomeObserver(s StageID) {
	if n.queue[s] == nil || n.cfg.Simple {
		return
	}
	sl := n.selFor(s)
	if sl.role != RoleObserver {
		if sl.role == RoleWorker || sl.role == RoleNone {
			n.out.Observe(ObsRole, RoleChange{Stage: s, Node: n.id, Role: RoleObserver})
		}
		sl.role = RoleObserver
		sl.acks = nil
	}
	sl.lastHeard = n.now
	n.out.CancelTimer(stageTimer(tAlive, s))
	n.out.CancelTimer(stageTimer(tRetry, s))
	n.out.CancelTimer(stageTimer(tSelect, s))
	n.resForgetWaiter(s)
	// Under Config.MaxAttempts an observer that may not select itself again — or, with
	// AbstractSelection, whose selection could not begin a transaction — arms no
	// monitor: its firing would change nothing.
	if !n.bound(n.selections, s) && !(n.cfg.AbstractSelection && n.bound(n.attempts, s)) &&
		(n.cfg.Selectors == nil || slices.Contains(n.cfg.Selectors, n.id)) {
		n.out.SetTimer(stageTimer(tMonitor, s), n.cfg.Timing.Monitor)
	}
}

// selStop ends every role in the stage (it committed, or was forgotten).
func (n *Node) selStop(s StageID) {
	delOwn(n, ownSel, &n.sel, s, (*selection).clone)
	n.out.CancelTimer(stageTimer(tAlive, s))
	n.out.CancelTimer(stageTimer(tMonitor, s))
	n.out.CancelTimer(stageTimer(tSelect, s))
	n.out.CancelTimer(stageTimer(tRetry, s))
	n.resForgetWaiter(s)
}

func (n *Node) selBroadcast(rec StageRecord, m staged) {
	for _, sn := range rec.Nodes {
		if sn.Node != n.id {
			n.send(sn.Node, m)
		}
	}
}

func (n *Node) selOnAliveTimer(s StageID) {
	e, sl := n.queue[s], n.sel[s]
	if e == nil || sl == nil || sl.role != RoleWorker {
		return
	}
	n.out.Cover(ruleAlive)
	n.selBroadcast(e.Record, IAmAlive{Stage: s})
	n.rearm(stageTimer(tAlive, s), n.cfg.Timing.Alive)
}

// selOnAlive handles I_AM_ALIVE and I_AM_SELECTED from node from.
func (n *Node) selOnAlive(from sim.NodeID, s StageID, selected bool) {
	e, sl := n.queue[s], n.sel[s]
	if e == nil || sl == nil {
		return
	}
	higher := e.Record.Higher(from, n.id)
	ack := selected && n.cfg.MajoritySelect
	switch sl.role {
	case RoleWorker:
		// EO-8: a competing worker of higher priority: HIGHER_PRIO to the local
		// orchestrator; on GAVE_UP this node becomes an observer.
		if !higher {
			return
		}
		if n.orchHigherPrio(s) {
			n.out.Cover(ruleStayWorker) // ALREADY_DONE
			return
		}
		n.out.Cover(ruleStepDown)
	case RoleClaiming:
		// Majority variant: only a higher-priority I_AM_SELECTED (or a live
		// higher-priority worker) ends the claim.
		if !higher {
			return
		}
		n.out.Cover(ruleClaimYield)
		n.becomeObserver(s)
	default:
		// An observer (also one in the middle of a selection) monitors the worker it
		// hears from.
		n.out.Cover(ruleMonitor)
		n.becomeObserver(s)
	}
	if ack {
		n.out.Cover(ruleClaimAck)
		n.send(from, SelectedAck{Stage: s})
	}
}

func (n *Node) selOnMonitorTimeout(s StageID) {
	sl := n.sel[s]
	if sl == nil || sl.role != RoleObserver {
		return
	}
	if n.cfg.AbstractSelection {
		if n.cfg.MaxAttempts > 0 {
			if n.bound(n.selections, s) {
				return
			}
			put(n, ownSelections, &n.selections, s, n.selections[s]+1)
			n.storeBounds()
		}
		n.becomeWorker(s, true)
		return
	}
	n.out.Cover(ruleSuspect)
	n.selStart(s)
}

// selStart begins a selection: ARE_YOU_THERE to every higher-priority stage node; with
// none, this node is selected at once.
func (n *Node) selStart(s StageID) {
	e, sl := n.queue[s], n.sel[s]
	if e == nil || sl == nil {
		return
	}
	if n.cfg.MaxAttempts > 0 {
		// Model checking: selections are bounded like stage transactions.
		if n.bound(n.selections, s) {
			return
		}
		put(n, ownSelections, &n.selections, s, n.selections[s]+1)
		n.storeBounds()
	}
	ask := n.cfg.Policy.ask(e.Record, n.id)
	for _, h := range ask {
		n.send(h, AreYouThere{Stage: s})
	}
	if len(ask) == 0 {
		n.out.Cover(ruleTop)
		n.selSelected(s)
		return
	}
	n.out.Cover(ruleAsk)
	sl = n.selW()[s]
	sl.role = RoleSelecting
	n.out.CancelTimer(stageTimer(tMonitor, s))
	n.out.SetTimer(stageTimer(tSelect, s), n.cfg.Timing.There)
}

// selSelected: no higher-priority node answered. Basic protocol: I_AM_SELECTED to the
// other stage nodes and become the worker. Majority variant: repeat I_AM_SELECTED
// until a majority (this node included) ACKs.
func (n *Node) selSelected(s StageID) {
	e, sl := n.queue[s], n.sel[s]
	if e == nil || sl == nil {
		return
	}
	n.selBroadcast(e.Record, IAmSelected{Stage: s})
	if !n.cfg.MajoritySelect {
		n.out.Cover(ruleSelected)
		n.becomeWorker(s, true)
		return
	}
	n.out.Cover(ruleClaim)
	sl = n.selW()[s]
	sl.role = RoleClaiming
	sl.acks = []sim.NodeID{n.id}
	n.out.CancelTimer(stageTimer(tMonitor, s))
	n.armResend(stageTimer(tSelect, s), n.cfg.Timing.ClaimResend)
	n.selCheckClaim(s)
}

func (n *Node) selCheckClaim(s StageID) {
	e, sl := n.queue[s], n.sel[s]
	if sl.role == RoleClaiming && len(sl.acks) >= e.Record.Majority() {
		n.out.Cover(ruleClaimWon)
		n.becomeWorker(s, true)
	}
}

func (n *Node) selOnAck(from sim.NodeID, s StageID) {
	if e, sl := n.queue[s], n.sel[s]; e != nil && sl != nil && sl.role == RoleClaiming {
		sl = n.selW()[s]
		sl.acks = addNode(sl.acks, from)
		n.selCheckClaim(s)
	}
}

func (n *Node) selOnSelectTimer(s StageID) {
	e, sl := n.queue[s], n.sel[s]
	if e == nil || sl == nil {
		return
	}
	switch sl.role {
	case RoleSelecting: // no I_AM_THERE in time: selected
		n.out.Cover(ruleNoAnswer)
		n.selSelected(s)
	case RoleWaiting: // the announced new worker never showed up: start over
		if n.spend() {
			n.out.Cover(ruleWaitOver)
			n.selStart(s)
		}
	case RoleClaiming:
		n.out.Cover(ruleClaim)
		for _, sn := range e.Record.Nodes {
			if sn.Node != n.id && !slices.Contains(sl.acks, sn.Node) {
				n.send(sn.Node, IAmSelected{Stage: s})
			}
		}
		n.rearm(stageTimer(tSelect, s), n.cfg.Timing.ClaimResend)
	}
}

func (n *Node) selOnIAmThere(s StageID) {
	if sl := n.sel[s]; sl != nil && sl.role == RoleSelecting {
		n.out.Cover(ruleAnswered)
		sl = n.selW()[s]
		sl.role = RoleWaiting
		n.out.SetTimer(stageTimer(tSelect, s), n.cfg.Timing.SelectedWait)
	}
}

// selOnAreYouThere: a live stage node answers I_AM_THERE (so does a Committed
// orchestrator still collecting FORGET ACKs: the stage has a worker, it is done). A
// worker also sends I_AM_ALIVE so the asker starts monitoring it at once; an observer
// that has not heard from a worker for two I_AM_ALIVE periods starts its own selection
// (the bully algorithm: the higher-priority node takes over).
func (n *Node) selOnAreYouThere(from sim.NodeID, s StageID) {
	e := n.queue[s]
	if e == nil {
		if o := n.orch[s]; o != nil && o.State == OrchCommitted {
			n.out.Cover(ruleThereCommitted)
			n.send(from, IAmThere{Stage: s})
		}
		return
	}
	n.out.Cover(ruleThere)
	n.send(from, IAmThere{Stage: s})
	sl := n.sel[s]
	if sl == nil {
		return
	}
	switch {
	case sl.role == RoleWorker:
		n.out.Cover(ruleThereAlive)
		n.send(from, IAmAlive{Stage: s})
	case sl.role == RoleObserver && n.now.Sub(sl.lastHeard) > 2*n.cfg.Timing.Alive:
		n.out.Cover(ruleThereTakeover)
		n.selStart(s)
	}
}
