package replication

import (
	"slices"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Options configure a replica group.
type Options struct {
	Group      string
	Registries []sim.NodeID
	// Period is the ping loop's period (§5.2.2); verify_primary runs every 5.
	Period time.Duration
	// Lease is a registration's lease at the registries (renewed every Lease/3); a
	// primary that has not had its registration acknowledged for a lease steps down.
	Lease time.Duration
	// Notify subscribes the replicas to the registries' membership events (remote
	// events, the thesis' future work); without it they learn of changes only by
	// polling: the primary looks the group up every period, a backup every 5.
	Notify bool
	// BackupsRegister and NoBackupPing are the thesis' own membership (membership.go):
	// a backup's pings register it with the primary (§5.2.2 step 8), which then looks
	// the group up only for verify_primary; with Notify, backups do not ping the
	// primary and learn of its failure from the registries' notice (§7's remote
	// events). Off, the primary polls every period and backups ping it.
	BackupsRegister, NoBackupPing bool
	// Active: the group is actively replicated (RP-3; clients multicast to it).
	Active bool
	// Flow makes a passive group a workflow component (RP-4, RP-5); nil: a plain
	// replicated key-value service.
	Flow *Flow
	// Policy plants bugs (tests and -p bug=…); nil is the protocol.
	Policy *Policy
}

// state is a replica's state; Store, Dup and Applied are also in stable storage.
type state struct {
	ID      RegID
	Store   map[string]int64
	Dup     map[string]int64 // request key → response (the duplicate check)
	Applied int64
	// Term numbers the primaries' terms: a replica taking over starts the term after
	// the freshest state's it gathered (TermOf: its ID, so that two replicas taking
	// over at once begin two terms); a backup's Term is that of the history it holds
	// (stable, in "state").
	Term   int64
	TermOf RegID
	// Pending holds the Updates seen without their Done (a new primary resumes them).
	Pending map[string]Update

	Primary     bool
	PrimaryNode sim.NodeID
	LastAck     sim.Time // last registration acknowledged in the current role
	Backups     []sim.NodeID
	Members     []sim.NodeID // every replica registered (the last lookup)

	PingSeq   int64
	Awaiting  bool
	Counter   int
	LookupSeq int64
	Purpose   string // "failure" or "verify": what the lookup in progress is for
	Answers   int
	Found     []Reg

	Queue   []Request
	Current *inflight
	// Claim lists the replicas whose state an elected replica waits for before it
	// takes over (it installs the freshest: a replica back from a crash may hold the
	// minimum ID and not the last requests); Claiming is set while it waits.
	Claiming bool
	Claim    []sim.NodeID
	// AloneSince: since when the lookups list this replica alone (-1: they do not).
	AloneSince sim.Time

	// RP-4: the call a workflow component's primary has in progress (a task's side
	// call, or the transition to the successor group), and how far each instance's
	// side calls got (volatile: a new primary repeats them, and the callee's duplicate
	// table answers).
	Call     *Call
	CallKey  string
	CallFwd  bool
	CallLk   int64
	SideDone map[string]int
	// Hooked is what the Policy's hooks keep between calls (nil for the protocol).
	Hooked any
}

type inflight struct {
	Req     Request
	Resp    int64
	Index   int64
	Waiting []sim.NodeID
	// Answered: the client has its answer (the protocol answers when Waiting empties).
	Answered bool
	// Stale: a tick passed since it ran (the next one sends the done again).
	Stale bool
}

// Replica is a replica manager with its replica (RP-2).
type Replica struct {
	O   *Options
	S   state
	out *sim.Outbox
	now sim.Time
	me  sim.NodeID
}

// NewReplica returns a replica's constructor.
func NewReplica(o *Options) func() sim.Node { return func() sim.Node { return &Replica{O: o} } }

// Handle implements sim.Node.
func (r *Replica) Handle(in sim.Input, out *sim.Outbox) {
	r.out, r.now, r.me = out, in.Now, in.Self
	defer func() { r.out = nil }()
	switch in.Kind {
	case sim.Start, sim.Restart:
		r.S = state{Store: map[string]int64{}, Dup: map[string]int64{}, Pending: map[string]Update{}, SideDone: map[string]int{}, PrimaryNode: -1, AloneSince: -1}
		r.S.ID = loadID(in, out)
		if s, ok := sim.Load[Snapshot](in.Stable, "state"); ok {
			r.S.Store, r.S.Dup, r.S.Applied, r.S.Term, r.S.TermOf = s.Store, s.Dup, s.Applied, s.Term, s.TermOf
		}
		// RP-2: every replica registers as a backup first (§5.2.1).
		out.Cover(ruleBackupFirst)
		r.register()
		out.SetTimer("ping", r.O.Period)
		out.SetTimer("renew", r.O.Lease/3)
		r.lookup("failure")
	case sim.Timeout:
		switch in.Timer {
		case "ping":
			r.tick()
			out.SetTimer("ping", r.O.Period)
		case "renew":
			out.Cover(ruleRenewTimer)
			r.register()
			out.SetTimer("renew", r.O.Lease/3)
		case "call":
			if r.S.Call != nil {
				out.Cover(ruleCallRetry)
				r.S.Call.Lookup(out, r.O.Registries)
				out.SetTimer("call", r.O.Policy.callRetry(r.O.Lease))
			}
		}
	case sim.Receive:
		r.receive(in.From, in.Msg)
	}
}

func (r *Replica) register() {
	for _, g := range r.O.Registries {
		r.out.Send(g, Register{Reg: Reg{Group: r.O.Group, ID: r.S.ID, Node: r.me, Primary: r.S.Primary}, Lease: int64(r.O.Lease), Notify: r.O.Notify})
	}
}

// tick is one round of the ping loop (§5.2.2).
func (r *Replica) tick() {
	r.S.Counter++
	if r.S.Primary {
		if cur := r.S.Current; cur != nil && len(cur.Waiting) > 0 {
			// RP-2 §3.6.1 step 4: a backup that has not acknowledged the done for a
			// period gets it again (it acknowledges what it holds). A backup that
			// applied it and crashed before its ack left, and came back before the
			// registries dropped it, was waited for forever: the primary's queue
			// stopped (swarm seeds 40, 88, with crash-sends).
			if cur.Stale {
				r.out.Cover(ruleDoneAgain)
				for _, b := range cur.Waiting {
					r.out.Send(b, DoneMsg{ID: cur.Req.ID, Client: cur.Req.Client, Seq: cur.Req.Seq, Op: cur.Req.Op, Resp: cur.Resp, Index: cur.Index, Term: r.S.Term, TermOf: r.S.TermOf})
				}
			}
			cur.Stale = true
		}
		// A primary whose registration has not been acknowledged for a lease steps
		// down: the registries have dropped it and a backup may be primary already.
		if r.O.Policy.lapsed(r.now.Sub(r.S.LastAck), r.O.Lease) {
			r.out.Cover(ruleLapsed)
			r.become(false, "registration lapsed")
			r.S.PrimaryNode = -1
		}
		// Polling keeps its list of backups current; with notifications the
		// registries tell it, and it verifies every 5 periods like a backup.
		switch {
		case !r.O.Notify && !r.O.BackupsRegister:
			r.out.Cover(rulePollPrimary)
			r.lookup("verify")
		case r.S.Counter%5 == 0:
			r.out.Cover(ruleVerify)
			r.lookup("verify")
		}
		return
	}
	switch {
	case r.S.Claiming:
		// A replica the registries no longer list is down: stop waiting for it
		// (the answers of the lookup made a period ago). Ask the others again (one
		// back from a crash lost the request).
		if r.S.Purpose == "claim" && r.S.Answers > 0 {
			r.S.Claim = slices.DeleteFunc(r.S.Claim, func(n sim.NodeID) bool {
				gone := !slices.ContainsFunc(r.S.Found, func(g Reg) bool { return g.Node == n })
				if gone {
					r.out.Cover(ruleClaimDrop)
				}
				return gone
			})
		}
		if len(r.S.Claim) == 0 {
			r.claimed()
			return
		}
		r.out.Cover(ruleClaimRetry)
		for _, n := range r.S.Claim {
			r.out.Send(n, SyncReq{Claimer: r.S.ID})
		}
		r.lookup("claim")
	case r.S.PrimaryNode < 0:
		r.lookup("failure")
	case r.S.Awaiting:
		// The primary did not answer the last ping in a period: it crashed or is
		// unreachable (§5.2.2, "if exception occurs").
		r.out.Cover(rulePingLost)
		r.S.Awaiting, r.S.PrimaryNode = false, -1
		r.lookup("failure")
	case r.noPing():
		r.verifyOnly()
	default:
		r.out.Cover(rulePing)
		r.S.PingSeq++
		r.S.Awaiting = true
		r.out.Send(r.S.PrimaryNode, Ping{Seq: r.S.PingSeq})
		if r.S.Counter >= 5 {
			r.out.Cover(ruleVerify)
			r.S.Counter = 0
			r.lookup("verify")
		}
	}
}

// lookup asks every registry for the group (handle_primary_failure and
// verify_primary both start with it); the answers are merged as they come.
func (r *Replica) lookup(purpose string) {
	r.S.LookupSeq++
	r.S.Purpose, r.S.Answers, r.S.Found = purpose, 0, nil
	r.out.Observe(ObsLookup, Looked{Group: r.O.Group, Purpose: purpose, ID: r.S.ID})
	for _, g := range r.O.Registries {
		r.out.Send(g, Lookup{Group: r.O.Group, Seq: r.S.LookupSeq})
	}
}

func (r *Replica) receive(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case Registered:
		if m.ID == r.S.ID && m.Primary == r.S.Primary {
			r.out.Cover(ruleLeaseAcked)
			r.S.LastAck = r.now
		}
	case Found:
		if m.Tag == callTag {
			if r.S.Call != nil {
				r.S.Call.Found(r.out, m)
			}
			return
		}
		if m.Seq != r.S.LookupSeq {
			return
		}
		for _, g := range m.Regs {
			if !slices.ContainsFunc(r.S.Found, func(x Reg) bool { return x.ID == g.ID }) {
				r.S.Found = append(r.S.Found, g)
			}
		}
		r.S.Answers++
		if r.S.Purpose != "claim" && (r.S.Answers == len(r.O.Registries) || len(m.Regs) > 0) {
			r.decide()
		}
	case Changed:
		r.out.Cover(ruleChanged)
		r.S.Found = m.Regs
		r.S.Purpose = "verify"
		r.noticed(m.Regs)
		r.decide()
	case Ping:
		r.pinged(from)
		r.out.Send(from, Pong{Seq: m.Seq, Primary: r.S.Primary, Applied: r.S.Applied, Term: r.S.Term, TermOf: r.S.TermOf, Claiming: r.S.Claiming})
	case Pong:
		if m.Seq == r.S.PingSeq {
			r.S.Awaiting = false
			if !m.Primary {
				// §5.2.2-5.2.3: the replica followed is not primary (back from a
				// crash before the registries dropped it, say): stop following it,
				// unless it is taking over, and handle it as a primary failure. Kept
				// following, a minimum-ID replica never claimed the role and the group
				// stayed without a primary (the failover check found it: swarm seed
				// 110).
				r.out.Cover(rulePongBackup)
				if !m.Claiming {
					r.S.PrimaryNode = -1
				}
				r.lookup("failure")
			} else if !r.sameTerm(m.Term, m.TermOf) || m.Applied > r.S.Applied {
				r.out.Cover(rulePongBehind)
				r.out.Send(from, SyncReq{})
			}
		}
	case Request:
		r.request(from, m)
	case Response:
		if r.S.Call != nil && r.S.Call.Answered(r.out, r.O.Registries, m) {
			r.callDone()
		}
	case Update:
		r.out.Cover(ruleUpdate)
		r.S.Pending[m.ID] = m
	case DoneMsg:
		r.applyDone(from, m)
	case BackupAck:
		r.acked(from, m)
	case SyncReq:
		if r.S.Primary {
			// A replica that found no primary registered claims the role: this one
			// is primary (the registries had not listed it yet): it is to follow.
			r.out.Cover(ruleSyncPrimary)
			r.out.Send(from, r.snapshot())
			return
		}
		if r.S.Claiming && m.Claimer != (RegID{}) && m.Claimer.Less(r.S.ID) {
			// RP-2 §5.2.3 ("the one with minimum registration ID will be elected"):
			// two replicas claimed at once from lookups listing different replicas (a
			// replica back from a crash registered between them); the one with the
			// larger ID yields (swarm seed 10130: both took over and ran the same
			// workflow step).
			r.out.Cover(ruleClaimYield)
			r.S.Claiming, r.S.Claim = false, nil
		}
		if from != r.S.PrimaryNode {
			// A replica claiming the primary role asks for the state: from now on
			// only its results count here (a late Done of the old primary would make
			// this replica hold a request the new primary has not).
			r.out.Cover(ruleFollowClaim)
			r.S.PrimaryNode = from
			// RP-2 §5.2.2-5.2.3: the ping still unanswered went to the primary
			// followed before (crashed, most likely); it says nothing of the
			// claimer. Left set, the next tick took the claimer for failed, the
			// replica looked the group up again and, from registries refilling after
			// a restart that did not list the claimer yet, claimed the role itself:
			// two primaries (registry-restart -p notify=false, seeds 158, 754).
			r.S.Awaiting = false
		}
		r.out.Send(from, r.snapshot())
	case Snapshot:
		// The primary followed is the authority on the history (another term than
		// the one held here: its state replaces this one); any other replica's state
		// is installed when fresher (a claim gathering the freshest).
		own := m.Primary && from == r.S.PrimaryNode && (!r.sameTerm(m.Term, m.TermOf) || m.Applied > r.S.Applied)
		if (own || r.fresher(m.Term, m.Applied)) && !r.S.Primary {
			r.out.Cover(ruleFresher)
			r.S.Store, r.S.Dup, r.S.Applied, r.S.Term, r.S.TermOf = cloneMap(m.Store), cloneMap(m.Dup), m.Applied, m.Term, m.TermOf
			r.save()
		}
		if r.S.Claiming && m.Primary {
			// §5.2.3: adopt an existing primary.
			r.out.Cover(ruleClaimAdopt)
			r.S.Claiming, r.S.Claim, r.S.PrimaryNode = false, nil, from
			r.out.Observe(ObsFailover, Failover{Primary: from})
			r.ack(from, BackupAck{ID: "", Client: -1, Index: r.S.Applied})
			return
		}
		if r.S.Claiming {
			r.S.Claim = slices.DeleteFunc(r.S.Claim, func(n sim.NodeID) bool { return n == from })
			if len(r.S.Claim) == 0 {
				r.claimed()
			}
			return
		}
		r.out.Cover(ruleSnapAck)
		r.ack(from, BackupAck{ID: "", Client: -1, Index: r.S.Applied})
	}
}

func (r *Replica) save() {
	r.out.Store("state", Snapshot{Store: cloneMap(r.S.Store), Dup: cloneMap(r.S.Dup), Applied: r.S.Applied, Term: r.S.Term, TermOf: r.S.TermOf})
}

// Final returns a replica's store and whether it is primary (for the checkers at the
// end of a run).
func (r *Replica) Final() (map[string]int64, int64, bool) { return r.S.Store, r.S.Applied, r.S.Primary }

func cloneMap(m map[string]int64) map[string]int64 {
	c := make(map[string]int64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
