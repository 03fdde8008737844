package sagascen

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

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

// SG-2 step 3: a unique tr_id is made for every transaction — across crashes too (the
// sequence is in the initiator's stable storage): no tr_id begins twice.
func (e *env) trIDs(r *checker.Run) error {
	h := e.h(r)
	seen := map[saga.TrID]sim.Observation{}
	for _, o := range h.beginAll {
		v := o.Value.(saga.Begin)
		if first, dup := seen[v.Tr]; dup {
			r.Count(len(seen), 0)
			return fmt.Errorf("tr_id %s made twice by %s: at %v and again at %v", v.Tr, v.Tr.Init, first.Time, o.Time)
		}
		seen[v.Tr] = o
	}
	r.Count(len(seen), 0)
	return nil
}

// SG-P1: at the end, a transaction that ended has every section processed, or every
// processed section compensated — never a mix. Unfinished transactions (excused ones:
// a participant down for good, a lasting split) are not judged; the rest are, and
// every transaction's sections are checked for a mix whatever its outcome.
func (e *env) atomic(r *checker.Run) error {
	h := e.h(r)
	checked, exempt := 0, 0
	defer func() {
		r.Count(checked, exempt)
		r.Note(fmt.Sprintf("%d transactions checked, %d exempt (a participant down for good or a lasting split)", checked, exempt))
	}()
	for _, id := range h.trs() {
		if len(h.outcomes[id]) == 0 && e.excused(r, id) {
			exempt++
			continue
		}
		checked++
		g := e.sys.opts.Graph(h.begins[id].Value.(saga.Begin).Start)
		fin := h.final(id)
		processed, undone := 0, 0
		for _, k := range g.Sections {
			switch fin[k] {
			case saga.Processed:
				processed++
			case saga.ProcessedCompensation, saga.Null, saga.Failed:
				undone++
			}
		}
		if processed > 0 && undone > 0 {
			var ks []string
			for _, k := range g.Sections {
				ks = append(ks, fmt.Sprintf("%s=%s", k, fin[k]))
			}
			return fmt.Errorf("transaction %s ended half done: %s", id, strings.Join(ks, " "))
		}
		if processed > 0 && processed < len(g.Sections) && len(h.outcomes[id]) > 0 {
			return fmt.Errorf("transaction %s has an outcome with %d of %d sections processed", id, processed, len(g.Sections))
		}
	}
	return nil
}

// SG-P2: a section is compensated only after every section after it that was
// processed is compensated (reverse order of the incoming actions; for parallel
// branches, of the dependency order), and only if it was processed. A successor whose
// agent the compensating agent had given up on (the grace period ran out, SG-4) is
// exempt: the paper lets the others compensate without it. Says what it checked.
func (e *env) order(r *checker.Run) error {
	h := e.h(r)
	checked, exempt := 0, 0
	defer func() {
		r.Count(checked, exempt)
		r.Note(fmt.Sprintf("%d compensations checked, %d orderings exempt (a later section's agent gone past the grace period)", checked, exempt))
	}()
	for _, id := range h.trs() {
		g := e.sys.opts.Graph(h.begins[id].Value.(saga.Begin).Start)
		processedAt := map[saga.SecKey]int64{}
		compAt := map[saga.SecKey]int64{}
		for _, o := range h.sections[id] {
			v := o.Value.(saga.SectionEv)
			switch v.State {
			case saga.Processed:
				if _, ok := processedAt[v.Sec]; !ok {
					processedAt[v.Sec] = o.Index
				}
			case saga.ProcessedCompensation:
				if _, ok := compAt[v.Sec]; !ok {
					compAt[v.Sec] = o.Index
				}
			}
		}
		for _, k := range g.Sections {
			ci, ok := compAt[k]
			if !ok {
				continue
			}
			checked++
			if _, was := processedAt[k]; !was {
				return fmt.Errorf("transaction %s: section %s compensated without having been processed", id, k)
			}
			for _, n := range g.Succs[k] {
				if _, was := processedAt[n]; !was {
					continue
				}
				if nc, ok := compAt[n]; ok && nc < ci {
					continue
				}
				if e.gaveUp(r, k.Agent, n.Agent, ci) {
					exempt++
					continue
				}
				return fmt.Errorf("transaction %s: section %s compensated before %s, which comes after it and was processed", id, k, n)
			}
		}
	}
	return nil
}

