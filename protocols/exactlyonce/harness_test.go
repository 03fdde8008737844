package exactlyonce

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

// net is a hand-driven test network: the test decides which message is delivered
// and which timer fires, like etcd/raft's paper tests. Effects are applied as the
// kernel applies them (stable writes, timers, sends, observations).
type net struct {
	t      *testing.T
	cfg    *Config
	names  []string
	nodes  []*Node
	stable []*sim.Storage
	up     []bool
	timers []map[sim.TimerID]bool
	queue  []envelope
	obs    []obsRec
	now    sim.Time
	rnd    uint64
}

type envelope struct {
	from, to sim.NodeID
	msg      sim.Message
}

func (e envelope) String() string {
	return fmt.Sprintf("%d->%d %s %+v", e.from, e.to, e.msg.Kind(), e.msg)
}

type obsRec struct {
	node  sim.NodeID
	kind  string
	value any
}

// newNet builds n nodes (n0..n{n-1}) with default timing and Work 0.
func newNet(t *testing.T, n int, mod func(*Config)) *net {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("n%d", i)
	}
	cfg := &Config{Names: names, Capacity: 10, Timing: DefaultTiming()}
	if mod != nil {
		mod(cfg)
	}
	h := &net{t: t, cfg: cfg, names: names}
	for i := 0; i < n; i++ {
		h.nodes = append(h.nodes, NewNode(cfg))
		h.stable = append(h.stable, sim.NewStorage())
		h.up = append(h.up, true)
		h.timers = append(h.timers, map[sim.TimerID]bool{})
	}
	for i := 0; i < n; i++ {
		h.call(sim.NodeID(i), sim.Input{Kind: sim.Start})
	}
	return h
}

// call runs one handler and applies its effects; it returns the outbox for inspection.
func (h *net) call(id sim.NodeID, in sim.Input) *sim.Outbox {
	h.t.Helper()
	if !h.up[id] {
		h.t.Fatalf("call on crashed node %d", id)
	}
	in.Self, in.Now, in.Stable = id, h.now, h.stable[id].View()
	h.rnd = h.rnd*6364136223846793005 + 1442695040888963407
	in.Rand = h.rnd
	out := &sim.Outbox{}
	h.nodes[id].Handle(in, out)
	h.stable[id].Apply(out.Writes())
	for _, op := range out.Timers() {
		if op.Cancel {
			delete(h.timers[id], op.ID)
		} else {
			h.timers[id][op.ID] = true
		}
	}
	for _, s := range out.Sends() {
		h.queue = append(h.queue, envelope{from: id, to: s.To, msg: s.Msg})
	}
	for i := 0; i < out.NumObservations(); i++ {
		k, v := out.Observation(i)
		h.obs = append(h.obs, obsRec{node: id, kind: k, value: v})
	}
	return out
}

// launch hands agent a to its home node.
func (h *net) launch(a Agent) {
	h.call(a.Itinerary.Home(), sim.Input{Kind: sim.Receive, From: sim.Env, Msg: Launch{Agent: a}})
}

// agent builds agent id with an itinerary in ParseItinerary syntax.
func (h *net) agent(id AgentID, itinerary string) Agent {
	h.t.Helper()
	it, err := ParseItinerary(itinerary, h.names, "seats")
	if err != nil {
		h.t.Fatal(err)
	}
	return Agent{ID: id, Itinerary: it}
}

// deliverOne delivers the first queued message matching f (a message to a crashed
// node is dropped, as the kernel does). It reports whether one matched.
func (h *net) deliverOne(f func(envelope) bool) bool {
	h.t.Helper()
	for i, e := range h.queue {
		if f(e) {
			h.queue = slices.Delete(h.queue, i, i+1)
			if h.up[e.to] {
				h.call(e.to, sim.Input{Kind: sim.Receive, From: e.from, Msg: e.msg})
			}
			return true
		}
	}
	return false
}

// deliver delivers every queued message matching f, in order, including those the
// deliveries cause, until none matches (at most 10000 steps).
func (h *net) deliver(f func(envelope) bool) int {
	h.t.Helper()
	n := 0
	for h.deliverOne(f) {
		if n++; n > 10000 {
			h.t.Fatal("deliver: no quiescence after 10000 messages")
		}
	}
	return n
}

