package rpscen

import (
	"fmt"
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
var bugs = map[string]func() *rp.Policy{
	// no-dup: a re-sent request is executed again (the duplicate check finds nothing:
	// breaks at-most-once, RP-P1, §3.6.1 step 2).
	"no-dup": func() *rp.Policy {
		return &rp.Policy{Duplicate: func(map[string]int64, string) (int64, bool) { return 0, false }}
	},
	// ack-early: the client is answered as soon as the request ran, before the backups
	// acknowledge its Done (breaks RP-P4, §3.6.1 steps 4-5).
	"ack-early": func() *rp.Policy {
		return &rp.Policy{Answer: func([]sim.NodeID) bool { return true }}
	},
	// no-stepdown: a primary whose registration lapsed stays primary (breaks RP-P2).
	"no-stepdown": func() *rp.Policy {
		return &rp.Policy{Lapsed: func(time.Duration, time.Duration) bool { return false }}
	},
	// no-resume: a new primary leaves the instances it inherited (in its store, not
	// handed over yet) where they are (breaks §4.5.1, §4.5.3).
	"no-resume": func() *rp.Policy {
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
	},
	// no-retry: a transition or a task's call left unanswered is not made again
	// (breaks §4.5.2).
	"no-retry": func() *rp.Policy {
		return &rp.Policy{CallRetry: func(time.Duration) time.Duration { return 0 }}
	},
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
		return b(), nil
	}
	return nil, fmt.Errorf("parameter bug=%q: want %s or %s", name, strings.Join(bugNames[:len(bugNames)-1], ", "), bugNames[len(bugNames)-1])
}
