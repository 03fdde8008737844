package lsscen

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/scenarios/experiment"
	"github.com/simrun-dev/simrun/sim"
)

// The measurements of leasing/detection. Every run is a two-device system (server S,
// client C) running the Meter application, checked against every leasing property;
// a violation aborts the experiment with the seed.

var detectionParams = append(slices.Clone(runtimeParams),
	scenarios.Param{Name: "runs", Default: "40", Help: "runs per point"},
	scenarios.Param{Name: "terms", Default: "500ms,1s,2s,4s,8s", Help: "lease terms of the detection-delay table"},
	scenarios.Param{Name: "every", Default: "100ms", Help: "steady access period (detection and false-expiry tables)"},
	scenarios.Param{Name: "fe-term", Default: "2s", Help: "lease term of the false-expiry table"},
	scenarios.Param{Name: "fe-means", Default: "0.25,0.5,0.75,1,1.5,2", Help: "mean disconnection lengths, in lease terms"},
	scenarios.Param{Name: "lambda", Default: "2", Help: "Poisson access rate per second (renewal-traffic table)"},
	scenarios.Param{Name: "traffic-terms", Default: "100ms,200ms,500ms,1s,2s,5s,10s,20s", Help: "lease terms of the renewal-traffic table"},
	scenarios.Param{Name: "traffic-time", Default: "120s", Help: "virtual duration of each renewal-traffic run"},
)

// detectionPoint is a point of one of the three tables: kind "delay" (a lease term),
// "false-expiry" (a distribution and a mean length) or "traffic" (a term and a
// policy); index is the term's or the mean's place in its list (it seeds the runs).
type detectionPoint struct {
	kind   string
	index  int
	term   time.Duration
	dist   string
	mean   float64
	policy string
}

// detectionRun is what one run measured: the sides' expiries after a parting (s after
// it), the discovery layer's notice (found, s), a false expiry and the disconnection's
// length, and lease-management operations per second.
type detectionRun struct {
	srv, cli, down float64
	found          bool
	expired        bool
	length         float64
	perS           float64
}

type detectionResult = experiment.Result[detectionPoint, detectionRun]

var detectionDef = experiment.Def[detectionPoint, detectionRun]{Name: "leasing/detection", Params: detectionParams, Sweep: detectionSweep}

func detection(x *scenarios.Exp) ([]*reports.Table, error) { return detectionDef.Run(x) }

