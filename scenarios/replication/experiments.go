package rpscen

import (
	"fmt"
	"math"
	"slices"
	"strings"
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
// knobs) with §5.4's claims on how soon a group is steady again, the cost of a
// request under passive and active replication (§4.3 chose active for the servers
// because "active replications incur less network overheads"), and polling against
// notification (§7's future work: remote events instead of polling).

// The membership modes: how replicas learn the group and the primary's failure.
const (
	// thesisPolling is §5.2.2: backups ping the primary every period and register
	// with it; the primary looks the group up only for verify_primary.
	thesisPolling = "thesis polling"
	// thesisNotify is §7's future work: the registries notify the members of every
	// change, and backups no longer ping the primary.
	thesisNotify = "thesis notification"
	// simrunPolling: the primary looks the group up every period to learn its
	// backups; backups ping it (simrun's scenarios with -p notify=false).
	simrunPolling = "simrun polling"
	// simrunNotify: the registries notify; backups still ping (simrun's default).
	simrunNotify = "simrun notification"
)

var memberships = []string{thesisPolling, thesisNotify, simrunPolling, simrunNotify}

// apply sets a group's options for membership mode m.
func applyMembership(m string, o *rp.Options) {
	o.Notify = m == thesisNotify || m == simrunNotify
	o.BackupsRegister = m == thesisPolling || m == thesisNotify
	o.NoBackupPing = m == thesisNotify
}

// membershipParam reads the membership parameter (its words with dashes).
func membershipParam(p *scenarios.Params) string {
	m := strings.ReplaceAll(p.String("membership"), "-", " ")
	if !slices.Contains(memberships, m) {
		p.Reject("membership", "thesis-polling, thesis-notification, simrun-polling or simrun-notification")
	}
	return m
}

type failoverPoint struct{ period, lease time.Duration }

// failoverRun is one failover run (ms): crash → new primary; the registries listing
// no primary → new primary (§5.4.1; -1: a new primary registered before every
// registry had dropped the old one); start → first primary (§5.4.1 at
// initialization); and the windows in which two replicas were primary (§5.4.2).
type failoverRun struct {
	failover, steady, startup float64
	duals                     []float64
}

type failoverResult = experiment.Result[failoverPoint, failoverRun]

// groupPoint is a point of the experiments over group sizes: a variant (of
// replication, or of membership) and a size.
type groupPoint struct {
	mode string
	n    int
}

type requestCost struct{ msgs, latency float64 }

type membership struct{ rate, failover float64 }

func init() {
	experiment.Register(experiment.Def[failoverPoint, failoverRun]{
		Name: "replication/failover",
		Help: "failover time after the primary crashes vs the ping period and the registration lease (passive, 3 replicas, a client calling throughout), and §5.4's steady state within two ping periods (no primary) and five (two primaries)",
		Params: []scenarios.Param{
			{Name: "periods", Default: "25ms,50ms,100ms", Help: "ping periods"},
			{Name: "leases", Default: "150ms,300ms,600ms,1200ms", Help: "registration leases"},
			{Name: "seeds", Default: "30", Help: "runs per point"},
			{Name: "membership", Default: "thesis-polling", Help: "thesis-polling (§5.2.2), thesis-notification (§7), simrun-polling or simrun-notification (see replication/notify)"},
		},
		Sweep: failoverSweep,
	})
	experiment.Register(experiment.Def[groupPoint, requestCost]{
		Name: "replication/passive-active",
		Help: "messages and latency per request, passive (primary-backup, answering after the backups' acks or at once) vs active (sequencer) replication, vs replicas (2…5), no faults",
		Params: []scenarios.Param{
			{Name: "replicas", Default: "2,3,4,5", Help: "group sizes"},
			{Name: "ops", Default: "40", Help: "operations per client (2 clients)"},
			{Name: "seeds", Default: "30", Help: "runs per point"},
		},
		Sweep: passiveActiveSweep,
	})
	experiment.Register(experiment.Def[groupPoint, membership]{
		Name: "replication/notify",
		Help: "polling vs notification (the thesis' future work), as the thesis builds them and as simrun's scenarios do: membership traffic per second and failover time vs group size",
		Params: []scenarios.Param{
			{Name: "replicas", Default: "2,3,4,5", Help: "group sizes"},
			{Name: "seeds", Default: "30", Help: "runs per point"},
		},
		Sweep: notifySweep,
	})
}

// kvRun is one run of a key-value group outside the scenario registry (experiments).
type kvRun struct {
	replicas, clients, ops int
	period, lease          time.Duration
	active                 bool
	membership             string
	think                  time.Duration
	// crashAt: the primary crashes for good at this time (0: no crash).
	crashAt time.Duration
	until   time.Duration
	// policy: the passive primary's answer (nil: the protocol; ack-early: answers
	// before the backups acknowledge).
	policy *rp.Policy
}

type kvResult struct {
	res      *sim.Result
	failover time.Duration // crash → another replica primary (-1: none)
	unreg    sim.Time      // the registries list no primary after the crash (-1: never)
	lat      []float64     // ms per request
	returns  int
	crashed  []sim.NodeID
	crashAt  sim.Time
}

func (c kvRun) run(seed uint64) (*kvResult, error) {
	d := newDeployment(c.period, c.lease, c.policy)
	d.registry("r1")
	d.registry("r2")
	var reps []string
	for i := 1; i <= c.replicas; i++ {
		reps = append(reps, fmt.Sprintf("p%d", i))
	}
	g := d.replicas("worklist", c.active, reps...)
	applyMembership(cmpOr(c.membership, simrunNotify), g.o)
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
	out := &kvResult{failover: -1, unreg: -1}
	if len(e.trig) > 0 {
		hook := e.triggers()
		k.StopWhen(func() bool {
			stop := hook(k)
			// §5.4.1: when, after the crash, does no registry list a primary?
			if t := e.trig[0]; t.fired && out.unreg < 0 && !listsPrimary(k, d, g.name) {
				out.unreg = k.Now()
			}
			return stop
		})
	}
	out.res = k.Run()
	if t := e.trig; len(t) > 0 && t[0].fired {
		out.crashed, out.crashAt = t[0].crashed, t[0].firedAt
	}
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
			if out.crashed != nil && v.Primary && o.Time >= out.crashAt && out.failover < 0 && !slices.Contains(out.crashed, o.Node) {
				out.failover = o.Time.Sub(out.crashAt)
			}
		}
	}
	if c.crashAt > 0 && out.failover < 0 {
		return nil, fmt.Errorf("seed %d: no replica took over after the primary crashed", seed)
	}
	return out, nil
}

