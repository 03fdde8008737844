package saga

import (
	"slices"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// SG-4: failure detection and recovery. The agents form a line, sorted by name
// (Fig. 3); each exchanges its view of everyone's connectivity with its left and right
// neighbours only (the ends with one), so a view crosses the line and every agent
// learns the connectivity of all at a cost linear in the number of agents. A
// neighbour silent for Timeout is lost; the loss spreads along the line (the larger
// generation of an entry wins); transactions that need a lost agent pause (messages
// to it are kept, not sent); after the grace period the line is re-arranged around it
// (neighbours skip gone agents, while still trying them) and transactions it had not
// finished its part of are compensated; they end only when it reconnects and cleans
// up (its sections settle).

// startConn starts the connectivity exchange (at start and restart).
func (a *Agent) startConn() {
	if a.O.Beat <= 0 {
		return
	}
	for _, n := range a.O.line {
		a.S.View[n] = Entry{Agent: n}
	}
	for _, n := range a.watched() {
		a.S.LastHeard[n] = a.now
	}
	a.out.SetTimer("beat", a.O.Beat)
}

// neighbours returns the agents the exchange talks to: the nearest agent on each side
// that is not gone, and the gone agents between (still tried, SG-4); every agent in
// the all-to-all baseline.
func (a *Agent) neighbours() []string {
	if a.O.AllToAll {
		return slices.DeleteFunc(slices.Clone(a.O.line), func(n string) bool { return n == a.S.Name })
	}
	i := slices.Index(a.O.line, a.S.Name)
	var out []string
	for j := i - 1; j >= 0; j-- {
		out = append(out, a.O.line[j])
		if !a.S.Gone[a.O.line[j]] {
			break
		}
		a.out.Cover(ruleRearranged)
	}
	for j := i + 1; j < len(a.O.line); j++ {
		out = append(out, a.O.line[j])
		if !a.S.Gone[a.O.line[j]] {
			break
		}
		a.out.Cover(ruleRearranged)
	}
	slices.Sort(out)
	return out
}

// watched returns the neighbours whose silence means a loss (gone ones are not
// watched: they are already lost).
func (a *Agent) watched() []string {
	return slices.DeleteFunc(a.neighbours(), func(n string) bool { return a.S.Gone[n] })
}

// tick: one round of the exchange, and the silence check.
func (a *Agent) tick() {
	view := make([]Entry, 0, len(a.O.line))
	for _, n := range a.O.line {
		view = append(view, a.S.View[n])
	}
	a.out.Cover(ruleExchange)
	for _, n := range a.neighbours() {
		// SG-4: a lost neighbour is still sent its beat, during the grace period and
		// after it.
		a.out.Send(a.O.ids[n], Beat{From: a.S.Name, View: view})
		if a.S.View[n].Lost {
			a.S.Tried[n] = true
		}
	}
	for _, n := range a.watched() {
		if e := a.S.View[n]; !e.Lost && a.now-a.S.LastHeard[n] > timeOf(a.O.Timeout) {
			a.out.Cover(ruleDetect)
			a.apply(Entry{Agent: n, Gen: e.Gen + 1, Lost: true})
		}
	}
	a.out.SetTimer("beat", a.O.Beat)
}

// beat merges a neighbour's view into the agent's.
func (a *Agent) beat(m Beat) {
	a.hear(m.From)
	for _, e := range m.View {
		cur, known := a.S.View[e.Agent]
		if !known {
			continue
		}
		if e.Agent == a.S.Name {
			if e.Lost && e.Gen >= cur.Gen {
				// Others think this agent lost: it is not; a newer generation says so.
				a.out.Cover(ruleRefute)
				a.S.View[a.S.Name] = Entry{Agent: a.S.Name, Gen: e.Gen + 1}
			}
			continue
		}
		if e.Gen > cur.Gen {
			a.out.Cover(ruleSpread)
			a.apply(e)
		}
	}
}

// hear notes a message from n: a lost n is back.
func (a *Agent) hear(n string) {
	if a.O.Beat <= 0 || n == "" || n == a.S.Name {
		return
	}
	a.S.LastHeard[n] = a.now
	if e := a.S.View[n]; e.Lost {
		a.apply(Entry{Agent: n, Gen: e.Gen + 1})
	}
}

// apply installs a newer entry and acts on a change of n's connectivity.
func (a *Agent) apply(e Entry) {
	old := a.S.View[e.Agent]
	a.S.View[e.Agent] = e
	switch {
	case !old.Lost && e.Lost:
		// Lost: report it (the view spreads along the line), pause (send keeps
		// messages to it), and wait the grace period.
		a.out.Cover(ruleLost)
		a.S.LostSince[e.Agent] = a.now
		delete(a.S.Tried, e.Agent)
		a.out.Observe(ObsLost, ConnEv{Agent: a.S.Name, Peer: e.Agent})
		a.out.SetTimer(sim.TimerID("grace/"+e.Agent), a.O.Grace)
	case old.Lost && !e.Lost:
		// Back: within the grace period the paused work resumes; after it, the line
		// is re-arranged back and the cleanup it owes reaches it.
		if a.S.Gone[e.Agent] {
			a.out.Cover(ruleBack)
		} else {
			a.out.Cover(ruleResume)
		}
		a.out.Observe(ObsBack, ConnEv{Agent: a.S.Name, Peer: e.Agent})
		delete(a.S.LostSince, e.Agent)
		delete(a.S.Gone, e.Agent)
		a.out.CancelTimer(sim.TimerID("grace/" + e.Agent))
		a.S.LastHeard[e.Agent] = a.now
		a.flush(e.Agent)
	}
}

// graceOver: n stayed lost for the grace period. The line is re-arranged around it
// and the transactions that still need it are compensated (SG-4); they end only once
// it reconnects and settles its sections.
func (a *Agent) graceOver(n string) {
	if !a.S.View[n].Lost {
		return
	}
	a.out.Cover(ruleGrace)
	a.S.Gone[n] = true
	a.out.Observe(ObsGraceOver, GraceEv{Agent: a.S.Name, Peer: n, Tried: a.S.Tried[n]})
	for _, w := range a.watched() {
		if _, ok := a.S.LostSince[w]; !ok {
			a.S.LastHeard[w] = a.now // a new neighbour: give it a full timeout
		}
	}
	for _, id := range a.txIDs() {
		t := a.S.Txs[id]
		g := a.O.Graph(t.Start)
		if t.Outcome != Running || t.Aborted || !slices.Contains(g.Agents, n) {
			continue
		}
		// Only the initiator gives up on a lost agent's part: it is also the one that
		// decides a commit, so an abort and a commit never cross. A lost initiator
		// leaves the transaction paused here until it is back.
		initiator := t.ID.Init == a.S.Name
		if !initiator && t.ID.Init == n {
			a.out.Cover(ruleWaitInit)
		}
		needed := false
		for _, k := range g.Sections {
			if k.Agent == n && t.Known[k.String()] != Processed {
				needed = true
			}
		}
		if a.givesUp(t, n, initiator && needed) {
			a.out.Cover(ruleGiveUp)
			a.abort(t, "agent "+n+" lost past the grace period")
			a.notifyAbort(t)
			a.progress(t)
			a.persist(t)
		}
	}
}

func timeOf(d time.Duration) sim.Time { return sim.Time(d) }
