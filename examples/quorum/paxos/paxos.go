// Package paxos is single-decree Paxos (Lamport, "Paxos Made Simple", 2001) written as
// an outside user of simrun would: plain sim nodes, simrun's public API only, no
// declarations for the model checker (no Memoize, no encoders, no symmetry).
//
// Proposers run numbered ballots; acceptors keep their promise and their accepted
// proposal in stable storage; a learner hears every acceptance and learns a value
// once a majority accepted it in one ballot.
//
// Rule map (rules.go's tags → this file):
//
//	P-1a prepare      Proposer: start a ballot, send Prepare(b) to every acceptor
//	P-1b promise      Acceptor: b above its promise → promise, report what it accepted
//	P-1b refuse       Acceptor: b at or below its promise → Nack
//	P-2a propose      Proposer: a majority promised → Accept(b, v), v the highest-ballot accepted value or its own
//	P-2b accept       Acceptor: b at or above its promise → accept, tell the learner
//	P-2b refuse       Acceptor: b below its promise → Nack
//	P-retry           Proposer: a Nack or a timeout → a higher ballot (bounded by Attempts)
//	P-learn           Learner: a majority accepted (b, v) → v is chosen
package paxos

import (
	"time"

	"github.com/simrun-dev/simrun/sim"
)

var (
	rules        = sim.NewRuleMap("paxos")
	rulePrepare  = rules.Rule("P-1a prepare", "a proposer starts a ballot")
	rulePromise  = rules.Rule("P-1b promise", "an acceptor promises a higher ballot and reports what it accepted")
	ruleRefuse1  = rules.Rule("P-1b refuse", "an acceptor refuses a ballot at or below its promise")
	rulePropose  = rules.Rule("P-2a propose", "a proposer with a majority of promises proposes the highest accepted value, or its own")
	ruleAccept   = rules.Rule("P-2b accept", "an acceptor accepts a proposal at or above its promise")
	ruleRefuse2  = rules.Rule("P-2b refuse", "an acceptor refuses a proposal below its promise")
	ruleRetry    = rules.Rule("P-retry", "a refused or timed-out proposer retries with a higher ballot")
	ruleLearn    = rules.Rule("P-learn", "the learner learns a value a majority accepted in one ballot")
	ruleRecovery = rules.Rule("P-recover", "a restarted acceptor reloads its promise and accepted proposal")
)

// Ballot orders proposals: round first, then proposer.
type Ballot struct{ Round, Proposer int }

// Less reports b < o.
func (b Ballot) Less(o Ballot) bool {
	return b.Round < o.Round || b.Round == o.Round && b.Proposer < o.Proposer
}

// Messages.
type (
	Prepare struct{ B Ballot }
	Promise struct {
		B, AccB Ballot
		AccV    string
	}
	Accept struct {
		B Ballot
		V string
	}
	Accepted struct {
		B Ballot
		V string
	}
	Nack struct{ B, Promised Ballot }
)

func (Prepare) Kind() string  { return "Prepare" }
func (Promise) Kind() string  { return "Promise" }
func (Accept) Kind() string   { return "Accept" }
func (Accepted) Kind() string { return "Accepted" }
func (Nack) Kind() string     { return "Nack" }

// Chosen is observed when the learner learns a value.
type Chosen struct {
	B Ballot
	V string
}

// Proposer proposes Value.
type Proposer struct {
	ID        int
	Value     string
	Acceptors []sim.NodeID
	Attempts  int           // ballots it may start
	Retry     time.Duration // timeout before a new ballot

	round    int
	promises map[sim.NodeID]Promise
	proposed bool
}

