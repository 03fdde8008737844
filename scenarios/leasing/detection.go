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

type detector struct {
	x      *scenarios.Exp
	cfg    *ls.Config
	nw     sim.Network
	ppm    int64
	every  time.Duration
	done   int
	total  int
	checks int
	extra  []*reports.Table // tables in long form for figures (the traffic per policy)
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

func runDetection(x *scenarios.Exp) ([]*reports.Table, error) {
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
	d := &detector{x: x, cfg: cfg, nw: nw, ppm: ppm, every: every}
	d.total = len(terms)*runs + 2*len(means)*runs + 3*len(tterms)*max(1, runs/8)
	t1, err := d.delayTable(terms, runs)
	if err != nil {
		return nil, err
	}
	t2, err := d.falseExpiryTable(feTerm, means, runs)
	if err != nil {
		return nil, err
	}
	t3, err := d.trafficTable(tterms, lambda, ttime, max(1, runs/8))
	if err != nil {
		return nil, err
	}
	return append([]*reports.Table{t1, t2, t3}, d.extra...), nil
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
	d.checks++
	d.done++
	if d.x.Progress != nil {
		d.x.Progress(d.done, d.total)
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

type stat struct{ xs []float64 }

func (s *stat) add(x float64) { s.xs = append(s.xs, x) }
func (s *stat) mean() float64 {
	if len(s.xs) == 0 {
		return math.NaN()
	}
	t := 0.0
	for _, x := range s.xs {
		t += x
	}
	return t / float64(len(s.xs))
}
func (s *stat) min() float64 { return slices.Min(s.xs) }
func (s *stat) max() float64 { return slices.Max(s.xs) }

func secs(d time.Duration) float64 { return d.Seconds() }

// delayTable: a client uses a renew-on-call lease steadily; the devices part for good
// at a random moment; how long until each side's lease expires (the permanent
// disconnection detected)?
func (d *detector) delayTable(terms []time.Duration, runs int) (*reports.Table, error) {
	t := reports.NewTable("Detection delay of a permanent disconnection vs lease term",
		"term_s", "runs", "server_mean_s", "server_lo_s", "server_hi_s", "server_min_s", "server_max_s", "client_mean_s", "client_max_s", "server_mean_over_term", "discovery_down_mean_s")
	t.Figures = []reports.Figure{{Name: "ls-detection", Title: "Time for the grantor to notice a permanent parting",
		X: "term_s", Y: "server_mean_s", Low: "server_lo_s", High: "server_hi_s", XLabel: "lease term (s)", YLabel: "parting → grantor's expiry (s)",
		LogX: true, LogY: true, Points: true,
		Curves:  []reports.Curve{{Name: "one term", F: func(x float64) float64 { return x }}, {Name: "half a term", F: func(x float64) float64 { return x / 2 }}},
		Caption: "LS-1/LS-2: the grantor expires the lease one term after its last renewal, so a permanent parting is noticed between term − access period and one term after it (means with 95% confidence intervals)."}}
	for ti, term := range terms {
		var srv, cli, down stat
		for i := 0; i < runs; i++ {
			seed := sim.StreamSeed(d.x.Seed, "detection-delay", int64(ti), int64(i))
			r := sim.Stream(seed, "cut")
			at := 2*time.Second + time.Duration(r.Int64Range(0, int64(time.Second)))
			mc := &ls.MeterConfig{Server: 0, Policy: "on-call", Term: term, Every: d.every}
			res, err := d.run(seed, mc, cutPlan(at, 0), at+2*term+2*time.Second)
			if err != nil {
				return nil, err
			}
			s, c, sh, ch, ok := meterEnds(res)
			if !ok || sh != ls.Expired || ch != ls.Expired {
				return nil, fmt.Errorf("leasing/detection: seed %d: the lease did not expire at both sides after the devices parted (%v %v %v)", seed, ok, sh, ch)
			}
			srv.add(secs(s.Sub(sim.Time(at))))
			cli.add(secs(c.Sub(sim.Time(at))))
			for _, o := range res.History {
				if pe, isP := o.Value.(*ls.ObsPeer); isP && !pe.Up && o.Node == 1 && o.Time >= sim.Time(at) {
					down.add(secs(o.Time.Sub(sim.Time(at))))
					break
				}
			}
		}
		m, lo, hi := reports.MeanCI(srv.xs)
		t.Add(secs(term), runs, m, lo, hi, srv.min(), srv.max(), cli.mean(), cli.max(), m/secs(term), down.mean())
	}
	t.Notes = append(t.Notes,
		fmt.Sprintf("Renew-on-call lease used every %v; the devices part for good at a uniform time in [2s,3s].", d.every),
		"Expected: the grantor expires one term after its last renewal (term - U(0, period) after the parting), the holder one latency later;",
		"the discovery layer notices the silence much sooner but cannot tell a transient disconnection from a permanent one.")
	return t, nil
}

// falseExpiryTable: a client uses a renew-on-call lease steadily; one transient
// disconnection of random length; how often does the lease expire although the devices
// come back?
func (d *detector) falseExpiryTable(term time.Duration, means []float64, runs int) (*reports.Table, error) {
	t := reports.NewTable("False expiry rate vs disconnection length distribution",
		"distribution", "mean_over_term", "runs", "expiries", "false_expiry_rate", "rate_lo", "rate_hi", "model_rate", "shortest_expiring_s", "longest_surviving_s")
	// A disconnection of length D expires the lease when D plus the time since the last
	// renewal plus the reconnection delay exceeds the term: threshold ~ term - c.
	c := d.every/2 + d.cfg.Beacon/2 + 2*d.nw.Latency.MeanDelay()
	thr := secs(term - c)
	t.Figures = []reports.Figure{{Name: "ls-false-expiry", Title: "False expiries vs mean disconnection length",
		X: "mean_over_term", Y: "false_expiry_rate", Low: "rate_lo", High: "rate_hi", Series: "distribution", Points: true,
		XLabel: "mean disconnection length / lease term", YLabel: "share of runs whose lease expired",
		Curves: []reports.Curve{
			{Name: "model, exponential", F: func(x float64) float64 { return math.Exp(-thr / (x * secs(term))) }},
			{Name: "model, uniform", F: func(x float64) float64 { return max(0, 1-thr/(2*x*secs(term))) }},
		},
		Caption: fmt.Sprintf("LS-P3: a transient disconnection expires the lease only when it outlasts the term minus %v (the last renewal's age, rediscovery, two latencies); measured shares with 95%% Wilson intervals against that model.", c)}}
	for _, dist := range []string{"exponential", "uniform"} {
		for mi, m := range means {
			mean := time.Duration(m * float64(term))
			expiries := 0
			shortest, longest := math.Inf(1), 0.0
			for i := 0; i < runs; i++ {
				seed := sim.StreamSeed(d.x.Seed, "false-expiry-"+dist, int64(mi), int64(i))
				r := sim.Stream(seed, "cut")
				at := 2*time.Second + time.Duration(r.Int64Range(0, int64(time.Second)))
				var length time.Duration
				if dist == "exponential" {
					length = time.Duration(r.ExpFloat64() * float64(mean))
				} else {
					length = time.Duration(r.Int64Range(0, int64(2*mean)))
				}
				length = max(length, time.Millisecond)
				mc := &ls.MeterConfig{Server: 0, Policy: "on-call", Term: term, Every: d.every}
				res, err := d.run(seed, mc, cutPlan(at, length), at+length+2*term+2*time.Second)
				if err != nil {
					return nil, err
				}
				_, _, sh, ch, ok := meterEnds(res)
				if ok && (sh == ls.Expired || ch == ls.Expired) {
					expiries++
					shortest = min(shortest, secs(length))
				} else {
					longest = max(longest, secs(length))
				}
			}
			model := math.Exp(-thr / secs(mean))
			if dist == "uniform" {
				model = max(0, 1-thr/(2*secs(mean)))
			}
			sh := "-"
			if !math.IsInf(shortest, 1) {
				sh = fmt.Sprintf("%.4g", shortest)
			}
			rate, lo, hi := reports.Wilson(expiries, runs)
			t.Add(dist, m, runs, expiries, rate, lo, hi, model, sh, longest)
		}
	}
	t.Notes = append(t.Notes,
		fmt.Sprintf("Renew-on-call lease of %v used every %v; one disconnection at a uniform time in [2s,3s], then back in range.", term, d.every),
		fmt.Sprintf("Every expiry here is a false expiry (the devices came back). Model: P(length > term - %v), the term minus half an access", c),
		"period, half a beacon period and two latencies (the grantor's last renewal, the holder's rediscovery and the flushed message).")
	return t, nil
}

// trafficTable: lease-management traffic per second vs lease term for three policies
// under Poisson accesses (Gray & Cheriton's load-versus-term curve).
func (d *detector) trafficTable(terms []time.Duration, lambda float64, dur time.Duration, runs int) (*reports.Table, error) {
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
		X: "term_s", Y: "per_s", Low: "lo", High: "hi", Series: "policy", LogX: true, LogY: true, Points: true,
		XLabel: "lease term (s)", YLabel: "acquisitions + renewals per second",
		Curves: []reports.Curve{
			{Name: "Gray & Cheriton, on-demand", F: models["on-demand"]},
			{Name: "model, on-call", F: models["on-call"]},
			{Name: "model, periodic", F: models["periodic"]},
		},
		Caption: fmt.Sprintf("Poisson accesses at %g/s: on-demand extension follows Gray and Cheriton's λ/(1+λ·term); renewals piggybacked on calls cost only the gaps longer than a term; periodic renewal 2/term. Means over runs with 95%% confidence intervals; dashed: the models.", lambda)}}
	for ti, term := range terms {
		rates := map[string]float64{}
		for _, pol := range []string{"on-demand", "on-call", "periodic"} {
			total := 0.0
			var per []float64
			for i := 0; i < runs; i++ {
				seed := sim.StreamSeed(d.x.Seed, "traffic-"+pol, int64(ti), int64(i))
				mc := &ls.MeterConfig{Server: 0, Policy: pol, Term: term, Lambda: lambda, Reacquire: true}
				res, err := d.run(seed, mc, faults.Plan{}, dur)
				if err != nil {
					return nil, err
				}
				// Lease management: acquisitions (grants) and explicit renewals.
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
				total += float64(n) / dur.Seconds()
				per = append(per, float64(n)/dur.Seconds())
			}
			rates[pol] = total / float64(runs)
			m, lo, hi := reports.MeanCI(per)
			long.Add(pol, secs(term), runs, m, lo, hi, models[pol](secs(term)))
		}
		lt := lambda * secs(term)
		t.Add(secs(term), lt, rates["on-demand"], lambda/(1+lt)+first, rates["on-demand"]/lambda,
			rates["on-call"], lambda*math.Exp(-lt)+first, rates["periodic"], 2/secs(term)+first)
	}
	t.Notes = append(t.Notes,
		fmt.Sprintf("Poisson accesses at %g/s for %v; lease-management operations (acquisitions plus explicit renewals) per second;", lambda, dur),
		"models include the run's first acquisition (1/duration).",
		"on-demand is Gray & Cheriton's extend-on-access: load lambda/(1+lambda*term), steep at short terms, flat beyond a few access intervals;",
		"on-call piggybacks renewals on accesses (only gaps longer than the term cost a new lease); periodic renews every term/2 (2/term).")
	d.extra = append(d.extra, long)
	return t, nil
}

func detection(x *scenarios.Exp) ([]*reports.Table, error) { return runDetection(x) }

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
