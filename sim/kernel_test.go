package sim_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/sim"
	"github.com/simrun-dev/simrun/sim/demo"
)

const ms = time.Millisecond

// ---- small test protocols ----

// seqMsg carries a sender-local sequence number.
type seqMsg struct{ N int }

func (seqMsg) Kind() string { return "Seq" }

// sender sends Count numbered messages to node To at start, one per Gap (timer).
type sender struct {
	To    sim.NodeID
	Count int
	Gap   time.Duration
	sent  int
}

func (s *sender) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start:
		out.SetTimer("tick", 0)
	case sim.Timeout:
		out.Send(s.To, seqMsg{N: s.sent})
		s.sent++
		if s.sent < s.Count {
			out.SetTimer("tick", s.Gap)
		}
	}
}

// recorder observes every message it receives.
type recorder struct{}

func (recorder) Handle(in sim.Input, out *sim.Outbox) {
	if in.Kind == sim.Receive {
		out.Observe("got", in.Msg)
	}
}

func specs(nodes ...sim.Node) []sim.NodeSpec {
	out := make([]sim.NodeSpec, len(nodes))
	for i, n := range nodes {
		n := n
		out[i] = sim.NodeSpec{Name: fmt.Sprintf("n%d", i), New: func() sim.Node { return sim.CloneNode(n) }}
	}
	return out
}

