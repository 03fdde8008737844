package eoscen

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// Property names.
const (
	PropP1 = "EO-P1 one commit per stage, hops in order"
	PropP2 = "EO-P2 resource operations exactly once (linearizable)"
	PropP3 = "EO-P3 agents complete after the heal"
	PropP5 = "EO-P5 no leftovers"
	// PropNoSuspicion is EO-8's promise in a run without faults.
	PropNoSuspicion = "EO-8 no selection without a fault"
	// PropAliveByWorker: EO-8's I_AM_ALIVE comes from workers only.
	PropAliveByWorker = "EO-8 only a worker sends I_AM_ALIVE"
	// PropSelectionWaits: EO-8's selection waits for the higher-priority nodes.
	PropSelectionWaits = "EO-8 a selection waits for the higher-priority nodes' answers"
	// PropVariant: the messages of the run's protocol variant only.
	PropVariant = "EO-1/EO-8 only the variant's messages"
	// PropAlreadyDone is EO-5's answer of a Ready orchestrator to HIGHER_PRIO.
	PropAlreadyDone = "EO-5 a Ready orchestrator does not give up"
	// PropStepDown is EO-5/EO-8's priority rule for competing workers.
	PropStepDown = "EO-5/EO-8 a worker steps down only for a higher priority or a Ready orchestrator"
	PropI1       = "EO-I1 at most one Ready/Committed orchestrator per stage"
	PropA        = "EO-2/EO-3 stage transactions atomic at every participant"
	// PropInquiry is exactlyonce/voter-crash's own property (see commitsBefore).
	PropInquiry = "EO-7 stale votes withdrawn by INQUIRY at restart (stage commits in time)"
)

// commitsBefore is a scenario's own liveness property: stage hop of every agent
// commits before deadline. Only a scenario whose fault plan makes the deadline a
// consequence of a protocol rule uses it (voter-crash: the INQUIRY of EO-7 at a
// voter's restart), and only with the plan it was designed for: a run with another
// plan (--faults, generated plans in tests) is not held to it.
func commitsBefore(name string, hop int32, deadline time.Duration) checker.Property {
	return checker.Property{Name: name, Class: checker.Liveness, NeedsCompleteRun: true, Check: func(r *checker.Run) error {
		n := 0
		for _, o := range r.History() {
			c, ok := o.Value.(eo.Committed)
			if !ok || c.Stage.Hop != hop {
				continue
			}
			if n++; o.Time >= sim.Time(deadline) {
				return fmt.Errorf("stage %v committed at %v, not before %v", c.Stage, o.Time, deadline)
			}
		}
		if n == 0 {
			return fmt.Errorf("no stage %d committed (deadline %v)", hop, deadline)
		}
		r.Count(n, 0)
		return nil
	}}
}

// agentInfo is what the properties know about the workload.
type agentInfo struct {
	agent  eo.Agent
	launch sim.Time
	// lost: the home node is down at launch time, so the Launch never arrives;
	// maybeLost: it may be (a crash-send's window holds the launch time): the run's
	// history says whether the agent was accepted.
	lost, maybeLost bool
}

// workload describes the agents of a run, for the properties.
type workload struct {
	names []string
	// permanent lists the crashes never followed by a restart, in time order.
	permanent []permCrash
	// settle is how the plan leaves the system (for EO-P5 under a lasting partition).
	settle   faults.Settlement
	agents   []agentInfo
	capacity int32
	simple   bool
	static   bool
	// crashes lists each node's crashes (for PropStepDown, PropAliveByWorker).
	crashes map[string][]crashWindow
	// majority: the majority-ACK selection variant runs (PropVariant).
	majority bool
	// timed: periods, latency and plan, for the timed properties (props_timed.go).
	timed timed
	// quiet: the run has no fault at all (an empty plan, no loss, duplication or
	// reordering, every latency under the I_AM_ALIVE period), so EO-8 has nothing
	// to suspect (PropNoSuspicion).
	quiet bool
}

type permCrash struct {
	node string
	at   sim.Time
}

