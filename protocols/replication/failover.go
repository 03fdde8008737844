package replication

import (
	"slices"
	"time"
)

// decide acts on the registrations found: handle_primary_failure (§5.2.3) adopts an
// existing primary or elects the minimum registration ID; verify_primary (§5.2.4)
// keeps one and only one primary, the minimum ID among the primaries.
func (r *Replica) decide() {
	regs := r.S.Found
	if len(regs) != 1 || regs[0].Node != r.me {
		r.S.AloneSince = -1
	}
	if len(regs) == 0 {
		r.out.Cover(ruleNoRegistry)
		return // no registry answered with anything yet: stay alive, try later
	}
	var primaries []Reg
	min := r.S.ID
	minNode := r.me
	for _, g := range regs {
		if g.Primary {
			primaries = append(primaries, g)
		}
		if g.ID.Less(min) {
			min, minNode = g.ID, g.Node
		}
	}
	r.S.Backups, r.S.Members = nil, nil
	for _, g := range regs {
		r.S.Members = append(r.S.Members, g.Node)
		if g.Node != r.me && !g.Primary {
			r.S.Backups = append(r.S.Backups, g.Node)
		}
	}
	slices.Sort(r.S.Backups)
	if r.S.Primary {
		// verify: another primary with a smaller ID wins; this one steps down.
		for _, p := range primaries {
			if p.ID.Less(r.S.ID) {
				r.out.Cover(ruleTwoPrimaries)
				r.become(false, "another primary has a smaller ID")
				r.S.PrimaryNode = p.Node
				return
			}
		}
		r.dropGone()
		return
	}
	if len(primaries) > 0 {
		r.out.Cover(ruleAdopt)
		best := primaries[0]
		for _, p := range primaries[1:] {
			if p.ID.Less(best.ID) {
				best = p
			}
		}
		if best.Node != r.S.PrimaryNode {
			r.out.Observe(ObsFailover, Failover{Primary: best.Node, Listed: len(regs)})
		}
		r.S.PrimaryNode = best.Node
		// RP-2 §5.2.3 "adopt an existing primary": a later answer to the lookup
		// that elected this replica names a registered primary: the claim ends.
		r.S.Claiming, r.S.Claim = false, nil
		return
	}
	if r.S.Purpose != "failure" {
		return
	}
	if r.S.PrimaryNode >= 0 && r.S.PrimaryNode != r.me {
		// It follows a replica that claimed the role (or is about to): that one
		// registers as primary, or the ping loop finds it gone. A lookup answered
		// before the claim must not make this one claim too.
		r.out.Cover(ruleFollowing)
		return
	}
	var alone time.Duration
	if minNode == r.me && len(regs) == 1 {
		// RP-2 §5.2.3 ("try every lookup registry") and §5.4.1: the registries list
		// this replica alone, so it would take over at once with nobody to ask for
		// the state. A registry back from a crash lists only the replicas that
		// renewed since (within a renewal period, a third of a lease): one back
		// from a crash, behind, took the role from it while another registry listed
		// the primary (swarm -p notify=false seeds 5730, 18626: an acknowledged
		// request lost), and, with the only registry down for a lease, the primary
		// stepped down and the first replica to register again took over with a
		// stale state (swarm seed 216: a committed transition executed again). It
		// takes over alone only once the lookups have listed it alone for a
		// renewal period and a period; each tick looks again meanwhile.
		if r.S.AloneSince < 0 {
			r.S.AloneSince = r.now
		}
		if alone = r.now.Sub(r.S.AloneSince); alone < r.O.Policy.aloneWait(r.O.Lease, r.O.Period) {
			r.out.Cover(ruleAloneWait)
			return
		}
		r.out.Cover(ruleAloneClaim)
	}
	// No primary registered: the minimum ID becomes primary (only it acts on it).
	r.out.Observe(ObsFailover, Failover{Primary: minNode, Self: minNode == r.me, Listed: len(regs), Alone: alone})
	if minNode == r.me {
		// Before taking over, gather the others' state and keep the freshest (a
		// choice the thesis leaves open: its minimum-ID rule alone elected a replica
		// just back from a crash, without the last acknowledged requests).
		r.out.Cover(ruleClaim)
		r.S.Claiming, r.S.Claim = true, nil
		for _, g := range regs {
			if g.Node != r.me {
				r.S.Claim = append(r.S.Claim, g.Node)
				r.out.Send(g.Node, SyncReq{Claimer: r.S.ID})
			}
		}
		if len(r.S.Claim) == 0 {
			r.claimed()
		}
		return
	}
	r.out.Cover(ruleFollowMin)
	r.S.PrimaryNode = minNode
	// RP-2 §5.2.3: only the minimum ID registers as primary. A later answer to the
	// lookup that elected this replica names a smaller ID (a registry that had not
	// listed it): the claim ends, as if the answers had come in the other order.
	r.S.Claiming, r.S.Claim = false, nil
}

// claimed ends a claim: the replica takes over as primary.
func (r *Replica) claimed() {
	r.out.Cover(ruleClaimed)
	r.S.Claiming, r.S.Claim = false, nil
	// A new term begins: the backups install its state (Term and all) before they
	// apply its dones (a backup holding a request the last primary ran alone, in an
	// older term, must not keep it at the index this term fills).
	r.S.Term, r.S.TermOf = r.S.Term+1, r.S.ID
	r.save()
	r.become(true, "minimum registration ID, no primary registered")
	if r.S.Primary && r.S.Applied > 0 {
		for _, n := range r.S.Members {
			if n != r.me {
				r.out.Send(n, r.snapshot())
			}
		}
	}
}

// sameTerm reports whether a history of term (term, of) is of this replica's term.
func (r *Replica) sameTerm(term int64, of RegID) bool { return term == r.S.Term && of == r.S.TermOf }

// fresher reports whether a state of the given term and length is fresher than this
// replica's: a later term, or as late and longer.
func (r *Replica) fresher(term, applied int64) bool {
	return term > r.S.Term || term == r.S.Term && applied > r.S.Applied
}

// snapshot is this replica's state, as sent.
func (r *Replica) snapshot() Snapshot {
	return Snapshot{Store: cloneMap(r.S.Store), Dup: cloneMap(r.S.Dup), Applied: r.S.Applied, Term: r.S.Term, TermOf: r.S.TermOf, Primary: r.S.Primary}
}

// become changes the replica's role and registers it so (§5.2.3 step 41).
func (r *Replica) become(primary bool, why string) {
	if r.S.Primary == primary {
		return
	}
	r.S.Primary = primary
	r.S.LastAck = r.now // the lease of the new role runs from its registration
	r.out.Observe(ObsRole, Role{ID: r.S.ID, Primary: primary, Why: why})
	r.register()
	if primary {
		r.S.PrimaryNode = r.me
		// §5.1.4: resume the requests whose Update arrived without their Done.
		for _, k := range sortedKeys(r.S.Pending) {
			u := r.S.Pending[k]
			if _, done := r.S.Dup[k]; !done {
				r.out.Cover(ruleResume)
				r.S.Queue = append(r.S.Queue, Request(u))
			}
		}
		r.S.Pending = map[string]Update{}
		if h := r.O.Policy; h != nil && h.Became != nil {
			h.Became(r)
		}
		r.next()
		r.resume()
	} else {
		r.out.Cover(ruleStepDown)
		r.S.Queue, r.S.Current = nil, nil
		if r.S.Call != nil {
			r.out.Cover(ruleCallStopped)
		}
		r.stopCall()
	}
}
