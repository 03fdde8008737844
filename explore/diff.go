package explore

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/sim"
)

// line is one leaf of a snapshot: where it is and its value (JSON).
type line struct {
	Path  string `json:"path"`
	Value string `json:"value"`
}

// change is one difference between two snapshots: Was is absent for a new leaf, Now
// for a removed one.
type change struct {
	Path string  `json:"path"`
	Was  *string `json:"was,omitempty"`
	Now  *string `json:"now,omitempty"`
}

// flatten lists a snapshot's leaves in display order: per node its liveness, state
// fields, stable entries and timers (not its clock: it changes with every step, and
// the page shows it in the node's heading); then the messages in flight (a multiset:
// numbered per sender, receiver and content, so one more copy is one new line); then
// what else the engine keeps.
func flatten(s sim.Snapshot) []line {
	var out []line
	add := func(path string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(fmt.Sprintf("%q", fmt.Sprint(v)))
		}
		out = append(out, line{path, string(b)})
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case sim.Object:
			if len(x) == 0 {
				add(path, struct{}{})
			}
			for _, f := range x {
				walk(path+"."+f.Key, f.Value)
			}
		case []any:
			if len(x) == 0 {
				add(path, []any{})
			}
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		default:
			add(path, x)
		}
	}
	for _, n := range s.Nodes {
		p := n.Name
		add(p+".up", n.Up)
		if n.State != nil {
			walk(p+".state", n.State)
		}
		for _, f := range n.Stable {
			walk(p+".stable."+f.Key, f.Value)
		}
		for _, t := range n.Timers {
			add(p+".timer."+t.ID, t.Due)
		}
	}
	seen := map[string]int{}
	for _, m := range s.InFlight {
		// Named by sender, receiver, kind and a hash of the content (so a message
		// delivered does not renumber the others), numbered among identical copies.
		b, _ := json.Marshal(m.Msg)
		h := fnv.New32a()
		h.Write(b)
		k := fmt.Sprintf("in flight.%s→%s %s %06x", m.From, m.To, m.Kind, h.Sum32()&0xffffff)
		seen[k]++
		if seen[k] > 1 {
			k = fmt.Sprintf("%s (copy %d)", k, seen[k])
		}
		add(k, m.Msg)
	}
	if s.Extra != nil {
		walk("engine", s.Extra)
	}
	return out
}

// diff lists what changed from a to b: leaves of b that are new or have a new value,
// in b's order, then leaves of a that are gone, in a's order.
func diff(a, b []line) []change {
	was := make(map[string]string, len(a))
	for _, l := range a {
		was[l.Path] = l.Value
	}
	now := make(map[string]bool, len(b))
	out := []change{}
	for _, l := range b {
		now[l.Path] = true
		v := l.Value
		if w, ok := was[l.Path]; !ok {
			out = append(out, change{Path: l.Path, Now: &v})
		} else if w != v {
			w := w
			out = append(out, change{Path: l.Path, Was: &w, Now: &v})
		}
	}
	for _, l := range a {
		if !now[l.Path] {
			w := l.Value
			out = append(out, change{Path: l.Path, Was: &w})
		}
	}
	return collapse(a, b, out)
}

// changedNodes names the nodes a diff touches (for the page's highlight).
func changedNodes(cs []change, nodes []string) []string {
	out := []string{}
	for _, n := range nodes {
		if slices.ContainsFunc(cs, func(c change) bool { return strings.HasPrefix(c.Path, n+".") }) {
			out = append(out, n)
		}
	}
	return out
}

// collapse folds the changes under a subtree that appeared or disappeared whole into
// one change (a removed queue entry of twenty fields is one line, not twenty).
func collapse(a, b []line, cs []change) []change {
	has := func(ls []line) func(p string) bool {
		set := make(map[string]bool, len(ls)*2)
		for _, l := range ls {
			for _, pre := range prefixes(l.Path) {
				set[pre] = true
			}
		}
		return func(p string) bool { return set[p] }
	}
	inA, inB := has(a), has(b)
	count := func(ls []line, pre string) int {
		n := 0
		for _, l := range ls {
			if l.Path == pre || strings.HasPrefix(l.Path, pre+".") || strings.HasPrefix(l.Path, pre+"[") {
				n++
			}
		}
		return n
	}
	out := []change{}
	done := map[string]bool{}
	for _, c := range cs {
		if c.Was != nil && c.Now != nil {
			out = append(out, c)
			continue
		}
		// The shortest prefix the other side does not have at all.
		other, side := inB, a
		if c.Was == nil {
			other, side = inA, b
		}
		if other(c.Path) {
			// An empty container that gained (or lost) its first entries: the
			// entries are the change.
			continue
		}
		top := c.Path
		for _, pre := range prefixes(c.Path) {
			if !other(pre) {
				top = pre
				break
			}
		}
		if top == c.Path || count(side, top) == 1 {
			out = append(out, c)
			continue
		}
		if done[top] {
			continue
		}
		done[top] = true
		v := fmt.Sprintf("{… %d values}", count(side, top))
		if c.Was == nil {
			out = append(out, change{Path: top, Now: &v})
		} else {
			out = append(out, change{Path: top, Was: &v})
		}
	}
	return out
}

// prefixes lists a leaf path's ancestors from the shortest that names an entry of a
// node's state, storage or timers to the path itself: "n0.state.queue[2].ID" gives
// n0.state.queue, n0.state.queue[2], n0.state.queue[2].ID.
func prefixes(p string) []string {
	var out []string
	for i := 1; i < len(p); i++ {
		if (p[i] == '.' || p[i] == '[') && strings.Count(p[:i], ".") >= 2 {
			out = append(out, p[:i])
		}
	}
	return append(out, p)
}