// Properties returns the properties checked on every run of an exactly-once scenario:
// EO-P1, EO-I1, the atomicity of stage transactions (EO-2/EO-3, checkAtomic), EO-P2
// (with porcupine), EO-P3 (completion within bound after the faults settle) and EO-P5
// (cleanup within cleanupGrace after completion; liveness, since it depends on time).
func (w *workload) Properties(bound time.Duration) []checker.Property {
	return []checker.Property{
		{Name: PropP1, Class: checker.Safety, Check: w.checkP1},
		{Name: PropI1, Class: checker.Safety, Check: checkI1},
		{Name: PropA, Class: checker.Safety, Check: checkAtomic},
		w.p2(),
		scenarios.Bounded(PropP3, bound, w.p3Items),
		{Name: PropP5, Class: checker.Liveness, NeedsCompleteRun: true, Check: w.checkP5},
		{Name: PropNoSuspicion, Class: checker.Safety, Check: w.checkNoSuspicion},
		{Name: PropStepDown, Class: checker.Safety, Check: w.checkStepDown},
		{Name: PropAlreadyDone, Class: checker.Safety, Check: checkAlreadyDone},
		{Name: PropVariant, Class: checker.Safety, Check: w.checkVariant},
		{Name: PropAliveByWorker, Class: checker.Safety, Check: w.checkAliveByWorker},
		{Name: PropSelectionWaits, Class: checker.Safety, Check: checkSelectionWaits},
		{Name: PropAskAll, Class: checker.Safety, Check: w.checkAskAll},
		{Name: PropAnswered, Class: checker.Safety, Check: w.checkAnswered},
		{Name: PropInquiryRepeat, Class: checker.Liveness, NeedsCompleteRun: true, Check: w.checkInquiryRepeat},
	}
}

// surelyCrashedIn reports whether node n crashed (by the plan) between from and to
// for certain: a crash at an instant in [from, to], or a crash-send whose whole window
// is in [from, to).
func (w *workload) surelyCrashedIn(r *checker.Run, n sim.NodeID, from, to sim.Time) bool {
	for _, c := range w.crashes[r.Final[n].Name] {
		if from <= c.from && (c.to < to || (c.from == c.to && c.to <= to)) {
			return true
		}
	}
	return false
}

// crashedIn reports whether node n crashed (by the plan) between from and to, or
// may have (a crash-send's window meets [from, to]).
func (w *workload) crashedIn(r *checker.Run, n sim.NodeID, from, to sim.Time) bool {
	for _, c := range w.crashes[r.Final[n].Name] {
		if c.from <= to && from <= c.to {
			return true
		}
	}
	return false
}

// checkAliveByWorker (EO-8): I_AM_ALIVE comes from a stage's worker only, periodically
// or in answer to ARE_YOU_THERE: a node sends it for a stage only while its latest
// role there (since its latest crash) is worker. Needs the per-message observations
// (Config.CountMessages, on in every scenario).
func (w *workload) checkAliveByWorker(r *checker.Run) error {
	type key struct {
		node  sim.NodeID
		stage eo.StageID
	}
	since := map[key]sim.Time{} // the node became worker of the stage then
	alive, exempt := 0, 0
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.RoleChange:
			if v.Role == eo.RoleWorker {
				since[key{v.Node, v.Stage}] = o.Time
			} else {
				delete(since, key{v.Node, v.Stage})
			}
		case eo.Sent:
			if v.Kind != "I_AM_ALIVE" {
				continue
			}
			t, ok := since[key{o.Node, v.Stage}]
			if ok && !w.surelyCrashedIn(r, o.Node, t, o.Time) && w.crashedIn(r, o.Node, t, o.Time) {
				exempt++ // a crash-send's window: this may be the call it crashes in
				continue
			}
			alive++
			if !ok || w.crashedIn(r, o.Node, t, o.Time) {
				return fmt.Errorf("%s sent I_AM_ALIVE for stage %v at %v without being its worker", r.Final[o.Node].Name, v.Stage, o.Time)
			}
		}
	}
	r.Count(alive, exempt)
	r.Note(fmt.Sprintf("%d I_AM_ALIVE checked", alive))
	return nil
}

