package baseline

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/protocols/winkowski"
	"github.com/simrun-dev/simrun/sim"
)

func dining(n, meals int) *winkowski.System {
	cfg := winkowski.Config{Agents: n, K: n + 1, Gamma: time.Millisecond}
	for i := range n {
		cfg.Pools = append(cfg.Pools, winkowski.Pool{Name: fmt.Sprintf("f%d", i), Capacity: 1, Host: i})
	}
	for i := range n {
		job := winkowski.Job{Agent: i}
		for range meals {
			job.Tasks = append(job.Tasks, winkowski.TaskSpec{Pools: []winkowski.PoolID{winkowski.PoolID(i), winkowski.PoolID((i + 1) % n)}, Exec: 3 * time.Millisecond})
		}
		cfg.Jobs = append(cfg.Jobs, job)
	}
	s, err := winkowski.NewSystem(cfg)
	if err != nil {
		panic(err)
	}
	return s
}

// Both baselines serve every meal of the dining philosophers without two philosophers
// holding a fork at once; ordered locking asks for the forks in pool order, the
// central manager for all of a task's pools at once.
func TestBaselinesDining(t *testing.T) {
	s := dining(5, 6)
	for _, mode := range []Mode{Ordered, Central} {
		for seed := uint64(1); seed <= 30; seed++ {
			nodes, _ := Nodes(s, mode)
			k, err := sim.New(sim.Config{Seed: seed, Nodes: nodes})
			if err != nil {
				t.Fatal(err)
			}
			res := k.Run()
			if res.Outcome != sim.Quiescent {
				t.Fatalf("%v seed %d: %v", mode, seed, res.Outcome)
			}
			for _, check := range []func(*winkowski.System, []sim.Observation) error{winkowski.CheckExclusion, winkowski.CheckAllOrNothing} {
				if err := check(s, res.History); err != nil {
					t.Fatalf("%v seed %d: %v", mode, seed, err)
				}
			}
			done := 0
			asked := map[winkowski.TaskID][]winkowski.PoolID{}
			for _, o := range res.History {
				switch v := o.Value.(type) {
				case winkowski.Done:
					done++
				case winkowski.AcquireCall:
					asked[v.Task] = append(asked[v.Task], v.Pool)
				}
			}
			if done != 30 {
				t.Fatalf("%v seed %d: %d of 30 meals", mode, seed, done)
			}
			for id, ps := range asked {
				if !slices.IsSorted(ps) || len(ps) != 2 {
					t.Fatalf("%v: task %d asked for %v, want both forks in pool order", mode, id, ps)
				}
			}
			if got, want := res.Messages.Sent, int64(30*map[Mode]int{Ordered: 6, Central: 3}[mode]); got != want {
				t.Fatalf("%v: %d messages, want %d (%s per meal)", mode, got, want, map[Mode]string{Ordered: "3ϱ", Central: "3"}[mode])
			}
		}
	}
}
