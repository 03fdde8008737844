package leasing

import (
	"cmp"
	"fmt"
	"strconv"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// RefID names one reference. The grantor's export (server side) and the holder's
// import (client side) carry the same RefID, so every message and observation about a
// reference names both ends.
//
// N > 0 is a lease: a fresh number per grantor incarnation, and exactly one holder.
// N == 0 is the grantor's well-known far object (AmbientTalk's default remote
// reference: buffered, never expires); it has one in-order channel per holder
// incarnation, so HBoot is part of its name.
type RefID struct {
	Grantor sim.NodeID `json:"g"`
	GBoot   uint32     `json:"gb"`
	N       int64      `json:"n"`
	Holder  sim.NodeID `json:"h"`
	HBoot   uint32     `json:"hb,omitempty"`
}

// IsZero reports whether r is the zero RefID (no reference).
func (r RefID) IsZero() bool { return r == RefID{} }

// Far reports whether r names a far (unleased) reference.
func (r RefID) Far() bool { return r.N == 0 }

// String renders r as "g.boot#n>h" ("g.boot#far>h.boot" for far references).
func (r RefID) String() string {
	// Appended by hand: fmt.Sprintf was a noticeable share of a sweep (the checkers
	// key every lease by this string).
	b := make([]byte, 0, 32)
	b = strconv.AppendInt(b, int64(r.Grantor), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, uint64(r.GBoot), 10)
	if r.Far() {
		b = append(b, "#far>"...)
		b = strconv.AppendInt(b, int64(r.Holder), 10)
		b = append(b, '.')
		b = strconv.AppendUint(b, uint64(r.HBoot), 10)
		return string(b)
	}
	b = append(b, '#')
	b = strconv.AppendInt(b, r.N, 10)
	b = append(b, '>')
	b = strconv.AppendInt(b, int64(r.Holder), 10)
	return string(b)
}

// Compare orders RefIDs (grantor, boot, n, holder, holder boot); used wherever the
// runtime iterates over references, so that no map order reaches an output.
func (r RefID) Compare(o RefID) int {
	return cmp.Or(
		cmp.Compare(r.Grantor, o.Grantor), cmp.Compare(r.GBoot, o.GBoot),
		cmp.Compare(r.N, o.N), cmp.Compare(r.Holder, o.Holder), cmp.Compare(r.HBoot, o.HBoot))
}

// Op is what a Call asks of the server side of a reference.
type Op uint8

const (
	// OpApp is an application message for the service object.
	OpApp Op = iota + 1
	// OpRenew is a renewal requested by the holder (LS-2 renew, client side).
	OpRenew
	// OpRevoke is a revocation requested by the holder (LS-2 revoke, client side).
	OpRevoke
)

func (o Op) String() string {
	switch o {
	case OpApp:
		return "app"
	case OpRenew:
		return "renew"
	case OpRevoke:
		return "revoke"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// MarshalText renders the op by name in traces.
func (o Op) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// End says how a side of a lease ended.
type End uint8

const (
	// Live: the lease has not ended.
	Live End = iota
	// Expired: the lease timed out or was expired explicitly; listeners run.
	Expired
	// Revoked: the lease was revoked; listeners do not run (LS-2).
	Revoked
)

func (e End) String() string {
	switch e {
	case Live:
		return "live"
	case Expired:
		return "expired"
	case Revoked:
		return "revoked"
	}
	return fmt.Sprintf("end(%d)", uint8(e))
}

// MarshalText renders the end by name in traces.
func (e End) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// Passed is a reference parameter-passed inside a Call (pass-by-lease, §5.1): the
// receiving runtime resolves it into an import (the client side). Left is the
// grantor's time left at the moment of transmission (LS-2: the client timer starts
// from the server's remaining time, not from the initial term).
type Passed struct {
	ID      RefID         `json:"id"`
	Object  string        `json:"object"`
	Pattern string        `json:"pattern,omitempty"`
	Term    time.Duration `json:"term,omitempty"`
	Left    time.Duration `json:"left,omitempty"`
	// Until is the grantor's deadline on its own clock: the version of Left (see Ack).
	Until sim.Time `json:"until,omitempty"`
	// Dead marks a reference whose lease ended before this transmission: the receiver
	// gets no usable import for it.
	Dead bool `json:"dead,omitempty"`
}

// Beacon is the discovery layer's periodic "I am in range" broadcast. Boot is the
// sender's incarnation (a reboot invalidates its far channels).
type Beacon struct {
	Boot uint32 `json:"boot"`
}

// Kind implements sim.Message.
func (Beacon) Kind() string { return "beacon" }

// Call carries one message through a reference, from holder to grantor, in the
// reference's order (Seq 1, 2, …). Retransmissions repeat Seq; the grantor processes
// each Seq once.
type Call struct {
	Ref    RefID         `json:"ref"`
	SBoot  uint32        `json:"sboot"`
	Seq    int64         `json:"seq"`
	Op     Op            `json:"op"`
	Method string        `json:"method,omitempty"`
	Args   any           `json:"args,omitempty"`
	D      time.Duration `json:"d,omitempty"` // OpRenew: requested renewal time
	Pass   []Passed      `json:"pass,omitempty"`
	Reply  *Passed       `json:"reply,omitempty"` // the future to resolve (LS-4)
}

// Kind implements sim.Message: "call", "renew" or "revoke" (renewal traffic is counted
// by kind).
func (c Call) Kind() string {
	switch c.Op {
	case OpRenew:
		return "renew"
	case OpRevoke:
		return "revoke"
	}
	return "call"
}

// Ack acknowledges a reference's calls up to UpTo (cumulative) and piggybacks the
// grantor's remaining lease time (LS-2), so the holder's timer follows the grantor's.
// End != Live tells the holder that the lease ended at the grantor by revoke or by an
// explicit expire (never sent for a natural expiry: the holder's own timer detects
// that, §3).
//
// Until is the grantor's deadline on the grantor's own clock when Left was taken. The
// holder never compares it with its own clock: it is only a version number for Left.
// A live lease's deadline never decreases at its grantor (the max rule), so an ack
// whose Until is not larger than the one the holder last applied carries nothing new
// — typically a late duplicate, which would otherwise move the holder's timer by the
// duplicate's extra delay (or back, when a renewal came in between) — and its Left is
// ignored.
type Ack struct {
	Ref   RefID         `json:"ref"`
	SBoot uint32        `json:"sboot"`
	UpTo  int64         `json:"upto"`
	Left  time.Duration `json:"left,omitempty"`
	Until sim.Time      `json:"until,omitempty"`
	End   End           `json:"end,omitempty"`
}

// Kind implements sim.Message.
func (Ack) Kind() string { return "ack" }

// bootOf returns the sender incarnation a message carries.
func bootOf(m sim.Message) (uint32, bool) {
	switch m := m.(type) {
	case Beacon:
		return m.Boot, true
	case Call:
		return m.SBoot, true
	case Ack:
		return m.SBoot, true
	}
	return 0, false
}