// checkSelectionWaits (EO-8): an observer that starts a selection asks every node of
// higher priority (ARE_YOU_THERE) and becomes worker only when none answers in time (or,
// with none above it, at once): never in the very step that asked. Needs the
// per-message observations (Config.CountMessages, on in every scenario).
func checkSelectionWaits(r *checker.Run) error {
	type key struct {
		node  sim.NodeID
		stage eo.StageID
	}
	asked := map[key]int{} // index of the step's last ARE_YOU_THERE observation
	selections := 0
	var last struct {
		node sim.NodeID
		t    sim.Time
	}
	step := 0 // observations of one node at one instant form one step
	for _, o := range r.History() {
		if o.Node != last.node || o.Time != last.t {
			step++
			last.node, last.t = o.Node, o.Time
		}
		switch v := o.Value.(type) {
		case eo.Sent:
			if v.Kind == "ARE_YOU_THERE" {
				asked[key{o.Node, v.Stage}] = step
			}
		case eo.RoleChange:
			if v.Role != eo.RoleWorker || !v.Selected {
				continue
			}
			selections++
			if asked[key{v.Node, v.Stage}] == step {
				return fmt.Errorf("%s asked the higher-priority nodes of stage %v (ARE_YOU_THERE) and selected itself in the same step, at %v, without waiting for their answers", r.Final[v.Node].Name, v.Stage, o.Time)
			}
		}
	}
	r.Count(selections, 0)
	r.Note(fmt.Sprintf("%d selections checked", selections))
	return nil
}

// checkVariant (EO-1, EO-8): a run sends only the messages of its protocol variant:
// the simple protocol (EO-1) has no voting and no selection, and only the majority
// variant of the selection protocol ACKs I_AM_SELECTED.
func (w *workload) checkVariant(r *checker.Run) error {
	simple := []string{"PREPARE", "PREPARED", "COMMIT", "COMMIT_ACK", "ABORT", "STATUS"}
	kinds := 0
	defer func() { r.Count(kinds, 0) }()
	for _, k := range slices.Sorted(maps.Keys(r.ByKind)) {
		if r.ByKind[k].Sent == 0 {
			continue
		}
		kinds++
		switch {
		case w.simple && !slices.Contains(simple, k):
			return fmt.Errorf("the simple protocol sent %d %s", r.ByKind[k].Sent, k)
		case k == "SELECTED_ACK" && !w.majority:
			return fmt.Errorf("%d SELECTED_ACK sent without the majority selection variant", r.ByKind[k].Sent)
		}
	}
	return nil
}

// checkAlreadyDone (EO-5): HIGHER_PRIO to an orchestrator that is Ready (or
// Committed) is answered ALREADY_DONE; only an orchestrator still Unknown gives up.
// So no transaction ends by giving up (TxEnded.Why "gave-up") in the handler that
// took its orchestrator out of Ready.
func checkAlreadyDone(r *checker.Run) error {
	type key struct {
		node  sim.NodeID
		stage eo.StageID
	}
	type left struct {
		tid eo.Tid
		at  sim.Time
	}
	ready := map[key]eo.Tid{}
	leftReady := map[key]left{}
	gaveUp := 0
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.OrchChange:
			k := key{v.Node, v.Stage}
			if v.State == eo.OrchReady {
				ready[k] = v.Tid
				continue
			}
			if t, ok := ready[k]; ok && t == v.Tid {
				leftReady[k] = left{v.Tid, o.Time}
			}
			delete(ready, k)
		case eo.TxEnded:
			if v.Why != "gave-up" {
				continue
			}
			gaveUp++
			if l, ok := leftReady[key{v.Node, v.Stage}]; ok && l.tid == v.Tid && l.at == o.Time {
				return fmt.Errorf("%s gave up transaction %v of stage %v at %v while its orchestrator was Ready (HIGHER_PRIO must be answered ALREADY_DONE)",
					r.Final[v.Node].Name, v.Tid, v.Stage, o.Time)
			}
		}
	}
	r.Count(gaveUp, 0)
	r.Note(fmt.Sprintf("%d give-ups checked", gaveUp))
	return nil
}