func mustKernel(t *testing.T, cfg sim.Config) *sim.Kernel {
	t.Helper()
	k, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func gotSeqs(r *sim.Result, node sim.NodeID) []int {
	var ns []int
	for _, o := range r.History {
		if o.Kind == "got" && o.Node == node {
			ns = append(ns, o.Value.(seqMsg).N)
		}
	}
	return ns
}

// ---- determinism ----

// demoTrace runs the demo system under a fixed fault plan and returns its trace.
func demoTrace(t *testing.T, seed uint64) []byte {
	t.Helper()
	cfg := &demo.Config{Server: 0, Keys: []string{"a", "b"}, Retry: 30 * ms, Think: 20 * ms, AddFrac: 60}
	var buf bytes.Buffer
	w := sim.NewTraceWriter(&buf)
	k := mustKernel(t, sim.Config{Seed: seed, Nodes: demo.System(cfg, 3), Trace: w})
	names := k.Names()
	plan, err := faults.Generate(seed, names, faults.DefaultParams(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Apply(k); err != nil {
		t.Fatal(err)
	}
	for c := 1; c <= 3; c++ {
		k.Inject(0, sim.NodeID(c), demo.Begin{Ops: 15})
	}
	r := k.Run()
	if w.Err() != nil {
		t.Fatal(w.Err())
	}
	if r.Outcome != sim.Quiescent {
		t.Fatalf("outcome %v", r.Outcome)
	}
	return buf.Bytes()
}

func TestSameSeedSameTrace(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		a, b := demoTrace(t, seed), demoTrace(t, seed)
		if !bytes.Equal(a, b) {
			t.Fatalf("seed %d: two runs gave different traces", seed)
		}
	}
}

func TestSameTraceWhateverGOMAXPROCS(t *testing.T) {
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	one := demoTrace(t, 7)
	runtime.GOMAXPROCS(2)
	two := demoTrace(t, 7)
	if !bytes.Equal(one, two) {
		t.Fatal("GOMAXPROCS=1 and GOMAXPROCS=2 gave different traces")
	}
}

func TestDifferentSeedsDifferentTraces(t *testing.T) {
	seen := map[string]uint64{}
	for seed := uint64(1); seed <= 20; seed++ {
		tr := string(demoTrace(t, seed))
		if prev, dup := seen[tr]; dup {
			t.Fatalf("seeds %d and %d gave the same trace", prev, seed)
		}
		seen[tr] = seed
	}
}

func TestTraceFooterCountsAndHash(t *testing.T) {
	tr := demoTrace(t, 3)
	lines := strings.Split(strings.TrimSpace(string(tr)), "\n")
	footer := lines[len(lines)-1]
	if !strings.Contains(footer, fmt.Sprintf(`"lines":%d`, len(lines)-1)) {
		t.Fatalf("footer %s does not count the %d event lines", footer, len(lines)-1)
	}
	if !strings.Contains(footer, `"hash":"sha256:`) {
		t.Fatalf("footer without hash: %s", footer)
	}
}

// ---- network ----

func TestFIFOPerLink(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		k := mustKernel(t, sim.Config{
			Seed:    seed,
			Nodes:   specs(&sender{To: 1, Count: 200, Gap: 100 * time.Microsecond}, recorder{}),
			Network: sim.Network{Latency: sim.Exponential(ms, 20*ms)},
		})
		r := k.Run()
		got := gotSeqs(r, 1)
		if len(got) != 200 {
			t.Fatalf("seed %d: %d of 200 delivered", seed, len(got))
		}
		for i, n := range got {
			if n != i {
				t.Fatalf("seed %d: delivery %d carried message %d: FIFO broken", seed, i, n)
			}
		}
		if len(r.Knobs) != 0 {
			t.Fatalf("knobs reported on a default network: %v", r.Knobs)
		}
	}
}

func TestReorderKnobBreaksFIFOAndIsReported(t *testing.T) {
	k := mustKernel(t, sim.Config{
		Seed:    1,
		Nodes:   specs(&sender{To: 1, Count: 200, Gap: 100 * time.Microsecond}, recorder{}),
		Network: sim.Network{Latency: sim.Exponential(ms, 20*ms), Reorder: 0.5},
	})
	r := k.Run()
	got := gotSeqs(r, 1)
	inversions := 0
	for i := 1; i < len(got); i++ {
		if got[i] < got[i-1] {
			inversions++
		}
	}
	if len(got) != 200 || inversions == 0 {
		t.Fatalf("reorder=0.5: %d delivered, %d inversions", len(got), inversions)
	}
	if len(r.Knobs) != 1 || r.Knobs[0] != "reorder=0.5" {
		t.Fatalf("knobs %v, want [reorder=0.5]", r.Knobs)
	}
}

func TestLossAndDuplicationKnobs(t *testing.T) {
	k := mustKernel(t, sim.Config{
		Seed:    1,
		Nodes:   specs(&sender{To: 1, Count: 1000, Gap: ms}, recorder{}),
		Network: sim.Network{Latency: sim.Constant(ms), Loss: 0.2, Duplicate: 0.1},
	})
	r := k.Run()
	c := r.ByKind["Seq"]
	if c.Sent != 1000 || c.Lost < 150 || c.Lost > 250 || c.Duplicated < 50 || c.Duplicated > 150 {
		t.Fatalf("counts %+v: want ~200 lost and ~80 duplicated of 1000", c)
	}
	if c.Delivered != c.Sent-c.Lost+c.Duplicated {
		t.Fatalf("delivered %d != sent %d - lost %d + duplicated %d", c.Delivered, c.Sent, c.Lost, c.Duplicated)
	}
	if len(gotSeqs(r, 1)) != int(c.Delivered) {
		t.Fatal("observed deliveries differ from the count")
	}
	if strings.Join(r.Knobs, ",") != "loss=0.2,duplicate=0.1" {
		t.Fatalf("knobs %v", r.Knobs)
	}
}

func TestLatencyDistributions(t *testing.T) {
	r := sim.NewRand(42)
	check := func(l sim.Latency, lo, hi time.Duration, mean time.Duration) {
		t.Helper()
		var sum time.Duration
		const n = 20000
		for i := 0; i < n; i++ {
			d := l.Sample(r)
			if d < lo || (hi > 0 && d > hi) {
				t.Fatalf("%v: sample %v outside [%v, %v]", l, d, lo, hi)
			}
			sum += d
		}
		got := sum / n
		if got < mean*95/100 || got > mean*105/100 {
			t.Fatalf("%v: mean %v, want about %v", l, got, mean)
		}
	}
	check(sim.Constant(5*ms), 5*ms, 5*ms, 5*ms)
	check(sim.Uniform(2*ms, 8*ms), 2*ms, 8*ms, 5*ms)
	check(sim.Exponential(3*ms, 10*ms), 3*ms, 0, 13*ms)
	for _, bad := range []sim.Latency{{}, {Dist: "normal"}, sim.Uniform(5*ms, 2*ms), sim.Exponential(ms, 0), sim.Constant(-ms)} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// Removing a fault must not shift the delays of unrelated traffic: each link has its
// own stream.
func TestStreamsIndependentPerLink(t *testing.T) {
	run := func(withCrash bool) []sim.Time {
		k := mustKernel(t, sim.Config{
			Seed: 9,
			Nodes: specs(&sender{To: 1, Count: 50, Gap: ms}, recorder{},
				&sender{To: 3, Count: 50, Gap: ms}, recorder{}),
			Network: sim.Network{Latency: sim.Uniform(ms, 9*ms)},
		})
		if withCrash {
			k.Schedule(sim.Time(10*ms), sim.Fault{Kind: sim.FaultCrash, Node: 3})
			k.Schedule(sim.Time(20*ms), sim.Fault{Kind: sim.FaultRestart, Node: 3})
		}
		var ts []sim.Time
		for _, o := range k.Run().History {
			if o.Node == 1 {
				ts = append(ts, o.Time)
			}
		}
		return ts
	}
	a, b := run(false), run(true)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("a crash on link n2->n3 changed delivery times on link n0->n1")
	}
}

// pinger sends a ping to every other node on every tick; observes what it receives.
type pinger struct{ N int }

type ping struct{ From sim.NodeID }

func (ping) Kind() string { return "Ping" }

func (p *pinger) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start, sim.Restart:
		out.SetTimer("tick", 10*ms)
	case sim.Timeout:
		for i := 0; i < p.N; i++ {
			if sim.NodeID(i) != in.Self {
				out.Send(sim.NodeID(i), ping{From: in.Self})
			}
		}
		out.SetTimer("tick", 10*ms)
	case sim.Receive:
		out.Observe("ping", in.Msg.(ping).From)
	}
}

