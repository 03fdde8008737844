package scen

import (
	"testing"
	"time"

	"example.com/quorum/paxos"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/sim"
)

// The model of an outside user's Paxos, checked with no declarations: agreement holds
// on every interleaving (crash-free, one ballot each), and a value gets chosen.
func TestPaxosModel(t *testing.T) {
	if testing.Short() {
		t.Skip("657 120 states")
	}
	res, err := model.CheckNamed("paxos", nil, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != model.Complete || res.Violation != nil || res.Distinct != 657120 {
		t.Fatalf("outcome %v violation %v distinct %d (pinned 657120)", res.Outcome, res.Violation, res.Distinct)
	}
	t.Logf("%d states, %.0f states per CPU-second", res.Distinct, res.StatesPerCPUSec)
}

// amnesiac is an acceptor that forgets its promise and accepted value when it restarts
// (P-recover broken: it ignores its stable storage), planted from test code.
type amnesiac struct{ paxos.Acceptor }

func (a *amnesiac) Handle(in sim.Input, out *sim.Outbox) {
	if in.Kind == sim.Restart {
		return
	}
	a.Acceptor.Handle(in, out)
}

// The model checker finds the amnesiac acceptor's violation of agreement: two ballots,
// a crash of an acceptor that had accepted the first value.
func TestPaxosAmnesiacCaught(t *testing.T) {
	sys := PaxosModel(paxos.Config{Proposers: 2, Acceptors: 3, Attempts: 2, Retry: time.Second,
		NewAcceptor: func(l sim.NodeID) sim.Node { return &amnesiac{paxos.Acceptor{Learner: l}} }}, 1)
	sys.Crashes.MidSend = false
	res, err := model.Check(sys, model.Options{Strategy: model.DFS, MaxStates: 3_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Violation == nil || res.Violation.Name != "agreement" {
		t.Fatalf("amnesiac acceptor not caught: %v after %d states", res.Outcome, res.Distinct)
	}
	t.Logf("caught at depth %d after %d states", res.Violation.Depth, res.Distinct)
}