// claims judges the paper's claims (and Gray & Cheriton's, which it cites) on the
// three tables' results.
func (d *detector) claims(rs []*detectionResult, feTerm time.Duration, lambda float64, dur time.Duration) []reports.Claim {
	var out []reports.Claim
	late, worst, n := 0, 0.0, 0
	for _, r := range rs {
		if r.Point.kind != "delay" {
			continue
		}
		term := secs(r.Point.term)
		for _, x := range r.Runs {
			n++
			worst = max(worst, x.srv/term)
			if x.srv > term+secs(d.nw.Latency.Max) {
				late++
			}
		}
	}
	out = append(out, reports.Claim{Source: "Gonzalez Boix et al. §3, §4.2 (LS-1, LS-2)",
		Paper:    "A permanent disconnection is detected when the lease expires: at the latest one lease term after the last renewal.",
		Measured: fmt.Sprintf("%d of %d partings noticed later than a term (and a latency) after the parting; the latest at %.3f terms", late, n, worst),
		Verdict:  reports.Judge(late == 0)})
	// LS-P3: no disconnection shorter than the lease, less what the model subtracts,
	// expires it.
	c := d.every/2 + d.cfg.Beacon/2 + 2*d.nw.Latency.MeanDelay()
	worstC := d.every + d.cfg.Beacon + 2*d.nw.Latency.Max
	short, total := 0, 0
	shortest := math.Inf(1)
	for _, r := range rs {
		if r.Point.kind != "false-expiry" {
			continue
		}
		for _, x := range r.Runs {
			if x.expired {
				total++
				shortest = min(shortest, x.length)
				if x.length < secs(feTerm-worstC) {
					short++
				}
			}
		}
	}
	out = append(out, reports.Claim{Source: "Gonzalez Boix et al. §3, §4 (LS-P3)",
		Paper: "A disconnection shorter than the lease is transient: the lease survives it.",
		Measured: fmt.Sprintf("%d of %d expiries came from a disconnection shorter than the term less an access period, a beacon period and two latencies (%v); the shortest that expired lasted %.3g s (term %v, model threshold term − %v)",
			short, total, feTerm-worstC, shortest, feTerm, c),
		Verdict: reports.Judge(short == 0)})
	// Gray & Cheriton's extend-on-access load.
	within, terms, dev := 0, 0, 0.0
	first := 1 / dur.Seconds()
	for _, r := range rs {
		if r.Point.kind != "traffic" || r.Point.policy != "on-demand" || 10*r.Point.term > dur {
			continue // a run of fewer than 10 terms is no steady state
		}
		terms++
		m := r.Mean(func(x detectionRun) float64 { return x.perS })
		model := lambda/(1+lambda*secs(r.Point.term)) + first
		dev = max(dev, math.Abs(m.V-model)/model)
		if m.Lo <= model && model <= m.Hi || math.Abs(m.V-model) <= 0.05*model {
			within++
		}
	}
	out = append(out, reports.Claim{Source: "Gray & Cheriton 1989, cited in §3",
		Paper:    fmt.Sprintf("Extending a lease on every access costs λ/(1+λ·term) renewals a second (λ = %g/s).", lambda),
		Measured: fmt.Sprintf("the model lies within the 95%% interval or 5 %% of the mean at %d of %d terms (largest deviation %.1f %%; terms up to a tenth of the %v run: longer ones see too few leases for a steady state)", within, terms, 100*dev, dur),
		Verdict:  reports.Judge(within == terms)})
	return out
}

// detector is what every run of the experiment shares.
type detector struct {
	cfg   *ls.Config
	nw    sim.Network
	ppm   int64
	every time.Duration
}

// inputf is a bad-parameter error: the command line exits 2 on it with this one line.
func inputf(format string, a ...any) error {
	return &scenarios.InputError{Err: fmt.Errorf(format, a...)}
}

func floats(p *scenarios.Params, name string) ([]float64, error) {
	var out []float64
	for _, s := range p.List(name) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !(f > 0) || f > 100 {
			return nil, inputf("parameter %s: %q is not a positive number of at most 100", name, s)
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, inputf("parameter %s: at least one number", name)
	}
	return out, nil
}

