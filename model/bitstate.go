package model

import (
	"math"
	"math/bits"

	"github.com/simrun-dev/simrun/sim"
)

// Bitstate (Holzmann's supertrace) stores no state and no fingerprint: each state sets
// k bits of a fixed array, chosen by k hash functions of its fingerprint, and a state
// whose k bits are all set is taken as seen. Memory is the array, whatever the number
// of states; the price is that a new state whose bits other states happened to set is
// never explored (nor are the states only it leads to). So a bitstate search proves
// nothing when it finds nothing — its outcome is "sampled", like random walks — but a
// violation it finds is real (its path replays). The search estimates what it missed:
// when i states are stored the fraction of bits set is f(i), a new state is falsely
// taken as seen with probability p(i) = f(i)^k, and each stored state stands, on
// average, for p(i)/(1−p(i)) new states rejected at that fill: their sum estimates the
// states taken for seen ones (Holzmann, "An Analysis of Bitstate Hashing", 1998). It
// is a lower bound of what was missed: the states reachable only through a state taken
// for seen are not counted (on a grid, a 4 KiB array explored 12 063 of 40 000 states
// and estimated 1 861 missed). Several searches with different seeds (their own hash functions and
// successor orders: swarm verification) miss different states.

// bitstateK is the number of hash functions (Spin's default is 3).
const bitstateK = 3

type bitstate struct {
	words  []uint64
	m      uint64 // bits
	salt   uint64
	set    uint64 // bits set
	stored int64
	missed float64 // Σ p/(1−p) over the stored states
}

func newBitstate(bytes int64, seed uint64) *bitstate {
	w := max(1, bytes/8)
	return &bitstate{words: make([]uint64, w), m: uint64(w) * 64, salt: sim.Mix64(seed ^ 0xb175747e)}
}

// positions are fp's k bit positions: double hashing (Kirsch and Mitzenmacher), two
// independent hashes of the salted fingerprint.
func (b *bitstate) positions(fp uint64) [bitstateK]uint64 {
	h1 := sim.Mix64(fp ^ b.salt)
	h2 := sim.Mix64(h1^0x2545f4914f6cdd1d) | 1
	var ps [bitstateK]uint64
	for i := range ps {
		ps[i] = (h1 + uint64(i)*h2) % b.m
	}
	return ps
}

func (b *bitstate) contains(fp uint64) bool {
	for _, p := range b.positions(fp) {
		if b.words[p/64]&(1<<(p%64)) == 0 {
			return false
		}
	}
	return true
}

// add sets fp's bits; it reports whether some were clear (a new state).
func (b *bitstate) add(fp uint64) bool {
	fresh := false
	for _, p := range b.positions(fp) {
		w, bit := &b.words[p/64], uint64(1)<<(p%64)
		if *w&bit == 0 {
			*w |= bit
			b.set++
			fresh = true
		}
	}
	if fresh {
		b.stored++
		f := float64(b.set) / float64(b.m)
		if p := math.Pow(f, bitstateK); p < 1 {
			b.missed += p / (1 - p)
		} else {
			b.missed = math.Inf(1)
		}
	}
	return fresh
}

// bytes is the array's size.
func (b *bitstate) bytes() int64 { return int64(len(b.words)) * 8 }

// fill is the fraction of bits set.
func (b *bitstate) fill() float64 {
	n := 0
	for _, w := range b.words {
		n += bits.OnesCount64(w)
	}
	return float64(n) / float64(b.m)
}
