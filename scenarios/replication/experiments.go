package rpscen

import (
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/faults"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/scenarios/experiment"
	"github.com/simrun-dev/simrun/sim"
)

// The replication experiments measure what the thesis asks about and leaves open:
// failover time against the ping period and the registration lease (§5.2's two
// knobs), the cost of a request under passive and active replication (§4.3 chose
// active for the servers because "active replications incur less network
// overheads"), and polling against notification (§7's future work: remote events
// instead of polling).

type failoverPoint struct{ period, lease time.Duration }

// groupPoint is a point of the experiments over group sizes: a mode (passive or
// active; polling or notification) and a size.
type groupPoint struct {
	on bool
	n  int
}

type requestCost struct{ msgs, latency float64 }

type membership struct{ rate, failover float64 }

func init() {
	experiment.Register(experiment.Def[failoverPoint, float64]{
		Name: "replication/failover",
		Help: "failover time after the primary crashes vs the ping period and the registration lease (passive, 3 replicas, a client calling throughout)",
		Params: []scenarios.Param{
			{Name: "periods", Default: "25ms,50ms,100ms", Help: "ping periods"},
			{Name: "leases", Default: "150ms,300ms,600ms,1200ms", Help: "registration leases"},
			{Name: "seeds", Default: "10", Help: "runs per point"},
		},
		Sweep: failoverSweep,
	})
	experiment.Register(experiment.Def[groupPoint, requestCost]{
		Name: "replication/passive-active",
		Help: "messages and latency per request, passive (primary-backup) vs active (sequencer) replication, vs replicas (2…5), no faults",
		Params: []scenarios.Param{
			{Name: "replicas", Default: "2,3,4,5", Help: "group sizes"},
			{Name: "ops", Default: "40", Help: "operations per client (2 clients)"},
			{Name: "seeds", Default: "5", Help: "runs per point"},
		},
		Sweep: passiveActiveSweep,
	})
	experiment.Register(experiment.Def[groupPoint, membership]{
		Name: "replication/notify",
		Help: "polling vs notification (the thesis' future work): membership traffic per second and failover time, for groups of 3 and 5",
		Params: []scenarios.Param{
			{Name: "replicas", Default: "2,3,4,5", Help: "group sizes"},
			{Name: "seeds", Default: "10", Help: "runs per point"},
		},
		Sweep: notifySweep,
	})
}

// groupPoints are the points of every mode (false first) and size.
func groupPoints(sizes []int) []groupPoint {
	var out []groupPoint
	for _, on := range []bool{false, true} {
		for _, n := range sizes {
			out = append(out, groupPoint{on, n})
		}
	}
	return out
}

// kvRun is one run of a key-value group outside the scenario registry (experiments).
type kvRun struct {
	replicas, clients, ops int
	period, lease          time.Duration
	active, notify         bool
	think                  time.Duration
	// crashAt: the primary crashes for good at this time (0: no crash).
	crashAt time.Duration
	until   time.Duration
}

type kvResult struct {
	res      *sim.Result
	failover time.Duration // crash → another replica primary (-1: none)
	lat      []float64     // ms per request
	returns  int
}

