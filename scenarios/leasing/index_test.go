package lsscen

import (
	"cmp"
	"slices"
	"testing"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
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
			case *ls.ObsSend, *ls.ObsListener, ls.ProbeView, ls.ProbeReleased, ls.ProbeMalformed, ls.MPEvent:
				want = append(want, int32(i))
				continue
			}
			if o.Kind == ls.KindProbeCtl || o.Kind == ls.KindProbeMisuse || o.Kind == ls.KindMPDone {
				want = append(want, int32(i))
			}
		}
		for o := range x.scanned {
			kinds[o.Kind]++
		}
		if !slices.Equal(x.scan, want) {
			t.Errorf("%s seed %d: the index lists %d observations for the whole-history properties, a pass over the history %d", c.name, c.seed, len(x.scan), len(want))
		}
		// eachLease and eachRef hand out, in order, what lease finds by a lookup.
		for _, each := range []struct {
			ids  []ls.RefID
			iter func(func(ls.RefID, *leaseObs) bool)
		}{{x.leases, x.eachLease}, {x.refs, x.eachRef}} {
			n := 0
			for id, l := range each.iter {
				s, ok := x.by.get(id)
				if id != each.ids[n] || !ok || x.obs.at(s) != l {
					t.Fatalf("%s seed %d: %v (#%d): not the listed reference, or not the slot a lookup finds", c.name, c.seed, id, n)
				}
				n++
			}
			if n != len(each.ids) || n == 0 {
				t.Fatalf("%s seed %d: %d listed, %d yielded", c.name, c.seed, len(each.ids), n)
			}
		}
		if c.name == "leasing/swarm" && (kinds[ls.KindProbeCtl] == 0 || kinds[ls.KindProbeMisuse] == 0 || kinds[ls.KindProbeView] == 0 || kinds[ls.KindSend] == 0 || kinds[ls.KindMPDone] == 0) {
			t.Errorf("%s seed %d: the run lacks observations the test is about: %v", c.name, c.seed, kinds)
		}

		// Futures: first appearance order, call, first completion and count.
		byKey := map[futKey]int{}
		var futs []futObs
		for i := range h {
			o := &h[i]
			v, ok := o.Value.(*ls.ObsFuture)
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

// TestRefSlotsAgainstMap holds refSlots to a plain map on references that use every
// path: dense tables for many grantor incarnations (negative and large grantors and
// boots among them), numbers out of the tables' range, far references, and two
// references with the same number and grantor but another holder.
func TestRefSlotsAgainstMap(t *testing.T) {
	r := sim.Rand{}
	r.Seed(7)
	pick := func(vs ...int64) int64 { return vs[r.Uint64N(uint64(len(vs)))] }
	t1 := refSlots{m: map[ls.RefID]int32{}}
	want := map[ls.RefID]int32{}
	for i := range 20000 {
		id := ls.RefID{
			Grantor: sim.NodeID(pick(0, 1, 2, 3, -1, 1<<12, 1<<12+5, 1<<30)),
			GBoot:   uint32(pick(0, 1, 2, 7, 1<<12-1, 1<<12, 1<<31)),
			N:       pick(0, 1, 2, 3, 50, int64(r.Uint64N(300)), maxDense-1, maxDense, -4),
			Holder:  sim.NodeID(pick(0, 1, 2)),
			HBoot:   uint32(pick(0, 1)),
		}
		if id.N == maxDense-1 && (id.Grantor != 1 || id.GBoot != 1) {
			// the top of a dense table on one incarnation only: a table grows to the
			// highest number it holds (44 MiB here), and 56 of them took 4.7 GiB
			id.N = 3
		}
		s, ok := t1.get(id)
		w, wok := want[id]
		if ok != wok || s != w {
			t.Fatalf("step %d: get(%+v) = %d, %v; a map says %d, %v", i, id, s, ok, w, wok)
		}
		if !ok {
			t1.put(id, int32(i))
			want[id] = int32(i)
		}
	}
	if len(t1.tables) == 0 || len(t1.m) == 0 {
		t.Fatalf("a path went untested: %d tables, %d in the map", len(t1.tables), len(t1.m))
	}
}

// TestSortOps holds sortOps to slices.SortFunc on random operation lists, and checks
// that it reports equal points (where the caller falls back to slices.SortFunc).
func TestSortOps(t *testing.T) {
	r := sim.Rand{}
	r.Seed(3)
	for n := range 2000 {
		ops := make([]leaseOp, r.IntN(40))
		for i := range ops {
			ops[i] = leaseOp{at: int64(r.Uint64N(uint64(len(ops)*3 + 1))), in: LinIn{Seq: int64(i)}}
		}
		want := slices.Clone(ops)
		slices.SortFunc(want, func(a, b leaseOp) int { return cmp.Compare(a.at, b.at) })
		distinct := true
		for i := 1; i < len(want); i++ {
			distinct = distinct && want[i].at != want[i-1].at
		}
		got := slices.Clone(ops)
		if ok := sortOps(got); ok != distinct || (ok && !slices.Equal(got, want)) {
			t.Fatalf("list %d: sortOps says distinct=%v (want %v), order %v, want %v", n, ok, distinct, got, want)
		}
	}
}
