package sagascen

import (
	"fmt"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/sim"
)

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
