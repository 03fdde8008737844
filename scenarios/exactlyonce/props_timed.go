package eoscen

import (
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// Properties of EO-7 and EO-8 that depend on the protocol's periods and the network's
// latency. They read the run's per-message observations (Config.CountMessages, on in
// every scenario: eo.Sent names the sender, the stage and the kind of every network
// message) and the fault plan, and judge only what a correct protocol must do whatever
// the scheduling: they exempt every case a fault could explain.

// Names of the timed properties.
const (
	// PropInquiryRepeat is EO-7's periodic INQUIRY, as bounded liveness.
	PropInquiryRepeat = "EO-7 a voter repeats INQUIRY while it holds a vote"
	// PropAskAll is EO-8's ARE_YOU_THERE to every higher-priority node.
	PropAskAll = "EO-8 a selection asks every higher-priority stage node"
	// PropAnswered is EO-8's bully rule: an answered selection waits for the new worker.
	PropAnswered = "EO-8 a node a higher-priority node answered does not select itself"
)

// timed is what the timed properties know of a run besides the history.
type timed struct {
	timing eo.Timing
	// latMax is the largest link latency outside spikes.
	latMax time.Duration
	plan   faults.Plan
	// maxDrift bounds every node's clock rate error (the plan's largest skew drift).
	maxDrift float64
	// maxExtra is the largest extra latency of the plan's spikes.
	maxExtra time.Duration
	// lossy: loss, duplication or reordering is on (outside the paper's model).
	lossy bool
}

func timedOf(t eo.Timing, latMax time.Duration, plan faults.Plan, lossy bool) timed {
	d := timed{timing: t, latMax: latMax, plan: plan, lossy: lossy}
	for _, e := range plan.Events {
		if e.Kind == "spike" {
			d.maxExtra = max(d.maxExtra, time.Duration(e.Extra))
		}
		if e.Kind == "skew" && e.DriftPPM != nil {
			d.maxDrift = max(d.maxDrift, float64(max(*e.DriftPPM, -*e.DriftPPM))/1e6)
		}
	}
	return d
}

// step is one handler call of one node: the observations it made at one instant.
type stepKey struct {
	node sim.NodeID
	at   sim.Time
}

type stageNode struct {
	stage eo.StageID
	node  sim.NodeID
}

// records maps every stage after the launch stage to its record (priority order): the
// Next of the previous stage's commit.
func records(r *checker.Run) map[eo.StageID][]sim.NodeID {
	out := map[eo.StageID][]sim.NodeID{}
	for _, o := range r.History() {
		if c, ok := o.Value.(eo.Committed); ok && !c.Last {
			out[eo.StageID{Agent: c.Stage.Agent, Hop: c.Stage.Hop + 1}] = c.Next
		}
	}
	return out
}

// checkInquiryRepeat (EO-7, paper §4 "Failure Recovery": "INQUIRY messages are sent
// periodically until FORGET (or GAVE_UP) is received, or each orchestrator recorded
// in the voter's OrchSet returned a UN_VOTE"): after the faults settled, a voter that
// sent INQUIRY for a stage at t sends it again within one Inquiry period (clock drift
// and a round trip allowed), unless by then it forgot the stage (FORGET), an
// orchestrator sent it UN_VOTE for that stage (it may hold no vote any more), or it
// crashed. Only a voter holding a vote sends INQUIRY, and its answers arrive within a
// round trip once the faults settled, so a voter that stops asking while it still
// holds a vote violates it. Runs with a partition or cut left in force are not judged.
func (w *workload) checkInquiryRepeat(r *checker.Run) error {
	if r.Split || w.timed.lossy {
		r.Count(0, 0)
		r.Note("not judged: the plan leaves a partition or cut")
		return nil
	}
	period := time.Duration(float64(w.timed.timing.Inquiry)*(1+2*w.timed.maxDrift)) + 2*w.timed.latMax + time.Millisecond
	// A message sent before the faults settled arrives by then plus the largest
	// latency (a spike's extra included; FIFO links hold later messages behind it).
	from := r.Settled.Add(w.timed.latMax + w.timed.maxExtra + time.Millisecond)
	type ev struct {
		at   sim.Time
		kind int // 0 INQUIRY, 1 released (FORGET or UN_VOTE)
	}
	byVoter := map[stageNode][]ev{}
	last := map[stepKey]bool{} // one INQUIRY step per node and instant
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.Sent:
			if v.Kind == "INQUIRY" && !last[stepKey{o.Node, o.Time}] {
				last[stepKey{o.Node, o.Time}] = true
				k := stageNode{v.Stage, o.Node}
				byVoter[k] = append(byVoter[k], ev{o.Time, 0})
			}
		case eo.Forgot:
			k := stageNode{v.Stage, v.Node}
			byVoter[k] = append(byVoter[k], ev{o.Time, 1})
		case eo.UnVoteSent:
			k := stageNode{v.Stage, v.Voter}
			byVoter[k] = append(byVoter[k], ev{o.Time, 1})
		}
	}
	checked, exempt := 0, 0
	for _, k := range sortedStageNodes(byVoter) {
		evs := byVoter[k]
		for i, e := range evs {
			if e.kind != 0 || e.at < from {
				continue
			}
			deadline := e.at.Add(period)
			if deadline > r.Time || w.crashedIn(r, k.node, e.at, deadline) {
				exempt++
				continue
			}
			checked++
			if i+1 < len(evs) && evs[i+1].at <= deadline {
				continue
			}
			return fmt.Errorf("%s sent INQUIRY for stage %v at %v and neither asked again, nor forgot the stage, nor got an UN_VOTE within %v (one Inquiry period of %v, drift and a round trip)",
				r.Final[k.node].Name, k.stage, e.at, period, w.timed.timing.Inquiry)
		}
	}
	r.Count(checked, exempt)
	r.Note(fmt.Sprintf("%d INQUIRYs after the faults settled checked, %d exempt (the run ended or the voter crashed within a period)", checked, exempt))
	return nil
}

