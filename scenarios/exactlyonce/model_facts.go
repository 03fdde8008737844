package eoscen

import (
	"fmt"
	"reflect"
	"sync"

	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// storeFacts is what the invariants EO-I1 and EO-4 read of one node's stable storage:
// whether it holds a live (Ready or Committed) orchestrator record of stage 0 and of
// stage 1, whether its stored agents are at their stages' hops, whether it stores an
// agent at all (a stage record or a prepared Put) and whether it holds votes.
type storeFacts struct {
	live          [3]bool
	atHop         bool
	agents, votes bool
	// Per stage (the model's one agent, hops 0-2): the live orchestrator's Tid, the
	// stage's record when it is Active here, and the OrchSet.
	orchTid  [3]eo.Tid
	active   [3]*eo.StageRecord
	orchSets [3][]eo.VoteEntry
}

// orchKeys are the orchestrator records' keys of the model's stages.
var orchKeys = [3]string{eo.OrchKey(eo.StageID{Agent: 1, Hop: 0}), eo.OrchKey(eo.StageID{Agent: 1, Hop: 1}), eo.OrchKey(eo.StageID{Agent: 1, Hop: 2})}

func factsOf(st *sim.Storage) storeFacts {
	var f storeFacts
	for k, key := range orchKeys {
		f.live[k] = eo.OrchStateAt(st, key) != eo.OrchUnknown
	}
	f.atHop = eo.StoredAtHop(st)
	for _, it := range eo.Inspect(st) {
		h := it.Stage.Hop
		switch it.Kind {
		case eo.StableQueue:
			f.agents = true
			if rec, ok := eo.ActiveRecord(st, it.Stage); ok && h < 3 {
				f.active[h] = &rec
			}
		case eo.StablePrepared:
			f.agents = true
		case eo.StableOrchSet:
			f.votes = f.votes || len(it.Votes) > 0
			if h < 3 {
				f.orchSets[h] = it.Votes
			}
		case eo.StableOrch:
			if h < 3 {
				f.orchTid[h] = it.OrchTid
			}
		}
	}
	return f
}

// factCache remembers storeFacts per storage, for one model instance. The checker
// stores each distinct storage once and never modifies it (states share it), so a
// storage's address names its contents: the invariants, evaluated on every state,
// look each storage up instead of searching it.
type factCache struct{ m sync.Map } // *sim.Storage → storeFacts

func newStoreFacts() *factCache { return &factCache{} }

// verifyFacts makes every lookup recompute the facts and compare (tests).
var verifyFacts bool

func (c *factCache) of(st *sim.Storage) storeFacts {
	if v, ok := c.m.Load(st); ok {
		f := v.(storeFacts)
		if verifyFacts && !reflect.DeepEqual(f, factsOf(st)) {
			panic(fmt.Sprintf("cached storage facts %+v, recomputed %+v", f, factsOf(st)))
		}
		return f
	}
	f := factsOf(st)
	c.m.Store(st, f)
	return f
}
