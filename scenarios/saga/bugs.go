package sagascen

import (
	"fmt"
	"github.com/simrun-dev/simrun/scenarios"
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/sim"
)

// The broken variants of -p bug=NAME: each a hook of saga.Policy that breaks one rule
// at one of the protocol's decision points (the protocol's code has none of them).
// Every property and model is meant to catch each: the tests say which detector
// catches which.

// bug is one broken variant.
type bug struct {
	name, help string
	policy     func() *saga.Policy
}

// bugs are the variants -p bug= names, in the order the parameter's help lists them.
var bugs = []bug{
	{"eager-compensation", "compensates a processed section without waiting for the sections after it (breaks SG-3's reverse order)",
		func() *saga.Policy {
			return &saga.Policy{Ready: func(*saga.Tx, saga.SecKey, []saga.SecKey, bool) bool { return true }}
		}},
	{"rerun-duplicates", "runs an incoming action again when its request is redelivered (breaks SG-P3)",
		func() *saga.Policy {
			return &saga.Policy{Runs: func(s saga.Status, run bool) bool { return run || s == saga.Processed }}
		}},
	{"compensate-never-run", "calls the compensation action of a section that never ran (breaks the null-compensation rule)",
		func() *saga.Policy {
			return &saga.Policy{Compensates: func(s saga.Status, comp bool) bool {
				return comp || s == saga.Pendant || s == saga.Processing
			}}
		}},
	{"run-after-abort", "runs a section whose request arrives after the transaction aborted and closed it as null (a dangling action)",
		func() *saga.Policy {
			return &saga.Policy{Runs: func(s saga.Status, run bool) bool { return run || s == saga.Null }}
		}},
	{"forget-compensation", "leaves compensations out of the log: they reach the service, never the log (breaks log replay)",
		func() *saga.Policy {
			return &saga.Policy{Log: func(rec *saga.Tx) {
				for _, o := range rec.Own {
					if o.State == saga.ProcessedCompensation {
						o.State = saga.Processed
					}
				}
			}}
		}},
}

// plant is a variant a test plants (by name, through the same parameter): hooks of
// the protocol's Policy, or a wrapper around every agent that changes what one of
// its steps does (the effect of a one-line bug in the branch the step runs).
type plant struct {
	policy func() *saga.Policy
	wrap   func(sim.Node) sim.Node
}

// testBugs are the variants test files register; they are not listed in the
// parameter's help.
var testBugs = map[string]plant{}

func bugNames() string {
	names := []string{"none"}
	for _, b := range bugs {
		names = append(names, b.name)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Policy returns the planted bug a -p bug=… value names.
func Policy(name string) (*saga.Policy, error) {
	if name == "none" || name == "" {
		return nil, nil
	}
	if i := slices.IndexFunc(bugs, func(b bug) bool { return b.name == name }); i >= 0 {
		return bugs[i].policy(), nil
	}
	if p, ok := testBugs[name]; ok && p.policy != nil {
		return p.policy(), nil
	} else if ok {
		return nil, nil
	}
	return nil, fmt.Errorf("parameter bug=%q: want %s", name, bugNames())
}

// wrapped returns the agents' constructors with the wrapper a test's variant name
// plants, if any.
func wrapped(name string, nodes []sim.NodeSpec) []sim.NodeSpec {
	p, ok := testBugs[name]
	if !ok || p.wrap == nil {
		return nodes
	}
	out := slices.Clone(nodes)
	for i := range out {
		orig := out[i].New
		out[i].New = func() sim.Node { return p.wrap(orig()) }
	}
	return out
}

func init() {
	names := make([]string, len(bugs))
	for i, b := range bugs {
		names[i] = b.name
	}
	scenarios.SetBugs(names, "saga/swarm")
}
