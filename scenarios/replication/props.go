package rpscen

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// env holds what the properties need.
type env struct {
	d             *deployment
	plan          faults.Plan
	period, lease time.Duration
	trig          []*trigger
	crashAt       map[sim.NodeID][]sim.Time
}

func newEnv(d *deployment, plan faults.Plan, period, lease time.Duration) *env {
	e := &env{d: d, plan: plan, period: period, lease: lease, crashAt: map[sim.NodeID][]sim.Time{}}
	for _, ev := range plan.Events {
		if ev.Kind == "crash" {
			if n, ok := d.byName(ev.Node); ok {
				e.crashAt[n] = append(e.crashAt[n], sim.Time(ev.At))
			}
		}
	}
	return e
}

// setup returns the scenario setup with the properties every run checks.
func (e *env) setup(bound time.Duration, until sim.Time) *scenarios.Setup {
	props := []checker.Property{
		{Name: "RP-P1 at most once", Class: checker.Safety, Check: e.atMostOnce},
	}
	if slices.ContainsFunc(e.d.groups, func(g *group) bool { return g.active }) {
		props = append(props, checker.Property{Name: "RP-3 one total order", Class: checker.Safety, Check: e.totalOrder})
	}
	props = append(props,
		checker.Property{Name: "RP-P2 single primary", Class: checker.Safety, NeedsCompleteRun: true, Check: e.singlePrimary},
		checker.LinearizableKeyed("RP-P3 linearizable", func(string) porcupineModel { return registerModel() }, e.ops, 0),
		checker.Property{Name: "RP-P4 no acknowledged request lost", Class: checker.Safety, NeedsCompleteRun: true, Check: e.noLostAck},
		checker.Property{Name: "RP-P4 backups equal the primary", Class: checker.Safety, NeedsCompleteRun: true, Check: e.backupsEqual},
		scenarios.Bounded("RP-P1 every operation returns", bound, e.items),
	)
	s := &scenarios.Setup{
		Nodes: e.d.nodes, Network: sim.Network{Latency: sim.Uniform(time.Millisecond, 8*time.Millisecond)}, Faults: e.plan,
		Until: until, MaxTime: until + sim.Time(time.Second), Properties: props,
	}
	if len(e.trig) > 0 {
		s.Stop = e.triggers()
		s.Summary = e.table
	}
	return s
}

func (e *env) groupName(n sim.NodeID) string {
	if g := e.d.group[n]; g != nil {
		return g.name
	}
	return "?"
}

// RP-P1: no request executed twice with effect. Passive groups: once a backup applied
// a request's result (it was committed), no primary executes it again (the duplicate
// table survives failover). Active groups: the sequencers order each request once,
// across epochs.
func (e *env) atMostOnce(r *checker.Run) error {
	committed := map[string]bool{}
	ordered := map[string]bool{}
	n := 0
	for _, o := range r.History() {
		v, ok := o.Value.(rp.Exec)
		if !ok {
			continue
		}
		k := v.Group + " " + v.ID
		switch o.Kind {
		case rp.ObsApply:
			committed[k] = true
		case rp.ObsExec:
			n++
			if committed[k] {
				return fmt.Errorf("request %s executed again by %s after it was committed", k, r.Final[o.Node].Name)
			}
		case rp.ObsOrder:
			n++
			if ordered[k] {
				return fmt.Errorf("request %s ordered again by %s (index %d)", k, r.Final[o.Node].Name, v.Index)
			}
			ordered[k] = true
		}
	}
	r.Note(fmt.Sprintf("%d executions checked", n))
	return nil
}

// RP-3: every replica of an active group delivers the same request at each index.
func (e *env) totalOrder(r *checker.Run) error {
	at := map[string]string{}
	n := 0
	for _, o := range r.History() {
		v, ok := o.Value.(rp.Exec)
		if !ok || o.Kind != rp.ObsDeliver {
			continue
		}
		n++
		k := fmt.Sprintf("%s %d", v.Group, v.Index)
		if id, ok := at[k]; ok && id != v.ID {
			return fmt.Errorf("%s delivered %s at index %d of %s, another replica %s", r.Final[o.Node].Name, v.ID, v.Index, v.Group, id)
		}
		at[k] = v.ID
	}
	r.Note(fmt.Sprintf("%d deliveries checked", n))
	return nil
}