// gaveUp reports whether agent a regarded agent b as gone (past the grace period, not
// heard of since, a not restarted since) at index at.
func (e *env) gaveUp(r *checker.Run, a, b string, at int64) bool {
	gone := false
	for _, o := range r.History() {
		if o.Index >= at {
			break
		}
		switch v := o.Value.(type) {
		case saga.GraceEv:
			if v.Agent == a && v.Peer == b {
				gone = true
			}
		case saga.ConnEv:
			if o.Kind == saga.ObsBack && v.Agent == a && v.Peer == b {
				gone = false
			}
		case saga.Replayed:
			if v.Agent == a {
				gone = false
			}
		}
	}
	return gone
}

// Nothing owed at the end: requests and notices are re-sent until acknowledged
// (package doc), so once the faults have settled and the run has gone on for the
// bound, no agent that is up still keeps one for an agent that is up (one for an
// agent down for good is exempt).
func (e *env) owed(r *checker.Run) error {
	checked, exempt := 0, 0
	defer func() { r.Count(checked, exempt) }()
	if r.Time < r.Settled.Add(e.bound) {
		return nil
	}
	for _, f := range r.Final {
		a, ok := f.State.(*saga.Agent)
		if !f.Up || !ok {
			continue
		}
		checked++
		for _, k := range sortedStrings(a.S.Pending) {
			p := a.S.Pending[k]
			if slices.Contains(r.Down, p.To) {
				exempt++
				continue
			}
			return fmt.Errorf("%s still keeps a %s for %s unacknowledged at the end (%v after the faults settled)", f.Name, p.Msg.Kind(), p.To, time.Duration(r.Time-r.Settled))
		}
	}
	return nil
}

// SG-2 steps 4-5 and SG-3 step 3: a section's incoming action runs only once every
// section before it (its predecessors: a join has several) was processed, on the
// output_data of one of them (the first section on the transaction's input_data); a
// compensation runs on its section's output_data. (With the swarm's services an
// output differs from its input, so passing the wrong data shows.)
func (e *env) flow(r *checker.Run) error {
	h := e.h(r)
	checked := 0
	defer func() { r.Count(checked, 0) }()
	byTr := map[saga.TrID][]sim.Observation{}
	for _, o := range h.calls {
		c := o.Value.(saga.Return).Call
		byTr[c.Tr] = append(byTr[c.Tr], o)
	}
	for _, id := range h.trs() {
		b := h.begins[id].Value.(saga.Begin)
		g := e.sys.opts.Graph(b.Start)
		procAt := map[saga.SecKey]int64{}
		for _, o := range h.sections[id] {
			if v := o.Value.(saga.SectionEv); v.State == saga.Processed {
				if _, ok := procAt[v.Sec]; !ok {
					procAt[v.Sec] = o.Index
				}
			}
		}
		outs := map[saga.SecKey]saga.Data{}
		for _, o := range byTr[id] {
			rt := o.Value.(saga.Return)
			c := rt.Call
			checked++
			if c.Comp {
				if out, ok := outs[c.Sec]; ok && c.In != out {
					return fmt.Errorf("transaction %s: %s compensated (%s) with %+v, not its output_data %+v", id, c.Sec, c.Action, c.In, out)
				}
				continue
			}
			from := false
			for _, p := range g.Preds[c.Sec] {
				if at, ok := procAt[p]; !ok || at > o.Index {
					return fmt.Errorf("transaction %s: %s ran %s before %s, which comes before it, was processed", id, c.Sec, c.Action, p)
				}
				from = from || outs[p] == c.In
			}
			if len(g.Preds[c.Sec]) == 0 {
				from = c.In == b.Input
			}
			if !from {
				return fmt.Errorf("transaction %s: %s ran %s on %+v, not on the output_data of a section before it (or the transaction's input)", id, c.Sec, c.Action, c.In)
			}
			if rt.Ok {
				if _, ok := outs[c.Sec]; !ok {
					outs[c.Sec] = rt.Out
				}
			}
		}
	}
	return nil
}

