package model

import (
	"encoding/binary"

	"simrun/sim"
)

// hasher is a streaming 64-bit hash over words: h ← Mix64(h ⊕ w) per word, a chain of
// bijections, so two different word sequences of equal length collide only by chance.
// It is deterministic across runs and platforms (fingerprints never depend on a random
// seed, so exploration order and reported collisions are reproducible).
type hasher struct{ h uint64 }

func newHasher(domain uint64) hasher { return hasher{h: sim.Mix64(domain ^ 0x243f6a8885a308d3)} }

func (x *hasher) word(w uint64) { x.h = sim.Mix64(x.h^w) + 0x9e3779b97f4a7c15 }

func (x *hasher) sum() uint64 { return sim.Mix64(x.h) }

// hashBytes hashes a byte string (length included, so prefixes differ).
func hashBytes(domain uint64, b []byte) uint64 {
	x := newHasher(domain)
	x.word(uint64(len(b)))
	for len(b) >= 8 {
		x.word(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	if len(b) > 0 {
		var t [8]byte
		copy(t[:], b)
		x.word(binary.LittleEndian.Uint64(t[:]))
	}
	return x.sum()
}

// hashString hashes a string (timer IDs).
func hashString(s string) uint64 {
	x := newHasher(7)
	x.word(uint64(len(s)))
	for len(s) >= 8 {
		x.word(binary.LittleEndian.Uint64([]byte(s[:8])))
		s = s[8:]
	}
	if len(s) > 0 {
		var t [8]byte
		copy(t[:], s)
		x.word(binary.LittleEndian.Uint64(t[:]))
	}
	return x.sum()
}