// RP-P2: per group, every interval during which two replicas both held the primary
// (sequencer) role is measured and reported; none lasts longer than 5 ping periods and
// a lease, and after stabilization (the faults settled, plus the same) there is none.
// A crash ends a replica's role.
func (e *env) singlePrimary(r *checker.Run) error {
	type span struct {
		node     int
		from, to sim.Time
	}
	endAt := func(node int, from, to sim.Time) sim.Time {
		for _, c := range e.crashAt[sim.NodeID(node)] {
			if c >= from && c < to {
				return c
			}
		}
		return to
	}
	open := map[int]sim.Time{}
	spans := map[string][]span{}
	for _, o := range r.History() {
		v, ok := o.Value.(rp.Role)
		if !ok {
			continue
		}
		n := int(o.Node)
		g := e.groupName(o.Node)
		if from, was := open[n]; was {
			spans[g] = append(spans[g], span{n, from, endAt(n, from, o.Time)})
			delete(open, n)
		}
		if v.Primary {
			open[n] = o.Time
		}
	}
	still := make([]int, 0, len(open))
	for n := range open {
		still = append(still, n)
	}
	slices.Sort(still) // map order must not reach the report
	for _, n := range still {
		g := e.groupName(sim.NodeID(n))
		spans[g] = append(spans[g], span{n, open[n], endAt(n, open[n], r.Time)})
	}
	settled := r.Settled
	for _, t := range e.trig {
		if t.fired {
			settled = max(settled, t.firedAt.Add(t.restart))
		}
	}
	stable := settled.Add(5*e.period + e.lease)
	var worst time.Duration
	windows, terms := 0, 0
	for _, g := range sortedKeys(spans) {
		ss := spans[g]
		terms += len(ss)
		slices.SortFunc(ss, func(a, b span) int { return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.node, b.node)) })
		for i, a := range ss {
			for _, b := range ss[i+1:] {
				lo, hi := max(a.from, b.from), min(a.to, b.to)
				if a.node == b.node || lo >= hi {
					continue
				}
				windows++
				worst = max(worst, hi.Sub(lo))
				if hi > stable {
					return fmt.Errorf("%s: %s and %s were both primary from %v to %v, after stabilization at %v", g, r.Final[a.node].Name, r.Final[b.node].Name, lo, hi, stable)
				}
				// verify_primary resolves a race within 5 periods (§5.2.4); a primary
				// cut off from the registries steps down within a lease: no dual
				// window lasts longer than both.
				if limit := 5*e.period + e.lease; hi.Sub(lo) > limit {
					return fmt.Errorf("%s: %s and %s were both primary for %v (from %v), longer than 5 ping periods and a lease (%v)", g, r.Final[a.node].Name, r.Final[b.node].Name, hi.Sub(lo), lo, limit)
				}
			}
		}
	}
	r.Note(fmt.Sprintf("%d primary terms, %d dual-primary windows (longest %v)", terms, windows, worst))
	return nil
}

// ops turns the checked clients' calls and returns into register operations per group
// and key.
func (e *env) ops(r *checker.Run) ([]checker.Operation, error) {
	checked := map[sim.NodeID]string{}
	for _, c := range e.d.clients {
		if c.checked {
			checked[c.node] = c.group.name
		}
	}
	calls := map[string]sim.Observation{}
	var out []checker.Operation
	for _, o := range r.History() {
		v, ok := o.Value.(rp.ClientOp)
		if !ok {
			continue
		}
		g, ok := checked[o.Node]
		if !ok {
			continue
		}
		k := fmt.Sprintf("%d/%d", v.Client, v.Seq)
		switch o.Kind {
		case rp.ObsCall:
			calls[k] = o
		case rp.ObsReturn:
			c, ok := calls[k]
			if !ok {
				return nil, fmt.Errorf("return without call: %s", k)
			}
			delete(calls, k)
			out = append(out, regOp(g, v, c.Index, o.Index, false))
		}
	}
	for _, k := range sortedKeys(calls) {
		c := calls[k]
		out = append(out, regOp(checked[c.Node], c.Value.(rp.ClientOp), c.Index, 0, true))
	}
	return out, nil
}