// SG-P3 / duplicate effect: each incoming action and each compensation action runs at
// most once per (transaction, section), across crashes, retries and redelivery.
func (e *env) once(r *checker.Run) error {
	seen := map[string]int64{}
	n := 0
	for _, o := range e.h(r).calls {
		c := o.Value.(saga.Return).Call
		key := fmt.Sprintf("%s %s %s", c.Tr, c.Sec, c.Action)
		if first, dup := seen[key]; dup {
			return fmt.Errorf("transaction %s: %s ran %s twice (observations %d and %d)", c.Tr, c.Sec, c.Action, first, o.Index)
		}
		seen[key] = o.Index
		n++
	}
	r.Count(n, 0)
	r.Note(fmt.Sprintf("%d service calls checked", n))
	return nil
}

// Null compensation: a compensation reaching a section whose action never ran is a
// recorded no-op (the section becomes null), never a call of the compensation action.
func (e *env) null(r *checker.Run) error {
	h := e.h(r)
	n, comps := 0, 0
	defer func() { r.Count(comps, 0) }()
	for _, id := range h.trs() {
		ran := map[saga.SecKey]bool{}
		for _, o := range h.calls {
			c := o.Value.(saga.Return)
			if c.Call.Tr != id {
				continue
			}
			if !c.Call.Comp {
				ran[c.Call.Sec] = ran[c.Call.Sec] || c.Ok
				continue
			}
			comps++
			if !ran[c.Call.Sec] {
				return fmt.Errorf("transaction %s: compensation %s of %s called, but its incoming action never took effect", id, c.Call.Action, c.Call.Sec)
			}
		}
		for _, o := range h.sections[id] {
			if o.Value.(saga.SectionEv).State == saga.Null {
				n++
			}
		}
	}
	r.Note(fmt.Sprintf("%d compensation calls checked; %d null compensations recorded", comps, n))
	return nil
}

// Dangling action: an incoming action that takes effect after its section was
// compensated or closed as null (a delayed request, a re-send, a replay from the log).
func (e *env) dangling(r *checker.Run) error {
	h := e.h(r)
	checked := 0
	defer func() { r.Count(checked, 0) }()
	for _, id := range h.trs() {
		closed := map[saga.SecKey]int64{}
		for _, o := range h.sections[id] {
			v := o.Value.(saga.SectionEv)
			if v.State == saga.Null || v.State == saga.ProcessedCompensation {
				if _, ok := closed[v.Sec]; !ok {
					closed[v.Sec] = o.Index
				}
			}
		}
		for _, o := range h.calls {
			c := o.Value.(saga.Return)
			if c.Call.Tr != id || c.Call.Comp || !c.Ok {
				continue
			}
			checked++
			if at, ok := closed[c.Call.Sec]; ok && at < o.Index {
				return fmt.Errorf("transaction %s: %s ran %s after the section was closed (observation %d, closed at %d)", id, c.Call.Sec, c.Call.Action, o.Index, at)
			}
		}
	}
	return nil
}

