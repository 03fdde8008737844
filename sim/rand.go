package sim

import (
	"math"
	"math/bits"
)

// Rand is a small, fast, seeded pseudo-random stream (xoshiro256**, seeded through
// splitmix64). It is implemented here rather than taken from math/rand/v2 so that the
// exact sequence of every derived helper (IntN, Float64, ExpFloat64) is fixed by this
// repository, not by a Go release: a trace recorded today replays byte-identically with
// a later toolchain.
//
// The zero value is not useful; use NewRand or Stream.
type Rand struct{ s [4]uint64 }

// splitmix64 advances x and returns the next output; used for seeding and mixing.
func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Mix64 is a bijective 64-bit finaliser (splitmix64's output function).
func Mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// NewRand returns a stream seeded from seed.
func NewRand(seed uint64) *Rand {
	r := &Rand{}
	r.Seed(seed)
	return r
}

// Seed resets r to the stream for seed.
func (r *Rand) Seed(seed uint64) {
	x := seed
	for i := range r.s {
		r.s[i] = splitmix64(&x)
	}
}

// Stream returns the independent stream named by a concern and optional integers (for
// example Stream(seed, "link", from, to)). Streams for different names or integers are
// unrelated, so adding or removing draws on one concern never shifts another.
func Stream(seed uint64, concern string, ids ...int64) *Rand {
	return NewRand(StreamSeed(seed, concern, ids...))
}

// StreamSeed is the seed Stream would use.
func StreamSeed(seed uint64, concern string, ids ...int64) uint64 {
	h := uint64(14695981039346656037) // FNV-1a over the concern name
	for i := 0; i < len(concern); i++ {
		h ^= uint64(concern[i])
		h *= 1099511628211
	}
	x := Mix64(seed ^ Mix64(h))
	for _, id := range ids {
		x = Mix64(x ^ Mix64(uint64(id)+0x632be59bd9b4e019))
	}
	return x
}

func rotl(x uint64, k uint) uint64 { return (x << k) | (x >> (64 - k)) }

// Uint64 returns the next 64 random bits.
func (r *Rand) Uint64() uint64 {
	s := &r.s
	result := rotl(s[1]*5, 7) * 9
	t := s[1] << 17
	s[2] ^= s[0]
	s[3] ^= s[1]
	s[1] ^= s[2]
	s[0] ^= s[3]
	s[2] ^= t
	s[3] = rotl(s[3], 45)
	return result
}

// Uint64N returns a uniform value in [0, n). It panics if n == 0.
func (r *Rand) Uint64N(n uint64) uint64 {
	if n == 0 {
		panic("sim: Uint64N(0)")
	}
	// Lemire's multiply-shift with rejection: unbiased.
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// IntN returns a uniform int in [0, n). It panics if n <= 0.
func (r *Rand) IntN(n int) int {
	if n <= 0 {
		panic("sim: IntN of non-positive bound")
	}
	return int(r.Uint64N(uint64(n)))
}

// Int64Range returns a uniform value in [lo, hi] (inclusive). lo > hi panics.
func (r *Rand) Int64Range(lo, hi int64) int64 {
	if lo > hi {
		panic("sim: Int64Range with lo > hi")
	}
	span := uint64(hi - lo)
	if span == math.MaxUint64 {
		return int64(r.Uint64())
	}
	return lo + int64(r.Uint64N(span+1))
}

// Float64 returns a uniform value in [0, 1).
func (r *Rand) Float64() float64 {
	return float64(r.Uint64()>>11) * (1.0 / (1 << 53))
}

// Bernoulli reports true with probability p (p <= 0 never, p >= 1 always). It always
// consumes exactly one draw, so a change of p never shifts the stream.
func (r *Rand) Bernoulli(p float64) bool {
	u := r.Float64()
	return u < p
}

// ExpFloat64 returns an exponentially distributed value with mean 1.
func (r *Rand) ExpFloat64() float64 {
	// Inverse transform on (0,1]: never log(0).
	u := 1 - r.Float64()
	return -math.Log(u)
}

// Perm returns a random permutation of [0, n).
func (r *Rand) Perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}