// heard returns, per receiver, the set of senders heard in [from, to).
func heard(r *sim.Result, from, to sim.Time) map[[2]sim.NodeID]bool {
	m := map[[2]sim.NodeID]bool{}
	for _, o := range r.History {
		if o.Kind == "ping" && o.Time >= from && o.Time < to {
			m[[2]sim.NodeID{o.Value.(sim.NodeID), o.Node}] = true
		}
	}
	return m
}

func TestPartitionCutRestoreHeal(t *testing.T) {
	p := &pinger{N: 4}
	k := mustKernel(t, sim.Config{
		Seed: 1, Nodes: specs(p, p, p, p), Network: sim.Network{Latency: sim.Constant(ms)},
		Until: sim.Time(500 * ms),
	})
	at := func(d time.Duration) sim.Time { return sim.Time(d) }
	// [100,200): n0|n1 split off from each other and from the rest {n2,n3}.
	k.Schedule(at(100*ms), sim.Fault{Kind: sim.FaultPartition, Groups: [][]sim.NodeID{{0}, {1}}})
	k.Schedule(at(200*ms), sim.Fault{Kind: sim.FaultHeal})
	// [300,400): one-way cut n2->n3; restored at 400.
	k.Schedule(at(300*ms), sim.Fault{Kind: sim.FaultCut, From: 2, To: 3})
	k.Schedule(at(400*ms), sim.Fault{Kind: sim.FaultRestore, From: 2, To: 3})
	r := k.Run()
	if r.Outcome != sim.Horizon {
		t.Fatalf("outcome %v", r.Outcome)
	}
	all := func(m map[[2]sim.NodeID]bool, except ...[2]sim.NodeID) error {
		for a := sim.NodeID(0); a < 4; a++ {
			for b := sim.NodeID(0); b < 4; b++ {
				if a == b {
					continue
				}
				want := true
				for _, e := range except {
					if e == [2]sim.NodeID{a, b} {
						want = false
					}
				}
				if m[[2]sim.NodeID{a, b}] != want {
					return fmt.Errorf("link n%d->n%d: heard=%v, want %v", a, b, !want, want)
				}
			}
		}
		return nil
	}
	if err := all(heard(r, 0, at(100*ms))); err != nil {
		t.Fatal("before faults:", err)
	}
	split := [][2]sim.NodeID{{0, 1}, {1, 0}, {0, 2}, {2, 0}, {0, 3}, {3, 0}, {1, 2}, {2, 1}, {1, 3}, {3, 1}}
	if err := all(heard(r, at(102*ms), at(200*ms)), split...); err != nil {
		t.Fatal("during partition:", err)
	}
	if err := all(heard(r, at(202*ms), at(300*ms))); err != nil {
		t.Fatal("after heal:", err)
	}
	if err := all(heard(r, at(302*ms), at(400*ms)), [2]sim.NodeID{2, 3}); err != nil {
		t.Fatal("during one-way cut:", err)
	}
	if err := all(heard(r, at(402*ms), at(500*ms))); err != nil {
		t.Fatal("after restore:", err)
	}
	if r.Messages.Lost == 0 || r.ByNode[3].Lost == 0 {
		t.Fatalf("no losses counted: %+v", r.Messages)
	}
}

