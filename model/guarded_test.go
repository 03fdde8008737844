package model

import (
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

type gReq struct{}

func (gReq) Kind() string { return "Req" }

type gReady struct{}

func (gReady) Kind() string { return "Ready" }

// gServer serves a Req only once it has heard Ready; an early Req changes nothing.
type gServer struct{ Ready, Served bool }

func (s *gServer) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Msg.(type) {
	case gReady:
		s.Ready = true
	case gReq:
		if s.Ready && !s.Served {
			s.Served = true
			out.Observe("served", nil)
		}
	}
}

// gSender sends one message to node 0 at start.
type gSender struct{ M sim.Message }

func (s *gSender) Handle(in sim.Input, out *sim.Outbox) {
	if in.Kind == sim.Start {
		out.Send(0, s.M)
	}
}

func guardedSystem(guarded bool) *Actors {
	return &Actors{
		Name: "guarded",
		Nodes: []sim.NodeSpec{
			{Name: "server", New: func() sim.Node { return &gServer{} }},
			{Name: "client", New: func() sim.Node { return &gSender{M: gReq{}} }},
			{Name: "init", New: func() sim.Node { return &gSender{M: gReady{}} }},
		},
		Network: Network{Guarded: guarded},
		Ghost: Ghost{Init: false, Fold: func(g any, o sim.Observation) any {
			return g.(bool) || o.Kind == "served"
		}},
		Properties: []Property[*State]{
			Eventually("served", func(s *State) bool { return GhostAs[bool](s) }),
		},
	}
}

// Issue 14, item 4: with guarded delivery an early request waits in the network
// instead of being consumed and forgotten. Without it the checker finds the path where
// Req arrives before Ready (a dead end: never served) in 5 distinct states; with it
// that path is gone (3 states: start, Ready delivered, served) and the property holds.
func TestGuardedDelivery(t *testing.T) {
	res, err := Check(guardedSystem(false), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Violated || res.Violation.Name != "served" || res.Distinct != 5 {
		t.Fatalf("unguarded: %v, %d distinct, violation %+v", res.Outcome, res.Distinct, res.Violation)
	}
	for _, o := range []Options{{}, {Strategy: DFS}, {Workers: 2}, {Fair: true}} {
		res, err = Check(guardedSystem(true), o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != Complete || res.Properties[1].Status != Holds || res.Distinct != 3 {
			t.Fatalf("guarded %+v: %v, %d distinct, %v", o, res.Outcome, res.Distinct, res.Properties[1].Status)
		}
	}
}