func detectionSweep(x *scenarios.Exp) (*experiment.Sweep[detectionPoint, detectionRun], error) {
	p := x.Params
	cfg, nw, err := runtimeConfig(p, 2, ls.Policy{})
	if err != nil {
		return nil, err
	}
	runs := p.IntRange("runs", 1, 10_000)
	every := p.PositiveDuration("every")
	feTerm := p.PositiveDuration("fe-term")
	lambda := p.Float("lambda")
	ttime := p.PositiveDuration("traffic-time")
	ppm := int64(p.IntRange("drift-ppm", 0, faults.MaxDriftPPM))
	if p.Err() != nil {
		return nil, &scenarios.InputError{Err: p.Err()}
	}
	if !(lambda > 0) || lambda > 1000 {
		return nil, inputf("parameter lambda=%v: want a positive rate of at most 1000 per second", lambda)
	}
	terms, tterms := p.DurationList("terms"), p.DurationList("traffic-terms")
	if p.Err() != nil {
		return nil, &scenarios.InputError{Err: p.Err()}
	}
	means, err := floats(p, "fe-means")
	if err != nil {
		return nil, err
	}
	// The experiment measures leases its meter keeps alive by use until the devices
	// part: accesses and message latency must be well inside the shortest term, or
	// leases expire from disuse and every run reads as a false expiry. The virtual
	// durations are bounded so that a run's history fits in memory.
	shortest := min(feTerm, slices.Min(terms))
	switch {
	case every > shortest/2:
		return nil, inputf("parameters every, terms and fe-term: every %v is more than half the shortest lease term (%v): the meter keeps its leases alive by use", every, shortest)
	case nw.Latency.Max > min(shortest, slices.Min(tterms))/4:
		return nil, inputf("parameters lat-max, terms, fe-term and traffic-terms: lat-max %v is more than a quarter of the shortest lease term (%v)", nw.Latency.Max, min(shortest, slices.Min(tterms)))
	case slices.Max(terms) > time.Minute:
		return nil, inputf("parameter terms: %v is longer than 1m", slices.Max(terms))
	case feTerm > time.Minute:
		return nil, inputf("parameter fe-term=%v: want at most 1m", feTerm)
	case slices.Max(tterms) > time.Minute:
		return nil, inputf("parameter traffic-terms: %v is longer than 1m", slices.Max(tterms))
	case ttime > time.Hour:
		return nil, inputf("parameter traffic-time=%v: want at most 1h", ttime)
	case lambda*ttime.Seconds() > 1e6:
		return nil, inputf("parameters lambda and traffic-time: %.0f accesses per run, more than a million", lambda*ttime.Seconds())
	}
	d := &detector{cfg: cfg, nw: nw, ppm: ppm, every: every}
	var points []detectionPoint
	for ti, term := range terms {
		points = append(points, detectionPoint{kind: "delay", index: ti, term: term})
	}
	for _, dist := range []string{"exponential", "uniform"} {
		for mi, m := range means {
			points = append(points, detectionPoint{kind: "false-expiry", index: mi, term: feTerm, dist: dist, mean: m})
		}
	}
	for ti, term := range tterms {
		for _, pol := range []string{"on-demand", "on-call", "periodic"} {
			points = append(points, detectionPoint{kind: "traffic", index: ti, term: term, policy: pol})
		}
	}
	return &experiment.Sweep[detectionPoint, detectionRun]{
		Points: points,
		RunsOf: func(pt detectionPoint) int {
			return runs
		},
		Seed: func(pt detectionPoint, i int) uint64 {
			stream := map[string]string{"delay": "detection-delay", "false-expiry": "false-expiry-" + pt.dist, "traffic": "traffic-" + pt.policy}[pt.kind]
			return sim.StreamSeed(x.Seed, stream, int64(pt.index), int64(i))
		},
		Run: func(pt detectionPoint, seed uint64) (detectionRun, error) {
			switch pt.kind {
			case "delay":
				return d.delayRun(pt.term, seed)
			case "false-expiry":
				return d.falseExpiryRun(pt, seed)
			}
			return d.trafficRun(pt, lambda, ttime, seed)
		},
		Tables: []experiment.Table[detectionPoint, detectionRun]{
			d.delayTable(), d.falseExpiryTable(feTerm), {Make: d.trafficTables(lambda, ttime)},
		},
		Claims: func(rs []*detectionResult) []reports.Claim { return d.claims(rs, feTerm, lambda, ttime) },
	}, nil
}

// run executes one Meter run and checks every leasing property on it.
func (d *detector) run(seed uint64, mc *ls.MeterConfig, plan faults.Plan, until time.Duration) (*sim.Result, error) {
	if err := mc.Validate(); err != nil {
		return nil, err
	}
	names := []string{"S", "C"}
	clocks := Clocks(seed, 2, d.ppm)
	nodes := []sim.NodeSpec{
		{Name: "S", New: ls.NewDevice(d.cfg, func() ls.App { return &ls.Meter{Cfg: mc} })},
		{Name: "C", New: ls.NewDevice(d.cfg, func() ls.App { return &ls.Meter{Cfg: mc} })},
	}
	k, err := sim.New(sim.Config{Seed: seed, Nodes: nodes, Network: d.nw, Clocks: clocks, Until: sim.Time(until), MaxTime: sim.Time(until + time.Second)})
	if err != nil {
		return nil, err
	}
	if err := plan.Apply(k); err != nil {
		return nil, err
	}
	res := k.Run()
	e := newEnv(newGround(plan, names, clocks, d.nw), d.cfg)
	st := plan.Settled()
	run := &checker.Run{Result: res, Scenario: "leasing/detection", Settled: st.At, Down: st.Down, Split: st.Split}
	for _, v := range checker.Evaluate(run, append(e.leasingProperties(), meterUses)) {
		if v.Failed() {
			return nil, fmt.Errorf("leasing/detection: run with seed %d (policy %s, term %v, faults %s) violates %s", seed, mc.Policy, mc.Term, plan, v)
		}
	}
	return res, nil
}

