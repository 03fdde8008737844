package rpscen

import (
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/coverage"
	"github.com/simrun-dev/simrun/model"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// Bugs planted from test code, each a one-line slip in one rule's branch, written here
// as the protocol would run it (a Policy hook where the protocol has a decision point,
// otherwise a handle in front of the node that does what the slip would). The tests
// below show that the system-level detectors — the default swarm (seeds 1-2000) or a
// portfolio configuration — catch each, and with which property.
func init() {
	// RP-1 (§5.2.1): a replica back from a crash draws a new registration ID (its
	// stable "id" ignored).
	bugs["t-id-redrawn"] = bug{handle: func(n sim.Node, in *sim.Input, out *sim.Outbox) bool {
		if in.Kind == sim.Restart {
			var ws []sim.Write
			for _, k := range in.Stable.Keys() {
				if v, _ := in.Stable.Get(k); k != "id" {
					ws = append(ws, sim.Write{Key: k, Value: v})
				}
			}
			st := &sim.Storage{}
			st.Apply(ws)
			in.Stable = st.View()
		}
		return false
	}}
	// RP-2 §5.2.3: a replica its lookups list alone claims at once (no renewal period).
	bugs["t-alone-at-once"] = bug{policy: func() *rp.Policy {
		return &rp.Policy{AloneWait: func(time.Duration, time.Duration) time.Duration { return 0 }}
	}}
	// RP-2 §3.6.1 step 4: a backup behind a done acknowledges its index anyway (and asks
	// for the state, as it should).
	bugs["t-ack-unapplied"] = bug{handle: func(n sim.Node, in *sim.Input, out *sim.Outbox) bool {
		r, ok := n.(*rp.Replica)
		m, done := in.Msg.(rp.DoneMsg)
		if ok && done && in.Kind == sim.Receive && !r.S.Primary && m.Index > r.S.Applied+1 && m.Term == r.S.Term {
			out.Observe(rp.ObsAck, rp.Ack{Group: r.O.Group, To: in.From, Index: m.Index, Applied: r.S.Applied})
			out.Send(in.From, rp.BackupAck{ID: m.ID, Client: m.Client, Seq: m.Seq, Index: m.Index})
		}
		return false
	}}
	// RP-2 fence: a backup applies every done it gets, whoever sent it and of whatever
	// term. (A slip in one of the two checks alone is masked by the other: the
	// primary followed, and the term of its history.)
	bugs["t-no-fence"] = bug{handle: func(n sim.Node, in *sim.Input, out *sim.Outbox) bool {
		r, ok := n.(*rp.Replica)
		if m, done := in.Msg.(rp.DoneMsg); ok && done && in.Kind == sim.Receive && !r.S.Primary && (r.S.PrimaryNode != in.From || m.Term != r.S.Term || m.TermOf != r.S.TermOf) {
			followed := r.S.PrimaryNode
			r.S.PrimaryNode, r.S.Term, r.S.TermOf = in.From, m.Term, m.TermOf
			r.Handle(*in, out)
			r.S.PrimaryNode = followed
			return true
		}
		return false
	}}
	// RP-2 step down: a primary steps down only after two leases without an
	// acknowledged registration.
	bugs["t-stepdown-late"] = bug{policy: func() *rp.Policy {
		return &rp.Policy{Lapsed: func(since, lease time.Duration) bool { return since > 2*lease }}
	}}
	// RP-2 §3.6.1: a re-send of the request in progress is answered from the table at
	// once (before the backups acknowledged it).
	bugs["t-answer-in-progress"] = bug{handle: func(n sim.Node, in *sim.Input, out *sim.Outbox) bool {
		r, ok := n.(*rp.Replica)
		m, req := in.Msg.(rp.Request)
		if ok && req && in.Kind == sim.Receive && r.S.Primary && r.S.Current != nil && r.S.Current.Req.ID == m.ID && m.Client >= 0 {
			out.Observe(rp.ObsRespond, rp.Answer{Group: r.O.Group, ID: m.ID, Dup: true})
			out.Send(m.Client, rp.Response{ID: m.ID, Client: m.Client, Seq: m.Seq, Val: r.S.Current.Resp})
			return true
		}
		return false
	}}
	// RP-4 §4.4 steps 2-3: the primary successor acknowledges a transition on receipt,
	// before it ran it (and its backups hold it).
	bugs["t-transition-on-receipt"] = bug{handle: func(n sim.Node, in *sim.Input, out *sim.Outbox) bool {
		r, ok := n.(*rp.Replica)
		m, req := in.Msg.(rp.Request)
		if ok && req && in.Kind == sim.Receive && r.S.Primary && strings.HasPrefix(m.ID, rp.PrefixTransition) && m.Client >= 0 {
			if _, done := r.S.Dup[m.ID]; !done {
				out.Observe(rp.ObsRespond, rp.Answer{Group: r.O.Group, ID: m.ID, Dup: true})
				out.Send(m.Client, rp.Response{ID: m.ID, Client: m.Client, Seq: m.Seq, Val: m.Op.Val})
			}
		}
		return false
	}}
	// RP-2 §5.3.3: a front end whose request a replica refuses ("not primary") waits
	// for its re-send instead of looking the group up again.
	bugs["t-refused-waits"] = bug{clients: true, handle: func(n sim.Node, in *sim.Input, out *sim.Outbox) bool {
		c, ok := n.(*rp.Client)
		if m, resp := in.Msg.(rp.Response); ok && resp && in.Kind == sim.Receive && m.NotPrimary && c.Call != nil {
			c.Call.Relooked = true
		}
		return false
	}}
}

// swarmCatches sweeps the default swarm (seeds 1-2000) with bug planted and returns the
// first failing seed's property.
func swarmCatches(t *testing.T, bug string) (uint64, string) {
	t.Helper()
	res, err := scenarios.Sweep(scenarios.SweepOptions{Scenario: "replication/swarm", Params: map[string]string{"bug": bug}, From: 1, To: 2000, StopAtFailure: true, FailureLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) == 0 {
		return 0, ""
	}
	return res.Failures[0].Seed, res.Failures[0].Property
}

// portfolioCatches checks portfolio configuration name with bug planted and returns
// the property violated.
func portfolioCatches(t *testing.T, name, bug string) string {
	t.Helper()
	m, err := model.Lookup("replication")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range m.Portfolio {
		if c.Name != name {
			continue
		}
		ps := map[string]string{"bug": bug}
		for k, v := range c.Params {
			ps[k] = v
		}
		sys, _, err := m.Instantiate(ps)
		if err != nil {
			t.Fatal(err)
		}
		res, err := model.Check(sys, model.Options{MaxStates: c.MaxStates})
		if err != nil {
			t.Fatal(err)
		}
		if res.Violation == nil {
			return ""
		}
		return res.Violation.Name
	}
	t.Fatalf("no portfolio configuration %q", name)
	return ""
}

// The default swarm catches every planted bug it can reach, with the property the
// bug's rule keeps (the first failing seed is pinned, so a regression in reach shows).
func TestSwarmCatchesPlantedBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: sweeps of the default swarm with bugs planted")
	}
	for _, c := range []struct{ bug, prop string }{
		{"no-dup", "RP-P1 at most once"},
		{"ack-early", "RP-2 §3.6.1 answered after it ran and its backups acknowledged"},
		{"no-resume", "RP-P1 every instance completes"},
		{"no-retry", "RP-P1 every instance completes"},
		{"t-id-redrawn", "RP-1 a replica keeps its registration ID"},
		{"t-alone-at-once", "RP-2 §5.2.3 no claim alone before a renewal period"},
		{"t-ack-unapplied", "RP-2 §3.6.1 a backup acknowledges only what it holds"},
		{"t-answer-in-progress", "RP-2 §3.6.1 answered after it ran and its backups acknowledged"},
		{"t-transition-on-receipt", "RP-2 §3.6.1 answered after it ran and its backups acknowledged"},
		{"t-refused-waits", "RP-2 a call refused by a non-primary looks again"},
		{"t-no-fence", "RP-P4 backups equal the primary"},
	} {
		t.Run(c.bug, func(t *testing.T) {
			seed, prop := swarmCatches(t, c.bug)
			if prop != c.prop {
				t.Fatalf("swarm with %s: first failure %q (seed %d), want %q", c.bug, prop, seed, c.prop)
			}
			t.Logf("%s: seed %d, %s", c.bug, seed, prop)
		})
	}
}

