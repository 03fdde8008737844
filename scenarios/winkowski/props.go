package wkscen

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/protocols/winkowski"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// The properties of every run (paper §1, §4; digest WK-P1…P4):
//
//	WK-P1/exclusion       no resource is used by two tasks at once (tasks' and
//	                      managers' views)
//	WK-P1/linearizable    every pool's allocate/release history is linearizable
//	                      against a pool of distinct units (checker.Pool)
//	WK-P1/semaphore       ... and against a counting semaphore of the pool's
//	                      capacity (checker.Semaphore)
//	WK-P2/all-or-nothing  a task uses its resources only while it holds all of them
//	WK-3/leave            a task leaves the game only after every pool of its
//	                      interest freed its resource (§2/§3, releasing; the game
//	                      only: a baseline's task leaves once its releases are sent)
//	WK-booking            every winning form finds a free resource (the game only)
//	WK-agent-state,       the agent monitor's rules (the game only; monitor.go):
//	WK-T1/ticket,         the agent's DistributedTickets/Entering/Competing against
//	WK-1/predecessors,    its tasks (§3), the ticket given (§3, choices T1/E1), the
//	WK-3/regress          absolute predecessors (§3), and withdrawing exactly when
//	                      (p1)/(p3) fails by the task's knowledge (§2/§3)
//	WK-1/precedence,      ... and, the simulator only (restartmon.go), across calls:
//	F2/agent-restart      no task takes a ticket ranking ahead of an absolute
//	                      predecessor it recorded (the monitor's record, not the
//	                      task's) while that one still competes (§2), and a durable
//	                      agent restarts with every stable field of its tasks as
//	                      the crash left them (choice F2)
//	WK-1/enter,           ... and the task's decisions (decisions.go): the end of the
//	WK-3/progress,        entering phase (N1, E1), ordering and winning, the alarm
//	WK-4/alarm,           clock and the blocking requests (G1), advancing forms (A1),
//	WK-4/advance          each evaluated afresh on the task's knowledge
//	WK-2/manager          the manager monitor (hostmon.go): every action of a manager
//	                      against the paper's actions of resource managers (§3), its
//	                      broadcast, and K2's answers
//	WK-P3/starvation      every task completes within the bound after max(its
//	                      creation, the faults settling) — except tasks that
//	                      depend (transitively share pools) on a failed task
//	WK-P4/locality        the same for every task that does not share a pool with a
//	                      failed task
//
// A failed task is one of an agent the plan crashes for good, alive at the crash
// (created, not yet done). A lost pool is one whose manager host the plan crashes for
// good (outside the paper's model, where managers stay): tasks interested in it may
// never finish, and so may the tasks sharing a pool with those (a task waiting for its
// booking at the lost pool may hold resources elsewhere); both are exempted from
// WK-P3/WK-P4 and measured by the winkowski/locality experiment. The later tasks of a
// job are exempted past an exempted task only if that task never completed (they are
// then never created); once it completed, they are created, and checked, like any
// other task.
//
// WK-P4's list contains WK-P3's (a task sharing a pool with a failed one is in its
// conflict component), so in a run with a task failed for good the component rule
// may leave WK-P3 little or nothing to check: WK-P3 is the property of the runs
// without failures for good, WK-P4 of those with them. Metrics.Liveness reports how
// many tasks each checked, so that an empty check is visible.
func (r *run) properties() []checker.Property {
	s := r.sys
	props := []checker.Property{
		{Name: "WK-P1/exclusion", Class: checker.Safety, Check: func(cr *checker.Run) error {
			if err := winkowski.CheckExclusion(s, cr.Result.History); err != nil {
				return err
			}
			cr.Count(count(cr, winkowski.KindAccess, winkowski.KindBook), 0)
			return nil
		}},
		r.linearizable("WK-P1/linearizable", poolModel(s), false),
		r.linearizable("WK-P1/semaphore", semModel(s), true),
		{Name: "WK-P2/all-or-nothing", Class: checker.Safety, Check: func(cr *checker.Run) error {
			if err := winkowski.CheckAllOrNothing(s, cr.Result.History); err != nil {
				return err
			}
			cr.Count(count(cr, winkowski.KindAccess), 0)
			return nil
		}},
	}
	if r.proto == game {
		props = append(props, checker.Property{Name: "WK-3/leave", Class: checker.Safety, Check: func(cr *checker.Run) error {
			n, err := checkLeave(s, cr.Result.History)
			if err == nil {
				cr.Count(n, 0)
			}
			return err
		}})
		props = append(props, checker.Property{Name: "WK-booking", Class: checker.Safety, Check: func(cr *checker.Run) error {
			if err := winkowski.CheckBookings(s, cr.Result.History); err != nil {
				return err
			}
			cr.Count(count(cr, winkowski.KindBook), 0)
			return nil
		}})
		props = append(props, ruleProperties(r.tally)...)
	}
	props = append(props,
		r.bounded("WK-P3/starvation", false),
		r.bounded("WK-P4/locality", true),
	)
	return props
}