func cutPlan(at, length time.Duration) faults.Plan {
	evs := []faults.Event{
		{At: faults.Duration(at), Kind: "cut", From: "S", To: "C"},
		{At: faults.Duration(at), Kind: "cut", From: "C", To: "S"},
	}
	if length > 0 {
		evs = append(evs,
			faults.Event{At: faults.Duration(at + length), Kind: "restore", From: "S", To: "C"},
			faults.Event{At: faults.Duration(at + length), Kind: "restore", From: "C", To: "S"})
	}
	return faults.Plan{Events: evs}
}

// meterEnds returns when the meter lease's server and client sides ended (global
// time), and how.
func meterEnds(res *sim.Result) (srv, cli sim.Time, srvHow, cliHow ls.End, ok bool) {
	var id ls.RefID
	for _, o := range res.History {
		if g, isG := o.Value.(*ls.ObsGrant); isG && g.Object == "meter.obj" {
			id = g.Lease
			break
		}
	}
	if id.IsZero() {
		return 0, 0, 0, 0, false
	}
	var sOK, cOK bool
	for _, o := range res.History {
		if e, isE := o.Value.(*ls.ObsEnd); isE && e.Lease == id {
			if e.Side == ls.Server && !sOK {
				srv, srvHow, sOK = o.Time, e.How, true
			}
			if e.Side == ls.Client && !cOK {
				cli, cliHow, cOK = o.Time, e.How, true
			}
		}
	}
	return srv, cli, srvHow, cliHow, sOK && cOK
}

// plainMean is the sum over the count (NaN for none): the tables' plain means.
func plainMean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

func secs(d time.Duration) float64 { return d.Seconds() }

// delayRun: a client uses a renew-on-call lease steadily; the devices part for good
// at a random moment; how long until each side's lease expires (the permanent
// disconnection detected)?
func (d *detector) delayRun(term time.Duration, seed uint64) (detectionRun, error) {
	r := sim.Stream(seed, "cut")
	at := 2*time.Second + time.Duration(r.Int64Range(0, int64(time.Second)))
	mc := &ls.MeterConfig{Server: 0, Policy: "on-call", Term: term, Every: d.every}
	res, err := d.run(seed, mc, cutPlan(at, 0), at+2*term+2*time.Second)
	if err != nil {
		return detectionRun{}, err
	}
	s, c, sh, ch, ok := meterEnds(res)
	if !ok || sh != ls.Expired || ch != ls.Expired {
		return detectionRun{}, fmt.Errorf("leasing/detection: seed %d: the lease did not expire at both sides after the devices parted (%v %v %v)", seed, ok, sh, ch)
	}
	out := detectionRun{srv: secs(s.Sub(sim.Time(at))), cli: secs(c.Sub(sim.Time(at)))}
	for _, o := range res.History {
		if pe, isP := o.Value.(*ls.ObsPeer); isP && !pe.Up && o.Node == 1 && o.Time >= sim.Time(at) {
			out.down, out.found = secs(o.Time.Sub(sim.Time(at))), true
			break
		}
	}
	return out, nil
}

// detectionModel is the expected delay from a parting to the grantor's expiry (s):
// a term after the last renewal, which came on average half an access period before
// the parting, plus the renewal's mean latency.
func (d *detector) detectionModel(term float64) float64 {
	return term - secs(d.every)/2 + secs(d.nw.Latency.MeanDelay())
}

