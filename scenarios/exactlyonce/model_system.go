package eoscen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/model"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// Ghost is the model's monitor of what happened (folded over observations).
type Ghost struct {
	Commits  [3]uint8 // commits per stage
	OutOrder bool     // a stage committed before the one before it
	Returns  [3]uint8 // reservations committed, per stage
	Done     bool
	CondYes  bool
	// Put[h] is the Tid of stage h's committed transaction, the only one whose Puts
	// (to stage h+1's nodes) may commit; Torn records a participant that committed a
	// Put of another transaction, or aborted a Put of Put[h] after its commit
	// (EO-2/EO-3). With one stage 0 transaction per node (attempts=1), Put[0] adds no
	// state.
	Put  [2]eo.Tid
	Torn bool
}

func foldGhost(g any, o sim.Observation) any {
	x := g.(Ghost)
	switch v := o.Value.(type) {
	case eo.PutChange:
		h := v.Stage.Hop - 1 // the stage whose transaction Puts
		switch v.State {
		case eo.PutCommitted:
			x.Torn = x.Torn || x.Commits[h] == 0 || v.Tid != x.Put[h]
		case eo.PutAborted:
			x.Torn = x.Torn || (x.Commits[h] > 0 && v.Tid == x.Put[h])
		}
	case eo.Committed:
		if v.Stage.Hop > 0 && x.Commits[v.Stage.Hop-1] == 0 {
			x.OutOrder = true
		}
		if !v.Last {
			x.Put[v.Stage.Hop] = v.Tid
		}
		x.Commits[v.Stage.Hop]++
	case eo.ResReturn:
		x.Returns[v.Hop]++
	case eo.Done:
		x.Done = true
	case eo.CondYesGiven:
		x.CondYes = true
	}
	if x == g.(Ghost) {
		return g // unchanged: no new boxed value
	}
	return x
}

