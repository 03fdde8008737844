package winkowski

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// The checks below read a run's observations only (never a running node). They are
// shared by the game and both baselines, which record the same observation kinds, and
// are wrapped into checker properties by the scenarios package.

// CheckExclusion is WK-P1, mutual exclusion: a resource is never used by two tasks
// at once. Two views are checked: the tasks' (no unit of a pool is inside the access
// interval of two tasks, and units are real units of their pool) and the managers'
// (no unit is booked for a task while it is booked for another).
func CheckExclusion(s *System, h []sim.Observation) error {
	using := map[PoolUnit]TaskID{}
	booked := map[PoolUnit]TaskID{}
	since := map[PoolUnit]sim.Time{}
	units := map[TaskID][]PoolUnit{}
	for _, o := range h {
		switch v := o.Value.(type) {
		case Access:
			for _, pu := range v.Units {
				if pu.Pool < 0 || int(pu.Pool) >= len(s.Pools) || pu.Unit < 0 || int(pu.Unit) >= s.Pools[pu.Pool].Capacity {
					return fmt.Errorf("task %d uses %s, which is not a resource of the system", v.Task, s.unitName(pu))
				}
				if u, ok := using[pu]; ok && u != v.Task {
					return fmt.Errorf("%s used by tasks %d and %d at once (task %d since %v, task %d from %v)",
						s.unitName(pu), u, v.Task, u, since[pu], v.Task, o.Time)
				}
				using[pu], since[pu] = v.Task, o.Time
			}
			units[v.Task] = v.Units
		case AccessEnd:
			for _, pu := range units[v.Task] {
				if using[pu] == v.Task {
					delete(using, pu)
				}
			}
			delete(units, v.Task)
		case Booked:
			pu := PoolUnit{v.Pool, v.Unit}
			if u, ok := booked[pu]; ok && u != v.Task {
				return fmt.Errorf("manager of %s booked it for task %d at %v while task %d holds it",
					s.PoolName(v.Pool), v.Task, o.Time, u)
			}
			booked[pu] = v.Task
		case Freed:
			pu := PoolUnit{v.Pool, v.Unit}
			if booked[pu] == v.Task {
				delete(booked, pu)
			}
		}
	}
	return nil
}

// CheckAllOrNothing is WK-P2: a task uses its resources only while it holds all of
// them. When a task starts accessing, it must hold (by its managers' bookings) exactly
// one resource in every pool of its interest — the ones it believes it uses — and none
// of them may be freed before its access ends.
func CheckAllOrNothing(s *System, h []sim.Observation) error {
	booked := map[PoolUnit]TaskID{}
	accessing := map[TaskID]bool{}
	for _, o := range h {
		switch v := o.Value.(type) {
		case Booked:
			booked[PoolUnit{v.Pool, v.Unit}] = v.Task
		case Freed:
			pu := PoolUnit{v.Pool, v.Unit}
			if accessing[v.Task] {
				return fmt.Errorf("%s of task %d freed at %v while the task still uses it", s.unitName(pu), v.Task, o.Time)
			}
			if booked[pu] == v.Task {
				delete(booked, pu)
			}
		case Access:
			want := s.Task(v.Task).Pools
			if len(v.Units) != len(want) {
				return fmt.Errorf("task %d started using %d resources at %v, but needs one from each of %d pools", v.Task, len(v.Units), o.Time, len(want))
			}
			for k, pu := range v.Units {
				if pu.Pool != want[k] {
					return fmt.Errorf("task %d started using a resource of %s, not of its pool %s", v.Task, s.PoolName(pu.Pool), s.PoolName(want[k]))
				}
				if booked[pu] != v.Task {
					holder := "nobody"
					if u, ok := booked[pu]; ok {
						holder = fmt.Sprintf("task %d", u)
					}
					return fmt.Errorf("task %d started using %s at %v without holding it (booked for %s)", v.Task, s.unitName(pu), o.Time, holder)
				}
			}
			accessing[v.Task] = true
		case AccessEnd:
			delete(accessing, v.Task)
		}
	}
	return nil
}

