package lsscen

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/sim"
)

// LS-P6: the history of each lease is linearizable against a sequential lease
// register — the grantor's lease object of Fig. 5 as a specification:
//
//	grant(term)        at t:  deadline := t + term
//	deliver(#n) → ok   at t:  ok ⇔ granted, not ended, t < deadline
//	renew(d) → ok      at t:  ok ⇔ live at t; then deadline := max(deadline, t + d)   (max rule)
//	end(how, cause)    at t:  legal once, while not ended; a timer expiry needs t ≥ deadline,
//	                          any other end (revoke, explicit expire, pattern) t < deadline
//
// Times are the grantor's local clock, carried in the outputs (the effect time is
// observed when the operation returns). Every operation that takes effect is a point
// in the history at the grantor: grant, renew and end where the grantor records them,
// and a deliver where the grantor takes the message (or drops it because the lease
// ended) — its linearization point. A deliver is not an interval from the holder's
// send to the grantor's take: such an interval would let porcupine place a message
// taken after a revoke before the revoke, where it is legal (the model cannot know
// that the lease is about to end), and the check would accept the very bug it is
// about (review item C). A message the grantor never saw is pending, called at its
// send (it never has an effect). Order and exactly-once delivery between the holder's
// sends and the grantor's takes are LS-P3's business.
//
// Why not checker.LeaseRegister: that model grants a lease "until At+Term" on every
// acquire (a renewal can shorten it) and has release and read; this paper's lease has
// the max rule, revoke versus expire, and message delivery, and its deadlines are on
// the grantor's drifting clock. Fitting it would drop exactly the rules LS-P6 is about.

// LinKind is a lease-register operation.
type LinKind uint8

const (
	// LinGrant creates the lease (input Term).
	LinGrant LinKind = iota + 1
	// LinDeliver is one message through the lease (input Seq).
	LinDeliver
	// LinRenew prolongs the lease (input D).
	LinRenew
	// LinEnd ends the grantor's side (input How, Cause).
	LinEnd
)

// LinIn is the input of a lease-register operation.
type LinIn struct {
	Kind  LinKind
	Seq   int64
	Term  time.Duration
	D     time.Duration
	How   ls.End
	Cause string
}

// LinOut is the output: the grantor-local effect time, success, and for renew the
// deadline before and after (for grant, After is the deadline).
type LinOut struct {
	At     sim.Time
	Ok     bool
	Before sim.Time
	After  sim.Time
}

type linState struct {
	granted, ended bool
	deadline       sim.Time
}

// LeaseModel is the porcupine model of one lease (LS-P6).
func LeaseModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return linState{} },
		Step: func(state, input, output any) (bool, any) {
			if output == nil {
				return true, state // pending: the grantor never saw it
			}
			s := state.(linState)
			ok, next := linStep(s, input.(LinIn), output.(LinOut))
			if next == s {
				// An unchanged state is returned as it came: boxing an unchanged copy
				// would allocate once per delivery.
				return ok, state
			}
			return ok, next
		},
		DescribeOperation: func(input, output any) string {
			in := input.(LinIn)
			out := "pending"
			if output != nil {
				o := output.(LinOut)
				out = fmt.Sprintf("at %v ok=%v", o.At, o.Ok)
				if in.Kind == LinRenew || in.Kind == LinGrant {
					out += fmt.Sprintf(" deadline %v→%v", o.Before, o.After)
				}
			}
			switch in.Kind {
			case LinGrant:
				return fmt.Sprintf("grant(%v) %s", in.Term, out)
			case LinDeliver:
				return fmt.Sprintf("deliver(#%d) %s", in.Seq, out)
			case LinRenew:
				return fmt.Sprintf("renew(%v) %s", in.D, out)
			}
			return fmt.Sprintf("end(%s, %s) %s", in.How, in.Cause, out)
		},
		DescribeState: func(state any) string {
			s := state.(linState)
			switch {
			case !s.granted:
				return "not granted"
			case s.ended:
				return "ended"
			}
			return fmt.Sprintf("live until %v", s.deadline)
		},
	}
}

// linStep is the lease register's step: whether output o is legal for input in in
// state s, and the next state.
func linStep(s linState, in LinIn, o LinOut) (bool, linState) {
	live := s.granted && !s.ended && o.At < s.deadline
	switch in.Kind {
	case LinGrant:
		if s.granted || o.After != o.At.Add(in.Term) {
			return false, s
		}
		s.granted, s.deadline = true, o.After
		return true, s
	case LinDeliver:
		return o.Ok == live, s
	case LinRenew:
		if !o.Ok {
			return !live, s
		}
		if !live || o.Before != s.deadline || o.After != max(s.deadline, o.At.Add(in.D)) {
			return false, s
		}
		s.deadline = o.After
		return true, s
	case LinEnd:
		if !s.granted || s.ended {
			return false, s
		}
		if (in.Cause == "timer") != (o.At >= s.deadline) {
			return false, s
		}
		s.ended = true
		return true, s
	}
	panic(fmt.Sprintf("lsscen: LeaseModel: unknown op %d", in.Kind))
}

// leaseOp is one operation of a lease's history. A completed one is a point: at is the
// observation where it took effect. A pending one (a message the grantor never saw)
// has at its send.
type leaseOp struct {
	in      LinIn
	out     LinOut
	at      int64
	pending bool
}