// count returns how many observations of the kinds the run recorded.
func count(cr *checker.Run, kinds ...string) int {
	n := 0
	for _, o := range cr.Result.History {
		if slices.Contains(kinds, o.Kind) {
			n++
		}
	}
	return n
}

// maxPending bounds the calls that never returned per pool that a linearizability
// check takes on: each may take effect anywhere after its call, and porcupine's search
// grows exponentially in them (a broken variant that strands tasks in WINNING made one
// check run into porcupine's 30 s wall-clock timeout). A correct run strands only the
// tasks of agents crashed for good — a few — and a run with more fails WK-P3/WK-P4
// anyway; mutual exclusion is still checked directly (WK-P1/exclusion).
const maxPending = 8

// linearizable is WK-P1's linearizability check of every pool's allocate/release
// history (sem: against a counting semaphore), saying how many operations it judged;
// a pool with more than maxPending pending calls is left out (exempt).
func (r *run) linearizable(name string, model func(key string) porcupine.Model, sem bool) checker.Property {
	judged, exempt := 0, 0
	p := checker.LinearizableKeyed(name, model, func(cr *checker.Run) ([]checker.Operation, error) {
		ops := r.ops(cr, sem)
		pending := map[string]int{}
		for _, o := range ops {
			if o.Pending {
				pending[o.Key]++
			}
		}
		kept := ops[:0:0]
		for _, o := range ops {
			if pending[o.Key] > maxPending {
				exempt++
				continue
			}
			kept = append(kept, o)
		}
		judged = len(kept)
		return kept, nil
	}, 0)
	check := p.Check
	p.Check = func(cr *checker.Run) error {
		judged, exempt = 0, 0
		if err := check(cr); err != nil {
			return err
		}
		cr.Count(judged, exempt)
		return nil
	}
	return p
}

// checkLeave is WK-3's last step (§2, §3 "receiving a message ... in RELEASING"): a
// task leaves the game only when it has learned that every pool of its interest
// released its resource — so by then every manager freed it. It returns how many
// departures it checked.
func checkLeave(s *winkowski.System, h []sim.Observation) (int, error) {
	freed := map[winkowski.TaskID][]winkowski.PoolID{}
	n := 0
	for _, o := range h {
		switch v := o.Value.(type) {
		case winkowski.Freed:
			freed[v.Task] = append(freed[v.Task], v.Pool)
		case winkowski.Done:
			n++
			for _, p := range s.Task(v.Task).Pools {
				if !slices.Contains(freed[v.Task], p) {
					return n, fmt.Errorf("task %d left the game at %v while %s has not freed its resource", v.Task, o.Time, s.PoolName(p))
				}
			}
		}
	}
	return n, nil
}

// ---- linearizability ----

func poolKey(p winkowski.PoolID) string { return strconv.Itoa(int(p)) }

func unitName(u winkowski.Unit) string { return "r" + strconv.Itoa(int(u)) }

func holder(t winkowski.TaskID) string { return "T" + strconv.Itoa(int(t)) }

