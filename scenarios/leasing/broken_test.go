package lsscen

import (
	"slices"
	"time"

	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/scenarios"
)

// Deliberately broken variants of the protocol, registered as test scenarios: each is
// an ordinary leasing scenario whose runtime has one Broken flag on.
var brokenVariants = []struct {
	name   string
	broken ls.Broken
	base   string // music-stable, music-transient, music-permanent or swarm
}{
	{"accept-after-expiry", ls.Broken{AcceptAfterExpiry: true}, "swarm"},
	{"client-never-expires", ls.Broken{ClientNeverExpires: true}, "music-permanent"},
	{"single-call-keeps", ls.Broken{SingleCallKeeps: true}, "swarm"},
	{"renew-min", ls.Broken{RenewMin: true}, "music-stable"},
	{"no-buffer", ls.Broken{NoBuffer: true}, "swarm"},
	{"listeners-on-revoke", ls.Broken{ListenersOnRevoke: true}, "music-stable"},
	{"ignore-piggyback", ls.Broken{IgnorePiggyback: true}, "swarm"},
	{"take-after-revoke", ls.Broken{TakeAfterRevoke: true}, "swarm"},
	{"expire-notice-revokes", ls.Broken{ExpireNoticeRevokes: true}, "swarm"},
	{"no-tombstones", ls.Broken{NoTombstones: true}, "swarm"},
	{"holder-short", ls.Broken{HolderShort: true}, "swarm"},
	{"holder-short-permanent", ls.Broken{HolderShort: true}, "music-permanent"},
	{"grantor-late", ls.Broken{GrantorLate: 300 * time.Millisecond}, "swarm"},
	// A grantor whose side lingers one whole term (the swarm's 2s) after the holder's:
	// LS-P2's client → server bound is one renewal in flight, not two terms (issue 16).
	{"grantor-lingers", ls.Broken{GrantorLate: 2 * time.Second}, "swarm"},
}

func init() {
	for _, v := range brokenVariants {
		v := v
		var params []scenarios.Param
		build := func(b *scenarios.Build) (*scenarios.Setup, error) { return SwarmSetup(b, v.broken) }
		switch v.base {
		case "swarm":
			params = slices.Clone(swarmParams)
		default:
			params = slices.Clone(musicParams)
			variant := v.base[len("music-"):]
			build = func(b *scenarios.Build) (*scenarios.Setup, error) { return MusicSetup(b, variant, v.broken) }
		}
		scenarios.Register(&scenarios.Scenario{Name: "test/leasing-" + v.name, Help: "broken: " + v.name, Params: params, Build: build})
	}
}
