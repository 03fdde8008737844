package faults

import (
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Params sets the intensity of a generated plan. Every fault lies in [Start, Horizon]
// and the plan leaves the system whole at Horizon (all transiently crashed nodes
// restarted, partitions healed, spikes and bursts over), except for Permanent crashes.
type Params struct {
	Start   time.Duration `json:"start"`
	Horizon time.Duration `json:"horizon"`

	// Crashes is the number of crash/restart pairs attempted (an attempt that would
	// overlap another crash of the same node or exceed MaxDown is skipped).
	Crashes  int           `json:"crashes"`
	MeanDown time.Duration `json:"mean_down"`
	// MaxDown bounds the nodes down at once (0 = a minority of Crashable).
	MaxDown int `json:"max_down"`
	// Permanent nodes crash once and never restart.
	Permanent int `json:"permanent,omitempty"`
	// CrashSendFrac is the probability that a crash (transient or permanent) is a
	// "crash-send": the node crashes part-way through the sends of its first call in
	// the first half of its down interval. Drawn from a stream of its own, so turning
	// it on changes the kind of some crashes and nothing else of the plan.
	CrashSendFrac float64 `json:"crash_send_frac,omitempty"`

	// Partitions is the number of partition windows (each ends with a heal); with
	// probability CutFrac a window is a one-way cut instead of a partition.
	Partitions int           `json:"partitions"`
	MeanSplit  time.Duration `json:"mean_split"`
	CutFrac    float64       `json:"cut_frac,omitempty"`

	Spikes     int           `json:"spikes,omitempty"`
	SpikeExtra time.Duration `json:"spike_extra,omitempty"`

	Skews       int           `json:"skews,omitempty"`
	MaxStep     time.Duration `json:"max_step,omitempty"`
	MaxDriftPPM int64         `json:"max_drift_ppm,omitempty"`

	// Bursts of loss/duplication break the papers' network assumption: off unless set.
	Bursts    int     `json:"bursts,omitempty"`
	BurstLoss float64 `json:"burst_loss,omitempty"`
	BurstDup  float64 `json:"burst_dup,omitempty"`

	// Crashable and Splittable restrict which nodes may crash or be split off (nil:
	// all nodes).
	Crashable  []string `json:"crashable,omitempty"`
	Splittable []string `json:"splittable,omitempty"`
}

// DefaultParams is a moderate intensity for a run of the given horizon.
func DefaultParams(horizon time.Duration) Params {
	return Params{
		Horizon:    horizon,
		Crashes:    3,
		MeanDown:   horizon / 10,
		Partitions: 2,
		MeanSplit:  horizon / 10,
		CutFrac:    0.25,
		Spikes:     2,
		SpikeExtra: 50 * time.Millisecond,
	}
}

// Swarm draws every intensity parameter from the seed, each between zero and the
// corresponding value of limits (swarm testing: some seeds crash a lot and never
// partition, others the opposite). Durations, node lists and the burst setting come
// from limits; bursts are drawn only if limits has Bursts > 0.
func Swarm(seed uint64, limits Params) Params {
	r := sim.Stream(seed, "swarm")
	p := limits
	draw := func(n int) int {
		if n <= 0 {
			return 0
		}
		return r.IntN(n + 1)
	}
	p.Crashes = draw(limits.Crashes)
	p.Permanent = draw(limits.Permanent)
	p.Partitions = draw(limits.Partitions)
	p.Spikes = draw(limits.Spikes)
	p.Skews = draw(limits.Skews)
	p.Bursts = draw(limits.Bursts)
	if limits.MeanDown > 0 {
		p.MeanDown = limits.MeanDown/4 + time.Duration(r.Int64Range(0, int64(limits.MeanDown)))
	}
	if limits.MeanSplit > 0 {
		p.MeanSplit = limits.MeanSplit/4 + time.Duration(r.Int64Range(0, int64(limits.MeanSplit)))
	}
	p.CutFrac = limits.CutFrac * r.Float64()
	if limits.CrashSendFrac > 0 {
		// Its own stream: the draws above do not shift when it is turned on.
		p.CrashSendFrac = limits.CrashSendFrac * sim.Stream(seed, "swarm-crash-send").Float64()
	}
	return p
}

type timed struct {
	at Duration
	n  int // generation order: stable tie-break
	e  Event
}

// bounded refuses limits that would draw events a plan file may not hold (see Parse).
func (p Params) bounded() error {
	switch {
	case p.Horizon > MaxAt:
		return fmt.Errorf("faults: horizon %v is later than the limit of %v", p.Horizon, MaxAt)
	case p.SpikeExtra > MaxMagnitude:
		return fmt.Errorf("faults: spike extra latency %v is larger than the limit of %v", p.SpikeExtra, MaxMagnitude)
	case p.MaxStep > MaxMagnitude:
		return fmt.Errorf("faults: clock step %v is larger than the limit of %v", p.MaxStep, MaxMagnitude)
	}
	return nil
}

// Generate draws a valid plan for the named nodes from seed and p.
func Generate(seed uint64, names []string, p Params) (Plan, error) {
	if p.Horizon <= p.Start || p.Start < 0 {
		return Plan{}, fmt.Errorf("faults: generator needs 0 <= start < horizon (start %v, horizon %v)", p.Start, p.Horizon)
	}
	if err := p.bounded(); err != nil {
		return Plan{}, err
	}
	crashable := p.Crashable
	if crashable == nil {
		crashable = names
	}
	splittable := p.Splittable
	if splittable == nil {
		splittable = names
	}
	pos := make(map[string]int, len(names)) // by name: 100 000 nodes, not 10^10 compares
	for i, n := range names {
		pos[n] = i
	}
	for _, n := range append(slices.Clone(crashable), splittable...) {
		if _, ok := pos[n]; !ok {
			return Plan{}, fmt.Errorf("faults: generator: unknown node %q", n)
		}
	}
	maxDown := p.MaxDown
	if maxDown == 0 {
		maxDown = (len(crashable) - 1) / 2
		if len(crashable) == 1 {
			maxDown = 1
		}
	}
	r := sim.Stream(seed, "faults")
	span := int64(p.Horizon - p.Start)
	// crashEvent is a crash of node n down over [at, end): a crash-send with
	// probability CrashSendFrac (its own stream), its window the first half.
	cs := sim.Stream(seed, "faults-crash-send")
	crashEvent := func(n string, at, end time.Duration) Event {
		if p.CrashSendFrac > 0 && cs.Bernoulli(p.CrashSendFrac) && end-at >= 2*time.Millisecond {
			return Event{Kind: "crash-send", Node: n, For: Duration((end - at) / 2)}
		}
		return Event{Kind: "crash", Node: n}
	}
	var evs []timed
	add := func(at time.Duration, e Event) {
		e.At = Duration(at)
		evs = append(evs, timed{at: e.At, n: len(evs), e: e})
	}
	uniform := func(lo, hi time.Duration) time.Duration {
		if hi <= lo {
			return lo
		}
		return lo + time.Duration(r.Int64Range(0, int64(hi-lo)))
	}
	expo := func(mean time.Duration) time.Duration {
		if mean <= 0 {
			mean = time.Duration(span / 10)
		}
		return time.Millisecond + time.Duration(r.ExpFloat64()*float64(mean))
	}

	// Crashes: intervals [from, to) per node; to = Horizon+1 for permanent ones.
	type interval struct {
		node     string
		from, to time.Duration
	}
	var downs []interval
	overlapping := func(from, to time.Duration) (same map[string]bool, count int) {
		same = map[string]bool{}
		for _, d := range downs {
			// A 1ms gap keeps a restart and the next crash apart.
			if d.from < to+time.Millisecond && from < d.to+time.Millisecond {
				same[d.node] = true
				count++
			}
		}
		return
	}
	perm := map[string]bool{}
	for i := 0; i < p.Permanent && len(crashable) > 0; i++ {
		n := crashable[r.IntN(len(crashable))]
		at := uniform(p.Start, p.Horizon)
		if same, c := overlapping(at, p.Horizon+1); same[n] || perm[n] || c >= maxDown {
			continue
		}
		perm[n] = true
		downs = append(downs, interval{n, at, p.Horizon + 1})
		add(at, crashEvent(n, at, p.Horizon+1))
	}
	for i := 0; i < p.Crashes && len(crashable) > 0; i++ {
		n := crashable[r.IntN(len(crashable))]
		at := uniform(p.Start, p.Horizon-time.Millisecond)
		end := min(at+expo(p.MeanDown), p.Horizon)
		if end <= at || perm[n] {
			continue
		}
		if same, c := overlapping(at, end); same[n] || c >= maxDown {
			continue
		}
		downs = append(downs, interval{n, at, end})
		add(at, crashEvent(n, at, end))
		add(end, Event{Kind: "restart", Node: n})
	}

	// Partition windows: disjoint, each closed by a heal.
	type window struct{ from, to time.Duration }
	var wins []window
	for i := 0; i < p.Partitions && len(splittable) > 0 && len(names) > 1; i++ {
		at := uniform(p.Start, p.Horizon-time.Millisecond)
		end := min(at+expo(p.MeanSplit), p.Horizon)
		if end <= at || slices.ContainsFunc(wins, func(w window) bool {
			return w.from < end+time.Millisecond && at < w.to+time.Millisecond
		}) {
			continue
		}
		wins = append(wins, window{at, end})
		if r.Bernoulli(p.CutFrac) {
			from := splittable[r.IntN(len(splittable))]
			others := slices.DeleteFunc(slices.Clone(names), func(x string) bool { return x == from })
			to := others[r.IntN(len(others))]
			if r.Bernoulli(0.5) {
				from, to = to, from
			}
			add(at, Event{Kind: "cut", From: from, To: to})
		} else {
			// Split off a random minority of the splittable nodes.
			k := 1
			if m := (len(names) - 1) / 2; m > 1 {
				k = 1 + r.IntN(m)
			}
			k = min(k, len(splittable))
			order := r.Perm(len(splittable))
			group := make([]string, k)
			for j := range group {
				group[j] = splittable[order[j]]
			}
			slices.SortFunc(group, func(a, b string) int { return pos[a] - pos[b] })
			if len(group) == len(names) {
				continue
			}
			add(at, Event{Kind: "partition", Groups: [][]string{group}})
		}
		add(end, Event{Kind: "heal"})
	}

	for i := 0; i < p.Spikes; i++ {
		at := uniform(p.Start, p.Horizon-time.Millisecond)
		dur := min(expo(time.Duration(span/20)), p.Horizon-at)
		extra := p.SpikeExtra
		if extra <= 0 {
			extra = 50 * time.Millisecond
		}
		from, to := "*", "*"
		switch r.IntN(3) {
		case 0:
			from = names[r.IntN(len(names))]
		case 1:
			to = names[r.IntN(len(names))]
		}
		add(at, Event{Kind: "spike", From: from, To: to, Extra: Duration(uniform(extra/2, extra)), For: Duration(dur)})
	}
	for i := 0; i < p.Skews; i++ {
		at := uniform(p.Start, p.Horizon)
		e := Event{Kind: "skew", Node: names[r.IntN(len(names))]}
		e.Step = Duration(uniform(-p.MaxStep, p.MaxStep))
		if p.MaxDriftPPM > 0 {
			lim := min(p.MaxDriftPPM, MaxDriftPPM) // Validate's bound
			d := r.Int64Range(-lim, lim)
			e.DriftPPM = &d
		}
		if e.Step == 0 && e.DriftPPM == nil {
			e.Step = Duration(time.Millisecond)
		}
		add(at, e)
	}
	for i := 0; i < p.Bursts && (p.BurstLoss > 0 || p.BurstDup > 0); i++ {
		at := uniform(p.Start, p.Horizon-time.Millisecond)
		dur := min(expo(time.Duration(span/20)), p.Horizon-at)
		add(at, Event{Kind: "burst", Loss: p.BurstLoss, Dup: p.BurstDup, For: Duration(dur)})
	}

	slices.SortStableFunc(evs, func(a, b timed) int {
		if a.at != b.at {
			if a.at < b.at {
				return -1
			}
			return 1
		}
		return a.n - b.n
	})
	plan := Plan{Events: make([]Event, len(evs))}
	for i, t := range evs {
		plan.Events[i] = t.e
	}
	if err := plan.Validate(names); err != nil {
		return Plan{}, fmt.Errorf("faults: generator produced an invalid plan (a bug): %w", err)
	}
	return plan, nil
}