func (d *detector) delayTable() experiment.Table[detectionPoint, detectionRun] {
	return experiment.Table[detectionPoint, detectionRun]{
		Title:   "Detection delay of a permanent disconnection vs lease term",
		Columns: []string{"term_s", "runs", "server_mean_s", "server_lo_s", "server_hi_s", "server_min_s", "server_max_s", "client_mean_s", "client_max_s", "server_mean_over_term", "ratio_lo", "ratio_hi", "model_over_term", "discovery_down_mean_s"},
		Where:   func(pt detectionPoint) bool { return pt.kind == "delay" },
		Row: func(r *detectionResult) []any {
			srv, cli := r.Values(func(x detectionRun) float64 { return x.srv }), r.Values(func(x detectionRun) float64 { return x.cli })
			var down []float64
			for _, x := range r.Runs {
				if x.found {
					down = append(down, x.down)
				}
			}
			m, term := experiment.Mean(srv), secs(r.Point.term)
			return []any{term, r.N(), m.Cells(), slices.Min(srv), slices.Max(srv), plainMean(cli), slices.Max(cli), m.V / term, m.Lo / term, m.Hi / term, d.detectionModel(term) / term, plainMean(down)}
		},
		Notes: []string{
			fmt.Sprintf("Renew-on-call lease used every %v; the devices part for good at a uniform time in [2s,3s].", d.every),
			"Expected: the grantor expires one term after its last renewal (term − U(0, access period) after the parting), the holder one latency later; the discovery layer notices the silence much sooner but cannot tell a transient disconnection from a permanent one.",
		},
		Figures: []reports.Figure{{Name: "ls-detection", Title: "Time for the grantor to notice a permanent parting, in lease terms",
			X: "term_s", Y: "server_mean_over_term", Low: "ratio_lo", High: "ratio_hi", XLabel: "lease term (s)", YLabel: "parting → grantor's expiry, in terms",
			LogX: true, Points: true,
			Curves: []reports.Curve{
				{Name: fmt.Sprintf("model: (term − %v/2 + latency) / term — the last renewal is on average half an access period before the parting", d.every), F: func(x float64) float64 { return d.detectionModel(x) / x }},
				{Name: "one term", F: func(float64) float64 { return 1 }},
			},
			Caption: "LS-1/LS-2: the grantor expires the lease one term after its last renewal, and the last renewal came on average half an access period before the parting: the delay is a term less half an access period, so its ratio to the term climbs towards 1 as the term grows (the log-log plot of the delay hid this). Means with 95% confidence intervals over runs."}},
	}
}

// falseExpiryRun: a client uses a renew-on-call lease steadily; one transient
// disconnection of random length; does the lease expire although the devices come
// back?
func (d *detector) falseExpiryRun(pt detectionPoint, seed uint64) (detectionRun, error) {
	mean := time.Duration(pt.mean * float64(pt.term))
	r := sim.Stream(seed, "cut")
	at := 2*time.Second + time.Duration(r.Int64Range(0, int64(time.Second)))
	var length time.Duration
	if pt.dist == "exponential" {
		length = time.Duration(r.ExpFloat64() * float64(mean))
	} else {
		length = time.Duration(r.Int64Range(0, int64(2*mean)))
	}
	length = max(length, time.Millisecond)
	mc := &ls.MeterConfig{Server: 0, Policy: "on-call", Term: pt.term, Every: d.every}
	res, err := d.run(seed, mc, cutPlan(at, length), at+length+2*pt.term+2*time.Second)
	if err != nil {
		return detectionRun{}, err
	}
	_, _, sh, ch, ok := meterEnds(res)
	return detectionRun{expired: ok && (sh == ls.Expired || ch == ls.Expired), length: secs(length)}, nil
}

