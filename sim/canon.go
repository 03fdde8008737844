package sim

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
	"unsafe"
)

// DeepCopy returns a deep copy of v: pointers, slices, maps and interfaces are copied
// recursively, unexported fields included. Functions and channels are shared. Values
// with pointer cycles are not supported (DeepCopy panics after a depth of 1000).
func DeepCopy[T any](v T) T {
	src := reflect.ValueOf(&v).Elem()
	if src.Kind() == reflect.Interface {
		// The usual case (stored values are any): copy the dynamic value and box the
		// copy, without an interface-typed temporary. A value that holds no reference
		// cannot be changed through an interface holding it: v is its own copy.
		if src.IsNil() {
			return v
		}
		e := src.Elem()
		if isFlat(e.Type()) {
			return v
		}
		c := reflect.New(e.Type()).Elem()
		deepCopy(c, e, 1)
		return c.Interface().(T)
	}
	dst := reflect.New(src.Type()).Elem()
	deepCopy(dst, src, 0)
	return dst.Interface().(T)
}

// settable makes a (possibly unexported) field of an addressable struct usable for
// reading and writing. Deep copy of unexported state is the whole point here.
func settable(v reflect.Value) reflect.Value {
	if v.CanSet() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

func deepCopy(dst, src reflect.Value, depth int) { copyValue(dst, src, nil, depth) }

// copyValue deep-copies src into dst, replacing every NodeID by f(id) when f is set
// (RenameNodeIDs; Env is kept); with f nil it is DeepCopy.
func copyValue(dst, src reflect.Value, f func(NodeID) NodeID, depth int) {
	if depth > 1000 {
		panic("sim: DeepCopy/RenameNodeIDs: value too deep (pointer cycle?)")
	}
	t := src.Type()
	if f != nil {
		if t == nodeIDType {
			if id := NodeID(src.Int()); id != Env {
				dst.SetInt(int64(f(id)))
			} else {
				dst.SetInt(int64(id))
			}
			return
		}
		if src.Kind() != reflect.Interface && !holdsNodeID(t) {
			f = nil // nothing below to rename: a plain copy
		}
	}
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		n := reflect.New(t.Elem())
		copyValue(n.Elem(), src.Elem(), f, depth+1)
		dst.Set(n)
	case reflect.Slice:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		n := reflect.MakeSlice(t, src.Len(), src.Len())
		if f == nil && isFlat(t.Elem()) {
			reflect.Copy(n, src)
		} else {
			for i := 0; i < src.Len(); i++ {
				copyValue(n.Index(i), src.Index(i), f, depth+1)
			}
		}
		dst.Set(n)
	case reflect.Array:
		if f == nil && isFlat(t) {
			dst.Set(src)
			return
		}
		for i := 0; i < src.Len(); i++ {
			copyValue(dst.Index(i), src.Index(i), f, depth+1)
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
			copyValue(k, it.Key(), f, depth+1)
			e := reflect.New(t.Elem()).Elem()
			copyValue(e, it.Value(), f, depth+1)
			n.SetMapIndex(k, e)
		}
		dst.Set(n)
	case reflect.Struct:
		if f == nil && isFlat(t) {
			dst.Set(src)
			return
		}
		if !src.CanAddr() {
			tmp := reflect.New(t).Elem()
			tmp.Set(src)
			src = tmp
		}
		for i := 0; i < src.NumField(); i++ {
			copyValue(settable(dst.Field(i)), settable(src.Field(i)), f, depth+1)
		}
	case reflect.Interface:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		e := src.Elem()
		c := reflect.New(e.Type()).Elem()
		copyValue(c, e, f, depth+1)
		dst.Set(c)
	default:
		dst.Set(src)
	}
}

// flatCache remembers whether a type holds no pointers, slices, maps or interfaces
// (key false) and whether it holds no floats either (key true). Sweeps run many
// kernels in parallel, hence the lock.
var (
	flatMu    sync.RWMutex
	flatCache = map[flatKey]bool{}
)

type flatKey struct {
	t       reflect.Type
	noFloat bool
}

// isFlat reports whether values of t can be copied by assignment.
func isFlat(t reflect.Type) bool { return flat(t, false) }

// Flat reports whether values of type t hold no pointer, slice, map, channel,
// function or interface: a copy by assignment is a deep copy, and a value held in an
// interface cannot be changed through it.
func Flat(t reflect.Type) bool { return flat(t, false) }

// FlatExact reports whether t is Flat and holds no floating-point number either, so
// that == on two values agrees with their canonical encodings (+0 and -0 are == but
// encode apart).
func FlatExact(t reflect.Type) bool { return flat(t, true) }