func (p *Proposer) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start:
		p.ballot(out)
	case sim.Restart:
		if r, ok := sim.Load[int](in.Stable, "round"); ok {
			p.round = r
		}
		p.ballot(out)
	case sim.Timeout:
		out.Cover(ruleRetry)
		p.ballot(out)
	case sim.Receive:
		switch m := in.Msg.(type) {
		case Promise:
			if m.B != p.cur() || p.proposed {
				return
			}
			p.promises[in.From] = m
			if len(p.promises) > len(p.Acceptors)/2 {
				out.Cover(rulePropose)
				v, hi := p.Value, Ballot{}
				for _, pr := range p.promises {
					if pr.AccV != "" && hi.Less(pr.AccB) {
						v, hi = pr.AccV, pr.AccB
					}
				}
				p.proposed = true
				out.Broadcast(p.Acceptors, Accept{B: p.cur(), V: v})
			}
		case Nack:
			if m.B == p.cur() && m.Promised.Round >= p.round {
				out.Cover(ruleRetry)
				p.round = m.Promised.Round
				p.ballot(out)
			}
		}
	}
}

func (p *Proposer) cur() Ballot { return Ballot{Round: p.round, Proposer: p.ID} }

func (p *Proposer) ballot(out *sim.Outbox) {
	if p.round >= p.Attempts {
		return
	}
	out.Cover(rulePrepare)
	p.round++
	p.promises, p.proposed = map[sim.NodeID]Promise{}, false
	out.Store("round", p.round)
	out.Broadcast(p.Acceptors, Prepare{B: p.cur()})
	out.SetTimer("retry", p.Retry)
}

// Acceptor keeps its promise and accepted proposal in stable storage.
type Acceptor struct {
	Learner  sim.NodeID
	Promised Ballot
	AccB     Ballot
	AccV     string
}

type acceptorStable struct {
	Promised, AccB Ballot
	AccV           string
}

func (a *Acceptor) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Restart:
		if st, ok := sim.Load[acceptorStable](in.Stable, "acc"); ok {
			out.Cover(ruleRecovery)
			a.Promised, a.AccB, a.AccV = st.Promised, st.AccB, st.AccV
		}
	case sim.Receive:
		switch m := in.Msg.(type) {
		case Prepare:
			if a.Promised.Less(m.B) {
				out.Cover(rulePromise)
				a.Promised = m.B
				a.save(out)
				out.Send(in.From, Promise{B: m.B, AccB: a.AccB, AccV: a.AccV})
			} else {
				out.Cover(ruleRefuse1)
				out.Send(in.From, Nack{B: m.B, Promised: a.Promised})
			}
		case Accept:
			if !m.B.Less(a.Promised) {
				out.Cover(ruleAccept)
				a.Promised, a.AccB, a.AccV = m.B, m.B, m.V
				a.save(out)
				out.Send(a.Learner, Accepted{B: m.B, V: m.V})
			} else {
				out.Cover(ruleRefuse2)
				out.Send(in.From, Nack{B: m.B, Promised: a.Promised})
			}
		}
	}
}

func (a *Acceptor) save(out *sim.Outbox) {
	out.Store("acc", acceptorStable{Promised: a.Promised, AccB: a.AccB, AccV: a.AccV})
}

// Learner hears every acceptance.
type Learner struct {
	N     int // acceptors
	votes map[Ballot]map[sim.NodeID]bool
	done  map[Ballot]bool
}

func (l *Learner) Handle(in sim.Input, out *sim.Outbox) {
	m, ok := in.Msg.(Accepted)
	if in.Kind != sim.Receive || !ok {
		return
	}
	if l.votes == nil {
		l.votes, l.done = map[Ballot]map[sim.NodeID]bool{}, map[Ballot]bool{}
	}
	if l.votes[m.B] == nil {
		l.votes[m.B] = map[sim.NodeID]bool{}
	}
	l.votes[m.B][in.From] = true
	if len(l.votes[m.B]) > l.N/2 && !l.done[m.B] {
		out.Cover(ruleLearn)
		l.done[m.B] = true
		out.Observe("chosen", Chosen{B: m.B, V: m.V})
	}
}
