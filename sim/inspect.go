package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Inspect renders any value — a node, a message, a stored value — as a tree of JSON
// values for a person to read (simrun explore): structs become objects with their
// fields in declaration order (unexported fields included: a node's state is mostly
// unexported), maps become objects in key order, slices arrays, pointers their target
// (or null), time.Duration and Time their duration text. Functions, channels and
// fields tagged `inspect:"-"` (allocators and the like, not state) are left out. The
// result marshals to the same bytes every time (no map-order dependence). Values
// deeper than 64 levels are cut with "…".
func Inspect(v any) any {
	if v == nil {
		return nil
	}
	return inspect(reflect.ValueOf(v), 0)
}

// Object is an ordered JSON object: keys in the order given.
type Object []Field

// Field is one member of an Object.
type Field struct {
	Key   string
	Value any
}

// MarshalJSON writes the members in order.
func (o Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.Key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object keeping its members' order; nested objects become
// Objects too, other values what encoding/json gives an any.
func (o *Object) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeOrdered(d)
	if err != nil {
		return err
	}
	obj, ok := v.(Object)
	if !ok {
		return fmt.Errorf("sim: Object: not a JSON object: %.40s", b)
	}
	*o = obj
	return nil
}

func decodeOrdered(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := Object{}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(d)
			if err != nil {
				return nil, err
			}
			o = append(o, Field{Key: k.(string), Value: v})
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for d.More() {
			v, err := decodeOrdered(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token()
		return a, err
	}
	return t, nil
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	timeType     = reflect.TypeFor[Time]()
)

func inspect(v reflect.Value, depth int) any {
	if depth > 64 {
		return "…"
	}
	if v.Type() == durationType || v.Type() == timeType {
		return time.Duration(v.Int()).String()
	}
	switch v.Kind() {
	case reflect.Bool:
		return v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint()
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return strconv.FormatFloat(f, 'g', -1, 64) // JSON has no NaN
		}
		return f
	case reflect.Complex64, reflect.Complex128:
		return fmt.Sprint(v.Complex())
	case reflect.String:
		return v.String()
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return inspect(v.Elem(), depth+1)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return []any{}
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			bs := make([]byte, v.Len())
			for i := range bs {
				bs[i] = byte(v.Index(i).Uint())
			}
			return fmt.Sprintf("%x", bs)
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = inspect(v.Index(i), depth+1)
		}
		return out
	case reflect.Map:
		type kv struct {
			k string
			v reflect.Value
		}
		pairs := make([]kv, 0, v.Len())
		it := v.MapRange()
		for it.Next() {
			pairs = append(pairs, kv{keyText(it.Key()), it.Value()})
		}
		slices.SortFunc(pairs, func(a, b kv) int { return compareKeys(a.k, b.k) })
		o := make(Object, len(pairs))
		for i, p := range pairs {
			o[i] = Field{p.k, inspect(p.v, depth+1)}
		}
		return o
	case reflect.Struct:
		o := make(Object, 0, v.NumField())
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			switch v.Field(i).Kind() {
			case reflect.Func, reflect.Chan, reflect.UnsafePointer:
				continue
			}
			if t.Field(i).Tag.Get("inspect") == "-" {
				continue
			}
			o = append(o, Field{t.Field(i).Name, inspect(v.Field(i), depth+1)})
		}
		return o
	}
	return nil // functions, channels
}