// One outcome: each agent decides a transaction's outcome at most once, and all
// agents decide the same.
func (e *env) oneOutcome(r *checker.Run) error {
	h := e.h(r)
	n := 0
	for _, id := range h.trs() {
		by := map[string]saga.Outcome{}
		for _, o := range h.outcomes[id] {
			v := o.Value.(saga.OutcomeEv)
			if prev, ok := by[v.Agent]; ok {
				return fmt.Errorf("transaction %s: agent %s decided twice (%s, then %s)", id, v.Agent, prev, v.Outcome)
			}
			by[v.Agent] = v.Outcome
			n++
		}
		var first saga.Outcome
		for _, a := range sortedStrings(by) {
			if first == saga.Running {
				first = by[a]
			} else if by[a] != first {
				return fmt.Errorf("transaction %s: agents decided %s and %s", id, first, by[a])
			}
		}
	}
	r.Count(n, 0)
	r.Note(fmt.Sprintf("%d decisions checked", n))
	return nil
}

// SG-2 step 6: the agent whose section ends a sub-transaction (no next/2 after it; a
// next/3 link starts another) says so when it tells the others the section was
// processed, and no other section claims to end one. Says how many it checked.
func (e *env) endsAnnounced(r *checker.Run) error {
	checked := 0
	defer func() {
		r.Count(checked, 0)
		r.Note(fmt.Sprintf("%d processed sections checked", checked))
	}()
	for _, o := range r.History() {
		v, ok := o.Value.(saga.SectionEv)
		if !ok || o.Kind != saga.ObsSection || v.State != saga.Processed {
			continue
		}
		checked++
		if want := e.sys.conf.Section(v.Sec).Next == ""; v.EndsSt != want {
			return fmt.Errorf("transaction %s: section %s processed with ends-sub-transaction %v, want %v", v.Tr, v.Sec, v.EndsSt, want)
		}
	}
	return nil
}

// Log replay: after a restart the agent's transaction state, rebuilt from its log,
// equals what it had done before the crash (every state change was logged with it).
func (e *env) replay(r *checker.Run) error {
	h := e.h(r)
	for _, ro := range h.replays {
		v := ro.Value.(saga.Replayed)
		want := map[string]bool{}
		state := map[string]string{} // "tr st" → state
		for _, o := range r.History() {
			if o.Index >= ro.Index {
				break
			}
			if r.Final[o.Node].Name != v.Agent {
				continue
			}
			switch x := o.Value.(type) {
			case saga.SectionEv:
				if o.Kind == saga.ObsSection && x.Sec.Agent == v.Agent {
					state[fmt.Sprintf("%s %s", x.Tr, x.Sec.St)] = x.State.String()
				}
			case saga.AbortEv:
				want[fmt.Sprintf("%s aborted", x.Tr)] = true
			case saga.OutcomeEv:
				want[fmt.Sprintf("%s outcome %s", x.Tr, x.Outcome)] = true
			}
		}
		for k, s := range state {
			if s != saga.Pendant.String() {
				want[k+" "+s] = true
			}
		}
		var exp []string
		for k := range want {
			exp = append(exp, k)
		}
		slices.Sort(exp)
		if !slices.Equal(exp, v.Lines) {
			r.Count(len(h.replays), 0)
			return fmt.Errorf("agent %s restarted at %v with a state its log rebuilt that differs from before the crash: want %v, got %v", v.Agent, ro.Time, diff(exp, v.Lines), diff(v.Lines, exp))
		}
	}
	r.Count(len(h.replays), 0)
	r.Note(fmt.Sprintf("%d restarts checked", len(h.replays)))
	return nil
}

func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// SG-P4: every transaction ends at every participant (each decides its outcome)
// within the bound after the faults settle; excused ones (a participant down for
// good, a lasting split) are exempt, every participant of them.
func (e *env) liveItems(r *checker.Run) (items []scenarios.Item, exempt int) {
	h := e.h(r)
	for _, id := range h.trs() {
		agents := e.sys.opts.Graph(h.begins[id].Value.(saga.Begin).Start).Agents
		if e.excused(r, id) {
			exempt += len(agents)
			continue
		}
		for _, a := range agents {
			it := scenarios.Item{Name: "transaction " + id.String() + " at " + a, Start: h.begins[id].Time}
			for _, o := range h.outcomes[id] {
				if o.Value.(saga.OutcomeEv).Agent == a && !it.Completed {
					it.Completed, it.Done = true, o.Time
				}
			}
			items = append(items, it)
		}
	}
	return items, exempt
}

