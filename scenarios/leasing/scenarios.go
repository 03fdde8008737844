package lsscen

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// Common runtime parameters of every leasing scenario.
var runtimeParams = []scenarios.Param{
	{Name: "beacon", Default: "100ms", Help: "discovery beacon period"},
	{Name: "silence", Default: "350ms", Help: "a peer unheard this long counts as out of range"},
	{Name: "rto", Default: "150ms", Help: "retransmission period of unacknowledged messages"},
	{Name: "lat-min", Default: "2ms", Help: "minimum one-way latency"},
	{Name: "lat-max", Default: "12ms", Help: "maximum one-way latency"},
	{Name: "drift-ppm", Default: "2000", Help: "clock drift bound of every device (parts per million)"},
}

var musicParams = append(slices.Clone(runtimeParams),
	scenarios.Param{Name: "songs", Default: "60", Help: "songs in each library"},
	scenarios.Param{Name: "term", Default: "3s", Help: "session lease (renew-on-call, revoked by endExchange; 10 minutes in the paper)"},
	scenarios.Param{Name: "callback-term", Default: "3s", Help: "session callback's single-call lease"},
	scenarios.Param{Name: "threshold", Default: "0.3", Help: "match ratio from which the user is notified"},
	scenarios.Param{Name: "pattern", Default: "paper", Help: "session pattern: paper, or panic (a custom pattern with a bug)"},
)

var swarmParams = append(slices.Clone(runtimeParams),
	scenarios.Param{Name: "devices", Default: "2-5", Help: "number of devices: N, or A-B (each seed draws its own)"},
	scenarios.Param{Name: "songs", Default: "15", Help: "songs in each library"},
	scenarios.Param{Name: "term", Default: "2s", Help: "session lease, and the longest probe lease"},
	scenarios.Param{Name: "callback-term", Default: "drawn", Help: "the session callback's single-call lease: a duration, or drawn (the term on three seeds in four, twice the term on the others: a session can then come back after its own lease ended)"},
	scenarios.Param{Name: "again", Default: "1s", Help: "pause before a completed exchange is repeated"},
	scenarios.Param{Name: "horizon", Default: "12s", Help: "devices move until this time, then stay (unless they left)"},
	scenarios.Param{Name: "mean-up", Default: "4s", Help: "mean in-range period, limit (each seed draws its own)"},
	scenarios.Param{Name: "mean-down", Default: "3s", Help: "mean out-of-range period, limit (each seed draws its own)"},
	scenarios.Param{Name: "leave", Default: "0.3", Help: "probability limit that a device leaves for good"},
	scenarios.Param{Name: "skews", Default: "3", Help: "clock skews, limit"},
	scenarios.Param{Name: "max-step", Default: "10ms", Help: "largest clock step of a skew"},
	scenarios.Param{Name: "probe", Default: "1.5s", Help: "probe period (0 = no probe application)"},
	scenarios.Param{Name: "probe-rare", Default: "true", Help: "the probe also takes the rare paths: declined and abandoned calls, a server renewing what it revoked, a pattern that revokes before forwarding"},
	scenarios.Param{Name: "crashes", Default: "2", Help: "crash/restart pairs, limit (on half the seeds, each draws 0..limit and, one time in four, a device that crashes for good; none on the others)"},
	scenarios.Param{Name: "crash-send", Default: "0.5", Help: "probability limit that a crash is a crash-send (the device crashes part-way through a call's sends)"},
	scenarios.Param{Name: "dup", Default: "0", Help: "probability that the network duplicates a message while the devices move (outside the paper's FIFO links: a stale acknowledgement can arrive after a newer one)"},
	scenarios.Param{Name: "bug", Default: "none", Help: "deliberately broken variant (bugs.go): none, " + BugNames(Bugs, ", ")},
	scenarios.Param{Name: "neighbourhood", Default: "drawn", Help: "configured discovery neighbourhoods: all (every device beacons to every other) or drawn (on half the seeds each device leaves each other out with probability 1/3 and discovers it when it hears from it)"},
)

