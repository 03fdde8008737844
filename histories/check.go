package histories

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/checker"
)

// Models are the models a history can be checked against.
var Models = []string{"register", "cas-register", "kv", "counter", "queue"}

type in struct {
	F         string
	Arg, Arg2 Value
}

type out struct {
	Ok  bool // cas: applied
	Val Value
}

// Operations pairs a history's invocations with their completions: ok returns, fail
// drops the operation (it did not happen) except a cas, which returned false, and info
// or no completion leaves it pending (it may take effect any time after its call).
// An operation the model does not know, a completion without an invocation and a
// second invocation by a process with one open are errors naming the line.
func Operations(file, model string, evs []Event) ([]checker.Operation, error) {
	known := map[string]map[string]bool{
		"register":     {"read": true, "write": true},
		"cas-register": {"read": true, "write": true, "cas": true},
		"kv":           {"get": true, "put": true, "append": true},
		"counter":      {"read": true, "add": true},
		"queue":        {"enqueue": true, "dequeue": true},
	}[model]
	if known == nil {
		return nil, fmt.Errorf("unknown model %q (models: register, cas-register, kv, counter, queue)", model)
	}
	type open struct {
		ev  Event
		idx int64
	}
	opens := map[int]open{}
	var ops []checker.Operation
	for i, ev := range evs {
		idx := int64(i)
		if !known[ev.F] {
			return nil, &LineError{file, ev.Line, fmt.Sprintf("operation %q is not one of model %s's", ev.F, model)}
		}
		if ev.Type == "invoke" {
			if o, ok := opens[ev.Process]; ok {
				return nil, &LineError{file, ev.Line, fmt.Sprintf("process %d invokes %s with %s (line %d) still open", ev.Process, ev.F, o.ev.F, o.ev.Line)}
			}
			opens[ev.Process] = open{ev, idx}
			continue
		}
		o, ok := opens[ev.Process]
		if !ok {
			return nil, &LineError{file, ev.Line, fmt.Sprintf("process %d completes %s without an invocation", ev.Process, ev.F)}
		}
		delete(opens, ev.Process)
		if ev.F != o.ev.F {
			return nil, &LineError{file, ev.Line, fmt.Sprintf("process %d completes %s, but its open invocation (line %d) is %s", ev.Process, ev.F, o.ev.Line, o.ev.F)}
		}
		input, err := inputOf(model, o.ev)
		if err != nil {
			return nil, &LineError{file, o.ev.Line, err.Error()}
		}
		if ev.Type == "ok" {
			if err := outputOK(model, ev); err != nil {
				return nil, &LineError{file, ev.Line, err.Error()}
			}
		}
		op := checker.Operation{Key: o.ev.Key, Client: ev.Process, Input: input, Call: o.idx, Return: idx}
		switch {
		case ev.Type == "ok":
			op.Output = out{Ok: true, Val: ev.Value}
		case ev.Type == "fail" && (ev.F == "cas" || ev.F == "dequeue"):
			op.Output = out{Ok: false} // evaluated and refused: a cas that did not apply, an empty queue
		case ev.Type == "fail":
			continue // it did not happen
		default: // info: unknown
			op.Pending = true
		}
		ops = append(ops, op)
	}
	for _, p := range sortedProcs(opens) {
		o := opens[p]
		input, err := inputOf(model, o.ev)
		if err != nil {
			return nil, &LineError{file, o.ev.Line, err.Error()}
		}
		ops = append(ops, checker.Operation{Key: o.ev.Key, Client: p, Input: input, Call: o.idx, Pending: true})
	}
	return ops, nil
}

func sortedProcs[V any](m map[int]V) []int {
	var ps []int
	for p := range m {
		ps = append(ps, p)
	}
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j] < ps[j-1]; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
	return ps
}

