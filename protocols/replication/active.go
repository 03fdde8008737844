package replication

import (
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// RP-3 active replication (§3.6.2): the front end multicasts a request to every
// replica of the group; the replicas deliver requests in one total order, each
// executes every request, and the front end takes the first reply.
//
// Total order: a fixed sequencer (the registered replica with the minimum registration
// ID, found through the same registries as RP-2) assigns each new request the next
// index and multicasts the assignment (Order); replicas deliver in index order and
// fetch a gap from the sequencer, and a replica back from a crash catches up the same
// way (its ping to the sequencer reports how far it got). The sequencer checks
// duplicates by request ID, so a re-sent request gets its stored answer.
//
// Sequencer failover: when the registries' minimum changes (the sequencer's
// registration expired, or a replica with a smaller ID registered), the new minimum
// starts epoch e+1: it asks every registered replica for its order (SeqSync); a
// replica that answers joins the epoch and ignores orders of older epochs from then
// on (fencing); the new sequencer keeps the longest order it got (the orders of one
// epoch are prefixes of each other), and sends it to all (NewView) before ordering
// anything new. A replica that does not answer within a ping period is taken as down.
type ActiveReplica struct {
	O   *Options
	S   astate
	out *sim.Outbox
	me  sim.NodeID
	now sim.Time
}

type astate struct {
	ID    RegID
	Log   []Request // the requests delivered, in order (stable)
	Store map[string]int64
	Dup   map[string]int64
	Epoch int64 // the epoch joined (stable)
	// Seqr is the sequencer this replica follows (-1: none known); IsSeq: it is it.
	Seqr  sim.NodeID
	IsSeq bool
	// Members are the group's registered replicas.
	Members []sim.NodeID

	LookupSeq int64
	Answers   int
	Found     []Reg
	Counter   int
	PingSeq   int64

	// A sequencer taking over: the epoch it starts, whom it waits for, and the
	// longest order gathered so far.
	Syncing   bool
	SyncSince sim.Time
	SyncEpoch int64
	Wait      []sim.NodeID
	Best      []Request
}

// astable is what an active replica keeps in stable storage.
type astable struct {
	Epoch int64
	Log   []Request
}

// Observation kinds of active replication.
const (
	ObsOrder   = "rp/order"   // Exec: the sequencer assigned Index to a request
	ObsDeliver = "rp/deliver" // Exec: a replica delivered (executed) the Index-th request
)

// NewActiveReplica returns an active replica's constructor.
func NewActiveReplica(o *Options) func() sim.Node {
	return func() sim.Node { return &ActiveReplica{O: o} }
}

// Handle implements sim.Node.
func (a *ActiveReplica) Handle(in sim.Input, out *sim.Outbox) {
	a.out, a.me, a.now = out, in.Self, in.Now
	defer func() { a.out = nil }()
	switch in.Kind {
	case sim.Start, sim.Restart:
		a.S = astate{Store: map[string]int64{}, Dup: map[string]int64{}, Seqr: -1}
		a.S.ID = loadID(in, out)
		if st, ok := sim.Load[astable](in.Stable, "order"); ok {
			if len(st.Log) > 0 {
				out.Cover(ruleReplay)
			}
			a.S.Epoch = st.Epoch
			for _, r := range st.Log {
				a.execute(r)
			}
		}
		a.register()
		out.SetTimer("ping", a.O.Period)
		out.SetTimer("renew", a.O.Lease/3)
		a.lookup()
	case sim.Timeout:
		switch in.Timer {
		case "ping":
			a.tick()
			out.SetTimer("ping", a.O.Period)
		case "renew":
			out.Cover(ruleRenewTimer)
			a.register()
			out.SetTimer("renew", a.O.Lease/3)
		}
	case sim.Receive:
		a.receive(in.From, in.Msg)
	}
}

func (a *ActiveReplica) register() {
	for _, g := range a.O.Registries {
		a.out.Send(g, Register{Reg: Reg{Group: a.O.Group, ID: a.S.ID, Node: a.me, Primary: a.S.IsSeq}, Lease: int64(a.O.Lease), Notify: a.O.Notify})
	}
}

func (a *ActiveReplica) lookup() {
	a.S.LookupSeq++
	a.S.Answers, a.S.Found = 0, nil
	a.out.Observe(ObsLookup, Looked{Group: a.O.Group, Purpose: "membership", ID: a.S.ID})
	for _, g := range a.O.Registries {
		a.out.Send(g, Lookup{Group: a.O.Group, Seq: a.S.LookupSeq})
	}
}

func (a *ActiveReplica) tick() {
	a.S.Counter++
	if a.S.Syncing {
		// The replicas that did not answer within a period are down: take over with
		// the longest order gathered.
		if a.now-a.S.SyncSince >= sim.Time(a.O.Period) {
			a.out.Cover(ruleInstallLate)
			a.install()
		}
		return
	}
	if a.S.Answers > 0 && a.S.Answers < len(a.O.Registries) {
		a.out.Cover(ruleASlowReg)
		a.membership() // a registry did not answer: go on with the others' lists
	}
	if !a.O.Notify || a.S.Counter%5 == 0 {
		a.lookup()
	}
	if !a.S.IsSeq && a.S.Seqr >= 0 {
		a.S.PingSeq++
		a.out.Send(a.S.Seqr, Ping{Seq: a.S.PingSeq})
	}
}

func (a *ActiveReplica) receive(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case Found:
		if m.Tag != "" || m.Seq != a.S.LookupSeq {
			return
		}
		for _, g := range m.Regs {
			if !slices.ContainsFunc(a.S.Found, func(x Reg) bool { return x.ID == g.ID }) {
				a.S.Found = append(a.S.Found, g)
			}
		}
		a.S.Answers++
		if a.S.Answers == len(a.O.Registries) {
			a.membership()
		}
	case Changed:
		// One registry's view: look the group up in all of them before acting (a
		// registry back from a crash lists only the replicas that renewed since).
		a.out.Cover(ruleAChanged)
		a.lookup()
	case Ping:
		a.out.Send(from, Pong{Seq: m.Seq, Primary: a.S.IsSeq, Applied: int64(len(a.S.Log))})
	case Pong:
		if m.Seq == a.S.PingSeq && m.Primary && m.Applied > int64(len(a.S.Log)) {
			a.out.Cover(rulePingSeq)
			a.out.Send(from, Fetch{From: int64(len(a.S.Log)) + 1})
		}
	case Request:
		a.request(m)
	case Order:
		if !a.follow(from, m.Epoch) {
			return
		}
		switch {
		case m.Index == int64(len(a.S.Log))+1:
			a.out.Cover(ruleDeliver)
			a.deliver(m.Req)
		case m.Index > int64(len(a.S.Log))+1:
			a.out.Cover(ruleOrderGap)
			a.out.Send(from, Fetch{From: int64(len(a.S.Log)) + 1})
		}
	case Fetch:
		if a.S.IsSeq && m.From >= 1 && m.From <= int64(len(a.S.Log)) {
			a.out.Cover(ruleFetch)
			a.out.Send(from, Orders{Epoch: a.S.Epoch, Start: m.From, Reqs: slices.Clone(a.S.Log[m.From-1:])})
		}
	case Orders:
		if !a.follow(from, m.Epoch) {
			return
		}
		for i, r := range m.Reqs {
			if m.Start+int64(i) == int64(len(a.S.Log))+1 {
				a.out.Cover(ruleCatchUp)
				a.deliver(r)
			}
		}
	case SeqSync:
		joined := m.Epoch == a.S.Epoch && a.S.Seqr == from
		if m.Epoch > a.S.Epoch {
			// Join the new sequencer's epoch: from now on orders of older epochs are
			// ignored here, so the order this replica reports stays complete.
			a.S.Epoch, a.S.Seqr = m.Epoch, from
			a.stepDown()
			a.save()
			joined = true
			// RP-3 failover: a lookup answered before this join may list neither the
			// new sequencer nor a later registration, and acting on it would start
			// an epoch past the one just joined, fencing off the new sequencer's
			// orders while it answers clients (the model checker found it: an
			// acknowledged request lost after one crash). Ask again.
			a.out.Cover(ruleSeqJoin)
			a.lookup()
		}
		a.out.Send(from, SeqState{Asked: m.Epoch, Epoch: a.S.Epoch, Joined: joined, Log: slices.Clone(a.S.Log)})
	case SeqState:
		if !a.S.Syncing || m.Asked != a.S.SyncEpoch {
			return
		}
		if !m.Joined {
			// The replica follows another sequencer in this epoch or a later one
			// (each epoch has one sequencer): start one after it.
			a.out.Cover(ruleSeqRefuse)
			a.S.Epoch = max(a.S.Epoch, m.Epoch)
			a.startSync()
			return
		}
		if len(m.Log) > len(a.S.Best) {
			a.out.Cover(ruleLongest)
			a.S.Best = m.Log
		}
		a.S.Wait = slices.DeleteFunc(a.S.Wait, func(n sim.NodeID) bool { return n == from })
		if len(a.S.Wait) == 0 {
			a.out.Cover(ruleInstall)
			a.install()
		}
	case NewView:
		if !a.follow(from, m.Epoch) {
			return
		}
		a.out.Cover(ruleNewView)
		a.adopt(m.Log)
	}
}

