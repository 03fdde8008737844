// Package demo is the simulator's own small protocol: a key-value counter service with
// client retries ("ping-pong with retries"). It exercises every part of the kernel —
// messages, timers, stable storage, crash and restart, observations, input randomness —
// and is what the kernel's tests and the default run use.
//
// One server holds integer counters by key. Each client runs a closed loop of
// operations (Add or Get on a random key), one at a time, each tagged with the client's
// sequence number. A client re-sends its pending request every Retry until the reply
// arrives. The server applies a request at most once: it keeps, in stable storage, the
// counters and the last sequence number and reply of every client, and answers a
// repeated request from that table. Clients keep their sequence number and pending
// request in stable storage too, so they resume after a crash.
//
// Observations: "begin" (Begun) when a client accepts work, "call" (Call) when a client
// issues an operation, "return" (Return) when its reply arrives, "applied" (Applied)
// when the server executes one. The history is linearizable against a map of counters,
// partitioned by key.
package demo

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Op is an operation kind.
type Op string

const (
	// OpAdd adds Arg to the counter and returns its new value.
	OpAdd Op = "add"
	// OpGet returns the counter's value.
	OpGet Op = "get"
)

// Request asks the server to perform an operation.
type Request struct {
	Client sim.NodeID
	Seq    int64
	Op     Op
	Key    string
	Arg    int64
}

// Kind implements sim.Message.
func (Request) Kind() string { return "Request" }

// Reply answers a Request.
type Reply struct {
	Seq   int64
	Value int64
}

// Kind implements sim.Message.
func (Reply) Kind() string { return "Reply" }

// Begin is the workload input: the client should perform Ops more operations.
type Begin struct{ Ops int }

// Kind implements sim.Message.
func (Begin) Kind() string { return "Begin" }

// Call is observed when a client issues an operation.
type Call struct {
	Client sim.NodeID
	Seq    int64
	Op     Op
	Key    string
	Arg    int64
}

// Return is observed when a client receives the reply to Seq.
type Return struct {
	Client sim.NodeID
	Seq    int64
	Value  int64
}

// Begun is observed when a client accepts a Begin: the operations it now owes. A Begin
// injected while the client is down is lost, and so is the work it carried; liveness
// properties count only the work a client accepted.
type Begun struct {
	Client sim.NodeID
	Ops    int
}

// Applied is observed when the server executes a request (not when it answers a
// duplicate from its table).
type Applied struct {
	Client sim.NodeID
	Seq    int64
	Key    string
	Value  int64
}

// Config parameterises a demo system.
type Config struct {
	Server  sim.NodeID
	Keys    []string      // keys clients choose from
	Retry   time.Duration // client re-send period
	Think   time.Duration // client pause between a reply and its next operation
	AddFrac int           // percentage of operations that are Adds
}

// ---- server ----

// Server is the counter service.
type Server struct {
	cfg *Config
	// Volatile mirror of stable storage ("kv" and "last").
	KV   map[string]int64
	Last map[sim.NodeID]LastReply
}

// LastReply is the dedup entry for one client.
type LastReply struct {
	Seq   int64
	Value int64
}

// NewServer returns a server constructor.
func NewServer(cfg *Config) func() sim.Node {
	return func() sim.Node { return &Server{cfg: cfg} }
}

// Handle implements sim.Node.
func (s *Server) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start:
		s.KV = map[string]int64{}
		s.Last = map[sim.NodeID]LastReply{}
	case sim.Restart:
		// Rebuild from stable storage alone: one entry per key and per client, so a
		// write costs the same with 3 clients or 10 000.
		s.KV = map[string]int64{}
		s.Last = map[sim.NodeID]LastReply{}
		for _, k := range in.Stable.Keys() {
			switch {
			case strings.HasPrefix(k, "kv/"):
				s.KV[k[len("kv/"):]], _ = sim.Load[int64](in.Stable, k)
			case strings.HasPrefix(k, "last/"):
				c, err := strconv.Atoi(k[len("last/"):])
				if err != nil {
					panic(fmt.Sprintf("demo server: stable key %q", k))
				}
				s.Last[sim.NodeID(c)], _ = sim.Load[LastReply](in.Stable, k)
			}
		}
	case sim.Receive:
		req, ok := in.Msg.(Request)
		if !ok {
			panic(fmt.Sprintf("demo server: unexpected %s", in.Msg.Kind()))
		}
		if l, ok := s.Last[req.Client]; ok {
			if req.Seq == l.Seq {
				out.Cover(ruleDedup)
				out.Send(req.Client, Reply{Seq: req.Seq, Value: l.Value})
				return
			}
			if req.Seq < l.Seq {
				out.Cover(ruleStale)
				return // a stale retry; the client has moved on
			}
		}
		out.Cover(ruleApply)
		v := s.KV[req.Key]
		if req.Op == OpAdd {
			v += req.Arg
			s.KV[req.Key] = v
		}
		s.Last[req.Client] = LastReply{Seq: req.Seq, Value: v}
		// Stable writes are applied before the reply leaves (one atomic call).
		out.Store("kv/"+req.Key, v)
		out.Store("last/"+strconv.Itoa(int(req.Client)), s.Last[req.Client])
		out.Observe("applied", Applied{Client: req.Client, Seq: req.Seq, Key: req.Key, Value: v})
		out.Send(req.Client, Reply{Seq: req.Seq, Value: v})
	}
}

