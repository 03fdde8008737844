package lsscen

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/model"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// Every rule of the rule map (protocols/leasing/rules.go) has a property that a
// one-line bug in its branch violates. ruleBugs plants one such bug per rule, from
// here, through the runtime's decision hooks (ls.Policy) or the music player's
// (ls.PlayerHooks), and names the system-level detector that catches it: the default
// swarm (leasing/swarm on seeds 1-2000: the first seed that catches it is pinned) or
// a configuration of the model's portfolio. TestRuleBugsCaught runs the pinned seed
// or the configuration; LEASING_RULEBUGS=search re-derives the seeds (a sweep of
// seeds 1-2000 per bug, stopping at the first failure).

// ruleBug is one planted bug.
type ruleBug struct {
	rule   string // the rule tag whose branch it breaks
	name   string
	policy ls.Policy
	player ls.PlayerHooks
	// model is the portfolio configuration that catches it ("": the swarm, at seed).
	model string
	seed  uint64
	// prop is the property that catches it.
	prop string
}

func bugPolicy(name string) ls.Policy {
	b, ok := BugNamed(name)
	if !ok {
		panic("no bug " + name)
	}
	return b.Policy
}

// patternBug maps the pattern named name to broken.
func patternBug(name string, broken ls.Interceptor) ls.Policy {
	return ls.Policy{Pattern: func(p ls.Interceptor) ls.Interceptor {
		if p.Name() == name {
			return broken
		}
		return p
	}}
}

// Broken patterns (LS-3), each with the name of the pattern it replaces.
type (
	basicDrops        struct{}
	rocNoRenew        struct{}
	endExchangeKeeps  struct{}
	endExchangeStatic struct{}
)

func (basicDrops) Name() string           { return ls.Basic{}.Name() }
func (basicDrops) Receive(*ls.LeaseCtl)   {} // forgets super.receive
func (rocNoRenew) Name() string           { return ls.RenewOnCall{}.Name() }
func (rocNoRenew) Receive(l *ls.LeaseCtl) { _ = l.Forward() }

var endExchange = ls.EndExchangeLease{RevokeOn: "endExchange"}

func (endExchangeKeeps) Name() string { return endExchange.Name() }
func (endExchangeKeeps) Receive(l *ls.LeaseCtl) {
	if l.Method() != "endExchange" {
		_ = l.Renew(l.RenewalTime())
	}
	_ = l.Forward() // endExchange forwarded, the lease not revoked
}
func (endExchangeStatic) Name() string { return endExchange.Name() }
func (endExchangeStatic) Receive(l *ls.LeaseCtl) {
	_ = l.Forward()
	if l.Method() == "endExchange" {
		_ = l.Revoke()
	}
}

