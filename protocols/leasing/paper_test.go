package leasing

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// One test per rule of the paper (tagged with the digest's rule and the paper's
// section), in the style of etcd-io/raft's raft_paper_test.go.

// §3, Fig. 3 (LS-1): while disconnected, messages accumulate in order; on reconnection
// the buffer is flushed in order; while connected the reference forwards.
func TestLS1BufferWhileDisconnectedFlushInOrder(t *testing.T) {
	s := newSys(t, 2, 6*time.Second, nil, nil)
	var id RefID
	s.grant(ms(200), 0, 1, 10*time.Second, RenewOnCall{}, &id)
	s.at(ms(400), 1, func(rt *Runtime) {
		if st := rt.State(id); st != ConnectedActive {
			t.Errorf("state before the cut = %v, want connected-active", st)
		}
	})
	s.cut(ms(1000), 0, 1)
	s.at(ms(1500), 1, func(rt *Runtime) {
		if st := rt.State(id); st != DisconnectedActive {
			t.Errorf("state while out of range = %v, want disconnected-active", st)
		}
		for i := 1; i <= 3; i++ {
			if err := rt.Send(id, "m", i); err != nil {
				t.Errorf("send while disconnected: %v", err)
			}
		}
		if n := rt.Buffered(id); n != 3 {
			t.Errorf("buffered = %d, want 3", n)
		}
	})
	s.restore(ms(3000), 0, 1)
	s.at(ms(3500), 1, func(rt *Runtime) {
		if st := rt.State(id); st != ConnectedActive {
			t.Errorf("state after reconnection = %v, want connected-active", st)
		}
		if n := rt.Buffered(id); n != 0 {
			t.Errorf("buffered after the flush = %d, want 0", n)
		}
	})
	res := s.run()
	var got []any
	for i, inv := range s.app(0).Inv {
		if inv.Ref == id {
			got = append(got, inv.Args)
			if s.app(0).InvAt[i] < sim.Time(3*time.Second) {
				t.Errorf("message %v delivered at %v, during the disconnection", inv.Args, s.app(0).InvAt[i])
			}
		}
	}
	if want := []any{1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("delivered %v, want %v in order", got, want)
	}
	// Up at each side on the first beacons, down at each side after the silence, up
	// again at each side on the first beacon after the restore.
	if n := len(obs[ObsPeer](res, KindPeer)); n != 6 {
		t.Errorf("%d connectivity changes, want 6: %v", n, obs[ObsPeer](res, KindPeer))
	}
}

// §3 (LS-1): a message sent while the sender still believes it is connected but the
// link is already cut is retransmitted, so nothing is lost and order is kept.
func TestLS1RetransmitsAcrossUndetectedCut(t *testing.T) {
	s := newSys(t, 2, 3*time.Second, nil, nil)
	var id RefID
	s.grant(ms(200), 0, 1, 10*time.Second, RenewOnCall{}, &id)
	s.cut(ms(1000), 0, 1)
	s.at(ms(1010), 1, func(rt *Runtime) { // the cut is not detected yet
		if st := rt.State(id); st != ConnectedActive {
			t.Errorf("state = %v, want connected-active (cut not detected yet)", st)
		}
		_ = rt.Send(id, "m", 1)
		_ = rt.Send(id, "m", 2)
	})
	s.restore(ms(1100), 0, 1)
	s.run()
	var got []any
	for _, inv := range s.app(0).Inv {
		if inv.Ref == id {
			got = append(got, inv.Args)
		}
	}
	if !slices.Equal(got, []any{1, 2}) {
		t.Errorf("delivered %v, want [1 2]", got)
	}
}

// §3 (LS-1): an expired reference behaves as a permanently disconnected one: nothing
// is transmitted any more.
func TestLS1ExpiredReferenceTransmitsNothing(t *testing.T) {
	s := newSys(t, 2, 3*time.Second, nil, nil)
	var id RefID
	s.grant(ms(200), 0, 1, 500*time.Millisecond, nil, &id)
	var sendErr error
	s.at(ms(1500), 1, func(rt *Runtime) {
		if st := rt.State(id); st != NotHeld {
			t.Errorf("state after expiry = %v, want not-held (reclaimed)", st)
		}
		sendErr = rt.Send(id, "late", nil)
	})
	res := s.run()
	if !errors.Is(sendErr, ErrEnded) {
		t.Errorf("send on an expired reference: %v, want ErrEnded", sendErr)
	}
	for _, o := range obs[ObsSend](res, KindSend) {
		if o.Method == "late" {
			t.Errorf("an expired reference buffered a message: %+v", o)
		}
	}
}

