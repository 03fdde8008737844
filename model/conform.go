package model

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/simrun-dev/simrun/sim"
)

// FollowTrace checks that a simulator trace (the records of a sim.Kernel run of the same
// nodes) is a path of the actor system: the start records are the checker's initial
// state, and every later record is a transition the checker explores from the state the
// previous ones led to, with the same effects (stable writes, timers, sends and whether
// they were lost, observations). It returns the number of records followed, and an
// error naming the first record no transition matches.
//
// It is the cross-check that the two engines agree on the semantics (crashes, restarts,
// losses at send time, timers). Records are compared without their times, local clock
// readings and scheduled delivery times (the checker has no latencies; in untimed mode
// its clocks read 0), so the nodes must not let clock readings or Input.Rand reach their
// effects. The simulator's "lost" records for messages that were in flight to a node
// when it crashed are skipped (the checker drops those messages at the crash), and so
// are its records of faults that changed nothing (a crash of a node already down, a
// restart of one already up).
func FollowTrace(a *Actors, recs []sim.TraceRecord) (int, error) {
	r, err := a.compile()
	if err != nil {
		return 0, err
	}
	c := r.(*checker[*State])
	x := c.sp.record.(*actorSys)
	var init []sim.TraceRecord
	s := x.initial(&init)
	if len(recs) < len(init) {
		return 0, fmt.Errorf("model: trace has %d records, the system starts with %d", len(recs), len(init))
	}
	for i := range init {
		if !sameRecord(&init[i], &recs[i]) {
			return i, fmt.Errorf("model: start record %d differs: trace %s, model %s", i, summarize(&recs[i]), summarize(&init[i]))
		}
	}
	n := len(init)
	for i := len(init); i < len(recs); i++ {
		rec := &recs[i]
		skip := rec.Ev == "lost" && rec.From != "env" && (rec.Why == "receiver down" || rec.Why == "receiver restarted")
		skip = skip || (rec.Ev == "crash" && rec.Why == "already down") || (rec.Ev == "restart" && rec.Why == "already up")
		if skip {
			n++
			continue
		}
		acts, next := c.successors(s)
		match := -1
		for k := range next {
			mr := x.stepRecord(s, acts[k], nil)
			if sameRecord(&mr, rec) {
				match = k
				break
			}
		}
		if match < 0 {
			return n, fmt.Errorf("model: trace record %d (%s) is not a transition of the model (%d enabled)", rec.I, summarize(rec), len(next))
		}
		s = next[match]
		n++
	}
	return n, nil
}

// sameRecord compares two records without times, clock readings, delivery times and
// explanations (the simulator and the checker word "why" differently for faults).
func sameRecord(a, b *sim.TraceRecord) bool {
	norm := func(r *sim.TraceRecord) []byte {
		c := *r
		c.I, c.T, c.Local = 0, 0, nil
		if c.Ev != "lost" {
			c.Why = ""
		}
		c.Out = make([]sim.TraceEffect, len(r.Out))
		for i, e := range r.Out {
			e.At = 0
			c.Out[i] = e
		}
		if len(c.Out) == 0 {
			c.Out = nil
		}
		b, err := json.Marshal(&c)
		if err != nil {
			return nil
		}
		return b
	}
	x, y := norm(a), norm(b)
	return x != nil && bytes.Equal(x, y)
}