// ---- crash and restart ----

// counter keeps a volatile and a stable count of received messages.
type counter struct {
	Volatile int
	Stable   int
	Restarts int
}

func (c *counter) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start:
		out.SetTimer("t", 50*ms)
	case sim.Restart:
		if v, ok := sim.Load[int](in.Stable, "count"); ok {
			c.Stable = v
		}
		c.Restarts = 1
		out.Observe("restarted", c.Stable)
	case sim.Receive:
		c.Volatile++
		c.Stable++
		out.Store("count", c.Stable)
	case sim.Timeout:
		out.Observe("timer", in.Timer)
	}
}

func TestCrashLosesVolatileKeepsStable(t *testing.T) {
	k := mustKernel(t, sim.Config{
		Seed:    1,
		Nodes:   specs(&sender{To: 1, Count: 40, Gap: ms}, &counter{}),
		Network: sim.Network{Latency: sim.Constant(2 * ms)},
	})
	// n1's 50ms timer is pending when it crashes at 20ms: it must never fire.
	k.Schedule(sim.Time(20*ms), sim.Fault{Kind: sim.FaultCrash, Node: 1})
	k.Schedule(sim.Time(30*ms), sim.Fault{Kind: sim.FaultRestart, Node: 1})
	r := k.Run()
	c := r.Final[1].State.(*counter)
	// Sends at 0..39ms arrive 2ms later. Events at the same time run in the order they
	// were scheduled, and the faults were scheduled before the run, so the crash at 20ms
	// comes before the delivery at 20ms and the restart at 30ms before the send at 30ms.
	// Delivered before the crash: sent 0..17ms (18). Lost: sent 18..19ms (in flight to
	// the crashed incarnation) and 20..29ms (receiver down at send): 12. Delivered to the
	// new incarnation: sent 30..39ms (10).
	if c.Restarts != 1 {
		t.Fatal("restart input not seen")
	}
	if c.Volatile != 10 {
		t.Fatalf("volatile count %d after restart, want 10", c.Volatile)
	}
	if c.Stable != 18+10 {
		t.Fatalf("stable count %d, want 28", c.Stable)
	}
	for _, o := range r.History {
		if o.Kind == "timer" {
			t.Fatalf("a timer set before the crash fired at %v", o.Time)
		}
		if o.Kind == "restarted" && o.Value.(int) != 18 {
			t.Fatalf("restart saw stable count %v, want 18", o.Value)
		}
	}
	if r.ByNode[1].Lost != 12 {
		t.Fatalf("lost to n1: %d, want 12", r.ByNode[1].Lost)
	}
	if v, _ := r.Final[1].Stable.Peek("count"); v.(int) != 28 {
		t.Fatalf("final stable %v", v)
	}
}

