package lsscen

import (
	"slices"
	"testing"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/scenarios"
)

// TestIndexAgainstHistory holds the parts of the index that stand in for a pass over
// the whole history to that pass, written plainly: the observations the whole-history
// properties read (index.scan) and the futures (found through refSlots instead of a
// map), on runs of every leasing scenario.
func TestIndexAgainstHistory(t *testing.T) {
	runs := []struct {
		name   string
		seed   uint64
		params map[string]string
	}{
		{"leasing/swarm", 1, nil}, {"leasing/swarm", 2, nil}, {"leasing/swarm", 3, map[string]string{"dup": "0.3"}},
		{"leasing/music-stable", 1, nil}, {"leasing/music-transient", 2, nil}, {"leasing/music-permanent", 3, nil},
	}
	for _, c := range runs {
		sc, err := scenarios.Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := scenarios.Run(sc, scenarios.Options{Seed: c.seed, Params: c.params})
		if err != nil {
			t.Fatal(err)
		}
		run := &checker.Run{Result: rep.Result, Scenario: sc.Name, Settled: rep.Settled}
		x := buildIndex(run)
		h := run.History()

		var want []int32
		kinds := map[string]int{}
		for i, o := range h {
			switch o.Value.(type) {
			case ls.ObsSend, ls.ObsListener, ls.ProbeView, ls.ProbeReleased, ls.ProbeMalformed, ls.MPEvent:
				want = append(want, int32(i))
				continue
			}
			if o.Kind == ls.KindProbeCtl || o.Kind == ls.KindProbeMisuse {
				want = append(want, int32(i))
			}
		}
		for o := range x.scanned {
			kinds[o.Kind]++
		}
		if !slices.Equal(x.scan, want) {
			t.Errorf("%s seed %d: the index lists %d observations for the whole-history properties, a pass over the history %d", c.name, c.seed, len(x.scan), len(want))
		}
		if c.name == "leasing/swarm" && (kinds[ls.KindProbeCtl] == 0 || kinds[ls.KindProbeMisuse] == 0 || kinds[ls.KindProbeView] == 0 || kinds[ls.KindSend] == 0) {
			t.Errorf("%s seed %d: the run lacks observations the test is about: %v", c.name, c.seed, kinds)
		}

		// Futures: first appearance order, call, first completion and count.
		byKey := map[futKey]int{}
		var futs []futObs
		for i := range h {
			o := &h[i]
			v, ok := o.Value.(ls.ObsFuture)
			if !ok {
				continue
			}
			k := futKey{o.Node, v.Future, v.Lease.GBoot}
			f, ok := byKey[k]
			if !ok {
				f = len(futs)
				byKey[k] = f
				futs = append(futs, futObs{key: k})
			}
			if o.Kind == ls.KindFutureCall {
				futs[f].call = o
			} else {
				if futs[f].done == 0 {
					futs[f].first = o
				}
				futs[f].done++
			}
		}
		if len(futs) == 0 || !slices.Equal(x.futs, futs) {
			t.Errorf("%s seed %d: the index has %d futures, a map over the history %d (or they differ)", c.name, c.seed, len(x.futs), len(futs))
		}
	}
}
