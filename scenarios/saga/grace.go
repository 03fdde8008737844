package sagascen

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/sim"
)

// SG-4's grace period as a property (PropGrace). The paper: "the agents not affected
// wait a grace period before any recovery, in case a reconnection happens; during the
// grace period the connectivity messages are sent as usual; if the reconnection
// happens within it, the agents that had to contact the lost one resume their work;
// if it does not, they re-arrange the exchange ... and the agents affected by
// incomplete transactions start the compensation flow". With our reading (package
// doc: only a transaction's initiator gives up on it), for every agent a and every
// agent p it regards as lost (saga/lost) until it hears of p again (saga/back) or
// restarts:
//
//   - a gives up on p (saga/grace-over) only while it regards p as lost, and only a
//     whole grace period after it lost p, on its own clock;
//   - a sends its line neighbour p (every agent, all-to-all) connectivity messages
//     during the grace period: it gives up only after trying (a grace period that
//     does not span a beat breaks this);
//   - a does give up on p once p has been lost a grace period (the bound allows for
//     the plan's slow clocks and backward steps): a reconnection after that, or the
//     end of the run with a up, without a give-up, is a violation;
//   - when a gives up on p it stops (in the same step) every transaction it initiated
//     that p takes part in and that is still undecided, unaborted, and has no section
//     of p's processed yet (then p's part is surely missing); and a stop "for a lost
//     agent" happens only there: at the transaction's initiator, in the step that
//     gives up on that agent, for a participant of it — never at another participant
//     (a lost initiator leaves its transactions paused elsewhere until it is back).

// graceSuffix ends the reason an initiator gives when it gives up on a lost agent.
const graceSuffix = " lost past the grace period"

func (e *env) grace(r *checker.Run) error {
	o := e.sys.opts
	checked, exempt := 0, 0
	defer func() {
		r.Count(checked, exempt)
		r.Note(fmt.Sprintf("%d grace periods checked (given up on, or ended by a reconnection), %d exempt (their agent down at the end)", checked, exempt))
	}()
	if o.Beat <= 0 {
		return nil
	}
	h := e.h(r)
	line := slices.Sorted(slices.Values(o.Names))
	adjacent := func(a, p string) bool {
		i, j := slices.Index(line, a), slices.Index(line, p)
		return o.AllToAll || i-j == 1 || j-i == 1
	}
	clock := planClocks(e.plan)
	ppm := max(clock.ppm, 20_000)
	// the longest a grace period of o.Grace on a clock takes in real time
	long := time.Duration(float64(o.Grace)*1e6/float64(1_000_000-ppm)) + max(clock.back, 10*time.Millisecond) + 2*time.Millisecond
	type loss struct {
		local, at sim.Time
		gaveUp    bool
	}
	lost := map[[2]string]*loss{}
	name := func(ob sim.Observation) string { return r.Final[ob.Node].Name }
	hist := r.History()
	for i, ob := range hist {
		switch ob.Kind {
		case saga.ObsReplayed:
			// a restart: the agent's views and timers are new
			for k := range lost {
				if k[0] == name(ob) {
					delete(lost, k)
				}
			}
		case saga.ObsLost:
			v := ob.Value.(saga.ConnEv)
			lost[[2]string{v.Agent, v.Peer}] = &loss{local: ob.Local, at: ob.Time}
		case saga.ObsBack:
			v := ob.Value.(saga.ConnEv)
			k := [2]string{v.Agent, v.Peer}
			if l := lost[k]; l != nil {
				checked++
				if !l.gaveUp && ob.Time-l.at > sim.Time(long) {
					return fmt.Errorf("%s regarded %s as lost from %v until it was back at %v, longer than the grace period (%v, %v at most on its clock), and never gave up on it", v.Agent, v.Peer, l.at, ob.Time, o.Grace, long)
				}
			}
			delete(lost, k)
		case saga.ObsGraceOver:
			v := ob.Value.(saga.GraceEv)
			l := lost[[2]string{v.Agent, v.Peer}]
			checked++
			switch {
			case l == nil:
				return fmt.Errorf("%s gave up on %s at %v, which it did not regard as lost", v.Agent, v.Peer, ob.Time)
			case l.gaveUp:
				return fmt.Errorf("%s gave up on %s twice (at %v) for one loss", v.Agent, v.Peer, ob.Time)
			case ob.Local-l.local < sim.Time(o.Grace):
				return fmt.Errorf("%s gave up on %s at %v, %v on its clock after losing it: before the grace period of %v", v.Agent, v.Peer, ob.Time, time.Duration(ob.Local-l.local), o.Grace)
			case adjacent(v.Agent, v.Peer) && !v.Tried:
				return fmt.Errorf("%s gave up on its neighbour %s at %v without sending it a connectivity message during the grace period (%v, lost since %v)", v.Agent, v.Peer, ob.Time, o.Grace, l.at)
			}
			l.gaveUp = true
			if err := e.givesUp(h, hist, i, v); err != nil {
				return err
			}
		case saga.ObsAbort:
			v := ob.Value.(saga.AbortEv)
			p, ok := strings.CutSuffix(strings.TrimPrefix(v.Why, "agent "), graceSuffix)
			if !ok {
				continue
			}
			g := e.sys.opts.Graph(h.begins[v.Tr].Value.(saga.Begin).Start)
			if v.Agent != v.Tr.Init {
				return fmt.Errorf("transaction %s: %s, not its initiator %s, stopped it for %s lost past the grace period", v.Tr, v.Agent, v.Tr.Init, p)
			}
			if !slices.Contains(g.Agents, p) {
				return fmt.Errorf("transaction %s: %s stopped it for %s, which takes no part in it", v.Tr, v.Agent, p)
			}
			if !slices.ContainsFunc(hist[:i], func(x sim.Observation) bool {
				gv, ok := x.Value.(saga.GraceEv)
				return ok && x.Node == ob.Node && x.Time == ob.Time && gv.Peer == p
			}) {
				return fmt.Errorf("transaction %s: %s stopped it at %v for %s lost past the grace period, but did not give up on %s then", v.Tr, v.Agent, ob.Time, p, p)
			}
		}
	}
	keys := make([][2]string, 0, len(lost))
	for k := range lost {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y [2]string) int { return strings.Compare(x[0]+"|"+x[1], y[0]+"|"+y[1]) })
	for _, k := range keys {
		l := lost[k]
		if l.gaveUp {
			continue
		}
		if i := slices.IndexFunc(r.Final, func(f sim.FinalNode) bool { return f.Name == k[0] }); i < 0 || !r.Final[i].Up {
			exempt++
			continue
		}
		checked++
		if r.Time-l.at > sim.Time(long) {
			return fmt.Errorf("%s regarded %s as lost from %v to the end of the run at %v, longer than the grace period (%v, %v at most on its clock), and never gave up on it", k[0], k[1], l.at, r.Time, o.Grace, long)
		}
	}
	return nil
}