// ---- SG-P5: the services against sequential models ----

// serviceOps turns every service call into an operation keyed by agent (each
// microservice its own partition).
func (e *env) serviceOps(r *checker.Run) ([]checker.Operation, error) {
	var ops []checker.Operation
	calls := map[string]int64{}
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case saga.Call:
			if o.Kind == saga.ObsCall {
				calls[v.Agent] = o.Index
			}
		case saga.Return:
			ops = append(ops, checker.Operation{Key: v.Call.Agent, Client: int(o.Node), Input: v.Call,
				Output: v, Call: calls[v.Call.Agent], Return: o.Index})
		}
	}
	return ops, nil
}

// serviceModel is the sequential specification of each microservice, written apart
// from the services (so a service that drifts from it is caught): the order
// service's orders, the customer service's credit and reservations, the generic
// service's applied steps.
func serviceModel(s *system) func(key string) porcupine.Model {
	return func(agent string) porcupine.Model {
		return porcupine.Model{
			Init: func() any { return specState{} },
			Step: func(st, in, out any) (bool, any) {
				next, ret := specStep(st.(specState), agent, in.(saga.Call), s.credit, s.receipts)
				got := out.(saga.Return)
				return ret.Ok == got.Ok, next
			},
			Equal: func(a, b any) bool { return a.(specState).key() == b.(specState).key() },
			DescribeOperation: func(in, out any) string {
				c, rt := in.(saga.Call), out.(saga.Return)
				return fmt.Sprintf("%s(%s order %d) → ok=%v %s", c.Action, c.Tr, c.In.Order, rt.Ok, rt.Why)
			},
		}
	}
}

// specState is a service's abstract state: sorted "key=value" facts.
type specState struct{ facts string }

func (s specState) key() string { return s.facts }

func (s specState) get(k string) (string, bool) {
	for _, f := range strings.Split(s.facts, ";") {
		if kk, v, ok := strings.Cut(f, "="); ok && kk == k {
			return v, true
		}
	}
	return "", false
}

func (s specState) set(k, v string) specState {
	var fs []string
	for _, f := range strings.Split(s.facts, ";") {
		if kk, _, ok := strings.Cut(f, "="); ok && kk != k {
			fs = append(fs, f)
		}
	}
	if v != "" {
		fs = append(fs, k+"="+v)
	}
	slices.Sort(fs)
	return specState{strings.Join(fs, ";")}
}

