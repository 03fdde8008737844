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

// maxLink is the longest link delay of the scenarios' network.
const maxLink = 8 * time.Millisecond

// env holds what the properties need.
type env struct {
	d             *deployment
	plan          faults.Plan
	period, lease time.Duration
	trig          []*trigger
	// moves are the crashes and restarts of the run's nodes as they happened (watch
	// reads them off the kernel after every event: a crash-send's instant, or a
	// trigger's, is known only then); up is each node's state after the last event.
	moves []change
	up    []bool
}

func newEnv(d *deployment, plan faults.Plan, period, lease time.Duration) *env {
	return &env{d: d, plan: plan, period: period, lease: lease}
}

// watch records the nodes that crashed or restarted in the event just processed.
func (e *env) watch(k *sim.Kernel) {
	if e.up == nil {
		e.up = make([]bool, len(e.d.nodes))
		for i := range e.up {
			e.up[i] = true
		}
	}
	for i, was := range e.up {
		if now := k.Up(sim.NodeID(i)); now != was {
			e.up[i] = now
			e.moves = append(e.moves, change{k.Now(), sim.NodeID(i), !now})
		}
	}
}

// crashedIn reports whether node n crashed at an instant in [from, to].
func (e *env) crashedIn(n sim.NodeID, from, to sim.Time) bool {
	return slices.ContainsFunc(e.moves, func(c change) bool { return c.node == n && c.crash && c.at >= from && c.at <= to })
}

// otherIn reports whether a fault other than a crash or restart (a partition or cut
// until its heal, a delay until its messages arrive, a clock skew from then on) was on
// at some instant of [from, to].
func (e *env) otherIn(from, to sim.Time) bool {
	evs := e.plan.Events
	for i, ev := range evs {
		if ev.IsCrash() || ev.Kind == "restart" || ev.Kind == "heal" || ev.Kind == "restore" {
			continue
		}
		start, end := sim.Time(ev.At), sim.Time(1<<62)
		switch ev.Kind {
		case "spike", "burst":
			end = sim.Time(ev.At + ev.For + ev.Extra)
		case "partition", "cut":
			for _, x := range evs[i+1:] {
				if x.Kind == "heal" || x.Kind == "restore" && x.From == ev.From && x.To == ev.To {
					end = sim.Time(x.At)
					break
				}
			}
		}
		if start <= to && end >= from {
			return true
		}
	}
	return slices.ContainsFunc(e.trig, func(t *trigger) bool {
		return len(t.slowed) > 0 && t.firedAt <= to && t.firedAt.Add(t.slow.extra+t.slow.span) >= from
	})
}

// downIn reports whether node n was down at some instant of [from, to].
func (e *env) downIn(n sim.NodeID, from, to sim.Time) bool {
	down := false
	for _, c := range e.moves {
		if c.at > to {
			break
		}
		if c.node != n {
			continue
		}
		if c.at >= from && c.crash {
			return true
		}
		if c.at < from {
			down = c.crash
		}
	}
	return down
}