func init() {
	for _, v := range []struct {
		name, help string
		suite      bool
	}{
		{"stable", "music player (§2.1, LS-5): two devices exchange libraries, always in range", true},
		{"transient", "music player: a disconnection shorter than the lease in mid-exchange; the exchange completes", true},
		{"permanent", "music player: the devices part for good in mid-exchange; both sides expire and clean up", true},
	} {
		variant := v.name
		scenarios.Register(&scenarios.Scenario{
			Name: "leasing/music-" + variant, Help: v.help, Params: musicParams, Suite: v.suite,
			Build: func(b *scenarios.Build) (*scenarios.Setup, error) { return MusicSetup(b, variant, ls.Policy{}) },
		})
	}
	scenarios.Register(&scenarios.Scenario{
		Name:   "leasing/swarm",
		Help:   "devices moving in and out of range (random, from the seed), drifting clocks, music player and probe leases of every pattern",
		Params: swarmParams, Suite: true,
		Build: func(b *scenarios.Build) (*scenarios.Setup, error) {
			name := b.Params.String("bug")
			if name == "none" {
				return SwarmSetup(b, ls.Policy{})
			}
			bug, ok := BugNamed(name)
			if !ok {
				return nil, fmt.Errorf("parameter bug=%q: want none or one of %s", name, BugNames(Bugs, ", "))
			}
			return SwarmSetup(b, bug.Policy)
		},
	})
	scenarios.Register(&scenarios.Scenario{
		Name:       "leasing/detection",
		Help:       "measurements: detection delay vs lease term, false expiries vs disconnection lengths, renewal traffic vs lease term",
		Params:     detectionParams,
		Experiment: detection,
	})
}

func runtimeConfig(p *scenarios.Params, n int, policy ls.Policy) (*ls.Config, sim.Network, error) {
	cfg := &ls.Config{
		Beacon: p.PositiveDuration("beacon"), Silence: p.PositiveDuration("silence"),
		RTO: p.PositiveDuration("rto"), Policy: policy,
	}
	lo, hi := p.Duration("lat-min"), p.Duration("lat-max")
	if p.Err() != nil {
		return nil, sim.Network{}, &scenarios.InputError{Err: p.Err()}
	}
	if lo < 0 || hi < lo {
		return nil, sim.Network{}, inputf("parameters lat-min and lat-max: latency needs lat-min <= lat-max (got %v, %v)", lo, hi)
	}
	for i := 0; i < n; i++ {
		cfg.Peers = append(cfg.Peers, sim.NodeID(i))
	}
	if err := cfg.Validate(); err != nil {
		return nil, sim.Network{}, &scenarios.InputError{Err: fmt.Errorf("parameters beacon, silence and rto: %w", err)}
	}
	return cfg, sim.Network{Latency: sim.Uniform(lo, hi)}, nil
}

// libraries draws each device's library: songs distinct songs out of a universe twice
// that size, so libraries overlap about half.
func libraries(seed uint64, n, songs int) [][]ls.Song {
	libs := make([][]ls.Song, n)
	for i := range libs {
		r := sim.Stream(seed, "library", int64(i))
		perm := r.Perm(2 * songs)
		for _, s := range perm[:songs] {
			libs[i] = append(libs[i], ls.Song(s))
		}
	}
	return libs
}

func deviceNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = string(rune('A' + i))
	}
	return names
}

