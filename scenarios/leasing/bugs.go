package lsscen

import (
	"slices"
	"strings"
	"time"

	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// Deliberately broken variants of the protocol, planted through the runtime's policy
// hooks (protocols/leasing/policy.go): the protocol code holds only the protocol, and
// each broken rule is written here. The model takes any of them as -p bug=NAME
// (grantor-late is one tick late there); the tests register each as a scenario
// test/leasing-NAME over the swarm or a music player and show that the property
// naming its fault catches it (broken_test.go, leasing_test.go). rulebugs_test.go
// plants one more per rule of the rule map.

// Bug is one deliberately broken variant.
type Bug struct {
	Name string
	// Help says what is broken, in a line.
	Help   string
	Policy ls.Policy
}

// grantorLate is the broken variant grantor-late (and, by a whole swarm term,
// grantor-lingers): the grantor's timer and its acceptance check run d after the
// lease's deadline, and the deadline it reports in its observations of messages is that
// late one (its grant and renewal records stay right).
func grantorLate(d time.Duration) ls.Policy {
	return ls.Policy{GrantorExpiry: func(deadline sim.Time) sim.Time { return deadline.Add(d) }}
}

// keepingSingleCall is the broken variant single-call-keeps: the single-call pattern
// forwards its message and forgets to revoke (it keeps the pattern's name).
type keepingSingleCall struct{}

func (keepingSingleCall) Name() string           { return ls.SingleCall{}.Name() }
func (keepingSingleCall) Receive(l *ls.LeaseCtl) { _ = l.Forward() }

// Bugs are the named broken variants, in order.
var Bugs = []Bug{
	{Name: "accept-after-expiry", Help: "the grantor keeps an expired lease and accepts (and renews on) messages that arrive after its deadline",
		Policy: ls.Policy{
			Accepts:  func(*ls.Export, sim.Time, bool) bool { return true },
			Reclaims: func(_ ls.End, cause string) bool { return cause != "timer" },
		}},
	{Name: "client-never-expires", Help: "the holder's timer does not fire while the grantor counts as disconnected",
		Policy: ls.Policy{HolderTimer: func(_ *ls.Import, inRange bool) bool { return inRange }}},
	{Name: "single-call-keeps", Help: "the single-call pattern forgets to revoke after its call",
		Policy: ls.Policy{Pattern: func(p ls.Interceptor) ls.Interceptor {
			if _, ok := p.(ls.SingleCall); ok {
				return keepingSingleCall{}
			}
			return p
		}}},
	{Name: "renew-min", Help: "renew takes the minimum of time left and renewal time, not the maximum",
		Policy: ls.Policy{RenewedLeft: func(left, d time.Duration) time.Duration { return min(left, d) }}},
	{Name: "no-buffer", Help: "messages sent while disconnected are discarded instead of buffered",
		Policy: ls.Policy{Enqueue: func(connected bool) (bool, bool) { return connected, connected }}},
	{Name: "listeners-on-revoke", Help: "revoke runs the expiry listeners too",
		Policy: ls.Policy{Listeners: func(ls.Side, ls.End) bool { return true }}},
	{Name: "ignore-piggyback", Help: "the holder ignores the grantor's piggybacked time left and keeps the deadline it resolved the reference with",
		Policy: ls.Policy{Piggyback: func(time.Duration, sim.Time, sim.Time) bool { return false }}},
	{Name: "take-after-revoke", Help: "a revoked lease still takes the messages already on their way (the grantor keeps the revoked server side accepting until its old deadline)",
		Policy: ls.Policy{
			Reclaims: func(how ls.End, _ string) bool { return how != ls.Revoked },
			Accepts: func(ex *ls.Export, now sim.Time, live bool) bool {
				return live || (ex.Ended == ls.Revoked && now < ex.Deadline)
			},
		}},
	{Name: "expire-notice-revokes", Help: "the holder takes the grantor's notice of an explicit expire for a revoke (its side ends as revoked, its listeners never run)",
		Policy: ls.Policy{NoticeEnd: func(ls.End) ls.End { return ls.Revoked }}},
	{Name: "no-tombstones", Help: "the grantor keeps nothing of a lease it revoked or expired explicitly, so a holder that missed the notice never hears of it again",
		Policy: ls.Policy{Tombstones: func(ls.End) bool { return false }}},
	{Name: "holder-short", Help: "the holder sets its timer to 70% of the grantor's time left (when it resolves the reference and on every piggybacked update)",
		Policy: ls.Policy{HolderLeft: func(left time.Duration) time.Duration { return left * 7 / 10 }}},
	// The protocol before swarm seeds 1983 and 4910 were found: an acknowledgement that
	// acknowledged nothing new (a server-side renewal's notice) restarted the
	// retransmission timer, postponing the resend of a message lost in a short outage
	// the discovery layer did not notice (LS-P3).
	{Name: "rto-restart-any-ack", Help: "every acknowledgement restarts the retransmission timer, also one that acknowledges nothing new",
		Policy: ls.Policy{RestartsRto: func(bool) bool { return true }}},
	{Name: "grantor-late", Help: "the grantor's timer and acceptance check run 300ms after the deadline, and it reports that late deadline", Policy: grantorLate(300 * time.Millisecond)},
	// A grantor whose side lingers one whole term (the swarm's 2s) after the holder's:
	// LS-P2's client → server bound is one renewal in flight, not two terms (issue 16).
	{Name: "grantor-lingers", Help: "the grantor's side lingers a whole swarm term (2s) after its deadline", Policy: grantorLate(2 * time.Second)},
}

// BugNamed returns the broken variant called name.
func BugNamed(name string) (Bug, bool) {
	i := slices.IndexFunc(Bugs, func(b Bug) bool { return b.Name == name })
	if i < 0 {
		return Bug{}, false
	}
	return Bugs[i], true
}

// BugNames lists the names of bugs, joined by sep.
func BugNames(bugs []Bug, sep string) string {
	names := make([]string, len(bugs))
	for i, b := range bugs {
		names[i] = b.Name
	}
	return strings.Join(names, sep)
}

// The swarm takes the variants as -p bug=NAME (guided sweeps and tools/guidedeval find
// them through scenarios.PlantedBugs).
func init() {
	var names []string
	for _, b := range Bugs {
		names = append(names, b.Name)
	}
	scenarios.SetBugs(names, "leasing/swarm")
}