// listsPrimary reports whether a registry that is up lists a primary of group g.
func listsPrimary(k *sim.Kernel, d *deployment, g string) bool {
	for _, n := range d.regs {
		reg, ok := k.NodeState(n).(*rp.Registry)
		if !ok || !k.Up(n) {
			continue
		}
		for _, e := range reg.Regs {
			if e.Reg.Group == g && e.Reg.Primary {
				return true
			}
		}
	}
	return false
}

// primaryTerms returns each replica's primary terms (a crash ends one) and the first
// time any replica became primary.
func (r *kvResult) primaryTerms() (terms [][2]sim.Time, nodes []sim.NodeID, first sim.Time) {
	open := map[sim.NodeID]sim.Time{}
	first = -1
	for _, o := range r.res.History {
		v, ok := o.Value.(rp.Role)
		if !ok {
			continue
		}
		if from, was := open[o.Node]; was {
			terms, nodes = append(terms, [2]sim.Time{from, o.Time}), append(nodes, o.Node)
			delete(open, o.Node)
		}
		if v.Primary {
			open[o.Node] = o.Time
			if first < 0 {
				first = o.Time
			}
		}
	}
	for _, n := range slices.Sorted(func(yield func(sim.NodeID) bool) {
		for n := range open {
			if !yield(n) {
				return
			}
		}
	}) {
		end := r.res.Time
		if slices.Contains(r.crashed, n) {
			end = r.crashAt
		}
		terms, nodes = append(terms, [2]sim.Time{open[n], end}), append(nodes, n)
	}
	return terms, nodes, first
}