func specStep(s specState, agent string, c saga.Call, credit int64, receipts bool) (specState, saga.Return) {
	ok := func(st specState) (specState, saga.Return) { return st, saga.Return{Ok: true} }
	fail := saga.Return{Ok: false}
	ord := fmt.Sprint(c.In.Order)
	switch c.Action {
	case "createPendingOrder":
		if _, ex := s.get("o" + ord); ex {
			return s, fail
		}
		return ok(s.set("o"+ord, "pending"))
	case "deleteOrder":
		if _, ex := s.get("o" + ord); !ex {
			return s, fail
		}
		return ok(s.set("o"+ord, ""))
	case "approveOrder":
		if v, _ := s.get("o" + ord); v != "pending" {
			return s, fail
		}
		return ok(s.set("o"+ord, "approved"))
	case "cancelOrder":
		if v, _ := s.get("o" + ord); v != "approved" {
			return s, fail
		}
		return ok(s.set("o"+ord, "cancelled"))
	case "reserveCredit":
		have := credit
		if v, ex := s.get("c" + c.In.Customer); ex {
			fmt.Sscan(v, &have)
		}
		if _, ex := s.get("r" + ord); ex || c.In.Amount > have {
			return s, fail
		}
		return ok(s.set("c"+c.In.Customer, fmt.Sprint(have-c.In.Amount)).set("r"+ord, fmt.Sprint(c.In.Amount)))
	case "cancelReservation":
		v, ex := s.get("r" + ord)
		if !ex {
			return s, fail
		}
		var amt int64
		fmt.Sscan(v, &amt)
		have := credit
		if w, ex := s.get("c" + c.In.Customer); ex {
			fmt.Sscan(w, &have)
		}
		return ok(s.set("c"+c.In.Customer, fmt.Sprint(have+amt)).set("r"+ord, ""))
	}
	switch {
	case strings.HasPrefix(c.Action, "undo"):
		k := "s" + ord + "/do" + strings.TrimPrefix(c.Action, "undo")
		v, ex := s.get(k)
		if !ex || (receipts && v != fmt.Sprint(c.In.Amount)) {
			return s, fail
		}
		return ok(s.set(k, ""))
	case strings.HasPrefix(c.Action, "do"):
		k := "s" + ord + "/" + c.Action
		if c.In.Fail == agent+":"+c.Action {
			return s, fail
		}
		if _, ex := s.get(k); ex {
			return s, fail
		}
		if receipts {
			return ok(s.set(k, fmt.Sprint(saga.Receipt(c.In.Amount, agent, c.Action))))
		}
		return ok(s.set(k, "1"))
	}
	return s, fail
}