// final is a group's state at the end of a run: the store and duplicate table of its
// one primary (passive) or sequencer (active), if it has exactly one up.
func (e *env) final(r *checker.Run, g *group) (store, dup map[string]int64, applied int64, node sim.NodeID, ok bool) {
	found := 0
	for _, n := range g.members {
		f := r.Final[n]
		if !f.Up {
			continue
		}
		switch s := f.State.(type) {
		case *rp.Replica:
			if s.S.Primary {
				store, dup, applied, node = s.S.Store, s.S.Dup, s.S.Applied, n
				found++
			}
		case *rp.ActiveReplica:
			if s.S.IsSeq {
				store, dup, applied, node = s.S.Store, s.S.Dup, int64(len(s.S.Log)), n
				found++
			}
		}
	}
	return store, dup, applied, node, found == 1
}

// RP-P4: every acknowledged request is in the duplicate table of its group's final
// primary or sequencer (it survived every failover), with the response the client got.
func (e *env) noLostAck(r *checker.Run) error {
	n, skipped := 0, 0
	for _, c := range e.d.clients {
		_, dup, _, _, ok := e.final(r, c.group)
		for _, o := range r.History() {
			v, isOp := o.Value.(rp.ClientOp)
			if !isOp || o.Kind != rp.ObsReturn || o.Node != c.node {
				continue
			}
			if !ok {
				skipped++
				continue
			}
			n++
			k := rp.ClientID(v.Client, v.Seq)
			got, ok := dup[k]
			if !ok {
				return fmt.Errorf("acknowledged request %s of %s (%+v) is not in the final primary's duplicate table: lost", k, c.group.name, v.Op)
			}
			if got != v.Val {
				return fmt.Errorf("acknowledged request %s of %s answered %d, the primary recorded %d", k, c.group.name, v.Val, got)
			}
		}
	}
	note := fmt.Sprintf("%d acknowledged requests checked", n)
	if skipped > 0 {
		note += fmt.Sprintf(", %d skipped (their group has no single primary at the end)", skipped)
	}
	r.Note(note)
	return nil
}

// RP-P4: at quiescence every replica that is up holds its group primary's (or
// sequencer's) state.
func (e *env) backupsEqual(r *checker.Run) error {
	var errs []error
	n := 0
	for _, g := range e.d.groups {
		store, _, applied, pn, ok := e.final(r, g)
		if !ok {
			continue
		}
		for _, m := range g.members {
			f := r.Final[m]
			if !f.Up || m == pn {
				continue
			}
			var st map[string]int64
			var ap int64
			switch s := f.State.(type) {
			case *rp.Replica:
				st, ap = s.S.Store, s.S.Applied
			case *rp.ActiveReplica:
				st, ap = s.S.Store, int64(len(s.S.Log))
			}
			n++
			if ap != applied || fmt.Sprint(st) != fmt.Sprint(store) {
				errs = append(errs, fmt.Errorf("%s holds %d requests %v, its primary %s %d %v", f.Name, ap, st, r.Final[pn].Name, applied, store))
			}
		}
	}
	r.Note(fmt.Sprintf("%d replicas compared", n))
	return errors.Join(errs...)
}

func (e *env) items(r *checker.Run) []scenarios.Item {
	var items []scenarios.Item
	open := map[string]int{}
	for _, o := range r.History() {
		v, ok := o.Value.(rp.ClientOp)
		if !ok {
			continue
		}
		k := fmt.Sprintf("%s/%d", r.Final[o.Node].Name, v.Seq)
		switch o.Kind {
		case rp.ObsCall:
			open[k] = len(items)
			items = append(items, scenarios.Item{Name: "request " + k, Start: o.Time})
		case rp.ObsReturn:
			if i, ok := open[k]; ok {
				items[i].Completed, items[i].Done = true, o.Time
			}
		}
	}
	return items
}