// MusicSetup builds one music-player run: variant is stable, transient or permanent;
// policy is the runtime's (the zero Policy is the protocol; see bugs.go).
func MusicSetup(b *scenarios.Build, variant string, policy ls.Policy) (*scenarios.Setup, error) {
	p := b.Params
	cfg, nw, err := runtimeConfig(p, 2, policy)
	if err != nil {
		return nil, err
	}
	songs := p.IntRange("songs", 1, 10_000)
	if p.Err() != nil {
		return nil, p.Err()
	}
	pc := &ls.PlayerConfig{
		Libraries:    libraries(b.Seed, 2, songs),
		Term:         p.PositiveDuration("term"),
		CallbackTerm: p.PositiveDuration("callback-term"),
		Threshold:    p.Float("threshold"),
		Pattern:      p.String("pattern"),
	}
	ppm := int64(p.IntRange("drift-ppm", 0, faults.MaxDriftPPM))
	if pc.Pattern != "paper" && pc.Pattern != "panic" {
		p.Reject("pattern", "paper or panic")
	}
	if p.Err() != nil {
		return nil, p.Err()
	}
	pc.MinLeft = 4*nw.Latency.Max + 10*time.Millisecond
	if err := pc.Validate(); err != nil {
		return nil, err
	}
	names := deviceNames(2)
	r := sim.Stream(b.Seed, "music-variant")
	at := 130*time.Millisecond + time.Duration(r.Int64Range(0, int64(100*time.Millisecond)))
	// The transient cut lasts 300 ms up to half the term (300 ms flat under a term
	// shorter than 600 ms, which drew from an empty range before).
	length := 300*time.Millisecond + time.Duration(r.Int64Range(0, int64(max(0, pc.Term/2-300*time.Millisecond))))
	plan, err := b.FaultPlan(func() (faults.Plan, error) {
		cut := func(at time.Duration, kind string) []faults.Event {
			return []faults.Event{
				{At: faults.Duration(at), Kind: kind, From: names[0], To: names[1]},
				{At: faults.Duration(at), Kind: kind, From: names[1], To: names[0]},
			}
		}
		switch variant {
		case "transient":
			return faults.Plan{Events: append(cut(at, "cut"), cut(at+length, "restore")...)}, nil
		case "permanent":
			return faults.Plan{Events: cut(at, "cut")}, nil
		}
		return stableFaults(b.Seed, names, ppm), nil
	})
	if err != nil {
		return nil, err
	}
	clocks := Clocks(b.Seed, 2, ppm)
	st := plan.Settled()
	until := sim.Time(max(time.Duration(st.At), at+length) + 2*max(pc.Term, pc.CallbackTerm) + 3*time.Second)
	nodes := make([]sim.NodeSpec, 2)
	for i := range nodes {
		nodes[i] = sim.NodeSpec{Name: names[i], New: ls.NewDevice(cfg, func() ls.App { return &ls.Player{Cfg: pc} })}
	}
	e := newEnv(newGround(plan, names, clocks, nw), cfg)
	props := append(e.allProperties(pc), e.musicClaims(pc)...)
	return &scenarios.Setup{
		Nodes: nodes, Network: nw, Clocks: clocks, Faults: plan, Until: until, MaxTime: until + sim.Time(time.Second),
		Properties: props,
		Metrics:    func(res *sim.Result) any { return musicMetrics(res) },
	}, nil
}

// stableFaults draws the faults of music-stable from the seed: the devices stay in
// range, but the network duplicates messages for a while (late duplicates of old
// acknowledgements, review item A), latency spikes on one link, and a clock steps and
// changes its drift.
func stableFaults(seed uint64, names []string, ppm int64) faults.Plan {
	r := sim.Stream(seed, "music-stable-faults")
	span := func(lo, hi time.Duration) faults.Duration { return faults.Duration(r.Int64Range(int64(lo), int64(hi))) }
	at := func() faults.Duration { return span(100*time.Millisecond, time.Second) } // while the exchanges run
	from := r.IntN(2)
	drift := r.Int64Range(-ppm, ppm+1)
	evs := []faults.Event{
		{At: at(), Kind: "burst", Dup: 0.2 + 0.8*r.Float64(), For: span(300*time.Millisecond, 2*time.Second)},
		{At: at(), Kind: "spike", From: names[from], To: names[1-from], Extra: span(time.Millisecond, 20*time.Millisecond), For: span(100*time.Millisecond, time.Second)},
		{At: at(), Kind: "skew", Node: names[r.IntN(2)], Step: span(-10*time.Millisecond, 10*time.Millisecond), DriftPPM: &drift},
	}
	slices.SortStableFunc(evs, func(a, b faults.Event) int { return cmp.Compare(a.At, b.At) })
	return faults.Plan{Events: evs}
}