func (d *detector) falseExpiryTable(term time.Duration) experiment.Table[detectionPoint, detectionRun] {
	// A disconnection of length D expires the lease when D plus the time since the last
	// renewal plus the reconnection delay exceeds the term: threshold ~ term - c.
	c := d.every/2 + d.cfg.Beacon/2 + 2*d.nw.Latency.MeanDelay()
	thr := secs(term - c)
	return experiment.Table[detectionPoint, detectionRun]{
		Title:   "False expiry rate vs disconnection length distribution",
		Columns: []string{"distribution", "mean_over_term", "runs", "expiries", "false_expiry_rate", "rate_lo", "rate_hi", "model_rate", "shortest_expiring_s", "longest_surviving_s"},
		Where:   func(pt detectionPoint) bool { return pt.kind == "false-expiry" },
		Row: func(r *detectionResult) []any {
			expiries := 0
			shortest, longest := math.Inf(1), 0.0
			for _, x := range r.Runs {
				if x.expired {
					expiries++
					shortest = min(shortest, x.length)
				} else {
					longest = max(longest, x.length)
				}
			}
			mean := secs(time.Duration(r.Point.mean * float64(term)))
			model := math.Exp(-thr / mean)
			if r.Point.dist == "uniform" {
				model = max(0, 1-thr/(2*mean))
			}
			sh := "-"
			if !math.IsInf(shortest, 1) {
				sh = fmt.Sprintf("%.4g", shortest)
			}
			return []any{r.Point.dist, r.Point.mean, r.N(), expiries, experiment.Wilson(expiries, r.N()).Cells(), model, sh, longest}
		},
		Notes: []string{
			fmt.Sprintf("Renew-on-call lease of %v used every %v; one disconnection at a uniform time in [2s,3s], then back in range.", term, d.every),
			fmt.Sprintf("Every expiry here is a false expiry (the devices came back). Model: P(length > term − %v), the term minus half an access period, half a beacon period and two latencies (the grantor's last renewal, the holder's rediscovery and the flushed message).", c),
		},
		Figures: []reports.Figure{{Name: "ls-false-expiry", Title: "False expiries vs mean disconnection length",
			X: "mean_over_term", Y: "false_expiry_rate", Low: "rate_lo", High: "rate_hi", Series: "distribution", Legend: "disconnection lengths drawn from", Points: true,
			XLabel: "mean disconnection length / lease term", YLabel: "share of runs whose lease expired",
			Curves: []reports.Curve{
				{Name: "model, exponential", Series: "exponential", F: func(x float64) float64 { return math.Exp(-thr / (x * secs(term))) }},
				{Name: "model, uniform", Series: "uniform", F: func(x float64) float64 { return max(0, 1-thr/(2*x*secs(term))) }},
			},
			Caption: fmt.Sprintf("LS-P3: a transient disconnection expires the lease only when it outlasts the term minus %v (the last renewal's age, rediscovery, two latencies); measured shares with 95%% Wilson intervals against that model.", c)}},
	}
}

// trafficRun: lease-management operations per second (acquisitions and explicit
// renewals) of one policy under Poisson accesses.
func (d *detector) trafficRun(pt detectionPoint, lambda float64, dur time.Duration, seed uint64) (detectionRun, error) {
	mc := &ls.MeterConfig{Server: 0, Policy: pt.policy, Term: pt.term, Lambda: lambda, Reacquire: true}
	res, err := d.run(seed, mc, faults.Plan{}, dur)
	if err != nil {
		return detectionRun{}, err
	}
	n := 0
	for _, o := range res.History {
		switch v := o.Value.(type) {
		case *ls.ObsGrant:
			if v.Object == "meter.obj" {
				n++
			}
		case *ls.ObsSend:
			if v.Op == ls.OpRenew {
				n++
			}
		}
	}
	return detectionRun{perS: float64(n) / dur.Seconds()}, nil
}

