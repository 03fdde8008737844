package replication

import (
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Client is a front end issuing operations one after another to the group's primary,
// found through the registries; a request unanswered within Retry is re-sent (same
// ID) to the primary found again. Every call and return is observed (RP-P3).
type Client struct {
	O     *Options
	Ops   []Op
	Retry time.Duration
	Next  int
	// Primary is the primary last found (-1: none).
	Primary sim.NodeID
	Seq     int64
	Lk      int64
	out     *sim.Outbox
	me      sim.NodeID
}

// Go starts a client's operations (injected by the workload).
type Go struct{}

// Kind implements sim.Message.
func (Go) Kind() string { return "GO" }

// NewClient returns a client's constructor.
func NewClient(o *Options, ops []Op, retry time.Duration) func() sim.Node {
	return func() sim.Node { return &Client{O: o, Ops: ops, Retry: retry, Primary: -1} }
}

// Handle implements sim.Node.
func (c *Client) Handle(in sim.Input, out *sim.Outbox) {
	c.out, c.me = out, in.Self
	defer func() { c.out = nil }()
	switch in.Kind {
	case sim.Restart:
		// A front end that crashed resumes its pending request with the same ID
		// (at most once: the primary's duplicate table answers it if it ran).
		c.Primary = -1
		c.Next, _ = sim.Load[int](in.Stable, "next")
		c.Seq, _ = sim.Load[int64](in.Stable, "seq")
		if c.Seq > 0 && c.Next < len(c.Ops) {
			c.find()
			out.SetTimer("retry", c.Retry)
		}
	case sim.Timeout:
		if c.Next < len(c.Ops) && c.Seq > 0 {
			c.Primary = -1
			c.find()
			out.SetTimer("retry", c.Retry)
		}
	case sim.Receive:
		switch m := in.Msg.(type) {
		case Go:
			c.issue()
		case Found:
			if m.Seq != c.Lk || c.Next >= len(c.Ops) {
				return
			}
			for _, g := range m.Regs {
				if g.Primary {
					c.Primary = g.Node
					c.send()
					return
				}
			}
		case Response:
			if m.Seq != c.Seq || c.Next >= len(c.Ops) || c.Seq == 0 {
				return
			}
			if m.NotPrimary {
				c.Primary = -1
				c.find()
				return
			}
			out.Observe(ObsReturn, ClientOp{Client: c.me, Seq: c.Seq, Op: c.Ops[c.Next], Val: m.Val})
			c.Next++
			out.Store("next", c.Next)
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
	c.out.Observe(ObsCall, ClientOp{Client: c.me, Seq: c.Seq, Op: c.Ops[c.Next]})
	c.out.SetTimer("retry", c.Retry)
	if c.Primary < 0 {
		c.find()
		return
	}
	c.send()
}

func (c *Client) find() {
	c.Lk++
	for _, g := range c.O.Registries {
		c.out.Send(g, Lookup{Group: c.O.Group, Seq: c.Lk})
	}
}

func (c *Client) send() {
	c.out.Send(c.Primary, Request{Client: c.me, Seq: c.Seq, Op: c.Ops[c.Next]})
}