// checkStepDown (EO-5, EO-8): a worker leaves the worker role of a stage (becomes an
// observer without crashing in between) only for another worker: one of higher
// priority in the stage's record (it heard its I_AM_ALIVE or I_AM_SELECTED, or its
// voter voted for that node's orchestrator), or one whose orchestrator is Ready
// already (a Ready orchestrator is not overruled by priority: EO-5's NO from its
// voters ends this node's transaction). A node of higher priority counts once it has
// been a worker or has announced itself with I_AM_SELECTED: in the majority variant
// of EO-8 a claimant repeats I_AM_SELECTED before a majority has ACKed it, and a
// worker that hears it steps down (§5: "If it receives an I_AM_ALIVE or I_AM_SELECTED
// message from another node ... If W' has a higher priority than W, W sends
// HIGHER_PRIO"; exactlyonce/swarm seed 14078). Stage 0 has one node; the record of
// stage h is the Next of stage h-1's commit.
func (w *workload) checkStepDown(r *checker.Run) error {
	records := map[eo.StageID][]sim.NodeID{} // priority order
	workers := map[eo.StageID][]sim.NodeID{} // every node that has been a worker or announced itself
	ready := map[eo.StageID][]sim.NodeID{}   // every node whose orchestrator was Ready
	since := map[eo.StageID]map[sim.NodeID]sim.Time{}
	downs, exempt := 0, 0
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.Committed:
			records[eo.StageID{Agent: v.Stage.Agent, Hop: v.Stage.Hop + 1}] = v.Next
		case eo.OrchChange:
			if v.State == eo.OrchReady {
				ready[v.Stage] = append(ready[v.Stage], v.Node)
			}
		case eo.Sent:
			if v.Kind == "I_AM_SELECTED" && !slices.Contains(workers[v.Stage], o.Node) {
				workers[v.Stage] = append(workers[v.Stage], o.Node)
			}
		case eo.RoleChange:
			if since[v.Stage] == nil {
				since[v.Stage] = map[sim.NodeID]sim.Time{}
			}
			switch v.Role {
			case eo.RoleWorker:
				since[v.Stage][v.Node] = o.Time
				if !slices.Contains(workers[v.Stage], v.Node) {
					workers[v.Stage] = append(workers[v.Stage], v.Node)
				}
			case eo.RoleObserver:
				t, was := since[v.Stage][v.Node]
				delete(since[v.Stage], v.Node)
				if !was {
					continue
				}
				if w.crashedIn(r, v.Node, t, o.Time) {
					exempt++
					continue
				}
				downs++
				rec := records[v.Stage]
				me := slices.Index(rec, v.Node)
				higher := func(n sim.NodeID) bool { i := slices.Index(rec, n); return i >= 0 && i < me }
				other := func(n sim.NodeID) bool { return n != v.Node }
				if !slices.ContainsFunc(workers[v.Stage], higher) && !slices.ContainsFunc(ready[v.Stage], other) {
					return fmt.Errorf("%s stepped down as worker of stage %v at %v, but no higher-priority node of %s had been its worker or announced itself and no other orchestrator was Ready",
						r.Final[v.Node].Name, v.Stage, o.Time, nodeNames(r, rec))
				}
			}
		}
	}
	r.Count(downs, exempt)
	r.Note(fmt.Sprintf("%d step-downs checked, %d exempt (a crash in between)", downs, exempt))
	return nil
}

// checkNoSuspicion (EO-8): a worker's I_AM_ALIVE reaches its observers every Alive
// period, well inside their Monitor timeout, so in a run without any fault no
// observer ever starts a selection (sends ARE_YOU_THERE) and no node announces
// itself (I_AM_SELECTED). Runs with a fault are not judged (the note says which).
func (w *workload) checkNoSuspicion(r *checker.Run) error {
	if w.simple || !w.quiet {
		r.Count(0, 1)
		r.Note("not judged: the run has faults (or runs the simple protocol)")
		return nil
	}
	for _, kind := range []string{"ARE_YOU_THERE", "I_AM_SELECTED"} {
		if c := r.ByKind[kind]; c.Sent > 0 {
			return fmt.Errorf("%d %s sent in a run without faults: an observer suspected a live worker", c.Sent, kind)
		}
	}
	r.Count(1, 0)
	r.Note(fmt.Sprintf("judged: no fault, %d I_AM_ALIVE, no selection", r.ByKind["I_AM_ALIVE"].Sent))
	return nil
}

