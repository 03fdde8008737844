package sim

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"
)

// Config describes one simulated run.
type Config struct {
	// Seed determines every random choice of the run.
	Seed  uint64
	Nodes []NodeSpec
	// Network is the link model; zero means DefaultNetwork.
	Network Network
	// Clocks gives each node's clock (offset and drift); empty means perfect clocks.
	Clocks []Clock
	// Until is the planned end of the run (0 = none): reaching it is a normal end.
	Until Time
	// MaxTime and MaxEvents bound the run; reaching one is reported as an outcome
	// (possible livelock), never a hang. Zero means 1h of virtual time and 10⁷ events.
	MaxTime   Time
	MaxEvents int64
	// Trace, when set, receives one record per event and the footer.
	Trace Tracer
	// Observations is how many observations the run is expected to record: room for
	// them is reserved, so a long history is not copied as it grows (a hint only,
	// never a bound; 0: none). At most MaxReserved are reserved up front, so that a
	// hint computed from a long horizon cannot take the memory a short run needs; a
	// history that outgrows that grows straight to the hint, once (a run of 100 000
	// nodes then holds its history without the slack, or the peak of copying it, of
	// growing step by step).
	Observations int
	// Coverage counts the rules protocol code marks with Outbox.Cover
	// (Result.Coverage); off, a Cover costs one test.
	Coverage bool
}

// MaxReserved bounds the observations Config.Observations reserves room for.
const MaxReserved = 1 << 18

// Outcome says why a run ended.
type Outcome uint8

const (
	// Quiescent: no event was left to process.
	Quiescent Outcome = iota + 1
	// Horizon: the planned end (Config.Until) was reached.
	Horizon
	// Stopped: the StopWhen predicate held.
	Stopped
	// TimeBound: Config.MaxTime was reached with events still pending.
	TimeBound
	// EventBound: Config.MaxEvents events were processed with events still pending.
	EventBound
	// Panicked: a protocol handler panicked (see Result.Panic).
	Panicked
)

func (o Outcome) String() string {
	switch o {
	case Quiescent:
		return "quiescent"
	case Horizon:
		return "horizon"
	case Stopped:
		return "stopped"
	case TimeBound:
		return "time-bound"
	case EventBound:
		return "event-bound"
	case Panicked:
		return "panic"
	}
	return "running"
}

// MarshalText encodes the outcome by name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

type evKind uint8

const (
	evStart evKind = iota + 1
	evDeliver
	evTimer
	evInject
	evFault
	evCrashSendEnd // the window of a FaultCrashSend ends (fault: its index)
)

type event struct {
	kind  evKind
	dup   bool
	node  NodeID // target
	from  NodeID
	inc   uint32 // receiver incarnation (deliver), node incarnation (timer)
	fault int32
	ki    int32  // deliver: the message kind's counter (kindOf at the send)
	gen   uint64 // timer generation
	msg   Message
	timer TimerID
}

type timer struct {
	id       TimerID
	deadline Time // on the node's local clock
	gen      uint64
}

type nodeRT struct {
	spec   NodeSpec
	node   Node
	up     bool
	inc    uint32
	store  *Storage
	timers []timer
	clock  Clock
	rand   Rand
	group  int32
	// crashSend is 1 + the index of the FaultCrashSend armed on the node (0: none).
	crashSend int32
	// lastIn is a hash of the last input the node handled (coverage features).
	lastIn uint64
}

type link struct {
	seeded bool
	lat    Latency
	rng    Rand // latency draws
	chaos  Rand // loss / duplication / reordering draws
	last   Time // FIFO: latest scheduled in-order delivery
	cut    bool
}

// spikeRule is a latency spike in force: extra latency on the links it matches (Any
// matches every node) until until. At a send the newest matching rule decides, as if
// each spike had overwritten the spike of every link it names.
type spikeRule struct {
	from, to NodeID
	extra    time.Duration
	until    Time
}

// denseLinks is the most nodes for which link state is one n×n array; above it links
// are created when first used (memory in the links used, not in n²).
const denseLinks = 256