func inputOf(model string, ev Event) (in, error) {
	switch ev.F {
	case "cas":
		if len(ev.Value.Pair) != 2 || ev.Value.Pair[0].Pair != nil || ev.Value.Pair[1].Pair != nil {
			return in{}, fmt.Errorf("cas takes [from to], got %s", ev.Value)
		}
		return in{F: "cas", Arg: ev.Value.Pair[0], Arg2: ev.Value.Pair[1]}, nil
	case "write", "put", "append", "add", "enqueue":
		if ev.Value.Nil || ev.Value.Pair != nil {
			return in{}, fmt.Errorf("%s takes a value, got %s", ev.F, ev.Value)
		}
		switch {
		case model == "counter" && ev.Value.IsS:
			return in{}, fmt.Errorf("add takes an integer, got %s", ev.Value)
		case model == "kv" && !ev.Value.IsS:
			return in{}, fmt.Errorf("%s takes a string (kv values are strings), got %s", ev.F, ev.Value)
		}
	}
	return in{F: ev.F, Arg: ev.Value}, nil
}

// outputOK says whether an ok completion's value is one the model can compare: an
// integer read of a counter, a string (or nil) get of a kv, no pair where a single
// value is read.
func outputOK(model string, ev Event) error {
	v := ev.Value
	switch {
	case model == "counter" && ev.F == "read" && (v.IsS || v.Pair != nil || v.Nil):
		return fmt.Errorf("a counter's read returns an integer, got %s", v)
	case model == "kv" && ev.F == "get" && !v.IsS && !v.Nil:
		return fmt.Errorf("a kv get returns a string or nil, got %s", v)
	case (ev.F == "read" || ev.F == "dequeue" || ev.F == "get") && v.Pair != nil:
		return fmt.Errorf("%s returns a single value, got %s", ev.F, v)
	}
	return nil
}

// Model returns the porcupine model of a name (per key for kv).
func Model(name string) porcupine.Model {
	switch name {
	case "counter":
		// state: the value; add(d) adds, read returns it
		return porcupine.Model{
			Init: func() any { return int64(0) },
			Step: func(st, i, o any) (bool, any) {
				s, x := st.(int64), i.(in)
				if x.F == "add" {
					return true, s + x.Arg.Int
				}
				y, ok := o.(out)
				return !ok || y.Val.Int == s, s
			},
			DescribeOperation: func(i, o any) string {
				x := i.(in)
				if y, ok := o.(out); ok && x.F == "read" {
					return fmt.Sprintf("read() → %s", y.Val)
				}
				return fmt.Sprintf("%s(%s)", x.F, x.Arg)
			},
		}
	case "queue":
		// state: the queue's values, oldest first, as text (comparable)
		return porcupine.Model{
			Init: func() any { return "" },
			Step: func(st, i, o any) (bool, any) {
				s, x := st.(string), i.(in)
				if x.F == "enqueue" {
					return true, strings.TrimPrefix(s+" "+x.Arg.String(), " ")
				}
				head, rest, _ := strings.Cut(s, " ")
				y, ok := o.(out)
				switch {
				case !ok: // pending: it took the head, if any
					return true, rest
				case !y.Ok: // refused: the queue was empty
					return s == "", s
				}
				return s != "" && head == y.Val.String(), rest
			},
			DescribeOperation: func(i, o any) string {
				x := i.(in)
				if y, ok := o.(out); ok && x.F == "dequeue" {
					if !y.Ok {
						return "dequeue() → empty"
					}
					return fmt.Sprintf("dequeue() → %s", y.Val)
				}
				return fmt.Sprintf("%s(%s)", x.F, x.Arg)
			},
			DescribeState: func(s any) string { return "[" + s.(string) + "]" },
		}
	}
	if name == "kv" {
		return porcupine.Model{
			Init: func() any { return "" },
			Step: func(st, i, o any) (bool, any) {
				s, x := st.(string), i.(in)
				if o == nil { // pending
					switch x.F {
					case "get":
						return true, s
					case "put":
						return true, x.Arg.Str
					}
					return true, s + x.Arg.Str
				}
				y := o.(out)
				switch x.F {
				case "get":
					return y.Val.Str == s || (y.Val.Nil && s == ""), s
				case "put":
					return true, x.Arg.Str
				}
				return true, s + x.Arg.Str
			},
			DescribeOperation: func(i, o any) string {
				x := i.(in)
				y, _ := o.(out)
				if x.F == "get" {
					return fmt.Sprintf("get() → %s", y.Val)
				}
				return fmt.Sprintf("%s(%s)", x.F, x.Arg)
			},
		}
	}
	// register and cas-register: the state is the value (nil before any write).
	return porcupine.Model{
		Init: func() any { return Value{Nil: true} },
		Step: func(st, i, o any) (bool, any) {
			s, x := st.(Value), i.(in)
			if o == nil { // pending: any read, and the operation's effect if it has one
				switch x.F {
				case "read":
					return true, s
				case "write":
					return true, x.Arg
				}
				if s.String() == x.Arg.String() {
					return true, x.Arg2
				}
				return true, s
			}
			y := o.(out)
			switch x.F {
			case "read":
				return y.Val.String() == s.String(), s
			case "write":
				return true, x.Arg
			}
			applies := s.String() == x.Arg.String()
			if applies {
				return y.Ok, x.Arg2
			}
			return !y.Ok, s
		},
		Equal: func(a, b any) bool { return a.(Value).String() == b.(Value).String() },
		DescribeOperation: func(i, o any) string {
			x := i.(in)
			y, ok := o.(out)
			if !ok {
				return fmt.Sprintf("%s(%s %s) → ?", x.F, x.Arg, x.Arg2)
			}
			switch x.F {
			case "read":
				return fmt.Sprintf("read() → %s", y.Val)
			case "write":
				return fmt.Sprintf("write(%s)", x.Arg)
			}
			return fmt.Sprintf("cas(%s, %s) → %v", x.Arg, x.Arg2, y.Ok)
		},
		DescribeState: func(s any) string { return s.(Value).String() },
	}
}