// follow reports whether an order of epoch e from node from is to be followed
// (fencing: an older epoch's is not) and joins a newer epoch.
func (a *ActiveReplica) follow(from sim.NodeID, e int64) bool {
	if e < a.S.Epoch || (e == a.S.Epoch && a.S.Seqr >= 0 && from != a.S.Seqr) {
		a.out.Cover(ruleEpochFence)
		return false
	}
	if e > a.S.Epoch {
		a.out.Cover(ruleEpochJoin)
	}
	if e > a.S.Epoch || a.S.Seqr < 0 {
		a.S.Epoch, a.S.Seqr = e, from
		if from != a.me {
			a.stepDown()
		}
		a.save()
	}
	return true
}

// membership acts on the registrations found: the minimum registration ID is the
// sequencer; a replica that finds itself the minimum and is not the sequencer takes
// over, one that is the sequencer and is not the minimum steps down.
func (a *ActiveReplica) membership() {
	if len(a.S.Found) == 0 {
		return
	}
	a.S.Members = nil
	min, minNode := a.S.ID, a.me
	self := false
	seq, seqID := sim.NodeID(-1), RegID{}
	for _, g := range a.S.Found {
		if g.Primary && g.Node != a.me && (seq < 0 || g.ID.Less(seqID)) {
			seq, seqID = g.Node, g.ID
		}
		a.S.Members = append(a.S.Members, g.Node)
		if g.Node == a.me {
			self = true
		}
		if g.ID.Less(min) {
			min, minNode = g.ID, g.Node
		}
	}
	slices.Sort(a.S.Members)
	a.S.Members = slices.Compact(a.S.Members)
	a.S.Answers = len(a.O.Registries) // acted on
	if a.S.Seqr < 0 && !a.S.IsSeq && seq >= 0 {
		// A replica back from a crash learns the sequencer from its registration,
		// and its pings then fetch what it missed.
		a.out.Cover(ruleLearnSeq)
		a.S.Seqr = seq
	}
	switch {
	case minNode == a.me && self && !a.S.IsSeq && !a.S.Syncing:
		a.out.Cover(ruleViewChange)
		a.startSync()
	case minNode != a.me && (a.S.IsSeq || a.S.Syncing):
		a.out.Cover(ruleSeqStepDown)
		a.stepDown()
	}
}

