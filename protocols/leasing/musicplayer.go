package leasing

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// The mobile music player of §2.1 and §4 (LS-5). When two players come in range, each
// asks the other to open a session (openSession, with a callback passed by a
// single-call lease); the responder exports a session object under the custom pattern
// "renew-on-call, revoked by endExchange"; the initiator uploads its library song by
// song, each upload a call with a future due when the session's lease runs out
// (@Due(leaseTimeLeft(session))), and ends with endExchange, after which the responder
// computes the match ratio and tells its user when it exceeds a threshold. Both sides
// register expiry listeners: the responder drops the partially uploaded library, the
// initiator stops the exchange.

// Song is one library entry (the paper's artist and title, as a number).
type Song int32

// PlayerConfig configures every music player of a system.
type PlayerConfig struct {
	// Libraries holds each device's library, by NodeID.
	Libraries [][]Song
	// Term is the session's lease (10 minutes in the paper).
	Term time.Duration
	// CallbackTerm is the session callback's single-call lease (10 minutes).
	CallbackTerm time.Duration
	// MinLeft: an openSession whose callback has less time left than this is refused
	// (the reply could not arrive in time; the session would only be leaked until it
	// expires).
	MinLeft time.Duration
	// Threshold is the match ratio from which the user is notified.
	Threshold float64
	// Again: 0 exchanges once per peer; otherwise a completed exchange is repeated
	// after this long, while in range.
	Again time.Duration
	// Retry is the pause before a failed exchange is retried while in range.
	Retry time.Duration
	// Pattern selects the session's pattern: "" or "paper" for EndExchangeLease,
	// "panic" for a deliberately broken custom pattern (a bad-input demonstration).
	Pattern string
	// Hooks are the player's decision points (LS-5), for tests that plant a broken
	// rule; the zero value is the player of §2.1 and §4.
	Hooks PlayerHooks
}

// PlayerHooks names the music player's decision points (LS-5) as hooks, like Policy
// does the runtime's: nil is the player's own rule, stated with each field.
type PlayerHooks struct {
	// Callback says whether openSession passes the initiator's callback (true).
	Callback func() bool
	// Refuses says whether the responder refuses an openSession whose callback has
	// left time left (left < minLeft).
	Refuses func(left, minLeft time.Duration) bool
	// Returns says whether the responder returns the session it opened through the
	// callback (true).
	Returns func() bool
	// Due is an upload's due time given the session's time left (left:
	// @Due(leaseTimeLeft(session))).
	Due func(left time.Duration) time.Duration
	// Ends says whether the initiator, every song acknowledged, sends endExchange
	// (true).
	Ends func() bool
	// Notifies says whether the responder notifies its user of a match ratio
	// (ratio >= threshold).
	Notifies func(ratio, threshold float64) bool
	// CleansUp says whether the responder drops the partial library when the
	// session expires (true).
	CleansUp func() bool
	// Stops says whether the initiator stops an exchange for the reason why (true).
	Stops func(why string) bool
}

// Validate reports a malformed configuration.
func (c *PlayerConfig) Validate() error {
	switch {
	case c.Term <= 0:
		return fmt.Errorf("leasing: music player: session term %v: %w", c.Term, ErrTerm)
	case c.CallbackTerm <= 0:
		return fmt.Errorf("leasing: music player: callback term %v: %w", c.CallbackTerm, ErrTerm)
	case c.MinLeft < 0 || c.Again < 0 || c.Retry < 0:
		return fmt.Errorf("leasing: music player: negative duration")
	case c.Pattern != "" && c.Pattern != "paper" && c.Pattern != "panic":
		return fmt.Errorf("leasing: music player: unknown session pattern %q (paper or panic)", c.Pattern)
	}
	return nil
}

// EndExchangeLease is the music player's custom pattern (§5.1, "Other Variations"):
// renew-on-call, revoked by the RevokeOn message. It is written only against the
// interceptor hook, as user code would be. Choice: the revoking message is forwarded
// before the lease is revoked (the paper's excerpt omits the forward; without it
// endExchange would never reach the session and the match ratio never be computed).
type EndExchangeLease struct{ RevokeOn string }

