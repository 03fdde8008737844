package leasing

import (
	"fmt"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Probe is a small application that exercises every lease operation the music player
// does not: a client asks a peer's far object for a lease of a random pattern (basic,
// renew-on-call, single-call, keepalive or faulty) and term, through a future; it
// then pings through the lease, renews a basic lease itself when it runs low (client
// renew), and at the end revokes it (client revoke), expires it (client expire: its
// listeners run here, the grantor's side ends by its own timer) or lets it expire;
// it also tries to renew after revoking or expiring, which must be refused. A
// single-call lease is sometimes pinged twice (the second ping must be dropped,
// LS-P5). The server side answers pings and sometimes renews, revokes or expires the
// lease itself.
//
// A faulty lease runs ProbeFaulty, a custom pattern that panics from the second
// message on: the runtime's containment of user patterns is exercised.
//
// With ProbeConfig.Rare it also takes the paths the default run almost never does: a
// server that revokes or expires a lease outside any call (the holder learns it by a
// notice, not an acknowledgement), a
// callee that declines a probe.open (Fail: the caller's future is ruined with its
// error) or abandons it (it revokes the future's lease instead of answering: the
// future is ruined as revoked), a server that tries to renew a lease it has just
// revoked or expired (a refused renewal at the grantor), and a "revoke-first" lease
// whose custom pattern (ProbeRevokeFirst) revokes on its second message before
// forwarding it (the forward is refused: the message never reaches the service).
//
// A keepalive lease is a quiet one that must stay alive: a basic lease through which
// the client sends nothing but renewal requests, on a fixed schedule (every three
// quarters of the term from when it got the lease, Pings times), never looking at its
// own time left — so a holder timer that runs short is not compensated by earlier
// renewals and shows as a false expiry. After the last renewal the client revokes it
// or abandons it (KindIdle) and lets it expire.
type Probe struct {
	Cfg     *ProbeConfig
	Clients map[RefID]*ProbeClient
	Servers map[RefID]*ProbeServer
	Opening map[int64]ProbeReq // futures of probe.open calls
	// Prodded: the malformed openSession (no callback) went out (once per boot).
	Prodded bool
}

// ProbeConfig configures the probe application.
type ProbeConfig struct {
	Period    time.Duration // how often a client opens a probe lease (0: never)
	PingEvery time.Duration
	TermMin   time.Duration
	TermMax   time.Duration
	MaxPings  int
	Due       time.Duration // due time of probe.open
	// Rare switches on the rarer paths (see Probe).
	Rare bool
}

// Validate reports a malformed configuration.
func (c *ProbeConfig) Validate() error {
	switch {
	case c.Period < 0:
		return fmt.Errorf("leasing: probe: period %v is negative", c.Period)
	case c.Period == 0:
		return nil
	case c.TermMin <= 0 || c.TermMax < c.TermMin:
		return fmt.Errorf("leasing: probe: terms %v..%v: %w (and ordered)", c.TermMin, c.TermMax, ErrTerm)
	case c.Due <= 0:
		return fmt.Errorf("leasing: probe: due %v: %w", c.Due, ErrTerm)
	case c.PingEvery <= 0 || c.MaxPings < 1:
		return fmt.Errorf("leasing: probe: needs a positive ping period and at least one ping")
	}
	return nil
}

// ProbeReq asks for a probe lease.
type ProbeReq struct {
	Pattern string        `json:"pattern"`
	Term    time.Duration `json:"term"`
	Pings   int           `json:"pings"`
}

// ProbeClient is a probe lease this device holds.
type ProbeClient struct {
	Ref     RefID
	Req     ProbeReq
	Sent    int  // pings sent, or renewals requested (keepalive)
	Revoke  bool // revoke at the end (else expire it or let it expire)
	Expire  bool // without Revoke: expire it at the end (client-side LS-2 expire)
	Revoked bool
}

// ProbeServer is a probe lease this device grants.
type ProbeServer struct {
	Term  time.Duration
	Pings int
}

// Probe observation kinds.
const (
	// KindProbeMisuse: the client renewed a lease it had revoked; Rejected must hold.
	KindProbeMisuse = "probe.misuse"
	// KindProbeView: what the holder's API says of a reference right after a ping
	// was sent through it (LS-1: Buffered counts the messages not acknowledged yet).
	KindProbeView = "probe.view"
	// KindProbeReleased: the runtime called the probe's Released for a lease side.
	KindProbeReleased = "probe.released"
	// KindProbeCtl: what a lease's control (LeaseCtl) told the faulty pattern of
	// its lease when the first message came through.
	KindProbeCtl = "probe.ctl"
	// KindProbeMalformed: the probe sent a peer an openSession without callback.
	KindProbeMalformed = "probe.malformed"
)

// ProbeMalformed is a KindProbeMalformed observation.
type ProbeMalformed struct {
	To sim.NodeID `json:"to"`
}

// ProbeCtl is a KindProbeCtl observation.
type ProbeCtl struct {
	Lease   RefID         `json:"lease"`
	Expired bool          `json:"expired"`
	Left    time.Duration `json:"left"`
	Term    time.Duration `json:"term"`
}

// ProbeReleased is a KindProbeReleased observation.
type ProbeReleased struct {
	Lease RefID `json:"lease"`
	Side  Side  `json:"side"`
}

// ProbeView is the holder's view of a reference (KindProbeView).
type ProbeView struct {
	Ref      RefID `json:"ref"`
	Buffered int   `json:"buffered"`
}

// ProbeMisuse records a deliberate misuse and whether the runtime refused it.
type ProbeMisuse struct {
	Ref      RefID  `json:"ref"`
	Op       string `json:"op"`
	Rejected bool   `json:"rejected"`
	Err      string `json:"err,omitempty"`
}

func probePattern(name string) Interceptor {
	switch name {
	case "renew-on-call":
		return RenewOnCall{}
	case "single-call":
		return SingleCall{}
	case "faulty":
		return ProbeFaulty{}
	case "revoke-first":
		return ProbeRevokeFirst{}
	}
	return Basic{} // basic, keepalive
}

// ProbeRevokeFirstName names ProbeRevokeFirst in observations.
const ProbeRevokeFirstName = "probe/revoke-first"

// ProbeRevokeFirst is a custom pattern (LS-3) that renews on call, but on the second
// message revokes the lease before forwarding it: the forward is refused (the lease
// has ended) and the message never reaches the service (LS-P1).
type ProbeRevokeFirst struct{}

// Name implements Interceptor.
func (ProbeRevokeFirst) Name() string { return ProbeRevokeFirstName }

// Receive implements Interceptor.
func (ProbeRevokeFirst) Receive(l *LeaseCtl) {
	if l.Seq() == 2 {
		_ = l.Revoke()
		_ = l.Forward() // refused: the lease has just ended
		return
	}
	RenewOnCall{}.Receive(l)
}

// ProbeFaultyName names ProbeFaulty in observations.
const ProbeFaultyName = "probe/faulty"

// ProbeFaulty is a deliberately faulty custom pattern (LS-3 patterns are user code):
// renew-on-call for the first message of a reference, a panic from the second on. The
// runtime must contain it: the panic is observed as a pattern error and the lease
// expires at both sides, the device staying up.
type ProbeFaulty struct{}

// Name implements Interceptor.
func (ProbeFaulty) Name() string { return ProbeFaultyName }

// Receive implements Interceptor.
func (ProbeFaulty) Receive(l *LeaseCtl) {
	if l.Seq() >= 2 {
		panic("probe: a deliberately faulty pattern")
	}
	// What the lease's control says of it to its pattern (LS-2 leaseTimeLeft,
	// renewalTime, isExpired), recorded for the checks.
	l.rt.Observe(KindProbeCtl, ProbeCtl{Lease: l.Lease(), Expired: l.IsExpired(), Left: l.TimeLeft(), Term: l.RenewalTime()})
	RenewOnCall{}.Receive(l)
}

// Start implements App.
func (p *Probe) Start(rt *Runtime) {
	p.Clients = map[RefID]*ProbeClient{}
	p.Servers = map[RefID]*ProbeServer{}
	p.Opening = map[int64]ProbeReq{}
	p.Prodded = false
	// Misuse on purpose (KindProbeMisuse; the runtime must refuse both): a far
	// reference to this device itself, which is no peer, and — at start, with
	// discovery on, before any beacon was heard — to a peer not discovered yet.
	p.farMisuse(rt, rt.Self, "far reference to itself")
	for _, id := range rt.PeerIDs() {
		if !rt.Connected(id) {
			p.farMisuse(rt, id, "far reference to an undiscovered peer")
			break
		}
	}
	if p.Cfg.Period > 0 {
		rt.SetTimer("probe.tick", time.Duration(rt.Rand()%uint64(p.Cfg.Period))+time.Millisecond)
		rt.SetTimer("probe.ping", p.Cfg.PingEvery)
	}
}

// Connectivity implements App.
func (p *Probe) Connectivity(*Runtime, sim.NodeID, bool) {}

func (p *Probe) tick(rt *Runtime) {
	rt.SetTimer("probe.tick", p.Cfg.Period)
	var up []sim.NodeID
	for _, id := range rt.PeerIDs() {
		if rt.Connected(id) {
			up = append(up, id)
		}
	}
	if len(up) == 0 {
		return
	}
	if !p.Prodded {
		// A hostile request, once per boot: the music player's openSession without
		// the callback it must carry (LS-5); the responder must refuse it.
		p.Prodded = true
		if far, err := rt.Far(up[0]); err == nil && rt.Send(far, "openSession", nil) == nil {
			rt.Observe(KindProbeMalformed, ProbeMalformed{To: up[0]})
		}
	}
	r := rt.Rand()
	if ids := sortedKeys(p.Servers); len(ids) > 0 && (r>>56)&1 == 1 {
		// A server-side renewal outside any call (the max rule, by twice the term):
		// the runtime must tell the holder at once (LS-2: its timer follows the
		// grantor's). Single-call and faulty leases are left alone.
		id := ids[(r>>48)%uint64(len(ids))]
		if ex := rt.Exports[id]; ex != nil && ex.Pattern != nil && (ex.Pattern.Name() == (Basic{}).Name() || ex.Pattern.Name() == (RenewOnCall{}).Name()) {
			switch {
			case p.Cfg.Rare && (r>>40)%8 == 0:
				_ = rt.Revoke(id) // outside a call: the holder is told by a notice
			case p.Cfg.Rare && (r>>40)%8 == 1:
				_ = rt.Expire(id) // likewise, and the listeners run at both sides
			default:
				_ = rt.Renew(id, 2*p.Servers[id].Term)
			}
		}
	}
	peer := up[r%uint64(len(up))]
	patterns := []string{"basic", "renew-on-call", "single-call", "keepalive", "faulty", "revoke-first"}
	if !p.Cfg.Rare {
		patterns = patterns[:5]
	}
	req := ProbeReq{Pattern: patterns[(r>>8)%uint64(len(patterns))]}
	span := uint64(p.Cfg.TermMax-p.Cfg.TermMin) + 1
	req.Term = p.Cfg.TermMin + time.Duration((r>>16)%span)
	req.Pings = 1 + int((r>>40)%uint64(p.Cfg.MaxPings))
	switch req.Pattern {
	case "single-call":
		req.Pings = 1 + int((r>>40)%2) // a second ping through a single-call lease must be dropped
	case "keepalive":
		req.Pings = 1 + int((r>>40)%3) // renewals
	}
	far, err := rt.Far(peer)
	if err != nil {
		return
	}
	f, err := rt.Call(far, "probe.open", req, p.Cfg.Due, "probe.open")
	if err != nil {
		return
	}
	p.Opening[f.ID] = req
}

func (p *Probe) ping(rt *Runtime) {
	rt.SetTimer("probe.ping", p.Cfg.PingEvery)
	for _, id := range sortedKeys(p.Clients) {
		c := p.Clients[id]
		if c.Req.Pattern == "keepalive" {
			continue // quiet: driven by its own timer (keep)
		}
		if c.Req.Pattern == "single-call" && c.Sent == 0 {
			// Both pings back to back: the second must be dropped by the grantor (LS-P5).
			for i := 0; i < c.Req.Pings; i++ {
				_ = rt.Send(id, "ping", i+1)
			}
			rt.Observe(KindProbeView, ProbeView{Ref: id, Buffered: rt.Buffered(id)})
			c.Sent = c.Req.Pings
			continue
		}
		if c.Sent < c.Req.Pings {
			if c.Req.Pattern == "basic" {
				if left, err := rt.TimeLeft(id); err == nil && left < c.Req.Term/2 {
					_ = rt.Renew(id, c.Req.Term) // client-side renewal request
				}
			}
			if rt.Send(id, "ping", c.Sent+1) != nil {
				delete(p.Clients, id)
				continue
			}
			rt.Observe(KindProbeView, ProbeView{Ref: id, Buffered: rt.Buffered(id)})
			c.Sent++
			continue
		}
		delete(p.Clients, id)
		if c.Req.Pattern == "single-call" {
			continue // ends by itself
		}
		p.end(rt, c)
	}
}

// end ends a client's use of its lease: a client revoke, a client expire, or no
// operation (it lets the lease expire).
func (p *Probe) end(rt *Runtime, c *ProbeClient) {
	switch {
	case c.Revoke:
		if rt.Revoke(c.Ref) == nil {
			p.misuse(rt, c, "renew after revoke")
		}
	case c.Expire:
		if rt.Expire(c.Ref) == nil {
			p.misuse(rt, c, "renew after expire")
		}
	default:
		rt.Observe(KindIdle, ObsIdle{Lease: c.Ref}) // let it expire
	}
}

// misuse renews a lease the client has just ended, on purpose: the runtime must
// refuse it.
func (p *Probe) misuse(rt *Runtime, c *ProbeClient, op string) {
	observeMisuse(rt, c.Ref, op, rt.Renew(c.Ref, c.Req.Term))
}

// farMisuse asks for a far reference the runtime must refuse.
func (p *Probe) farMisuse(rt *Runtime, peer sim.NodeID, op string) {
	ref, err := rt.Far(peer)
	observeMisuse(rt, ref, op, err)
}

// observeMisuse records a deliberate misuse and the runtime's answer (KindProbeMisuse).
func observeMisuse(rt *Runtime, ref RefID, op string, err error) {
	m := ProbeMisuse{Ref: ref, Op: op, Rejected: err != nil}
	if err != nil {
		m.Err = err.Error()
	}
	rt.Observe(KindProbeMisuse, m)
}

const keepTimer = "probe.keep/"

// keep is a keepalive client's renewal timer: renew by the term, whatever the time
// left, until the last renewal; then revoke or abandon the lease.
func (p *Probe) keep(rt *Runtime, ref string) {
	for _, id := range sortedKeys(p.Clients) {
		c := p.Clients[id]
		if id.String() != ref {
			continue
		}
		if c.Sent >= c.Req.Pings {
			delete(p.Clients, id)
			p.end(rt, c)
			return
		}
		if rt.Renew(id, c.Req.Term) != nil {
			delete(p.Clients, id) // ended: its release came or comes
			return
		}
		c.Sent++
		rt.SetTimer(keepTimer+ref, c.Req.Term*3/4)
		return
	}
}

// Invoke implements App.
func (p *Probe) Invoke(rt *Runtime, inv Invocation) {
	switch {
	case inv.Object == FarObject && inv.Method == "probe.open":
		req, _ := inv.Args.(ProbeReq)
		if req.Term <= 0 {
			_ = rt.Fail(inv.Reply, "probe: bad term")
			return
		}
		if p.Cfg.Rare {
			switch rt.Rand() % 8 {
			case 0:
				_ = rt.Fail(inv.Reply, "probe: declined") // LS-4: the caller's future is ruined with this error
				return
			case 1:
				_ = rt.Revoke(inv.Reply) // LS-4: abandoned; the caller's future is ruined as revoked
				return
			}
		}
		ref, err := rt.Lease("probe.obj", req.Term, probePattern(req.Pattern), inv.From)
		must(err)
		must(rt.WhenExpired(ref, "probe.server"))
		p.Servers[ref] = &ProbeServer{Term: req.Term}
		if rt.Reply(inv.Reply, "lease", ref) != nil {
			_ = rt.Revoke(ref) // the caller's future is gone: nobody will use the lease
		}
	case inv.Object == "probe.obj" && inv.Method == "ping":
		s := p.Servers[inv.Ref]
		if s == nil {
			return
		}
		s.Pings++
		switch rt.Rand() % 16 {
		case 0:
			_ = rt.Renew(inv.Ref, 2*s.Term) // server-side renew (max rule)
		case 1:
			_ = rt.Revoke(inv.Ref) // server-side revoke: the holder is told, no listeners
			if p.Cfg.Rare {
				observeMisuse(rt, inv.Ref, "server renew after revoke", rt.Renew(inv.Ref, s.Term))
			}
		case 2:
			_ = rt.Expire(inv.Ref) // server-side expire: listeners at both sides
			if p.Cfg.Rare {
				observeMisuse(rt, inv.Ref, "server renew after expire", rt.Renew(inv.Ref, s.Term))
			}
		}
	default:
		panic(fmt.Sprintf("probe: unexpected %s.%s", inv.Object, inv.Method))
	}
}

// Expired implements App.
func (p *Probe) Expired(rt *Runtime, e Expiry) {
	switch e.Tag {
	case "probe.server":
		delete(p.Servers, e.Lease)
	case "probe.client":
		delete(p.Clients, e.Lease)
	}
}

// Released implements App. It records the call (KindProbeReleased): the runtime
// promises it after the side's expiry listeners ran.
func (p *Probe) Released(rt *Runtime, r Release) {
	rt.Observe(KindProbeReleased, ProbeReleased{Lease: r.Lease, Side: r.Side})
	if r.Side == Server {
		delete(p.Servers, r.Lease)
	} else {
		delete(p.Clients, r.Lease)
	}
}

// Resolved implements App.
func (p *Probe) Resolved(rt *Runtime, f Future, _ any, refs []RefID) {
	req, ok := p.Opening[f.ID]
	if !ok {
		return
	}
	delete(p.Opening, f.ID)
	if len(refs) == 0 || refs[0].IsZero() {
		return
	}
	id := refs[0]
	if err := rt.WhenExpired(id, "probe.client"); err != nil {
		return
	}
	r := rt.Rand()
	p.Clients[id] = &ProbeClient{Ref: id, Req: req, Revoke: r%2 == 0, Expire: r%4 == 1}
	if req.Pattern == "keepalive" {
		rt.SetTimer(keepTimer+id.String(), req.Term*3/4)
	}
}

// Ruined implements App.
func (p *Probe) Ruined(rt *Runtime, f Future, _ error) { delete(p.Opening, f.ID) }

// Timer implements App.
func (p *Probe) Timer(rt *Runtime, name string) {
	switch name {
	case "probe.tick":
		p.tick(rt)
	case "probe.ping":
		p.ping(rt)
	default:
		if ref, ok := strings.CutPrefix(name, keepTimer); ok {
			p.keep(rt, ref)
		}
	}
}

// Input implements App.
func (p *Probe) Input(*Runtime, sim.Message) {}

// Leaks lists probe state kept for ended leases (LS-P4).
func (p *Probe) Leaks(rt *Runtime) []string {
	var out []string
	for _, id := range sortedKeys(p.Servers) {
		if !rt.GrantsAtEnd(id) {
			out = append(out, "probe keeps server state of "+id.String())
		}
	}
	for _, id := range sortedKeys(p.Clients) {
		if !rt.HoldsAtEnd(id) {
			out = append(out, "probe keeps client state of "+id.String())
		}
	}
	return out
}