// poolModel returns, for a pool's partition key, checker.Pool over its units.
func poolModel(s *winkowski.System) func(key string) porcupine.Model {
	return func(key string) porcupine.Model {
		p, _ := strconv.Atoi(key)
		units := make([]string, s.Pools[p].Capacity)
		for u := range units {
			units[u] = unitName(winkowski.Unit(u))
		}
		return checker.Pool(units, checker.StrictRefusals)
	}
}

// semModel returns, for a pool's partition key, a counting semaphore of its capacity.
func semModel(s *winkowski.System) func(key string) porcupine.Model {
	return func(key string) porcupine.Model {
		p, _ := strconv.Atoi(key)
		return checker.Semaphore(s.Pools[p].Capacity, checker.StrictRefusals)
	}
}

func (r *run) ops(cr *checker.Run, sem bool) []checker.Operation {
	var ops []checker.Operation
	for _, o := range winkowski.PoolOps(r.sys, cr.Result.History) {
		op := checker.Operation{Key: poolKey(o.Pool), Client: int(o.Task), Call: o.Call, Return: o.Return, Pending: o.Pending, Output: true}
		switch {
		case sem && o.Release:
			op.Input = checker.SemInput{Op: checker.SemRelease, Holder: holder(o.Task)}
		case sem:
			op.Input = checker.SemInput{Op: checker.SemAcquire, Holder: holder(o.Task)}
		case o.Release:
			op.Input = checker.PoolInput{Op: checker.PoolRelease, Holder: holder(o.Task), Unit: unitName(o.Unit)}
		default:
			op.Input = checker.PoolInput{Op: checker.PoolAllocate, Holder: holder(o.Task)}
			op.Output = unitName(o.Unit)
		}
		ops = append(ops, op)
	}
	return ops
}

// ---- liveness ----

// failures describes what the plan broke for good in a run.
type failures struct {
	// faulty: tasks of permanently crashed agents alive at the crash.
	faulty []winkowski.TaskID
	// downAgent: agents crashed for good.
	downAgent map[int]bool
	// lostPool: pools whose manager host was crashed for good; lostAt the crash time.
	lostPool map[winkowski.PoolID]sim.Time
}

// crashTimes returns, for every node the plan leaves down, the time of its last crash
// (of a crash-send, the end of its window).
func (r *run) crashTimes(down []string) map[string]sim.Time {
	at := map[string]sim.Time{}
	for _, e := range r.plan.Events {
		if e.IsCrash() && slices.Contains(down, e.Node) {
			// A crash-send crashes the node at its last call in the window: every task
			// alive then is alive at the window's end (a down agent observes nothing).
			at[e.Node] = sim.Time(e.At) + sim.Time(e.For)
		}
	}
	return at
}

func (r *run) failures(cr *checker.Run) failures {
	f := failures{downAgent: map[int]bool{}, lostPool: map[winkowski.PoolID]sim.Time{}}
	at := r.crashTimes(cr.Down)
	agentCrash := map[int]sim.Time{}
	for _, d := range cr.Down {
		if i, ok := r.agentOf[d]; ok {
			f.downAgent[i] = true
			agentCrash[i] = at[d]
		}
		for _, c := range r.hostOf[d] {
			for _, p := range r.sys.HostPools[c] {
				f.lostPool[p] = at[d]
			}
		}
	}
	for _, rec := range winkowski.Records(cr.Result.History) {
		a := r.sys.Task(rec.Task).Agent
		if tc, ok := agentCrash[a]; ok && rec.Created <= tc && (!rec.HasDone || rec.Done > tc) {
			f.faulty = append(f.faulty, rec.Task)
		}
	}
	return f
}