// musicClaims are the music player's claims (LS-5), checked against the run's actual
// plan, so they hold whatever plan --faults supplies:
//   - transient: if every disconnection of the two devices was shorter than the session
//     lease (minus the recovery margin), well apart, and nobody crashed, then both
//     exchanges complete with the whole library and no lease expires;
//   - permanent: if the devices parted for good at some time, every session not ended
//     by then expires at both sides, the responder drops the partial library and the
//     initiator stops; nothing completes afterwards.
func (e *env) musicClaims(pc *ls.PlayerConfig) []checker.Property {
	return []checker.Property{
		// LS-5, the player's setting: without Again, a device exchanges its library
		// with a peer once per incarnation (a completed exchange is not repeated,
		// whatever the reconnections after it; the record of completed exchanges is
		// volatile, so a restarted player may exchange again).
		{Name: "music/once-per-peer", Class: checker.Safety, Check: func(r *checker.Run) error {
			if pc.Again != 0 {
				return nil
			}
			done := map[[2]sim.NodeID]int{}
			for _, o := range r.History().Kind(ls.KindMPDone) {
				d := o.Value.(ls.MPDone)
				k := [2]sim.NodeID{d.From, d.To}
				done[k]++
				if lives := 1 + e.g.restartsBy(d.From, o.Time); done[k] > lives {
					return fmt.Errorf("exchange %s→%s completed %d times by %v, although the player repeats none (Again = 0) and %s had %d incarnation(s)",
						r.Final[d.From].Name, r.Final[d.To].Name, done[k], o.Time, r.Final[d.From].Name, lives)
				}
			}
			r.Note(fmt.Sprintf("%d exchanges checked", len(done)))
			return nil
		}},
		{Name: "music/transient-completes", Class: checker.Liveness, NeedsCompleteRun: true, Check: func(r *checker.Run) error {
			x := e.li.get(r)
			m := e.margin(x.maxTerm)
			spans := e.g.pair(0, 1)
			prevEnd := sim.Time(-1 << 62)
			for _, s := range spans {
				if s.to == never || s.to.Sub(s.from) >= pc.Term-m || s.from.Sub(prevEnd) < m {
					r.Count(0, 1) // not the transient claim's situation
					return nil
				}
				prevEnd = s.to
			}
			if e.g.crashedIn(0, 0, r.Time) || e.g.crashedIn(1, 0, r.Time) {
				r.Count(0, 1)
				return nil
			}
			r.Count(2, 0) // both exchanges, and every lease of the run
			done := map[[2]sim.NodeID]int{}
			for _, d := range checker.Values[ls.MPDone](r.History(), ls.KindMPDone) {
				done[[2]sim.NodeID{d.From, d.To}] = d.Songs
			}
			for _, pr := range [][2]sim.NodeID{{0, 1}, {1, 0}} {
				if n, ok := done[pr]; !ok || n != len(pc.Libraries[pr[0]]) {
					return fmt.Errorf("exchange %s→%s did not complete with %d songs (got %d, completed %v) although every disconnection was shorter than the lease minus %v",
						r.Final[pr[0]].Name, r.Final[pr[1]].Name, len(pc.Libraries[pr[0]]), n, ok, m)
				}
			}
			for id := range x.eachLease {
				for _, side := range []ls.Side{ls.Server, ls.Client} {
					if en, ok := x.firstEnd(id, side); ok && en.V.How == ls.Expired {
						return fmt.Errorf("lease %s (%s) expired at its %s side at %v although every disconnection was transient", id, x.lease(id).grant.V.Object, side, en.Time)
					}
				}
			}
			return nil
		}},
		{Name: "music/permanent-cleans-up", Class: checker.Safety, NeedsCompleteRun: true, Check: func(r *checker.Run) error {
			parted, ok := e.g.partedAt(0, 1)
			if !ok || len(e.g.down[0])+len(e.g.down[1]) > 0 {
				r.Count(0, 1)
				return nil // the devices did not part for good (a crash is not a parting)
			}
			x := e.li.get(r)
			done := map[ls.RefID]bool{}
			for _, o := range r.History().Kind(ls.KindMPDone) {
				if o.Time > parted.Add(e.g.lmax) {
					return fmt.Errorf("an exchange completed at %v, after the devices parted for good at %v", o.Time, parted)
				}
			}
			for _, o := range r.History().Kind(ls.KindForward) {
				f := o.Value.(*ls.ObsForward)
				if f.Method == "endExchange" {
					done[f.Ref] = true
				}
			}
			cleaned := map[ls.RefID]bool{}
			for _, c := range checker.Values[ls.MPEvent](r.History(), ls.KindMPCleanup) {
				cleaned[c.Session] = true
			}
			stopped := map[ls.RefID]bool{}
			for _, o := range r.History().Kind(ls.KindMPStopped, ls.KindMPTimedOut) {
				stopped[o.Value.(ls.MPEvent).Session] = true
			}
			judged, finished := 0, 0
			defer func() { r.Count(judged, finished) }()
			for _, s := range checker.Values[ls.MPEvent](r.History(), ls.KindMPSession) {
				id := s.Session
				if done[id] {
					finished++ // finished before the parting: not the claim's
					continue
				}
				judged++
				se, ok := x.firstEnd(id, ls.Server)
				if !ok || se.V.How != ls.Expired {
					return fmt.Errorf("session %s (%s→%s) interrupted by the parting at %v: its server side did not expire (%v)", id, r.Final[s.From].Name, r.Final[s.To].Name, parted, endedAt(se, ok))
				}
				if !cleaned[id] {
					return fmt.Errorf("session %s expired at %v but %s kept the partial library", id, se.Time, r.Final[s.To].Name)
				}
				if x.lease(id).resolved {
					if ce, ok := x.firstEnd(id, ls.Client); !ok || ce.V.How != ls.Expired {
						return fmt.Errorf("session %s: the initiator's side did not expire (%v)", id, endedAt(ce, ok))
					}
					if !stopped[id] {
						return fmt.Errorf("session %s expired but %s did not stop the exchange", id, r.Final[s.From].Name)
					}
				}
			}
			return nil
		}},
	}
}