// ModelSystem builds the model's actor system.
func ModelSystem(o ModelOptions) (*model.Actors, error) {
	first := 1 // stage 1's first node
	if o.HomeIsWorker {
		first = 0
	}
	n := first + 1 + o.Observers
	names := systemNames(n)
	stage1 := make([]string, 0, n-first)
	for i := first; i < n; i++ {
		stage1 = append(stage1, names[i])
	}
	pool := ""
	if o.Pool {
		pool = "seats"
	}
	route := "n0 | " + strings.Join(stage1, ",")
	if o.Then != "" {
		if !slices.Contains(names, o.Then) {
			return nil, fmt.Errorf("parameter then: unknown node %q (nodes: %s)", o.Then, strings.Join(names, ", "))
		}
		route += " | " + o.Then
	}
	it, err := eo.ParseItinerary(route, names, pool)
	if err != nil {
		return nil, err
	}
	var selectors []sim.NodeID
	for _, c := range o.Selectors {
		i := slices.Index(names, c)
		if i < 0 {
			return nil, fmt.Errorf("parameter selectors: unknown node %q (nodes: %s)", c, strings.Join(names, ", "))
		}
		selectors = append(selectors, sim.NodeID(i))
	}
	cfg := &eo.Config{
		Names: names, MajoritySelect: o.MajoritySelect, Capacity: 1,
		Timing: eo.DefaultTiming(), MaxAttempts: o.Attempts, Resends: o.Resends, Policy: o.Policy,
		AbstractSelection: o.AbstractSelection, Selectors: selectors, NoRecoveryTimers: o.NoRecoveryTimers,
	}
	if o.Selectors != nil && selectors == nil {
		cfg.Selectors = []sim.NodeID{} // none may select itself
	}
	nodes := eo.System(cfg)
	if pl := o.plant; pl != nil {
		if pl.policy != nil {
			pl.policy(&cfg.Policy)
		}
		if pl.wrap != nil {
			for i := range nodes {
				build := nodes[i].New
				nodes[i].New = func() sim.Node { return pl.wrap(build()) }
			}
		}
	}
	facts := newStoreFacts()
	ghost := func(s *model.State) Ghost { return model.GhostAs[Ghost](s) }
	anyNode := func(s *model.State, f func(i sim.NodeID) bool) bool {
		for i := 0; i < s.NumNodes(); i++ {
			if f(sim.NodeID(i)) {
				return true
			}
		}
		return false
	}
	props := []model.Property[*model.State]{
		model.Always(PropP1, func(s *model.State) bool {
			g := ghost(s)
			return g.Commits[0] <= 1 && g.Commits[1] <= 1 && g.Commits[2] <= 1 && !g.OutOrder
		}).When(func(s *model.State) bool { g := ghost(s); return g.Commits[0]+g.Commits[1]+g.Commits[2] > 0 }),
		model.Always(PropI1, func(s *model.State) bool {
			var live [3]int
			for i := 0; i < s.NumNodes(); i++ {
				f := facts.of(s.Stable(sim.NodeID(i)))
				for k, l := range f.live {
					if l {
						live[k]++
					}
				}
			}
			return live[0] <= 1 && live[1] <= 1 && live[2] <= 1
		}).When(func(s *model.State) bool {
			return anyNode(s, func(i sim.NodeID) bool { f := facts.of(s.Stable(i)); return f.live[0] || f.live[1] || f.live[2] })
		}),
		model.Always(PropA, func(s *model.State) bool { return !ghost(s).Torn }).
			When(func(s *model.State) bool { return ghost(s).Commits[0] > 0 }),
		// EO-2/EO-6: a node coordinates a stage transaction only for a stage Active in
		// its input queue; a stage forgotten (committed elsewhere: FORGET, GIVE_UP)
		// leaves no transaction running.
		model.Always(PropRunning, func(s *model.State) bool {
			return !anyNode(s, func(i sim.NodeID) bool {
				n, ok := s.Node(i).(inspector)
				if !ok {
					return false
				}
				_, orphan := n.OrphanTransaction()
				return orphan
			})
		}).When(func(s *model.State) bool {
			return anyNode(s, func(i sim.NodeID) bool { n, ok := s.Node(i).(inspector); return ok && n.Coordinating() > 0 })
		}),
		// EO-4: the agent a stage record (or a prepared Put) holds is at that stage's
		// hop, on every node, crashed ones included.
		model.Always(PropStored, func(s *model.State) bool {
			return !anyNode(s, func(i sim.NodeID) bool { return !facts.of(s.Stable(i)).atHop })
		}).When(func(s *model.State) bool {
			return anyNode(s, func(i sim.NodeID) bool { return facts.of(s.Stable(i)).agents })
		}),
		// EO-P5 at the model's end states: once the agent is done and nothing is left
		// to happen (no message in flight, no timer, every node up), no node keeps a
		// record of it. Only crash-free paths are judged: without periodic re-sending
		// (resends=-1) a message lost to a crash is never repeated, so a record may
		// legitimately wait for good; the witness below shows such end states exist.
		model.Always(PropP5, func(s *model.State) bool { return !endsDone(s) || len(leftovers(s)) == 0 }).When(endsDone),
		// EO-5: an orchestrator decides as soon as its votes do — a COND_YES counts
		// as YES once its whole set is in YesVotes, Ready with a majority of YES that
		// includes its own voter's, rm_no once at least half of the voters (or its own
		// voter) said NO — so no transaction still votes with something already
		// decided (an even stage's tie included). Its own computation, not the
		// protocol's CondYesHolds and CountVotes.
		model.Always(PropDecide, func(s *model.State) bool {
			return !anyNode(s, func(i sim.NodeID) bool {
				n, ok := s.Node(i).(inspector)
				return ok && slices.ContainsFunc(n.VotingNow(), func(v eo.Voting) bool { return decided(v, i) })
			})
		}).When(func(s *model.State) bool {
			return anyNode(s, func(i sim.NodeID) bool { n, ok := s.Node(i).(inspector); return ok && len(n.VotingNow()) > 0 })
		}),
		// EO-7: a voter holding votes has its next INQUIRY coming (the timer is
		// pending) until FORGET or every UN_VOTE, unless Config.Resends has no
		// re-send round left for it.
		// EO-5: an orchestrator Ready (or Committed) with transaction T has a majority
		// of the stage's voters behind it, its own included, as their stable OrchSets
		// show while every node still holds the stage (before any FORGET): a voter
		// supports T when its OrchSet holds (H, T) and every entry of lower priority
		// than H is itself a supporter (a COND_YES(S) counts once all of S said YES;
		// support is the least set closed under that rule).
		model.Always(PropSupport, func(s *model.State) bool {
			for _, c := range liveOrchs(s, facts) {
				if !c.judged {
					continue
				}
				if sup := support(s, facts, c); len(sup) < c.rec.Majority() || !slices.Contains(sup, c.orch) {
					return false
				}
			}
			return true
		}).When(func(s *model.State) bool {
			return slices.ContainsFunc(liveOrchs(s, facts), func(c liveOrch) bool { return c.judged })
		}),
		model.Sometimes(WitnessP5, endsDone),
		model.Sometimes(WitnessDone, func(s *model.State) bool { return ghost(s).Done }),
	}
	if !o.NoRecoveryTimers {
		// EO-7: a voter holding votes has its next INQUIRY coming (the timer is
		// pending) until FORGET or every UN_VOTE, unless Config.Resends has no
		// re-send round left for it.
		props = append(props, model.Always(PropInquiryDue, func(s *model.State) bool {
			return !anyNode(s, func(i sim.NodeID) bool { return inquiryOverdue(s, facts, i) })
		}).When(func(s *model.State) bool {
			return anyNode(s, func(i sim.NodeID) bool { return s.Up(i) && facts.of(s.Stable(i)).votes })
		}))
	}
	if condYesPossible(o) {
		props = append(props,
			// EO-5: a voter counted YES by an orchestrator had every orchestrator of
			// lower priority it holds a vote for vote YES too: a COND_YES(S) becomes a YES
			// only once all of S is in YesVotes. (After its vote for H, a voter answers NO
			// to every orchestrator below H, so the entries below H in its OrchSet are the
			// S of its COND_YES, or what UN_VOTE left of it.) A Ready orchestrator adds to
			// YesVotes the voters that INQUIRY (EO-7) without counting them; those still
			// hold their COND_YES in CondYesVotes, unless it was lost to a crash: Ready
			// orchestrators are judged on crash-free paths, on the voters not in
			// CondYesVotes.
			model.Always(PropCondYes, func(s *model.State) bool {
				crashFree := s.Faults().Crashes == 0
				return !anyNode(s, func(h sim.NodeID) bool {
					n, ok := s.Node(h).(inspector)
					if !ok {
						return false
					}
					for _, v := range n.Tallies() {
						if v.Ready && !crashFree {
							continue
						}
						for _, y := range v.Yes {
							if y == h || slices.ContainsFunc(v.Cond, func(c eo.CondVote) bool { return c.Voter == y }) {
								continue
							}
							for _, e := range facts.of(s.Stable(y)).orchSets[v.Stage.Hop] {
								if e.Orch != h && v.Record.Higher(h, e.Orch) && !slices.Contains(v.Yes, e.Orch) {
									return true
								}
							}
						}
					}
					return false
				})
			}).When(func(s *model.State) bool { return ghost(s).CondYes }), // a COND_YES was given
			model.Sometimes(WitnessCondYes, func(s *model.State) bool { return ghost(s).CondYes }))
	}
	if o.Pool {
		props = append(props, model.Always(PropP2, func(s *model.State) bool { r := ghost(s).Returns; return r[1] <= 1 && r[2] <= 1 }).
			When(func(s *model.State) bool { r := ghost(s).Returns; return r[1]+r[2] > 0 }))
	}
	var crashable []sim.NodeID
	for _, c := range o.Crashable {
		i := slices.Index(names, c)
		if i < 0 {
			return nil, fmt.Errorf("parameter crashable: unknown node %q (nodes: %s)", c, strings.Join(names, ", "))
		}
		crashable = append(crashable, sim.NodeID(i))
	}
	limit := o.InFlight
	if limit == 0 {
		limit = AutoInFlight(o.Observers, o.Then != "")
	}
	return &model.Actors{
		Name:       "exactlyonce",
		Nodes:      nodes,
		Inject:     []model.Injection{{To: 0, Msg: eo.Launch{Agent: eo.Agent{ID: 1, Itinerary: it}}}},
		Crashes:    model.Crashes{Budget: o.Crashes, Nodes: crashable, MidSend: o.MidSend},
		Ghost:      model.Ghost{Init: Ghost{}, Fold: foldGhost},
		Properties: props,
		Boundary:   func(s *model.State) bool { return s.NumInFlight() <= limit },
		// The nodes draw random bits only for retry jitter (a timer's duration), which
		// untimed mode does not keep: their calls can be memoized.
		Memoize: true,
	}, nil
}
