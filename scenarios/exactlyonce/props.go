package eoscen

import (
	"fmt"
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

func nodeNames(r *checker.Run, ns []sim.NodeID) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = r.Final[n].Name
	}
	return "{" + strings.Join(out, ",") + "}"
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
