package replication

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/simrun-dev/simrun/sim"
)

// Flow is a workflow (RP-5): the route an instance takes through the components'
// replica groups, hop by hop. SimpleFlow's route is manager → SimpleFlow → Start →
// Process → Stop → SimpleFlow → manager (§4.4, Figure 4.2).
//
// A group holding an instance at a hop keeps its status in the replicated store under
// the key "INSTANCE#HOP": Queued when the transition into the hop was accepted, Ran
// when the hop's task ran, HandedOver when the successor group acknowledged the
// transition out of it. Every change is a request of the group's primary to itself,
// replicated like a client's (update before, done after: §5.1.4), so a new primary
// finds each instance's status and resumes from it (§4.5.1, §4.5.3).
type Flow struct {
	Route []Hop
}

// Hop is one step of a route: the group whose task schedulers run it, the task's name,
// and the calls its task makes to other components when it runs (the worklist, the
// data server, the monitor), each a request with an ID fixed by instance and hop, so a
// repeated call is answered from the callee's duplicate table.
type Hop struct {
	Group string
	Task  string
	Calls []Target
}

// Target is a replica group a task calls.
type Target struct {
	Group  string
	Active bool
}

// An instance's status at a hop.
const (
	Queued     = 1
	Ran        = 2
	HandedOver = 3
)

// Step IDs of a primary's own requests, by prefix: T transition into a hop (the
// predecessor's request, §4.4 step 1), R the hop's task ran, F the successor
// acknowledged (step 4: "done" to the backups).
const (
	PrefixTransition = "T:"
	PrefixRan        = "R:"
	PrefixHanded     = "F:"
)

// InstKey is the store key of an instance at a hop.
func InstKey(inst string, hop int) string { return fmt.Sprintf("%s#%d", inst, hop) }

// ParseInstKey splits a store key into instance and hop.
func ParseInstKey(k string) (string, int, bool) {
	i := strings.LastIndexByte(k, '#')
	if i < 0 {
		return "", 0, false
	}
	h, err := strconv.Atoi(k[i+1:])
	return k[:i], h, err == nil && h >= 0
}

// TransitionRequest is the request that moves an instance into a hop (the manager's
// user creates an instance with the one into hop 0).
func TransitionRequest(inst string, hop int, client sim.NodeID) Request {
	k := InstKey(inst, hop)
	return Request{ID: PrefixTransition + k, Client: client, Op: Op{Key: k, Write: true, Val: Queued}}
}

// Observation kinds of the workflow layer.
const (
	ObsTask       = "rp/task"       // Task: a hop's task ran at the primary
	ObsTransition = "rp/transition" // Task: a primary asked the successor group for a transition (§4.4 step 1)
	ObsSideCall   = "rp/sidecall"   // Task: a primary's task called another component
	ObsAnswer     = "rp/answer"     // Task: a primary acknowledged a transition (§4.4 step 3)
)

// Task is observed by the workflow layer.
type Task struct {
	Group string
	Inst  string
	Hop   int
	Name  string
	// To is the group called (ObsTransition, ObsSideCall).
	To string
}

func (r *Replica) hopOf(k string) (string, int, bool) {
	f := r.O.Flow
	inst, hop, ok := ParseInstKey(k)
	if !ok || hop >= len(f.Route) || f.Route[hop].Group != r.O.Group {
		return "", 0, false
	}
	return inst, hop, true
}

// task observes a primary's step of the workflow.
func (r *Replica) task(m Request) {
	if r.O.Flow == nil || !strings.HasPrefix(m.ID, PrefixRan) {
		return
	}
	if inst, hop, ok := r.hopOf(m.Op.Key); ok {
		r.out.Observe(ObsTask, Task{Group: r.O.Group, Inst: inst, Hop: hop, Name: r.O.Flow.Route[hop].Task})
	}
}

