package sim

import (
	"slices"
	"strings"
	"sync"
)

// Storage is one node's stable storage: a key-value store that survives crashes.
// Values are deep copies taken at write time and are never mutated afterwards, so a
// Storage can be cloned by copying its map.
//
// A storage made by NewEncodedStorage (and its clones) keeps its entries in a slice
// sorted by key instead of a map, each with its canonical encoding computed when it
// is written: the model checker clones and fingerprints a storage after every write
// and evaluates invariants over every state's storages, and a handful of entries are
// cheaper to copy, scan and encode this way. Entries are never modified in place
// (Apply writes a new slice element only in a storage it may write: Clone copies the
// slice), so a stored storage may be read by several goroutines at once.
type Storage struct {
	m   map[string]any
	es  []encEntry // sorted by key; used instead of m when encoded is set
	enc bool
}

// encEntry is one entry of an encoded storage: key, value, and the canonical
// encoding of both as AppendState writes them.
type encEntry struct {
	key string
	v   any
	enc []byte
}

// entryBufs holds scratch buffers for encodeEntry.
var entryBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// encodeEntry returns the encoding of an entry in a slice of its own size.
func encodeEntry(key string, v any) []byte {
	bp := entryBufs.Get().(*[]byte)
	b := appendEntry((*bp)[:0], key, v)
	enc := slices.Clone(b)
	*bp = b
	entryBufs.Put(bp)
	return enc
}

// NewStorage returns an empty store.
func NewStorage() *Storage { return &Storage{m: map[string]any{}} }

// NewEncodedStorage returns an empty store that keeps its entries sorted, with their
// encodings (see Storage): for the model checker, which hashes every storage it
// makes. It behaves as one made by NewStorage in every other way.
func NewEncodedStorage() *Storage { return &Storage{enc: true} }

// find returns where key is, or would be, in an encoded storage's entries.
func (s *Storage) find(key string) (int, bool) {
	return slices.BinarySearchFunc(s.es, key, func(e encEntry, k string) int { return strings.Compare(e.key, k) })
}

// appendEntry appends one entry's canonical encoding: both kinds of storage encode
// their entries with it.
func appendEntry(b []byte, key string, v any) []byte { return AppendCanonical(appendString(b, key), v) }

// Apply performs writes in order (deep-copying values).
func (s *Storage) Apply(ws []Write) {
	if s.enc {
		for _, w := range ws {
			i, ok := s.find(w.Key)
			switch {
			case w.Delete:
				if ok {
					s.es = slices.Delete(s.es, i, i+1)
				}
				continue
			case !ok:
				s.es = slices.Insert(s.es, i, encEntry{})
			}
			v := DeepCopy(w.Value)
			s.es[i] = encEntry{key: w.Key, v: v, enc: encodeEntry(w.Key, v)}
		}
		return
	}
	if s.m == nil {
		s.m = map[string]any{}
	}
	for _, w := range ws {
		if w.Delete {
			delete(s.m, w.Key)
			continue
		}
		s.m[w.Key] = DeepCopy(w.Value)
	}
}

// Clone returns an independent copy (values are shared: they are immutable).
func (s *Storage) Clone() *Storage {
	if s.enc {
		es := make([]encEntry, len(s.es), len(s.es)+1)
		copy(es, s.es)
		return &Storage{es: es, enc: true}
	}
	c := &Storage{m: make(map[string]any, len(s.m))}
	for k, v := range s.m {
		c.m[k] = v
	}
	return c
}

// Len returns the number of keys.
func (s *Storage) Len() int {
	if s.enc {
		return len(s.es)
	}
	return len(s.m)
}

// Keys returns the keys in sorted order.
func (s *Storage) Keys() []string {
	if s.enc {
		ks := make([]string, len(s.es))
		for i, e := range s.es {
			ks[i] = e.key
		}
		return ks
	}
	ks := make([]string, 0, len(s.m))
	for k := range s.m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// All reports whether f holds for every stored record (f sees the value itself: it
// must not mutate it). The records are visited in no particular order, so use it for
// order-independent checks only (an invariant over every record, say); Keys gives the
// order.
func (s *Storage) All(f func(key string, v any) bool) bool {
	if s.enc {
		for _, e := range s.es {
			if !f(e.key, e.v) {
				return false
			}
		}
		return true
	}
	for k, v := range s.m {
		if !f(k, v) {
			return false
		}
	}
	return true
}

// Peek returns the stored value itself (not a copy); callers must not mutate it.
// Checkers use it to inspect final stable state.
func (s *Storage) Peek(key string) (any, bool) {
	if s.enc {
		if i, ok := s.find(key); ok {
			return s.es[i].v, true
		}
		return nil, false
	}
	v, ok := s.m[key]
	return v, ok
}

// AppendState appends a canonical encoding (keys in order). Both kinds of storage
// encode alike.
func (s *Storage) AppendState(b []byte) []byte {
	if s.enc {
		b = appendUvarint(b, uint64(len(s.es)))
		for _, e := range s.es {
			b = append(b, e.enc...)
		}
		return b
	}
	ks := s.Keys()
	b = appendUvarint(b, uint64(len(ks)))
	for _, k := range ks {
		b = appendEntry(b, k, s.m[k])
	}
	return b
}

// View returns a read-only view of s.
func (s *Storage) View() StableView { return StableView{s: s} }

// StableView is a read-only view of a node's stable storage.
type StableView struct{ s *Storage }

// Get returns a deep copy of the value stored under key.
func (v StableView) Get(key string) (any, bool) {
	if v.s == nil {
		return nil, false
	}
	x, ok := v.s.Peek(key)
	if !ok {
		return nil, false
	}
	return DeepCopy(x), true
}

// Keys returns the stored keys in sorted order.
func (v StableView) Keys() []string {
	if v.s == nil {
		return nil
	}
	return v.s.Keys()
}

// Len returns the number of stored keys.
func (v StableView) Len() int {
	if v.s == nil {
		return 0
	}
	return v.s.Len()
}

// Load returns a deep copy of the value stored under key, typed. It reports whether the
// key was present and panics if the stored value has another type.
func Load[T any](v StableView, key string) (T, bool) {
	var zero T
	x, ok := v.Get(key)
	if !ok {
		return zero, false
	}
	t, ok := x.(T)
	if !ok {
		panic("sim: stable value under " + key + " has another type")
	}
	return t, true
}