// The portfolio catches the planted bugs the swarm cannot reach — a primary cut off
// from its registrations (outside the thesis' model, the one way a registration lapses
// while its primary lives) that does not step down, or steps down late — and those it
// reaches as well, exhaustively over a few ticks.
func TestPortfolioCatchesPlantedBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: portfolio configurations with bugs planted")
	}
	for _, c := range []struct{ config, bug, prop string }{
		{"cut", "no-stepdown", "RP-2 step down within a lease and a period"},
		{"cut", "t-stepdown-late", "RP-2 step down within a lease and a period"},
		{"passive", "ack-early", "RP-2 answered after it ran and its backups acknowledged"},
		{"passive", "no-dup", "RP-P1 exactly once"},
		{"passive", "t-alone-at-once", "RP-2 no claim alone before a renewal period"},
		{"recovery", "t-id-redrawn", "RP-1 a replica keeps its registration ID"},
		{"flow", "t-transition-on-receipt", "RP-2 answered after it ran and its backups acknowledged"},
	} {
		t.Run(c.config+"/"+c.bug, func(t *testing.T) {
			if got := portfolioCatches(t, c.config, c.bug); got != c.prop {
				t.Fatalf("portfolio %s with %s: %q, want %q", c.config, c.bug, got, c.prop)
			}
		})
	}
}

var _ = coverage.CheckConfig