// Name implements Interceptor.
func (p EndExchangeLease) Name() string {
	if p.RevokeOn == "endExchange" {
		return "renew-on-call/revoke-on-endExchange" // the player's: no string built per call
	}
	return "renew-on-call/revoke-on-" + p.RevokeOn
}

// Receive implements Interceptor.
func (p EndExchangeLease) Receive(l *LeaseCtl) {
	if l.IsExpired() {
		return
	}
	if l.Method() == p.RevokeOn { // lease.isRevoke(msg)
		l.rt.cover(ruleCustomRevoke)
		_ = l.Forward()
		_ = l.Revoke()
		return
	}
	l.rt.cover(ruleCustomRenew)
	_ = l.Renew(l.RenewalTime())
	_ = l.Forward()
}

// PanickingPattern is a custom pattern with a bug: it panics on its first message.
// It exists to show that a broken user pattern is reported, not fatal.
type PanickingPattern struct{}

// Name implements Interceptor.
func (PanickingPattern) Name() string { return "panicking-custom" }

// Receive implements Interceptor.
func (PanickingPattern) Receive(l *LeaseCtl) {
	panic(fmt.Sprintf("custom pattern bug: cannot handle %s", l.Method()))
}

// Player is the music player application of one device.
type Player struct {
	Cfg *PlayerConfig
	Lib []Song
	// Out: the exchange this device runs towards each peer (it uploads its library).
	Out map[sim.NodeID]*OutExchange
	// In: the sessions this device serves (peers upload to it), by session lease.
	In map[RefID]*InExchange
	// Completed counts exchanges whose endExchange was sent, per peer.
	Completed map[sim.NodeID]int
}

// OutExchange is the initiator's side of one library exchange.
type OutExchange struct {
	Peer     sim.NodeID
	Callback RefID // A's callback, exported by single-call lease to the peer
	Session  RefID // the peer's session (zero until received)
	Next     int   // next song to upload
	Future   int64 // the outstanding upload's future
}

// InExchange is the responder's side: the partially uploaded library.
type InExchange struct {
	From    sim.NodeID
	Session RefID
	Lib     []Song
}

// Observation kinds of the music player.
const (
	KindMPOpen     = "mp.open"     // MPEvent: initiator asked a peer for a session
	KindMPSession  = "mp.session"  // MPEvent: responder opened a session
	KindMPRefuse   = "mp.refuse"   // MPEvent: responder refused (callback dead or nearly, or none)
	KindMPSent     = "mp.sent"     // MPEvent: initiator sent endExchange (all songs acked)
	KindMPDone     = "mp.done"     // MPDone: responder got endExchange: exchange complete
	KindMPMatch    = "mp.match"    // MPDone: the user is notified of a similar taste
	KindMPStopped  = "mp.stopped"  // MPEvent: initiator stopped an exchange (Why)
	KindMPCleanup  = "mp.cleanup"  // MPEvent: responder dropped a partial library on expiry
	KindMPTimedOut = "mp.timedout" // MPEvent: a session expired at the initiator
)

// WhyNoCallback is the Why of a refusal of an openSession that carried no callback.
const WhyNoCallback = "no callback"

// MPEvent is a music-player observation. From is the initiator, To the responder.
type MPEvent struct {
	From    sim.NodeID `json:"from"`
	To      sim.NodeID `json:"to"`
	Session RefID      `json:"session,omitzero"`
	Songs   int        `json:"songs,omitempty"`
	Why     string     `json:"why,omitempty"`
}

// MPDone records a completed exchange at the responder.
type MPDone struct {
	From  sim.NodeID `json:"from"`
	To    sim.NodeID `json:"to"`
	Songs int        `json:"songs"`
	Ratio float64    `json:"ratio"`
}

// Start implements App.
func (p *Player) Start(rt *Runtime) {
	p.Out = map[sim.NodeID]*OutExchange{}
	p.In = map[RefID]*InExchange{}
	p.Completed = map[sim.NodeID]int{}
	p.Lib = nil
	if int(rt.Self) < len(p.Cfg.Libraries) {
		p.Lib = slices.Clone(p.Cfg.Libraries[rt.Self])
	}
}