func sortedStageNodes[V any](m map[stageNode]V) []stageNode {
	ks := make([]stageNode, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b stageNode) int {
		switch {
		case a.stage.Agent != b.stage.Agent:
			return int(a.stage.Agent - b.stage.Agent)
		case a.stage.Hop != b.stage.Hop:
			return int(a.stage.Hop - b.stage.Hop)
		}
		return int(a.node - b.node)
	})
	return ks
}

// checkAskAll (EO-8, paper §5: "A node initiating the selection procedure sends
// ARE_YOU_THERE messages to all stage nodes with a higher priority"): every step in
// which a node asks for a stage sends exactly as many ARE_YOU_THERE as the stage's
// record has nodes above it; and a node that announces itself (I_AM_SELECTED) with
// nodes above it has asked them before, since it last became worker or restarted.
// The record of stage h is the one stage h-1's commit Put; stages whose record the
// run does not show are not judged.
func (w *workload) checkAskAll(r *checker.Run) error {
	recs := records(r)
	asks := map[stepKey]map[eo.StageID]int{}
	var order []stepKey
	for _, o := range r.History() {
		if v, ok := o.Value.(eo.Sent); ok && v.Kind == "ARE_YOU_THERE" {
			k := stepKey{o.Node, o.Time}
			if asks[k] == nil {
				asks[k] = map[eo.StageID]int{}
				order = append(order, k)
			}
			asks[k][v.Stage]++
		}
	}
	checked, exempt := 0, 0
	for _, k := range order {
		for _, s := range sortedStages(asks[k]) {
			rec, ok := recs[s]
			if !ok {
				exempt++
				continue
			}
			checked++
			if want := slices.Index(rec, k.node); asks[k][s] != want {
				return fmt.Errorf("%s sent %d ARE_YOU_THERE for stage %v at %v; %d stage nodes of %s are above it",
					r.Final[k.node].Name, asks[k][s], s, k.at, max(want, 0), nodeNames(r, rec))
			}
		}
	}
	// A node announcing itself has asked the nodes above it first.
	asked := map[stageNode]sim.Time{} // its last ask since it last became worker
	announced := map[stepKey]bool{}
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.RoleChange:
			if v.Role == eo.RoleWorker {
				delete(asked, stageNode{v.Stage, v.Node})
			}
		case eo.Sent:
			k := stageNode{v.Stage, o.Node}
			switch v.Kind {
			case "ARE_YOU_THERE":
				asked[k] = o.Time
			case "I_AM_SELECTED":
				sk := stepKey{o.Node, o.Time}
				if announced[sk] {
					continue
				}
				announced[sk] = true
				rec, ok := recs[v.Stage]
				if !ok {
					exempt++
					continue
				}
				at, ok := asked[k]
				if ok && !w.surelyCrashedIn(r, o.Node, at, o.Time) && w.crashedIn(r, o.Node, at, o.Time) {
					exempt++ // a crash-send's window: this may be the call it crashes in
					continue
				}
				checked++
				if slices.Index(rec, o.Node) > 0 && (!ok || w.crashedIn(r, o.Node, at, o.Time)) {
					return fmt.Errorf("%s announced itself (I_AM_SELECTED) for stage %v at %v without asking the higher-priority nodes of %s first",
						r.Final[o.Node].Name, v.Stage, o.Time, nodeNames(r, rec))
				}
			}
		}
	}
	r.Count(checked, exempt)
	return nil
}

func sortedStages[V any](m map[eo.StageID]V) []eo.StageID {
	ks := make([]eo.StageID, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b eo.StageID) int {
		if a.Agent != b.Agent {
			return int(a.Agent - b.Agent)
		}
		return int(a.Hop - b.Hop)
	})
	return ks
}

