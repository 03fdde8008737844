package sagascen

import (
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// Property names: the digest's SG-P1…SG-P5 and the failure modes saga users report.
const (
	PropAtomic    = "SG-P1 atomicity"
	PropOrder     = "SG-P2 compensation order"
	PropOnce      = "SG-P3 duplicate effect"
	PropLive      = "SG-P4 every transaction ends"
	PropData      = "SG-P5 services' data"
	PropNull      = "null compensation"
	PropDangling  = "dangling action"
	PropOneOut    = "one outcome"
	PropReplay    = "log replay"
	PropFinalData = "SG-P5 data at quiescence"
	PropEnds      = "SG-2 sub-transaction end announced"
	PropTrID      = "SG-2 unique tr_id"
	PropFinished  = "SG-2/SG-3 ends after every section"
	PropGrace     = "SG-4 grace period"
	PropFlow      = "SG-2 sections run in order on their predecessors' output"
	PropQuiet     = "SG-4 no loss once the faults settle"
	PropOwed      = "nothing owed at the end"
)

// history is the run's saga observations, indexed.
type history struct {
	begins   map[saga.TrID]sim.Observation
	beginAll []sim.Observation               // every Begin, in order (a reused tr_id begins twice)
	sections map[saga.TrID][]sim.Observation // SectionEv, in order
	calls    []sim.Observation               // Return (each has its Call)
	outcomes map[saga.TrID][]sim.Observation
	aborts   map[saga.TrID][]sim.Observation
	graces   []sim.Observation
	replays  []sim.Observation
}

func index(r *checker.Run) *history {
	h := &history{begins: map[saga.TrID]sim.Observation{}, sections: map[saga.TrID][]sim.Observation{},
		outcomes: map[saga.TrID][]sim.Observation{}, aborts: map[saga.TrID][]sim.Observation{}}
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case saga.Begin:
			if _, dup := h.begins[v.Tr]; !dup {
				h.begins[v.Tr] = o
			}
			h.beginAll = append(h.beginAll, o)
		case saga.SectionEv:
			if o.Kind == saga.ObsSection {
				h.sections[v.Tr] = append(h.sections[v.Tr], o)
			}
		case saga.Return:
			h.calls = append(h.calls, o)
		case saga.OutcomeEv:
			h.outcomes[v.Tr] = append(h.outcomes[v.Tr], o)
		case saga.AbortEv:
			h.aborts[v.Tr] = append(h.aborts[v.Tr], o)
		case saga.GraceEv:
			h.graces = append(h.graces, o)
		case saga.Replayed:
			h.replays = append(h.replays, o)
		}
	}
	return h
}

func (h *history) trs() []saga.TrID {
	ids := make([]saga.TrID, 0, len(h.begins))
	for id := range h.begins {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b saga.TrID) int {
		if a.Init != b.Init {
			return strings.Compare(a.Init, b.Init)
		}
		return int(a.Seq - b.Seq)
	})
	return ids
}

// final returns each section's last state in the history.
func (h *history) final(id saga.TrID) map[saga.SecKey]saga.Status {
	m := map[saga.SecKey]saga.Status{}
	for _, o := range h.sections[id] {
		v := o.Value.(saga.SectionEv)
		m[v.Sec] = v.State
	}
	return m
}

// env holds what the properties need of the system.
type env struct {
	sys *system
	// bound is SG-P4's: every transaction ends within it after the faults settle.
	bound time.Duration
	ix    *history
	ixRun *checker.Run
	// plan is the run's fault plan and maxLatency the longest a message can take
	// (SG-4's detection check reads them).
	plan       faults.Plan
	maxLatency time.Duration
}

func (e *env) h(r *checker.Run) *history {
	if e.ixRun != r {
		e.ix, e.ixRun = index(r), r
	}
	return e.ix
}

// excused reports whether a transaction may be left unfinished: a participant is down
// for good, or the plan left a partition or cut (the paper's transactions end only
// when the missing agents come back).
func (e *env) excused(r *checker.Run, id saga.TrID) bool {
	g := e.sys.opts.Graph(e.h(r).begins[id].Value.(saga.Begin).Start)
	for _, a := range g.Agents {
		if slices.Contains(r.Down, a) {
			return true
		}
	}
	return r.Split
}

func (e *env) properties() []checker.Property {
	data := checker.LinearizableKeyed(PropData, serviceModel(e.sys), e.serviceOps, 0)
	lin := data.Check
	data.Check = func(r *checker.Run) error {
		err := lin(r)
		ops, _ := e.serviceOps(r)
		r.Count(len(ops), 0)
		return err
	}
	live := scenarios.Bounded(PropLive, e.bound, func(r *checker.Run) []scenarios.Item {
		items, exempt := e.liveItems(r)
		r.Count(len(items), exempt)
		return items
	})
	return []checker.Property{
		{Name: PropTrID, Class: checker.Safety, Check: e.trIDs},
		{Name: PropOrder, Class: checker.Safety, Check: e.order},
		{Name: PropOnce, Class: checker.Safety, Check: e.once},
		{Name: PropNull, Class: checker.Safety, Check: e.null},
		{Name: PropDangling, Class: checker.Safety, Check: e.dangling},
		{Name: PropOneOut, Class: checker.Safety, Check: e.oneOutcome},
		{Name: PropReplay, Class: checker.Safety, Check: e.replay},
		{Name: PropLost, Class: checker.Safety, Check: e.lossReported},
		{Name: PropEnds, Class: checker.Safety, Check: e.endsAnnounced},
		{Name: PropFinished, Class: checker.Safety, Check: e.finished},
		{Name: PropFlow, Class: checker.Safety, Check: e.flow},
		{Name: PropQuiet, Class: checker.Safety, NeedsCompleteRun: true, Check: e.quiet},
		{Name: PropOwed, Class: checker.Liveness, NeedsCompleteRun: true, Check: e.owed},
		{Name: PropGrace, Class: checker.Safety, Check: e.grace},
		data,
		{Name: PropAtomic, Class: checker.Safety, NeedsCompleteRun: true, Check: e.atomic},
		{Name: PropFinalData, Class: checker.Safety, NeedsCompleteRun: true, Check: e.finalData},
		live,
	}
}
