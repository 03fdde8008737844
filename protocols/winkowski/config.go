package winkowski

import (
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// PoolID names a pool: its index in Config.Pools.
type PoolID int32

// TaskID names a task: its 1-based number in job order (0 is "no task").
type TaskID int32

// Ticket is a numbered ticket. Agent i (1 ≤ i < K) uses the numbers nK+i, n ≥ 0; a
// lower number is a higher priority (paper §2).
type Ticket int64

// Unit is a resource of a pool: pool^{-1}(P) = {0, …, capacity-1}.
type Unit int32

// Variant selects the restricted or the complete game (paper §2).
type Variant uint8

const (
	// Complete is the variant that takes failures into account: conditions (p2)/(p3),
	// order forms, the alarm clock Γ and advancing forms (WK-4).
	Complete Variant = iota
	// Restricted is the variant without failures: condition (p1) (WK-3).
	Restricted
)

func (v Variant) String() string {
	if v == Restricted {
		return "restricted"
	}
	return "complete"
}

// ParseVariant reads "complete" (or "p3") and "restricted" (or "p1").
func ParseVariant(s string) (Variant, error) {
	switch s {
	case "complete", "p2", "p3":
		return Complete, nil
	case "restricted", "p1":
		return Restricted, nil
	}
	return 0, fmt.Errorf("unknown variant %q (complete or restricted)", s)
}

// Entering selects how a task leaves its entering phase (see the package comment,
// choice E1).
type Entering uint8

const (
	// EnterAlarm waits for the absolute predecessors as the paper says, but when none
	// of them has left the game for Γ the task takes a ticket of lower priority than
	// every remaining one and enters the competition (keeps failure locality).
	EnterAlarm Entering = iota
	// EnterLiteral waits for every absolute predecessor to leave the game, as written.
	EnterLiteral
)

func (e Entering) String() string {
	if e == EnterLiteral {
		return "literal"
	}
	return "alarm"
}

// ParseEntering reads "alarm" and "literal".
func ParseEntering(s string) (Entering, error) {
	switch s {
	case "alarm":
		return EnterAlarm, nil
	case "literal":
		return EnterLiteral, nil
	}
	return 0, fmt.Errorf("unknown entering mode %q (alarm or literal)", s)
}

// Pool is a pool of interchangeable resources on one computer.
type Pool struct {
	Name     string
	Capacity int
	// Host is the computer (0-based agent index) whose agent manages the pool.
	Host int
}

// TaskSpec is one task of a job: the pools of its interest (one resource from each,
// paper §1) and how long its execution takes once it accesses them.
type TaskSpec struct {
	Pools []PoolID
	Exec  time.Duration
}

// Job is a sequence of tasks an agent performs one after another: the first is
// created at Start, each next one Think after the previous one left the game.
type Job struct {
	Agent int // 0-based
	Start time.Duration
	Think time.Duration
	Tasks []TaskSpec
}

// Config describes a system: agents (one per computer), pools, the jobs, and the
// protocol's parameters.
type Config struct {
	Agents int
	// K bounds the agents' ticket residues: agent i (1-based) takes tickets nK+i, so
	// K must exceed Agents.
	K     int
	Pools []Pool
	Jobs  []Job
	// Variant selects (p1) or (p2)/(p3).
	Variant  Variant
	Entering Entering
	// Gamma is the alarm-clock period Γ (> 0).
	Gamma time.Duration
	// Retry (> 0) makes the game survive lost messages (choice K2): every Retry, a
	// task resends the forms a pool has not yet applied, or polls a pool it needs news
	// from, if that pool sent it nothing since the last time. 0 assumes reliable links,
	// as the paper does (the model checker's default).
	Retry time.Duration
	// Durable makes agents and managers keep what a restart needs in stable storage,
	// so a crashed one resumes where it stopped (a "returning late" failure, F2).
	Durable bool
	// Policy holds the hooks at the game's decision points; the zero Policy is the
	// protocol (see Policy: broken variants for tests are planted through it).
	Policy Policy
}

// TaskInfo is a task of the system with its place in the workload.
type TaskInfo struct {
	ID    TaskID
	Agent int
	Job   int
	Index int // position in the job
	TaskSpec
}

// System is a validated Config with derived tables. It is immutable once built and
// shared by every node.
type System struct {
	Config
	// Tasks[id-1] describes task id.
	Tasks []TaskInfo
	// HostPools[c] lists the pools managed on computer c (sorted).
	HostPools [][]PoolID
	// JobTasks[j] lists the task ids of job j in order.
	JobTasks [][]TaskID
}

// MaxRho is the largest ϱ supported (tasks keep per-pool sets as 64-bit masks).
const MaxRho = 64

// NewSystem validates cfg and derives the tables. Every error names what is wrong in
// one line: a task interested in an unknown pool, a pool of capacity 0, K not larger
// than the number of agents, Γ ≤ 0, ...
func NewSystem(cfg Config) (*System, error) {
	bad := func(format string, a ...any) (*System, error) {
		return nil, fmt.Errorf("winkowski: "+format, a...)
	}
	if cfg.Agents < 1 {
		return bad("need at least one agent (got %d)", cfg.Agents)
	}
	if cfg.K <= cfg.Agents {
		return bad("K=%d must exceed the number of agents (%d): agent i = 1..%d takes tickets nK+i with 0 < i < K", cfg.K, cfg.Agents, cfg.Agents)
	}
	if cfg.Gamma <= 0 {
		return bad("alarm period Γ must be positive (got %v)", cfg.Gamma)
	}
	if cfg.Retry < 0 {
		return bad("retry period must not be negative (got %v)", cfg.Retry)
	}
	if len(cfg.Pools) == 0 {
		return bad("no pools")
	}
	names := map[string]bool{}
	s := &System{Config: cfg, HostPools: make([][]PoolID, cfg.Agents)}
	for i, p := range cfg.Pools {
		if p.Name == "" {
			return bad("pool %d has no name", i)
		}
		if names[p.Name] {
			return bad("two pools are named %q", p.Name)
		}
		names[p.Name] = true
		if p.Capacity < 1 {
			return bad("pool %q has capacity %d: a pool needs at least one resource", p.Name, p.Capacity)
		}
		if p.Host < 0 || p.Host >= cfg.Agents {
			return bad("pool %q is on computer %d, but there are %d agents (computers 0..%d)", p.Name, p.Host, cfg.Agents, cfg.Agents-1)
		}
		s.HostPools[p.Host] = append(s.HostPools[p.Host], PoolID(i))
	}
	for j, job := range cfg.Jobs {
		if job.Agent < 0 || job.Agent >= cfg.Agents {
			return bad("job %d belongs to agent %d, but there are %d agents", j, job.Agent, cfg.Agents)
		}
		if job.Start < 0 || job.Think < 0 {
			return bad("job %d has a negative start or think time", j)
		}
		var ids []TaskID
		for k, t := range job.Tasks {
			if len(t.Pools) == 0 {
				return bad("task %d of job %d is interested in no pool", k, j)
			}
			if len(t.Pools) > MaxRho {
				return bad("task %d of job %d needs %d pools (at most %d)", k, j, len(t.Pools), MaxRho)
			}
			for _, p := range t.Pools {
				if p < 0 || int(p) >= len(cfg.Pools) {
					return bad("task %d of job %d is interested in unknown pool %d (pools 0..%d)", k, j, p, len(cfg.Pools)-1)
				}
			}
			ps := slices.Clone(t.Pools)
			slices.Sort(ps)
			if len(slices.Compact(slices.Clone(ps))) != len(ps) {
				return bad("task %d of job %d names a pool twice", k, j)
			}
			if t.Exec < 0 {
				return bad("task %d of job %d has a negative execution time", k, j)
			}
			id := TaskID(len(s.Tasks) + 1)
			s.Tasks = append(s.Tasks, TaskInfo{ID: id, Agent: job.Agent, Job: j, Index: k, TaskSpec: TaskSpec{Pools: ps, Exec: t.Exec}})
			ids = append(ids, id)
		}
		s.JobTasks = append(s.JobTasks, ids)
	}
	return s, nil
}

// Task returns the description of task id.
func (s *System) Task(id TaskID) *TaskInfo { return &s.Tasks[id-1] }

// PoolName returns the name of pool p.
func (s *System) PoolName(p PoolID) string { return s.Pools[p].Name }

// Shares reports whether tasks a and b are interested in a common pool.
func (s *System) Shares(a, b TaskID) bool {
	pa, pb := s.Task(a).Pools, s.Task(b).Pools
	for _, p := range pa {
		if _, ok := slices.BinarySearch(pb, p); ok {
			return true
		}
	}
	return false
}

// AgentName is the node name of agent i (0-based): "a1", "a2", ...
func AgentName(i int) string { return fmt.Sprintf("a%d", i+1) }

// HostName is the node name of the resource-manager role of computer c (0-based):
// "m1", "m2", ...
func HostName(c int) string { return fmt.Sprintf("m%d", c+1) }

// Layout maps agents and computers to simulator nodes. Manager hosts come first (so
// that they are up when the agents start), then the agents.
type Layout struct {
	// Agent[i] is agent i's node.
	Agent []sim.NodeID
	// Host[c] is the node managing computer c's pools.
	Host []sim.NodeID
	// Names are the node names by node id.
	Names []string
}

// NewLayout places one manager host per computer (one without pools idles: the node
// set then depends on the number of agents only, so a fault plan fits every workload
// of a scenario), then one node per agent.
func NewLayout(s *System) *Layout {
	l := &Layout{Host: make([]sim.NodeID, s.Agents), Agent: make([]sim.NodeID, s.Agents)}
	for c := range s.Agents {
		l.Host[c] = sim.NodeID(len(l.Names))
		l.Names = append(l.Names, HostName(c))
	}
	for i := range s.Agents {
		l.Agent[i] = sim.NodeID(len(l.Names))
		l.Names = append(l.Names, AgentName(i))
	}
	return l
}

// Manager returns the node of the manager of pool p.
func (l *Layout) Manager(s *System, p PoolID) sim.NodeID { return l.Host[s.Pools[p].Host] }

// AgentNames returns the agents' node names (the nodes a task fault plan crashes).
func AgentNames(s *System) []string {
	ns := make([]string, s.Agents)
	for i := range ns {
		ns[i] = AgentName(i)
	}
	return ns
}

// Nodes returns the simulator nodes of the game: the manager hosts and the agents.
func Nodes(s *System) ([]sim.NodeSpec, *Layout) {
	l := NewLayout(s)
	specs := make([]sim.NodeSpec, len(l.Names))
	for c := range s.Agents {
		n := l.Host[c]
		specs[n] = sim.NodeSpec{Name: l.Names[n], New: NewHost(s, c)}
	}
	for i := range s.Agents {
		n := l.Agent[i]
		specs[n] = sim.NodeSpec{Name: l.Names[n], New: NewAgent(s, l, i)}
	}
	return specs, l
}
