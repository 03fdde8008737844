package eoscen

import (
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/faults"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// Metrics are the per-run metrics of an exactly-once scenario (Report.Metrics, shown
// by `simrun run --format json`).
type Metrics struct {
	Agents    int `json:"agents"`
	Accepted  int `json:"accepted"`
	Completed int `json:"completed"`
	// BlockedFraction is the fraction of accepted agents that did not complete.
	BlockedFraction float64 `json:"blocked_fraction"`
	// ByHop aggregates the stages of every agent by hop (stage index).
	ByHop []HopMetrics `json:"by_hop"`
	// Stages lists every stage that became Active, by agent then hop.
	Stages []StageMetrics `json:"stages"`
	// Swarm, in exactlyonce/swarm runs, lists the settings drawn from the seed (they
	// replace the parameters' defaults, which the report's params line shows).
	Swarm *SwarmSettings `json:"swarm,omitempty"`
}

// SwarmSettings are the settings exactlyonce/swarm drew for one seed.
type SwarmSettings struct {
	Protocol       string  `json:"protocol"`
	Nodes          int     `json:"nodes"`
	Agents         int     `json:"agents"`
	Stages         int     `json:"stages"`
	Width          int     `json:"width"`
	Capacity       int     `json:"capacity"`
	Timescale      float64 `json:"timescale"`
	Work           string  `json:"work"`
	MajoritySelect bool    `json:"majority_select"`
	StaticNext     bool    `json:"static_next"`
	Latency        string  `json:"latency"`
	// Launches are the agents' launch times.
	Launches []string `json:"launches"`
}

// notes is the report's "drawn" line for the swarm (none for other scenarios).
func (s *SwarmSettings) notes() []string {
	if s == nil {
		return nil
	}
	return []string{fmt.Sprintf("protocol=%s nodes=%d agents=%d stages=%d width=%d capacity=%d timescale=%g work=%s majority-select=%t static-next=%t latency=%s",
		s.Protocol, s.Nodes, s.Agents, s.Stages, s.Width, s.Capacity, s.Timescale, s.Work, s.MajoritySelect, s.StaticNext, s.Latency)}
}

func swarmSettings(o options) *SwarmSettings {
	s := &SwarmSettings{
		Protocol: "extended", Nodes: o.nodes, Agents: o.agents, Stages: o.stages, Width: o.width, Capacity: o.capacity,
		Timescale: o.timescale, Work: o.work.String(), MajoritySelect: o.majority, StaticNext: o.static,
		Latency: o.latMin.String() + "-" + o.latMax.String(),
	}
	if o.simple {
		s.Protocol = "simple"
	}
	for _, l := range o.launches {
		s.Launches = append(s.Launches, l.String())
	}
	return s
}

// HopMetrics aggregates one hop over the agents.
type HopMetrics struct {
	Hop       int32 `json:"hop"`
	Stages    int   `json:"stages"`
	Committed int   `json:"committed"`
	// Messages counts the messages sent for these stages, by type.
	Messages map[string]int64 `json:"messages"`
	// CommitLatencyMs: from the stage becoming Active (its Put committing at its first
	// node) to its commit decision.
	MeanCommitLatencyMs float64 `json:"mean_commit_latency_ms"`
	MaxCommitLatencyMs  float64 `json:"max_commit_latency_ms"`
	// Failover: from the crash of a stage's worker to another node becoming worker
	// through the selection protocol.
	Failovers      int     `json:"failovers"`
	MeanFailoverMs float64 `json:"mean_failover_ms,omitempty"`
	MaxFailoverMs  float64 `json:"max_failover_ms,omitempty"`
	// Selections counts every node that became worker through the selection protocol;
	// OtherSelections those not answering a crash of the stage's current worker: a
	// partition, a cut, a slow link, a worker that gave up, or a worker already down
	// when the stage became Active. Failover time is measured only after a crash of
	// the current worker: the other causes have no single instant at which the worker
	// was lost, so they are counted, not timed.
	Selections      int `json:"selections"`
	OtherSelections int `json:"other_selections"`
}

// StageMetrics describes one stage of one agent.
type StageMetrics struct {
	Stage    string           `json:"stage"`
	Messages map[string]int64 `json:"messages"`
	// Attempts counts the stage transactions begun (by any node).
	Attempts int `json:"attempts"`
	// Workers lists the nodes that were worker, in order of becoming one.
	Workers         []string  `json:"workers"`
	ActiveMs        float64   `json:"active_ms"`
	CommittedMs     float64   `json:"committed_ms,omitempty"`
	CommitLatencyMs float64   `json:"commit_latency_ms,omitempty"`
	FailoverMs      []float64 `json:"failover_ms,omitempty"`
	// Selections and OtherSelections: see HopMetrics.
	Selections      int `json:"selections,omitempty"`
	OtherSelections int `json:"other_selections,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

type stageAcc struct {
	id        eo.StageID
	msgs      map[string]int64
	attempts  int
	workers   []string
	current   []sim.NodeID // nodes worker now
	active    sim.Time
	hasActive bool
	committed sim.Time
	done      bool
	pending   []sim.Time // crash times of a worker awaiting a failover
	failovers []time.Duration
	selected  int // selections (RoleChange Selected)
	other     int // selections with no crash pending
}

func computeMetrics(r *sim.Result, w *workload, plan faults.Plan) *Metrics {
	m := &Metrics{Agents: len(w.agents)}
	names := r.Names()
	acc := map[eo.StageID]*stageAcc{}
	get := func(s eo.StageID) *stageAcc {
		a := acc[s]
		if a == nil {
			a = &stageAcc{id: s, msgs: map[string]int64{}}
			acc[s] = a
		}
		return a
	}
	type crash struct {
		at   sim.Time
		node sim.NodeID
	}
	var crashes []crash
	for _, e := range plan.Events {
		if e.IsCrash() {
			crashes = append(crashes, crash{sim.Time(e.At), sim.NodeID(slices.Index(names, e.Node))})
		}
	}
	applyCrash := func(c crash) {
		for _, s := range sortedStageIDs(acc) {
			a := acc[s]
			if i := slices.Index(a.current, c.node); i >= 0 && !a.done {
				a.current = slices.Delete(a.current, i, i+1)
				a.pending = append(a.pending, c.at)
			}
		}
	}
	ci := 0
	for _, o := range r.History {
		for ci < len(crashes) && crashes[ci].at <= o.Time {
			applyCrash(crashes[ci])
			ci++
		}
		switch v := o.Value.(type) {
		case eo.Accepted:
			m.Accepted++
		case eo.Done:
			m.Completed++
		case eo.Sent:
			get(v.Stage).msgs[v.Kind]++
		case eo.Activated:
			a := get(v.Stage)
			if !a.hasActive {
				a.active, a.hasActive = o.Time, true
			}
		case eo.Began:
			get(v.Stage).attempts++
		case eo.Committed:
			a := get(v.Stage)
			a.committed, a.done = o.Time, true
		case eo.RoleChange:
			a := get(v.Stage)
			switch v.Role {
			case eo.RoleWorker:
				if !slices.Contains(a.current, v.Node) {
					a.current = append(a.current, v.Node)
				}
				if len(a.workers) == 0 || a.workers[len(a.workers)-1] != names[v.Node] {
					a.workers = append(a.workers, names[v.Node])
				}
				if v.Selected {
					a.selected++
					if len(a.pending) == 0 {
						a.other++
					}
				}
				if v.Selected && len(a.pending) > 0 {
					for _, t := range a.pending {
						a.failovers = append(a.failovers, o.Time.Sub(t))
					}
					a.pending = nil
				}
			case eo.RoleObserver:
				a.current = slices.DeleteFunc(a.current, func(n sim.NodeID) bool { return n == v.Node })
			}
		}
	}
	if m.Accepted > 0 {
		m.BlockedFraction = float64(m.Accepted-m.Completed) / float64(m.Accepted)
	}
	hops := map[int32]*HopMetrics{}
	var lat = map[int32][]time.Duration{}
	var fo = map[int32][]time.Duration{}
	for _, s := range sortedStageIDs(acc) {
		a := acc[s]
		if !a.hasActive {
			continue
		}
		sm := StageMetrics{Stage: s.String(), Messages: a.msgs, Attempts: a.attempts, Workers: a.workers, ActiveMs: ms(time.Duration(a.active))}
		h := hops[s.Hop]
		if h == nil {
			h = &HopMetrics{Hop: s.Hop, Messages: map[string]int64{}}
			hops[s.Hop] = h
		}
		h.Stages++
		for k, v := range a.msgs {
			h.Messages[k] += v
		}
		if a.done {
			sm.CommittedMs = ms(time.Duration(a.committed))
			sm.CommitLatencyMs = ms(a.committed.Sub(a.active))
			h.Committed++
			lat[s.Hop] = append(lat[s.Hop], a.committed.Sub(a.active))
		}
		for _, f := range a.failovers {
			sm.FailoverMs = append(sm.FailoverMs, ms(f))
		}
		sm.Selections, sm.OtherSelections = a.selected, a.other
		h.Selections += a.selected
		h.OtherSelections += a.other
		fo[s.Hop] = append(fo[s.Hop], a.failovers...)
		m.Stages = append(m.Stages, sm)
	}
	hopIDs := make([]int32, 0, len(hops))
	for hop := range hops {
		hopIDs = append(hopIDs, hop)
	}
	slices.Sort(hopIDs)
	for _, hop := range hopIDs {
		h := hops[hop]
		h.MeanCommitLatencyMs, h.MaxCommitLatencyMs = meanMax(lat[hop])
		h.Failovers = len(fo[hop])
		h.MeanFailoverMs, h.MaxFailoverMs = meanMax(fo[hop])
		m.ByHop = append(m.ByHop, *h)
	}
	return m
}

func meanMax(ds []time.Duration) (float64, float64) {
	if len(ds) == 0 {
		return 0, 0
	}
	var sum, mx time.Duration
	for _, d := range ds {
		sum += d
		mx = max(mx, d)
	}
	return ms(sum) / float64(len(ds)), ms(mx)
}

func sortedStageIDs[V any](m map[eo.StageID]V) []eo.StageID {
	ks := make([]eo.StageID, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b eo.StageID) int {
		if a.Agent != b.Agent {
			return int(a.Agent - b.Agent)
		}
		return int(a.Hop - b.Hop)
	})
	return ks
}
