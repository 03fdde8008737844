package lsscen

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
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
// S grants C a lease of `term` ticks (renew-on-call, or -p first=basic|single-call)
// and a single-call lease, and passes both in one message; the workload makes C send
// `uses` messages through the first lease (the k-th no earlier than tick k) and
// `calls` (default two) through the single-call one, and runs the lease operations of
// -p ops on the first lease (S: srenew, srevoke, sexpire; C: crenew, crevoke,
// cexpire); -p listen registers a whenExpired listener at both sides of it. The
// checker chooses every interleaving, every message delay up to `delay` ticks, C's
// clock running up to `drift` ticks ahead of or behind S's, up to `cuts`
// disconnections (both directions at once; each may be repaired later — transient —
// or never — permanent) and up to `crashes` crashes (discovery on: a device restarts
// with a new incarnation and no lease; -p midsend lets a crash cut a call's sends
// short). Invariants:
//
//	LS-P1  always: S never takes live nor processes a message at or after the lease's
//	       deadline — rebuilt by the ghost from the grant and the accepted renewals,
//	       not the deadline the runtime reports — nor after the lease ended at S
//	LS-P5  always: at most one message is processed through the single-call lease
//	LS-1   always: C sends nothing through a lease at or after its own deadline, also
//	       at the very tick of the deadline, before its expiry timer has run (an
//	       instant continuous-time sweeps practically never hit)
//	LS-2   always: no device keeps a side of a lease (or a tombstone) past its own
//	       deadline on its own clock (both sides' timers fire at the deadline; the
//	       model's timers are urgent); every accepted renewal follows the max rule;
//	       each side ends once; a listener runs only on expiry, after its side ended,
//	       once per registration
//
// plus reachability witnesses (sometimes), each asked only where it can exist: the
// lease expires at both sides while the devices are apart (a permanent disconnection
// detected); the lease survives a repaired disconnection and serves a use (a
// transient one tolerated); with discovery, C detects S out of range and back, and a
// message buffered while disconnected-active is taken after the flush; with ops, the
// holder learns of the grantor's revoke or expire by its notice and listeners run at
// both sides; with crashes, S grants again after a restart.
//
// Model.Portfolio is what `simrun check leasing` runs with no -p: configurations that
// together reach every rule the model can (see modelPortfolio).

// ModelParams are the parameters of the "leasing" model.
var ModelParams = []model.Param{
	{Name: "term", Default: "3", Help: "lease term in ticks"},
	{Name: "ticks", Default: "6", Help: "the clock stops after this many ticks"},
	{Name: "drift", Default: "1", Help: "client clock drift bound in ticks"},
	{Name: "delay", Default: "1", Help: "message delay bound in ticks"},
	{Name: "first", Default: "renew-on-call", Help: "the first lease's pattern: renew-on-call, basic or single-call"},
	{Name: "uses", Default: "2", Help: "messages the client sends through the first lease"},
	{Name: "calls", Default: "2", Help: "messages the client sends through the single-call lease"},
	{Name: "ops", Default: "", Help: "lease operations on the first lease, comma-separated, each from tick 1: srenew, srevoke, sexpire (at S), crenew, crevoke, cexpire (at C)"},
	{Name: "listen", Default: "false", Help: "register a whenExpired listener at both sides of the first lease"},
	{Name: "cuts", Default: "1", Help: "disconnections, each repaired later (transient) or never (permanent)"},
	{Name: "crashes", Default: "0", Help: "crashes (needs beacon > 0: a restarted device is discovered anew); each device may restart"},
	{Name: "midsend", Default: "false", Help: "with crashes: a crash may cut a call's sends short (after j of its k sends)"},
	{Name: "beacon", Default: "0", Help: "discovery beacon period in ticks (0: discovery off, the peers always count as in range)"},
	{Name: "silence", Default: "2", Help: "with discovery: a peer unheard this many ticks counts as out of range"},
	{Name: "bug", Default: "none", Help: "deliberately broken variant (bugs.go): none, " + BugNames(Bugs, ", ") + " (grantor-late: one tick late)"},
}

// modelTick is the length of one tick.
const modelTick = 100 * time.Millisecond

