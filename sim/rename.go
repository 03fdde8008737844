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
	renameCopy(dst, src, f, 0)
	out, _ := dst.Interface().(T) // a nil interface value stays the zero T
	return out
}

var nodeIDType = reflect.TypeFor[NodeID]()

func renameCopy(dst, src reflect.Value, f func(NodeID) NodeID, depth int) {
	if depth > 1000 {
		panic("sim: RenameNodeIDs: value too deep (pointer cycle?)")
	}
	t := src.Type()
	if t == nodeIDType {
		id := NodeID(src.Int())
		if id != Env {
			id = f(id)
		}
		dst.SetInt(int64(id))
		return
	}
	if src.Kind() != reflect.Interface && !holdsNodeID(t) {
		deepCopy(dst, src, depth)
		return
	}
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		n := reflect.New(t.Elem())
		renameCopy(n.Elem(), src.Elem(), f, depth+1)
		dst.Set(n)
	case reflect.Slice:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		n := reflect.MakeSlice(t, src.Len(), src.Len())
		for i := 0; i < src.Len(); i++ {
			renameCopy(n.Index(i), src.Index(i), f, depth+1)
		}
		dst.Set(n)
	case reflect.Array:
		for i := 0; i < src.Len(); i++ {
			renameCopy(dst.Index(i), src.Index(i), f, depth+1)
		}
	case reflect.Map:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		n := reflect.MakeMapWithSize(t, src.Len())
		it := src.MapRange()
		for it.Next() {
			k := reflect.New(t.Key()).Elem()
			renameCopy(k, it.Key(), f, depth+1)
			e := reflect.New(t.Elem()).Elem()
			renameCopy(e, it.Value(), f, depth+1)
			n.SetMapIndex(k, e)
		}
		dst.Set(n)
	case reflect.Struct:
		if !src.CanAddr() {
			tmp := reflect.New(t).Elem()
			tmp.Set(src)
			src = tmp
		}
		for i := 0; i < src.NumField(); i++ {
			renameCopy(settable(dst.Field(i)), settable(src.Field(i)), f, depth+1)
		}
	case reflect.Interface:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		e := src.Elem()
		c := reflect.New(e.Type()).Elem()
		renameCopy(c, e, f, depth+1)
		dst.Set(c)
	default:
		dst.Set(src)
	}
}

// idCache remembers whether a type can hold a NodeID (interfaces are decided by their
// dynamic values, so they count as not holding one here).
var (
	idMu    sync.RWMutex
	idCache = map[reflect.Type]bool{}
)

// holdsNodeID reports whether values of t may contain a NodeID outside interfaces.
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