// Kernel is the discrete-event simulator. It is single-threaded and deterministic:
// the same Config (and the same scheduled faults and injections) gives the same run.
type Kernel struct {
	cfg      Config
	names    []string
	nodes    []nodeRT
	links    []link             // n×n, when n <= denseLinks
	sparse   map[uint64]*link   // links used so far, when n > denseLinks
	latOf    map[uint64]Latency // per-link latencies (Network.Links), sparse mode
	spikes   []spikeRule
	q        queue
	now      Time
	events   int64
	ended    bool
	out      Outbox
	faults   []Fault
	gen      uint64
	stop     func() bool
	outcome  Outcome
	panicErr *PanicError

	partitioned bool
	burstLoss   float64
	burstDup    float64
	burstUntil  Time
	knobs       []string

	kindIdx     map[string]int32
	lastKind    string
	lastKindIdx int32
	kinds       []string
	byKind      []MsgCount
	byNode      []NodeCount
	total       MsgCount
	history     []Observation
	nextObs     int64
	recBuf      TraceRecord
	tr          Tracer
	cov         *Coverage
	// crashNow is set by apply when the call it applied was cut short by a
	// FaultCrashSend: call crashes the node after recording the call.
	crashNow bool
}

// MsgCount counts messages of one kind (or all).
type MsgCount struct {
	Sent       int64 `json:"sent"`
	Delivered  int64 `json:"delivered"`
	Lost       int64 `json:"lost"`
	Duplicated int64 `json:"duplicated,omitempty"`
	Bytes      int64 `json:"bytes,omitempty"`
}

// NodeCount counts one node's messages: sent by it, delivered to it, lost on the way
// to it.
type NodeCount struct {
	Name      string `json:"name"`
	Sent      int64  `json:"sent"`
	Delivered int64  `json:"delivered"`
	Lost      int64  `json:"lost"`
}

// New builds a kernel. It returns an error for a malformed configuration.
func New(cfg Config) (*Kernel, error) {
	n := len(cfg.Nodes)
	if n == 0 {
		return nil, errors.New("sim: no nodes")
	}
	if cfg.Network.Latency.Dist == "" {
		def := DefaultNetwork()
		cfg.Network.Latency = def.Latency
	}
	if err := cfg.Network.Validate(n); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if len(cfg.Clocks) != 0 && len(cfg.Clocks) != n {
		return nil, fmt.Errorf("sim: %d clocks for %d nodes", len(cfg.Clocks), n)
	}
	for i, c := range cfg.Clocks {
		if c.DriftPPM <= -1_000_000 {
			return nil, fmt.Errorf("sim: clock of node %d: drift %dppm would stop or reverse time", i, c.DriftPPM)
		}
	}
	if cfg.MaxTime == 0 {
		cfg.MaxTime = Time(time.Hour)
	}
	if cfg.MaxEvents == 0 {
		cfg.MaxEvents = 10_000_000
	}
	k := &Kernel{
		cfg:     cfg,
		names:   make([]string, n),
		nodes:   make([]nodeRT, n),
		kindIdx: map[string]int32{},
		byNode:  make([]NodeCount, n),
		tr:      cfg.Trace,
	}
	if cfg.Observations > 0 {
		k.history = make([]Observation, 0, min(cfg.Observations, MaxReserved))
	}
	seen := map[string]bool{}
	for i, s := range cfg.Nodes {
		if s.Name == "" || s.New == nil {
			return nil, fmt.Errorf("sim: node %d needs a name and a constructor", i)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("sim: duplicate node name %q", s.Name)
		}
		seen[s.Name] = true
		k.names[i] = s.Name
		rt := &k.nodes[i]
		rt.spec = s
		rt.store = NewStorage()
		if len(cfg.Clocks) > 0 {
			rt.clock = cfg.Clocks[i]
		}
		rt.rand.Seed(StreamSeed(cfg.Seed, "node-input", int64(i)))
		k.byNode[i].Name = s.Name
	}
	if n <= denseLinks {
		k.links = make([]link, n*n)
		for i := range k.links {
			k.links[i].lat = cfg.Network.Latency
		}
		for _, l := range cfg.Network.Links {
			k.links[int(l.From)*n+int(l.To)].lat = l.Latency
		}
	} else {
		k.sparse = map[uint64]*link{}
		k.latOf = map[uint64]Latency{}
		for _, l := range cfg.Network.Links {
			k.latOf[linkKey(l.From, l.To)] = l.Latency
		}
	}
	k.knobs = cfg.Network.Knobs()
	if cfg.Coverage {
		k.cov = NewCoverage()
		k.out.TrackCoverage(true)
	}
	// Every node is up from time 0; their Start inputs are the first events, in node
	// order, so a message sent at start to a later node is not lost.
	for i := range k.nodes {
		k.nodes[i].node = k.nodes[i].spec.New()
		k.nodes[i].up = true
		k.q.push(0, event{kind: evStart, node: NodeID(i)})
	}
	return k, nil
}