// discoveryParams is the configuration with the discovery layer on (review item I):
// beacons every 2 ticks, silence 3 ticks, a renew-on-call lease of 4 ticks used once,
// no single-call traffic and no drift — the largest such configuration that stays
// small enough for the test suite (calls=1: 1,224,132 states in ~40s; drift=1:
// 2,399,984 in ~70s; both hold, checked by hand).
var discoveryParams = map[string]string{"beacon": "2", "silence": "3", "ticks": "5", "term": "4", "uses": "1", "calls": "0", "drift": "0"}

// modelPortfolio is what `simrun check leasing` runs with no -p: each configuration
// reaches what the others cannot, and together they reach every rule the model can
// (the swarm reaches the rest: the music player, futures, crashes of several devices).
var modelPortfolio = []model.Config{
	{Name: "default", Help: "renew-on-call and single-call leases, drift, one transient or permanent disconnection: LS-P1 at the deadline's very tick, LS-P5, LS-1 at the holder's deadline, expiry at both sides"},
	{Name: "discovery", Help: "discovery on: out of range, disconnected-active buffering, the flush on reconnection",
		Params: discoveryParams},
	{Name: "ops", Help: "a basic lease renewed, revoked and expired at both sides, with listeners: notices, tombstones, listeners on expiry only, renewals at both sides, refused ones",
		Params: map[string]string{"first": "basic", "ops": "srenew,srevoke,cexpire,crenew", "listen": "true", "calls": "0", "uses": "1", "ticks": "5"}},
	{Name: "expire", Help: "the grantor expires (listeners at both sides, the holder told by notice) or the holder revokes (its request after its messages)",
		Params: map[string]string{"first": "basic", "ops": "sexpire,crevoke", "listen": "true", "calls": "0", "uses": "1", "ticks": "5"}},
	{Name: "crash", Help: "discovery on, a crash that may cut a call's sends short: a restarted device is a new incarnation without leases, its peer drops the old one's channels and ignores its late messages",
		Params: map[string]string{"beacon": "2", "silence": "3", "crashes": "1", "midsend": "true", "cuts": "0", "uses": "1", "calls": "0", "drift": "0", "ticks": "5", "term": "4"}},
}

func init() {
	model.Register(model.Model{
		Name:   "leasing",
		Help:   "leased references: 1 client, 1 server, renew-on-call, basic and single-call leases, lease operations at both sides, discrete time, drift, transient and permanent disconnections, crashes; LS-P1, LS-P5, LS-1, LS-2 invariants",
		Params: ModelParams,
		Build: func(p *model.Params) (model.System, error) {
			o, err := modelOptionsFrom(p)
			if err != nil {
				return nil, err
			}
			return ModelSystem(o), nil
		},
		Portfolio: modelPortfolio,
	})
}

// modelOptionsFrom reads the model's parameters.
func modelOptionsFrom(p *model.Params) (ModelOptions, error) {
	o := ModelOptions{
		Term: p.IntRange("term", 1, 20), Ticks: p.IntRange("ticks", 1, 50), Drift: p.IntRange("drift", 0, 5),
		Delay: p.IntRange("delay", 1, 10), Uses: p.IntRange("uses", 0, 6), Calls: p.IntRange("calls", 0, 3), Cuts: p.IntRange("cuts", 0, 4),
		Beacon: p.IntRange("beacon", 0, 10), Silence: p.IntRange("silence", 1, 20),
		First: p.String("first"), Listen: p.Bool("listen"), Crashes: p.IntRange("crashes", 0, 3), MidSend: p.Bool("midsend"),
	}
	for _, op := range p.List("ops") {
		if _, ok := modelOps[op]; !ok {
			return o, fmt.Errorf("parameter ops: unknown operation %q (want srenew, srevoke, sexpire, crenew, crevoke or cexpire)", op)
		}
		o.Ops = append(o.Ops, op)
	}
	bug := p.String("bug")
	if p.Err() != nil {
		return o, p.Err()
	}
	if o.Beacon > 0 && o.Silence <= o.Beacon {
		return o, fmt.Errorf("parameter silence=%d must exceed beacon=%d", o.Silence, o.Beacon)
	}
	if o.Crashes > 0 && o.Beacon == 0 {
		return o, fmt.Errorf("parameter crashes=%d needs beacon > 0 (a restarted device must be discovered anew)", o.Crashes)
	}
	if !slices.Contains([]string{"renew-on-call", "basic", "single-call"}, o.First) {
		return o, fmt.Errorf("parameter first=%q: want renew-on-call, basic or single-call", o.First)
	}
	pol, err := modelBug(bug)
	if err != nil {
		return o, err
	}
	o.Policy = pol
	return o, nil
}