// checkP1: for every StageId at most one stage transaction commits; per agent the
// committed hops are 0, 1, 2, ... in order, each committed by a node of the stage's
// record (the record the previous stage Put), the last one exactly once.
func (w *workload) checkP1(r *checker.Run) error {
	type agentState struct {
		next   int32        // next hop expected to commit
		record []sim.NodeID // the record of stage next
		done   bool
	}
	st := map[eo.AgentID]*agentState{}
	byID := map[eo.AgentID]eo.Agent{}
	for _, a := range w.agents {
		byID[a.agent.ID] = a.agent
	}
	name := func(n sim.NodeID) string { return r.Final[n].Name }
	commits := 0
	defer func() { r.Count(commits, 0) }()
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.Committed:
			commits++
			a, ok := byID[v.Stage.Agent]
			if !ok {
				return fmt.Errorf("commit of stage %v of an agent never launched", v.Stage)
			}
			s := st[v.Stage.Agent]
			if s == nil {
				s = &agentState{record: []sim.NodeID{a.Itinerary.Home()}}
				st[v.Stage.Agent] = s
			}
			switch {
			case v.Stage.Hop < s.next:
				return fmt.Errorf("stage %v committed twice (again by %s, tid %v at %v)", v.Stage, name(v.Node), v.Tid, o.Time)
			case v.Stage.Hop > s.next:
				return fmt.Errorf("stage %v committed at %v before stage %d of the agent", v.Stage, o.Time, s.next)
			case !slices.Contains(s.record, v.Node):
				return fmt.Errorf("stage %v committed by %s, not a node of its record %s", v.Stage, name(v.Node), nodeNames(r, s.record))
			case v.Agent.Hop != v.Stage.Hop+1 || len(v.Agent.Results) != int(v.Stage.Hop)+1:
				return fmt.Errorf("stage %v committed an agent at hop %d with %d results", v.Stage, v.Agent.Hop, len(v.Agent.Results))
			}
			last := int(v.Stage.Hop)+1 == a.Itinerary.Len()
			if v.Last != last {
				return fmt.Errorf("stage %v committed with last=%v, itinerary has %d stages", v.Stage, v.Last, a.Itinerary.Len())
			}
			if !last {
				if err := w.checkNext(a.Itinerary.Stages[v.Stage.Hop+1], v.Next); err != nil {
					return fmt.Errorf("stage %v committed with next record %s: %w", v.Stage, nodeNames(r, v.Next), err)
				}
			}
			s.next++
			s.record = v.Next
		case eo.Done:
			s := st[v.Agent]
			if s == nil || int(s.next) != byID[v.Agent].Itinerary.Len() {
				return fmt.Errorf("agent a%d reported done before its last stage committed", v.Agent)
			}
			if s.done {
				return fmt.Errorf("agent a%d completed twice", v.Agent)
			}
			s.done = true
		}
	}
	return nil
}

// checkNext checks the record a stage transaction Put (EO-1, EO-2): the next stage's
// highest-priority node alone in the simple protocol; in the extended one, its
// itinerary nodes, every one with static-next, else at least a majority of them (paper
// §3 fn. 4: suspected nodes may be left out), in priority order.
func (w *workload) checkNext(st eo.Stage, next []sim.NodeID) error {
	rec := make([]sim.NodeID, 0, len(st.Nodes))
	for _, sn := range slices.SortedFunc(slices.Values(st.Nodes), func(a, b eo.StageNode) int { return int(a.Rank - b.Rank) }) {
		rec = append(rec, sn.Node)
	}
	switch {
	case w.simple:
		if len(next) != 1 || next[0] != rec[0] {
			return fmt.Errorf("the simple protocol Puts to the highest-priority node only")
		}
	case w.static:
		if !slices.Equal(next, rec) {
			return fmt.Errorf("static-next Puts to every node of the stage")
		}
	default:
		if len(next) < len(rec)/2+1 {
			return fmt.Errorf("fewer than a majority of the stage's %d nodes", len(rec))
		}
		i := 0
		for _, n := range next {
			for i < len(rec) && rec[i] != n {
				i++
			}
			if i == len(rec) {
				return fmt.Errorf("not a sub-list of the stage's nodes in priority order")
			}
		}
	}
	return nil
}

