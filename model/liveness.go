package model

import (
	"errors"
	"fmt"
)

// maxLivenessStates caps the product graph of the liveness pass (about 40 bytes per
// state and 16 per transition are kept): past it the eventually-properties are
// reported unknown, never holding.
const maxLivenessStates = 30_000_000

// maxLivenessEdges caps its transitions (below 2^31: edges are indexed by int32).
const maxLivenessEdges = 400_000_000

// errLivenessGraph says the product graph outgrew its cap.
type errLivenessGraph struct {
	limit int64
	what  string
}

func (e errLivenessGraph) Error() string {
	return fmt.Sprintf("liveness graph: more than %d %s", e.limit, e.what)
}

// liveness decides the eventually-properties after an exhaustive search of the system
// states (res): on every maximal finite path and on every infinite path admissible
// under the fairness assumption (Options.Fair: weak fairness; otherwise none, so
// every cycle is admissible), the predicate must hold at some point. A property is
// reported holding only if the search was complete and the whole product graph was
// checked; otherwise it stays unknown.
func (c *checker[S]) liveness(o Options, res *Result) error {
	for _, pi := range c.eventually {
		if res.Properties[pi].Status == Holds {
			res.Properties[pi].Status = Unknown
		}
	}
	res.Fair = o.Fair
	complete := res.Bound == "" && (res.Outcome == Complete ||
		(res.Outcome == Violated && res.Violation != nil && res.Violation.Kind == SometimesKind))
	if !complete {
		return nil
	}
	g, err := c.buildFairGraph(o)
	var big errLivenessGraph
	if errors.As(err, &big) {
		if res.Outcome == Complete {
			res.Outcome, res.Bound = BoundReached, big.Error()
		}
		return nil
	}
	if err != nil {
		return err
	}
	res.LivenessChecked = true
	res.ProductStates = int64(len(g.ebits))
	for j, pi := range c.eventually {
		pr := res.Properties[pi]
		p := g.deadEnd(j)
		if p == nil {
			p = g.fairCycle(j)
			if p != nil {
				p.nofair = !o.Fair
			}
		}
		if p == nil {
			// Boundary cut the search at states where the predicate had not held yet:
			// a path through one of them goes on unseen and may never reach it.
			if n := g.cutOpen(j); n > 0 {
				pr.Why = fmt.Sprintf("the search stopped at %d states outside the boundary before it held; their continuations are unexplored", n)
				continue
			}
			pr.Status = Holds
			continue
		}
		pr.Status, pr.path, pr.HasTrace, pr.Depth, pr.Cycle = Failed, p, true, len(p.steps)+1, p.cycle
		if res.Outcome == Complete || (res.Violation != nil && res.Violation.Kind == SometimesKind) {
			res.Outcome, res.Violation = Violated, pr
		}
	}
	return nil
}
