package sagascen

import (
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/protocols/saga"
)

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