// The demo's rule map (rule coverage: simrun run demo/faults --coverage): what a
// protocol declares so that simrun can say which of its rules a run reached.
var (
	rules      = sim.NewRuleMap("demo")
	ruleApply  = rules.Rule("D-1 apply", "the server applies a new request and stores the reply before it leaves")
	ruleDedup  = rules.Rule("D-2 dedup", "the server answers a retry of the last request from its stored reply")
	ruleStale  = rules.Rule("D-3 stale", "the server drops a retry older than the client's last request")
	ruleRetry  = rules.Rule("D-4 retry", "a client re-sends its pending request when the retry timer fires")
	ruleResume = rules.Rule("D-5 resume", "a restarted client re-sends the pending request it stored")
)

// ---- client ----

// Client issues operations one at a time and retries until answered.
type Client struct {
	cfg *Config
	// Stable: Seq of the last issued op, Pending (nil if none), Remaining ops.
	Seq       int64
	Pending   *Request
	Remaining int
}

type clientStable struct {
	Seq       int64
	Pending   *Request
	Remaining int
}

// NewClient returns a client constructor.
func NewClient(cfg *Config) func() sim.Node {
	return func() sim.Node { return &Client{cfg: cfg} }
}

const (
	retryTimer sim.TimerID = "retry"
	thinkTimer sim.TimerID = "think"
)

// Handle implements sim.Node.
func (c *Client) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start:
	case sim.Restart:
		if st, ok := sim.Load[clientStable](in.Stable, "client"); ok {
			c.Seq, c.Pending, c.Remaining = st.Seq, st.Pending, st.Remaining
		}
		if c.Pending != nil {
			out.Cover(ruleResume)
			c.resend(out)
		} else if c.Remaining > 0 {
			c.next(in, out)
		}
	case sim.Receive:
		switch m := in.Msg.(type) {
		case Begin:
			out.Observe("begin", Begun{Client: in.Self, Ops: m.Ops})
			c.Remaining += m.Ops
			if c.Pending == nil {
				c.next(in, out)
			} else {
				c.save(out)
			}
		case Reply:
			if c.Pending == nil || m.Seq != c.Pending.Seq {
				return // a late duplicate
			}
			out.Observe("return", Return{Client: in.Self, Seq: m.Seq, Value: m.Value})
			out.CancelTimer(retryTimer)
			c.Pending = nil
			if c.cfg.Think > 0 && c.Remaining > 0 {
				c.save(out)
				out.SetTimer(thinkTimer, c.cfg.Think)
				return
			}
			c.next(in, out)
		default:
			panic(fmt.Sprintf("demo client: unexpected %s", in.Msg.Kind()))
		}
	case sim.Timeout:
		switch {
		case in.Timer == retryTimer && c.Pending != nil:
			out.Cover(ruleRetry)
			c.resend(out)
		case in.Timer == thinkTimer && c.Pending == nil:
			c.next(in, out)
		}
	}
}

func (c *Client) next(in sim.Input, out *sim.Outbox) {
	if c.Remaining == 0 {
		c.save(out)
		return
	}
	c.Remaining--
	c.Seq++
	r := in.Rand
	op := OpGet
	if int(r%100) < c.cfg.AddFrac {
		op = OpAdd
	}
	key := c.cfg.Keys[int((r>>8)%uint64(len(c.cfg.Keys)))]
	arg := int64(0)
	if op == OpAdd {
		arg = 1 + int64((r>>16)%9)
	}
	c.Pending = &Request{Client: in.Self, Seq: c.Seq, Op: op, Key: key, Arg: arg}
	c.save(out)
	out.Observe("call", Call{Client: in.Self, Seq: c.Seq, Op: op, Key: key, Arg: arg})
	c.resend(out)
}

func (c *Client) resend(out *sim.Outbox) {
	out.Send(c.cfg.Server, *c.Pending)
	out.SetTimer(retryTimer, c.cfg.Retry)
}

func (c *Client) save(out *sim.Outbox) {
	out.Store("client", clientStable{Seq: c.Seq, Pending: c.Pending, Remaining: c.Remaining})
}

// System builds the node specs of a demo system: node 0 is the server "s", nodes
// 1..clients are "c1".."cN".
func System(cfg *Config, clients int) []sim.NodeSpec {
	specs := []sim.NodeSpec{{Name: "s", New: NewServer(cfg)}}
	for i := 1; i <= clients; i++ {
		specs = append(specs, sim.NodeSpec{Name: fmt.Sprintf("c%d", i), New: NewClient(cfg)})
	}
	return specs
}