// Check checks operations against a model within timeout (partitioned by key).
func Check(model string, ops []checker.Operation, timeout time.Duration) checker.LinResult {
	return checker.CheckLinearizableKeyed(func(string) porcupine.Model { return Model(model) }, ops, timeout)
}

// Step is one operation of a linearization: the operation, in the model's words with
// its result, and the model's state once it took effect.
type Step struct {
	Key   string
	Op    checker.Operation
	Does  string
	State string
}

// Explain returns a linearization of a linearizable history: key by key (in sorted
// order), an order in which the operations can have taken effect that the model
// accepts and that respects real time — pending operations included, at the point
// where they took effect. ok is false when the history is not linearizable or was not
// decided within timeout. It searches with porcupine's bookkeeping for visualization,
// so it is meant for the small histories a reader wants explained.
func Explain(model string, ops []checker.Operation, timeout time.Duration) (steps []Step, ok bool) {
	byKey := map[string][]checker.Operation{}
	var keys []string
	for _, o := range ops {
		if _, seen := byKey[o.Key]; !seen {
			keys = append(keys, o.Key)
		}
		byKey[o.Key] = append(byKey[o.Key], o)
	}
	slices.Sort(keys)
	for _, k := range keys {
		m := Model(model)
		kops := byKey[k]
		pops := make([]porcupine.Operation, len(kops))
		for i, o := range kops {
			pops[i] = porcupine.Operation{ClientId: o.Client, Input: o.Input, Call: o.Call, Output: o.Output, Return: o.Return}
			if o.Pending {
				pops[i].Output, pops[i].Return = nil, math.MaxInt64
			}
		}
		res, info := porcupine.CheckOperationsVerbose(m, pops, timeout)
		if res != porcupine.Ok {
			return nil, false
		}
		// Without a Partition function the key is one partition; of a linearizable
		// history porcupine keeps the complete linearization.
		var order []int
		for _, l := range info.PartialLinearizations()[0] {
			if len(l) > len(order) {
				order = l
			}
		}
		if len(order) != len(kops) {
			return nil, false
		}
		describe := m.DescribeState
		if describe == nil {
			describe = func(s any) string { return fmt.Sprint(s) }
		}
		st := m.Init()
		for _, i := range order {
			_, st = m.Step(st, pops[i].Input, pops[i].Output)
			steps = append(steps, Step{Key: k, Op: kops[i], Does: m.DescribeOperation(pops[i].Input, pops[i].Output), State: describe(st)})
		}
	}
	return steps, true
}
