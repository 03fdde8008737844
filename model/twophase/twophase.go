// Package twophase holds the two-phase-commit models of the model checker:
//
//   - "twophase": a port of the TLA+ spec TwoPhase (tlaplus/Examples,
//     specifications/transaction_commit/TwoPhase.tla) as a plain transition system, the
//     cross-check that the checker explores exactly what it claims to. Its state counts
//     agree with TLC, Stateright and Spin (rm=3: 288 distinct states, 1 146 generated,
//     depth 11; rm=7: 296 448 / 2 744 706 / 23; rm=9: 10 340 352 / 123 558 402 / 29).
//   - "2pc": an actor system of sim nodes (a coordinator and participants) on FIFO
//     links with a crash budget, in which the checker finds the classic blocking state
//     (a participant prepared, the coordinator crashed) as a sometimes-witness.
//
// # The TLA+ port
//
// Semantics are the spec's, action for action (TPNext): TMCommit, TMAbort, and for each
// rm TMRcvPrepared, RMPrepare, RMChooseToAbort, RMRcvCommitMsg, RMRcvAbortMsg, with the
// same enabling conditions. msgs is a set of messages that only grows, so a message may
// be "received" any number of times (RMRcvCommitMsg is enabled in every state once
// Commit ∈ msgs, including when rm is already committed: a self-loop, which TLC counts
// among the generated states, and so do we).
//
// A state is packed into one uint64 (4·rm+4 bits, so rm ≤ 15): rmState 2 bits per rm
// (working, prepared, committed, aborted), tmState 2 bits (init, committed, aborted),
// tmPrepared 1 bit per rm, msgs as one "Prepared" bit per rm plus a Commit bit and an
// Abort bit. The fingerprint is Mix64(state+1), a bijection: no collision is possible
// and the checker says so. Properties: TPTypeOK and TCConsistent (from TCommit: no rm
// committed while another aborted), both invariants, and the sometimes-properties
// Committed and Aborted (all rms decided) as reachability witnesses.
package twophase

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/sim"
)

// RM states, TM states.
const (
	Working   = 0
	Prepared  = 1
	Committed = 2
	Aborted   = 3

	TMInit      = 0
	TMCommitted = 1
	TMAborted   = 2
)

// MaxRM is the largest rm a state can hold (4·rm+4 bits ≤ 64).
const MaxRM = 15

// Layout gives the bit positions of a TwoPhase state with RM resource managers.
type Layout struct {
	RM                           int
	all                          uint64 // RM ones
	tmShift, prepShift, msgShift int
	commitBit, abortBit          uint64
	rmNames                      []string
}

// NewLayout returns the layout for rm resource managers (1 ≤ rm ≤ MaxRM).
func NewLayout(rm int) (*Layout, error) {
	if rm < 1 || rm > MaxRM {
		return nil, fmt.Errorf("rm=%d: want 1..%d (a state is packed into 64 bits)", rm, MaxRM)
	}
	l := &Layout{RM: rm, all: 1<<rm - 1, tmShift: 2 * rm, prepShift: 2*rm + 2, msgShift: 3*rm + 2}
	l.commitBit = 1 << (4*rm + 2)
	l.abortBit = 1 << (4*rm + 3)
	for i := 1; i <= rm; i++ {
		l.rmNames = append(l.rmNames, fmt.Sprintf("r%d", i))
	}
	return l, nil
}

// RMState returns rmState[r] (r counts from 0).
func (l *Layout) RMState(s uint64, r int) int { return int(s>>(2*r)) & 3 }

// TMState returns tmState.
func (l *Layout) TMState(s uint64) int { return int(s>>l.tmShift) & 3 }

// TMPrepared reports whether r ∈ tmPrepared.
func (l *Layout) TMPrepared(s uint64, r int) bool { return s>>(l.prepShift+r)&1 != 0 }

// SentPrepared reports whether [type |-> "Prepared", rm |-> r] ∈ msgs.
func (l *Layout) SentPrepared(s uint64, r int) bool { return s>>(l.msgShift+r)&1 != 0 }

// SentCommit and SentAbort report whether Commit / Abort ∈ msgs.
func (l *Layout) SentCommit(s uint64) bool { return s&l.commitBit != 0 }

// SentAbort reports whether Abort ∈ msgs.
func (l *Layout) SentAbort(s uint64) bool { return s&l.abortBit != 0 }

