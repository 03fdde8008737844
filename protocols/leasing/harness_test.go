package leasing

import (
	"testing"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// do is a test injection: a closure run inside a device's handler call.
type do struct{ f func(rt *Runtime) }

func (do) Kind() string { return "do" }

// tapp records everything the runtime hands to the application.
type tapp struct {
	Inv     []Invocation
	InvAt   []sim.Time
	Exp     []Expiry
	ExpAt   []sim.Time
	Rel     []Release
	Res     []any
	ResRefs [][]RefID
	Ruin    []error
	RuinAt  []sim.Time
	Conn    []bool
	Held    []RefID
	// OnInvoke, when set, runs after recording an invocation.
	OnInvoke func(rt *Runtime, inv Invocation)
}

func (a *tapp) Start(*Runtime)                                 {}
func (a *tapp) Connectivity(_ *Runtime, _ sim.NodeID, up bool) { a.Conn = append(a.Conn, up) }
func (a *tapp) Invoke(rt *Runtime, inv Invocation) {
	a.Inv = append(a.Inv, inv)
	a.InvAt = append(a.InvAt, rt.Now())
	if inv.Object == FarObject && inv.Method == "take" {
		a.Held = append(a.Held, inv.Refs...)
	}
	if a.OnInvoke != nil {
		a.OnInvoke(rt, inv)
	}
}
func (a *tapp) Expired(rt *Runtime, e Expiry) {
	a.Exp = append(a.Exp, e)
	a.ExpAt = append(a.ExpAt, rt.Now())
}
func (a *tapp) Released(_ *Runtime, r Release) { a.Rel = append(a.Rel, r) }
func (a *tapp) Resolved(_ *Runtime, _ Future, v any, refs []RefID) {
	a.Res = append(a.Res, v)
	a.ResRefs = append(a.ResRefs, refs)
}
func (a *tapp) Ruined(rt *Runtime, _ Future, err error) {
	a.Ruin = append(a.Ruin, err)
	a.RuinAt = append(a.RuinAt, rt.Now())
}
func (a *tapp) Timer(*Runtime, string) {}
func (a *tapp) Input(rt *Runtime, m sim.Message) {
	if d, ok := m.(do); ok {
		d.f(rt)
	}
}

const lat = 5 * time.Millisecond

// sys is a small system of devices running tapp, on a constant-latency network.
type sys struct {
	t   *testing.T
	k   *sim.Kernel
	cfg *Config
}

func testConfig(n int) *Config {
	cfg := &Config{Beacon: 100 * time.Millisecond, Silence: 300 * time.Millisecond, RTO: 50 * time.Millisecond}
	for i := 0; i < n; i++ {
		cfg.Peers = append(cfg.Peers, sim.NodeID(i))
	}
	return cfg
}

func newSys(t *testing.T, n int, until time.Duration, cfg *Config, clocks []sim.Clock) *sys {
	t.Helper()
	if cfg == nil {
		cfg = testConfig(n)
	}
	var nodes []sim.NodeSpec
	for i := 0; i < n; i++ {
		nodes = append(nodes, sim.NodeSpec{Name: string(rune('a' + i)), New: NewDevice(cfg, func() App { return &tapp{} })})
	}
	k, err := sim.New(sim.Config{Seed: 1, Nodes: nodes, Network: sim.Network{Latency: sim.Constant(lat)}, Clocks: clocks, Until: sim.Time(until)})
	if err != nil {
		t.Fatal(err)
	}
	return &sys{t: t, k: k, cfg: cfg}
}

// at runs f on node n at global time d.
func (s *sys) at(d time.Duration, n int, f func(rt *Runtime)) {
	s.k.Inject(sim.Time(d), sim.NodeID(n), do{f})
}

// cut takes a and b out of each other's range at d; restore brings them back.
func (s *sys) cut(d time.Duration, a, b int) {
	s.k.Schedule(sim.Time(d), sim.Fault{Kind: sim.FaultCut, From: sim.NodeID(a), To: sim.NodeID(b)})
	s.k.Schedule(sim.Time(d), sim.Fault{Kind: sim.FaultCut, From: sim.NodeID(b), To: sim.NodeID(a)})
}

func (s *sys) restore(d time.Duration, a, b int) {
	s.k.Schedule(sim.Time(d), sim.Fault{Kind: sim.FaultRestore, From: sim.NodeID(a), To: sim.NodeID(b)})
	s.k.Schedule(sim.Time(d), sim.Fault{Kind: sim.FaultRestore, From: sim.NodeID(b), To: sim.NodeID(a)})
}

func (s *sys) run() *sim.Result {
	s.t.Helper()
	res := s.k.Run()
	if res.Outcome == sim.Panicked {
		s.t.Fatalf("panic: %v\n%s", res.Panic, res.Panic.Stack)
	}
	return res
}

func (s *sys) dev(n int) *Device { return s.k.NodeState(sim.NodeID(n)).(*Device) }
func (s *sys) app(n int) *tapp   { return s.dev(n).App.(*tapp) }

// grant makes node g lease object to node h at time d (passed through g's far
// reference to h), storing the id in *id.
func (s *sys) grant(d time.Duration, g, h int, term time.Duration, p Interceptor, id *RefID) {
	s.at(d, g, func(rt *Runtime) {
		ref, err := rt.Lease("obj", term, p, sim.NodeID(h))
		if err != nil {
			s.t.Fatalf("lease: %v", err)
		}
		*id = ref
		far, err := rt.Far(sim.NodeID(h))
		if err != nil {
			s.t.Fatalf("far: %v", err)
		}
		if err := rt.Send(far, "take", nil, ref); err != nil {
			s.t.Fatalf("send: %v", err)
		}
	})
}

// obs returns the observations of one kind, typed.
func obs[T any](res *sim.Result, kind string) []T {
	var out []T
	for _, o := range res.History {
		if o.Kind == kind {
			out = append(out, value[T](o.Value))
		}
	}
	return out
}

// value returns an observation's value as a T: the runtime records its own as *T.
func value[T any](v any) T {
	if p, ok := v.(*T); ok {
		return *p
	}
	return v.(T)
}

// obsAt returns the global times of the observations of one kind matching f.
func obsAt[T any](res *sim.Result, kind string, f func(T) bool) []sim.Time {
	var out []sim.Time
	for _, o := range res.History {
		if o.Kind == kind && f(value[T](o.Value)) {
			out = append(out, o.Time)
		}
	}
	return out
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }
