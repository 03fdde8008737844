package leasing

import (
	"encoding/binary"
	"maps"
	"slices"

	"github.com/simrun-dev/simrun/sim"
)

// Fast copies and canonical encodings of a device, for the model checker (sim.Cloner,
// sim.StateEncoder). The encoding covers every field that can influence behaviour, in
// a fixed order with maps in key order; it leaves out LastNow (read only by the leak
// report at the end of a simulation) and the configuration (shared and constant).

// Clone implements sim.Cloner.
func (d *Device) Clone() sim.Node {
	c := &Device{RT: d.RT.clone()}
	switch a := d.App.(type) {
	case nil:
	case AppCloner:
		c.App = a.CloneApp()
	default:
		c.App = sim.DeepCopy(d.App)
	}
	return c
}

// AppCloner is implemented by applications that copy themselves faster than
// sim.DeepCopy (the model checker copies devices at every step). An application can
// likewise implement sim.StateEncoder for its part of the fingerprint.
type AppCloner interface{ CloneApp() App }

func (rt *Runtime) clone() Runtime {
	c := *rt
	c.Exports = make(map[RefID]*Export, len(rt.Exports))
	for k, v := range rt.Exports {
		e := *v
		e.Listeners = slices.Clone(v.Listeners)
		c.Exports[k] = &e
	}
	c.Imports = make(map[RefID]*Import, len(rt.Imports))
	for k, v := range rt.Imports {
		i := *v
		i.Buf = slices.Clone(v.Buf) // calls are never mutated in place: a shallow copy of the slice suffices
		i.Listeners = slices.Clone(v.Listeners)
		c.Imports[k] = &i
	}
	c.Tombs = maps.Clone(rt.Tombs)
	c.TombOrder = slices.Clone(rt.TombOrder)
	c.tombAt = slices.Clone(rt.tombAt)
	c.Peers = slices.Clone(rt.Peers)
	c.Futures = make(map[int64]*FutureRec, len(rt.Futures))
	for k, v := range rt.Futures {
		f := *v
		c.Futures[k] = &f
	}
	c.Async = slices.Clone(rt.Async)
	// A copy scans its few sides instead of keeping deadline queues: the model checker
	// copies a device at every step, and would rebuild them every time.
	c.exportQ, c.importQ, c.rtoQ, c.scan = nil, nil, nil, true
	c.releases, c.ctl = nil, nil
	c.obs = obsArena{} // the history may point into the original's arrays
	c.lastEx, c.lastIm = nil, nil
	return c
}

// AppendState implements sim.StateEncoder.
func (d *Device) AppendState(b []byte) []byte {
	b = d.RT.appendState(b)
	return sim.AppendCanonical(b, d.App)
}

func putRef(b []byte, r RefID) []byte {
	b = binary.AppendVarint(b, int64(r.Grantor))
	b = binary.AppendUvarint(b, uint64(r.GBoot))
	b = binary.AppendVarint(b, r.N)
	b = binary.AppendVarint(b, int64(r.Holder))
	return binary.AppendUvarint(b, uint64(r.HBoot))
}

func putStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func putStrs(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = putStr(b, s)
	}
	return b
}

func putBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func putArmed(b []byte, a armed) []byte {
	b = putBool(b, a.On)
	return binary.AppendVarint(b, int64(a.At))
}

func (rt *Runtime) appendState(b []byte) []byte {
	b = binary.AppendVarint(b, int64(rt.Self))
	b = binary.AppendUvarint(b, uint64(rt.Boot))
	b = binary.AppendVarint(b, rt.NextN)
	b = binary.AppendUvarint(b, uint64(len(rt.Peers)))
	for _, p := range rt.Peers {
		b = binary.AppendVarint(b, int64(p.ID))
		b = binary.AppendUvarint(b, uint64(p.Boot))
		b = putBool(b, p.Up)
		b = binary.AppendVarint(b, int64(p.Last))
	}
	ex := sortedKeys(rt.Exports)
	b = binary.AppendUvarint(b, uint64(len(ex)))
	for _, id := range ex {
		e := rt.Exports[id]
		b = putRef(b, id)
		b = putStr(b, e.Object)
		b = putPattern(b, e.Pattern)
		b = binary.AppendVarint(b, int64(e.Term))
		b = binary.AppendVarint(b, int64(e.Deadline))
		b = binary.AppendVarint(b, e.Expected)
		b = putStrs(b, e.Listeners)
		b = append(b, byte(e.Ended))
	}
	im := sortedKeys(rt.Imports)
	b = binary.AppendUvarint(b, uint64(len(im)))
	for _, id := range im {
		i := rt.Imports[id]
		b = putRef(b, id)
		b = putStr(b, i.Object)
		b = putStr(b, i.Pattern)
		b = binary.AppendVarint(b, int64(i.Term))
		b = binary.AppendVarint(b, int64(i.Deadline))
		b = binary.AppendVarint(b, int64(i.Until))
		b = binary.AppendVarint(b, i.Next)
		b = binary.AppendVarint(b, i.Acked)
		b = binary.AppendUvarint(b, uint64(len(i.Buf)))
		for _, c := range i.Buf {
			b = putCall(b, c)
		}
		b = putBool(b, i.RtoOn)
		b = binary.AppendVarint(b, int64(i.RtoAt))
		b = putBool(b, i.Revoking)
		b = putStrs(b, i.Listeners)
	}
	b = binary.AppendUvarint(b, uint64(len(rt.TombOrder)))
	for _, id := range rt.TombOrder {
		t := rt.Tombs[id]
		b = putRef(b, id)
		b = binary.AppendVarint(b, int64(t.Deadline))
		b = binary.AppendVarint(b, t.Expected)
		b = append(b, byte(t.How))
	}
	fs := rt.futureIDs()
	b = binary.AppendUvarint(b, uint64(len(fs)))
	for _, n := range fs {
		f := rt.Futures[n]
		b = binary.AppendVarint(b, f.ID)
		b = putStr(b, f.Tag)
		b = putRef(b, f.Lease)
	}
	b = binary.AppendUvarint(b, uint64(len(rt.Async)))
	for _, e := range rt.Async {
		b = sim.AppendCanonical(b, e)
	}
	b = putArmed(b, rt.LeaseT)
	b = putArmed(b, rt.RtoT)
	b = putArmed(b, rt.SilenceT)
	return putBool(b, rt.AsyncArmed)
}

// putPattern encodes an interceptor: the built-in patterns by a byte, any other by its
// type and canonical value.
func putPattern(b []byte, p Interceptor) []byte {
	switch p.(type) {
	case nil:
		return append(b, 0)
	case Basic:
		return append(b, 1)
	case RenewOnCall:
		return append(b, 2)
	case SingleCall:
		return append(b, 3)
	}
	return sim.AppendCanonical(append(b, 4), p)
}

// putCall encodes a buffered call (its passed references are identities only: the rest
// is filled in at transmission).
func putCall(b []byte, c Call) []byte {
	b = binary.AppendVarint(b, c.Seq)
	b = append(b, byte(c.Op))
	b = putStr(b, c.Method)
	if c.Args == nil {
		b = append(b, 0)
	} else {
		b = sim.AppendCanonical(append(b, 1), c.Args)
	}
	b = binary.AppendVarint(b, int64(c.D))
	b = binary.AppendUvarint(b, uint64(len(c.Pass)))
	for _, p := range c.Pass {
		b = putRef(b, p.ID)
	}
	if c.Reply == nil {
		return append(b, 0)
	}
	return putRef(append(b, 1), c.Reply.ID)
}