// Connectivity implements App: a peer in range gets an exchange.
func (p *Player) Connectivity(rt *Runtime, peer sim.NodeID, up bool) {
	if up {
		p.maybeStart(rt, peer)
	}
}

func (p *Player) maybeStart(rt *Runtime, peer sim.NodeID) {
	if _, busy := p.Out[peer]; busy || !rt.Connected(peer) {
		return
	}
	if p.Completed[peer] > 0 && p.Cfg.Again == 0 {
		return
	}
	far, err := rt.Far(peer)
	if err != nil {
		return
	}
	// The callback is passed by a single-call lease (§4.3): one receive, or expiry.
	cb, err := rt.Lease("mp.callback", p.Cfg.CallbackTerm, SingleCall{}, peer)
	if err != nil {
		panic(err) // the configuration was validated: a bug
	}
	must(rt.WhenExpired(cb, "mp.callback"))
	pass := []RefID{cb}
	if h := p.Cfg.Hooks.Callback; h != nil && !h() {
		pass = nil
	}
	if err := rt.Send(far, "openSession", nil, pass...); err != nil {
		_ = rt.Revoke(cb)
		return
	}
	rt.cover(ruleMPOpen)
	p.Out[peer] = &OutExchange{Peer: peer, Callback: cb}
	rt.Observe(KindMPOpen, MPEvent{From: rt.Self, To: peer})
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func (p *Player) sessionPattern() Interceptor {
	if p.Cfg.Pattern == "panic" {
		return PanickingPattern{}
	}
	return EndExchangeLease{RevokeOn: "endExchange"}
}

// Invoke implements App.
func (p *Player) Invoke(rt *Runtime, inv Invocation) {
	switch {
	case inv.Object == FarObject && inv.Method == "openSession":
		// Responder: export a session for the peer and return it via the callback.
		if len(inv.Refs) == 0 {
			rt.cover(ruleMPRefuse)
			rt.Observe(KindMPRefuse, MPEvent{From: inv.From, To: rt.Self, Why: WhyNoCallback})
			return
		}
		cb := inv.Refs[0] // zero when its lease ended on the way
		left, err := rt.TimeLeft(cb)
		if cb.IsZero() || err != nil || p.refuses(left) {
			rt.cover(ruleMPRefuse)
			rt.Observe(KindMPRefuse, MPEvent{From: inv.From, To: rt.Self, Why: "callback expired or nearly"})
			return
		}
		sess, err := rt.Lease("mp.session", p.Cfg.Term, p.sessionPattern(), inv.From)
		must(err)
		must(rt.WhenExpired(sess, "mp.session"))
		rt.cover(ruleMPSession)
		p.In[sess] = &InExchange{From: inv.From, Session: sess}
		if h := p.Cfg.Hooks.Returns; h == nil || h() {
			must(rt.Send(cb, "receive", nil, sess))
		}
		rt.Observe(KindMPSession, MPEvent{From: inv.From, To: rt.Self, Session: sess})
	case inv.Object == "mp.callback" && inv.Method == "receive":
		o := p.outByCallback(inv.Ref)
		if o == nil {
			return
		}
		if len(inv.Refs) == 0 || inv.Refs[0].IsZero() {
			rt.cover(ruleMPSessionLost)
			p.stop(rt, o, "session reference arrived dead")
			return
		}
		o.Session = inv.Refs[0]
		must(rt.WhenExpired(o.Session, "mp.session-client"))
		p.sendNext(rt, o)
	case inv.Object == "mp.session" && inv.Method == "uploadSong":
		in := p.In[inv.Ref]
		if in == nil {
			return
		}
		s, _ := inv.Args.(Song)
		in.Lib = append(in.Lib, s)
		_ = rt.Reply(inv.Reply, "ok") // ackCallback<-ok()
	case inv.Object == "mp.session" && inv.Method == "endExchange":
		in := p.In[inv.Ref]
		if in == nil {
			return
		}
		ratio := matchRatio(p.Lib, in.Lib)
		done := MPDone{From: in.From, To: rt.Self, Songs: len(in.Lib), Ratio: ratio}
		rt.Observe(KindMPDone, done)
		if p.notifies(ratio) {
			rt.cover(ruleMPMatch)
			rt.Observe(KindMPMatch, done) // notify the user of a similar taste nearby
		} else {
			rt.cover(ruleMPNoMatch)
		}
		delete(p.In, inv.Ref)
	default:
		panic(fmt.Sprintf("music player: unexpected %s.%s", inv.Object, inv.Method))
	}
}

// sendNext uploads the next song, due when the session's lease runs out, or ends the
// exchange.
func (p *Player) sendNext(rt *Runtime, o *OutExchange) {
	if o.Next >= len(p.Lib) {
		if h := p.Cfg.Hooks.Ends; h != nil && !h() {
			return // every song acknowledged: the exchange waits for nothing more
		}
		if err := rt.Send(o.Session, "endExchange", nil); err != nil {
			p.stop(rt, o, "session ended before endExchange")
			return
		}
		rt.cover(ruleMPEnd)
		delete(p.Out, o.Peer)
		p.Completed[o.Peer]++
		rt.Observe(KindMPSent, MPEvent{From: rt.Self, To: o.Peer, Session: o.Session, Songs: len(p.Lib)})
		if p.Cfg.Again > 0 {
			rt.SetTimer("mp.again/"+strconv.Itoa(int(o.Peer)), p.Cfg.Again)
		}
		return
	}
	left, err := rt.TimeLeft(o.Session)
	if err != nil || left <= 0 {
		p.stop(rt, o, "session expired")
		return
	}
	due := left
	if h := p.Cfg.Hooks.Due; h != nil {
		due = h(left)
	}
	f, err := rt.Call(o.Session, "uploadSong", p.Lib[o.Next], due, "mp.upload") // @Due(leaseTimeLeft(session))
	if err != nil {
		p.stop(rt, o, "session expired")
		return
	}
	rt.cover(ruleMPUpload)
	o.Future = f.ID
}

func (p *Player) stop(rt *Runtime, o *OutExchange, why string) {
	if h := p.Cfg.Hooks.Stops; h != nil && !h(why) {
		return
	}
	rt.cover(ruleMPStop)
	delete(p.Out, o.Peer)
	rt.Observe(KindMPStopped, MPEvent{From: rt.Self, To: o.Peer, Session: o.Session, Songs: o.Next, Why: why})
	if p.Cfg.Retry > 0 {
		rt.SetTimer("mp.retry/"+strconv.Itoa(int(o.Peer)), p.Cfg.Retry)
	}
}

func (p *Player) outByCallback(cb RefID) *OutExchange {
	return p.outBy(func(o *OutExchange) bool { return o.Callback == cb })
}

// outBy returns the exchange that matches, of the lowest peer if several do (the
// order never depends on the map's).
func (p *Player) outBy(match func(*OutExchange) bool) *OutExchange {
	var best *OutExchange
	bestPeer := sim.NodeID(0)
	for peer, o := range p.Out {
		if (best == nil || peer < bestPeer) && match(o) {
			best, bestPeer = o, peer
		}
	}
	return best
}

func sortedPeers[V any](m map[sim.NodeID]V) []sim.NodeID { return slices.Sorted(maps.Keys(m)) }

// Resolved implements App: an upload was acknowledged, send the next song.
func (p *Player) Resolved(rt *Runtime, f Future, _ any, _ []RefID) {
	if f.Tag != "mp.upload" {
		return
	}
	if o := p.outBy(func(o *OutExchange) bool { return o.Future == f.ID }); o != nil {
		o.Next++
		p.sendNext(rt, o)
	}
}

// Ruined implements App: the upload's due time passed: stop the exchange (§4.4).
func (p *Player) Ruined(rt *Runtime, f Future, err error) {
	if f.Tag != "mp.upload" {
		return
	}
	if o := p.outBy(func(o *OutExchange) bool { return o.Future == f.ID }); o != nil {
		p.stop(rt, o, "stopping exchange: "+err.Error())
	}
}

// Expired implements App: the when:expired: listeners of §4.5.
func (p *Player) Expired(rt *Runtime, e Expiry) {
	switch e.Tag {
	case "mp.callback": // no session came back in time: nothing was started
		if o := p.outByCallback(e.Lease); o != nil && o.Session.IsZero() {
			p.stop(rt, o, "no session before the callback expired")
		}
	case "mp.session": // responder: clean the partially received music library
		if in := p.In[e.Lease]; in != nil && (p.Cfg.Hooks.CleansUp == nil || p.Cfg.Hooks.CleansUp()) {
			rt.cover(ruleMPCleanup)
			rt.Observe(KindMPCleanup, MPEvent{From: in.From, To: rt.Self, Session: e.Lease, Songs: len(in.Lib)})
			delete(p.In, e.Lease)
		}
	case "mp.session-client": // initiator: "session timed out."
		rt.Observe(KindMPTimedOut, MPEvent{From: rt.Self, To: e.Lease.Grantor, Session: e.Lease})
		if o := p.outBy(func(o *OutExchange) bool { return o.Session == e.Lease }); o != nil {
			p.stop(rt, o, "session timed out")
		}
	}
}

// Released implements App: drop whatever only this lease kept alive.
func (p *Player) Released(rt *Runtime, r Release) {
	switch r.Object {
	case "mp.session":
		if r.Side == Server {
			delete(p.In, r.Lease)
		} else if o := p.outBy(func(o *OutExchange) bool { return o.Session == r.Lease }); o != nil {
			p.stop(rt, o, "session "+r.How.String())
		}
	case "mp.callback":
		// Single-call: revoked after receive (the exchange goes on), or expired (the
		// listener stopped it).
	}
}

// Timer implements App.
func (p *Player) Timer(rt *Runtime, name string) {
	kind, peer, ok := strings.Cut(name, "/")
	if !ok {
		return
	}
	n, err := strconv.Atoi(peer)
	if err != nil {
		return
	}
	if kind == "mp.again" || kind == "mp.retry" {
		p.maybeStart(rt, sim.NodeID(n))
	}
}

// Input implements App (the music player takes no workload input).
func (p *Player) Input(*Runtime, sim.Message) {}

// Leaks lists application state kept for leases that ended (LS-P4), given the
// runtime: a partial library whose session is no longer granted, an exchange whose
// session is no longer held.
func (p *Player) Leaks(rt *Runtime) []string {
	var out []string
	for _, id := range sortedKeys(p.In) {
		if !rt.GrantsAtEnd(id) {
			out = append(out, "music player keeps the library of session "+id.String())
		}
	}
	for _, peer := range sortedPeers(p.Out) {
		o := p.Out[peer]
		if !o.Session.IsZero() && !rt.HoldsAtEnd(o.Session) {
			out = append(out, "music player keeps an exchange with ended session "+o.Session.String())
		}
		if o.Session.IsZero() && !rt.GrantsAtEnd(o.Callback) {
			out = append(out, "music player waits on ended callback "+o.Callback.String())
		}
	}
	return out
}

// refuses says whether the responder refuses a callback with left time left (LS-5:
// below MinLeft the reply could not arrive in time).
func (p *Player) refuses(left time.Duration) bool {
	if h := p.Cfg.Hooks.Refuses; h != nil {
		return h(left, p.Cfg.MinLeft)
	}
	return left < p.Cfg.MinLeft
}

// notifies says whether the user is told of a match ratio (LS-5: from the threshold).
func (p *Player) notifies(ratio float64) bool {
	if h := p.Cfg.Hooks.Notifies; h != nil {
		return h(ratio, p.Cfg.Threshold)
	}
	return ratio >= p.Cfg.Threshold
}

// matchRatio is the share of the responder's library that the uploaded one shares.
func matchRatio(own, got []Song) float64 {
	if len(own) == 0 {
		return 0
	}
	set := map[Song]bool{}
	for _, s := range got {
		set[s] = true
	}
	common := 0
	for _, s := range own {
		if set[s] {
			common++
		}
	}
	return float64(common) / float64(len(own))
}