var ruleBugs = []ruleBug{
	// LS-1
	{rule: "LS-1 send connected", name: "send-connected-held", policy: ls.Policy{Enqueue: func(bool) (bool, bool) { return true, false }}, seed: 1, prop: "LS-P3/transient-tolerance"},
	{rule: "LS-1 send disconnected", name: "no-buffer", policy: bugPolicy("no-buffer"), seed: 37, prop: "LS-P3/transient-tolerance"},
	{rule: "LS-1 expired sends nothing", name: "holder-sends-at-deadline", policy: ls.Policy{HolderExpired: func(now, dl sim.Time) bool { return now > dl }},
		model: "default", prop: "LS-1 no send at or after the holder's deadline"},
	{rule: "LS-1 retransmit", name: "no-retransmit", policy: ls.Policy{Retransmits: func(bool) bool { return false }}, seed: 1, prop: "LS-P3/transient-tolerance"},
	{rule: "LS-1 acked", name: "rto-restart-any-ack", policy: bugPolicy("rto-restart-any-ack"), seed: 1872, prop: "LS-P3/transient-tolerance"},
	{rule: "LS-1 flush", name: "no-flush", policy: ls.Policy{Flushes: func(sim.NodeID) bool { return false }}, seed: 1, prop: "LS-P3/transient-tolerance"},
	{rule: "LS-1 duplicate", name: "take-duplicates", policy: ls.Policy{Takes: func(seq, exp int64) bool { return seq <= exp }}, seed: 1, prop: "LS-P3/transient-tolerance"},
	{rule: "LS-1 gap", name: "take-gaps", policy: ls.Policy{Takes: func(seq, exp int64) bool { return seq >= exp }}, seed: 16, prop: "LS-P3/transient-tolerance"},
	{rule: "LS-1 out of range", name: "silence-never", policy: ls.Policy{Silence: func(d time.Duration) time.Duration { return 100 * d }}, seed: 1, prop: "LS-1/out-of-range-detected"},
	{rule: "LS-1 new peer", name: "no-discovery", policy: ls.Policy{Discovers: func(sim.NodeID) bool { return false }}, seed: 1, prop: "music/exchanges-resume"},
	{rule: "LS-1 reboot", name: "boot-reset", policy: ls.Policy{Boot: func(uint32) uint32 { return 1 }}, seed: 1, prop: "LS-P1/no-delivery-after-expiry"},
	// LS-2
	{rule: "LS-2 lease", name: "grantor-late", policy: bugPolicy("grantor-late"), seed: 1, prop: "LS-P2/symmetric-expiry"},
	{rule: "LS-2 resolve", name: "holder-short", policy: bugPolicy("holder-short"), seed: 1, prop: "LS-P2/symmetric-expiry"},
	{rule: "LS-2 renew extends", name: "renew-never-extends", policy: ls.Policy{RenewedLeft: func(left, d time.Duration) time.Duration { return left }}, seed: 1, prop: "LS-P2/symmetric-expiry"},
	{rule: "LS-2 renew keeps", name: "renew-shortens", policy: ls.Policy{RenewedLeft: func(left, d time.Duration) time.Duration { return d }}, seed: 1, prop: "LS-P6/linearizable"},
	{rule: "LS-2 renew refused", name: "accept-after-expiry", policy: bugPolicy("accept-after-expiry"), seed: 1, prop: "LS-P4/reclamation"},
	{rule: "LS-2 renew notifies", name: "no-renew-notice", policy: ls.Policy{Notifies: func(w string) bool { return w != "renew" }}, seed: 1, prop: "LS-P2/symmetric-expiry"},
	{rule: "LS-2 renew request", name: "no-renew-request", policy: ls.Policy{Requests: func(op ls.Op) bool { return op != ls.OpRenew }}, seed: 1, prop: "LS-P3/transient-tolerance"},
	{rule: "LS-2 piggyback", name: "ignore-piggyback", policy: bugPolicy("ignore-piggyback"), seed: 1, prop: "LS-P2/symmetric-expiry"},
	{rule: "LS-2 revoke grantor", name: "no-revoke-notice", policy: ls.Policy{Notifies: func(w string) bool { return w != "revoke" }}, seed: 1, prop: "LS-P2/symmetric-expiry"},
	{rule: "LS-2 revoke holder", name: "no-revoke-request", policy: ls.Policy{Requests: func(op ls.Op) bool { return op != ls.OpRevoke }}, seed: 1, prop: "LS-2/requests"},
	{rule: "LS-2 revoke request", name: "ignore-revoke-request", policy: ls.Policy{Obeys: func(op ls.Op) bool { return op != ls.OpRevoke }}, seed: 1, prop: "LS-2/requests"},
	{rule: "LS-2 expire grantor", name: "no-expire-notice", policy: ls.Policy{Notifies: func(w string) bool { return w != "expire" }}, seed: 3, prop: "LS-2/notice-in-range"},
	{rule: "LS-2 expire holder", name: "holder-expire-revokes", policy: ls.Policy{ExpireHolder: func() ls.End { return ls.Revoked }}, seed: 1, prop: "LS-2/requests"},
	{rule: "LS-2 timer grantor", name: "grantor-lingers", policy: bugPolicy("grantor-lingers"), seed: 1, prop: "LS-P2/symmetric-expiry"},
	{rule: "LS-2 timer holder", name: "client-never-expires", policy: bugPolicy("client-never-expires"), seed: 1, prop: "LS-P2/symmetric-expiry"},
	{rule: "LS-2 late arrival", name: "accept-at-deadline", policy: ls.Policy{Accepts: func(ex *ls.Export, now sim.Time, live bool) bool {
		return live || (ex.Ended == ls.Live && now == ex.Deadline)
	}}, model: "default", prop: "LS-P1 no delivery after expiry"},
	{rule: "LS-2 notice revoked", name: "revoke-notice-expires", policy: ls.Policy{NoticeEnd: func(ls.End) ls.End { return ls.Expired }}, seed: 1, prop: "LS-P2/symmetric-expiry"},
	{rule: "LS-2 notice expired", name: "expire-notice-revokes", policy: bugPolicy("expire-notice-revokes"), seed: 1, prop: "LS-P2/symmetric-expiry"},
	{rule: "LS-2 tombstone", name: "no-tombstones", policy: bugPolicy("no-tombstones"), seed: 1, prop: "LS-P2/symmetric-expiry"},
	{rule: "LS-2 tombstone answers", name: "tombstone-silent", policy: ls.Policy{Repeats: func(w string) bool { return w != "answer" }}, seed: 1608, prop: "LS-P2/symmetric-expiry"},
	{rule: "LS-2 tombstone renotifies", name: "no-renotify", policy: ls.Policy{Repeats: func(w string) bool { return w != "renotify" }}, seed: 4, prop: "LS-P2/symmetric-expiry"},
	{rule: "LS-2 listeners run", name: "listeners-never", policy: ls.Policy{Listeners: func(ls.Side, ls.End) bool { return false }}, seed: 1, prop: "LS-P2/symmetric-expiry"},
	{rule: "LS-2 no listeners on revoke", name: "listeners-on-revoke", policy: bugPolicy("listeners-on-revoke"), seed: 1, prop: "LS-P2/symmetric-expiry"},
	{rule: "LS-2 timeLeft", name: "time-left-long", policy: ls.Policy{TimeLeft: func(s ls.Side, left time.Duration) time.Duration { return left + 100*time.Millisecond }}, seed: 1, prop: "LS-4/outcomes"},
	{rule: "LS-2 released", name: "no-release", policy: ls.Policy{Releases: func(ls.Side, ls.End) bool { return false }}, seed: 1, prop: "LS-P4/reclamation"},
	// LS-3
	{rule: "LS-3 basic", name: "basic-drops", policy: patternBug(ls.Basic{}.Name(), basicDrops{}), seed: 1, prop: "LS-3/pattern-rules"},
	{rule: "LS-3 renew-on-call", name: "renew-on-call-no-renew", policy: patternBug(ls.RenewOnCall{}.Name(), rocNoRenew{}), seed: 1, prop: "LS-3/pattern-rules"},
	{rule: "LS-3 single-call", name: "single-call-keeps", policy: bugPolicy("single-call-keeps"), seed: 1, prop: "LS-P3/transient-tolerance"},
	{rule: "LS-3 custom revoke", name: "end-exchange-keeps", policy: patternBug(endExchange.Name(), endExchangeKeeps{}), seed: 1, prop: "LS-P3/transient-tolerance"},
	{rule: "LS-3 custom renew", name: "end-exchange-no-renew", policy: patternBug(endExchange.Name(), endExchangeStatic{}), seed: 1, prop: "LS-3/pattern-rules"},
	{rule: "LS-3 pattern panic", name: "panic-keeps-lease", policy: ls.Policy{PanicExpires: func() bool { return false }}, seed: 1, prop: "LS-3/patterns"},
	{rule: "LS-3 forward refused", name: "take-after-revoke", policy: bugPolicy("take-after-revoke"), seed: 1, prop: "LS-P1/no-delivery-after-expiry"},
	// LS-4
	{rule: "LS-4 resolved", name: "resolved-as-failed", policy: settlesBug("resolved", "failed"), seed: 1, prop: "LS-P3/transient-tolerance"},
	{rule: "LS-4 failed", name: "failed-as-resolved", policy: settlesBug("failed", "resolved"), seed: 1, prop: "LS-4/outcomes"},
	{rule: "LS-4 timeout", name: "timeout-as-revoked", policy: settlesBug("timeout", "revoked"), seed: 1, prop: "LS-4/outcomes"},
	{rule: "LS-4 revoked", name: "revoked-as-timeout", policy: settlesBug("revoked", "timeout"), seed: 1, prop: "LS-4/futures"},
	// LS-5
	{rule: "LS-5 open", name: "open-without-callback", player: ls.PlayerHooks{Callback: func() bool { return false }}, seed: 1, prop: "music/no-callback-refused"},
	{rule: "LS-5 refuse", name: "refuse-never", player: ls.PlayerHooks{Refuses: func(left, _ time.Duration) bool { return left <= 0 }}, seed: 115, prop: "music/refuse"},
	{rule: "LS-5 session", name: "session-not-returned", player: ls.PlayerHooks{Returns: func() bool { return false }}, seed: 1, prop: "LS-P3/transient-tolerance"},
	{rule: "LS-5 upload", name: "upload-due-term", player: ls.PlayerHooks{Due: func(left time.Duration) time.Duration { return left + time.Second }}, seed: 1, prop: "LS-4/outcomes"},
	{rule: "LS-5 end exchange", name: "no-end-exchange", player: ls.PlayerHooks{Ends: func() bool { return false }}, seed: 1, prop: "LS-P3/transient-tolerance"},
	{rule: "LS-5 match", name: "match-strict", player: ls.PlayerHooks{Notifies: func(r, th float64) bool { return r > th+0.1 }}, seed: 1, prop: "music/match"},
	{rule: "LS-5 no match", name: "match-always", player: ls.PlayerHooks{Notifies: func(float64, float64) bool { return true }}, seed: 4, prop: "music/match"},
	{rule: "LS-5 cleanup", name: "no-cleanup", player: ls.PlayerHooks{CleansUp: func() bool { return false }}, seed: 1, prop: "music/expiry-cleans-up"},
	// The initiator stops an exchange whose session ended three ways (its listener,
	// the release, the ruined upload): a player that never stops.
	{rule: "LS-5 stop", name: "never-stop", player: ls.PlayerHooks{Stops: func(string) bool { return false }}, seed: 1, prop: "LS-P4/reclamation"},
	{rule: "LS-5 session lost", name: "no-stop-on-dead-session", player: ls.PlayerHooks{Stops: func(why string) bool { return why != "session reference arrived dead" }}, seed: 148, prop: "LS-P4/reclamation"},
}