// setup returns the scenario setup with the properties every run checks.
func (e *env) setup(bound time.Duration, until sim.Time) *scenarios.Setup {
	props := []checker.Property{
		{Name: "RP-P1 at most once", Class: checker.Safety, Check: e.atMostOnce},
	}
	if slices.ContainsFunc(e.d.groups, func(g *group) bool { return g.active }) {
		props = append(props, checker.Property{Name: "RP-3 one total order", Class: checker.Safety, Check: e.totalOrder},
			checker.Property{Name: "RP-3 a replica delivering an epoch's orders joined it", Class: checker.Safety, NeedsCompleteRun: true, Check: e.joinedEpoch})
	}
	props = append(props,
		checker.Property{Name: "RP-P2 single primary", Class: checker.Safety, NeedsCompleteRun: true, Check: e.singlePrimary},
		checker.Property{Name: "RP-2 no primary elected without a registry", Class: checker.Safety, Check: e.electedWithRegistry},
		checker.Property{Name: "RP-2 a replica verifies every 5 periods", Class: checker.Safety, NeedsCompleteRun: true, Check: e.lookupCadence},
		checker.Property{Name: "RP-2 a call refused by a non-primary looks again", Class: checker.Safety, Check: refusedLooksAgain},
		checker.Property{Name: "RP-1 a replica keeps its registration ID", Class: checker.Safety, Check: e.idsKept},
		checker.Property{Name: "RP-2 §5.2.3 no claim alone before a renewal period", Class: checker.Safety, Check: e.aloneClaims},
		checker.Property{Name: "RP-2 §3.6.1 a backup acknowledges only what it holds", Class: checker.Safety, Check: acksHeld},
		checker.Property{Name: "RP-2 §3.6.1 answered after it ran and its backups acknowledged", Class: checker.Safety, Check: e.answeredAfterAcks},
		e.linearizable(),
		checker.Property{Name: "RP-P4 no acknowledged request lost", Class: checker.Safety, NeedsCompleteRun: true, Check: e.noLostAck},
		checker.Property{Name: "RP-P4 backups equal the primary", Class: checker.Safety, NeedsCompleteRun: true, Check: e.backupsEqual},
		checker.Property{Name: "RP-2/RP-3 failover within a lease and 3 periods", Class: checker.Liveness, NeedsCompleteRun: true, Check: e.failover},
		scenarios.Bounded("RP-P1 every operation returns", bound, e.items),
	)
	if len(e.plan.Events) == 0 && len(e.trig) == 0 && e.d.flow == nil {
		// the key-value deployments (a workflow's latency is its route's, not a
		// request's)
		props = append(props, checker.Property{Name: "RP-2/RP-3 latency without faults", Class: checker.Liveness, NeedsCompleteRun: true, Check: e.latency})
	}
	s := &scenarios.Setup{
		Nodes: e.d.nodes, Network: sim.Network{Latency: sim.Uniform(time.Millisecond, maxLink)}, Faults: e.plan,
		Until: until, MaxTime: until + sim.Time(time.Second), Properties: props,
	}
	s.Stop = e.triggers()
	if slices.ContainsFunc(e.trig, func(t *trigger) bool { return t.label != "" }) {
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
// table survives failover) — unless every replica holding it (that ran or applied it)
// was down at some instant of the lease before: §3.6.1's agreement stage cut short
// ("if it crashed during the agreement stage, then they may have processed the
// request"), its holders gone, the front end's re-send runs it anew. A primary that
// holds it itself never runs it again. Active groups: the sequencers order each
// request once, across epochs.
func (e *env) atMostOnce(r *checker.Run) error {
	holders := map[string][]sim.NodeID{}
	since := map[string]sim.Time{} // when a replica first held it
	committed := map[string]bool{}
	ordered := map[string]bool{}
	n, exempt, expected := 0, 0, 0
	for _, o := range r.History() {
		v, ok := o.Value.(rp.Exec)
		if !ok {
			continue
		}
		k := v.Group + " " + v.ID
		switch o.Kind {
		case rp.ObsApply:
			committed[k] = true
			holders[k] = append(holders[k], o.Node)
		case rp.ObsExec:
			n++
			hs := holders[k]
			holders[k] = append(hs, o.Node)
			if _, ok := since[k]; !ok {
				since[k] = o.Time
			}
			if !committed[k] {
				continue
			}
			self := slices.Contains(hs, o.Node)
			if !self && !slices.ContainsFunc(hs, func(h sim.NodeID) bool { return !e.downIn(h, o.Time.Add(-e.lease), o.Time) }) {
				exempt++
				continue
			}
			if e.otherIn(since[k], o.Time) {
				expected++ // outside the model (see expectedNote)
				continue
			}
			return fmt.Errorf("request %s executed again by %s after it was committed", k, r.Final[o.Node].Name)
		case rp.ObsOrder:
			n++
			if ordered[k] {
				return fmt.Errorf("request %s ordered again by %s (index %d)", k, r.Final[o.Node].Name, v.Index)
			}
			ordered[k] = true
		}
	}
	r.Count(n-expected, exempt+expected)
	r.Note(fmt.Sprintf("%d executions checked, %d exempt (run again after every replica holding them went down: the agreement stage cut short)", n-expected, exempt) + expectedNote(expected))
	return nil
}

// expectedNote says how many violations a property met where the run left the
// thesis' model (a replica paused or cut off past its lease: it acts on a lease it no
// longer holds, and its registrations lapse while it runs), and that it passes them.
func expectedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d expected violations passed: outside the thesis' model, a replica paused or cut off past its lease while they ran", n)
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

// RP-3 sequencer failover by epochs (doc.go): a replica that follows a newer epoch's
// orders joins that epoch, so that it ignores the older epochs' orders from then on
// (fencing), and an epoch is never left (it is in stable storage). So at the end of a
// run, every replica that delivered an order the final sequencer made in its last
// term (its epoch's own orders) is in that epoch or a later one. Replicas that are
// down, and groups without one sequencer up at the end, are exempt.
func (e *env) joinedEpoch(r *checker.Run) error {
	checked, exempt := 0, 0
	for _, g := range e.d.groups {
		if !g.active {
			continue
		}
		_, _, _, sn, ok := e.final(r, g)
		if !ok {
			exempt += len(g.members)
			continue
		}
		seq := unwrap(r.Final[sn].State).(*rp.ActiveReplica)
		// The sequencer's last term begins at its last role change.
		var since sim.Time
		for _, o := range r.History() {
			if _, isRole := o.Value.(rp.Role); isRole && o.Node == sn {
				since = o.Time
			}
		}
		own := map[int64]string{}
		for _, o := range r.History() {
			if v, ok := o.Value.(rp.Exec); ok && o.Kind == rp.ObsOrder && o.Node == sn && o.Time >= since {
				own[v.Index] = v.ID
			}
		}
		for _, m := range g.members {
			f := r.Final[m]
			if m == sn {
				continue
			}
			if !f.Up {
				exempt++
				continue
			}
			a := unwrap(f.State).(*rp.ActiveReplica)
			delivered := 0
			for _, o := range r.History() {
				if v, ok := o.Value.(rp.Exec); ok && o.Kind == rp.ObsDeliver && o.Node == m && own[v.Index] == v.ID && v.ID != "" {
					delivered++
				}
			}
			if delivered == 0 {
				exempt++
				continue
			}
			checked++
			if a.S.Epoch < seq.S.Epoch {
				return fmt.Errorf("%s: %s delivered %d orders of sequencer %s's epoch %d and is still in epoch %d", g.name, f.Name, delivered, r.Final[sn].Name, seq.S.Epoch, a.S.Epoch)
			}
		}
	}
	r.Note(fmt.Sprintf("%d replicas checked, %d exempt (down at the end, no single sequencer up, or none of the final epoch's orders delivered)", checked, exempt))
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
		for _, c := range e.moves {
			if c.node == sim.NodeID(node) && c.crash && c.at >= from && c.at < to {
				return c.at
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
	r.Count(terms, 0)
	r.Note(fmt.Sprintf("%d primary terms checked, %d dual-primary windows (longest %v)", terms, windows, worst))
	return nil
}

// RP-2 §5.4.1: "If there is no registry in the system, then no replica can become the
// primary. The ping threads will keep replicas alive, and once a registry enters the
// system, all replicas register themselves and then a primary replica is established"
// (and handle_primary_failure, §5.2.3: when the lookups find no replica, "stay alive
// for new lookup to appear"). A passive replica takes the primary role only through a
// claim made on a registry's answer: some registry was up between a link delay before
// the claim (the answer's way) and the takeover (a registry may crash while the
// claimer gathers the others' state).
func (e *env) electedWithRegistry(r *checker.Run) error {
	if len(e.d.regs) == 0 {
		return nil
	}
	cs := e.changes()
	// upIn: some registry was up at an instant of [from, to]
	upIn := func(from, to sim.Time) bool {
		down := map[sim.NodeID]bool{}
		some := func() bool { return slices.ContainsFunc(e.d.regs, func(n sim.NodeID) bool { return !down[n] }) }
		for _, c := range cs {
			if c.at > to {
				break
			}
			if c.at >= from && some() {
				return true // up at from, or since a change in [from, to]
			}
			if c.node >= 0 {
				down[c.node] = c.crash
			}
		}
		return some()
	}
	claims := map[sim.NodeID]sim.Time{}
	checked, exempt := 0, 0
	for _, o := range r.History() {
		if v, ok := o.Value.(rp.Failover); ok && v.Self {
			claims[o.Node] = o.Time
		}
		v, ok := o.Value.(rp.Role)
		if !ok || !v.Primary {
			continue
		}
		if g := e.d.group[o.Node]; g == nil || g.active {
			continue
		}
		at, claimed := claims[o.Node]
		if !claimed {
			return fmt.Errorf("%s became primary at %v without a claim", r.Final[o.Node].Name, o.Time)
		}
		delete(claims, o.Node)
		checked++
		if !upIn(at.Add(-maxLink), o.Time) {
			return fmt.Errorf("%s claimed the primary role at %v and took it at %v while every registry was down", r.Final[o.Node].Name, at, o.Time)
		}
	}
	r.Count(checked, exempt)
	r.Note(fmt.Sprintf("%d elections checked", checked))
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
		switch s := unwrap(f.State).(type) {
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
	n, skipped, expected := 0, 0, 0
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
			if (!ok || got != v.Val) && e.otherIn(o.Time.Add(-e.lease), r.Time) {
				expected++ // outside the model (see expectedNote)
				continue
			}
			if !ok {
				return fmt.Errorf("acknowledged request %s of %s (%+v) is not in the final primary's duplicate table: lost", k, c.group.name, v.Op)
			}
			if got != v.Val {
				return fmt.Errorf("acknowledged request %s of %s answered %d, the primary recorded %d", k, c.group.name, v.Val, got)
			}
		}
	}
	note := fmt.Sprintf("%d acknowledged requests checked", n-expected)
	if skipped > 0 {
		note += fmt.Sprintf(", %d skipped (their group has no single primary at the end)", skipped)
	}
	r.Count(n-expected, skipped+expected)
	r.Note(note + expectedNote(expected))
	return nil
}

// RP-P4: at quiescence every replica that is up holds its group primary's (or
// sequencer's) state: the same requests applied, the same store and (passive) the
// same duplicate table (a replica that applied a request the primary does not hold
// has a store that later writes may mend, but not its table).
func (e *env) backupsEqual(r *checker.Run) error {
	var errs []error
	n := 0
	for _, g := range e.d.groups {
		store, dup, applied, pn, ok := e.final(r, g)
		if !ok {
			continue
		}
		for _, m := range g.members {
			f := r.Final[m]
			if !f.Up || m == pn {
				continue
			}
			var st, dt map[string]int64
			var ap int64
			switch s := unwrap(f.State).(type) {
			case *rp.Replica:
				st, dt, ap = s.S.Store, s.S.Dup, s.S.Applied
			case *rp.ActiveReplica:
				st, dt, ap = s.S.Store, s.S.Dup, int64(len(s.S.Log))
			}
			n++
			if ap != applied || fmt.Sprint(st) != fmt.Sprint(store) {
				errs = append(errs, fmt.Errorf("%s holds %d requests %v, its primary %s %d %v", f.Name, ap, st, r.Final[pn].Name, applied, store))
			} else if fmt.Sprint(dt) != fmt.Sprint(dup) {
				errs = append(errs, fmt.Errorf("%s holds the primary %s's %d requests and store but another duplicate table: %v, the primary's %v", f.Name, r.Final[pn].Name, applied, dt, dup))
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

// failoverBound is how long a group may go without a primary after its primary
// crashed, when nothing else changes meanwhile: the crashed replica's last renewal may
// still be on its way (a link delay), so the registries drop its registration within
// a lease and a link delay of the crash, at their next expiry scan (every 10 ms); a
// backup hears of it at once (notification) or within two ping periods (polling:
// the ping that goes unanswered, then the lookup), and then three round trips run in
// series — the lookup or the notice, its answer, the state gathered from the others —
// with a period for a replica that does not answer (RP-2 §5.2.3; the sequencer's view
// change, RP-3, the same).
func (e *env) failoverBound() time.Duration {
	return e.lease + maxLink + 10*time.Millisecond + 3*e.period + 3*2*maxLink
}

// change is a fault at an instant: a crash or restart of a node (-1: another kind of
// fault, or a node outside the deployment).
type change struct {
	at    sim.Time
	node  sim.NodeID
	crash bool
}

// changes returns the run's faults in time order: every crash and restart as it
// happened (watch), and the plan's and the fired triggers' other faults (node -1).
func (e *env) changes() []change {
	var cs []change
	for _, ev := range e.plan.Events {
		if !ev.IsCrash() && ev.Kind != "restart" {
			cs = append(cs, change{sim.Time(ev.At), -1, false})
			if ev.Kind == "spike" {
				// a delay lasts: its messages arrive until its end
				cs = append(cs, change{sim.Time(ev.At + ev.For + ev.Extra), -1, false})
			}
		}
	}
	for _, t := range e.trig {
		if len(t.slowed) > 0 {
			cs = append(cs, change{t.firedAt, -1, false}) // a delay: another kind of fault
		}
	}
	cs = append(cs, e.moves...)
	slices.SortStableFunc(cs, func(a, b change) int { return cmp.Compare(a.at, b.at) })
	return cs
}

// RP-2 §5.2.3 and RP-3: after a primary (sequencer) crashes, a replica of its group
// holds the role within failoverBound of the last crash in its group. Judged when
// nothing else happens meanwhile except more crashes of the group's replicas (each
// extends the bound: a replica that crashes during the claim is waited for until the
// registries drop it; so is the crashed primary if it restarts, registers again and
// crashes again) and the crashed one's restart (a takeover by it counts too),
// with a registry and another replica of the group up throughout, and the run
// lasting the bound; the rest are counted as exempt. A passive replica left alone
// (one of two) waits a renewal period and a period more before it claims. (The scenarios refuse a ping
// period under a round trip, for which the bound does not hold: checkPeriod.)
func (e *env) failover(r *checker.Run) error {
	bound := e.failoverBound()
	faultsAt := e.changes()
	type role struct {
		at      sim.Time
		node    sim.NodeID
		primary bool
	}
	var roles []role
	for _, o := range r.History() {
		if v, ok := o.Value.(rp.Role); ok {
			roles = append(roles, role{o.Time, o.Node, v.Primary})
		}
	}
	// primaryAt: n holds the role at instant at (a crash ends it).
	primaryAt := func(n sim.NodeID, at sim.Time) bool {
		p := false
		var since sim.Time
		for _, c := range roles {
			if c.at > at {
				break
			}
			if c.node == n {
				p, since = c.primary, c.at
			}
		}
		for _, c := range faultsAt {
			if c.node == n && c.crash && c.at >= since && c.at <= at {
				p = false
			}
		}
		return p
	}
	downAt := func(at sim.Time) map[sim.NodeID]bool {
		d := map[sim.NodeID]bool{}
		for _, c := range faultsAt {
			if c.at > at {
				break
			}
			if c.node >= 0 {
				d[c.node] = c.crash
			}
		}
		return d
	}
	checked, exempt := 0, 0
	var worst time.Duration
	for k, c := range faultsAt {
		g := e.d.group[c.node]
		if !c.crash || g == nil || !primaryAt(c.node, c.at-1) {
			continue
		}
		if slices.ContainsFunc(g.members, func(m sim.NodeID) bool { return m != c.node && primaryAt(m, c.at) }) {
			exempt++ // another primary was there already (a dual window, RP-P2's)
			continue
		}
		// The window: more crashes of the group's replicas extend it; anything else
		// within it exempts the failover.
		// A passive replica left alone waits a renewal period and a period before it
		// claims (§5.2.3, doc.go), and looks again each period meanwhile.
		b := bound
		if !g.active && len(slices.DeleteFunc(slices.Clone(g.members), func(m sim.NodeID) bool { return m == c.node || downAt(c.at)[m] })) == 1 {
			b += e.lease/3 + 2*e.period
		}
		last, quiet := c.at, true // the group's last crash
		for _, x := range faultsAt[k+1:] {
			if x.at > last.Add(b) {
				break
			}
			if x.node == c.node && !x.crash {
				continue // its own restart: a takeover by it counts as well
			}
			// A crash of the group's replicas, the crashed primary's own included:
			// restarted, it registered again, and a claim waits for it too.
			if !x.crash || e.d.group[x.node] != g {
				quiet = false
				break
			}
			last = x.at
		}
		end := last.Add(b)
		if e.otherIn(c.at, end) {
			quiet = false
		}
		down := downAt(end)
		regsUp := slices.ContainsFunc(e.d.regs, func(n sim.NodeID) bool { return !down[n] })
		other := slices.ContainsFunc(g.members, func(m sim.NodeID) bool { return m != c.node && !down[m] })
		if !quiet || !regsUp || !other || r.Time < end {
			exempt++
			continue
		}
		checked++
		i := slices.IndexFunc(roles, func(x role) bool { return x.at > c.at && x.primary && e.d.group[x.node] == g })
		if i < 0 || roles[i].at > end {
			return fmt.Errorf("%s: primary %s crashed at %v and no other replica took over by %v (%v after the group's last crash: a lease, 3 periods and round trips, and a renewal period and 2 periods for one left alone)", g.name, r.Final[c.node].Name, c.at, end, b)
		}
		worst = max(worst, roles[i].at.Sub(last))
	}
	r.Note(fmt.Sprintf("%d failovers checked (the longest %v after the group's last crash; bound %v), %d exempt (other faults meanwhile, every registry or every other replica down, another primary already, or the run ending)", checked, worst, bound, exempt))
	return nil
}

// RP-2 and RP-3 without faults, nothing is dropped: a request waits at most for the
// requests queued before it, one per other client. Passive: the request travels to
// the primary (1 link delay), each request ahead of it and its own take the backups'
// Done/ACK round trip (2 each), the answer travels back (1), and the client's first
// call looks the group up first (2): (2·clients + 4) link delays. Active: the
// sequencer orders and answers at once: 4. A dropped request shows as a wait for the
// client's re-send timer. Requests called before the group settled — its first
// primary took the role three periods and a round trip ago — are exempt (the client's
// first lookup may find none, and a replica that lost the race for the role may hold
// a backup until its ping loop finds the primary).
func (e *env) latency(r *checker.Run) error {
	first := sim.Time(-1)
	calls := map[string]sim.Observation{}
	checked, exempt := 0, 0
	var worst time.Duration
	// A replica that lost the startup race for the role may hold a backup until its
	// ping loop finds the primary (up to two periods and a round trip, polling).
	settle := 3*e.period + 2*maxLink
	bounds := map[sim.NodeID]time.Duration{}
	for _, c := range e.d.clients {
		n := 4
		if !c.group.active {
			n = 2*len(e.d.clients) + 4
		}
		bounds[c.node] = time.Duration(n) * maxLink
	}
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case rp.Role:
			if v.Primary && first < 0 {
				first = o.Time
			}
		case rp.ClientOp:
			k := fmt.Sprintf("%d/%d", v.Client, v.Seq)
			switch o.Kind {
			case rp.ObsCall:
				calls[k] = o
			case rp.ObsReturn:
				c, ok := calls[k]
				if !ok {
					continue
				}
				if first < 0 || c.Time < first.Add(settle) {
					exempt++
					continue
				}
				checked++
				lat := o.Time.Sub(c.Time)
				worst = max(worst, lat)
				if b := bounds[o.Node]; lat > b {
					return fmt.Errorf("request %s of %s took %v without a fault, more than %v (every other client's request ahead of it)", k, r.Final[o.Node].Name, lat, b)
				}
			}
		}
	}
	r.Note(fmt.Sprintf("%d requests checked (slowest %v), %d exempt (called before the group settled)", checked, worst, exempt))
	return nil
}

// RP-2 §5.2.2, the ping thread: "Every 5 periods, a verification is performed to
// verify that there is one and only one primary in the group" (and §5.4.2: "a
// verification periodically, e.g. every 5 ping periods ... the conflict is solved
// within 5 ping periods"); when the ping fails, handle_primary_failure looks the group
// up at once. So every passive replica that is up looks its group up in the
// registries at least every 5 ping periods — the primary too, whose ping thread runs
// like the others' (§5.3.4: "Its algorithm is exactly the same as the verify_primary
// of the replica manager class"). Without notifications (-p notify=false) nobody
// tells a primary that its backups changed, and it polls every period (doc.go, "a
// replica subscribes to membership events ...; without it the primary polls the
// registries every period"): while it holds the role, a period at most passes
// between its lookups (or from its taking the role to its first). Ticks are timers
// of exactly one period, so the bounds are exact, except that a gap in which the
// replica's role changed may last a sixth period: the tick that ends a claim takes
// the role instead of looking up (handle_primary_failure's last step, "register impl
// as primary"), and the counter of periods runs on. A replica whose clock the plan
// skews or pauses (outside the thesis' model) is exempt.
func (e *env) lookupCadence(r *checker.Run) error {
	period := sim.Time(e.period)
	exempt := map[sim.NodeID]bool{}
	for _, ev := range e.plan.Events {
		if n, ok := e.d.byName(ev.Node); ok && ev.Kind != "crash" && ev.Kind != "restart" && ev.Kind != "spike" {
			exempt[n] = true
		}
	}
	type node struct {
		last, since sim.Time // last lookup (-1: none yet), last role change
		up, primary bool
	}
	ns := map[sim.NodeID]*node{}
	var members []sim.NodeID
	skewed := 0
	for _, g := range e.d.groups {
		if g.active {
			continue
		}
		for _, m := range g.members {
			if exempt[m] {
				skewed++
				continue
			}
			ns[m] = &node{last: -1, up: true}
			members = append(members, m)
		}
	}
	slices.Sort(members)
	gaps, worst := 0, time.Duration(0)
	var fail error
	// due checks node m at instant t: no lookup for 5 periods, or a polling primary
	// for a period.
	due := func(m sim.NodeID, t sim.Time) {
		s := ns[m]
		if fail != nil || !s.up || s.last < 0 {
			return
		}
		worst = max(worst, t.Sub(s.last))
		limit, why := 5*period, "5 ping periods"
		if s.since > s.last {
			// A claim's last period ends in taking the role (§5.2.3 step 41) rather
			// than in a lookup; the verification counter runs on from there.
			limit, why = 6*period, "5 ping periods and the one in which its role changed"
		}
		if t-s.last > limit {
			fail = fmt.Errorf("%s looked its group up at %v and not again by %v: more than %s (%v) without a verification", r.Final[m].Name, s.last, t, why, time.Duration(limit))
			return
		}
		if !e.d.notify && !e.d.thesis && s.primary && t-max(s.last, s.since) > period { // the thesis' primary learns its backups from their pings
			fail = fmt.Errorf("%s, primary since %v and polling (notify=false), looked its group up at %v and not again by %v: more than a period (%v)", r.Final[m].Name, s.since, s.last, t, e.period)
		}
	}
	cs := e.changes()
	ci := 0
	apply := func(upTo sim.Time, incl bool) {
		for ; ci < len(cs) && (cs[ci].at < upTo || incl && cs[ci].at == upTo); ci++ {
			c := cs[ci]
			s := ns[c.node]
			if c.node < 0 || s == nil {
				continue
			}
			if c.crash {
				due(c.node, c.at)
				s.up, s.primary, s.last = false, false, -1
			} else {
				s.up = true
			}
		}
	}
	for _, o := range r.History() {
		s := ns[o.Node]
		if s == nil {
			continue
		}
		switch v := o.Value.(type) {
		case rp.Looked:
			apply(o.Time, false)
			due(o.Node, o.Time)
			if s.last >= 0 {
				gaps++
			}
			s.last = o.Time
		case rp.Role:
			apply(o.Time, false)
			due(o.Node, o.Time)
			s.primary = v.Primary
			s.since = o.Time
		}
		if fail != nil {
			return fail
		}
	}
	apply(r.Time, true)
	for _, m := range members {
		due(m, r.Time)
	}
	if fail != nil {
		return fail
	}
	r.Note(fmt.Sprintf("%d gaps between lookups checked over %d replicas (longest %v; bound 5 periods, a period for a polling primary), %d replicas exempt (clock skewed or paused)", gaps, len(members), worst, skewed))
	return nil
}

// refusedLooksAgain checks RP-2, §5.3.3 (the replica locator): an invocation that fails
// calls handle_failure, which looks the group up in the registries again, and then
// invokes again. A passive call whose request a replica answers "not primary" (it
// was listed, but is not or no longer the primary) looks its group up in the same
// step, the first time; a second refusal of the same call waits for its re-send
// timer (caller.go, Relooked: a primary just stepping down stays listed for a while),
// so only first refusals are checked. Active calls multicast and take the first
// reply: a refusal is not a failure there.
func refusedLooksAgain(r *checker.Run) error {
	type key struct {
		node sim.NodeID
		id   string
	}
	seen := map[key]bool{}
	h := r.History()
	checked, later := 0, 0
	for i, o := range h {
		v, ok := o.Value.(rp.CallEvent)
		if !ok || o.Kind != rp.ObsRefused || v.Active {
			continue
		}
		k := key{o.Node, v.ID}
		if seen[k] {
			later++
			continue
		}
		seen[k] = true
		checked++
		looked := false
		for _, p := range h[i+1:] {
			if p.Time != o.Time {
				break
			}
			if w, ok := p.Value.(rp.CallEvent); ok && p.Node == o.Node && p.Kind == rp.ObsRelook && w.ID == v.ID {
				looked = true
				break
			}
		}
		if !looked {
			return fmt.Errorf("%s's call %s to group %s was answered \"not primary\" at %v and did not look the group up again", r.Final[o.Node].Name, v.ID, v.Group, o.Time)
		}
	}
	r.Note(fmt.Sprintf("%d first refusals of a call checked (%d later ones wait for the re-send)", checked, later))
	return nil
}

// linearizable is RP-P3 over the checked clients' operations (porcupine), counting
// the operations it judged.
func (e *env) linearizable() checker.Property {
	p := checker.LinearizableKeyed("RP-P3 linearizable", func(string) porcupineModel { return registerModel() }, e.ops, 0)
	check := p.Check
	p.Check = func(r *checker.Run) error {
		if err := check(r); err != nil {
			return err
		}
		ops, err := e.ops(r)
		if err != nil {
			return err
		}
		r.Count(len(ops), 0)
		return nil
	}
	return p
}

// RP-1 (§5.2.1: "the replica manager will use the same ID for all future
// registration"): a replica's registration ID never changes, across restarts too.
// Every lookup a replica makes carries its ID (rp.Looked), and so do its role
// changes; the final state's ID is the same.
func (e *env) idsKept(r *checker.Run) error {
	ids := map[sim.NodeID]rp.RegID{}
	restarted := map[sim.NodeID]bool{}
	for _, c := range e.moves {
		if !c.crash {
			restarted[c.node] = true
		}
	}
	see := func(n sim.NodeID, id rp.RegID, at sim.Time) error {
		if was, ok := ids[n]; ok && was != id {
			return fmt.Errorf("%s registered as %v and, at %v, as %v", r.Final[n].Name, was, at, id)
		}
		ids[n] = id
		return nil
	}
	for _, o := range r.History() {
		var err error
		switch v := o.Value.(type) {
		case rp.Looked:
			err = see(o.Node, v.ID, o.Time)
		case rp.Role:
			err = see(o.Node, v.ID, o.Time)
		}
		if err != nil {
			return err
		}
	}
	checked, again := 0, 0
	for _, g := range e.d.groups {
		for _, m := range g.members {
			f := r.Final[m]
			var id rp.RegID
			switch s := unwrap(f.State).(type) {
			case *rp.Replica:
				id = s.S.ID
			case *rp.ActiveReplica:
				id = s.S.ID
			default:
				continue // down at the end
			}
			if err := see(m, id, r.Time); err != nil {
				return err
			}
			checked++
			if restarted[m] {
				again++
			}
		}
	}
	r.Count(checked, 0)
	r.Note(fmt.Sprintf("%d replicas checked (%d restarted), 0 exempt", checked, again))
	return nil
}

// RP-2 §5.2.3 ("the lookup service may fail, too. Try every lookup registry") and
// §5.4.1 (a registry back from a crash lists only the replicas that renewed since,
// within a renewal period): a replica whose lookups list it alone claims the primary
// role only once they have done so for a renewal period (a third of the lease) and a
// period (rp.Failover.Alone); a claim from a lookup listing others is judged by the
// at-most-once and no-lost-ack properties.
func (e *env) aloneClaims(r *checker.Run) error {
	wait := e.lease/3 + e.period
	checked, others := 0, 0
	for _, o := range r.History() {
		v, ok := o.Value.(rp.Failover)
		if !ok || !v.Self {
			continue
		}
		if v.Listed != 1 {
			others++
			continue
		}
		checked++
		if v.Alone < wait {
			return fmt.Errorf("%s claimed the primary role alone at %v after its lookups had listed it alone for %v, less than a renewal period and a period (%v)", r.Final[o.Node].Name, o.Time, v.Alone, wait)
		}
	}
	r.Count(checked, others)
	r.Note(fmt.Sprintf("%d claims alone checked, %d exempt (the lookup listed others)", checked, others))
	return nil
}

// RP-2 §3.6.1 step 4 ("each backup sends an acknowledgement"): a backup acknowledges
// to the primary that it holds every request up to an index only when it has applied
// them (rp.Ack: Index ≤ Applied).
func acksHeld(r *checker.Run) error {
	n := 0
	for _, o := range r.History() {
		v, ok := o.Value.(rp.Ack)
		if !ok {
			continue
		}
		n++
		if v.Index > v.Applied {
			return fmt.Errorf("%s acknowledged index %d to %s at %v holding %d", r.Final[o.Node].Name, v.Index, r.Final[v.To].Name, o.Time, v.Applied)
		}
	}
	r.Count(n, 0)
	r.Note(fmt.Sprintf("%d acknowledgements checked", n))
	return nil
}

// RP-2 §3.6.1 steps 3-5 (and RP-4 §4.4 steps 2-3, a transition being such a request):
// a primary answers a request only after some primary ran it (the first answer of any
// request follows its first execution: a transition is not acknowledged on receipt),
// and it answers a request it ran itself in its current term only once every backup
// it waited for (rp.Exec.Backups) acknowledged holding it (an rp.Ack to it with the
// request's index or more) — a re-send answered while the request is in progress
// breaks it. A backup down at some instant from a lease and a period before the run to
// the answer is exempt (the registries drop it, or have not listed it again yet, and
// the primary stops waiting: swarm seed 6001), and so is every backup when a registry crashed or came
// back within a lease and a period before the answer (a registry back from a crash
// lists only the replicas that renewed since: the primary stops waiting for those it
// no longer finds) or another kind of fault happened meanwhile (outside the model).
func (e *env) answeredAfterAcks(r *checker.Run) error {
	type run struct {
		node    sim.NodeID
		index   int64
		at      sim.Time
		backups []sim.NodeID
	}
	cs := e.changes()
	noisy := func(from, to sim.Time) bool {
		return slices.ContainsFunc(cs, func(c change) bool {
			return c.at >= from && c.at <= to && (c.node < 0 || slices.Contains(e.d.regs, c.node))
		})
	}
	ran := map[string]run{}
	acked := map[[2]sim.NodeID]int64{} // (primary, backup) → the highest index acknowledged
	checked, dups, exempt := 0, 0, 0
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case rp.Exec:
			if o.Kind == rp.ObsExec {
				ran[v.Group+" "+v.ID] = run{o.Node, v.Index, o.Time, v.Backups}
			}
		case rp.Ack:
			k := [2]sim.NodeID{v.To, o.Node}
			acked[k] = max(acked[k], v.Index)
		case rp.Answer:
			x, ok := ran[v.Group+" "+v.ID]
			if !ok {
				return fmt.Errorf("%s (%s) answered %s at %v before any primary ran it", r.Final[o.Node].Name, v.Group, v.ID, o.Time)
			}
			if x.node != o.Node || e.crashedIn(o.Node, x.at, o.Time) {
				dups++ // answered from a table another term filled
				continue
			}
			checked++
			for _, b := range x.backups {
				if acked[[2]sim.NodeID{o.Node, b}] >= x.index {
					continue
				}
				// down since a lease before the run: the registries may not list it
				if e.downIn(b, x.at.Add(-e.lease-e.period), o.Time) || noisy(x.at.Add(-e.lease-e.period), o.Time) || e.otherIn(x.at, o.Time) {
					exempt++
					continue
				}
				return fmt.Errorf("%s (%s) answered %s (index %d, run at %v) at %v before its backup %s acknowledged it", r.Final[o.Node].Name, v.Group, v.ID, x.index, x.at, o.Time, r.Final[b].Name)
			}
		}
	}
	r.Count(checked, exempt)
	r.Note(fmt.Sprintf("%d answers checked, %d backups exempt (crashed, or a registry crashed around it), %d answers from a table another term filled", checked, exempt, dups))
	return nil
}