func nodeNames(r *checker.Run, ns []sim.NodeID) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = r.Final[n].Name
	}
	return "{" + strings.Join(out, ",") + "}"
}

// checkI1: at every point of the history, at most one orchestrator per stage is Ready
// or Committed.
func checkI1(r *checker.Run) error {
	type key struct {
		s eo.StageID
		n sim.NodeID
	}
	state := map[key]eo.OrchState{}
	live := map[eo.StageID][]sim.NodeID{}
	changes := 0
	defer func() { r.Count(changes, 0) }()
	for _, o := range r.History() {
		v, ok := o.Value.(eo.OrchChange)
		if !ok {
			continue
		}
		changes++
		state[key{v.Stage, v.Node}] = v.State
		if v.State == eo.OrchUnknown {
			live[v.Stage] = slices.DeleteFunc(live[v.Stage], func(n sim.NodeID) bool { return n == v.Node })
			continue
		}
		if !slices.Contains(live[v.Stage], v.Node) {
			live[v.Stage] = append(live[v.Stage], v.Node)
		}
		if len(live[v.Stage]) > 1 {
			return fmt.Errorf("stage %v: orchestrators %s Ready/Committed at once (at %v)", v.Stage, nodeNames(r, live[v.Stage]), o.Time)
		}
	}
	return nil
}

// checkAtomic is the atomicity of stage transactions (EO-2, EO-3): every Put a
// participant commits belongs to a transaction its coordinator committed before, and
// no participant rolls back (ABORT) the Put of a transaction its coordinator
// committed, whenever either happens. A Put dropped on FORGET must belong to a stage
// that committed somewhere before (the FORGET's origin); it may be the Put of a
// committed transaction, as the stage it creates is over (see the package comment of
// the protocol).
func checkAtomic(r *checker.Run) error {
	committed := map[eo.Tid]sim.Time{}
	stageDone := map[eo.StageID]bool{}
	for _, o := range r.History() {
		if v, ok := o.Value.(eo.Committed); ok {
			committed[v.Tid] = o.Time
		}
	}
	puts := 0
	defer func() { r.Count(puts, 0) }()
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.Committed:
			stageDone[v.Stage] = true
		case eo.PutChange:
			puts++
			at, ok := committed[v.Tid]
			switch v.State {
			case eo.PutCommitted:
				if !ok || at > o.Time {
					return fmt.Errorf("%s committed the Put of stage %v (tid %v, coordinator %s) at %v, but the coordinator never committed it before",
						r.Final[v.Node].Name, v.Stage, v.Tid, r.Final[v.Coord].Name, o.Time)
				}
			case eo.PutAborted:
				if ok {
					return fmt.Errorf("%s aborted the Put of stage %v (tid %v) at %v, but its coordinator %s committed it at %v",
						r.Final[v.Node].Name, v.Stage, v.Tid, o.Time, r.Final[v.Coord].Name, at)
				}
			case eo.PutDropped:
				if !stageDone[v.Stage] {
					return fmt.Errorf("%s dropped the Put of stage %v (tid %v) at %v before that stage committed anywhere",
						r.Final[v.Node].Name, v.Stage, v.Tid, o.Time)
				}
			}
		}
	}
	return nil
}

// p2 is EO-P2: every Reserve history is linearizable against SeatModel (partitioned
// by node and pool); beyond porcupine's partitions, no (AgentId, HopCount) operation
// took effect at two services; the pools' final stable state holds exactly the
// committed operations; and each completed agent's results are the seats its stages
// committed.
func (w *workload) p2() checker.Property {
	lin := checker.Linearizable(PropP2, SeatModel(w.capacity), resOps, 0)
	return checker.Property{
		Name:  PropP2,
		Class: checker.Safety,
		Check: func(r *checker.Run) error {
			if err := w.checkEffects(r); err != nil {
				return err
			}
			if err := lin.Check(r); err != nil {
				return err
			}
			r.Count(len(checker.Values[eo.ResCall](r.History(), eo.ObsCall)), 0)
			return nil
		},
	}
}