// trafficTables: lease-management traffic per second vs lease term for three policies
// under Poisson accesses (Gray & Cheriton's load-versus-term curve), wide and long.
func (d *detector) trafficTables(lambda float64, dur time.Duration) func([]*detectionResult) ([]*reports.Table, error) {
	return func(rs []*detectionResult) ([]*reports.Table, error) {
		t := reports.NewTable("Renewal traffic vs lease term",
			"term_s", "lambda_term", "on_demand_per_s", "gc_model_per_s", "on_demand_per_access", "on_call_per_s", "on_call_model_per_s", "periodic_per_s", "periodic_model_per_s")
		long := reports.NewTable("Renewal traffic per policy",
			"policy", "term_s", "runs", "per_s", "lo", "hi", "model_per_s")
		first := 1 / dur.Seconds() // the first acquisition of every run
		models := map[string]func(term float64) float64{
			"on-demand": func(x float64) float64 { return lambda/(1+lambda*x) + first },
			"on-call":   func(x float64) float64 { return lambda*math.Exp(-lambda*x) + first },
			"periodic":  func(x float64) float64 { return 2/x + first },
		}
		long.Figures = []reports.Figure{{Name: "ls-traffic", Title: "Lease-management traffic vs lease term",
			X: "term_s", Y: "per_s", Low: "lo", High: "hi", Series: "policy", Legend: "renewal policy", LogX: true, LogY: true, Points: true,
			XLabel: "lease term (s)", YLabel: "acquisitions + renewals per second",
			Curves: []reports.Curve{
				{Name: "Gray & Cheriton, on-demand", Series: "on-demand", F: models["on-demand"]},
				{Name: "model, on-call", Series: "on-call", F: models["on-call"]},
				{Name: "model, periodic", Series: "periodic", F: models["periodic"]},
			},
			Caption: fmt.Sprintf("Poisson accesses at %g/s: on-demand extension follows Gray and Cheriton's λ/(1+λ·term); renewals piggybacked on calls cost only the gaps longer than a term; periodic renewal 2/term. Means over runs with 95%% confidence intervals; dashed: the models.", lambda)}}
		rates := map[string]float64{}
		for _, r := range rs {
			if r.Point.kind != "traffic" {
				continue
			}
			per := r.Values(func(x detectionRun) float64 { return x.perS })
			term := secs(r.Point.term)
			rates[r.Point.policy] = plainMean(per)
			long.Add(r.Point.policy, term, r.N(), experiment.Mean(per).Cells(), models[r.Point.policy](term))
			if r.Point.policy == "periodic" { // the term's last policy: its row
				lt := lambda * term
				t.Add(term, lt, rates["on-demand"], lambda/(1+lt)+first, rates["on-demand"]/lambda,
					rates["on-call"], lambda*math.Exp(-lt)+first, rates["periodic"], 2/term+first)
			}
		}
		t.Notes = append(t.Notes,
			fmt.Sprintf("Poisson accesses at %g/s for %v; lease-management operations (acquisitions plus explicit renewals) per second; the models include the run's first acquisition (1/duration).", lambda, dur),
			"on-demand is Gray & Cheriton's extend-on-access: load λ/(1+λ·term), steep at short terms, flat beyond a few access intervals; on-call piggybacks renewals on accesses (only gaps longer than the term cost a new lease); periodic renews every term/2 (2/term).")
		return []*reports.Table{t, long}, nil
	}
}

// meterUses: the meter's client sends one "use" per access at most (an access that
// finds no live lease waits for the acquisition it starts), so the accesses the
// traffic table counts are the accesses made.
var meterUses = checker.Property{Name: "meter/one-use-per-access", Class: checker.Safety, Check: func(r *checker.Run) error {
	accesses, uses := 0, 0
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case ls.MeterAccess:
			accesses++
		case *ls.ObsSend:
			if v.Method == "use" {
				uses++
				if uses > accesses {
					return fmt.Errorf("%s sent use #%d after %d accesses", r.Final[o.Node].Name, uses, accesses)
				}
			}
		}
	}
	r.Note(fmt.Sprintf("%d uses for %d accesses", uses, accesses))
	return nil
}}
