package model

import (
	"encoding/binary"

	"github.com/simrun-dev/simrun/sim"
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

// Hasher builds the 64-bit fingerprint of a structured state, field by field, for a
// Spec's Fingerprint function: the same streaming hash the checker uses for actor
// states (deterministic across runs and platforms, length-prefixed strings and byte
// slices, so that adjacent fields cannot run into each other). The zero value is not
// ready: use NewHasher.
//
//	func fp(s state) uint64 {
//		h := model.NewHasher()
//		h.Int(s.pc)
//		h.Bool(s.flag)
//		h.String(s.leader)
//		return h.Sum()
//	}
type Hasher struct{ x hasher }

// NewHasher returns a Hasher ready for words.
func NewHasher() Hasher { return Hasher{x: newHasher(0x5eed)} }

// Uint64 adds a word.
func (h *Hasher) Uint64(w uint64) { h.x.word(w) }

// Int adds an integer.
func (h *Hasher) Int(i int) { h.x.word(uint64(i)) }

// Bool adds a boolean.
func (h *Hasher) Bool(b bool) {
	if b {
		h.x.word(1)
	} else {
		h.x.word(0)
	}
}

// String adds a string, length first.
func (h *Hasher) String(s string) { h.x.word(hashString(s)) }

// Bytes adds a byte slice, length first.
func (h *Hasher) Bytes(b []byte) { h.x.word(hashBytes(11, b)) }

// Sum returns the fingerprint of the words added so far.
func (h *Hasher) Sum() uint64 { return h.x.sum() }

// Fingerprint hashes any plain value (structs, slices, maps in key order, pointers
// followed) through its canonical encoding, sim.AppendCanonical: equal values give
// equal fingerprints whatever their maps' iteration order or their slices' capacity.
// It reflects, so a Hasher is faster on a hot path; as a Spec's Fingerprint it is the
// no-effort choice.
func Fingerprint(v any) uint64 { return hashBytes(13, sim.AppendCanonical(nil, v)) }