// ---- clocks ----

// timerNode sets one timer and records the local and global time it fires.
type timerNode struct{ After time.Duration }

func (n *timerNode) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start:
		out.Observe("start", in.Now)
		out.SetTimer("t", n.After)
	case sim.Timeout:
		out.Observe("fired", in.Now)
	}
}

func TestTimersRunOnDriftingLocalClocks(t *testing.T) {
	k := mustKernel(t, sim.Config{
		Seed:  1,
		Nodes: specs(&timerNode{After: 100 * ms}, &timerNode{After: 100 * ms}, &timerNode{After: 100 * ms}),
		Clocks: []sim.Clock{
			{},
			{DriftPPM: 100_000},                 // 10% fast
			{Offset: 5 * ms, DriftPPM: -50_000}, // 5% slow, 5ms ahead
		},
	})
	r := k.Run()
	fired := map[sim.NodeID][2]sim.Time{} // global, local
	for _, o := range r.History {
		if o.Kind == "fired" {
			fired[o.Node] = [2]sim.Time{o.Time, o.Value.(sim.Time)}
		}
	}
	want := map[sim.NodeID][2]sim.Time{
		0: {sim.Time(100 * ms), sim.Time(100 * ms)},
		1: {90909091, sim.Time(100 * ms)},  // 100ms local / 1.1
		2: {105263157, sim.Time(105 * ms)}, // 100ms local / 0.95 (drift truncates), local 5ms+100ms
	}
	for n, w := range want {
		g := fired[n]
		if g[0] != w[0] {
			t.Errorf("n%d fired at global %v, want %v", n, g[0], w[0])
		}
		if g[1] < w[1] || g[1] > w[1]+1 {
			t.Errorf("n%d fired at local %v, want %v", n, g[1], w[1])
		}
	}
}

func TestClockSkewStepReschedulesTimers(t *testing.T) {
	k := mustKernel(t, sim.Config{Seed: 1, Nodes: specs(&timerNode{After: 100 * ms})})
	// At 40ms the clock jumps 30ms ahead: the timer (local deadline 100ms) fires at
	// global 70ms.
	k.Schedule(sim.Time(40*ms), sim.Fault{Kind: sim.FaultSkew, Node: 0, Step: 30 * ms})
	r := k.Run()
	for _, o := range r.History {
		if o.Kind == "fired" {
			if o.Time != sim.Time(70*ms) || o.Value.(sim.Time) != sim.Time(100*ms) {
				t.Fatalf("fired at global %v local %v, want 70ms / 100ms", o.Time, o.Value)
			}
			return
		}
	}
	t.Fatal("timer never fired")
}

