package paxos

import (
	"fmt"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Config sizes a Paxos system.
type Config struct {
	Proposers, Acceptors, Attempts int
	Retry                          time.Duration
	// NewAcceptor, when set, builds the acceptors (tests plant broken ones).
	NewAcceptor func(learner sim.NodeID) sim.Node
}

// Nodes returns the system's nodes: proposers p1.., acceptors a1.., the learner l.
func Nodes(c Config) []sim.NodeSpec {
	var specs []sim.NodeSpec
	acc := make([]sim.NodeID, c.Acceptors)
	for i := range acc {
		acc[i] = sim.NodeID(c.Proposers + i)
	}
	learner := sim.NodeID(c.Proposers + c.Acceptors)
	for i := 0; i < c.Proposers; i++ {
		specs = append(specs, sim.NodeSpec{Name: fmt.Sprintf("p%d", i+1), New: func() sim.Node {
			return &Proposer{ID: i + 1, Value: fmt.Sprintf("v%d", i+1), Acceptors: acc, Attempts: c.Attempts, Retry: c.Retry}
		}})
	}
	for i := 0; i < c.Acceptors; i++ {
		specs = append(specs, sim.NodeSpec{Name: fmt.Sprintf("a%d", i+1), New: func() sim.Node {
			if c.NewAcceptor != nil {
				return c.NewAcceptor(learner)
			}
			return &Acceptor{Learner: learner}
		}})
	}
	return append(specs, sim.NodeSpec{Name: "l", New: func() sim.Node { return &Learner{N: c.Acceptors} }})
}
