package replication

import (
	"slices"
	"strings"
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

// Policy replaces decisions of the protocol at named points; a nil Policy, and a nil
// field, is the protocol. Tests and -p bug=… plant broken variants through it
// (scenarios/replication/bugs.go), so the broken code lives outside this package.
type Policy struct {
	// Duplicate is the duplicate check (§3.6.1 step 2): the stored response of the
	// request with this ID if it was executed (nil: the duplicate table dup).
	Duplicate func(dup map[string]int64, id string) (int64, bool)
	// Answer says whether the primary may answer a request's client while the
	// backups in waiting have not acknowledged its Done (§3.6.1 steps 4-5; nil: only
	// once none is left).
	Answer func(waiting []sim.NodeID) bool
	// Lapsed says whether a primary whose registration was last acknowledged since
	// ago has lost it (nil: since > lease): it steps down.
	Lapsed func(since, lease time.Duration) bool
	// CallRetry is the period after which a call (a transition or a task's call) left
	// unanswered is made again to the primary found anew (§4.5.2; nil: a third of the
	// lease; 0: never).
	CallRetry func(lease time.Duration) time.Duration
	// Became is told when the replica took the primary role, before it resumes what
	// its predecessor left (§5.1.2: set_primary calls recover); Moves says whether the
	// primary moves a workflow instance (its store key) on (nil: every one). What a
	// hook needs between calls it keeps in the replica's Hooked field.
	Became func(r *Replica)
	Moves  func(r *Replica, key string) bool
	// AloneWait is how long the lookups must list a replica alone before it claims
	// the primary role alone (§5.2.3; nil: a renewal period, a third of the lease, and
	// a period).
	AloneWait func(lease, period time.Duration) time.Duration
}

func (p *Policy) duplicate(dup map[string]int64, id string) (int64, bool) {
	if p != nil && p.Duplicate != nil {
		return p.Duplicate(dup, id)
	}
	v, ok := dup[id]
	return v, ok
}

func (p *Policy) answer(waiting []sim.NodeID) bool {
	if p != nil && p.Answer != nil {
		return p.Answer(waiting)
	}
	return len(waiting) == 0
}

func (p *Policy) lapsed(since, lease time.Duration) bool {
	if p != nil && p.Lapsed != nil {
		return p.Lapsed(since, lease)
	}
	return since > lease
}

func (p *Policy) callRetry(lease time.Duration) time.Duration {
	if p != nil && p.CallRetry != nil {
		return p.CallRetry(lease)
	}
	return lease / 3
}

func (p *Policy) aloneWait(lease, period time.Duration) time.Duration {
	if p != nil && p.AloneWait != nil {
		return p.AloneWait(lease, period)
	}
	return lease/3 + period
}

func (p *Policy) moves(r *Replica, key string) bool {
	return p == nil || p.Moves == nil || p.Moves(r, key)
}

// Observation kinds.
const (
	ObsRole     = "rp/role"     // Role: a replica became primary or backup
	ObsExec     = "rp/exec"     // Exec: the primary executed a request (its Done went out)
	ObsApply    = "rp/apply"    // Exec: a backup applied a Done
	ObsCall     = "rp/call"     // ClientOp: a client called
	ObsReturn   = "rp/return"   // ClientOp: it returned
	ObsFailover = "rp/failover" // Failover: a replica handled a primary failure (§5.2.3)
	ObsLookup   = "rp/lookup"   // Looked: a passive replica looked its group up in every registry
	ObsRefused  = "rp/refused"  // CallEvent: a call's request was answered "not primary"
	ObsRelook   = "rp/relook"   // CallEvent: a call looked its group up in every registry
	ObsRespond  = "rp/respond"  // Answer: a passive primary answered a request's client
	ObsAck      = "rp/ack"      // Ack: a backup acknowledged the primary's done or state
)

// Role is observed when a replica's role changes.
type Role struct {
	ID      RegID
	Primary bool
	Why     string
}

// Exec is observed when a request is executed (primary) or applied (backup).
type Exec struct {
	Group  string
	ID     string
	Client sim.NodeID
	Seq    int64
	Op     Op
	Resp   int64
	Index  int64
	// Backups: the backups whose acknowledgements the primary waits for before it
	// answers (ObsExec of a passive primary).
	Backups []sim.NodeID `json:",omitempty"`
}

// Answer is observed when a passive primary answers a request's client: the request
// in progress once its backups acknowledged (Index: its place), or a duplicate from
// the table (Dup).
type Answer struct {
	Group string
	ID    string
	Index int64 `json:",omitempty"`
	Dup   bool  `json:",omitempty"`
}

// Ack is observed when a backup acknowledges to the primary To that it holds every
// request up to Index; Applied is how many it has applied.
type Ack struct {
	Group   string
	To      sim.NodeID
	Index   int64
	Applied int64
}

// ClientOp is a client call or return.
type ClientOp struct {
	Client sim.NodeID
	Seq    int64
	Op     Op
	Val    int64
}

// Failover is observed when a replica runs handle_primary_failure and settles on a
// primary.
type Failover struct {
	Primary sim.NodeID
	Self    bool
	// Listed is how many registrations the lookup found; Alone, when it listed the
	// replica alone, for how long the lookups have done so.
	Listed int
	Alone  time.Duration
}

// Looked is observed when a passive replica looks its group up in the registries: the
// ping thread's verify_primary or handle_primary_failure (§5.2.2-5.2.4), or a claim's
// refresh; Purpose says which ("verify", "failure" or "claim").
type Looked struct {
	Group   string
	Purpose string
	// ID is the replica's registration ID (RP-1: the same across restarts).
	ID RegID
}

// CallEvent is a step of a call's replica locator (caller.go): the called group,
// whether it is active, and the request's ID.
type CallEvent struct {
	Group  string
	Active bool
	ID     string
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

// ---- requests at the primary ----

func (r *Replica) request(from sim.NodeID, m Request) {
	if !r.S.Primary {
		r.out.Cover(ruleNotPrimary)
		r.out.Send(from, Response{ID: m.ID, Client: m.Client, Seq: m.Seq, NotPrimary: true})
		return
	}
	k := m.ID
	if r.S.Current != nil && r.S.Current.Req.ID == k {
		// In progress: executed, its result already in the duplicate table, but not
		// yet acknowledged by every backup. Answering the re-send now would
		// acknowledge a request a crash of this primary could still lose (RP-P4).
		r.out.Cover(ruleInProgress)
		return
	}
	if v, ok := r.O.Policy.duplicate(r.S.Dup, k); ok {
		// RP-2: a duplicate: re-send the stored response, execute nothing (§4.5.4,
		// §4.5.5: a transition already done is simply acknowledged).
		r.out.Cover(ruleDuplicate)
		if strings.HasPrefix(k, PrefixTransition) {
			r.out.Cover(ruleTransDup)
		}
		r.respond(m, v, 0)
		return
	}
	for _, q := range r.S.Queue {
		if q.ID == k {
			r.out.Cover(ruleQueuedDup)
			return
		}
	}
	r.S.Queue = append(r.S.Queue, m)
	r.next()
}

// next executes the queued request: Update to the backups before the call, the call,
// Done after it, and the answer once every backup acknowledged (RP-2).
func (r *Replica) next() {
	if r.S.Current != nil || len(r.S.Queue) == 0 || !r.S.Primary {
		return
	}
	m := r.S.Queue[0]
	r.S.Queue = r.S.Queue[1:]
	k := m.ID
	if v, ok := r.O.Policy.duplicate(r.S.Dup, k); ok {
		r.out.Cover(ruleDuplicate)
		r.respond(m, v, 0)
		r.next()
		return
	}
	r.out.Cover(ruleExecute)
	for _, b := range r.S.Backups {
		r.out.Send(b, Update(m))
	}
	resp := r.apply(m.Op)
	r.S.Dup[k] = resp
	r.S.Applied++
	r.save()
	r.out.Observe(ObsExec, Exec{Group: r.O.Group, ID: k, Client: m.Client, Seq: m.Seq, Op: m.Op, Resp: resp, Index: r.S.Applied, Backups: slices.Clone(r.S.Backups)})
	r.task(m)
	for _, b := range r.S.Backups {
		r.out.Send(b, DoneMsg{ID: k, Client: m.Client, Seq: m.Seq, Op: m.Op, Resp: resp, Index: r.S.Applied, Term: r.S.Term, TermOf: r.S.TermOf})
	}
	r.S.Current = &inflight{Req: m, Resp: resp, Index: r.S.Applied, Waiting: slices.Clone(r.S.Backups)}
	r.finish()
}

func (r *Replica) acked(from sim.NodeID, m BackupAck) {
	cur := r.S.Current
	if cur == nil || m.Index < cur.Index {
		return
	}
	cur.Waiting = slices.DeleteFunc(cur.Waiting, func(n sim.NodeID) bool { return n == from })
	r.finish()
}

// dropGone stops waiting for backups the registries no longer list (crashed: their
// registration expired).
func (r *Replica) dropGone() {
	if cur := r.S.Current; cur != nil {
		cur.Waiting = slices.DeleteFunc(cur.Waiting, func(n sim.NodeID) bool {
			gone := !slices.Contains(r.S.Members, n)
			if gone {
				r.out.Cover(ruleDropGone)
			}
			return gone
		})
		r.finish()
	}
}

// finish answers the client once every backup waited for acknowledged (§3.6.1 step
// 5), and then takes the next request.
func (r *Replica) finish() {
	cur := r.S.Current
	if cur == nil {
		return
	}
	if !cur.Answered && r.O.Policy.answer(cur.Waiting) {
		cur.Answered = true
		r.out.Cover(ruleAnswer)
		r.respond(cur.Req, cur.Resp, cur.Index)
	}
	if len(cur.Waiting) > 0 {
		return
	}
	r.S.Current = nil
	r.next()
	r.drive()
}

// applyDone: a backup applies the primary's result in order, or asks for the state
// when it is behind.
func (r *Replica) applyDone(from sim.NodeID, m DoneMsg) {
	if r.S.Primary || (r.S.PrimaryNode >= 0 && from != r.S.PrimaryNode) {
		r.out.Cover(ruleFence)
		return // not from the primary this replica follows: fenced off
	}
	if !r.sameTerm(m.Term, m.TermOf) {
		if r.S.Applied > 0 || m.Index != 1 {
			// A done of another term than the history held here: install the
			// primary's state first (its requests at the indexes this replica may
			// hold others at; the primary followed is the authority, its term
			// older or not).
			r.out.Cover(ruleNewTerm)
			r.out.Send(from, SyncReq{})
			return
		}
		r.S.Term, r.S.TermOf = m.Term, m.TermOf // nothing held yet: the term's first request is the first
	}
	k := m.ID
	switch {
	case m.Index <= r.S.Applied:
		// already applied (or covered by a snapshot)
		r.out.Cover(ruleApplied)
	case m.Index == r.S.Applied+1:
		r.out.Cover(ruleApply)
		r.apply(m.Op)
		r.S.Dup[k] = m.Resp
		r.S.Applied = m.Index
		delete(r.S.Pending, k)
		r.save()
		r.out.Observe(ObsApply, Exec{Group: r.O.Group, ID: k, Client: m.Client, Seq: m.Seq, Op: m.Op, Resp: m.Resp, Index: m.Index})
	default:
		r.out.Cover(ruleGap)
		r.out.Send(from, SyncReq{})
		return
	}
	r.ack(from, BackupAck{ID: k, Client: m.Client, Seq: m.Seq, Index: r.S.Applied})
}

// ack acknowledges to the primary that this backup holds every request up to m.Index.
func (r *Replica) ack(to sim.NodeID, m BackupAck) {
	r.out.Observe(ObsAck, Ack{Group: r.O.Group, To: to, Index: m.Index, Applied: r.S.Applied})
	r.out.Send(to, m)
}

// respond answers a request's client (none for a primary's own steps): the request
// in progress (its index), or a duplicate (index 0).
func (r *Replica) respond(m Request, v int64, index int64) {
	if m.Client < 0 {
		return
	}
	r.out.Observe(ObsRespond, Answer{Group: r.O.Group, ID: m.ID, Index: index, Dup: index == 0})
	r.out.Send(m.Client, Response{ID: m.ID, Client: m.Client, Seq: m.Seq, Val: v})
	if r.O.Flow != nil && strings.HasPrefix(m.ID, PrefixTransition) {
		if inst, hop, ok := r.hopOf(m.Op.Key); ok {
			r.out.Cover(ruleTransAck)
			r.out.Observe(ObsAnswer, Task{Group: r.O.Group, Inst: inst, Hop: hop, Name: r.O.Flow.Route[hop].Task})
		}
	}
}

// apply runs an operation on the store and returns its response.
func (r *Replica) apply(op Op) int64 {
	if op.Write {
		r.S.Store[op.Key] = op.Val
		return op.Val
	}
	return r.S.Store[op.Key]
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