// Names returns the node names by NodeID.
func (k *Kernel) Names() []string { return k.names }

// Now returns the current global virtual time.
func (k *Kernel) Now() Time { return k.now }

// Events returns the number of events processed so far.
func (k *Kernel) Events() int64 { return k.events }

// Up reports whether node n is running.
func (k *Kernel) Up(n NodeID) bool { return k.nodes[n].up }

// NodeState returns node n's current state (nil while crashed). Read only.
func (k *Kernel) NodeState(n NodeID) Node { return k.nodes[n].node }

// History returns the observations so far. Read only.
func (k *Kernel) History() []Observation { return k.history }

// StopWhen installs a predicate checked after every event; when it holds the run ends
// with outcome Stopped.
func (k *Kernel) StopWhen(f func() bool) { k.stop = f }

// Inject schedules msg to be handed to node to at time at, as a Receive from Env
// (workload). It is not a network message: it is not counted and never lost, except
// that a crashed node does not receive it.
func (k *Kernel) Inject(at Time, to NodeID, msg Message) {
	k.checkNode(to, "Inject")
	k.q.push(at, event{kind: evInject, node: to, from: Env, msg: msg})
}

// Schedule injects fault f at time at.
func (k *Kernel) Schedule(at Time, f Fault) {
	k.faults = append(k.faults, f)
	k.q.push(at, event{kind: evFault, fault: int32(len(k.faults) - 1)})
}

func (k *Kernel) checkNode(n NodeID, what string) {
	if n < 0 || int(n) >= len(k.nodes) {
		panic(fmt.Sprintf("sim: %s: unknown node %d", what, n))
	}
}

func (k *Kernel) name(n NodeID) string {
	if n == Env {
		return "env"
	}
	return k.names[n]
}

// Run processes events until the queue is empty, the planned end, a bound, the stop
// predicate or a protocol panic, and returns the result. Run may be called once.
func (k *Kernel) Run() *Result {
	for k.Step() {
	}
	return k.Result()
}

// Step processes the next event and reports whether the run goes on. Once it returns
// false the run has ended; Result reports it.
func (k *Kernel) Step() bool {
	for k.outcome == 0 {
		if k.q.len() == 0 {
			k.outcome = Quiescent
			break
		}
		next := k.q.peek().at
		if k.cfg.Until > 0 && next > k.cfg.Until {
			k.now = k.cfg.Until
			k.outcome = Horizon
			break
		}
		if next > k.cfg.MaxTime {
			k.now = k.cfg.MaxTime
			k.outcome = TimeBound
			break
		}
		if k.events >= k.cfg.MaxEvents {
			k.outcome = EventBound
			break
		}
		key := k.q.pop()
		prev := k.now
		k.now = key.at
		// The event is read in place: a push during dispatch that grows the slab
		// leaves it readable in the old array, and its slot is freed only after.
		counted := k.dispatch(&k.q.slab[key.slot])
		k.q.release(key.slot)
		if !counted {
			k.now = prev // a stale timer is not an event: it does not advance time
			continue
		}
		k.events++
		if k.stop != nil && k.outcome == 0 && k.stop() {
			k.outcome = Stopped
		}
		return k.outcome == 0
	}
	return false
}

// Result returns the result of an ended run (and writes the trace footer, once). It
// panics if the run has not ended.
func (k *Kernel) Result() *Result {
	if k.outcome == 0 {
		panic("sim: Result before the run ended")
	}
	res := k.result()
	if k.tr != nil && !k.ended {
		k.tr.End(&TraceFooter{
			End: res.Outcome.String(), Events: res.Events, Time: res.Time,
			Sent: res.Messages.Sent, Delivered: res.Messages.Delivered, Lost: res.Messages.Lost,
		})
	}
	k.ended = true
	return res
}