// §5.1, §4.2 (LS-2 lease, pass-by-lease): the client side is created when the reference
// is passed, with the grantor's time left at transmission, not the initial term.
func TestLS2ClientTimerStartsFromGrantorTimeLeft(t *testing.T) {
	s := newSys(t, 2, 3*time.Second, nil, nil)
	var id RefID
	s.at(ms(200), 0, func(rt *Runtime) {
		var err error
		id, err = rt.Lease("obj", 2*time.Second, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
	})
	s.at(ms(700), 0, func(rt *Runtime) {
		far, _ := rt.Far(1)
		if err := rt.Send(far, "take", nil, id); err != nil {
			t.Fatal(err)
		}
	})
	res := s.run()
	rs := obs[ObsResolve](res, KindResolve)
	if len(rs) != 1 {
		t.Fatalf("%d resolutions, want 1", len(rs))
	}
	if rs[0].Left != 1500*time.Millisecond {
		t.Errorf("client side resolved with %v left, want 1.5s (2s term granted 500ms earlier)", rs[0].Left)
	}
	g := obs[ObsGrant](res, KindGrant)[0]
	if d := rs[0].Deadline - g.Deadline; d != sim.Time(lat) {
		t.Errorf("client deadline - server deadline = %v, want the latency %v", time.Duration(d), lat)
	}
}

// §5.1 (LS-2 renew): the new time left is max(time left, renewal time); the holder is
// told the new time left (its timer follows the grantor's).
func TestLS2RenewMaxRule(t *testing.T) {
	s := newSys(t, 2, 2*time.Second, nil, nil)
	var id RefID
	s.grant(ms(100), 0, 1, time.Second, nil, &id)
	s.at(ms(300), 0, func(rt *Runtime) {
		if err := rt.Renew(id, 500*time.Millisecond); err != nil { // left 800ms > 500ms
			t.Fatal(err)
		}
		if left, _ := rt.TimeLeft(id); left != 800*time.Millisecond {
			t.Errorf("after renew(500ms) with 800ms left: %v left, want 800ms (max rule)", left)
		}
		if err := rt.Renew(id, 1500*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if left, _ := rt.TimeLeft(id); left != 1500*time.Millisecond {
			t.Errorf("after renew(1.5s): %v left, want 1.5s", left)
		}
	})
	s.at(ms(400), 1, func(rt *Runtime) {
		left, err := rt.TimeLeft(id)
		if err != nil {
			t.Fatal(err)
		}
		if want := 1500*time.Millisecond - 100*time.Millisecond + lat; left != want {
			t.Errorf("holder's time left = %v, want %v (follows the grantor's renewal)", left, want)
		}
	})
	res := s.run()
	rn := obs[ObsRenew](res, KindRenew)
	if len(rn) != 2 || rn[0].After != rn[0].Before || rn[1].After <= rn[1].Before {
		t.Errorf("renew observations %+v", rn)
	}
}

// §4.2, §5.1 (LS-2 revoke at the grantor): needs the exchange with the holder, which
// learns of it; no expiry listener runs at either side; both sides reclaim.
func TestLS2RevokeByGrantor(t *testing.T) {
	s := newSys(t, 2, 6*time.Second, nil, nil)
	var id RefID
	s.grant(ms(100), 0, 1, 5*time.Second, nil, &id)
	s.at(ms(200), 0, func(rt *Runtime) { must(rt.WhenExpired(id, "srv")) })
	s.at(ms(200), 1, func(rt *Runtime) { must(rt.WhenExpired(id, "cli")) })
	s.at(ms(300), 0, func(rt *Runtime) {
		if err := rt.Revoke(id); err != nil {
			t.Fatal(err)
		}
	})
	var after error
	s.at(ms(400), 1, func(rt *Runtime) { after = rt.Send(id, "m", nil) })
	res := s.run()
	if len(s.app(0).Exp)+len(s.app(1).Exp) != 0 {
		t.Errorf("listeners ran on revoke: %v %v", s.app(0).Exp, s.app(1).Exp)
	}
	ends := obs[ObsEnd](res, KindEnd)
	if len(ends) != 2 || ends[0].How != Revoked || ends[1].How != Revoked || ends[1].Cause != "notice" {
		t.Errorf("ends %+v, want server revoked then client revoked by notice", ends)
	}
	if !errors.Is(after, ErrEnded) {
		t.Errorf("send after revoke: %v, want ErrEnded", after)
	}
	if len(s.app(0).Rel) != 1 || len(s.app(1).Rel) != 1 {
		t.Errorf("releases %v %v, want one at each side", s.app(0).Rel, s.app(1).Rel)
	}
	if len(s.dev(0).RT.Exports) != 0 || len(s.dev(1).RT.Imports) != 0 {
		t.Errorf("state kept after revoke: exports %v imports %v", s.dev(0).RT.Exports, s.dev(1).RT.Imports)
	}
}

// §4.2 (LS-2 revoke needs communication): a revocation whose notice is lost while the
// holder is out of range reaches it when it comes back (before its own timer), so no
// listener runs; the grantor keeps only a tombstone until the old deadline.
func TestLS2RevokeReachesHolderAfterTransientDisconnection(t *testing.T) {
	s := newSys(t, 2, 7*time.Second, nil, nil)
	var id RefID
	s.grant(ms(100), 0, 1, 5*time.Second, nil, &id)
	s.at(ms(200), 1, func(rt *Runtime) { must(rt.WhenExpired(id, "cli")) })
	s.cut(ms(250), 0, 1)
	s.at(ms(600), 0, func(rt *Runtime) { must(rt.Revoke(id)) })
	s.at(ms(1000), 0, func(rt *Runtime) {
		if _, ok := rt.Tombs[id]; !ok || rt.Exports[id] != nil || rt.Grants(id) {
			t.Errorf("after revoke: export %+v, tombs %v, want only a tombstone", rt.Exports[id], rt.Tombs)
		}
	})
	s.at(ms(1000), 1, func(rt *Runtime) {
		if st := rt.State(id); st != DisconnectedActive {
			t.Errorf("holder state %v, want disconnected-active (the notice was lost)", st)
		}
	})
	s.restore(ms(1500), 0, 1)
	res := s.run()
	if len(s.app(1).Exp) != 0 {
		t.Errorf("holder listeners ran: %v (the revoke should have reached it)", s.app(1).Exp)
	}
	ce := obsAt(res, KindEnd, func(e ObsEnd) bool { return e.Side == Client && e.How == Revoked && e.Cause == "notice" })
	if len(ce) != 1 || ce[0] < sim.Time(1500*time.Millisecond) || ce[0] > sim.Time(1700*time.Millisecond) {
		t.Errorf("holder learned the revoke at %v, want just after the restore at 1.5s", ce)
	}
	if len(s.dev(0).RT.Exports)+len(s.dev(0).RT.Tombs)+len(s.dev(0).RT.TombOrder) != 0 {
		t.Errorf("tombstone kept past the deadline: %v %v", s.dev(0).RT.Exports, s.dev(0).RT.Tombs)
	}
}

// §4.2 (LS-2 revoke at the holder): buffered messages go first, then the revocation;
// the grantor ends the lease without listeners; renewing the revoked lease is refused.
func TestLS2RevokeByHolder(t *testing.T) {
	s := newSys(t, 2, 2*time.Second, nil, nil)
	var id RefID
	s.grant(ms(100), 0, 1, 5*time.Second, nil, &id)
	s.at(ms(200), 0, func(rt *Runtime) { must(rt.WhenExpired(id, "srv")) })
	var renewErr error
	s.at(ms(300), 1, func(rt *Runtime) {
		must(rt.Send(id, "m", 1))
		must(rt.Revoke(id))
		renewErr = rt.Renew(id, time.Second)
	})
	res := s.run()
	if !errors.Is(renewErr, ErrEnded) || !strings.Contains(renewErr.Error(), "renew") {
		t.Errorf("renew after revoke: %v, want a clear ErrEnded", renewErr)
	}
	if len(s.app(0).Inv) != 1 || s.app(0).Inv[0].Args != 1 {
		t.Errorf("grantor got %v, want the one message sent before the revoke", s.app(0).Inv)
	}
	var srv []ObsEnd
	for _, e := range obs[ObsEnd](res, KindEnd) {
		if e.Side == Server {
			srv = append(srv, e)
		}
	}
	if len(srv) != 1 || srv[0].How != Revoked || srv[0].Cause != "request" {
		t.Errorf("server ends %+v, want one revoke by request", srv)
	}
	if len(s.app(0).Exp) != 0 {
		t.Errorf("listener ran on revoke: %v", s.app(0).Exp)
	}
	if len(s.dev(1).RT.Imports) != 0 {
		t.Errorf("holder kept the revoked import: %v", s.dev(1).RT.Imports)
	}
}

// §5.1 (LS-2 expire, whenExpired at both sides): an explicit expire notifies listeners
// at both sides, exactly once each, asynchronously (not inside the expiring call).
func TestLS2ExpireRunsListenersAtBothSidesAsynchronously(t *testing.T) {
	s := newSys(t, 2, 2*time.Second, nil, nil)
	var id RefID
	s.grant(ms(100), 0, 1, 5*time.Second, nil, &id)
	s.at(ms(200), 0, func(rt *Runtime) { must(rt.WhenExpired(id, "srv")) })
	s.at(ms(200), 1, func(rt *Runtime) { must(rt.WhenExpired(id, "cli")); must(rt.WhenExpired(id, "cli2")) })
	s.at(ms(300), 0, func(rt *Runtime) {
		must(rt.Expire(id))
		if len(s.app(0).Exp) != 0 {
			t.Errorf("listener ran synchronously inside expire")
		}
		if err := rt.Expire(id); err == nil {
			t.Errorf("second expire accepted")
		}
	})
	s.run()
	if got := s.app(0).Exp; len(got) != 1 || got[0].Tag != "srv" || got[0].Side != Server {
		t.Errorf("server listeners %v", got)
	}
	if got := s.app(1).Exp; len(got) != 2 || got[0].Tag != "cli" || got[1].Tag != "cli2" {
		t.Errorf("client listeners %v", got)
	}
}

// §3 (LS-2 symmetric expiration): with the devices permanently apart, each side's timer
// expires on its own, without communication; the holder's within the latency of the
// grantor's, each listener exactly once.
func TestLS2SymmetricExpiryWithoutCommunication(t *testing.T) {
	s := newSys(t, 2, 4*time.Second, nil, nil)
	var id RefID
	s.grant(ms(100), 0, 1, time.Second, nil, &id)
	s.at(ms(200), 0, func(rt *Runtime) { must(rt.WhenExpired(id, "srv")) })
	s.at(ms(200), 1, func(rt *Runtime) { must(rt.WhenExpired(id, "cli")) })
	s.cut(ms(300), 0, 1)
	res := s.run()
	ts := obsAt(res, KindEnd, func(e ObsEnd) bool { return e.Side == Server && e.Cause == "timer" })
	tc := obsAt(res, KindEnd, func(e ObsEnd) bool { return e.Side == Client && e.Cause == "timer" })
	if len(ts) != 1 || len(tc) != 1 {
		t.Fatalf("server expiries %v, client expiries %v, want one each", ts, tc)
	}
	if ts[0] != sim.Time(1100*time.Millisecond) || tc[0] != ts[0]+sim.Time(lat) {
		t.Errorf("server expired at %v, client at %v; want 1.1s and 1.1s+latency", ts[0], tc[0])
	}
	if len(s.app(0).Exp) != 1 || len(s.app(1).Exp) != 1 {
		t.Errorf("listeners: server %v client %v, want one each", s.app(0).Exp, s.app(1).Exp)
	}
}

// §3 (LS-2 inconsistency windows): a renewal arriving at a grantor whose side expired
// is ignored, and the holder's timer expires soon thereafter.
func TestLS2RenewalAtExpiredGrantorIgnored(t *testing.T) {
	s := newSys(t, 2, 3*time.Second, nil, []sim.Clock{{}, {DriftPPM: -20_000}}) // holder 2% slow
	var id RefID
	s.grant(ms(100), 0, 1, time.Second, nil, &id)
	// The grantor's side expires at 1.1s; the slow holder still counts time left.
	s.at(ms(1105), 1, func(rt *Runtime) {
		if !rt.Holds(id) {
			t.Fatalf("holder expired already (state %v)", rt.State(id))
		}
		must(rt.Renew(id, 5*time.Second))
	})
	res := s.run()
	drops := obs[ObsDrop](res, KindDrop)
	if len(drops) != 1 || drops[0].Op != OpRenew || drops[0].Why != "ended" {
		t.Errorf("drops %+v, want the renewal ignored as ended", drops)
	}
	tc := obsAt(res, KindEnd, func(e ObsEnd) bool { return e.Side == Client })
	if len(tc) != 1 || tc[0] > sim.Time(1200*time.Millisecond) {
		t.Errorf("client ended at %v, want soon after 1.1s", tc)
	}
}

// §3 (LS-2 piggybacking): the grantor's remaining time travels on the acknowledgements,
// so a renew-on-call lease in use keeps both timers alive.
func TestLS2PiggybackKeepsHolderInStep(t *testing.T) {
	s := newSys(t, 2, 7*time.Second, nil, nil)
	var id RefID
	s.grant(ms(100), 0, 1, time.Second, RenewOnCall{}, &id)
	for i := 1; i <= 10; i++ {
		s.at(ms(100+500*i), 1, func(rt *Runtime) { must(rt.Send(id, "m", i)) })
	}
	s.at(ms(5200), 1, func(rt *Runtime) {
		left, err := rt.TimeLeft(id)
		// Last call at 5.1s, renewed at 5.105s, ack back at 5.11s with 1s left.
		if err != nil || left != time.Second-ms(90) {
			t.Errorf("holder's time left %v (%v), want 910ms (the grantor's renewal, piggybacked)", left, err)
		}
	})
	res := s.run()
	if n := len(obsAt(res, KindEnd, func(e ObsEnd) bool { return e.At < sim.Time(6*time.Second) && e.Cause != "timer" })); n != 0 {
		t.Errorf("unexpected ends")
	}
	if n := len(obsAt(res, KindEnd, func(e ObsEnd) bool { return true })); n != 2 {
		t.Errorf("%d ends, want the two timer expiries after the last call", n)
	}
}

// §4.2 (bad input): non-positive terms and due times, renewing a revoked lease, passing
// a lease to the wrong device: clear errors, never a panic.
func TestLS2BadInput(t *testing.T) {
	s := newSys(t, 3, time.Second, nil, nil)
	var id, other RefID
	s.grant(ms(100), 0, 1, time.Second, nil, &id)
	s.at(ms(200), 0, func(rt *Runtime) {
		for _, term := range []time.Duration{0, -time.Second} {
			if _, err := rt.Lease("x", term, nil, 1); !errors.Is(err, ErrTerm) || !strings.Contains(err.Error(), "term") {
				t.Errorf("lease term %v: %v", term, err)
			}
		}
		if _, err := rt.Lease("x", time.Second, nil, 0); !errors.Is(err, ErrPass) {
			t.Errorf("lease held by its grantor: %v", err)
		}
		if err := rt.Renew(id, 0); !errors.Is(err, ErrTerm) {
			t.Errorf("renew 0: %v", err)
		}
		other, _ = rt.Lease("y", time.Second, nil, 2)
		far, _ := rt.Far(1)
		if err := rt.Send(far, "take", nil, other); !errors.Is(err, ErrPass) {
			t.Errorf("passing a lease to a device that does not hold it: %v", err)
		}
		if err := rt.Renew(far, time.Second); !errors.Is(err, ErrNotLeased) {
			t.Errorf("renew a far reference: %v", err)
		}
		must(rt.Revoke(id))
		if err := rt.Renew(id, time.Second); !errors.Is(err, ErrEnded) {
			t.Errorf("renew a revoked lease at its grantor: %v", err)
		}
		if err := rt.Revoke(id); !errors.Is(err, ErrEnded) {
			t.Errorf("revoke twice: %v", err)
		}
	})
	s.at(ms(300), 1, func(rt *Runtime) {
		far, _ := rt.Far(0)
		for _, due := range []time.Duration{0, -1} {
			if _, err := rt.Call(far, "x", nil, due, "t"); !errors.Is(err, ErrTerm) || !strings.Contains(err.Error(), "due") {
				t.Errorf("call with due %v: %v", due, err)
			}
		}
		if err := rt.Send(RefID{Grantor: 0, GBoot: 1, N: 99, Holder: 1}, "x", nil); !errors.Is(err, ErrEnded) || !strings.Contains(err.Error(), "send x 0.1#99>1") {
			t.Errorf("send through an unknown reference: %v", err)
		}
		if _, err := rt.Call(RefID{Grantor: 0, GBoot: 1, N: 99, Holder: 1}, "y", nil, time.Second, "t"); !errors.Is(err, ErrEnded) || !strings.Contains(err.Error(), "call y 0.1#99>1") {
			t.Errorf("call through an unknown reference: %v", err)
		}
		if _, err := rt.TimeLeft(far); !errors.Is(err, ErrNotLeased) {
			t.Errorf("timeLeft of a far reference: %v", err)
		}
	})
	s.run()
}

// §3, §4.3 (LS-3 renew-on-call): every message received renews by the initial period;
// without messages the lease expires after it.
func TestLS3RenewOnCall(t *testing.T) {
	s := newSys(t, 2, 4*time.Second, nil, nil)
	var id RefID
	s.grant(ms(100), 0, 1, time.Second, RenewOnCall{}, &id)
	s.at(ms(900), 1, func(rt *Runtime) { must(rt.Send(id, "m", nil)) })
	res := s.run()
	ts := obsAt(res, KindEnd, func(e ObsEnd) bool { return e.Side == Server })
	if want := sim.Time(900*time.Millisecond + lat + time.Second); len(ts) != 1 || ts[0] != want {
		t.Errorf("server side ended at %v, want %v (renewed by the call at arrival)", ts, want)
	}
}

// §3, §4.3 (LS-3 single-call, LS-P5): the first message is processed, then the lease is
// revoked; a second message is dropped. Without a message it expires after its term.
func TestLS3SingleCall(t *testing.T) {
	s := newSys(t, 2, 3*time.Second, nil, nil)
	var id, idle RefID
	s.grant(ms(100), 0, 1, time.Second, SingleCall{}, &id)
	s.grant(ms(100), 0, 1, time.Second, SingleCall{}, &idle)
	s.at(ms(200), 1, func(rt *Runtime) {
		must(rt.Send(id, "first", nil))
		must(rt.Send(id, "second", nil))
	})
	res := s.run()
	var got []string
	for _, inv := range s.app(0).Inv {
		got = append(got, inv.Method)
	}
	if !slices.Equal(got, []string{"first"}) {
		t.Errorf("service got %v, want only the first message", got)
	}
	if d := obs[ObsDrop](res, KindDrop); len(d) != 1 || d[0].Seq != 2 {
		t.Errorf("drops %+v, want the second message", d)
	}
	var idleEnd []ObsEnd
	for _, e := range obs[ObsEnd](res, KindEnd) {
		if e.Lease == idle && e.Side == Server {
			idleEnd = append(idleEnd, e)
		}
	}
	if len(idleEnd) != 1 || idleEnd[0].How != Expired || idleEnd[0].Cause != "timer" {
		t.Errorf("unused single-call lease ended %+v, want expired by timer", idleEnd)
	}
}

// revokeAfter is a custom pattern written against the interceptor hook, with state
// of its own: renew-on-call for N messages, which it counts itself, then revoke. It
// forwards only messages that come in order from the holder.
type revokeAfter struct{ N, Seen int64 }

func (revokeAfter) Name() string { return "revoke-after" }
func (p revokeAfter) Receive(l *LeaseCtl) {
	if l.IsExpired() || l.Seq() != p.Seen+1 || l.From() != l.Lease().Holder {
		return
	}
	_ = l.Renew(l.RenewalTime())
	_ = l.Forward()
	if p.Seen++; p.Seen >= p.N {
		_ = l.Revoke()
		return
	}
	_ = l.SetPattern(p)
}

// §5.1 (LS-3 custom patterns): the interceptor hook decides renewal, revocation and
// forwarding.
func TestLS3CustomPatternThroughHook(t *testing.T) {
	s := newSys(t, 2, 2*time.Second, nil, nil)
	var id RefID
	s.grant(ms(100), 0, 1, time.Second, revokeAfter{N: 2}, &id)
	s.at(ms(200), 1, func(rt *Runtime) {
		for i := 0; i < 4; i++ {
			must(rt.Send(id, "m", i))
		}
	})
	res := s.run()
	if n := len(s.app(0).Inv); n != 2 {
		t.Errorf("service got %d messages, want 2", n)
	}
	ends := obs[ObsEnd](res, KindEnd)
	if len(ends) != 2 || ends[0].Cause != "pattern" || ends[1].Cause != "notice" {
		t.Errorf("ends %+v", ends)
	}
}

// panicky is a custom pattern that panics.
type panicky struct{}

func (panicky) Name() string      { return "panicky" }
func (panicky) Receive(*LeaseCtl) { panic("pattern bug") }

// §5.1 (LS-3 bad input): a custom pattern that panics is contained and reported; the
// lease expires at both sides; the device keeps serving.
func TestLS3PanickingPatternIsContained(t *testing.T) {
	s := newSys(t, 2, 2*time.Second, nil, nil)
	var bad, good RefID
	s.grant(ms(100), 0, 1, time.Second, panicky{}, &bad)
	s.grant(ms(100), 0, 1, time.Second, nil, &good)
	s.at(ms(200), 1, func(rt *Runtime) { must(rt.WhenExpired(bad, "cli")) })
	s.at(ms(300), 1, func(rt *Runtime) {
		must(rt.Send(bad, "m", nil))
		must(rt.Send(good, "m", nil))
	})
	res := s.run()
	pe := obs[ObsPatternError](res, KindPatternError)
	if len(pe) != 1 || pe[0].Pattern != "panicky" || !strings.Contains(pe[0].Panic, "pattern bug") {
		t.Errorf("pattern errors %+v", pe)
	}
	if len(s.app(0).Inv) != 1 || s.app(0).Inv[0].Ref != good {
		t.Errorf("service got %v, want only the message on the good lease", s.app(0).Inv)
	}
	if len(s.app(1).Exp) != 1 {
		t.Errorf("holder listeners %v, want the broken lease's expiry", s.app(1).Exp)
	}
}

// A panic in the service object itself is not contained: it is a protocol bug and the
// simulator reports it.
func TestAppPanicPropagates(t *testing.T) {
	s := newSys(t, 2, 2*time.Second, nil, nil)
	var id RefID
	s.grant(ms(100), 0, 1, time.Second, RenewOnCall{}, &id)
	s.at(ms(150), 0, func(rt *Runtime) {
		s.app(0).OnInvoke = func(*Runtime, Invocation) { panic("service bug") }
	})
	s.at(ms(200), 1, func(rt *Runtime) { must(rt.Send(id, "m", nil)) })
	res := s.k.Run()
	if res.Outcome != sim.Panicked || !strings.Contains(res.Panic.Error(), "service bug") {
		t.Errorf("outcome %v %v, want the service's panic", res.Outcome, res.Panic)
	}
}

// §4.4 (LS-4): a call with a future is resolved by the callee's reply; the future's
// single-call lease is revoked after it.
func TestLS4FutureResolved(t *testing.T) {
	s := newSys(t, 2, 2*time.Second, nil, nil)
	s.at(ms(50), 0, func(rt *Runtime) {
		s.app(0).OnInvoke = func(rt *Runtime, inv Invocation) { must(rt.Reply(inv.Reply, "pong")) }
	})
	s.at(ms(200), 1, func(rt *Runtime) {
		far, _ := rt.Far(0)
		if _, err := rt.Call(far, "ping", nil, time.Second, "t"); err != nil {
			t.Fatal(err)
		}
	})
	res := s.run()
	if !slices.Equal(s.app(1).Res, []any{"pong"}) || len(s.app(1).Ruin) != 0 {
		t.Errorf("resolved %v ruined %v", s.app(1).Res, s.app(1).Ruin)
	}
	done := obs[ObsFuture](res, KindFutureDone)
	if len(done) != 1 || !done[0].Ok {
		t.Errorf("future outcomes %+v", done)
	}
	if len(s.dev(1).RT.Futures) != 0 || len(s.dev(1).RT.Exports) != 0 || len(s.dev(0).RT.Imports) != 0 {
		t.Errorf("future state kept: %v %v %v", s.dev(1).RT.Futures, s.dev(1).RT.Exports, s.dev(0).RT.Imports)
	}
}

// §4.4 (LS-4 @Due): without a reply before the due time the future is ruined with a
// timeout (the catch: block); a late reply is dropped.
func TestLS4FutureTimesOut(t *testing.T) {
	s := newSys(t, 2, 3*time.Second, nil, nil)
	var reply RefID
	s.at(ms(50), 0, func(rt *Runtime) {
		s.app(0).OnInvoke = func(rt *Runtime, inv Invocation) { reply = inv.Reply }
	})
	s.at(ms(200), 1, func(rt *Runtime) {
		far, _ := rt.Far(0)
		if _, err := rt.Call(far, "ping", nil, 500*time.Millisecond, "t"); err != nil {
			t.Fatal(err)
		}
	})
	var lateErr error
	s.at(ms(1000), 0, func(rt *Runtime) { lateErr = rt.Reply(reply, "late") })
	s.run()
	if len(s.app(1).Ruin) != 1 || !errors.Is(s.app(1).Ruin[0], ErrTimeout) || len(s.app(1).Res) != 0 {
		t.Fatalf("ruined %v resolved %v, want one timeout", s.app(1).Ruin, s.app(1).Res)
	}
	if at := s.app(1).RuinAt[0]; at != sim.Time(700*time.Millisecond) {
		t.Errorf("ruined at %v, want at the due time 700ms", at)
	}
	if !errors.Is(lateErr, ErrEnded) {
		t.Errorf("late reply: %v, want ErrEnded (the callee's side expired too)", lateErr)
	}
}

// §4.4 (LS-4 @Due(leaseTimeLeft(session))): a call's deadline tied to a lease: if the
// devices part for good, the future is ruined when the lease runs out at the holder.
func TestLS4DueTiedToLeaseTimeLeft(t *testing.T) {
	s := newSys(t, 2, 4*time.Second, nil, nil)
	var id RefID
	s.grant(ms(100), 0, 1, time.Second, RenewOnCall{}, &id)
	s.cut(ms(400), 0, 1)
	s.at(ms(500), 1, func(rt *Runtime) {
		left, err := rt.TimeLeft(id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Call(id, "upload", nil, left, "t"); err != nil {
			t.Fatal(err)
		}
	})
	res := s.run()
	tc := obsAt(res, KindEnd, func(e ObsEnd) bool { return e.Side == Client && e.Lease == id })
	if len(s.app(1).Ruin) != 1 || len(tc) != 1 || s.app(1).RuinAt[0] != tc[0] {
		t.Errorf("future ruined at %v, lease ended at holder at %v: want the same instant", s.app(1).RuinAt, tc)
	}
}

// The discovery layer: peers come up on the first beacon and go down after Silence.
func TestDiscovery(t *testing.T) {
	s := newSys(t, 2, 3*time.Second, nil, nil)
	s.cut(ms(1000), 0, 1)
	s.restore(ms(2000), 0, 1)
	s.run()
	if got := s.app(0).Conn; !slices.Equal(got, []bool{true, false, true}) {
		t.Errorf("connectivity seen by a: %v", got)
	}
}

// Devices can be copied and encoded canonically (the model checker needs both).
func TestDeviceCloneAndEncode(t *testing.T) {
	s := newSys(t, 2, 2*time.Second, nil, nil)
	var id RefID
	s.grant(ms(100), 0, 1, time.Second, RenewOnCall{}, &id)
	s.cut(ms(500), 0, 1)
	s.at(ms(900), 1, func(rt *Runtime) { must(rt.Send(id, "m", []int{1, 2})) })
	s.k.StopWhen(func() bool { return s.k.Now() >= sim.Time(950*time.Millisecond) })
	s.k.Run()
	for i := 0; i < 2; i++ {
		d := s.dev(i)
		c := d.Clone().(*Device)
		a, b := sim.EncodeNode(nil, d), sim.EncodeNode(nil, c)
		if string(a) != string(b) {
			t.Errorf("device %d: clone encodes differently", i)
		}
		c.RT.NextN++
		if string(sim.EncodeNode(nil, d)) == string(sim.EncodeNode(nil, c)) {
			t.Errorf("device %d: a changed clone encodes the same", i)
		}
		// The clone shares nothing mutable: trimming its buffers (as an ack does)
		// leaves the original alone.
		before := string(sim.EncodeNode(nil, d))
		for _, im := range c.RT.Imports {
			if len(im.Buf) > 0 {
				im.Buf = slices.Delete(im.Buf, 0, 1)
			}
			im.Listeners = append(im.Listeners, "x")
		}
		if string(sim.EncodeNode(nil, d)) != before {
			t.Errorf("device %d: changing the clone changed the original", i)
		}
		// The fast encoding agrees with the reflective deep copy's.
		if string(sim.EncodeNode(nil, sim.DeepCopy(d))) != before {
			t.Errorf("device %d: a deep copy encodes differently", i)
		}
	}
}

// A message from a peer's earlier incarnation (a late duplicate after it rebooted) is
// ignored: it neither reopens a dead far channel nor makes the peer look rebooted
// "back" (boots only grow). Found by rapid in the swarm (dup burst + crash/restart).
func TestStaleIncarnationIgnored(t *testing.T) {
	cfg := testConfig(2)
	d := NewDevice(cfg, func() App { return &tapp{} })().(*Device)
	var out sim.Outbox
	step := func(in sim.Input) {
		out.Reset()
		in.Self = 0
		d.Handle(in, &out)
	}
	step(sim.Input{Kind: sim.Start, Now: 0})
	step(sim.Input{Kind: sim.Receive, From: 1, Now: sim.Time(ms(1)), Msg: Beacon{Boot: 2}})
	old := Call{Ref: RefID{Grantor: 0, GBoot: 1, Holder: 1, HBoot: 1}, SBoot: 1, Seq: 1, Op: OpApp, Method: "x"}
	step(sim.Input{Kind: sim.Receive, From: 1, Now: sim.Time(ms(2)), Msg: old})
	if len(d.RT.Exports) != 0 || out.NumObservations() != 0 || len(out.Sends()) != 0 {
		t.Errorf("stale call processed: exports %v, %d observations, %d sends", d.RT.Exports, out.NumObservations(), len(out.Sends()))
	}
	if p := d.RT.peer(1); p.Boot != 2 {
		t.Errorf("peer boot %d after a stale message, want 2", p.Boot)
	}
}

// §4.2 (LS-2 piggybacking): the holder's timer follows only the newest time left. A
// late duplicate of an older acknowledgement (a duplicating network delivers it again
// up to a latency later) must not move the holder's deadline, neither later (the
// holder would outlive the grantor by the duplicate's extra delay) nor earlier (after
// a renewal, the old ack carries less time left). Review item A.
func TestLS2StaleAckIgnored(t *testing.T) {
	cfg := testConfig(2)
	d := NewDevice(cfg, func() App { return &tapp{} })().(*Device)
	var out sim.Outbox
	step := func(at time.Duration, m sim.Message) {
		out.Reset()
		d.Handle(sim.Input{Kind: sim.Receive, Self: 1, From: 0, Now: sim.Time(at), Msg: m}, &out)
	}
	out.Reset()
	d.Handle(sim.Input{Kind: sim.Start, Self: 1}, &out)
	step(ms(1), Beacon{Boot: 1})
	id := RefID{Grantor: 0, GBoot: 1, N: 1, Holder: 1}
	// The holder resolved the lease at its local 10ms from a reference the grantor
	// passed at its local 100ms with deadline 1.1s (the clocks disagree: only intervals
	// matter).
	d.RT.Imports[id] = &Import{ID: id, Object: "obj", Pattern: "basic", Term: time.Second, Deadline: sim.Time(ms(1010)), Until: sim.Time(ms(1100))}
	d.RT.schedImport(d.RT.Imports[id]) // the runtime's deadline queue follows every import
	deadline := func() sim.Time { return d.RT.Imports[id].Deadline }
	// An ack taken at the grantor's 300ms (800ms left) arrives at 215ms: the same
	// grantor deadline, nothing new (it would set 1.015s).
	ack := Ack{Ref: id, SBoot: 1, Left: ms(800), Until: sim.Time(ms(1100))}
	step(ms(215), ack)
	if got := deadline(); got != sim.Time(ms(1010)) {
		t.Errorf("an ack with the same grantor deadline moved the holder's deadline to %v", got)
	}
	// A renewal at the grantor's 400ms to 1.4s (1s left) arrives at 315ms.
	renewed := Ack{Ref: id, SBoot: 1, Left: time.Second, Until: sim.Time(ms(1400))}
	step(ms(315), renewed)
	if got := deadline(); got != sim.Time(ms(1315)) {
		t.Fatalf("deadline after the renewal's ack = %v, want 1.315s", got)
	}
	// The duplicate of the first ack arrives late: ignored (it would set 1.13s).
	step(ms(330), ack)
	if got := deadline(); got != sim.Time(ms(1315)) {
		t.Errorf("a stale duplicate moved the holder's deadline to %v, want 1.315s", got)
	}
	// A late duplicate of the renewal's ack itself: ignored too (it would set 1.345s).
	step(ms(345), renewed)
	if got := deadline(); got != sim.Time(ms(1315)) {
		t.Errorf("a late duplicate of the newest ack moved the holder's deadline to %v, want 1.315s", got)
	}
}

// LS-P4 leak report: the applications judge their state at the device's last local
// time (LastNow), not at the zero "now" a device has between handler calls. A partial
// library whose session is past its deadline, a probe server whose lease is past its
// deadline, are leaks even while the runtime still has the (overdue) entry. Review
// item K.
func TestAppLeaksJudgedAtLastNow(t *testing.T) {
	id := RefID{Grantor: 0, GBoot: 1, N: 7, Holder: 1}
	rt := Runtime{Cfg: testConfig(2), Self: 0, Boot: 1, LastNow: sim.Time(ms(5000)),
		Exports: map[RefID]*Export{id: {ID: id, Object: "mp.session", Pattern: Basic{}, Term: time.Second, Deadline: sim.Time(ms(4000)), Expected: 1}},
		Imports: map[RefID]*Import{}, Futures: map[int64]*FutureRec{}}
	pl := &Player{Cfg: &PlayerConfig{}, In: map[RefID]*InExchange{id: {From: 1, Session: id}}}
	if got := pl.Leaks(&rt); len(got) != 1 || !strings.Contains(got[0], "keeps the library") {
		t.Errorf("player leaks %q, want the library of the overdue session", got)
	}
	pr := &Probe{Servers: map[RefID]*ProbeServer{id: {Term: time.Second}}, Clients: map[RefID]*ProbeClient{}}
	if got := pr.Leaks(&rt); len(got) != 1 || !strings.Contains(got[0], "server state") {
		t.Errorf("probe leaks %q, want the server state of the overdue lease", got)
	}
	// Still live at LastNow: no leak.
	rt.Exports[id].Deadline = sim.Time(ms(6000))
	if got := append(pl.Leaks(&rt), pr.Leaks(&rt)...); len(got) != 0 {
		t.Errorf("leaks %q for a live lease", got)
	}
}

// forwardThenPanic forwards, then panics: the service object has processed the message.
type forwardThenPanic struct{}

func (forwardThenPanic) Name() string { return "forward-then-panic" }
func (forwardThenPanic) Receive(l *LeaseCtl) {
	_ = l.Forward()
	panic("pattern bug after forwarding")
}

// brokenRuntime is a pattern whose LeaseCtl call hits a bug inside the runtime (here
// provoked by corrupting the runtime's state: Forward resolves the reference passed
// with the message into a nil map): that panic is the runtime's, not the pattern's.
type brokenRuntime struct{}

func (brokenRuntime) Name() string { return "broken-runtime" }
func (brokenRuntime) Receive(l *LeaseCtl) {
	l.rt.Imports = nil
	_ = l.Forward()
}

// §5.1 (LS-3 bad input), review item J: what a panicking pattern did before the panic
// stands (a message it forwarded was processed; the panic is still reported and the
// lease expires at both sides); a panic raised inside the runtime under a LeaseCtl
// call is a protocol bug, not the pattern's, and is not contained.
func TestLS3PatternPanicAfterForwardAndRuntimePanic(t *testing.T) {
	s := newSys(t, 2, 2*time.Second, nil, nil)
	var id RefID
	s.grant(ms(100), 0, 1, time.Second, forwardThenPanic{}, &id)
	s.at(ms(200), 1, func(rt *Runtime) { must(rt.Send(id, "m", nil)) })
	res := s.run()
	if len(s.app(0).Inv) != 1 || s.app(0).Inv[0].Ref != id {
		t.Errorf("service got %v, want the message the pattern forwarded before it panicked", s.app(0).Inv)
	}
	if pe := obs[ObsPatternError](res, KindPatternError); len(pe) != 1 || !strings.Contains(pe[0].Panic, "after forwarding") {
		t.Errorf("pattern errors %+v", pe)
	}
	ends := obs[ObsEnd](res, KindEnd)
	if len(ends) != 2 || ends[0].Cause != "pattern-panic" || ends[1].How != Expired || ends[1].Cause != "notice" {
		t.Errorf("ends %+v, want the lease expired at both sides", ends)
	}

	s = newSys(t, 2, 2*time.Second, nil, nil)
	s.grant(ms(100), 0, 1, time.Second, brokenRuntime{}, &id)
	s.at(ms(200), 1, func(rt *Runtime) {
		back, err := rt.Lease("back", time.Second, nil, 0)
		must(err)
		must(rt.Send(id, "m", nil, back))
	})
	res = s.k.Run()
	if res.Outcome != sim.Panicked || !strings.Contains(res.Panic.Error(), "nil map") {
		t.Errorf("outcome %v %v, want the runtime's own panic reported", res.Outcome, res.Panic)
	}
	if pe := obs[ObsPatternError](res, KindPatternError); len(pe) != 0 {
		t.Errorf("a runtime panic was blamed on the pattern: %+v", pe)
	}
}