func settlesBug(from, to string) ls.Policy {
	return ls.Policy{Settles: func(o string) string {
		if o == from {
			return to
		}
		return o
	}}
}

func init() {
	for _, b := range ruleBugs {
		if b.model != "" {
			continue
		}
		b := b
		scenarios.Register(&scenarios.Scenario{Name: "test/rulebug-" + b.name, Help: "rule " + b.rule + " broken", Params: swarmParams,
			Build: func(bd *scenarios.Build) (*scenarios.Setup, error) { return swarmSetup(bd, b.policy, b.player) }})
	}
}

// checkModelBug checks portfolio configuration config with the bug planted.
func checkModelBug(t *testing.T, b ruleBug) *model.Result {
	t.Helper()
	ps, err := model.NewParams(ModelParams, portfolioConfig(t, b.model).Params)
	if err != nil {
		t.Fatal(err)
	}
	o, err := modelOptionsFrom(ps)
	if err != nil {
		t.Fatal(err)
	}
	o.Policy = b.policy
	res, err := model.Check(ModelSystem(o), model.Options{MaxStates: modelMaxStates})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRuleBugsCaught (see ruleBugs): every planted bug is caught by the property
// named, at its pinned swarm seed or in its portfolio configuration.
func TestRuleBugsCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the planted bugs (a swarm run or a model check each) run in the full suite")
	}
	search := os.Getenv("LEASING_RULEBUGS") == "search"
	only := os.Getenv("LEASING_RULEBUGS_ONLY") // comma-separated bug names
	for _, b := range ruleBugs {
		if only != "" && !slices.Contains(strings.Split(only, ","), b.name) {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			if b.model != "" {
				res := checkModelBug(t, b)
				if res.Violation == nil || res.Violation.Name != b.prop {
					t.Errorf("rule %s, bug %s, model %s: violation %v, want %s", b.rule, b.name, b.model, res.Violation, b.prop)
				}
				return
			}
			if search {
				res, err := scenarios.Sweep(scenarios.SweepOptions{Scenario: "test/rulebug-" + b.name, From: 1, To: 2000, StopAtFailure: true})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Failures) == 0 {
					t.Logf("SEARCH %s (%s): NOT CAUGHT on seeds 1-2000", b.name, b.rule)
					return
				}
				v := res.Failures[0]
				t.Logf("SEARCH %s (%s): seed %d %s %s", b.name, b.rule, v.Seed, v.Property, strings.SplitN(v.Detail, "\n", 2)[0])
				return
			}
			if b.seed == 0 {
				t.Skipf("rule %s: bug %s has no pinned seed", b.rule, b.name)
			}
			rep, err := scenarios.RunName("test/rulebug-"+b.name, scenarios.Options{Seed: b.seed})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(rep.Verdicts, func(v checker.Verdict) bool {
				return v.Property == b.prop && (v.Class == checker.Safety || v.Class == checker.Liveness)
			}) {
				t.Errorf("rule %s, bug %s, swarm seed %d: %s not violated (verdict %s)", b.rule, b.name, b.seed, b.prop, rep.Verdict)
			}
		})
	}
}

// TestEveryRuleHasABug: every branched rule of the rule map has a planted bug above.
func TestEveryRuleHasABug(t *testing.T) {
	have := map[string]bool{}
	for _, b := range ruleBugs {
		have[b.rule] = true
	}
	var missing []string
	for _, r := range sim.Rules("leasing") {
		if r.NoBranch == "" && !have[r.Tag] {
			missing = append(missing, r.Tag)
		}
	}
	tags := slices.Collect(maps.Keys(have))
	for _, tag := range tags {
		if !slices.ContainsFunc(sim.Rules("leasing"), func(r sim.RuleInfo) bool { return r.Tag == tag }) {
			missing = append(missing, fmt.Sprintf("(unknown tag %q)", tag))
		}
	}
	if len(missing) > 0 {
		t.Errorf("rules without a planted bug: %s", strings.Join(missing, "; "))
	}
}