// MusicMetrics summarises a music-player run.
type MusicMetrics struct {
	Exchanges int `json:"exchanges_completed"`
	Matches   int `json:"matches"`
	Stopped   int `json:"stopped"`
	Cleanups  int `json:"cleanups"`
	Leases    int `json:"leases"`
	Expired   int `json:"lease_sides_expired"`
	Revoked   int `json:"lease_sides_revoked"`
}

func musicMetrics(res *sim.Result) MusicMetrics {
	var m MusicMetrics
	for i := range res.History {
		o := &res.History[i]
		switch o.Kind {
		case ls.KindMPDone:
			m.Exchanges++
		case ls.KindMPMatch:
			m.Matches++
		case ls.KindMPStopped:
			m.Stopped++
		case ls.KindMPCleanup:
			m.Cleanups++
		case ls.KindGrant:
			m.Leases++
		case ls.KindEnd:
			if o.Value.(*ls.ObsEnd).How == ls.Expired {
				m.Expired++
			} else {
				m.Revoked++
			}
		}
	}
	return m
}

// SwarmSetup builds one swarm run; policy is the runtime's (the zero Policy is the
// protocol; see bugs.go).
func SwarmSetup(b *scenarios.Build, policy ls.Policy) (*scenarios.Setup, error) {
	return swarmSetup(b, policy, ls.PlayerHooks{})
}