// dispatch handles one event and reports whether it counted as an event (stale timers
// do not).
func (k *Kernel) dispatch(ev *event) bool {
	switch ev.kind {
	case evStart:
		if !k.nodes[ev.node].up {
			return false
		}
		k.call(ev.node, Input{Kind: Start}, nil)
	case evDeliver:
		rt := &k.nodes[ev.node]
		why := ""
		switch {
		case !rt.up:
			why = "receiver down"
		case rt.inc != ev.inc:
			why = "receiver restarted"
		case k.linkCut(ev.from, ev.node):
			why = "partition"
		}
		kc := &k.byKind[ev.ki]
		if why != "" {
			kc.Lost++
			k.total.Lost++
			k.byNode[ev.node].Lost++
			k.traceLost(ev, why)
			return true
		}
		kc.Delivered++
		k.total.Delivered++
		k.byNode[ev.node].Delivered++
		k.call(ev.node, Input{Kind: Receive, From: ev.from, Msg: ev.msg}, ev)
	case evInject:
		rt := &k.nodes[ev.node]
		if !rt.up {
			k.traceLost(ev, "receiver down")
			return true
		}
		k.call(ev.node, Input{Kind: Receive, From: Env, Msg: ev.msg}, ev)
	case evTimer:
		rt := &k.nodes[ev.node]
		if !rt.up || rt.inc != ev.inc {
			return false
		}
		// Generations are unique: the timer is current if one has the event's.
		i := -1
		for j := range rt.timers {
			if rt.timers[j].gen == ev.gen {
				i = j
				break
			}
		}
		if i < 0 {
			return false
		}
		rt.timers = slices.Delete(rt.timers, i, i+1)
		k.call(ev.node, Input{Kind: Timeout, Timer: ev.timer}, ev)
	case evFault:
		k.applyFault(&k.faults[ev.fault], ev.fault)
	case evCrashSendEnd:
		rt := &k.nodes[ev.node]
		if !rt.up || rt.crashSend != ev.fault+1 {
			return false // it crashed mid-send already (or otherwise)
		}
		rt.crashSend = 0
		k.crash(ev.node, "crash-send: no send in its window, crashed at the window's end")
	}
	return true
}

// crash takes node n down: volatile state, timers and the messages in flight to it
// (by its incarnation) are lost. why, when set, goes into the trace record.
func (k *Kernel) crash(n NodeID, why string) {
	rt := &k.nodes[n]
	rt.up = false
	rt.inc++
	rt.node = nil
	rt.timers = rt.timers[:0]
	rt.crashSend = 0
	if k.tr != nil {
		r := k.beginRecord("crash", n)
		r.Why = why
		k.tr.Record(r)
	}
}

// call runs one handler and applies its effects. A panic discards the effects and
// ends the run.
func (k *Kernel) call(n NodeID, in Input, ev *event) {
	rt := &k.nodes[n]
	in.Self = n
	in.Now = rt.clock.Local(k.now)
	in.Rand = rt.rand.Uint64()
	in.Stable = rt.store.View()
	k.out.Reset()
	// The record is begun before the handler runs (it reads nothing the handler
	// changes); a panic discards it (tracePanic begins its own).
	var rec *TraceRecord
	if k.tr != nil {
		rec = k.beginRecord(in.Kind.String(), n)
		local := in.Now
		rec.Local = &local
		switch in.Kind {
		case Receive:
			rec.From = k.name(in.From)
			if in.From == Env {
				rec.Ev = "inject"
			}
			rec.Kind = in.Msg.Kind()
			rec.Msg = in.Msg
			if ev != nil && ev.dup {
				rec.Why = "duplicate"
			}
		case Timeout:
			rec.Timer = string(in.Timer)
		}
	}
	if !k.safeCall(rt.node, n, in, rec) {
		k.tracePanic(n)
		return
	}
	if rec != nil {
		k.tr.Record(rec)
	}
	if k.crashNow {
		k.crashNow = false
		k.crash(n, "crash-send: crashed part-way through the call's sends")
	}
}

