package replication

import (
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Client is a front end issuing operations one after another to a replica group found
// through the registries (a Call each); a request unanswered within Retry is re-sent
// (same ID) after a new lookup. Every call and return is observed (RP-P3).
type Client struct {
	O     *Options
	Ops   []Op
	Retry time.Duration
	// Think is the pause between a return and the next call (0: none).
	Think time.Duration
	Next  int
	Seq   int64
	// Known are the replicas that answered the last call (passive: the primary; active:
	// the group), used until a call times out.
	Known []sim.NodeID
	Call  *Call
	// Lk numbers the lookups across calls (a late answer to an earlier call's
	// lookup is not taken for the current one's).
	Lk  int64
	out *sim.Outbox
	me  sim.NodeID
}

// Go starts a client's operations (injected by the workload).
type Go struct{}

// Kind implements sim.Message.
func (Go) Kind() string { return "GO" }

// NewClient returns a client's constructor.
func NewClient(o *Options, ops []Op, retry time.Duration) func() sim.Node {
	return func() sim.Node { return &Client{O: o, Ops: ops, Retry: retry} }
}

// NewThinkingClient returns a client's constructor that pauses think between calls.
func NewThinkingClient(o *Options, ops []Op, retry, think time.Duration) func() sim.Node {
	return func() sim.Node { return &Client{O: o, Ops: ops, Retry: retry, Think: think} }
}

// Handle implements sim.Node.
func (c *Client) Handle(in sim.Input, out *sim.Outbox) {
	c.out, c.me = out, in.Self
	defer func() { c.out = nil }()
	switch in.Kind {
	case sim.Restart:
		// A front end that crashed resumes its pending request with the same ID
		// (at most once: the primary's duplicate table answers it if it ran).
		c.Next, _ = sim.Load[int](in.Stable, "next")
		c.Seq, _ = sim.Load[int64](in.Stable, "seq")
		pending, _ := sim.Load[bool](in.Stable, "pending")
		switch {
		case pending:
			out.Cover(ruleClientBack)
			c.send()
		case c.Seq > 0:
			c.issue() // it crashed between a return and its next call
		}
	case sim.Timeout:
		if in.Timer == "think" {
			c.issue()
			return
		}
		if c.Call != nil {
			out.Cover(ruleResend)
			c.Known = nil
			c.Call.Lookup(out, c.O.Registries)
			out.SetTimer("retry", c.Retry)
		}
	case sim.Receive:
		switch m := in.Msg.(type) {
		case Go:
			if c.Seq == 0 {
				c.issue()
			}
		case Found:
			if c.Call != nil {
				c.Call.Found(out, m)
			}
		case Response:
			if c.Call == nil && c.O.Active {
				out.Cover(ruleLateReply)
			}
			if c.Call == nil || !c.Call.Answered(out, c.O.Registries, m) {
				return
			}
			out.Observe(ObsReturn, ClientOp{Client: c.me, Seq: c.Seq, Op: c.Ops[c.Next], Val: m.Val})
			c.Known, c.Lk = c.Call.Sent, c.Call.Lk
			c.Call = nil
			c.Next++
			out.Store("next", c.Next)
			out.Store("pending", false)
			if c.Think > 0 && c.Next < len(c.Ops) {
				out.CancelTimer("retry")
				out.SetTimer("think", c.Think)
				return
			}
			c.issue()
		}
	}
}

func (c *Client) issue() {
	if c.Next >= len(c.Ops) {
		c.out.CancelTimer("retry")
		return
	}
	c.Seq++
	c.out.Store("next", c.Next)
	c.out.Store("seq", c.Seq)
	c.out.Store("pending", true)
	c.out.Observe(ObsCall, ClientOp{Client: c.me, Seq: c.Seq, Op: c.Ops[c.Next]})
	c.send()
}

func (c *Client) send() {
	c.Call = &Call{Group: c.O.Group, Active: c.O.Active, Req: Request{ID: ClientID(c.me, c.Seq), Client: c.me, Seq: c.Seq, Op: c.Ops[c.Next]}, Lk: c.Lk}
	c.Call.Start(c.out, c.O.Registries, c.Known)
	c.out.SetTimer("retry", c.Retry)
}