// swarmSetup is SwarmSetup with the music players' hooks (tests plant broken players).
func swarmSetup(b *scenarios.Build, policy ls.Policy, hooks ls.PlayerHooks) (*scenarios.Setup, error) {
	p := b.Params
	n := drawnInt(p, "devices", 2, 26, sim.Stream(b.Seed, "swarm-devices"))
	if p.Err() != nil {
		return nil, p.Err()
	}
	cfg, nw, err := runtimeConfig(p, n, policy)
	if err != nil {
		return nil, err
	}
	songs := p.IntRange("songs", 1, 10_000)
	term := p.PositiveDuration("term")
	again := p.Duration("again")
	horizon := p.PositiveDuration("horizon")
	limits := MobilityParams{
		Horizon: horizon, MeanUp: p.PositiveDuration("mean-up"), MeanDown: p.PositiveDuration("mean-down"),
		Leave: p.Prob("leave"), Skews: p.IntRange("skews", 0, 1000), MaxStep: p.Duration("max-step"),
	}
	// The mobility plan's size grows with the horizon, and a skew's step is a fault
	// plan's magnitude (issue 16 item 4: bounded with one line each).
	if horizon > 10*time.Minute {
		p.Reject("horizon", "a duration of at most 10m")
	}
	if moves := int64(n) * int64(horizon) / max(1, int64(limits.MeanUp+limits.MeanDown)); p.Err() == nil && moves > 100_000 {
		p.Reject("horizon", fmt.Sprintf("devices × horizon / (mean-up + mean-down) at most 100000 moves (got %d)", moves))
	}
	// Leases that outlive the run by far only grow the linearizability check's
	// history (a 10-minute term ran it out of memory); the swarm's point is leases
	// that expire and renew while devices move.
	if term > time.Minute {
		p.Reject("term", "a duration of at most 1m in the swarm")
	}
	if limits.MaxStep > faults.MaxMagnitude {
		p.Reject("max-step", "a duration of at most "+faults.MaxMagnitude.String())
	}
	ppm := int64(p.IntRange("drift-ppm", 0, faults.MaxDriftPPM))
	probe := p.Duration("probe")
	dup := p.Prob("dup")
	crashes := p.IntRange("crashes", 0, 20)
	crashSend := p.Prob("crash-send")
	rare := p.Bool("probe-rare")
	cbTerm := term
	switch v := p.String("callback-term"); v {
	case "drawn":
		if sim.Stream(b.Seed, "swarm-callback").IntN(4) == 0 {
			cbTerm = 2 * term
		}
	default:
		cbTerm = p.PositiveDuration("callback-term")
	}
	if p.Err() != nil {
		return nil, p.Err()
	}
	if again < 0 || probe < 0 || limits.MaxStep < 0 {
		return nil, fmt.Errorf("again, probe and max-step must not be negative")
	}
	limits.MaxDriftPPM = ppm
	pc := &ls.PlayerConfig{
		Libraries: libraries(b.Seed, n, songs), Term: term, CallbackTerm: cbTerm,
		MinLeft: 4*nw.Latency.Max + 10*time.Millisecond, Threshold: 0.3, Again: again, Retry: 500 * time.Millisecond,
		Hooks: hooks,
	}
	if err := pc.Validate(); err != nil {
		return nil, err
	}
	prc := &ls.ProbeConfig{Period: probe, PingEvery: 100 * time.Millisecond, TermMin: 500 * time.Millisecond,
		TermMax: term, MaxPings: 8, Due: term / 2, Rare: rare}
	if err := prc.Validate(); err != nil {
		return nil, err
	}
	names := deviceNames(n)
	plan, err := b.FaultPlan(func() (faults.Plan, error) {
		pl, err := Mobility(b.Seed, names, SwarmMobility(b.Seed, limits))
		if err == nil && dup > 0 {
			burst := faults.Event{At: 0, Kind: "burst", Dup: dup, For: faults.Duration(horizon)}
			pl.Events = append([]faults.Event{burst}, pl.Events...)
		}
		if err == nil && crashes > 0 {
			pl, err = withCrashes(b.Seed, names, pl, horizon, limits.MeanDown, crashes, crashSend)
		}
		return pl, err
	})
	if err != nil {
		return nil, err
	}
	if err := plan.Validate(names); err != nil {
		return nil, &scenarios.InputError{Err: fmt.Errorf("fault plan: %w", err)} // a plan given for other devices
	}
	clocks := Clocks(b.Seed, n, ppm)
	bound := 2*max(term, cbTerm) + again + pc.Retry + 2*time.Second
	st := plan.Settled()
	until := sim.Time(max(time.Duration(st.At), horizon) + bound + time.Second)
	cfgs, err := neighbourhoods(b.Seed, cfg, n, p.String("neighbourhood"))
	if err != nil {
		return nil, err
	}
	nodes := make([]sim.NodeSpec, n)
	for i := range nodes {
		nodes[i] = sim.NodeSpec{Name: names[i], New: ls.NewDevice(cfgs[i], func() ls.App {
			return &ls.Mux{Apps: []ls.App{&ls.Player{Cfg: pc}, &ls.Probe{Cfg: prc}},
				Prefixes: [][]string{{"mp.", "openSession"}, {"probe."}}}
		})}
	}
	e := newEnv(newGround(plan, names, clocks, nw), cfg)
	props := append(e.allProperties(pc), e.swarmLiveness(n, bound))
	return &scenarios.Setup{
		Nodes: nodes, Network: nw, Clocks: clocks, Faults: plan, Until: until, MaxTime: until + sim.Time(time.Second),
		// With the default parameters a device records up to about 550 observations a
		// second (seeds 1-60: 8 000 to 44 000 in all): room for them up front.
		Observations: int(min(550*int64(n)*int64(until)/int64(time.Second), sim.MaxReserved)),
		Properties:   props,
		Metrics:      func(res *sim.Result) any { return musicMetrics(res) },
	}, nil
}

// drawnInt reads an integer parameter given as N or as a range A-B (both within
// [lo, hi]); a range is drawn from r.
func drawnInt(p *scenarios.Params, name string, lo, hi int, r *sim.Rand) int {
	v := p.String(name)
	a, b, isRange := strings.Cut(v, "-")
	if !isRange {
		return p.IntRange(name, lo, hi)
	}
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || x < lo || y > hi || x > y {
		p.Reject(name, fmt.Sprintf("an integer or a range A-B within %d..%d", lo, hi))
		return lo
	}
	return x + r.IntN(y-x+1)
}