// safeCall runs the handler and applies its effects, under one recover: a panic of
// the handler, or an invalid effect (a send to an unknown node, a stable value
// DeepCopy cannot copy: a protocol bug), ends the run.
func (k *Kernel) safeCall(node Node, n NodeID, in Input, rec *TraceRecord) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			k.panicErr = &PanicError{Node: n, Input: in.Kind, Value: r, Stack: string(debug.Stack())}
			k.outcome = Panicked
			ok = false
		}
	}()
	node.Handle(in, &k.out)
	for _, e := range k.out.sends {
		if e.To < 0 || int(e.To) >= len(k.nodes) {
			panic(fmt.Sprintf("send of %s to unknown node %d", e.Msg.Kind(), e.To))
		}
	}
	k.apply(n, in.Now, rec)
	if k.cov != nil {
		k.cov.Add(k.out.cover)
		k.feature(n, in)
	}
	return true
}

// feature records, with coverage on, the shape of one handler call: the node, the
// input it handled before and this input (message kinds, timer names, start and
// restart), and the rules the call covered — a happens-before summary of the run
// in the small that guided sweeps use to tell a run that did something new.
func (k *Kernel) feature(n NodeID, in Input) {
	rt := &k.nodes[n]
	h := uint64(in.Kind)
	switch in.Kind {
	case Receive:
		h = Mix64(h ^ hashString(in.Msg.Kind()))
		if in.From == Env {
			h = Mix64(h ^ 0x656e76)
		}
	case Timeout:
		h = Mix64(h ^ hashString(string(in.Timer)))
	}
	// Not the node's index: a swarm draws its topology from the seed, and a shape is
	// new when the protocol does something new, not when a new seed numbers its
	// nodes otherwise.
	f := Mix64(rt.lastIn ^ Mix64(h))
	for _, id := range k.out.cover {
		f = Mix64(f ^ uint64(id+1))
	}
	k.cov.Features[f] = struct{}{}
	rt.lastIn = h
}

func hashString(s string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}

func (k *Kernel) tracePanic(n NodeID) {
	if k.tr == nil {
		return
	}
	r := k.beginRecord("panic", n)
	r.Why = fmt.Sprint(k.panicErr.Value)
	k.tr.Record(r)
}

// apply performs the effects in k.out for node n: stable writes first, then timers,
// then sends, then observations.
func (k *Kernel) apply(n NodeID, local Time, rec *TraceRecord) {
	rt := &k.nodes[n]
	o := &k.out
	if len(o.writes) > 0 {
		rt.store.Apply(o.writes)
		if rec != nil {
			for _, w := range o.writes {
				if w.Delete {
					rec.Out = append(rec.Out, TraceEffect{Op: "delete", Key: w.Key})
				} else {
					rec.Out = append(rec.Out, TraceEffect{Op: "store", Key: w.Key, Value: w.Value})
				}
			}
		}
	}
	if rt.crashSend > 0 && len(o.sends) > 0 {
		k.applyCrashSend(n, rt, local, rec)
		return
	}
	for _, t := range o.timers {
		i := -1
		for j := range rt.timers {
			if rt.timers[j].id == t.ID {
				i = j
				break
			}
		}
		if t.Cancel {
			if i >= 0 {
				rt.timers = slices.Delete(rt.timers, i, i+1)
			}
			if rec != nil {
				rec.Out = append(rec.Out, TraceEffect{Op: "cancel", Timer: string(t.ID)})
			}
			continue
		}
		k.gen++
		tm := timer{id: t.ID, deadline: local + Time(t.After), gen: k.gen}
		if i >= 0 {
			rt.timers[i] = tm
		} else {
			rt.timers = append(rt.timers, tm)
		}
		k.pushTimer(n, tm)
		if rec != nil {
			rec.Out = append(rec.Out, TraceEffect{Op: "set", Timer: string(t.ID), After: t.After})
		}
	}
	for _, e := range o.sends {
		k.send(n, e, rec)
	}
	k.observe(n, local, rec)
}