// startSync begins a sequencer failover (a new epoch).
func (a *ActiveReplica) startSync() {
	a.S.Syncing, a.S.SyncSince = true, a.now
	a.S.SyncEpoch = a.S.Epoch + 1
	a.S.Best = slices.Clone(a.S.Log)
	a.S.Wait = nil
	ask := slices.Clone(a.S.Members)
	if a.S.Seqr >= 0 && !slices.Contains(ask, a.S.Seqr) {
		// RP-3 failover: the sequencer this replica follows is asked too, listed or
		// not (a registry back from a crash lists only the replicas that renewed
		// since): left out, it would go on ordering and answering in its epoch while
		// the replicas that join this one fence its orders off. If it is down, the
		// wait ends after a period like any other's.
		a.out.Cover(ruleAskFollowed)
		ask = append(ask, a.S.Seqr)
	}
	for _, n := range ask {
		if n != a.me {
			a.S.Wait = append(a.S.Wait, n)
			a.out.Send(n, SeqSync{Epoch: a.S.SyncEpoch})
		}
	}
	if len(a.S.Wait) == 0 {
		a.out.Cover(ruleInstall)
		a.install()
	}
}

// install makes this replica the sequencer of the new epoch with the longest order
// gathered.
func (a *ActiveReplica) install() {
	a.S.Syncing, a.S.Wait = false, nil
	a.S.Epoch, a.S.Seqr, a.S.IsSeq = a.S.SyncEpoch, a.me, true
	a.adopt(a.S.Best)
	a.S.Best = nil
	a.save()
	a.out.Observe(ObsRole, Role{ID: a.S.ID, Primary: true, Why: "minimum registration ID: sequencer"})
	a.register()
	for _, n := range a.S.Members {
		if n != a.me {
			a.out.Send(n, NewView{Epoch: a.S.Epoch, Log: slices.Clone(a.S.Log)})
		}
	}
}

