package rpscen

import (
	"fmt"
	"github.com/simrun-dev/simrun/scenarios"
	"slices"
	"strings"
	"time"

	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/sim"
)

// The broken variants -p bug=NAME plants (issue 37: the protocol's code holds only the
// protocol; its Policy names the decision points, and each broken decision is written
// here). Each breaks one rule the correct protocol keeps. Tests add their own entries
// to bugs (a name of their own) to plant a bug from test code into any scenario or
// model, the default swarm included.
var bugs = map[string]bug{
	// no-dup: a re-sent request is executed again (the duplicate check finds nothing:
	// breaks at-most-once, RP-P1, §3.6.1 step 2).
	"no-dup": {policy: func() *rp.Policy {
		return &rp.Policy{Duplicate: func(map[string]int64, string) (int64, bool) { return 0, false }}
	}},
	// ack-early: the client is answered as soon as the request ran, before the backups
	// acknowledge its Done (breaks RP-P4, §3.6.1 steps 4-5).
	"ack-early": {policy: func() *rp.Policy {
		return &rp.Policy{Answer: func([]sim.NodeID) bool { return true }}
	}},
	// no-stepdown: a primary whose registration lapsed stays primary (breaks RP-P2).
	"no-stepdown": {policy: func() *rp.Policy {
		return &rp.Policy{Lapsed: func(time.Duration, time.Duration) bool { return false }}
	}},
	// no-resume: a new primary leaves the instances it inherited (in its store, not
	// handed over yet) where they are (breaks §4.5.1, §4.5.3).
	"no-resume": {policy: func() *rp.Policy {
		return &rp.Policy{
			Became: func(r *rp.Replica) {
				var inherited []string
				for _, k := range sortedKeys(r.S.Store) {
					if _, _, ok := rp.ParseInstKey(k); ok && r.S.Store[k] != rp.HandedOver {
						inherited = append(inherited, k)
					}
				}
				r.S.Hooked = inherited
			},
			Moves: func(r *rp.Replica, key string) bool {
				inherited, _ := r.S.Hooked.([]string)
				return !slices.Contains(inherited, key)
			},
		}
	}},
	// no-retry: a transition or a task's call left unanswered is not made again
	// (breaks §4.5.2).
	"no-retry": {policy: func() *rp.Policy {
		return &rp.Policy{CallRetry: func(time.Duration) time.Duration { return 0 }}
	}},
}

// bug is a broken variant: a Policy (decisions of the protocol replaced), and, for
// what no decision point reaches, handle, which sees each input of every replica (or,
// with clients, of every front end) before the node does: it may change the input
// (and the node's state), act in the node's place and return true, or return false
// to let the node handle the input.
type bug struct {
	policy  func() *rp.Policy
	handle  func(n sim.Node, in *sim.Input, out *sim.Outbox) bool
	clients bool
}

// bugNames are the -p bug= values of the command line, in the order the help lists
// them (tests' own entries in bugs are accepted too, but not listed).
var bugNames = []string{"none", "no-dup", "ack-early", "no-stepdown", "no-resume", "no-retry"}

// Policy returns the Policy a -p bug=… value names (nil for none: the protocol).
func Policy(name string) (*rp.Policy, error) {
	if name == "none" {
		return nil, nil
	}
	if b, ok := bugs[name]; ok {
		if b.policy == nil {
			return nil, nil
		}
		return b.policy(), nil
	}
	return nil, fmt.Errorf("parameter bug=%q: want %s or %s", name, strings.Join(bugNames[:len(bugNames)-1], ", "), bugNames[len(bugNames)-1])
}

// planted is a node with a bug's handle in front of it.
type planted struct {
	N   sim.Node
	Bug string
}

// Unwrap returns the node behind the bug.
func (p *planted) Unwrap() sim.Node { return p.N }

// Handle implements sim.Node.
func (p *planted) Handle(in sim.Input, out *sim.Outbox) {
	if h := bugs[p.Bug].handle; h != nil && h(p.N, &in, out) {
		return
	}
	p.N.Handle(in, out)
}

// plant returns a constructor of nodes with bug name's handle in front (the node's own
// constructor when the bug has none, or is for the other kind of node).
func plant(name string, client bool, nw func() sim.Node) func() sim.Node {
	b, ok := bugs[name]
	if !ok || b.handle == nil || b.clients != client {
		return nw
	}
	return func() sim.Node { return &planted{N: nw(), Bug: name} }
}

// unwrap returns the node behind a planted bug (n itself if none).
func unwrap(n sim.Node) sim.Node {
	if w, ok := n.(interface{ Unwrap() sim.Node }); ok {
		return w.Unwrap()
	}
	return n
}

func init() { scenarios.SetBugs(bugNames, "replication/swarm") }