// keyText renders a map key: numbers and strings as they read, anything else as the
// JSON of its inspection.
func keyText(k reflect.Value) string {
	switch x := inspect(k, 0).(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case bool:
		return strconv.FormatBool(x)
	case Object:
		// A struct key reads as {Agent:1 Hop:2}.
		var b strings.Builder
		b.WriteByte('{')
		for i, f := range x {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(f.Key)
			b.WriteByte(':')
			if s, ok := f.Value.(string); ok {
				b.WriteString(s)
			} else {
				v, _ := json.Marshal(f.Value)
				b.Write(v)
			}
		}
		b.WriteByte('}')
		return b.String()
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// compareKeys orders map keys: numbers numerically (so 2 comes before 10), then text.
func compareKeys(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	switch {
	case errA == nil && errB == nil && x != y:
		if x < y {
			return -1
		}
		return 1
	case errA == nil && errB != nil:
		return -1
	case errA != nil && errB == nil:
		return 1
	}
	if a < b {
		return -1
	} else if a > b {
		return 1
	}
	return 0
}

// Snapshot is the whole state of a system at one point, for a person to read: every
// node's volatile state, stable storage and pending timers, and the messages in
// flight. Both engines produce it (Kernel.Snapshot; the model checker's explorer).
type Snapshot struct {
	// Time is the global virtual time.
	Time     Time           `json:"t"`
	Nodes    []NodeSnapshot `json:"nodes"`
	InFlight []InFlight     `json:"in_flight"`
	// Extra is what else the engine keeps (the model checker's ghost, faults used and
	// cut links; a plain spec's whole state).
	Extra any `json:"extra,omitempty"`
}

// NodeSnapshot is one node in a Snapshot.
type NodeSnapshot struct {
	Name string `json:"name"`
	Up   bool   `json:"up"`
	// Local is the node's clock reading.
	Local  Time            `json:"local"`
	State  any             `json:"state"` // Inspect of the node (null when down)
	Stable Object          `json:"stable"`
	Timers []TimerSnapshot `json:"timers"`
}

// TimerSnapshot is a pending timer: its due time on the node's clock (0 when the
// engine has no time: untimed model checking).
type TimerSnapshot struct {
	ID  string `json:"id"`
	Due Time   `json:"due"`
}

// InFlight is a message sent and not yet delivered (or lost): At is its scheduled
// delivery time (0 when the engine has no time). From is "env" for a workload
// injection.
type InFlight struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind string `json:"kind"`
	Msg  any    `json:"msg"`
	At   Time   `json:"at"`
}

// StableObject renders a storage's entries in key order.
func StableObject(s *Storage) Object {
	o := Object{}
	if s == nil {
		return o
	}
	for _, k := range s.Keys() {
		v, _ := s.Peek(k)
		o = append(o, Field{k, Inspect(v)})
	}
	return o
}

// Snapshot returns the kernel's state now: between two events (call it before the
// first Step or after any).
func (k *Kernel) Snapshot() Snapshot {
	s := Snapshot{Time: k.now, Nodes: make([]NodeSnapshot, len(k.nodes)), InFlight: []InFlight{}}
	for i := range k.nodes {
		rt := &k.nodes[i]
		ns := NodeSnapshot{Name: k.names[i], Up: rt.up, Local: rt.clock.Local(k.now), Stable: StableObject(rt.store), Timers: []TimerSnapshot{}}
		if rt.up {
			ns.State = Inspect(rt.node)
			for _, t := range rt.timers {
				ns.Timers = append(ns.Timers, TimerSnapshot{ID: string(t.id), Due: t.deadline})
			}
			slices.SortFunc(ns.Timers, func(a, b TimerSnapshot) int {
				if a.Due != b.Due {
					return int(a.Due - b.Due)
				}
				return compareKeys(a.ID, b.ID)
			})
		}
		s.Nodes[i] = ns
	}
	keys := slices.Clone(k.q.heap)
	slices.SortFunc(keys, func(a, b qkey) int {
		if a.less(b) {
			return -1
		}
		return 1
	})
	for _, key := range keys {
		ev := &k.q.slab[key.slot]
		switch ev.kind {
		case evDeliver:
			// Still in the network even when the receiver has crashed since (the
			// trace shows it lost when it arrives).
			s.InFlight = append(s.InFlight, InFlight{From: k.name(ev.from), To: k.names[ev.node], Kind: ev.msg.Kind(), Msg: Inspect(ev.msg), At: key.at})
		case evInject:
			s.InFlight = append(s.InFlight, InFlight{From: "env", To: k.names[ev.node], Kind: ev.msg.Kind(), Msg: Inspect(ev.msg), At: key.at})
		}
	}
	return s
}
