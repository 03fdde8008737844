package sim

import (
	"reflect"
	"sync"
)

// RenameNodeIDs returns a deep copy of v in which every NodeID value is replaced by
// f(id): struct fields, slice and array elements, map keys and values, through pointers
// and interfaces, unexported fields included (as DeepCopy). Env (-1) is kept. f must be
// a bijection on the node IDs (a permutation), or map keys may collide. Values of other
// types that name nodes — an int index, a node name in a string — are not touched:
// declare such fields as NodeID, or rename them in a RenameNodes method of your own.
//
// The model checker's symmetry reduction renames node states, messages, stable values
// and ghost values with it; a type whose renamed value needs more (a slice of NodeIDs
// kept sorted, say) implements RenameNodes(func(NodeID) NodeID) any, typically by
// calling RenameNodeIDs and then re-sorting.
func RenameNodeIDs[T any](v T, f func(NodeID) NodeID) T {
	src := reflect.ValueOf(&v).Elem()
	dst := reflect.New(src.Type()).Elem()
	copyValue(dst, src, f, 0)
	out, _ := dst.Interface().(T) // a nil interface value stays the zero T
	return out
}

var nodeIDType = reflect.TypeFor[NodeID]()

// idCache remembers whether a type can hold a NodeID (an interface can: its dynamic
// value decides, at copy time).
var (
	idMu    sync.RWMutex
	idCache = map[reflect.Type]bool{}
)

// holdsNodeID reports whether values of t may contain a NodeID.
func holdsNodeID(t reflect.Type) bool {
	idMu.RLock()
	h, ok := idCache[t]
	idMu.RUnlock()
	if ok {
		return h
	}
	h = computeHoldsID(t, map[reflect.Type]bool{})
	idMu.Lock()
	idCache[t] = h
	idMu.Unlock()
	return h
}

func computeHoldsID(t reflect.Type, visiting map[reflect.Type]bool) bool {
	if t == nodeIDType {
		return true
	}
	if visiting[t] {
		return false // a recursive type: decided where the recursion started
	}
	visiting[t] = true
	defer delete(visiting, t)
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return computeHoldsID(t.Elem(), visiting)
	case reflect.Map:
		return computeHoldsID(t.Key(), visiting) || computeHoldsID(t.Elem(), visiting)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if computeHoldsID(t.Field(i).Type, visiting) {
				return true
			}
		}
	case reflect.Interface:
		return true // decided per value
	}
	return false
}