func TestClockLocalGlobalInverse(t *testing.T) {
	for _, c := range []sim.Clock{{}, {DriftPPM: 1}, {DriftPPM: -999_999}, {Offset: -3 * ms, DriftPPM: 250_000}, {DriftPPM: 7}} {
		for _, l := range []sim.Time{0, 1, 999_999, sim.Time(time.Second + 3), sim.Time(time.Hour), sim.Time(13*time.Hour + 7)} {
			if c.DriftPPM < -500_000 && l >= sim.Time(time.Hour) {
				continue // would need a global time beyond int64
			}
			g := c.Global(l)
			if c.Local(g) < l || c.Local(g-1) >= l {
				t.Fatalf("%+v: Global(%d)=%d is not the first global time reading >= %d", c, l, g, l)
			}
		}
	}
	// Drawn clocks and readings (Global answers most from its estimate and the next
	// instant, the rest by a search).
	var r sim.Rand
	r.Seed(7)
	for range 20000 {
		c := sim.Clock{Offset: time.Duration(r.Int64Range(-int64(time.Second), int64(time.Second))), DriftPPM: r.Int64Range(-500_000, 500_000)}
		l := sim.Time(r.Int64Range(0, int64(24*time.Hour)))
		if g := c.Global(l); c.Local(g) < l || c.Local(g-1) >= l {
			t.Fatalf("%+v: Global(%d)=%d is not the first global time reading >= %d", c, l, g, l)
		}
	}
}

// ---- bounds and panics ----

// echo answers every Ping with a Ping: a livelock when two of them start.
type echo struct{ Peer sim.NodeID }

func (e *echo) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start:
		out.Send(e.Peer, ping{From: in.Self})
	case sim.Receive:
		out.Send(e.Peer, ping{From: in.Self})
	}
}

func TestBoundsReachedAreOutcomes(t *testing.T) {
	k := mustKernel(t, sim.Config{Seed: 1, Nodes: specs(&echo{Peer: 1}, &echo{Peer: 0}), MaxEvents: 1000})
	r := k.Run()
	if r.Outcome != sim.EventBound || r.Events != 1000 {
		t.Fatalf("outcome %v after %d events, want event-bound after 1000", r.Outcome, r.Events)
	}
	k = mustKernel(t, sim.Config{Seed: 1, Nodes: specs(&echo{Peer: 1}, &echo{Peer: 0}), MaxTime: sim.Time(time.Second)})
	r = k.Run()
	if r.Outcome != sim.TimeBound || r.Time != sim.Time(time.Second) {
		t.Fatalf("outcome %v at %v, want time-bound at 1s", r.Outcome, r.Time)
	}
	k = mustKernel(t, sim.Config{Seed: 1, Nodes: specs(&echo{Peer: 1}, &echo{Peer: 0}), Until: sim.Time(time.Second)})
	if r = k.Run(); r.Outcome != sim.Horizon {
		t.Fatalf("outcome %v, want horizon", r.Outcome)
	}
	k = mustKernel(t, sim.Config{Seed: 1, Nodes: specs(&echo{Peer: 1}, &echo{Peer: 0})})
	k.StopWhen(func() bool { return k.Events() == 77 })
	if r = k.Run(); r.Outcome != sim.Stopped || r.Events != 77 {
		t.Fatalf("outcome %v after %d, want stopped after 77", r.Outcome, r.Events)
	}
}

type panicker struct{ At int }

func (p *panicker) Handle(in sim.Input, out *sim.Outbox) {
	if in.Kind == sim.Receive {
		p.At--
		out.Send(in.From, ping{From: in.Self})
		if p.At == 0 {
			panic("broken invariant")
		}
	}
}

type badSender struct{}

func (badSender) Handle(in sim.Input, out *sim.Outbox) {
	if in.Kind == sim.Start {
		out.Send(9, ping{})
	}
}

func TestProtocolPanicIsAFailedRun(t *testing.T) {
	var buf bytes.Buffer
	k := mustKernel(t, sim.Config{Seed: 5, Nodes: specs(&echo{Peer: 1}, &panicker{At: 3}), Trace: sim.NewTraceWriter(&buf)})
	r := k.Run()
	if r.Outcome != sim.Panicked || r.Panic == nil || r.Panic.Node != 1 || r.Panic.Value != "broken invariant" {
		t.Fatalf("outcome %v, panic %+v", r.Outcome, r.Panic)
	}
	if !strings.Contains(r.Panic.Stack, "panicker") {
		t.Fatal("panic stack does not name the handler")
	}
	if !strings.Contains(buf.String(), `"ev":"panic"`) {
		t.Fatal("trace has no panic line")
	}
	k = mustKernel(t, sim.Config{Seed: 5, Nodes: specs(badSender{})})
	r = k.Run()
	if r.Outcome != sim.Panicked || !strings.Contains(fmt.Sprint(r.Panic.Value), "unknown node 9") {
		t.Fatalf("send to unknown node: outcome %v, panic %+v", r.Outcome, r.Panic)
	}
}

