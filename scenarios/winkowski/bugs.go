package wkscen

import (
	"fmt"
	"github.com/simrun-dev/simrun/scenarios"
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/protocols/winkowski"
)

// The deliberate bugs of -p bug=NAME (scenarios and the model): each is a broken
// variant of the game planted through the hooks of winkowski.Policy, so that a sweep
// or a model check shows the checkers catch it (like the demo protocol's NoDedup).
// The protocol's code knows none of them.
var bugs = []bugVariant{
	{"none", "the protocol", winkowski.Policy{}},
	// (p3) evaluated without counting order forms (the (p1) count in the complete
	// variant): a task keeps its requests behind a faulty winner.
	{"ignore-orders", "(p3) does not count order forms", winkowski.Policy{
		CountsAhead: func(_ *winkowski.System, t *winkowski.Task, r winkowski.Req, _ bool) bool {
			return r.Ticket <= t.Ticket
		},
	}},
	// A manager books resource 0 on every winning form, without checking that it is
	// free.
	{"book-used", "a manager books resource 0 whoever uses it", winkowski.Policy{
		FreeUnit: func(*winkowski.PoolState, int) (winkowski.Unit, bool) { return 0, true },
	}},
	// A task becomes WINNING as soon as its order forms are sent, without seeing them
	// at the pools and re-checking its position (choice O1 dropped).
	{"no-order-wait", "a task wins as soon as its order forms are sent", winkowski.Policy{
		OrdersDistributed: func(*winkowski.System, *winkowski.Task) bool { return true },
	}},
	// Choice K1 dropped: a task trusts what any state says about its own request and
	// order form, also a state that predates some of its forms.
	{"no-ack", "a task trusts states older than its last forms (no K1)", winkowski.Policy{
		Current: func(*winkowski.Task, int) bool { return true },
	}},
	// A manager sends its state to registered tasks only, so the task whose releasing
	// form dropped its registration is never told it was released (WK-2 sends the
	// state "to T" as well): it waits in RELEASING for ever and its job stops. Nothing
	// unsafe happens; only the liveness checks see it.
	{"silent-release", "a manager does not tell a released task", winkowski.Policy{
		TellsUnregistered: func(winkowski.PoolID, winkowski.TaskID) bool { return false },
	}},
}

// bugVariant is one -p bug= variant.
type bugVariant struct {
	name, help string
	policy     winkowski.Policy
}

// bugNames lists the names -p bug= takes.
func bugNames() []string {
	out := make([]string, len(bugs))
	for i, b := range bugs {
		out[i] = b.name
	}
	return out
}

// bugHelp is the parameter's help line.
func bugHelp() string {
	return "plant a deliberate bug, to see the checkers catch it: " + strings.Join(bugNames(), ", ")
}

// bugPolicy returns the policy of bug name ("none": the protocol).
func bugPolicy(name string) (winkowski.Policy, error) {
	if i := slices.IndexFunc(bugs, func(b bugVariant) bool { return b.name == name }); i >= 0 {
		return bugs[i].policy, nil
	}
	return winkowski.Policy{}, fmt.Errorf("unknown bug %q (one of %s)", name, strings.Join(bugNames(), ", "))
}

func init() { scenarios.SetBugs(bugNames(), "winkowski/swarm") }