// Action kinds (the label packs kind·16 + rm).
const (
	actTMCommit = iota
	actTMAbort
	actTMRcvPrepared
	actRMPrepare
	actRMChooseToAbort
	actRMRcvCommitMsg
	actRMRcvAbortMsg
)

var actNames = [...]string{"TMCommit", "TMAbort", "TMRcvPrepared", "RMPrepare", "RMChooseToAbort", "RMRcvCommitMsg", "RMRcvAbortMsg"}

// Next enumerates TPNext from s, in the order of the spec's disjunction.
func (l *Layout) Next(s uint64, emit func(model.Action, uint64)) {
	tm := (s >> l.tmShift) & 3
	if tm == TMInit {
		// TMCommit: tmState = "init" ∧ tmPrepared = RM.
		if (s>>l.prepShift)&l.all == l.all {
			emit(actTMCommit<<4, s&^(3<<l.tmShift)|TMCommitted<<l.tmShift|l.commitBit)
		}
		// TMAbort: tmState = "init".
		emit(actTMAbort<<4, s&^(3<<l.tmShift)|TMAborted<<l.tmShift|l.abortBit)
	}
	commit, abort := s&l.commitBit != 0, s&l.abortBit != 0
	for r := 0; r < l.RM; r++ {
		rs := (s >> (2 * r)) & 3
		a := model.Action(r)
		// TMRcvPrepared(r): tmState = "init" ∧ Prepared(r) ∈ msgs.
		if tm == TMInit && s>>(l.msgShift+r)&1 != 0 {
			emit(actTMRcvPrepared<<4|a, s|1<<(l.prepShift+r))
		}
		if rs == Working {
			// RMPrepare(r): rmState[r] = "working".
			emit(actRMPrepare<<4|a, s|Prepared<<(2*r)|1<<(l.msgShift+r))
			// RMChooseToAbort(r): rmState[r] = "working".
			emit(actRMChooseToAbort<<4|a, s|Aborted<<(2*r))
		}
		// RMRcvCommitMsg(r): Commit ∈ msgs (no condition on rmState[r]).
		if commit {
			emit(actRMRcvCommitMsg<<4|a, s&^(3<<(2*r))|Committed<<(2*r))
		}
		// RMRcvAbortMsg(r): Abort ∈ msgs.
		if abort {
			emit(actRMRcvAbortMsg<<4|a, s|Aborted<<(2*r))
		}
	}
}

// ActionName renders an action label ("RMPrepare(r2)").
func (l *Layout) ActionName(a model.Action) string {
	k := int(a >> 4)
	if k < 0 || k >= len(actNames) {
		return fmt.Sprintf("action(%d)", uint64(a))
	}
	if k <= actTMAbort {
		return actNames[k]
	}
	return fmt.Sprintf("%s(%s)", actNames[k], l.rmNames[int(a&15)])
}

// TypeOK is TPTypeOK: every field within its type (the packing makes most of it
// structural; tmState has a fourth, invalid code).
func (l *Layout) TypeOK(s uint64) bool {
	return l.TMState(s) != 3 && s>>(4*l.RM+4) == 0
}

// Consistent is TCConsistent: no rm has committed while another has aborted.
func (l *Layout) Consistent(s uint64) bool {
	var committed, aborted bool
	for r := 0; r < l.RM; r++ {
		switch l.RMState(s, r) {
		case Committed:
			committed = true
		case Aborted:
			aborted = true
		}
	}
	return !(committed && aborted)
}

// AllDecided reports whether every rm is in state want.
func (l *Layout) AllDecided(s uint64, want int) bool {
	for r := 0; r < l.RM; r++ {
		if l.RMState(s, r) != want {
			return false
		}
	}
	return true
}

// Describe renders a state with the spec's variable names.
func (l *Layout) Describe(s uint64) any {
	rmNames := [...]string{"working", "prepared", "committed", "aborted"}
	tmNames := [...]string{"init", "committed", "aborted", "invalid"}
	rmState := map[string]string{}
	var prepared, msgs []string
	for r := 0; r < l.RM; r++ {
		rmState[l.rmNames[r]] = rmNames[l.RMState(s, r)]
		if l.TMPrepared(s, r) {
			prepared = append(prepared, l.rmNames[r])
		}
		if l.SentPrepared(s, r) {
			msgs = append(msgs, "Prepared("+l.rmNames[r]+")")
		}
	}
	if l.SentCommit(s) {
		msgs = append(msgs, "Commit")
	}
	if l.SentAbort(s) {
		msgs = append(msgs, "Abort")
	}
	return map[string]any{"rmState": rmState, "tmState": tmNames[l.TMState(s)], "tmPrepared": prepared, "msgs": msgs}
}

