package sagascen

import (
	"fmt"
	"strings"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/protocols/saga"
)

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