// applyCrashSend applies the effects of a call cut short by the FaultCrashSend armed
// on node n: the stable writes are applied already; a prefix of the sends, in an order
// drawn from the fault's own stream, leaves (possibly none, never all), the rest is
// lost, the observations are recorded, and the node crashes after the call (timers
// set by the call die with it).
func (k *Kernel) applyCrashSend(n NodeID, rt *nodeRT, local Time, rec *TraceRecord) {
	o := &k.out
	var r Rand
	r.Seed(StreamSeed(k.cfg.Seed, "crash-send", int64(rt.crashSend-1)))
	order := make([]int, len(o.sends))
	for i := range order {
		order[i] = i
	}
	for i := len(order) - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	leave := r.IntN(len(order))
	for i, j := range order {
		e := o.sends[j]
		if i < leave {
			k.send(n, e, rec)
			continue
		}
		ki := k.kindOf(e.Msg)
		kc := &k.byKind[ki]
		kc.Sent++
		kc.Lost++
		k.total.Sent++
		k.total.Lost++
		k.byNode[n].Sent++
		k.byNode[e.To].Lost++
		if s, ok := e.Msg.(Sizer); ok {
			kc.Bytes += int64(s.Size())
			k.total.Bytes += int64(s.Size())
		}
		if rec != nil {
			rec.Out = append(rec.Out, TraceEffect{Op: "send", To: k.names[e.To], Kind: e.Msg.Kind(), Msg: e.Msg, Lost: "sender crashed"})
		}
	}
	k.observe(n, local, rec)
	k.crashNow = true
}

// historyDoubling is the history's capacity (observations) up to which it doubles as
// it grows; past it, it grows by a quarter.
const historyDoubling = 1 << 20

// observe records the call's observations in the history (and the trace record).
func (k *Kernel) observe(n NodeID, local Time, rec *TraceRecord) {
	o := &k.out
	if need := len(k.history) + len(o.obs); need > cap(k.history) {
		// Double a short history rather than let append grow it by a quarter at a time
		// (each growth copies every observation, pointers, so with write barriers); past
		// historyDoubling, grow by a quarter: a history of 100 000 nodes is half a
		// gigabyte, and doubling would leave up to as much again unused.
		grow := cap(k.history)
		if grow > historyDoubling {
			grow /= 4
		}
		size := max(need, cap(k.history)+grow, 256)
		if hint := k.cfg.Observations; hint > cap(k.history) && hint >= need {
			size = hint
		}
		h := make([]Observation, len(k.history), size)
		copy(h, k.history)
		k.history = h
	}
	for i := range o.obs {
		k.history = append(k.history, Observation{
			Index: k.nextObs, Time: k.now, Local: local, Node: n,
			Kind: o.obs[i].kind, Value: o.obs[i].value,
		})
		k.nextObs++
		if rec != nil {
			rec.Out = append(rec.Out, TraceEffect{Op: "obs", Kind: o.obs[i].kind, Value: o.obs[i].value})
		}
	}
}

func (k *Kernel) pushTimer(n NodeID, tm timer) {
	rt := &k.nodes[n]
	at := rt.clock.Global(tm.deadline)
	if at < k.now {
		at = k.now
	}
	k.q.push(at, event{kind: evTimer, node: n, inc: rt.inc, gen: tm.gen, timer: tm.id})
}

func (k *Kernel) kindOf(m Message) int32 {
	name := m.Kind()
	if name == k.lastKind && k.kinds != nil {
		return k.lastKindIdx
	}
	if len(k.kinds) <= 8 {
		// A protocol has a few kinds: a scan is cheaper than the map.
		for i, kn := range k.kinds {
			if kn == name {
				k.lastKind, k.lastKindIdx = name, int32(i)
				return int32(i)
			}
		}
	} else if i, ok := k.kindIdx[name]; ok {
		k.lastKind, k.lastKindIdx = name, i
		return i
	}
	i := int32(len(k.kinds))
	k.kindIdx[name] = i
	k.kinds = append(k.kinds, name)
	k.byKind = append(k.byKind, MsgCount{})
	return i
}

func linkKey(from, to NodeID) uint64 { return uint64(uint32(from))<<32 | uint64(uint32(to)) }