// Canonical is the symmetry reduction of TwoPhase: the resource managers are
// interchangeable (every property and action treats them alike), and every part of a
// state that names one is per-RM — rmState[r], r ∈ tmPrepared, Prepared(r) ∈ msgs — so
// the state is a multiset of per-RM signatures (4 bits each) plus the index-free parts
// (tmState, Commit, Abort). Sorting the whole signatures gives one representative per
// orbit of RM permutations, whatever member of the orbit it starts from.
func (l *Layout) Canonical(s uint64) uint64 {
	var sig [MaxRM]uint8
	for r := 0; r < l.RM; r++ {
		sig[r] = uint8(l.RMState(s, r))<<2 | uint8(s>>(l.prepShift+r)&1)<<1 | uint8(s>>(l.msgShift+r)&1)
	}
	sigs := sig[:l.RM]
	slices.Sort(sigs)
	return l.pack(s, sigs)
}

// Permute applies a permutation of the RM indices to s: RM r of the result is RM p[r]
// of s (for tests: the orbit of s).
func (l *Layout) Permute(s uint64, p []int) uint64 {
	sig := make([]uint8, l.RM)
	for r := range sig {
		q := p[r]
		sig[r] = uint8(l.RMState(s, q))<<2 | uint8(s>>(l.prepShift+q)&1)<<1 | uint8(s>>(l.msgShift+q)&1)
	}
	return l.pack(s, sig)
}

// pack rebuilds s with the per-RM signatures sig (index-free parts kept).
func (l *Layout) pack(s uint64, sig []uint8) uint64 {
	out := s & (3<<l.tmShift | l.commitBit | l.abortBit)
	for r, g := range sig {
		out |= uint64(g>>2)<<(2*r) | uint64(g>>1&1)<<(l.prepShift+r) | uint64(g&1)<<(l.msgShift+r)
	}
	return out
}

// Spec returns the TwoPhase spec for rm resource managers.
func Spec(rm int) (*model.Spec[uint64], error) {
	l, err := NewLayout(rm)
	if err != nil {
		return nil, err
	}
	return &model.Spec[uint64]{
		Name: fmt.Sprintf("twophase(rm=%d)", rm),
		// TPInit: all working, tmState init, tmPrepared = {}, msgs = {}: all zero bits.
		Init:        func() []uint64 { return []uint64{0} },
		Next:        l.Next,
		Fingerprint: func(s uint64) uint64 { return sim.Mix64(s + 1) },
		Injective:   true,
		Properties: []model.Property[uint64]{
			model.Always("TPTypeOK", l.TypeOK),
			model.Always("TCConsistent", l.Consistent),
			model.Sometimes("Committed", func(s uint64) bool { return l.AllDecided(s, Committed) }),
			model.Sometimes("Aborted", func(s uint64) bool { return l.AllDecided(s, Aborted) }),
		},
		ActionName: l.ActionName,
		Describe:   l.Describe,
	}, nil
}

func init() {
	model.Register(model.Model{
		Name: "twophase",
		Help: "TLA+ TwoPhase commit (tlaplus/Examples), plain transition system; TLC's counts",
		Params: []model.Param{
			{Name: "rm", Default: "3", Help: "number of resource managers (1..15)"},
			{Name: "symmetry", Default: "false", Help: "symmetry reduction: the resource managers are interchangeable, one state per orbit"},
		},
		Build: func(p *model.Params) (model.System, error) {
			rm := p.IntRange("rm", 1, MaxRM)
			sym := p.Bool("symmetry")
			if p.Err() != nil {
				return nil, p.Err()
			}
			sp, err := Spec(rm)
			if err == nil && sym {
				l, _ := NewLayout(rm)
				sp.Symmetry = l.Canonical
				sp.Name = fmt.Sprintf("twophase(rm=%d, symmetry)", rm)
			}
			return sp, err
		},
	})
}