func (w *workload) checkEffects(r *checker.Run) error {
	type opKey struct {
		agent eo.AgentID
		hop   int32
	}
	type where struct {
		node sim.NodeID
		pool string
		seat int32
	}
	took := map[opKey]where{}
	perPool := map[string][]eo.Holder{}
	for _, o := range r.History() {
		v, ok := o.Value.(eo.ResReturn)
		if !ok {
			continue
		}
		k := opKey{v.Agent, v.Hop}
		if prev, dup := took[k]; dup {
			return fmt.Errorf("the operation of stage a%d/%d took effect twice: at %s (seat %d) and at %s (seat %d)",
				v.Agent, v.Hop, r.Final[prev.node].Name, prev.seat, r.Final[v.Node].Name, v.Seat)
		}
		took[k] = where{v.Node, v.Pool, v.Seat}
		pk := r.Final[v.Node].Name + "/" + v.Pool
		perPool[pk] = append(perPool[pk], eo.Holder{Agent: v.Agent, Hop: v.Hop, Seat: v.Seat})
	}
	// The durable state of every pool is exactly its committed operations.
	for _, f := range r.Final {
		for _, it := range eo.Inspect(f.Stable) {
			if it.Kind != eo.StablePool {
				continue
			}
			pk := f.Name + "/" + it.PoolName
			if !slices.Equal(it.Pool.Holders, perPool[pk]) {
				return fmt.Errorf("pool %s holds %v in stable storage, but the committed operations were %v", pk, it.Pool.Holders, perPool[pk])
			}
			delete(perPool, pk)
		}
	}
	for _, pk := range sortedKeys(perPool) {
		return fmt.Errorf("pool %s committed %d operations but has no stable state", pk, len(perPool[pk]))
	}
	// A completed agent carries the seats its stages committed.
	for _, d := range checker.Values[eo.Done](r.History(), eo.ObsDone) {
		for _, res := range d.Results {
			got, ok := took[opKey{d.Agent, res.Hop}]
			if res.Seat < 0 {
				if ok {
					return fmt.Errorf("agent a%d: stage %d reserved a seat the agent does not know of", d.Agent, res.Hop)
				}
				continue
			}
			if !ok || got.node != res.Node || got.pool != res.Pool || got.seat != res.Seat {
				return fmt.Errorf("agent a%d: stage %d result %+v does not match the committed reservation", d.Agent, res.Hop, res)
			}
		}
	}
	return nil
}

// p3Items lists the agents EO-P3 requires to complete: every agent whose home node was
// up when it was launched (the Launch injection reaches only a running node), unless
// permanent faults take a majority of one of the stages it had not yet committed.
func (w *workload) p3Items(r *checker.Run) []scenarios.Item {
	done := map[eo.AgentID]sim.Time{}
	records := map[eo.StageID][]sim.NodeID{}
	committed := map[eo.StageID]bool{}
	accepted := map[eo.AgentID]bool{}
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.Accepted:
			accepted[v.Agent] = true
		case eo.Done:
			done[v.Agent] = o.Time
		case eo.Committed:
			committed[v.Stage] = true
			if !v.Last {
				records[eo.StageID{Agent: v.Stage.Agent, Hop: v.Stage.Hop + 1}] = v.Next
			}
		}
	}
	var items []scenarios.Item
	blocked := w.blockedForGood(r)
	for _, ai := range w.agents {
		a := ai.agent
		records[eo.StageID{Agent: a.ID, Hop: 0}] = []sim.NodeID{a.Itinerary.Home()}
		if ai.lost || (ai.maybeLost && !accepted[a.ID]) {
			continue
		}
		if ok, _ := w.required(r, a, records, committed, blocked); !ok {
			continue
		}
		it := scenarios.Item{Name: fmt.Sprintf("agent a%d", a.ID), Start: ai.launch}
		if t, ok := done[a.ID]; ok {
			it.Done, it.Completed = t, true
		}
		items = append(items, it)
	}
	return items
}

// cleanupGrace is how long EO-P5 gives the cleanup (FORGET and COMMIT re-sends, their
// ACKs) after an agent completed and the faults settled, whichever is later. It is a
// liveness property with its own bound: an agent completing near the end of a run is
// not required to be clean yet (every scenario's run lasts one second beyond the
// EO-P3 bound, so an agent that completes within that bound always gets the grace).
const cleanupGrace = time.Second

