package winkowski

// Policy holds hooks at the game's decision points. A nil hook is the protocol as this
// package implements it — the paper's rule, read with the choices of the package
// comment — and protocol code only ever asks the policy, never which variant runs.
// Broken variants are written outside the protocol: scenarios/winkowski/bugs.go (the
// -p bug=NAME variants) and test files set hooks to plant a mistake, so that tests can
// show the checkers catch it.
//
// A hook sees the protocol's own state; it must not modify it.
type Policy struct {
	// CountsAhead decides whether the request r, in front of T's actual or potential
	// request at a pool, counts on the left side of (p1)/(p3) (choice P1); ordered says
	// whether r's task has an order form there. Nil: r's ticket is not above T's
	// ("priority not lower") or, in the complete variant, r's task has an order form.
	CountsAhead func(s *System, t *Task, r Req, ordered bool) bool
	// Accessible returns how many resources T counts as accessible in a pool of
	// capacity resources of which inUse are in AboutUse: the right side of (p1)/(p3),
	// and the free resources of the winning condition (choice P1). Nil:
	// capacity − inUse.
	Accessible func(capacity, inUse int) int
	// InFront decides whether T's request, preceded by pos requests at a pool where T
	// counts accessible resources, is preceded by fewer requests than accessible
	// resources: the condition to win (WK-3) or to order (WK-4) at that pool. Nil:
	// pos < accessible.
	InFront func(pos, accessible int) bool
	// Current decides whether the latest state of T's k-th pool tells T about its own
	// request and order form there (choice K1). Nil: the state reflects every form T
	// has sent to the pool (Acked[k] = Sent[k]).
	Current func(t *Task, k int) bool
	// OrdersDistributed decides whether T has its order forms distributed at all the
	// pools of its interest, the condition to become an actual winner (WK-4; choice
	// O1). Nil: T sees its order form at every pool, in states that are current.
	OrdersDistributed func(s *System, t *Task) bool
	// Blocks decides whether the request r in front of T's request at a pool is a
	// blocking request (WK-4, choice G1); ordered says whether r's task has an order
	// form there. Nil: r's task has no order form.
	Blocks func(r Req, ordered bool) bool
	// FreeUnit chooses the resource a manager books for a winning form when its pool,
	// of capacity resources, is in state p (WK-2); ok is false when none is free. Nil:
	// the lowest resource not in InUse.
	FreeUnit func(p *PoolState, capacity int) (u Unit, ok bool)
	// Transposes decides whether an advancing form swaps the request at index i ≥ 1 of
	// the queue of p (its task's) with the request in front of it (WK-2). Nil: unless
	// the task of the request in front has an order form at the pool.
	Transposes func(p *PoolState, i int) bool
	// TellsUnregistered decides whether a manager sends the state of pool to task t,
	// which has no registration form there: the state after t's releasing form (WK-2
	// sends it "to T" as well), and the answer to a poll or duplicate of t (K2). Nil:
	// always.
	TellsUnregistered func(pool PoolID, t TaskID) bool
}

func (s *System) countsAhead(t *Task, r Req, ordered bool) bool {
	if h := s.Policy.CountsAhead; h != nil {
		return h(s, t, r, ordered)
	}
	return r.Ticket <= t.Ticket || (s.Variant == Complete && ordered)
}

func (s *System) accessible(capacity, inUse int) int {
	if h := s.Policy.Accessible; h != nil {
		return h(capacity, inUse)
	}
	return capacity - inUse
}

func (s *System) inFront(pos, accessible int) bool {
	if h := s.Policy.InFront; h != nil {
		return h(pos, accessible)
	}
	return pos < accessible
}

func (s *System) current(t *Task, k int) bool {
	if h := s.Policy.Current; h != nil {
		return h(t, k)
	}
	return t.acked(k)
}

func (s *System) ordersDistributed(t *Task) bool {
	if h := s.Policy.OrdersDistributed; h != nil {
		return h(s, t)
	}
	return t.ordersSeen(s)
}

func (s *System) blocks(r Req, ordered bool) bool {
	if h := s.Policy.Blocks; h != nil {
		return h(r, ordered)
	}
	return !ordered
}

func (s *System) freeUnit(p *PoolState, capacity int) (Unit, bool) {
	if h := s.Policy.FreeUnit; h != nil {
		return h(p, capacity)
	}
	for u := Unit(0); int(u) < capacity; u++ {
		if _, used := p.UserOf(u); !used {
			return u, true
		}
	}
	return 0, false
}

func (s *System) transposes(p *PoolState, i int) bool {
	if h := s.Policy.Transposes; h != nil {
		return h(p, i)
	}
	return !p.Ordered(p.Requests[i-1].Task)
}

func (s *System) tellsUnregistered(pool PoolID, t TaskID) bool {
	if h := s.Policy.TellsUnregistered; h != nil {
		return h(pool, t)
	}
	return true
}