func flat(t reflect.Type, noFloat bool) bool {
	k := flatKey{t, noFloat}
	flatMu.RLock()
	f, ok := flatCache[k]
	flatMu.RUnlock()
	if ok {
		return f
	}
	f = computeFlat(t, noFloat, 0)
	flatMu.Lock()
	flatCache[k] = f
	flatMu.Unlock()
	return f
}

func computeFlat(t reflect.Type, noFloat bool, depth int) bool {
	if depth > 50 {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.String:
		return true
	case reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return !noFloat
	case reflect.Array:
		return computeFlat(t.Elem(), noFloat, depth+1)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if !computeFlat(t.Field(i).Type, noFloat, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// AppendCanonical appends a canonical binary encoding of v to b: equal values give
// equal bytes, whatever the map iteration order or slice capacity. Values implementing
// StateEncoder encode themselves. Interface values are tagged with their dynamic type.
// Functions and channels are skipped.
func AppendCanonical(b []byte, v any) []byte {
	if v == nil {
		return append(b, 0)
	}
	return appendValue(b, reflect.ValueOf(v), 0)
}

var stateEncoderType = reflect.TypeFor[StateEncoder]()

func appendValue(b []byte, v reflect.Value, depth int) []byte {
	if depth > 1000 {
		panic("sim: AppendCanonical: value too deep (pointer cycle?)")
	}
	if v.Kind() != reflect.Interface && v.Type().Implements(stateEncoderType) && v.CanInterface() {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return append(b, 0)
		}
		return v.Interface().(StateEncoder).AppendState(append(b, 1))
	}
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return append(b, 1)
		}
		return append(b, 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendVarint(b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return binary.AppendUvarint(b, v.Uint())
	case reflect.Float32, reflect.Float64:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(real(c)))
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(imag(c)))
	case reflect.String:
		return appendString(b, v.String())
	case reflect.Pointer:
		if v.IsNil() {
			return append(b, 0)
		}
		return appendValue(append(b, 1), v.Elem(), depth+1)
	case reflect.Interface:
		if v.IsNil() {
			return append(b, 0)
		}
		e := v.Elem()
		b = appendString(append(b, 1), TypeName(e.Type()))
		return appendValue(b, e, depth+1)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			b = append(b, 0)
		} else {
			b = append(b, 1)
		}
		b = appendUvarint(b, uint64(v.Len()))
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return appendBytes(b, v)
		}
		for i := 0; i < v.Len(); i++ {
			b = appendValue(b, v.Index(i), depth+1)
		}
		return b
	case reflect.Map:
		if v.IsNil() {
			return append(b, 0)
		}
		type kv struct{ k, e []byte }
		pairs := make([]kv, 0, v.Len())
		it := v.MapRange()
		for it.Next() {
			pairs = append(pairs, kv{
				k: appendValue(nil, it.Key(), depth+1),
				e: appendValue(nil, it.Value(), depth+1),
			})
		}
		slices.SortFunc(pairs, func(x, y kv) int { return bytes.Compare(x.k, y.k) })
		b = appendUvarint(append(b, 1), uint64(len(pairs)))
		for _, p := range pairs {
			b = append(append(b, p.k...), p.e...)
		}
		return b
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			b = appendValue(b, v.Field(i), depth+1)
		}
		return b
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return b
	}
	panic(fmt.Sprintf("sim: AppendCanonical: unsupported kind %s", v.Kind()))
}

func appendBytes(b []byte, v reflect.Value) []byte {
	for i := 0; i < v.Len(); i++ {
		b = append(b, byte(v.Index(i).Uint()))
	}
	return b
}

func appendUvarint(b []byte, x uint64) []byte { return binary.AppendUvarint(b, x) }

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// EncodeNode appends the canonical encoding of a node's state, through StateEncoder
// when the node implements it.
func EncodeNode(b []byte, n Node) []byte {
	if n == nil {
		return append(b, 0)
	}
	if e, ok := n.(StateEncoder); ok {
		return e.AppendState(append(b, 1))
	}
	return AppendCanonical(append(b, 1), n)
}

// TypeName names a dynamic type unambiguously for canonical encodings: the full package
// path and the name for a named type (two packages called "msg" with a type "Ping" each
// do not collide, as they would with reflect.Type.String), the type's literal for an
// unnamed one.
func TypeName(t reflect.Type) string {
	if n, ok := typeNames.Load(t); ok {
		return n.(string)
	}
	name := t.String()
	if t.Name() != "" && t.PkgPath() != "" {
		name = t.PkgPath() + "." + t.Name()
	}
	n, _ := typeNames.LoadOrStore(t, name)
	return n.(string)
}

// typeNames caches TypeName (reflect.Type → string): encodings of interface values
// and the model checker's message hashes ask for it on every value.
var typeNames sync.Map