// linkOf returns the state of the directed link from→to, creating (and seeding) it on
// first use. Its streams depend only on the seed and the two nodes, so when a link is
// first used never changes its draws.
func (k *Kernel) linkOf(from, to NodeID) *link {
	var l *link
	if k.sparse == nil {
		l = &k.links[int(from)*len(k.nodes)+int(to)]
	} else {
		key := linkKey(from, to)
		if l = k.sparse[key]; l == nil {
			l = &link{lat: k.cfg.Network.Latency}
			if lat, ok := k.latOf[key]; ok {
				l.lat = lat
			}
			k.sparse[key] = l
		}
	}
	if !l.seeded {
		l.seeded = true
		l.rng.Seed(StreamSeed(k.cfg.Seed, "link", int64(from), int64(to)))
		l.chaos.Seed(StreamSeed(k.cfg.Seed, "chaos", int64(from), int64(to)))
	}
	return l
}

func (k *Kernel) linkCut(from, to NodeID) bool {
	if from == Env {
		return false
	}
	if k.partitioned && k.nodes[from].group != k.nodes[to].group {
		return true
	}
	if k.sparse != nil {
		l := k.sparse[linkKey(from, to)]
		return l != nil && l.cut
	}
	return k.links[int(from)*len(k.nodes)+int(to)].cut
}

// spikeExtra is the extra latency of a send from→to now: the newest spike rule that
// names the link, if it is still in force.
func (k *Kernel) spikeExtra(from, to NodeID) time.Duration {
	for i := len(k.spikes) - 1; i >= 0; i-- {
		s := &k.spikes[i]
		if (s.from == Any || s.from == from) && (s.to == Any || s.to == to) {
			if k.now < s.until {
				return s.extra
			}
			return 0
		}
	}
	return 0
}

// send puts one message on the network. The latency draw happens first and always, so
// whether a message is lost never shifts the link's later delays.
func (k *Kernel) send(from NodeID, e Envelope, rec *TraceRecord) {
	ki := k.kindOf(e.Msg)
	kc := &k.byKind[ki]
	kc.Sent++
	k.total.Sent++
	k.byNode[from].Sent++
	if s, ok := e.Msg.(Sizer); ok {
		kc.Bytes += int64(s.Size())
		k.total.Bytes += int64(s.Size())
	}
	l := k.linkOf(from, e.To)
	delay := l.lat.Sample(&l.rng)
	if len(k.spikes) > 0 {
		delay += k.spikeExtra(from, e.To)
	}
	loss, dup := k.cfg.Network.Loss, k.cfg.Network.Duplicate
	if k.now < k.burstUntil {
		loss = max(loss, k.burstLoss)
		dup = max(dup, k.burstDup)
	}
	lost := ""
	switch {
	case !k.nodes[e.To].up:
		lost = "receiver down"
	case k.linkCut(from, e.To):
		lost = "partition"
	case loss > 0 && l.chaos.Bernoulli(loss):
		lost = "loss"
	}
	if lost != "" {
		kc.Lost++
		k.total.Lost++
		k.byNode[e.To].Lost++
		if rec != nil {
			rec.Out = append(rec.Out, TraceEffect{Op: "send", To: k.names[e.To], Kind: e.Msg.Kind(), Msg: e.Msg, Lost: lost})
		}
		return
	}
	at := k.now + Time(delay)
	inc := k.nodes[e.To].inc
	if k.cfg.Network.Reorder > 0 && l.chaos.Bernoulli(k.cfg.Network.Reorder) {
		w := k.cfg.Network.ReorderWindow
		if w == 0 {
			w = 10 * time.Millisecond
		}
		at += Time(l.chaos.Uint64N(uint64(w) + 1))
	} else {
		if at < l.last {
			at = l.last
		}
		l.last = at
	}
	k.q.push(at, event{kind: evDeliver, node: e.To, from: from, inc: inc, msg: e.Msg, ki: ki})
	if rec != nil {
		rec.Out = append(rec.Out, TraceEffect{Op: "send", To: k.names[e.To], Kind: e.Msg.Kind(), Msg: e.Msg, At: at})
	}
	if dup > 0 && l.chaos.Bernoulli(dup) {
		kc.Duplicated++
		k.total.Duplicated++
		dat := at + Time(l.lat.Sample(&l.chaos))
		k.q.push(dat, event{kind: evDeliver, node: e.To, from: from, inc: inc, msg: e.Msg, dup: true, ki: ki})
		if rec != nil {
			rec.Out = append(rec.Out, TraceEffect{Op: "send", To: k.names[e.To], Kind: e.Msg.Kind(), Msg: e.Msg, At: dat, Dup: true})
		}
	}
}