// checkP5: once cleanupGrace has passed since an agent completed (and the faults
// settled), no node keeps a stage record, an OrchSet, a prepared Put, a commit record, a prepared reservation or a
// Ready/Committed orchestrator state for it. Nodes down for good are not inspected,
// and leftovers that wait only for nodes down for good are allowed: FORGET or COMMIT
// not ACKed by them, a Put in doubt whose coordinator is down, and the stage record,
// OrchSet and the doomed transactions of a stage whose committing orchestrator is
// down (nobody else may send its FORGET). Under a partition or cut the plan never
// heals, the side that is whole is still checked: a leftover is allowed only if one of
// the nodes it waits for is on another side (the request or its ACK cannot cross), or
// the stage it belongs to was committed on another side. A link left cut (one way or
// both) may hold up more than its two ends: a coordinator that cannot reach one
// participant keeps every other participant's prepared Put in doubt. So a leftover is
// also exempt when its node, a node it waits for, or its stage's committer is an end
// of a link left cut (and only then: every other leftover is checked). A pass says how
// many agents it checked and how many leftovers it exempted.
func (w *workload) checkP5(r *checker.Run) error {
	agents, exempt := 0, 0
	defer func() {
		r.Count(agents, exempt)
		r.Note(fmt.Sprintf("%d completed agents checked, %d leftovers exempt (waiting on nodes down for good or across a lasting partition or cut)", agents, exempt))
	}()
	cutEnd := map[string]bool{}
	for _, c := range w.settle.Cuts {
		cutEnd[c[0]], cutEnd[c[1]] = true, true
	}
	apart := func(a, b sim.NodeID) bool {
		na, nb := r.Final[a].Name, r.Final[b].Name
		return cutEnd[na] || cutEnd[nb] || !w.settle.Reachable(na, nb) || !w.settle.Reachable(nb, na)
	}
	done := map[eo.AgentID]bool{}
	committedBy := map[eo.StageID]sim.NodeID{}
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.Done:
			// At quiescence nothing is left to clean up: every leftover is final.
			done[v.Agent] = r.Outcome == sim.Quiescent || max(o.Time, r.Settled).Add(cleanupGrace) <= r.Time
		case eo.Committed:
			committedBy[v.Stage] = v.Node
		}
	}
	for _, d := range done {
		if d {
			agents++
		}
	}
	isDown := func(n sim.NodeID) bool { return slices.Contains(r.Down, r.Final[n].Name) }
	allDown := func(ns []sim.NodeID) bool {
		for _, n := range ns {
			if !isDown(n) {
				return false
			}
		}
		return len(ns) > 0
	}
	var errs []error
	for i, f := range r.Final {
		if isDown(sim.NodeID(i)) {
			continue
		}
		for _, it := range eo.Inspect(f.Stable) {
			switch it.Kind {
			case eo.StableQueue, eo.StableOrchSet, eo.StableOrch, eo.StablePrepared, eo.StableCommit, eo.StableResPrep:
			default:
				continue
			}
			if !done[it.Stage.Agent] {
				continue
			}
			if allDown(it.Waits) {
				exempt++
				continue
			}
			if r.Split && (slices.ContainsFunc(it.Waits, func(n sim.NodeID) bool { return apart(sim.NodeID(i), n) })) {
				exempt++ // waits across the lasting split
				continue
			}
			// The stage the record's transaction belongs to: a prepared Put belongs to
			// the transaction of the stage before the one it Puts.
			txStage := it.Stage
			if it.Kind == eo.StablePrepared {
				txStage.Hop--
			}
			if c, ok := committedBy[txStage]; ok && (isDown(c) || (r.Split && apart(sim.NodeID(i), c))) {
				exempt++
				// Its FORGET will never come: the stage's other nodes keep it, and
				// keep trying (and failing) to run it.
				continue
			}
			errs = append(errs, fmt.Errorf("%s keeps %s %s of completed agent a%d", f.Name, it.Kind, it.Key, it.Stage.Agent))
		}
	}
	if len(errs) > 3 {
		errs = append(errs[:3], fmt.Errorf("… %d more", len(errs)-3))
	}
	return errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