// givesUp checks what agent v.Agent's give-up on v.Peer (observation i of hist) must
// do: stop every transaction it initiated that v.Peer takes part in, still undecided
// and running there, of which no section of v.Peer's was processed yet.
func (e *env) givesUp(h *history, hist []sim.Observation, i int, v saga.GraceEv) error {
	g0 := hist[i]
	for _, id := range h.trs() {
		if id.Init != v.Agent || h.begins[id].Index > g0.Index {
			continue
		}
		g := e.sys.opts.Graph(h.begins[id].Value.(saga.Begin).Start)
		if !slices.Contains(g.Agents, v.Peer) {
			continue
		}
		before := func(o sim.Observation) bool { return o.Index < g0.Index }
		if slices.ContainsFunc(h.outcomes[id], func(o sim.Observation) bool {
			return before(o) && o.Value.(saga.OutcomeEv).Agent == v.Agent
		}) || slices.ContainsFunc(h.aborts[id], func(o sim.Observation) bool {
			return before(o) && o.Value.(saga.AbortEv).Agent == v.Agent
		}) || slices.ContainsFunc(h.sections[id], func(o sim.Observation) bool {
			sv := o.Value.(saga.SectionEv)
			return before(o) && sv.Sec.Agent == v.Peer && sv.State == saga.Processed
		}) {
			continue
		}
		if !slices.ContainsFunc(h.aborts[id], func(o sim.Observation) bool {
			return o.Node == g0.Node && o.Time == g0.Time && o.Index > g0.Index && o.Value.(saga.AbortEv).Why == "agent "+v.Peer+graceSuffix
		}) {
			return fmt.Errorf("transaction %s: its initiator %s gave up on %s at %v, which had processed none of its sections, and did not stop it", id, v.Agent, v.Peer, g0.Time)
		}
		// The compensation flow starts at once: a processed section of the
		// initiator's whose every later section is the lost agent's (not waited for,
		// SG-4) is compensated in the same step.
		for _, k := range g.Sections {
			if k.Agent != v.Agent || len(g.Succs[k]) == 0 || slices.ContainsFunc(g.Succs[k], func(n saga.SecKey) bool { return n.Agent != v.Peer }) {
				continue
			}
			state := saga.Pendant
			comp := false
			for _, o := range h.sections[id] {
				sv := o.Value.(saga.SectionEv)
				if sv.Sec != k {
					continue
				}
				if o.Index < g0.Index {
					state = sv.State
				} else if o.Node == g0.Node && o.Time == g0.Time && sv.State == saga.ProcessedCompensation {
					comp = true
				}
			}
			if state == saga.Processed && !comp {
				return fmt.Errorf("transaction %s: its initiator %s gave up on %s at %v but did not start compensating its section %s, which waits on nothing else", id, v.Agent, v.Peer, g0.Time, k)
			}
		}
	}
	return nil
}
