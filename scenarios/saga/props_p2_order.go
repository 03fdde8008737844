package sagascen

import (
	"fmt"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/protocols/saga"
)

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
