package sim

import "slices"

// Result is everything a finished run reports. Checkers read it; they never reach
// into a running node.
type Result struct {
	Seed    uint64      `json:"seed"`
	Outcome Outcome     `json:"outcome"`
	Panic   *PanicError `json:"-"`
	// Events is the number of events processed; Time the virtual time reached.
	Events int64 `json:"events"`
	Time   Time  `json:"time"`
	// Messages counts all network messages; ByKind and ByNode split them.
	Messages MsgCount            `json:"messages"`
	ByKind   map[string]MsgCount `json:"by_kind"`
	ByNode   []NodeCount         `json:"by_node"`
	// Knobs lists the assumption-breaking network settings that were on (loss,
	// duplication, reordering, bursts): never silent.
	Knobs []string `json:"knobs,omitempty"`
	// History is every observation, in order.
	History []Observation `json:"-"`
	// Final holds each node's state at the end of the run.
	Final []FinalNode `json:"-"`
	// Coverage counts the rules that fired (Config.Coverage; nil when off).
	Coverage *Coverage `json:"-"`
}

// FinalNode is one node at the end of a run.
type FinalNode struct {
	Name string
	Up   bool
	// State is nil if the node was down at the end.
	State  Node
	Stable *Storage
}

// Names returns the node names.
func (r *Result) Names() []string {
	ns := make([]string, len(r.Final))
	for i, f := range r.Final {
		ns[i] = f.Name
	}
	return ns
}

// Kinds returns the message kinds in sorted order.
func (r *Result) Kinds() []string {
	ks := make([]string, 0, len(r.ByKind))
	for k := range r.ByKind {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func (k *Kernel) result() *Result {
	r := &Result{
		Seed:     k.cfg.Seed,
		Outcome:  k.outcome,
		Panic:    k.panicErr,
		Events:   k.events,
		Time:     k.now,
		Messages: k.total,
		ByKind:   make(map[string]MsgCount, len(k.kinds)),
		ByNode:   slices.Clone(k.byNode),
		Knobs:    slices.Clone(k.knobs),
		History:  k.history,
		Final:    make([]FinalNode, len(k.nodes)),
		Coverage: k.cov,
	}
	for i, name := range k.kinds {
		r.ByKind[name] = k.byKind[i]
	}
	for i := range k.nodes {
		rt := &k.nodes[i]
		r.Final[i] = FinalNode{Name: k.names[i], Up: rt.up, State: rt.node, Stable: rt.store}
	}
	return r
}
