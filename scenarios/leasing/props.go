package lsscen

import (
	"time"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
)

// env is what a run's properties know about its setup: the ground truth of the
// environment and the runtime configuration (for the bounds).
type env struct {
	g   *ground
	cfg *ls.Config
	li  *lazyIndex
}

func newEnv(g *ground, cfg *ls.Config) *env { return &env{g: g, cfg: cfg, li: &lazyIndex{}} }

// flush bounds how long a reconnected holder takes to get its buffer across: hear a
// beacon (or retransmit), then one latency.
func (e *env) flush() time.Duration {
	return max(e.cfg.Beacon+e.g.lmax, e.cfg.EffectiveRTO()) + e.g.lmax + 10*time.Millisecond
}

// margin is the slack of the transient-tolerance check for a lease of the given
// period: detection and recovery of the discovery layer, retransmission, a few
// latencies, clock disagreement over the period and steps.
func (e *env) margin(period time.Duration) time.Duration {
	return e.cfg.EffectiveSilence() + e.cfg.Beacon + e.cfg.EffectiveRTO() + 4*e.g.lmax +
		e.g.skewOf(period) + e.g.steps + 50*time.Millisecond
}

// bsc bounds how long after its grantor's side ends the holder's side ends (LS-P2,
// server → client), for a lease of the given period: one latency plus the clocks'
// disagreement over the period plus the clock steps (and the time that was left, for
// a revoke whose notice is lost).
func (e *env) bsc(period, left time.Duration) time.Duration {
	return e.g.stretch(left) + e.g.lmax + e.g.skewOf(period) + e.g.steps + 2*time.Millisecond
}

// bcs bounds how long after the holder's side ends the grantor's side ends (LS-P2,
// client → server), for a lease of the given period: one renewal in flight when the
// holder's side ended may still renew the grantor's side by one period (stretched by
// the grantor's drift), plus the two clocks' disagreement over that period, two
// latencies and the clock steps. It used to allow two stretched periods, so a grantor
// lingering a whole extra term passed (issue 16); this bound held on leasing/swarm
// seeds 1–3300 and every leasing test.
func (e *env) bcs(period time.Duration) time.Duration {
	return e.g.stretch(period) + e.g.skewOf(period) + 2*e.g.lmax + e.g.steps + 10*time.Millisecond
}

// leasingProperties are checked on every run of every leasing scenario.
func (e *env) leasingProperties() []checker.Property {
	return []checker.Property{
		// First: a broken user pattern is the root cause of whatever else fails.
		{Name: "LS-3/patterns", Class: checker.Safety, Check: e.patterns},
		{Name: "LS-P1/no-delivery-after-expiry", Class: checker.Safety, Check: e.noDeliveryAfterExpiry},
		{Name: "LS-P2/symmetric-expiry", Class: checker.Safety, Check: e.symmetricExpiry},
		{Name: "LS-P3/transient-tolerance", Class: checker.Safety, Check: e.transientTolerance},
		{Name: "LS-P4/reclamation", Class: checker.Safety, Check: e.reclamation, NeedsCompleteRun: true},
		{Name: "LS-P5/single-call", Class: checker.Safety, Check: e.singleCall},
		e.linearizable(),
		{Name: "LS-4/futures", Class: checker.Safety, Check: e.futures},
		{Name: "LS-2/misuse-refused", Class: checker.Safety, Check: e.misuse},
		{Name: "LS-3/released-dropped", Class: checker.Safety, Check: releasedDropped},
		{Name: "LS-1/buffered-until-acked", Class: checker.Safety, Check: e.bufferedUntilAcked},
		{Name: "LS-1/no-send-after-expiry", Class: checker.Safety, Check: e.noSendAfterExpiry},
		{Name: "LS-2/released-after-listeners", Class: checker.Safety, Check: e.releasedAfterListeners},
		{Name: "LS-2/pattern-view", Class: checker.Safety, Check: e.patternView},
		{Name: "music/no-callback-refused", Class: checker.Safety, Check: e.noCallbackRefused},
	}
}

// allProperties are leasingProperties, the rule checks (rules.go) and the music
// player's rules.
func (e *env) allProperties(pc *ls.PlayerConfig) []checker.Property {
	return append(append(e.leasingProperties(), e.ruleProperties()...), e.musicRules(pc)...)
}
