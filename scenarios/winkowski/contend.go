package wkscen

import (
	"time"

	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/protocols/winkowski"
	"github.com/simrun-dev/simrun/sim"
)

// Contention crashes (the swarm). The paper's faulty task "returns after a long time"
// (§1; choice F2: a durable agent resumes from stable storage), and what a restarted
// agent must carry over depends on what its tasks were doing: the absolute
// predecessors of a task in REGISTERING (WK-1), the ticket, unapplied forms and
// blocking requests of one competing (WK-3, WK-4). The generator's crashes fall
// anywhere in the horizon and last a sixth of it on average, while a swarm workload's
// tasks contend for a few hundred milliseconds from its start: most crashes hit an
// agent whose tasks are done, and most restarts come after the tasks a restarted task
// was waiting for have left. So on half of the seeds the swarm adds one or two
// crash/restart pairs of agents (some of them crash-sends) at times drawn within the
// workload's contention window, each down for 1–64ms (log-uniform: a few message
// delays up to a few alarm periods), so that tasks restart mid-protocol while the
// tasks they compete with are still there. Their draws come from streams of their
// own ("swarm-contend", "swarm-contend-send"): the rest of the plan is as without them.

// contentionWindow estimates when a workload's tasks contend: from the earliest job
// start to the latest start plus, per task of the longest job, its execution, its
// think time and about six message round trips of the game (registration, admission,
// request, order, winning, release) at the scenarios' ≤ 10ms latency.
func contentionWindow(cfg *winkowski.Config) (from, to time.Duration) {
	from = time.Duration(1<<63 - 1)
	for _, j := range cfg.Jobs {
		end := j.Start
		for _, t := range j.Tasks {
			end += t.Exec + j.Think + 6*20*time.Millisecond
		}
		from, to = min(from, j.Start), max(to, end)
	}
	if to <= from {
		return 0, 0
	}
	return from, to
}

// addContentionCrashes adds the swarm's contention crashes to plan (see above): for
// half of the seeds, one or two crash/restart pairs of agents within the contention
// window and before horizon, each skipped if it would overlap a crash of the same
// agent or take more than maxDown agents down at once.
func addContentionCrashes(seed uint64, plan faults.Plan, agents []string, maxDown int, horizon time.Duration, cfg *winkowski.Config) faults.Plan {
	r := sim.Stream(seed, "swarm-contend")
	if r.IntN(2) == 0 {
		return plan
	}
	from, to := contentionWindow(cfg)
	to = min(to, horizon-65*time.Millisecond)
	if to <= from {
		return plan
	}
	sends := sim.Stream(seed, "swarm-contend-send")
	n := 1 + r.IntN(2)
	for range n {
		a := agents[r.IntN(len(agents))]
		at := from + time.Duration(r.Int64Range(0, int64(to-from)))
		down := time.Millisecond << r.IntN(7) // 1ms … 64ms
		down += time.Duration(r.Int64Range(0, int64(down)))
		end := at + down
		if overlapsDown(plan, a, agents, maxDown, at, end) {
			continue
		}
		crash := faults.Event{At: faults.Duration(at), Kind: "crash", Node: a}
		if sends.IntN(2) == 0 && down >= 2*time.Millisecond {
			// A crash-send: the agent stops part-way through the sends of its first
			// call in the first half of its down time (or crashes at its end).
			crash.Kind, crash.For = "crash-send", faults.Duration(down/2)
		}
		plan = insertEvent(plan, crash)
		plan = insertEvent(plan, faults.Event{At: faults.Duration(end), Kind: "restart", Node: a})
	}
	return plan
}

// overlapsDown reports whether taking agent a down over [at, end) would overlap a
// down interval of a in plan (with a 1ms gap, as the generator keeps), or leave more
// than maxDown of the agents down at once.
func overlapsDown(plan faults.Plan, a string, agents []string, maxDown int, at, end time.Duration) bool {
	type interval struct{ from, to time.Duration }
	downs := map[string][]interval{}
	open := map[string]time.Duration{}
	for _, e := range plan.Events {
		switch {
		case e.IsCrash():
			if _, down := open[e.Node]; !down {
				open[e.Node] = time.Duration(e.At)
			}
		case e.Kind == "restart":
			if from, down := open[e.Node]; down {
				downs[e.Node] = append(downs[e.Node], interval{from, time.Duration(e.At)})
				delete(open, e.Node)
			}
		}
	}
	for n, from := range open {
		downs[n] = append(downs[n], interval{from, time.Duration(1 << 62)}) // for good
	}
	others := 0
	for _, n := range agents {
		for _, d := range downs[n] {
			if d.from < end+time.Millisecond && at < d.to+time.Millisecond {
				if n == a {
					return true
				}
				others++
				break
			}
		}
	}
	return others+1 > maxDown
}
