package sim

import "slices"

// Storage is one node's stable storage: a key-value store that survives crashes.
// Values are deep copies taken at write time and are never mutated afterwards, so a
// Storage can be cloned by copying its map.
type Storage struct {
	m map[string]any
}

// NewStorage returns an empty store.
func NewStorage() *Storage { return &Storage{m: map[string]any{}} }

// Apply performs writes in order (deep-copying values).
func (s *Storage) Apply(ws []Write) {
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
	c := &Storage{m: make(map[string]any, len(s.m))}
	for k, v := range s.m {
		c.m[k] = v
	}
	return c
}

// Len returns the number of keys.
func (s *Storage) Len() int { return len(s.m) }

// Keys returns the keys in sorted order.
func (s *Storage) Keys() []string {
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
	v, ok := s.m[key]
	return v, ok
}

// AppendState appends a canonical encoding (keys in order).
func (s *Storage) AppendState(b []byte) []byte {
	ks := s.Keys()
	b = appendUvarint(b, uint64(len(ks)))
	for _, k := range ks {
		b = appendString(b, k)
		b = AppendCanonical(b, s.m[k])
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
	x, ok := v.s.m[key]
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
	return len(v.s.m)
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