// appendLeaseOps appends a lease's operations: its grant, one delivery per message sent
// through it (but the pending ones, never taken nor dropped, only withPending), its
// renewals and its ends at the grantor.
func appendLeaseOps(ops []leaseOp, l *leaseObs, withPending bool) []leaseOp {
	g := l.grant
	ops = append(ops, leaseOp{in: LinIn{Kind: LinGrant, Term: g.V.Term}, out: LinOut{At: g.V.At, Ok: true, After: g.V.Deadline}, at: g.Index})
	recvs := l.recvs
	drops := l.drops
	for i, s := range l.sends {
		op := leaseOp{in: LinIn{Kind: LinDeliver, Seq: s.V.Seq}, at: s.Index, pending: true}
		if i < len(recvs) {
			rv := recvs[i]
			op.out, op.at, op.pending = LinOut{At: rv.V.At, Ok: rv.V.Live}, rv.Index, false
		} else {
			for _, d := range drops {
				if d.V.Seq == s.V.Seq && d.V.Why == "ended" && d.Index > s.Index {
					op.out, op.at, op.pending = LinOut{At: d.V.At}, d.Index, false
					break
				}
			}
		}
		if op.pending && !withPending {
			continue
		}
		ops = append(ops, op)
	}
	for _, rn := range l.renews {
		ops = append(ops, leaseOp{in: LinIn{Kind: LinRenew, D: rn.V.D},
			out: LinOut{At: rn.V.At, Ok: rn.V.Ok, Before: rn.V.Before, After: rn.V.After}, at: rn.Index})
	}
	for _, en := range l.ends[sideIdx(ls.Server)] {
		ops = append(ops, leaseOp{in: LinIn{Kind: LinEnd, How: en.V.How, Cause: en.V.Cause}, out: LinOut{At: en.V.At, Ok: true}, at: en.Index})
	}
	return ops
}

// leaseOps extracts every lease's operations from a run (partitioned by lease).
func leaseOps(x *index) []checker.Operation {
	n := 0
	for _, l := range x.eachLease {
		n += 1 + len(l.sends) + len(l.renews) + len(l.ends[sideIdx(ls.Server)])
	}
	ops := make([]checker.Operation, 0, n)
	var lops []leaseOp
	for id, l := range x.eachLease {
		key := id.String()
		lops = appendLeaseOps(lops[:0], l, true)
		for _, o := range lops {
			op := checker.Operation{Key: key, Input: o.in, Call: o.at, Pending: o.pending}
			if o.in.Kind == LinDeliver {
				op.Client = 1
			}
			if !o.pending {
				// Every completed operation is a point (one observation): that point is
				// where it took effect, so the checker replays the points in order and
				// searches only a lease whose replay fails (never, in a correct run).
				op.Output, op.Return, op.At = o.out, o.at, o.at
			}
			ops = append(ops, op)
		}
	}
	return ops
}

// leasesReplay reports whether every lease's completed operations, replayed in the
// order of their points, are legal for the lease register: the witness the
// linearizability check replays first (checker's witnessed; a pending operation never
// took effect and is left out), here without boxing every operation. When it holds,
// the history is linearizable and that check would find exactly this; when it does
// not, the check runs in full.
func leasesReplay(x *index) bool {
	var ops []leaseOp
	for _, l := range x.eachLease {
		ops = appendLeaseOps(ops[:0], l, false)
		for _, o := range ops {
			if o.at == 0 {
				return false // no valid point (the witness needs one): let the search decide
			}
		}
		if !sortOps(ops) {
			ops = appendLeaseOps(ops[:0], l, false)
			slices.SortFunc(ops, func(a, b leaseOp) int { return cmp.Compare(a.at, b.at) })
		}
		var st linState
		for _, o := range ops {
			var ok bool
			if ok, st = linStep(st, o.in, o.out); !ok {
				return false
			}
		}
	}
	return true
}

func (e *env) linearizable() checker.Property {
	p := checker.Linearizable("LS-P6/linearizable", LeaseModel(), func(r *checker.Run) ([]checker.Operation, error) {
		return leaseOps(e.li.get(r)), nil
	}, 0)
	full := p.Check
	p.Check = func(r *checker.Run) error {
		r.Count(len(e.li.get(r).leases), 0) // every lease's history is judged
		if !r.Visualize && leasesReplay(e.li.get(r)) {
			return nil // what the full check would conclude from the same replay
		}
		return full(r)
	}
	return p
}

// sortOps sorts a lease's operations by their points and reports whether the points
// are distinct (they are distinct observations; if two are equal it stops, and the
// caller sorts as before, with slices.SortFunc on the operations in their original
// order, so the replay's order never depends on the algorithm). The lists appended are
// each in history order, so an insertion sort does little work.
func sortOps(ops []leaseOp) bool {
	for i := 1; i < len(ops); i++ {
		if ops[i].at >= ops[i-1].at {
			if ops[i].at == ops[i-1].at {
				return false
			}
			continue
		}
		o := ops[i]
		j := i
		for j > 0 && ops[j-1].at > o.at {
			ops[j] = ops[j-1]
			j--
		}
		ops[j] = o
		if j > 0 && ops[j-1].at == o.at {
			return false
		}
	}
	return true
}