// items lists the tasks a liveness property requires: with direct, WK-P4's (every task
// of an agent that stays up, except those sharing a pool with a failed task); without,
// WK-P3's (except those in the same conflict component as a failed task).
//
// A task the run ended (at its horizon) before its deadline (max(creation, settled) +
// bound) without completing is not yet due: it is left out and counted in notDue
// (exempt).
func (r *run) items(cr *checker.Run, direct bool) (items []scenarios.Item, notDue int) {
	s := r.sys
	f := r.failures(cr)
	recs := winkowski.Records(cr.Result.History)
	byID := map[winkowski.TaskID]*winkowski.TaskRecord{}
	for i := range recs {
		byID[recs[i].Task] = &recs[i]
	}
	// Seeds of the exemption: failed tasks, and tasks interested in a lost pool that
	// were alive when (or created after) it was lost.
	seeds := slices.Clone(f.faulty)
	var lostUsers []winkowski.TaskID
	for _, t := range s.Tasks {
		rec := byID[t.ID]
		if rec == nil || f.downAgent[t.Agent] {
			continue
		}
		for _, p := range t.Pools {
			if tl, ok := f.lostPool[p]; ok && (!rec.HasDone || rec.Done > tl) {
				lostUsers = append(lostUsers, t.ID)
				break
			}
		}
	}
	exempt := map[winkowski.TaskID]bool{}
	for _, t := range lostUsers {
		exempt[t] = true
	}
	seeds = append(seeds, lostUsers...)
	if direct {
		for _, t := range s.Tasks {
			exempt[t.ID] = exempt[t.ID] || slices.ContainsFunc(seeds, func(x winkowski.TaskID) bool { return s.Shares(t.ID, x) })
		}
	} else {
		// Conflict components over the whole workload.
		comp := components(s)
		bad := map[int]bool{}
		for _, x := range seeds {
			bad[comp[x]] = true
		}
		for _, t := range s.Tasks {
			if bad[comp[t.ID]] {
				exempt[t.ID] = true
			}
		}
	}
	for _, job := range s.JobTasks {
		blocked := false // an earlier task of the job never completed: the rest are never created
		var prevDone sim.Time
		for _, id := range job {
			t := s.Task(id)
			if f.downAgent[t.Agent] {
				break
			}
			if blocked {
				continue
			}
			rec := byID[id]
			if exempt[id] {
				blocked = rec == nil || !rec.HasDone
				continue
			}
			name := fmt.Sprintf("task %d (%s, job %d #%d)", id, winkowski.AgentName(t.Agent), t.Job, t.Index+1)
			it := scenarios.Item{Name: name}
			if rec != nil {
				it.Start = rec.Created
				it.Done, it.Completed = rec.Done, rec.HasDone
				switch {
				case rec.HasDone:
				case rec.Status != 0:
					it.Name += " in status " + rec.Status.String()
				default:
					it.Name += " not done" // the baselines record no statuses
				}
			} else {
				it.Name += " never created"
				it.Start = prevDone // due from its predecessor's completion at the latest
			}
			prevDone = it.Done
			if !it.Completed && cr.Outcome == sim.Horizon && max(it.Start, cr.Settled).Add(r.bound) > cr.Time {
				// Not yet due: the run reached its planned end before the task's bound
				// ran out (a task created late in a long workload). WK-P3/WK-P4 cannot
				// be violated by it yet; nor by the job's later tasks. (A run that
				// stopped or went quiet judges every task: nothing more would happen.)
				notDue++
				blocked = true
				continue
			}
			items = append(items, it)
		}
	}
	return items, notDue
}

// bounded is WK-P3 (direct false) or WK-P4 (direct true) as a bounded-liveness
// property (scenarios.Bounded) that also counts the tasks not yet due as exempt.
func (r *run) bounded(name string, direct bool) checker.Property {
	p := scenarios.Bounded(name, r.bound, func(cr *checker.Run) []scenarios.Item {
		items, _ := r.items(cr, direct)
		return items
	})
	check := p.Check
	p.Check = func(cr *checker.Run) error {
		err := check(cr)
		if err == nil {
			items, n := r.items(cr, direct)
			cr.Count(len(items), n)
		}
		return err
	}
	return p
}

// components labels every task with its conflict component (tasks sharing a pool,
// transitively).
func components(s *winkowski.System) map[winkowski.TaskID]int {
	parent := make([]int, len(s.Pools))
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, t := range s.Tasks {
		for _, p := range t.Pools[1:] {
			parent[find(int(p))] = find(int(t.Pools[0]))
		}
	}
	comp := map[winkowski.TaskID]int{}
	for _, t := range s.Tasks {
		comp[t.ID] = find(int(t.Pools[0]))
	}
	return comp
}