func TestConfigErrors(t *testing.T) {
	n := specs(recorder{})
	for _, c := range []sim.Config{
		{},
		{Nodes: []sim.NodeSpec{{Name: "a"}}},
		{Nodes: append(n, n...)},
		{Nodes: n, Clocks: []sim.Clock{{}, {}}},
		{Nodes: n, Clocks: []sim.Clock{{DriftPPM: -1_000_000}}},
		{Nodes: n, Network: sim.Network{Latency: sim.Constant(ms), Loss: 1.5}},
		{Nodes: n, Network: sim.Network{Latency: sim.Constant(ms), Links: []sim.LinkLatency{{From: 0, To: 4, Latency: sim.Constant(ms)}}}},
	} {
		if _, err := sim.New(c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

// Stale timers (cancelled or re-armed) are not events and do not move time.
func TestCancelledTimerIsNotAnEvent(t *testing.T) {
	k := mustKernel(t, sim.Config{Seed: 1, Nodes: []sim.NodeSpec{{Name: "a", New: func() sim.Node {
		return nodeFunc(func(in sim.Input, out *sim.Outbox) {
			if in.Kind == sim.Start {
				out.SetTimer("x", time.Second)
				out.SetTimer("y", 10*ms)
			}
			if in.Kind == sim.Timeout && in.Timer == "y" {
				out.CancelTimer("x")
			}
		})
	}}}})
	r := k.Run()
	if r.Events != 2 || r.Time != sim.Time(10*ms) {
		t.Fatalf("%d events, time %v: want 2 events ending at 10ms", r.Events, r.Time)
	}
}

type nodeFunc func(in sim.Input, out *sim.Outbox)

func (f nodeFunc) Handle(in sim.Input, out *sim.Outbox) { f(in, out) }

// Issue 16, item 4: link state is proportional to the links used, not n². A ring of
// 100 000 nodes (each sends one message to the next, with a cut and a spike in force)
// runs in well under a gigabyte; an n×n link array would need about a terabyte.
func TestManyNodesLinkStateIsSparse(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 100 000 nodes")
	}
	const n = 100_000
	specs := make([]sim.NodeSpec, n)
	for i := range specs {
		next := sim.NodeID((i + 1) % n)
		specs[i] = sim.NodeSpec{Name: fmt.Sprintf("n%d", i), New: func() sim.Node {
			return nodeFunc(func(in sim.Input, out *sim.Outbox) {
				switch in.Kind {
				case sim.Start:
					out.SetTimer("go", time.Millisecond) // after the faults below are in force
				case sim.Timeout:
					out.Send(next, ping{})
				}
			})
		}}
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	k := mustKernel(t, sim.Config{Seed: 1, Nodes: specs})
	k.Schedule(0, sim.Fault{Kind: sim.FaultCut, From: 5, To: 6})
	k.Schedule(0, sim.Fault{Kind: sim.FaultSpike, From: sim.Any, To: 9, Extra: time.Second, For: time.Hour})
	res := k.Run()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if res.Messages.Sent != n || res.Messages.Lost != 1 {
		t.Fatalf("sent %d lost %d, want %d and 1 (the cut link)", res.Messages.Sent, res.Messages.Lost, n)
	}
	if res.Time < sim.Time(time.Second) {
		t.Fatalf("the spike on links to n9 did not delay its message (run ended at %v)", res.Time)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<30 {
		t.Fatalf("allocated %d MiB for %d nodes", grew>>20, n)
	}
}
