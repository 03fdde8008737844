package lsscen

import (
	"slices"

	"github.com/simrun-dev/simrun/scenarios"
)

// The deliberately broken variants of bugs.go, registered as test scenarios: each is
// an ordinary leasing scenario whose runtime runs the variant's policy.
var brokenBases = map[string]string{ // variant → base: music-stable, music-transient, music-permanent or swarm (the default)
	"client-never-expires": "music-permanent",
	"renew-min":            "music-stable",
	"listeners-on-revoke":  "music-stable",
}

func init() {
	register := func(name string, b Bug, base string) {
		params := slices.Clone(swarmParams)
		build := func(bd *scenarios.Build) (*scenarios.Setup, error) { return SwarmSetup(bd, b.Policy) }
		if base != "swarm" {
			params = slices.Clone(musicParams)
			variant := base[len("music-"):]
			build = func(bd *scenarios.Build) (*scenarios.Setup, error) { return MusicSetup(bd, variant, b.Policy) }
		}
		scenarios.Register(&scenarios.Scenario{Name: "test/leasing-" + name, Help: "broken: " + b.Help, Params: params, Build: build})
	}
	for _, b := range Bugs {
		base := brokenBases[b.Name]
		if base == "" {
			base = "swarm"
		}
		register(b.Name, b, base)
	}
	hs, _ := BugNamed("holder-short")
	register("holder-short-permanent", hs, "music-permanent")
}