func (c kvRun) run(seed uint64) (*kvResult, error) {
	d := newDeployment(c.period, c.lease, nil)
	d.notify = c.notify
	d.registry("r1")
	d.registry("r2")
	var reps []string
	for i := 1; i <= c.replicas; i++ {
		reps = append(reps, fmt.Sprintf("p%d", i))
	}
	g := d.replicas("worklist", c.active, reps...)
	for i := 1; i <= c.clients; i++ {
		d.client(fmt.Sprintf("c%d", i), g, kvOps(seed, i, c.ops), 3*c.period, c.think, true)
	}
	e := newEnv(d, faults.Plan{}, c.period, c.lease)
	if c.crashAt > 0 {
		e.trig = []*trigger{{at: sim.Time(c.crashAt), victims: func(k *sim.Kernel, _ *sim.Observation) []sim.NodeID { return []sim.NodeID{d.primary(k, g)} }}}
	}
	k, err := sim.New(sim.Config{Seed: seed, Nodes: d.nodes, Network: sim.Network{Latency: sim.Uniform(time.Millisecond, maxLink)}, Until: sim.Time(c.until), MaxTime: sim.Time(c.until + time.Second)})
	if err != nil {
		return nil, err
	}
	for _, cl := range d.clients {
		k.Inject(sim.Time(100*time.Millisecond), cl.node, rp.Go{})
	}
	if len(e.trig) > 0 {
		hook := e.triggers()
		k.StopWhen(func() bool { return hook(k) })
	}
	out := &kvResult{res: k.Run(), failover: -1}
	calls := map[string]sim.Time{}
	for _, o := range out.res.History {
		switch v := o.Value.(type) {
		case rp.ClientOp:
			id := rp.ClientID(v.Client, v.Seq)
			if o.Kind == rp.ObsCall {
				calls[id] = o.Time
			} else {
				out.lat = append(out.lat, float64(o.Time-calls[id])/1e6)
				out.returns++
			}
		case rp.Role:
			if t := e.trig; len(t) > 0 && t[0].fired && v.Primary && o.Time >= t[0].firedAt && out.failover < 0 && !slices.Contains(t[0].crashed, o.Node) {
				out.failover = o.Time.Sub(t[0].firedAt)
			}
		}
	}
	if c.crashAt > 0 && out.failover < 0 {
		return nil, fmt.Errorf("seed %d: no replica took over after the primary crashed", seed)
	}
	return out, nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func f2(v float64) string { return fmt.Sprintf("%.2f", v) }

func failoverSweep(x *scenarios.Exp) (*experiment.Sweep[failoverPoint, float64], error) {
	p := x.Params
	seeds := p.IntRange("seeds", 1, 1000)
	periods, leases := p.DurationList("periods"), p.DurationList("leases")
	if p.Err() != nil {
		return nil, p.Err()
	}
	for _, per := range periods {
		if err := checkPeriod(per); err != nil {
			return nil, &scenarios.InputError{Err: err}
		}
	}
	// Each run lasts four leases and 2 s after the crash: a takeover must fit in it.
	if slices.Max(periods) > 500*time.Millisecond {
		return nil, &scenarios.InputError{Err: fmt.Errorf("parameter periods: %v is longer than 500ms (a run ends 4 leases and 2 s after the crash)", slices.Max(periods))}
	}
	if slices.Max(leases) > time.Minute {
		return nil, &scenarios.InputError{Err: fmt.Errorf("parameter leases: %v is longer than 1m", slices.Max(leases))}
	}
	var points []failoverPoint
	for _, per := range periods {
		for _, l := range leases {
			points = append(points, failoverPoint{per, l})
		}
	}
	return &experiment.Sweep[failoverPoint, float64]{
		Points: points, Runs: seeds,
		Seed: func(_ failoverPoint, i int) uint64 { return x.Seed*1_000_003 + uint64(i+1) },
		Run: func(pt failoverPoint, seed uint64) (float64, error) {
			// the crash falls anywhere in a lease (so anywhere between renewals)
			at := time.Second + time.Duration(sim.Stream(seed, "rp-crash-at").Int64Range(0, int64(pt.lease)))
			r, err := kvRun{replicas: 3, clients: 2, ops: 400, period: pt.period, lease: pt.lease, notify: true, think: 20 * time.Millisecond, crashAt: at, until: at + 4*pt.lease + 2*time.Second}.run(seed)
			if err != nil {
				return 0, fmt.Errorf("period %v, lease %v: %w", pt.period, pt.lease, err)
			}
			return ms(r.failover), nil
		},
		Tables: []experiment.Table[failoverPoint, float64]{{
			Title:   "Failover time vs ping period and lease",
			Columns: []string{"period", "lease (ms)", "runs", "failover (ms)", "failover lo", "failover hi", "expected (ms)"},
			Row: func(r *experiment.Result[failoverPoint, float64]) []any {
				return []any{r.Point.period.String(), int(ms(r.Point.lease)), r.N(), experiment.Mean(r.Runs).Fmt("%.2f"), f2(ms(r.Point.lease)*5/6 + ms(r.Point.period))}
			},
			Notes: []string{
				fmt.Sprintf("Passive replication, 3 replicas, 2 registries (notifications on), 2 clients calling throughout; the primary crashes for good at a time drawn in [1 s, 1 s + lease). Failover: from the crash to another replica taking the primary role (its registries dropped the crashed one's registration, a backup found no primary, gathered the others' state and took over). Means over %d seeds with 95%% confidence intervals.", seeds),
				"expected: 5/6 of the lease plus a period — the crash falls on average half-way between two renewals (every third of the lease), so the registration lives lease − lease/6 more; then a backup is told, claims, and waits up to a period for the others' state.",
			},
			Figures: []reports.Figure{{Name: "rp-failover", Title: "Failover time vs registration lease", X: "lease (ms)", Y: "failover (ms)", Low: "failover lo", High: "failover hi",
				Series: "period", XLabel: "registration lease (ms)", YLabel: "primary crash → new primary (ms)", Fit: "line",
				Caption: "The registration lease dominates failover: the registries must drop the crashed primary before a backup may take over, so failover grows linearly with the lease (slope ≈ 5/6: the crash falls on average half-way through a renewal period of a third of the lease); the ping period adds the detection and claim steps on top."}},
		}},
	}, nil
}

// requestKinds are the messages a request causes (the rest is membership: registering,
// lookups by replicas, pings).
var requestKinds = map[bool][]string{
	false: {"REQUEST", "RESPONSE", "UPDATE", "DONE", "ACK", "SYNC", "SNAPSHOT"},
	true:  {"REQUEST", "RESPONSE", "ORDER", "FETCH", "ORDERS"},
}

func passiveActiveSweep(x *scenarios.Exp) (*experiment.Sweep[groupPoint, requestCost], error) {
	p := x.Params
	seeds, ops := p.IntRange("seeds", 1, 1000), p.IntRange("ops", 1, 10_000)
	sizes := p.IntList("replicas", 1, 9)
	if p.Err() != nil {
		return nil, p.Err()
	}
	name := map[bool]string{false: "passive", true: "active"}
	return &experiment.Sweep[groupPoint, requestCost]{
		Points: groupPoints(sizes), Runs: seeds,
		Seed: func(_ groupPoint, i int) uint64 { return x.Seed*1_000_003 + uint64(i+1) },
		Run: func(pt groupPoint, seed uint64) (requestCost, error) {
			r, err := kvRun{replicas: pt.n, clients: 2, ops: ops, period: 50 * time.Millisecond, lease: 300 * time.Millisecond, notify: true, active: pt.on, until: time.Duration(ops)*60*time.Millisecond + 2*time.Second}.run(seed)
			if err != nil {
				return requestCost{}, err
			}
			if r.returns != 2*ops {
				return requestCost{}, fmt.Errorf("%s, %d replicas, seed %d: %d of %d requests returned", name[pt.on], pt.n, seed, r.returns, 2*ops)
			}
			sent := 0
			for _, k := range requestKinds[pt.on] {
				sent += int(r.res.ByKind[k].Sent)
			}
			return requestCost{float64(sent) / float64(r.returns), experiment.Mean(r.lat).V}, nil
		},
		Tables: []experiment.Table[groupPoint, requestCost]{{
			Title: "Cost of a request: passive vs active replication",
			Columns: []string{"replication", "replicas", "runs",
				"messages per request", "messages lo", "messages hi", "latency (ms)", "latency lo", "latency hi"},
			Row: func(r *experiment.Result[groupPoint, requestCost]) []any {
				return []any{name[r.Point.on], r.Point.n, r.N(),
					r.Mean(func(c requestCost) float64 { return c.msgs }).Fmt("%.2f"), r.Mean(func(c requestCost) float64 { return c.latency }).Fmt("%.2f")}
			},
			Notes: []string{
				fmt.Sprintf("2 clients, %d operations each on 2 keys, 2 registries, no faults, links 1–8 ms; means over %d seeds with 95%% confidence intervals. Messages per request count the request path only (passive: REQUEST, RESPONSE, UPDATE, DONE, ACK and state transfers; active: the multicast REQUEST, every replica's RESPONSE, the sequencer's ORDER and gap fetches) — membership traffic (registering, lookups, pings) is the subject of replication/notify.", ops, seeds),
				"passive: the request goes to the primary, which sends Update and Done to each backup and waits for its ACK: 2 + 3(n−1) = 3n − 1. active: the front end multicasts to n replicas, the sequencer orders to n−1, and every replica answers: 3n − 1. The few extra are lookups after a retry and duplicate answers.",
			},
			Figures: []reports.Figure{
				{Name: "rp-messages", Title: "Messages per request vs replicas", X: "replicas", Y: "messages per request", Low: "messages lo", High: "messages hi",
					Series: "replication", XLabel: "replicas in the group", YLabel: "messages per request",
					Curves: []reports.Curve{
						{Name: "both: 3n − 1", F: func(n float64) float64 { return 3*n - 1 }},
					},
					Caption: "The two cost the same number of messages, 3n − 1 (the formulas coincide): passive pays Update, Done and ACK per backup, active a multicast copy, an order and an answer per replica. The thesis' reason for replicating the servers actively (\"less network overheads\") does not show in messages; it shows in latency."},
				{Name: "rp-latency", Title: "Latency per request vs replicas", X: "replicas", Y: "latency (ms)", Low: "latency lo", High: "latency hi",
					Series: "replication", XLabel: "replicas in the group", YLabel: "call → return at the client (ms)",
					Caption: "Passive: a round trip to the primary plus a round trip to the slowest backup, which grows with the number of backups (the maximum of more link delays). Active: the first answer wins — usually the sequencer's own, a round trip — so the latency stays flat as the group grows."},
			},
		}},
	}, nil
}

// membershipKinds are the messages of group membership and failure detection.
var membershipKinds = []string{"REGISTER", "REGISTERED", "LOOKUP", "FOUND", "CHANGED", "PING", "PONG"}

func notifySweep(x *scenarios.Exp) (*experiment.Sweep[groupPoint, membership], error) {
	p := x.Params
	seeds := p.IntRange("seeds", 1, 1000)
	sizes := p.IntList("replicas", 2, 9) // a failover needs a second replica
	if p.Err() != nil {
		return nil, p.Err()
	}
	return &experiment.Sweep[groupPoint, membership]{
		Points: groupPoints(sizes), Runs: seeds,
		Seed: func(_ groupPoint, i int) uint64 { return x.Seed*1_000_003 + uint64(i+1) },
		Run: func(pt groupPoint, seed uint64) (membership, error) {
			until := 4 * time.Second
			r, err := kvRun{replicas: pt.n, clients: 1, ops: 400, period: 50 * time.Millisecond, lease: 300 * time.Millisecond, notify: pt.on, think: 20 * time.Millisecond, crashAt: time.Second, until: until}.run(seed)
			if err != nil {
				return membership{}, err
			}
			sent := 0
			for _, k := range membershipKinds {
				sent += int(r.res.ByKind[k].Sent)
			}
			return membership{float64(sent) / until.Seconds(), ms(r.failover)}, nil
		},
		Tables: []experiment.Table[groupPoint, membership]{{
			Title: "Polling vs notification",
			Columns: []string{"membership", "replicas", "runs",
				"messages per second", "messages lo", "messages hi", "failover (ms)", "failover lo", "failover hi"},
			Row: func(r *experiment.Result[groupPoint, membership]) []any {
				return []any{map[bool]string{false: "polling", true: "notification"}[r.Point.on], r.Point.n, r.N(),
					r.Mean(func(m membership) float64 { return m.rate }).Fmt("%.2f"), r.Mean(func(m membership) float64 { return m.failover }).Fmt("%.2f")}
			},
			Notes: []string{
				fmt.Sprintf("Passive replication, 2 registries, ping period 50 ms, lease 300 ms, one client calling throughout; the primary crashes for good at 1 s. Messages per second: membership and failure-detection traffic (REGISTER, REGISTERED, LOOKUP, FOUND, CHANGED, PING, PONG) over the run. Means over %d seeds with 95%% confidence intervals.", seeds),
				"polling (the thesis' implementation): the primary looks the group up every period to keep its list of backups, backups every 5 (verify_primary). notification (its future work, Jini's remote events): the registries tell the subscribed replicas when the membership changes; the primary looks up only every 5 periods.",
			},
			Figures: []reports.Figure{
				{Name: "rp-notify-traffic", Title: "Membership traffic: polling vs notification", X: "replicas", Y: "messages per second", Low: "messages lo", High: "messages hi",
					Series: "membership", XLabel: "replicas in the group", YLabel: "membership messages per second",
					Caption: "Notification cuts the primary's lookups from every period to every fifth, at the price of a notice to every member on each change: at steady state the traffic drops — the thesis' future-work claim holds."},
				{Name: "rp-notify-failover", Title: "Failover time: polling vs notification", X: "replicas", Y: "failover (ms)", Low: "failover lo", High: "failover hi",
					Series: "membership", XLabel: "replicas in the group", YLabel: "primary crash → new primary (ms)",
					Caption: "Failover waits for the lease to expire either way; a notice of the expiry lets the backups act at once instead of at their next ping, so notification is no slower."},
			},
		}},
	}, nil
}