func (k *Kernel) beginRecord(ev string, n NodeID) *TraceRecord {
	r := &k.recBuf
	out := r.Out[:0]
	*r = TraceRecord{I: k.events, T: k.now, Ev: ev, Out: out}
	if n >= 0 {
		r.Node = k.names[n]
	}
	return r
}

func (k *Kernel) traceLost(ev *event, why string) {
	if k.tr == nil {
		return
	}
	r := k.beginRecord("lost", ev.node)
	r.From = k.name(ev.from)
	r.Kind = ev.msg.Kind()
	r.Msg = ev.msg
	r.Why = why
	k.tr.Record(r)
}

func (k *Kernel) applyFault(f *Fault, idx int32) {
	var rec *TraceRecord
	if k.tr != nil {
		rec = k.beginRecord(f.Kind.String(), -1)
		rec.Why = f.describe(k.names)
	}
	switch f.Kind {
	case FaultCrash:
		rt := &k.nodes[f.Node]
		if rec != nil {
			rec.Node = k.names[f.Node]
		}
		if !rt.up {
			if rec != nil {
				rec.Why = "already down"
			}
			break
		}
		rt.up = false
		rt.inc++
		rt.node = nil
		rt.timers = rt.timers[:0]
		rt.crashSend = 0
	case FaultCrashSend:
		rt := &k.nodes[f.Node]
		if rec != nil {
			rec.Node = k.names[f.Node]
		}
		if !rt.up {
			if rec != nil {
				rec.Why = "already down"
			}
			break
		}
		rt.crashSend = idx + 1
		k.q.push(k.now+Time(f.For), event{kind: evCrashSendEnd, node: f.Node, fault: idx})
	case FaultRestart:
		rt := &k.nodes[f.Node]
		if rt.up {
			if rec != nil {
				rec.Node = k.names[f.Node]
				rec.Why = "already up"
				k.tr.Record(rec)
			}
			return
		}
		rt.node = rt.spec.New()
		rt.up = true
		// The restart handler's own record carries the effects.
		k.call(f.Node, Input{Kind: Restart}, nil)
		return
	case FaultPartition:
		k.partitioned = true
		for i := range k.nodes {
			k.nodes[i].group = int32(len(f.Groups))
		}
		for g, members := range f.Groups {
			for _, m := range members {
				k.nodes[m].group = int32(g)
			}
		}
	case FaultCut:
		k.linkOf(f.From, f.To).cut = true
	case FaultRestore:
		k.linkOf(f.From, f.To).cut = false
	case FaultHeal:
		k.partitioned = false
		for i := range k.links {
			k.links[i].cut = false
		}
		for _, l := range k.sparse {
			l.cut = false
		}
	case FaultSpike:
		k.spikes = append(k.spikes, spikeRule{from: f.From, to: f.To, extra: f.Extra, until: k.now + Time(f.For)})
	case FaultSkew:
		rt := &k.nodes[f.Node]
		if rec != nil {
			rec.Node = k.names[f.Node]
		}
		// Keep the local reading continuous apart from the step: re-base the offset
		// so that a drift change does not jump the clock by drift·t.
		before := rt.clock.Local(k.now)
		if f.SetDrift {
			rt.clock.DriftPPM = f.DriftPPM
		}
		rt.clock.Offset = 0
		rt.clock.Offset = time.Duration(before-rt.clock.Local(k.now)) + f.Step
		// Pending timers keep their local deadlines: re-schedule them on the new clock,
		// in timer order (deterministic).
		if rt.up {
			for i := range rt.timers {
				k.gen++
				rt.timers[i].gen = k.gen
				k.pushTimer(f.Node, rt.timers[i])
			}
		}
	case FaultBurst:
		k.burstLoss, k.burstDup = f.Loss, f.Dup
		k.burstUntil = k.now + Time(f.For)
		k.knobs = append(k.knobs, fmt.Sprintf("burst loss=%g dup=%g at %v for %v", f.Loss, f.Dup, k.now, f.For))
	}
	if rec != nil {
		k.tr.Record(rec)
	}
}