// SG-P5 at quiescence: the services' data agrees with the transactions' outcomes. For
// the paper's example: a committed order is approved and its credit reserved; a
// compensated one left no order (or a cancelled one) and no reservation; every
// customer's credit is the initial credit less the committed reservations. For the
// generic services: a committed transaction's every step is applied, a compensated
// one's none. A transaction's outcome is the one its agents decided (any of them: one
// outcome is checked apart). And every participant's log agrees: a transaction that
// is not excused (SG-P4) has, in each participant's log, the outcome decided and its
// sections processed (committed) or settled (compensated).
func (e *env) finalData(r *checker.Run) error {
	h := e.h(r)
	dbs := map[string]map[string]int64{}
	for _, f := range r.Final {
		db := map[string]int64{}
		for _, k := range f.Stable.Keys() {
			if strings.HasPrefix(k, "svc/") {
				v, _ := sim.Load[int64](f.Stable.View(), k)
				db[strings.TrimPrefix(k, "svc/")] = v
			}
		}
		dbs[f.Name] = db
	}
	checked, exempt := 0, 0
	defer func() { r.Count(checked, exempt) }()
	for _, id := range h.trs() {
		b := h.begins[id].Value.(saga.Begin)
		var out saga.Outcome
		for _, o := range h.outcomes[id] {
			out = o.Value.(saga.OutcomeEv).Outcome
		}
		if out == saga.Running {
			exempt++
			continue
		}
		checked++
		g := e.sys.opts.Graph(b.Start)
		var errs []error
		if !e.excused(r, id) {
			for _, f := range r.Final {
				if !slices.Contains(g.Agents, f.Name) {
					continue
				}
				rec, ok := sim.Load[saga.Tx](f.Stable.View(), "tx/"+id.String())
				if !ok || rec.Outcome != out {
					errs = append(errs, fmt.Errorf("transaction %s ended %s, but %s's log says %s", id, out, f.Name, rec.Outcome))
					continue
				}
				for _, st := range sortedStrings(rec.Own) {
					if s := rec.Own[st].State; (out == saga.Committed && s != saga.Processed) || (out == saga.Compensated && !settled(s)) {
						errs = append(errs, fmt.Errorf("transaction %s ended %s, but %s's log has its section %s %s", id, out, f.Name, st, s))
					}
				}
			}
		}
		for _, k := range g.Sections {
			db := dbs[k.Agent]
			ord := b.Input.Order
			switch k.Agent {
			case "order":
				st, ok := db[fmt.Sprintf("order/%d", ord)]
				if out == saga.Committed && (!ok || st != saga.OrderApproved) {
					errs = append(errs, fmt.Errorf("committed order %d is not approved (state %d)", ord, st))
				}
				if out == saga.Compensated && ok && st != saga.OrderCancelled {
					errs = append(errs, fmt.Errorf("compensated order %d is still there (state %d)", ord, st))
				}
			case "customer":
				amt, ok := db[fmt.Sprintf("resv/%d", ord)]
				if out == saga.Committed && !ok {
					errs = append(errs, fmt.Errorf("committed order %d has no credit reserved", ord))
				}
				if out == saga.Compensated && ok {
					errs = append(errs, fmt.Errorf("compensated order %d still holds %d of credit", ord, amt))
				}
			default:
				sec := e.sys.conf.Section(k)
				_, ok := db[fmt.Sprintf("step/%d/%s", ord, sec.Incoming)]
				if out == saga.Committed && !ok {
					errs = append(errs, fmt.Errorf("committed transaction %s lacks step %s at %s", id, sec.Incoming, k.Agent))
				}
				if out == saga.Compensated && ok {
					errs = append(errs, fmt.Errorf("compensated transaction %s still has step %s at %s", id, sec.Incoming, k.Agent))
				}
			}
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	if e.sys.paper {
		// Credit is conserved: a customer's credit plus the reservations its orders
		// hold equals the initial credit.
		held := map[string]int64{}
		for _, id := range h.trs() {
			b := h.begins[id].Value.(saga.Begin)
			if amt, ok := dbs["customer"][fmt.Sprintf("resv/%d", b.Input.Order)]; ok {
				held[b.Input.Customer] += amt
			}
		}
		for _, c := range sortedStrings(held) {
			credit, ok := dbs["customer"]["credit/"+c]
			if !ok {
				credit = e.sys.credit
			}
			if credit+held[c] != e.sys.credit {
				return fmt.Errorf("customer %s: credit %d plus reservations %d is not the initial %d", c, credit, held[c], e.sys.credit)
			}
		}
	}
	r.Note(fmt.Sprintf("%d ended transactions checked, %d unfinished exempt", checked, exempt))
	return nil
}

func settled(s saga.Status) bool {
	return s == saga.ProcessedCompensation || s == saga.Null || s == saga.Failed
}

// SG-2 step 7, SG-3 step 5 and SG-4's cleanup: a transaction ends at an agent only
// when all of it has: committed, once every section was processed; compensated, once
// every section is settled (compensated, null, or failed) at its own agent — a
// section of an agent gone past the grace period included: the transaction is not
// finished until that agent is back and has cleaned up.
func (e *env) finished(r *checker.Run) error {
	h := e.h(r)
	checked := 0
	defer func() { r.Count(checked, 0) }()
	for _, id := range h.trs() {
		g := e.sys.opts.Graph(h.begins[id].Value.(saga.Begin).Start)
		for _, oc := range h.outcomes[id] {
			v := oc.Value.(saga.OutcomeEv)
			checked++
			done := map[saga.SecKey]bool{}
			for _, o := range h.sections[id] {
				if o.Index > oc.Index {
					break
				}
				sv := o.Value.(saga.SectionEv)
				if (v.Outcome == saga.Committed && sv.State == saga.Processed) || (v.Outcome == saga.Compensated && settled(sv.State)) {
					done[sv.Sec] = true
				}
			}
			for _, k := range g.Sections {
				if !done[k] {
					return fmt.Errorf("transaction %s ended %s at %s at %v before its section %s was %s", id, v.Outcome, v.Agent, oc.Time, k,
						map[saga.Outcome]string{saga.Committed: "processed", saga.Compensated: "settled"}[v.Outcome])
				}
			}
		}
	}
	return nil
}