// duals returns the lengths (ms) of the windows in which two replicas were primary.
func (r *kvResult) duals() []float64 {
	terms, nodes, _ := r.primaryTerms()
	var out []float64
	for i := range terms {
		for j := i + 1; j < len(terms); j++ {
			if nodes[i] == nodes[j] {
				continue
			}
			if lo, hi := max(terms[i][0], terms[j][0]), min(terms[i][1], terms[j][1]); hi > lo {
				out = append(out, float64(hi-lo)/1e6)
			}
		}
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func failoverSweep(x *scenarios.Exp) (*experiment.Sweep[failoverPoint, failoverRun], error) {
	p := x.Params
	seeds := p.IntRange("seeds", 1, 1000)
	periods, leases := p.DurationList("periods"), p.DurationList("leases")
	mode := membershipParam(p)
	if p.Err() != nil {
		return nil, p.Err()
	}
	for _, per := range periods {
		if err := checkPeriod(per); err != nil {
			return nil, &scenarios.InputError{Err: err}
		}
	}
	for _, l := range leases {
		if err := checkLease("leases", l); err != nil {
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
	var models []reports.Curve
	for _, per := range periods {
		models = append(models, reports.Curve{Name: fmt.Sprintf("expected for %s: 5/6·lease + %s", periodName(per), periodName(per)), Series: periodName(per), F: func(l float64) float64 { return l*5/6 + ms(per) }})
	}
	steady := func(f failoverRun) float64 { return f.steady }
	return &experiment.Sweep[failoverPoint, failoverRun]{
		Points: points, Runs: seeds,
		Seed: func(_ failoverPoint, i int) uint64 { return x.Seed*1_000_003 + uint64(i+1) },
		Run: func(pt failoverPoint, seed uint64) (failoverRun, error) {
			// the crash falls anywhere in a lease (so anywhere between renewals)
			at := time.Second + time.Duration(sim.Stream(seed, "rp-crash-at").Int64Range(0, int64(pt.lease)))
			r, err := kvRun{replicas: 3, clients: 2, ops: 400, period: pt.period, lease: pt.lease, membership: mode, think: 20 * time.Millisecond, crashAt: at, until: at + 4*pt.lease + 2*time.Second}.run(seed)
			if err != nil {
				return failoverRun{}, fmt.Errorf("period %v, lease %v: %w", pt.period, pt.lease, err)
			}
			out := failoverRun{failover: ms(r.failover), steady: -1, duals: r.duals()}
			if r.unreg >= 0 {
				out.steady = float64(r.crashAt.Add(r.failover)-r.unreg) / 1e6
			}
			_, _, first := r.primaryTerms()
			out.startup = float64(first) / 1e6
			return out, nil
		},
		Tables: []experiment.Table[failoverPoint, failoverRun]{{
			Title:   "Failover time vs ping period and lease",
			Columns: []string{"period", "lease (ms)", "runs", "failover (ms)", "failover lo", "failover hi", "expected (ms)", "no primary → primary (periods)", "steady lo", "steady hi", "longest (periods)", "within 2 periods", "start → primary (periods)", "dual windows", "longest dual (periods)"},
			Row: func(r *failoverResult) []any {
				per := ms(r.Point.period)
				var st, duals []float64
				within, longest := 0, 0.0
				startup := 0.0
				for _, f := range r.Runs {
					if f.steady >= 0 {
						st = append(st, f.steady/per)
						if f.steady <= 2*per {
							within++
						}
					}
					duals = append(duals, f.duals...)
					startup = max(startup, f.startup)
				}
				for _, d := range duals {
					longest = max(longest, d/per)
				}
				return []any{periodName(r.Point.period), int(ms(r.Point.lease)), r.N(), r.Mean(func(f failoverRun) float64 { return f.failover }).Fmt("%.2f"),
					fmt.Sprintf("%.2f", ms(r.Point.lease)*5/6+per), experiment.Mean(st).Fmt("%.2f"), fmt.Sprintf("%.2f", maxOr0(st)), fmt.Sprintf("%d/%d", within, len(st)),
					fmt.Sprintf("%.2f", startup/per), len(duals), fmt.Sprintf("%.2f", longest)}
			},
			Notes: []string{
				fmt.Sprintf("Passive replication, 3 replicas, 2 registries, membership: %s; 2 clients calling throughout; the primary crashes for good at a time drawn in [1 s, 1 s + lease). Failover: from the crash to another replica taking the primary role. Means over %d seeds with 95%% confidence intervals.", mode, seeds),
				"expected: 5/6 of the lease plus a period — the crash falls on average half-way between two renewals (every third of the lease), so the registration lives lease − lease/6 more; then a backup finds no primary registered, claims, and waits up to a period for the others' state.",
				"§5.4.1: no primary → primary: from the moment no registry lists a primary (the crashed one's registration expired everywhere) to a replica taking the role, in ping periods; within 2 periods: runs in which it took at most two. start → primary: the longest, over the runs, from the start (no primary exists yet) to the first primary. §5.4.2: windows in which two replicas were primary at once, and the longest, in periods.",
			},
			FiguresFrom: func(rs []*failoverResult) []reports.Figure {
				return []reports.Figure{
					{Name: "rp-failover", Title: "Failover time vs registration lease", X: "lease (ms)", Y: "failover (ms)", Low: "failover lo", High: "failover hi",
						Series: "period", Legend: "ping period", XLabel: "registration lease (ms)", YLabel: "primary crash → new primary (ms)", ZeroY: true, Curves: models,
						Caption: failoverCaption(rs)},
					{Name: "rp-steady", Title: "§5.4.1: from no primary registered to one primary, in ping periods", X: "lease (ms)", Facet: "period", FacetName: "ping period",
						Ys:     []reports.YSeries{{Name: "mean over the runs", Y: "no primary → primary (periods)", Low: "steady lo", High: "steady hi"}, {Name: "the longest run", Y: "longest (periods)"}},
						XLabel: "registration lease (ms)", YLabel: "no primary → primary (ping periods)", ZeroY: true,
						Curves:  []reports.Curve{{Name: "§5.4.1: within two ping periods", F: func(float64) float64 { return 2 }}},
						Caption: steadyCaption(rs, steady)},
				}
			},
		}},
		Claims: func(rs []*failoverResult) []reports.Claim { return failoverClaims(rs) },
	}, nil
}

func maxOr0(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Max(xs)
}

func periodName(d time.Duration) string { return fmt.Sprintf("%g ms", ms(d)) }

// failoverCaption compares the measured slope with the model's 5/6, per period.
func failoverCaption(rs []*failoverResult) string {
	byPeriod := map[time.Duration][][2]float64{}
	var order []time.Duration
	dev := 0.0
	for _, r := range rs {
		if _, ok := byPeriod[r.Point.period]; !ok {
			order = append(order, r.Point.period)
		}
		m := r.Mean(func(f failoverRun) float64 { return f.failover }).V
		byPeriod[r.Point.period] = append(byPeriod[r.Point.period], [2]float64{ms(r.Point.lease), m})
		dev = max(dev, math.Abs(m-(ms(r.Point.lease)*5/6+ms(r.Point.period))))
	}
	var parts []string
	for _, per := range order {
		var xs, ys []float64
		for _, p := range byPeriod[per] {
			xs, ys = append(xs, p[0]), append(ys, p[1])
		}
		if len(xs) > 1 {
			_, b, _ := reports.LinFit(xs, ys)
			parts = append(parts, fmt.Sprintf("%.2f at %v", b, per))
		}
	}
	s := "The registration lease dominates failover: the registries must drop the crashed primary before a backup may take over. Dashed: the expected 5/6·lease + a period (the crash falls on average half-way through a renewal period of a third of the lease)"
	if len(parts) > 0 {
		s += fmt.Sprintf("; the measured means grow by %s per ms of lease (least-squares slopes) against the model's 0.83", strings.Join(parts, ", "))
	}
	return s + fmt.Sprintf(", and lie within %.0f ms of it.", dev)
}

// steadyCaption says how often §5.4.1's two periods held.
func steadyCaption(rs []*failoverResult, steady func(failoverRun) float64) string {
	within, n, worst := 0, 0, 0.0
	for _, r := range rs {
		per := ms(r.Point.period)
		for _, f := range r.Runs {
			if f.steady < 0 {
				continue
			}
			n++
			worst = max(worst, f.steady/per)
			if f.steady <= 2*per {
				within++
			}
		}
	}
	return fmt.Sprintf("§5.4.1: once no primary is registered, the system \"will soon (within two ping periods) enter a steady state with only one primary\". Measured: %d of %d runs within two periods, the longest %.2f periods (a backup's next ping fails or its next lookup finds no primary, then it gathers the others' state). Means with 95%% confidence intervals.", within, n, worst)
}

// failoverClaims judges §5.4.1 (after a crash and at the start) and §5.4.2.
func failoverClaims(rs []*failoverResult) []reports.Claim {
	within, n, worst := 0, 0, 0.0
	startWithin, starts, startWorst := 0, 0, 0.0
	duals, dualWithin, dualWorst := 0, 0, 0.0
	for _, r := range rs {
		per := ms(r.Point.period)
		for _, f := range r.Runs {
			if f.steady >= 0 {
				n++
				worst = max(worst, f.steady/per)
				if f.steady <= 2*per {
					within++
				}
			}
			starts++
			startWorst = max(startWorst, f.startup/per)
			if f.startup <= 2*per {
				startWithin++
			}
			for _, d := range f.duals {
				duals++
				dualWorst = max(dualWorst, d/per)
				if d <= 5*per {
					dualWithin++
				}
			}
		}
	}
	dualText := fmt.Sprintf("%d windows with two primaries, %d resolved within 5 periods, the longest %.2f periods", duals, dualWithin, dualWorst)
	dualVerdict := reports.Judge(dualWithin == duals)
	if duals == 0 {
		dualText, dualVerdict = "no window with two primaries occurred in these runs (the claim is not exercised; RP-P2's sweeps measure them)", reports.NoNumber
	}
	return []reports.Claim{
		{Source: "Zhu 2002 §5.4.1", Paper: "When the primary crashes (no primary registered), the group enters a steady state with one primary within two ping periods.",
			Measured: fmt.Sprintf("%d of %d runs within two periods of the registries listing no primary; the longest %.2f periods", within, n, worst), Verdict: reports.Judge(within == n)},
		{Source: "Zhu 2002 §5.4.1", Paper: "At the system's initialization (no primary exists), likewise within two ping periods.",
			Measured: fmt.Sprintf("%d of %d runs had a primary within two periods of the start; the longest %.2f periods", startWithin, starts, startWorst), Verdict: reports.Judge(startWithin == starts)},
		{Source: "Zhu 2002 §5.4.2", Paper: "Two or more registered primaries are resolved within 5 ping periods (verify_primary).", Measured: dualText, Verdict: dualVerdict},
	}
}

// requestKinds are the messages a request causes (the rest is membership: registering,
// lookups by replicas, pings).
var requestKinds = map[bool][]string{
	false: {"REQUEST", "RESPONSE", "UPDATE", "DONE", "ACK", "SYNC", "SNAPSHOT"},
	true:  {"REQUEST", "RESPONSE", "ORDER", "FETCH", "ORDERS"},
}

// The replication variants of replication/passive-active.
const (
	passiveAcked = "passive"
	passiveEarly = "passive, answered at once"
	activeSeq    = "active"
)

func passiveActiveSweep(x *scenarios.Exp) (*experiment.Sweep[groupPoint, requestCost], error) {
	p := x.Params
	seeds, ops := p.IntRange("seeds", 1, 1000), p.IntRange("ops", 1, 10_000)
	sizes := p.IntList("replicas", 1, 9)
	if p.Err() != nil {
		return nil, p.Err()
	}
	early, err := Policy("ack-early")
	if err != nil {
		return nil, err
	}
	var points []groupPoint
	for _, m := range []string{passiveAcked, passiveEarly, activeSeq} {
		for _, n := range sizes {
			points = append(points, groupPoint{m, n})
		}
	}
	msgs := func(c requestCost) float64 { return c.msgs }
	lat := func(c requestCost) float64 { return c.latency }
	return &experiment.Sweep[groupPoint, requestCost]{
		Points: points, Runs: seeds,
		Seed: func(_ groupPoint, i int) uint64 { return x.Seed*1_000_003 + uint64(i+1) },
		Run: func(pt groupPoint, seed uint64) (requestCost, error) {
			c := kvRun{replicas: pt.n, clients: 2, ops: ops, period: 50 * time.Millisecond, lease: 300 * time.Millisecond, active: pt.mode == activeSeq, until: time.Duration(ops)*60*time.Millisecond + 2*time.Second}
			if pt.mode == passiveEarly {
				c.policy = early
			}
			r, err := c.run(seed)
			if err != nil {
				return requestCost{}, err
			}
			if r.returns != 2*ops {
				return requestCost{}, fmt.Errorf("%s, %d replicas, seed %d: %d of %d requests returned", pt.mode, pt.n, seed, r.returns, 2*ops)
			}
			sent := 0
			for _, k := range requestKinds[c.active] {
				sent += int(r.res.ByKind[k].Sent)
			}
			return requestCost{float64(sent) / float64(r.returns), experiment.Mean(r.lat).V}, nil
		},
		Tables: []experiment.Table[groupPoint, requestCost]{{
			Title: "Cost of a request: passive vs active replication",
			Columns: []string{"replication", "replicas", "runs",
				"messages per request", "messages lo", "messages hi", "latency (ms)", "latency lo", "latency hi"},
			Row: func(r *experiment.Result[groupPoint, requestCost]) []any {
				return []any{r.Point.mode, r.Point.n, r.N(), r.Mean(msgs).Fmt("%.2f"), r.Mean(lat).Fmt("%.2f")}
			},
			Notes: []string{
				fmt.Sprintf("2 clients, %d operations each on 2 keys, 2 registries, no faults, links 1–8 ms; means over %d seeds with 95%% confidence intervals. Messages per request count the request path only (passive: REQUEST, RESPONSE, UPDATE, DONE, ACK and state transfers; active: the multicast REQUEST, every replica's RESPONSE, the sequencer's ORDER and gap fetches) — membership traffic (registering, lookups, pings) is the subject of replication/notify.", ops, seeds),
				"passive: the request goes to the primary, which sends Update and Done to each backup and answers once every backup acknowledged (§3.6.1): 2 + 3(n−1) = 3n − 1 messages. passive, answered at once: the same messages, but the primary answers as it sends the Done (as the active sequencer answers as it orders; it gives up RP-P4: an acknowledged request can be lost with the primary). active: the front end multicasts to n replicas, the sequencer orders to n−1, and every replica answers; the front end takes the first answer: 3n − 1.",
			},
			FiguresFrom: func(rs []*experiment.Result[groupPoint, requestCost]) []reports.Figure {
				return []reports.Figure{
					{Name: "rp-messages", Title: "Messages per request vs replicas", X: "replicas", Y: "messages per request", Low: "messages lo", High: "messages hi",
						Series: "replication", Legend: "replication", XLabel: "replicas in the group", YLabel: "messages per request", ZeroY: true,
						Curves:  []reports.Curve{{Name: "all three: 3n − 1", F: func(n float64) float64 { return 3*n - 1 }}},
						Caption: "Passive and active replication cost the same number of messages, 3n − 1 (the formulas coincide): passive pays Update, Done and ACK per backup, active a multicast copy, an order and an answer per replica. " + excessCaption(rs, msgs)},
					{Name: "rp-latency", Title: "Latency per request vs replicas", X: "replicas", Y: "latency (ms)", Low: "latency lo", High: "latency hi",
						Series: "replication", Legend: "replication", XLabel: "replicas in the group", YLabel: "call → return at the client (ms)", ZeroY: true,
						Caption: "Passive replication answers after a round trip to the slowest backup, which grows with the backups. Answered at once (before the backups' acknowledgements, as the active sequencer answers as it orders) it gains little: the primary still handles one request at a time and waits for every backup's acknowledgement before the next, so a client's next request waits behind it; the sequencer orders without waiting and the first answer wins. " + latencyCaption(rs, lat)},
				}
			},
		}},
		Claims: func(rs []*experiment.Result[groupPoint, requestCost]) []reports.Claim {
			var parts []string
			fewer := true
			for _, r := range rs {
				if r.Point.mode != activeSeq {
					continue
				}
				for _, q := range rs {
					if q.Point.mode == passiveAcked && q.Point.n == r.Point.n {
						a, b := r.Mean(msgs), q.Mean(msgs)
						parts = append(parts, fmt.Sprintf("n=%d: active %.2f, passive %.2f", r.Point.n, a.V, b.V))
						// "less" only when the intervals say so: means within each
						// other's noise are the same cost, not a saving.
						fewer = fewer && a.Below(b)
					}
				}
			}
			return []reports.Claim{{Source: "Zhu 2002 §4.3", Paper: "Active replication incurs less network overhead (the reason to replicate the servers actively).",
				Measured: "messages per request: " + strings.Join(parts, "; ") + " (both 3n − 1; active answers sooner: see the latency)", Verdict: reports.Judge(fewer)}}
		},
	}, nil
}

// excessCaption gives the largest excess of the measured messages over 3n − 1.
func excessCaption(rs []*experiment.Result[groupPoint, requestCost], f func(requestCost) float64) string {
	worst, at := 0.0, ""
	for _, r := range rs {
		if d := r.Mean(f).V - float64(3*r.Point.n-1); d > worst {
			worst, at = d, fmt.Sprintf("%s at n=%d", r.Point.mode, r.Point.n)
		}
	}
	if at == "" {
		return "Every measured mean is at most 3n − 1."
	}
	return fmt.Sprintf("The measured means exceed 3n − 1 by at most %.2f (%s): lookups after a retry and duplicate answers.", worst, at)
}

// latencyCaption gives each variant's latency at the smallest and largest group.
func latencyCaption(rs []*experiment.Result[groupPoint, requestCost], f func(requestCost) float64) string {
	first, last := map[string]*experiment.Result[groupPoint, requestCost]{}, map[string]*experiment.Result[groupPoint, requestCost]{}
	for _, r := range rs {
		if first[r.Point.mode] == nil {
			first[r.Point.mode] = r
		}
		last[r.Point.mode] = r
	}
	var parts []string
	for _, m := range []string{passiveAcked, passiveEarly, activeSeq} {
		if a, b := first[m], last[m]; a != nil {
			parts = append(parts, fmt.Sprintf("%s %.1f → %.1f ms", m, a.Mean(f).V, b.Mean(f).V))
		}
	}
	return "Measured, from the smallest to the largest group: " + strings.Join(parts, ", ") + "."
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
	var points []groupPoint
	for _, m := range memberships {
		for _, n := range sizes {
			points = append(points, groupPoint{m, n})
		}
	}
	rate := func(m membership) float64 { return m.rate }
	fo := func(m membership) float64 { return m.failover }
	return &experiment.Sweep[groupPoint, membership]{
		Points: points, Runs: seeds,
		Seed: func(_ groupPoint, i int) uint64 { return x.Seed*1_000_003 + uint64(i+1) },
		Run: func(pt groupPoint, seed uint64) (membership, error) {
			until := 4 * time.Second
			r, err := kvRun{replicas: pt.n, clients: 1, ops: 400, period: 50 * time.Millisecond, lease: 300 * time.Millisecond, membership: pt.mode, think: 20 * time.Millisecond, crashAt: time.Second, until: until}.run(seed)
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
				return []any{r.Point.mode, r.Point.n, r.N(), r.Mean(rate).Fmt("%.2f"), r.Mean(fo).Fmt("%.2f")}
			},
			Notes: []string{
				fmt.Sprintf("Passive replication, 2 registries, ping period 50 ms, lease 300 ms (renewed every 100 ms), one client calling throughout; the primary crashes for good at 1 s. Messages per second: membership and failure-detection traffic (REGISTER, REGISTERED, LOOKUP, FOUND, CHANGED, PING, PONG) over the 4 s run. Means over %d seeds with 95%% confidence intervals.", seeds),
				"thesis polling (§5.2.2): every backup pings the primary each period and registers with it; every replica verifies the primary in the registries every 5 periods. thesis notification (§7's future work): the registries notify every member of a change, and the backups no longer ping: the notice of the primary's expiry is how they learn it failed. simrun polling: as the thesis, but the primary looks the group up every period to learn its backups (simrun's scenarios with -p notify=false). simrun notification: notices, and the backups still ping (simrun's default).",
			},
			FiguresFrom: func(rs []*experiment.Result[groupPoint, membership]) []reports.Figure {
				return []reports.Figure{
					{Name: "rp-notify-traffic", Title: "Membership traffic: polling vs notification", X: "replicas", Y: "messages per second", Low: "messages lo", High: "messages hi",
						Series: "membership", Legend: "membership", XLabel: "replicas in the group", YLabel: "membership messages per second", ZeroY: true,
						Caption: "§7: \"with remote event notification, backup replicas will be notified when the primary fails, which eliminates the need for backups to inquire frequently the status of the primary and, therefore, reduces the network overheads dramatically\". " + "Measured, " + savingCaption(rs, rate, thesisNotify, thesisPolling, "the thesis' notification against its polling") + " " + savingCaption(rs, rate, simrunNotify, simrunPolling, "Simrun's notification against its polling")},
					{Name: "rp-notify-failover", Title: "Failover time: polling vs notification", X: "replicas", Y: "failover (ms)", Low: "failover lo", High: "failover hi",
						Series: "membership", Legend: "membership", XLabel: "replicas in the group", YLabel: "primary crash → new primary (ms)", ZeroY: true,
						Caption: "Failover waits for the registration to expire (a lease, at most) either way; the notice of the expiry lets a backup act at once instead of at its next ping. Measured, " + savingCaption(rs, fo, thesisNotify, thesisPolling, "the thesis' notification against its polling")},
				}
			},
		}},
		Claims: func(rs []*experiment.Result[groupPoint, membership]) []reports.Claim {
			lower := true
			for _, r := range rs {
				if r.Point.mode != thesisNotify {
					continue
				}
				for _, q := range rs {
					if q.Point.mode == thesisPolling && q.Point.n == r.Point.n {
						lower = lower && r.Mean(rate).Below(q.Mean(rate))
					}
				}
			}
			return []reports.Claim{
				{Source: "Zhu 2002 §7", Paper: "Remote event notification reduces the network overheads of failure detection.",
					Measured: savingCaption(rs, rate, thesisNotify, thesisPolling, "membership traffic of notification against polling, as the thesis builds them"), Verdict: reports.Judge(lower)},
				{Source: "Zhu 2002 §7", Paper: "... dramatically.", Measured: savingCaption(rs, rate, thesisNotify, thesisPolling, "a change by group size of"), Verdict: reports.NoNumber},
			}
		},
	}, nil
}

// savingCaption gives mode a's change against mode b, per group size, in percent.
func savingCaption(rs []*experiment.Result[groupPoint, membership], f func(membership) float64, a, b, what string) string {
	var parts []string
	for _, r := range rs {
		if r.Point.mode != a {
			continue
		}
		for _, q := range rs {
			if q.Point.mode == b && q.Point.n == r.Point.n {
				parts = append(parts, fmt.Sprintf("%+.1f %% at %d replicas", 100*(r.Mean(f).V/q.Mean(f).V-1), r.Point.n))
			}
		}
	}
	return fmt.Sprintf("%s: %s.", what, strings.Join(parts, ", "))
}