func (a *ActiveReplica) stepDown() {
	a.S.Syncing, a.S.Wait, a.S.Best = false, nil, nil
	if a.S.IsSeq {
		a.S.IsSeq = false
		a.out.Observe(ObsRole, Role{ID: a.S.ID, Primary: false, Why: "not the minimum registration ID"})
		a.register()
	}
}

// adopt delivers the part of a longer order this replica has not delivered.
func (a *ActiveReplica) adopt(log []Request) {
	for i := len(a.S.Log); i < len(log); i++ {
		a.deliver(log[i])
	}
}

// request: the sequencer orders a new request (a duplicate gets its stored answer);
// another replica answers a duplicate it has delivered and leaves the rest to the
// sequencer.
func (a *ActiveReplica) request(m Request) {
	if v, ok := a.O.Policy.duplicate(a.S.Dup, m.ID); ok {
		a.out.Cover(ruleADuplicate)
		a.respond(m, v)
		return
	}
	if !a.S.IsSeq || a.S.Syncing {
		a.out.Cover(ruleNotSeq)
		return
	}
	a.out.Cover(ruleOrder)
	idx := int64(len(a.S.Log)) + 1
	a.out.Observe(ObsOrder, Exec{Group: a.O.Group, ID: m.ID, Client: m.Client, Seq: m.Seq, Op: m.Op, Index: idx})
	for _, n := range a.S.Members {
		if n != a.me {
			a.out.Send(n, Order{Epoch: a.S.Epoch, Index: idx, Req: m})
		}
	}
	a.deliver(m)
}

// deliver executes the next request of the order and answers its client.
func (a *ActiveReplica) deliver(m Request) {
	v := a.execute(m)
	a.save()
	a.out.Observe(ObsDeliver, Exec{Group: a.O.Group, ID: m.ID, Client: m.Client, Seq: m.Seq, Op: m.Op, Resp: v, Index: int64(len(a.S.Log))})
	a.respond(m, v)
}

func (a *ActiveReplica) execute(m Request) int64 {
	a.S.Log = append(a.S.Log, m)
	v := m.Op.Val
	if m.Op.Write {
		a.S.Store[m.Op.Key] = m.Op.Val
	} else {
		v = a.S.Store[m.Op.Key]
	}
	a.S.Dup[m.ID] = v
	return v
}

func (a *ActiveReplica) respond(m Request, v int64) {
	if m.Client >= 0 {
		a.out.Send(m.Client, Response{ID: m.ID, Client: m.Client, Seq: m.Seq, Val: v})
	}
}

func (a *ActiveReplica) save() {
	a.out.Store("order", astable{Epoch: a.S.Epoch, Log: slices.Clone(a.S.Log)})
}

// FinalActive returns an active replica's order length, store and whether it is the
// sequencer (for the checkers at the end of a run).
func (a *ActiveReplica) FinalActive() (int64, map[string]int64, bool) {
	return int64(len(a.S.Log)), a.S.Store, a.S.IsSeq
}