// ModelOptions configures ModelSystem.
type ModelOptions struct {
	Term, Ticks, Drift, Delay, Uses, Calls, Cuts int
	// Beacon > 0 switches the discovery layer on (beacons every Beacon ticks, a peer
	// unheard for Silence ticks is out of range).
	Beacon, Silence int
	// First is the first lease's pattern ("" or "renew-on-call", "basic",
	// "single-call"); Ops are lease operations on it (modelOps), Listen registers
	// listeners at both its sides.
	First  string
	Ops    []string
	Listen bool
	// Crashes is the crash budget (each device may restart); MidSend lets a crash cut
	// a call's sends short.
	Crashes int
	MidSend bool
	// Policy is the runtime's (the zero Policy is the protocol; see bugs.go).
	Policy ls.Policy
}

// firstPattern is the interceptor of the first lease.
func (o ModelOptions) firstPattern() ls.Interceptor {
	switch o.First {
	case "basic":
		return ls.Basic{}
	case "single-call":
		return ls.SingleCall{}
	}
	return ls.RenewOnCall{}
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
// first lease, 2: the single-call lease).
type mcUse struct{ Which int }

func (mcUse) Kind() string { return "use" }

// mcOp is the workload of -p ops: one lease operation on the first lease, at S
// (srenew, srevoke, sexpire) or at C (crenew, crevoke, cexpire).
type mcOp struct{ Op string }

func (mcOp) Kind() string { return "op" }

// modelOps are the operations -p ops takes, and the node each runs at.
var modelOps = map[string]sim.NodeID{"srenew": 0, "srevoke": 0, "sexpire": 0, "crenew": 1, "crevoke": 1, "cexpire": 1}

// mcConfig is the model application's configuration (shared, not state).
type mcConfig struct {
	Term time.Duration
	// First is the first lease's pattern; Listen registers a whenExpired listener at
	// both sides of it (S when it grants, C when it receives it).
	First  ls.Interceptor
	Listen bool
}

// mcApp is the model's application: S grants (at start, or when it first discovers C
// with discovery on), C uses; either side runs the lease operations of -p ops.
type mcApp struct {
	cfg     *mcConfig
	L1, L2  ls.RefID // at C: the two leases
	S1      ls.RefID // at S: the first lease
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
	l1, err := rt.Lease("obj", a.cfg.Term, a.cfg.First, 1)
	must(err)
	a.S1 = l1
	if a.cfg.Listen {
		must(rt.WhenExpired(l1, "s"))
	}
	l2, err := rt.Lease("cb", a.cfg.Term, ls.SingleCall{}, 1)
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
	b = binary.AppendVarint(b, int64(a.cfg.Term))
	for _, r := range [3]ls.RefID{a.L1, a.L2, a.S1} {
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
		if a.cfg.Listen && !a.L1.IsZero() {
			_ = rt.WhenExpired(a.L1, "c")
		}
	}
}
func (a *mcApp) Expired(*ls.Runtime, ls.Expiry)                   {}
func (a *mcApp) Released(*ls.Runtime, ls.Release)                 {}
func (a *mcApp) Resolved(*ls.Runtime, ls.Future, any, []ls.RefID) {}
func (a *mcApp) Ruined(*ls.Runtime, ls.Future, error)             {}
func (a *mcApp) Timer(*ls.Runtime, string)                        {}
func (a *mcApp) Input(rt *ls.Runtime, m sim.Message) {
	switch m := m.(type) {
	case mcUse:
		ref := a.L1
		if m.Which == 2 {
			ref = a.L2
		}
		_ = rt.Send(ref, "use", nil) // an ended (or not yet received) lease transmits nothing
	case mcOp:
		// Errors are the runtime refusing an ended lease: nothing to do.
		switch m.Op {
		case "srenew":
			_ = rt.Renew(a.S1, a.cfg.Term)
		case "srevoke":
			_ = rt.Revoke(a.S1)
		case "sexpire":
			_ = rt.Expire(a.S1)
		case "crenew":
			_ = rt.Renew(a.L1, a.cfg.Term)
		case "crevoke":
			_ = rt.Revoke(a.L1)
		case "cexpire":
			_ = rt.Expire(a.L1)
		}
	}
}

// ModelGhost is the monitor folded over the observations (leases N=1, N=2 of S's
// first incarnation; a lease of a later incarnation of S is not followed).
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
	// Broken is the first LS-2/LS-P2 rule seen broken ("" if none): a side that ends
	// twice, a renewal off the max rule, a listener that runs on revoke, more often
	// than registered, or before its side ended. Set only on a violation, so it never
	// splits a correct run's states.
	Broken string
	// With -p listen, per lease and side (0 server, 1 client): how the side ended,
	// listeners registered and run (constant otherwise).
	How         [3][2]ls.End
	Listens     [3][2]uint8
	Ran         [3][2]uint8
	Revoked     bool // the server side of lease 1 ended by a revoke
	ClientHeard bool // the client side of lease 1 ended by the grantor's notice
	// With discovery on (constant otherwise): C's view of S from its discovery
	// observations, the first message C put through the first lease while it
	// counted S out of range (disconnected-active), and whether S took it live (after
	// the flush on reconnection: nothing is transmitted before).
	CDown, CSawDown bool
	BufferedSeq     int64
	FlushedTaken    bool
	// With crashes (constant otherwise): whether S granted again after a restart.
	Regranted bool
}

