// Package quorum is an outside user's protocol checked with simrun: a replicated
// register over a majority quorum (Attiya, Bar-Noy and Dolev's algorithm, multi-writer).
// It uses only simrun's public packages.
//
// # Rules → files
//
//	QR-1 a replica keeps the newest (tag, value) it has seen, in stable storage   quorum.go (Replica)
//	QR-2 a write asks a majority for their tags, then stores (max+1, writer)      quorum.go (Client.write)
//	QR-3 a read asks a majority, then writes the newest back to a majority        quorum.go (Client.read)
//	QR-4 requests are re-sent until a majority answered                           quorum.go (Client.timer)
//
// A read that skips QR-3's write-back (-p bug=no-writeback) lets a later read return
// an older value: the sweeps (porcupine) and the model checker catch it.
package quorum

import (
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Tag orders writes: a timestamp, ties broken by the writer.
type Tag struct {
	TS int64
	W  int32
}

// Less reports whether t is older than u.
func (t Tag) Less(u Tag) bool { return t.TS < u.TS || (t.TS == u.TS && t.W < u.W) }

// Get asks a replica for its tag and value.
type Get struct{ Req int64 }

// Kind implements sim.Message.
func (Get) Kind() string { return "GET" }

// Got answers a Get.
type Got struct {
	Req int64
	Tag Tag
	Val int64
}

// Kind implements sim.Message.
func (Got) Kind() string { return "GOT" }

// Set asks a replica to store a value if its tag is newer (QR-1).
type Set struct {
	Req int64
	Tag Tag
	Val int64
}

// Kind implements sim.Message.
func (Set) Kind() string { return "SET" }

// SetAck acknowledges a Set.
type SetAck struct{ Req int64 }

// Kind implements sim.Message.
func (SetAck) Kind() string { return "SETACK" }

// Replica is one copy of the register.
type Replica struct {
	Tag Tag
	Val int64
}

// Handle implements sim.Node.
func (r *Replica) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Restart:
		r.Tag, _ = sim.Load[Tag](in.Stable, "tag")
		r.Val, _ = sim.Load[int64](in.Stable, "val")
	case sim.Receive:
		switch m := in.Msg.(type) {
		case Get:
			out.Send(in.From, Got{Req: m.Req, Tag: r.Tag, Val: r.Val})
		case Set:
			// QR-1: keep the newest.
			if r.Tag.Less(m.Tag) {
				r.Tag, r.Val = m.Tag, m.Val
				out.Store("tag", r.Tag)
				out.Store("val", r.Val)
				out.Observe("stored", m.Tag)
			}
			out.Send(in.From, SetAck{Req: m.Req})
		}
	}
}

// Op is a client operation: a write of Val, or a read.
type Op struct {
	Write bool
	Val   int64
}

// Call and Return are a client's observations (the linearizability check reads them).
type Call struct {
	Client sim.NodeID
	N      int
	Op     Op
}

// Return is the end of a call: the value read, and the tag the read returned or the
// write stored.
type Return struct {
	Client sim.NodeID
	N      int
	Op     Op
	Val    int64
	Tag    Tag
}

// Begin starts a client's operations.
type Begin struct{}

// Kind implements sim.Message.
func (Begin) Kind() string { return "BEGIN" }

// Client runs its operations one after another against the replicas.
type Client struct {
	// Replicas are the replicas the client asks (all of them, or any majority of
	// Group); Group is the number of replicas (0: len(Replicas)).
	Replicas []sim.NodeID
	Group    int
	Ops      []Op
	Retry    time.Duration
	// NoWriteBack is the planted bug: a read returns without QR-3's write-back.
	NoWriteBack bool

	N      int // the operation in progress
	Phase  int // 1: asking, 2: storing
	Req    int64
	Acks   map[sim.NodeID]bool
	Best   Got
	Writes Tag
}

// Handle implements sim.Node.
func (c *Client) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Receive:
		switch m := in.Msg.(type) {
		case Begin:
			c.start(in.Self, out)
		case Got:
			if m.Req != c.Req || c.Phase != 1 || c.Acks[in.From] {
				return
			}
			c.Acks[in.From] = true
			if len(c.Acks) == 1 || c.Best.Tag.Less(m.Tag) {
				c.Best = m
			}
			if c.quorum() {
				c.second(in.Self, out)
			}
		case SetAck:
			if m.Req != c.Req || c.Phase != 2 || c.Acks[in.From] {
				return
			}
			c.Acks[in.From] = true
			if c.quorum() {
				c.done(in.Self, out)
			}
		}
	case sim.Timeout:
		// QR-4: re-send until a majority answered.
		if c.N < len(c.Ops) && c.Phase > 0 {
			c.send(out)
			c.arm(out)
		}
	}
}

// quorum reports whether a majority of the group answered.
func (c *Client) quorum() bool {
	n := c.Group
	if n == 0 {
		n = len(c.Replicas)
	}
	return len(c.Acks) > n/2
}

func (c *Client) start(me sim.NodeID, out *sim.Outbox) {
	if c.N >= len(c.Ops) {
		out.CancelTimer("retry")
		return
	}
	out.Observe("call", Call{Client: me, N: c.N, Op: c.Ops[c.N]})
	c.Phase, c.Req, c.Acks, c.Best = 1, c.Req+1, map[sim.NodeID]bool{}, Got{}
	c.send(out)
	c.arm(out)
}

// arm sets the re-send timer (none with Retry 0: the model checker explores reliable
// links without re-sends, which would make its space infinite).
func (c *Client) arm(out *sim.Outbox) {
	if c.Retry > 0 {
		out.SetTimer("retry", c.Retry)
	}
}

// second: QR-2 and QR-3's second phase, after a majority answered the first.
func (c *Client) second(me sim.NodeID, out *sim.Outbox) {
	op := c.Ops[c.N]
	if op.Write {
		c.Best = Got{Tag: Tag{TS: c.Best.Tag.TS + 1, W: int32(me)}, Val: op.Val}
	} else if c.NoWriteBack {
		c.done(me, out)
		return
	}
	c.Phase, c.Req, c.Acks = 2, c.Req+1, map[sim.NodeID]bool{}
	c.send(out)
}

func (c *Client) done(me sim.NodeID, out *sim.Outbox) {
	op := c.Ops[c.N]
	out.Observe("return", Return{Client: me, N: c.N, Op: op, Val: c.Best.Val, Tag: c.Best.Tag})
	c.N++
	c.Phase = 0
	c.start(me, out)
}

func (c *Client) send(out *sim.Outbox) {
	for _, r := range c.Replicas {
		if c.Acks[r] {
			continue
		}
		if c.Phase == 1 {
			out.Send(r, Get{Req: c.Req})
		} else {
			out.Send(r, Set{Req: c.Req, Tag: c.Best.Tag, Val: c.Best.Val})
		}
	}
}