// withCrashes adds crashes to a swarm's mobility plan (LS-1: a rebooted device has no
// lease; its peers learn of its new incarnation): on half the seeds, up to limit
// crash/restart pairs and, one time in four, a device that crashes for good, a
// fraction of them (drawn up to sendFrac) crash-sends. The crashes come from streams
// of their own: the mobility plan is the same with or without them.
func withCrashes(seed uint64, names []string, pl faults.Plan, horizon, meanDown time.Duration, limit int, sendFrac float64) (faults.Plan, error) {
	r := sim.Stream(seed, "swarm-crashes")
	if r.IntN(2) == 0 {
		return pl, nil
	}
	cp := faults.Params{Start: 100 * time.Millisecond, Horizon: horizon, Crashes: r.IntN(limit + 1), MeanDown: meanDown / 2,
		CrashSendFrac: sendFrac * r.Float64()}
	if r.IntN(4) == 0 {
		cp.Permanent = 1
	}
	cr, err := faults.Generate(seed, names, cp)
	if err != nil {
		return faults.Plan{}, err
	}
	evs := append(slices.Clone(pl.Events), cr.Events...)
	slices.SortStableFunc(evs, func(a, b faults.Event) int { return cmp.Compare(a.At, b.At) })
	out := faults.Plan{Events: evs}
	if err := out.Validate(names); err != nil {
		return faults.Plan{}, fmt.Errorf("swarm crashes produced an invalid plan (a bug): %w", err)
	}
	return out, nil
}

// neighbourhoods returns each device's runtime configuration: cfg itself, or, with
// mode drawn, on half the seeds copies whose configured neighbourhoods (the peers the
// discovery layer beacons to) are asymmetric: for each pair of devices, with
// probability 1/3 one of them (drawn) leaves the other out — never both, so every pair
// can still discover each other. The device left out is discovered when it is first
// heard from (the runtime's path for "a node outside the configured neighbourhood").
func neighbourhoods(seed uint64, cfg *ls.Config, n int, mode string) ([]*ls.Config, error) {
	cfgs := make([]*ls.Config, n)
	for i := range cfgs {
		cfgs[i] = cfg
	}
	switch mode {
	case "all":
		return cfgs, nil
	case "drawn":
	default:
		return nil, inputf("parameter neighbourhood=%q: want all or drawn", mode)
	}
	r := sim.Stream(seed, "leasing-neighbourhood")
	if r.IntN(2) == 0 {
		return cfgs, nil
	}
	out := make([][]bool, n) // out[i][j]: device i leaves j out
	for i := range out {
		out[i] = make([]bool, n)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if r.IntN(3) == 0 {
				if r.IntN(2) == 0 {
					out[i][j] = true
				} else {
					out[j][i] = true
				}
			}
		}
	}
	for i := range cfgs {
		c := *cfg
		c.Peers = nil
		for j := 0; j < n; j++ {
			if !out[i][j] {
				c.Peers = append(c.Peers, sim.NodeID(j))
			}
		}
		cfgs[i] = &c
	}
	return cfgs, nil
}

// swarmLiveness: after the devices stop moving, every two devices that are both still
// there (up, in range for good) complete an exchange in each direction within bound.
func (e *env) swarmLiveness(n int, bound time.Duration) checker.Property {
	return scenarios.Bounded("music/exchanges-resume", bound, func(r *checker.Run) []scenarios.Item {
		var items []scenarios.Item
		first := map[[2]sim.NodeID]sim.Time{}
		for o := range e.li.get(r).scanned {
			if o.Kind != ls.KindMPDone {
				continue
			}
			d := o.Value.(ls.MPDone)
			k := [2]sim.NodeID{d.From, d.To}
			if _, ok := first[k]; !ok && o.Time >= r.Settled {
				first[k] = o.Time
			}
		}
		for a := 0; a < n; a++ {
			for b := 0; b < n; b++ {
				if a == b {
					continue
				}
				if _, parted := e.g.partedAt(sim.NodeID(a), sim.NodeID(b)); parted {
					continue // they parted for good (a device left or crashed for good)
				}
				it := scenarios.Item{Name: fmt.Sprintf("exchange %s→%s", r.Final[a].Name, r.Final[b].Name), Start: r.Settled}
				if t, ok := first[[2]sim.NodeID{sim.NodeID(a), sim.NodeID(b)}]; ok {
					it.Done, it.Completed = t, true
				}
				items = append(items, it)
			}
		}
		return items
	})
}