// ghostLease is the ghost's index of a lease (1 or 2), 0 for one it does not follow.
func ghostLease(r ls.RefID) int {
	if r.Grantor != 0 || r.GBoot != 1 || r.N < 1 || r.N > 2 {
		return 0
	}
	return int(r.N)
}

func sideIdxOf(s ls.Side) int {
	if s == ls.Client {
		return 1
	}
	return 0
}

// foldGhost returns the ghost's fold. What only some configurations need (the ends and
// listeners of -p listen/ops, the second incarnation of crashes) is followed only
// there, so that it never splits the states of the others.
func foldGhost(o ModelOptions) func(g any, ob sim.Observation) any {
	ends := o.Listen || len(o.Ops) > 0
	crashes := o.Crashes > 0
	return func(g any, ob sim.Observation) any { return foldModelGhost(g.(ModelGhost), ob, ends, crashes) }
}

func foldModelGhost(x ModelGhost, o sim.Observation, ends, crashes bool) ModelGhost {
	broken := func(why string) {
		if x.Broken == "" {
			x.Broken = why
		}
	}
	switch v := o.Value.(type) {
	case *ls.ObsGrant:
		if n := ghostLease(v.Lease); n > 0 {
			x.Deadline[n] = o.Local.Add(v.Term)
		}
		if crashes && v.Lease.Grantor == 0 && v.Lease.GBoot > 1 {
			x.Regranted = true
		}
	case *ls.ObsRenew:
		if v.Ok && v.After != max(v.Before, v.At.Add(v.D)) {
			broken("LS-2: a renewal off the max rule")
		}
		if n := ghostLease(v.Lease); n > 0 && v.Ok && !x.Ended[n] {
			x.Deadline[n] = max(x.Deadline[n], o.Local.Add(v.D))
		}
	case *ls.ObsEnd:
		if n := ghostLease(v.Lease); n > 0 {
			k := sideIdxOf(v.Side)
			if (k == 0 && x.Ended[n]) || (k == 1 && x.ClientEnd[n]) {
				broken("LS-P2: a side ended twice")
			}
			if k == 0 {
				x.Ended[n] = true
				x.Deadline[n] = 0
			} else {
				x.ClientEnd[n] = true
			}
			if ends {
				x.How[n][k] = v.How
				x.Revoked = x.Revoked || (n == 1 && k == 0 && v.How == ls.Revoked)
				x.ClientHeard = x.ClientHeard || (n == 1 && k == 1 && v.Cause == "notice")
			}
		}
	case *ls.ObsListener:
		if n := ghostLease(v.Lease); ends && n > 0 {
			k := sideIdxOf(v.Side)
			if o.Kind == ls.KindListen {
				x.Listens[n][k]++
				break
			}
			x.Ran[n][k]++
			ended := (k == 0 && x.Ended[n]) || (k == 1 && x.ClientEnd[n])
			switch {
			case !ended:
				broken("LS-2: a listener ran before its side ended")
			case x.How[n][k] != ls.Expired:
				broken("LS-2: a listener ran on a revoked side")
			case x.Ran[n][k] > x.Listens[n][k]:
				broken("LS-2: a listener ran more often than registered")
			}
		}
	case *ls.ObsRecv:
		// LS-P1: a message taken live at or after the (rebuilt) deadline, or after the
		// server side ended.
		n := ghostLease(v.Ref)
		if n > 0 && v.Live && (x.Ended[n] || o.Local >= x.Deadline[n]) {
			x.LateOrDead = true
		}
		if n == 1 && v.Live && x.BufferedSeq > 0 && v.Seq == x.BufferedSeq {
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
		if ghostLease(v.Ref) == 1 && x.CDown && x.BufferedSeq == 0 {
			x.BufferedSeq = v.Seq
		}
	case *ls.ObsForward:
		if n := ghostLease(v.Ref); n > 0 {
			if x.Ended[n] || o.Local >= x.Deadline[n] || v.At >= v.Deadline {
				x.LateOrDead = true
			}
			x.Forwards[n]++
		}
	}
	return x
}

// outlived reports whether some up device keeps a side of a lease, or a tombstone,
// past its own deadline on its own clock (LS-2: both timers fire at the deadline, and
// a timer is urgent in the model: a device's clock never passes a due timer), and
// whether any such side exists at all (relevance).
func outlived(s *model.State) (late, any bool) {
	for n := range s.NumNodes() {
		d, ok := s.Node(sim.NodeID(n)).(*ls.Device)
		if !ok || d == nil {
			continue
		}
		now := s.Local(sim.NodeID(n))
		for _, ex := range d.RT.Exports {
			if ex.Pattern != nil {
				any = true
				late = late || now > ex.Deadline
			}
		}
		for id, im := range d.RT.Imports {
			if !id.Far() {
				any = true
				late = late || now > im.Deadline
			}
		}
		for _, tb := range d.RT.Tombs {
			any = true
			late = late || now > tb.Deadline
		}
	}
	return late, any
}

// holds reports whether C holds (or held) a lease of S: the states LS-1 is about.
func holds(s *model.State) bool {
	g := model.GhostAs[ModelGhost](s)
	if g.ClientEnd[1] || g.ClientEnd[2] {
		return true
	}
	d, ok := s.Node(1).(*ls.Device)
	if !ok || d == nil {
		return false
	}
	for id := range d.RT.Imports {
		if !id.Far() {
			return true
		}
	}
	return false
}

// ModelSystem builds the model's actor system.
func ModelSystem(o ModelOptions) *model.Actors {
	// Retransmit only after the longest round trip (no spurious retransmission while
	// the link is up).
	cfg := &ls.Config{Peers: []sim.NodeID{0, 1}, RTO: time.Duration(2*o.Delay+1) * modelTick, Policy: o.Policy,
		Beacon: time.Duration(o.Beacon) * modelTick, Silence: time.Duration(o.Silence) * modelTick}
	mc := &mcConfig{Term: time.Duration(o.Term) * modelTick, First: o.firstPattern(), Listen: o.Listen}
	app := func() ls.App { return &mcApp{cfg: mc} }
	var inject []model.Injection
	for k := 1; k <= o.Uses; k++ {
		inject = append(inject, model.Injection{To: 1, Msg: mcUse{Which: 1}, At: k})
	}
	for k := 1; k <= o.Calls; k++ {
		inject = append(inject, model.Injection{To: 1, Msg: mcUse{Which: 2}, At: 1})
	}
	for _, op := range o.Ops {
		inject = append(inject, model.Injection{To: modelOps[op], Msg: mcOp{Op: op}, At: 1})
	}
	g := func(s *model.State) ModelGhost { return model.GhostAs[ModelGhost](s) }
	sys := &model.Actors{
		Name: "leasing",
		Nodes: []sim.NodeSpec{
			{Name: "S", New: ls.NewDevice(cfg, app)},
			{Name: "C", New: ls.NewDevice(cfg, app)},
		},
		Inject:  inject,
		Cuts:    model.Cuts{Budget: o.Cuts},
		Crashes: model.Crashes{Budget: o.Crashes, MidSend: o.MidSend},
		Time:    model.DiscreteTime{Tick: modelTick, MaxTicks: o.Ticks, Drift: []int{0, o.Drift}, MaxDelay: o.Delay},
		Ghost:   model.Ghost{Init: ModelGhost{}, Fold: foldGhost(o)},
		Properties: []model.Property[*model.State]{
			model.Always("LS-P1 no delivery after expiry", func(s *model.State) bool { return !g(s).LateOrDead }).
				When(func(s *model.State) bool {
					x := g(s)
					return x.Forwards[1]+x.Forwards[2] > 0 || x.Ended[1] || x.Ended[2]
				}),
			// LS-1 at the holder: an expired reference sends nothing, also at the very
			// tick of its deadline (before its own expiry timer has run).
			model.Always("LS-1 no send at or after the holder's deadline", func(s *model.State) bool { return !g(s).SentLate }).
				When(holds),
			model.Always("LS-2 no side outlives its deadline", func(s *model.State) bool { late, _ := outlived(s); return !late }).
				When(func(s *model.State) bool { _, any := outlived(s); return any }),
			model.Always("LS-2 renewals, ends and listeners", func(s *model.State) bool { return g(s).Broken == "" }).
				When(func(s *model.State) bool {
					x := g(s)
					return x.Ended[1] || x.Ended[2] || x.ClientEnd[1] || x.ClientEnd[2]
				}),
		},
	}
	if o.Calls > 0 || o.First == "single-call" {
		// Before the other invariants, as it always was (a counterexample names the
		// first property it breaks).
		p5 := model.Always("LS-P5 single-call", func(s *model.State) bool {
			return g(s).Forwards[2] <= 1 && (o.First != "single-call" || g(s).Forwards[1] <= 1)
		}).
			When(func(s *model.State) bool {
				return g(s).Forwards[2] >= 1 || (o.First == "single-call" && g(s).Forwards[1] >= 1)
			})
		sys.Properties = slices.Insert(sys.Properties, 1, p5)
	}
	if o.Cuts > 0 {
		sys.Properties = append(sys.Properties,
			model.Sometimes("the lease expires at both sides while the devices are apart", func(s *model.State) bool {
				x := g(s)
				return x.Ended[1] && x.ClientEnd[1] && s.Cut(0, 1)
			}),
			model.Sometimes("the lease survives a repaired disconnection and serves a use", func(s *model.State) bool {
				x := g(s)
				return s.Faults().Cuts >= 1 && !s.Cut(0, 1) && !x.Ended[1] && x.Forwards[1] >= 1
			}),
		)
	}
	if o.Beacon > 0 && o.Crashes == 0 {
		// LS-1 with discovery: the states the default configuration cannot reach.
		sys.Properties = append(sys.Properties,
			model.Sometimes("C detects that S is out of range and later back", func(s *model.State) bool {
				x := g(s)
				return x.CSawDown && !x.CDown
			}),
		)
		if o.Uses > 0 {
			sys.Properties = append(sys.Properties,
				model.Sometimes("a message buffered while disconnected (disconnected-active) is taken after the flush", func(s *model.State) bool {
					return g(s).FlushedTaken
				}))
		}
	}
	if slices.ContainsFunc(o.Ops, func(op string) bool { return op == "srevoke" || op == "sexpire" }) {
		sys.Properties = append(sys.Properties,
			model.Sometimes("the holder learns of the grantor's revoke or expire by its notice", func(s *model.State) bool { return g(s).ClientHeard }))
	}
	if o.Listen && slices.ContainsFunc(o.Ops, func(op string) bool { return strings.HasSuffix(op, "expire") }) {
		sys.Properties = append(sys.Properties,
			model.Sometimes("a listener runs at both sides", func(s *model.State) bool { x := g(s); return x.Ran[1][0] > 0 && x.Ran[1][1] > 0 }))
	}
	if o.Crashes > 0 {
		sys.Properties = append(sys.Properties,
			model.Sometimes("S grants again after a restart", func(s *model.State) bool { return g(s).Regranted }))
	}
	return sys
}