// deliverAll delivers everything until the network is empty.
func (h *net) deliverAll() int { return h.deliver(func(envelope) bool { return true }) }

// drop removes every queued message matching f.
func (h *net) drop(f func(envelope) bool) int {
	n := len(h.queue)
	h.queue = slices.DeleteFunc(h.queue, f)
	return n - len(h.queue)
}

// kind matches messages of the given kinds.
func kind(ks ...string) func(envelope) bool {
	return func(e envelope) bool { return slices.Contains(ks, e.msg.Kind()) }
}

// to matches messages to node n.
func to(n sim.NodeID) func(envelope) bool {
	return func(e envelope) bool { return e.to == n }
}

func and(fs ...func(envelope) bool) func(envelope) bool {
	return func(e envelope) bool {
		for _, f := range fs {
			if !f(e) {
				return false
			}
		}
		return true
	}
}

func not(f func(envelope) bool) func(envelope) bool {
	return func(e envelope) bool { return !f(e) }
}

// queued returns the queued messages matching f.
func (h *net) queued(f func(envelope) bool) []envelope {
	var out []envelope
	for _, e := range h.queue {
		if f(e) {
			out = append(out, e)
		}
	}
	return out
}

// fire fires node id's pending timer whose name starts with prefix ("mon/", "prep/1/1").
func (h *net) fire(id sim.NodeID, prefix string) {
	h.t.Helper()
	ids := h.pending(id, prefix)
	if len(ids) == 0 {
		h.t.Fatalf("fire: n%d has no pending timer %q (pending: %v)", id, prefix, h.pending(id, ""))
	}
	delete(h.timers[id], ids[0])
	h.call(id, sim.Input{Kind: sim.Timeout, Timer: ids[0]})
}

// pending lists node id's pending timers whose name starts with prefix, sorted.
func (h *net) pending(id sim.NodeID, prefix string) []sim.TimerID {
	var out []sim.TimerID
	for t := range h.timers[id] {
		if strings.HasPrefix(string(t), prefix) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// crash loses node id's volatile state, timers and messages to it.
func (h *net) crash(id sim.NodeID) {
	h.up[id] = false
	h.nodes[id] = nil
	h.timers[id] = map[sim.TimerID]bool{}
	h.drop(to(id))
}

// restart rebuilds node id from its stable storage.
func (h *net) restart(id sim.NodeID) {
	h.up[id] = true
	h.nodes[id] = NewNode(h.cfg)
	h.call(id, sim.Input{Kind: sim.Restart})
}

// observed returns the values of observations of kind k (by node n, if n >= 0).
func (h *net) observed(k string, n sim.NodeID) []any {
	var out []any
	for _, o := range h.obs {
		if o.kind == k && (n < 0 || o.node == n) {
			out = append(out, o.value)
		}
	}
	return out
}

func obsOf[T any](h *net, k string, n sim.NodeID) []T {
	var out []T
	for _, v := range h.observed(k, n) {
		out = append(out, v.(T))
	}
	return out
}

// stored reports whether node id's stable storage has key k.
func (h *net) stored(id sim.NodeID, k string) bool {
	_, ok := h.stable[id].Peek(k)
	return ok
}

func (h *net) orchState(id sim.NodeID, s StageID) OrchState {
	v, ok := h.stable[id].Peek(stageKey(preOrch, s))
	if !ok {
		return OrchUnknown
	}
	return v.(orchRecord).State
}

func (h *net) orchSetOf(id sim.NodeID, s StageID) []VoteEntry {
	v, ok := h.stable[id].Peek(stageKey(preOrchSet, s))
	if !ok {
		return nil
	}
	return v.([]VoteEntry)
}

func (h *net) role(id sim.NodeID, s StageID) Role {
	if sl := h.nodes[id].sel[s]; sl != nil {
		return sl.role
	}
	return RoleNone
}

func st(a AgentID, hop int32) StageID { return StageID{Agent: a, Hop: hop} }