// checkAnswered (EO-8, the bully rule of paper §5: "Available nodes ... reply on this
// message with an I_AM_THERE message. If no reply arrives within a reasonable time,
// the initiator is selected ... If the initiator receives a reply instead, it waits on
// the I_AM_SELECTED (or I_AM_ALIVE) of the new worker"): a node that asked at a and
// announces itself at t, without asking again in between, had no higher-priority
// node whose answer had to arrive in time: one with the stage Active at a, up, and
// connected both ways to it from a until its There timeout, with no latency spike and
// no clock step of the asker in that window, and a round trip shorter than the
// timeout (drift allowed). Such a node answers I_AM_THERE at once, and the asker then
// waits for the new worker instead of selecting itself.
func (w *workload) checkAnswered(r *checker.Run) error {
	recs := records(r)
	there := w.timed.timing.There
	if 2*w.timed.latMax+time.Millisecond >= time.Duration(float64(there)*(1-2*w.timed.maxDrift)) {
		r.Count(0, 0)
		r.Note("not judged: a round trip may outlast the There timeout")
		return nil
	}
	if w.timed.lossy {
		r.Count(0, 0)
		r.Note("not judged: the network loses, duplicates or reorders messages (outside the paper's model)")
		return nil
	}
	active := map[stageNode]sim.Time{}
	gone := map[stageNode]sim.Time{} // forgot the stage, or committed it: may not answer
	for _, o := range r.History() {
		var k stageNode
		switch v := o.Value.(type) {
		case eo.Activated:
			k = stageNode{v.Stage, v.Node}
			if _, ok := active[k]; !ok {
				active[k] = o.Time
			}
			continue
		case eo.Forgot:
			k = stageNode{v.Stage, v.Node}
		case eo.Committed:
			k = stageNode{v.Stage, v.Node}
		default:
			continue
		}
		if _, ok := gone[k]; !ok {
			gone[k] = o.Time
		}
	}
	timeline := w.timed.plan.Timeline()
	asked := map[stageNode]sim.Time{}
	announced := map[stepKey]bool{}
	checked, exempt := 0, 0
	for _, o := range r.History() {
		v, ok := o.Value.(eo.Sent)
		if !ok {
			continue
		}
		k := stageNode{v.Stage, o.Node}
		switch v.Kind {
		case "ARE_YOU_THERE":
			asked[k] = o.Time
		case "I_AM_SELECTED":
			sk := stepKey{o.Node, o.Time}
			a, ok := asked[k]
			if announced[sk] || !ok {
				continue
			}
			announced[sk] = true
			delete(asked, k) // a claim's repeats belong to this selection
			rec := recs[v.Stage]
			me := slices.Index(rec, o.Node)
			end := a.Add(there + there/10)
			if me <= 0 {
				continue
			}
			if w.stepsClock(r, o.Node, a, o.Time) {
				exempt++
				continue
			}
			checked++
			for _, h := range rec[:me] {
				at, act := active[stageNode{v.Stage, h}]
				g, forgot := gone[stageNode{v.Stage, h}]
				if !act || at > a || (forgot && g <= end) {
					continue
				}
				if !w.clean(r, timeline, o.Node, h, a, end) {
					continue
				}
				return fmt.Errorf("%s asked the higher-priority nodes of stage %v at %v and announced itself at %v, but %s had the stage Active and was up and connected to it with round trips under %v until the There timeout (%v): its I_AM_THERE must have arrived in time",
					r.Final[o.Node].Name, v.Stage, a, o.Time, r.Final[h].Name, 2*w.timed.latMax, there)
			}
		}
	}
	r.Count(checked, exempt)
	return nil
}

// stepsClock reports whether the plan steps node n's clock (a skew) within [from, to].
func (w *workload) stepsClock(r *checker.Run, n sim.NodeID, from, to sim.Time) bool {
	for _, e := range w.timed.plan.Events {
		if e.Kind == "skew" && e.Node == r.Final[n].Name && sim.Time(e.At) <= to && from <= sim.Time(e.At) {
			return true
		}
	}
	return false
}

// clean reports whether nodes p and h were up and connected both ways throughout
// [from, to] under the plan, with no latency spike in force.
func (w *workload) clean(r *checker.Run, timeline []faults.Settlement, p, h sim.NodeID, from, to sim.Time) bool {
	np, nh := r.Final[p].Name, r.Final[h].Name
	if w.crashedIn(r, p, from, to) || w.crashedIn(r, h, from, to) {
		return false
	}
	for _, e := range w.timed.plan.Events {
		// A message sent while a spike was in force arrives up to its extra latency
		// later, and FIFO links hold the messages behind it.
		if e.Kind == "spike" && sim.Time(e.At) <= to && from <= sim.Time(e.At+e.For+e.Extra).Add(w.timed.latMax) {
			return false
		}
	}
	for i, s := range timeline {
		next := sim.Time(1<<62 - 1)
		if i+1 < len(timeline) {
			next = timeline[i+1].At
		}
		if next <= from || s.At > to {
			continue // not in force during [from, to]
		}
		if slices.Contains(s.Down, np) || slices.Contains(s.Down, nh) || !s.Reachable(np, nh) || !s.Reachable(nh, np) {
			return false
		}
	}
	return true
}
