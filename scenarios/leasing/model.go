package lsscen

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/simrun-dev/simrun/model"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/sim"
)

// The model-checked configuration "leasing": one server S and one client C running the
// leasing runtime in discrete time. By default without the discovery layer (C always
// counts S as in range, so lost messages are recovered by retransmission); with
// beacon > 0 discovery is on (beacons, silence detection, disconnected-active
// buffering, flush and re-notify on reconnection) and S grants when it first hears C.
// S grants C a renew-on-call lease and a single-call lease of `term` ticks and passes
// both in one message; the workload makes C send `uses` messages through the
// renew-on-call lease (the k-th no earlier than tick k) and `calls` (default two)
// through the single-call one. The checker
// chooses every interleaving, every message delay up to `delay` ticks, C's clock
// running up to `drift` ticks ahead of or behind S's, and up to `cuts` disconnections
// (both directions at once); each may be repaired later (transient) or never
// (permanent). Invariants:
//
//	LS-P1  always: S never takes live nor processes a message at or after the lease's
//	       deadline — rebuilt by the ghost from the grant and the accepted renewals,
//	       not the deadline the runtime reports — nor after the lease ended at S
//	LS-P5  always: at most one message is processed through the single-call lease
//	LS-1   always: C sends nothing through a lease at or after its own deadline, also
//	       at the very tick of the deadline, before its expiry timer has run (an
//	       instant continuous-time sweeps practically never hit)
//
// plus reachability witnesses (sometimes): the lease expires at both sides while the
// devices are apart (a permanent disconnection detected); the lease survives a
// repaired disconnection and serves a use (a transient one tolerated); with discovery,
// C detects S out of range and back, and a message buffered while disconnected-active
// is taken after the flush.

// ModelParams are the parameters of the "leasing" model.
var ModelParams = []model.Param{
	{Name: "term", Default: "3", Help: "lease term in ticks"},
	{Name: "ticks", Default: "6", Help: "the clock stops after this many ticks"},
	{Name: "drift", Default: "1", Help: "client clock drift bound in ticks"},
	{Name: "delay", Default: "1", Help: "message delay bound in ticks"},
	{Name: "uses", Default: "2", Help: "messages the client sends through the renew-on-call lease"},
	{Name: "calls", Default: "2", Help: "messages the client sends through the single-call lease"},
	{Name: "cuts", Default: "1", Help: "disconnections, each repaired later (transient) or never (permanent)"},
	{Name: "beacon", Default: "0", Help: "discovery beacon period in ticks (0: discovery off, the peers always count as in range)"},
	{Name: "silence", Default: "2", Help: "with discovery: a peer unheard this many ticks counts as out of range"},
	{Name: "bug", Default: "none", Help: "deliberately broken variant (bugs.go): none, " + BugNames(Bugs, ", ") + " (grantor-late: one tick late)"},
}

// modelTick is the length of one tick.
const modelTick = 100 * time.Millisecond

func init() {
	model.Register(model.Model{
		Name:   "leasing",
		Help:   "leased references: 1 client, 1 server, renew-on-call and single-call leases, discrete time, drift, transient and permanent disconnections; LS-P1 and LS-P5 invariants",
		Params: ModelParams,
		Build: func(p *model.Params) (model.System, error) {
			o := ModelOptions{
				Term: p.IntRange("term", 1, 20), Ticks: p.IntRange("ticks", 1, 50), Drift: p.IntRange("drift", 0, 5),
				Delay: p.IntRange("delay", 1, 10), Uses: p.IntRange("uses", 0, 6), Calls: p.IntRange("calls", 0, 3), Cuts: p.IntRange("cuts", 0, 4),
				Beacon: p.IntRange("beacon", 0, 10), Silence: p.IntRange("silence", 1, 20),
			}
			bug := p.String("bug")
			if p.Err() != nil {
				return nil, p.Err()
			}
			if o.Beacon > 0 && o.Silence <= o.Beacon {
				return nil, fmt.Errorf("parameter silence=%d must exceed beacon=%d", o.Silence, o.Beacon)
			}
			pol, err := modelBug(bug)
			if err != nil {
				return nil, err
			}
			o.Policy = pol
			return ModelSystem(o), nil
		},
	})
}

// ModelOptions configures ModelSystem.
type ModelOptions struct {
	Term, Ticks, Drift, Delay, Uses, Calls, Cuts int
	// Beacon > 0 switches the discovery layer on (beacons every Beacon ticks, a peer
	// unheard for Silence ticks is out of range).
	Beacon, Silence int
	// Policy is the runtime's (the zero Policy is the protocol; see bugs.go).
	Policy ls.Policy
}

// modelBug is the policy of the model's -p bug=NAME: none, or a broken variant of
// bugs.go (grantor-late is one tick late in the model).
func modelBug(name string) (ls.Policy, error) {
	switch name {
	case "none":
		return ls.Policy{}, nil
	case "grantor-late":
		return grantorLate(modelTick), nil
	}
	b, ok := BugNamed(name)
	if !ok {
		return ls.Policy{}, fmt.Errorf("parameter bug=%q: want none or one of %s", name, BugNames(Bugs, ", "))
	}
	return b.Policy, nil
}