// CheckBookings reports a winning form that found no free resource (KindBookFailed):
// the game guarantees a free resource for every winner, and without one the winner
// would wait forever.
func CheckBookings(s *System, h []sim.Observation) error {
	for _, o := range h {
		if v, ok := o.Value.(BookFailed); ok {
			return fmt.Errorf("winning form of task %d found no free resource in %s at %v", v.Task, s.PoolName(v.Pool), o.Time)
		}
	}
	return nil
}

func (s *System) unitName(pu PoolUnit) string {
	if pu.Pool >= 0 && int(pu.Pool) < len(s.Pools) {
		return fmt.Sprintf("resource %d of %s", pu.Unit, s.Pools[pu.Pool].Name)
	}
	return fmt.Sprintf("resource %d of pool %d", pu.Unit, pu.Pool)
}

// PoolOp is one allocate or release of one pool, for a linearizability check of the
// pool's history against a pool allocator (a counting semaphore of distinct units).
type PoolOp struct {
	Pool    PoolID
	Task    TaskID
	Release bool
	// Unit is the unit granted (allocate) or given back (release).
	Unit Unit
	// Call and Return are observation indices; Pending marks an operation that never
	// returned (its task stopped).
	Call, Return int64
	Pending      bool
}

// PoolOps extracts the per-pool allocate/release operations of a run. An allocate is
// called when the task asks the pool (KindAcquire) and returns when the task learns
// its unit (KindAcquired); a release is called when the task stops using its
// resources (KindAccessEnd) and returns when the manager frees the unit (KindFree).
func PoolOps(s *System, h []sim.Observation) []PoolOp {
	type key struct {
		t TaskID
		p PoolID
	}
	var ops []PoolOp
	open := map[key]int{} // pending allocate or release
	held := map[TaskID][]PoolUnit{}
	for _, o := range h {
		switch v := o.Value.(type) {
		case AcquireCall:
			open[key{v.Task, v.Pool}] = len(ops)
			ops = append(ops, PoolOp{Pool: v.Pool, Task: v.Task, Call: o.Index, Pending: true})
		case Acquired:
			if i, ok := open[key{v.Task, v.Pool}]; ok && !ops[i].Release {
				ops[i].Unit, ops[i].Return, ops[i].Pending = v.Unit, o.Index, false
				delete(open, key{v.Task, v.Pool})
			}
			held[v.Task] = append(held[v.Task], PoolUnit{v.Pool, v.Unit})
		case AccessEnd:
			for _, pu := range held[v.Task] {
				open[key{v.Task, pu.Pool}] = len(ops)
				ops = append(ops, PoolOp{Pool: pu.Pool, Task: v.Task, Release: true, Unit: pu.Unit, Call: o.Index, Pending: true})
			}
			delete(held, v.Task)
		case Freed:
			if i, ok := open[key{v.Task, v.Pool}]; ok && ops[i].Release {
				ops[i].Return, ops[i].Pending = o.Index, false
				delete(open, key{v.Task, v.Pool})
			}
		}
	}
	return ops
}

// TaskRecord is one task's life in a run, from the observations.
type TaskRecord struct {
	Task    TaskID
	Created sim.Time
	// Accessed and Done are set when the task started accessing its resources and
	// when it left the game.
	Accessed, Done       sim.Time
	HasAccessed, HasDone bool
	Status               Status // last status observed
}

// Records returns the life of every task that was created in the run, by task id.
func Records(h []sim.Observation) []TaskRecord {
	var recs []TaskRecord
	idx := map[TaskID]int{}
	get := func(t TaskID) *TaskRecord {
		if i, ok := idx[t]; ok {
			return &recs[i]
		}
		return nil
	}
	for _, o := range h {
		switch v := o.Value.(type) {
		case Created:
			idx[v.Task] = len(recs)
			recs = append(recs, TaskRecord{Task: v.Task, Created: o.Time})
		case StatusChange:
			if r := get(v.Task); r != nil {
				r.Status = v.To
			}
		case Access:
			if r := get(v.Task); r != nil && !r.HasAccessed {
				r.Accessed, r.HasAccessed = o.Time, true
			}
		case Done:
			if r := get(v.Task); r != nil {
				r.Done, r.HasDone = o.Time, true
			}
		}
	}
	slices.SortFunc(recs, func(a, b TaskRecord) int { return int(a.Task - b.Task) })
	return recs
}
