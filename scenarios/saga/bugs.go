package sagascen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/protocols/saga"
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
			return &saga.Policy{Ready: func(*saga.Tx, saga.SecKey, bool) bool { return true }}
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

// testBugs are variants tests plant (by name, through the same parameter): a test
// file registers them (plantBug); they are not listed in the parameter's help.
var testBugs = map[string]func() *saga.Policy{}

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
	if p, ok := testBugs[name]; ok {
		return p(), nil
	}
	return nil, fmt.Errorf("parameter bug=%q: want %s", name, bugNames())
}