// mcUse is the workload: the client sends one message through lease Which (1: the
// renew-on-call lease, 2: the single-call lease).
type mcUse struct{ Which int }

func (mcUse) Kind() string { return "use" }

// mcApp is the model's application: S grants (at start, or when it first discovers C
// with discovery on), C uses.
type mcApp struct {
	Term    time.Duration
	L1, L2  ls.RefID // at C: the two leases
	Granted bool     // at S
}

func (a *mcApp) Start(rt *ls.Runtime) {
	if rt.Self == 0 && rt.Connected(1) {
		a.grant(rt)
	}
}

func (a *mcApp) Connectivity(rt *ls.Runtime, peer sim.NodeID, up bool) {
	if rt.Self == 0 && peer == 1 && up && !a.Granted {
		a.grant(rt)
	}
}

func (a *mcApp) grant(rt *ls.Runtime) {
	a.Granted = true
	l1, err := rt.Lease("obj", a.Term, ls.RenewOnCall{}, 1)
	must(err)
	l2, err := rt.Lease("cb", a.Term, ls.SingleCall{}, 1)
	must(err)
	far, err := rt.Far(1)
	must(err)
	must(rt.Send(far, "take", nil, l1, l2))
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// CloneApp implements ls.AppCloner (the app holds only values).
func (a *mcApp) CloneApp() ls.App { c := *a; return &c }

// AppendState implements sim.StateEncoder (by hand: the reflective encoding cost about
// a tenth of the model check).
func (a *mcApp) AppendState(b []byte) []byte {
	b = binary.AppendVarint(b, int64(a.Term))
	for _, r := range [2]ls.RefID{a.L1, a.L2} {
		b = binary.AppendVarint(b, int64(r.Grantor))
		b = binary.AppendUvarint(b, uint64(r.GBoot))
		b = binary.AppendVarint(b, r.N)
		b = binary.AppendVarint(b, int64(r.Holder))
		b = binary.AppendUvarint(b, uint64(r.HBoot))
	}
	if a.Granted {
		return append(b, 1)
	}
	return append(b, 0)
}

func (a *mcApp) Invoke(rt *ls.Runtime, inv ls.Invocation) {
	if inv.Object == ls.FarObject && inv.Method == "take" && len(inv.Refs) == 2 {
		a.L1, a.L2 = inv.Refs[0], inv.Refs[1]
	}
}
func (a *mcApp) Expired(*ls.Runtime, ls.Expiry)                   {}
func (a *mcApp) Released(*ls.Runtime, ls.Release)                 {}
func (a *mcApp) Resolved(*ls.Runtime, ls.Future, any, []ls.RefID) {}
func (a *mcApp) Ruined(*ls.Runtime, ls.Future, error)             {}
func (a *mcApp) Timer(*ls.Runtime, string)                        {}
func (a *mcApp) Input(rt *ls.Runtime, m sim.Message) {
	if u, ok := m.(mcUse); ok {
		ref := a.L1
		if u.Which == 2 {
			ref = a.L2
		}
		_ = rt.Send(ref, "use", nil) // an ended (or not yet received) lease transmits nothing
	}
}

// ModelGhost is the monitor folded over the observations (leases N=1, N=2 of S's
// first incarnation).
type ModelGhost struct {
	Ended     [3]bool  // server side ended, by lease N
	ClientEnd [3]bool  // client side ended
	Forwards  [3]uint8 // messages processed, by lease N
	// Deadline is each live lease's deadline on S's clock, rebuilt from the grant and
	// the accepted renewals (the max rule), not taken from what the protocol reports
	// (zero before the grant and after the server side ended, so that it never tells
	// apart states the runtime's own state does not).
	Deadline   [3]sim.Time
	LateOrDead bool // LS-P1 broken
	SentLate   bool // LS-1 broken: C sent through a lease at or after its own deadline
	// With discovery on (constant otherwise): C's view of S from its discovery
	// observations, the first message C put through the renew-on-call lease while it
	// counted S out of range (disconnected-active), and whether S took it live (after
	// the flush on reconnection: nothing is transmitted before).
	CDown, CSawDown bool
	BufferedSeq     int64
	FlushedTaken    bool
}

func foldModelGhost(g any, o sim.Observation) any {
	x := g.(ModelGhost)
	switch v := o.Value.(type) {
	case *ls.ObsGrant:
		if v.Lease.N > 0 && v.Lease.N < 3 {
			x.Deadline[v.Lease.N] = o.Local.Add(v.Term)
		}
	case *ls.ObsRenew:
		if n := v.Lease.N; n > 0 && n < 3 && v.Ok && !x.Ended[n] {
			x.Deadline[n] = max(x.Deadline[n], o.Local.Add(v.D))
		}
	case *ls.ObsEnd:
		if v.Lease.N > 0 && v.Lease.N < 3 {
			if v.Side == ls.Server {
				x.Ended[v.Lease.N] = true
				x.Deadline[v.Lease.N] = 0
			} else {
				x.ClientEnd[v.Lease.N] = true
			}
		}
	case *ls.ObsRecv:
		// LS-P1: a message taken live at or after the (rebuilt) deadline, or after the
		// server side ended.
		if n := v.Ref.N; n > 0 && n < 3 && v.Live && (x.Ended[n] || o.Local >= x.Deadline[n]) {
			x.LateOrDead = true
		}
		if v.Ref.N == 1 && v.Live && x.BufferedSeq > 0 && v.Seq == x.BufferedSeq {
			x.FlushedTaken = true
		}
	case *ls.ObsPeer:
		if o.Node == 1 && v.Peer == 0 {
			x.CDown = !v.Up
			x.CSawDown = x.CSawDown || !v.Up
		}
	case *ls.ObsSend:
		if v.Deadline != 0 && v.At >= v.Deadline {
			x.SentLate = true
		}
		if v.Ref.N == 1 && x.CDown && x.BufferedSeq == 0 {
			x.BufferedSeq = v.Seq
		}
	case *ls.ObsForward:
		if n := v.Ref.N; n > 0 && n < 3 {
			if x.Ended[n] || o.Local >= x.Deadline[n] || v.At >= v.Deadline {
				x.LateOrDead = true
			}
			x.Forwards[n]++
		}
	}
	return x
}

// ModelSystem builds the model's actor system.
func ModelSystem(o ModelOptions) *model.Actors {
	// Retransmit only after the longest round trip (no spurious retransmission while
	// the link is up).
	cfg := &ls.Config{Peers: []sim.NodeID{0, 1}, RTO: time.Duration(2*o.Delay+1) * modelTick, Policy: o.Policy,
		Beacon: time.Duration(o.Beacon) * modelTick, Silence: time.Duration(o.Silence) * modelTick}
	app := func() ls.App { return &mcApp{Term: time.Duration(o.Term) * modelTick} }
	var inject []model.Injection
	for k := 1; k <= o.Uses; k++ {
		inject = append(inject, model.Injection{To: 1, Msg: mcUse{Which: 1}, At: k})
	}
	for k := 1; k <= o.Calls; k++ {
		inject = append(inject, model.Injection{To: 1, Msg: mcUse{Which: 2}, At: 1})
	}
	sys := &model.Actors{
		Name: "leasing",
		Nodes: []sim.NodeSpec{
			{Name: "S", New: ls.NewDevice(cfg, app)},
			{Name: "C", New: ls.NewDevice(cfg, app)},
		},
		Inject: inject,
		Cuts:   model.Cuts{Budget: o.Cuts},
		Time:   model.DiscreteTime{Tick: modelTick, MaxTicks: o.Ticks, Drift: []int{0, o.Drift}, MaxDelay: o.Delay},
		Ghost:  model.Ghost{Init: ModelGhost{}, Fold: foldModelGhost},
		Properties: []model.Property[*model.State]{
			model.Always("LS-P1 no delivery after expiry", func(s *model.State) bool { return !model.GhostAs[ModelGhost](s).LateOrDead }),
			model.Always("LS-P5 single-call", func(s *model.State) bool { return model.GhostAs[ModelGhost](s).Forwards[2] <= 1 }),
			// LS-1 at the holder: an expired reference sends nothing, also at the very
			// tick of its deadline (before its own expiry timer has run).
			model.Always("LS-1 no send at or after the holder's deadline", func(s *model.State) bool { return !model.GhostAs[ModelGhost](s).SentLate }),
			model.Sometimes("the lease expires at both sides while the devices are apart", func(s *model.State) bool {
				g := model.GhostAs[ModelGhost](s)
				return g.Ended[1] && g.ClientEnd[1] && s.Cut(0, 1)
			}),
			model.Sometimes("the lease survives a repaired disconnection and serves a use", func(s *model.State) bool {
				g := model.GhostAs[ModelGhost](s)
				return s.Faults().Cuts >= 1 && !s.Cut(0, 1) && !g.Ended[1] && g.Forwards[1] >= 1
			}),
		},
	}
	if o.Beacon > 0 {
		// LS-1 with discovery: the states the default configuration cannot reach.
		sys.Properties = append(sys.Properties,
			model.Sometimes("C detects that S is out of range and later back", func(s *model.State) bool {
				g := model.GhostAs[ModelGhost](s)
				return g.CSawDown && !g.CDown
			}),
			model.Sometimes("a message buffered while disconnected (disconnected-active) is taken after the flush", func(s *model.State) bool {
				return model.GhostAs[ModelGhost](s).FlushedTaken
			}),
		)
	}
	return sys
}