// drive moves the instances this group holds on, one step at a time, from their
// replicated status: a queued instance's task makes its calls and runs; a ran
// instance is transitioned to the successor group (RP-4; a new primary does the same
// from where the old one stopped: §4.5.1, §4.5.3).
func (r *Replica) drive() {
	f := r.O.Flow
	if f == nil || !r.S.Primary || r.S.Claiming || r.S.Call != nil || r.S.Current != nil || len(r.S.Queue) > 0 {
		return
	}
	for _, k := range sortedKeys(r.S.Store) {
		inst, hop, ok := r.hopOf(k)
		if !ok || !r.O.Policy.moves(r, k) {
			continue
		}
		h := f.Route[hop]
		switch r.S.Store[k] {
		case Queued:
			if i := r.S.SideDone[k]; i < len(h.Calls) {
				t := h.Calls[i]
				r.out.Cover(ruleSideCall)
				r.out.Observe(ObsSideCall, Task{Group: r.O.Group, Inst: inst, Hop: hop, Name: h.Task, To: t.Group})
				r.startCall(k, false, t, Request{ID: k + "/" + t.Group, Client: r.me, Op: Op{Key: k, Write: true, Val: int64(hop)}})
				return
			}
			r.out.Cover(ruleRan)
			r.S.Queue = append(r.S.Queue, Request{ID: PrefixRan + k, Client: -1, Op: Op{Key: k, Write: true, Val: Ran}})
			r.next()
			return
		case Ran:
			if hop+1 >= len(f.Route) {
				r.out.Cover(ruleRouteEnd)
				continue // the route's end: the instance is complete
			}
			// §4.4 step 1: the primary predecessor requests the transition from the
			// primary successor.
			nx := f.Route[hop+1]
			r.out.Cover(ruleTransition)
			r.out.Observe(ObsTransition, Task{Group: r.O.Group, Inst: inst, Hop: hop, Name: h.Task, To: nx.Group})
			r.startCall(k, true, Target{Group: nx.Group}, TransitionRequest(inst, hop+1, r.me))
			return
		}
	}
}

func (r *Replica) startCall(k string, fwd bool, t Target, req Request) {
	// The call's lookups continue the replica's numbering, so a late answer to an
	// earlier call's lookup is not taken for this one's.
	r.S.Call, r.S.CallKey, r.S.CallFwd = &Call{Group: t.Group, Active: t.Active, Req: req, Lk: r.S.CallLk}, k, fwd
	r.S.Call.Start(r.out, r.O.Registries, nil)
	// §4.5.2, §4.5.3: an unanswered call is made again to the primary found anew.
	if d := r.O.Policy.callRetry(r.O.Lease); d > 0 {
		r.out.SetTimer("call", d)
	}
}

// callDone: the callee answered. A side call counts; a transition's acknowledgement
// is followed by "done" to the backups (§4.4 step 4), a request of the primary's own.
func (r *Replica) callDone() {
	k := r.S.CallKey
	if r.S.CallFwd {
		r.out.Cover(ruleHanded)
		r.S.Queue = append(r.S.Queue, Request{ID: PrefixHanded + k, Client: -1, Op: Op{Key: k, Write: true, Val: HandedOver}})
	} else {
		r.out.Cover(ruleSideDone)
		r.S.SideDone[k]++
	}
	r.stopCall()
	r.next()
	r.drive()
}

func (r *Replica) stopCall() {
	if r.S.Call != nil {
		r.S.CallLk = r.S.Call.Lk
		r.S.Call = nil
		r.out.CancelTimer("call")
	}
}

// resume: a new primary moves on every instance its group holds from its replicated
// status (§4.5.1, §4.5.3: it recovers from where the old primary stopped).
func (r *Replica) resume() {
	if r.O.Flow != nil {
		for k, v := range r.S.Store {
			if _, hop, ok := r.hopOf(k); ok && (v == Queued || v == Ran && hop+1 < len(r.O.Flow.Route)) {
				r.out.Cover(ruleFlowResume)
				break
			}
		}
	}
	r.drive()
}
