package rpscen

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// SimpleFlow (RP-5, §4.4, Figure 4.2): manager → SimpleFlow → Start → Process → Stop →
// SimpleFlow → manager. The human tasks put the instance on the worklist and write its
// data to the data server (both actively replicated, as in §4.3); the SimpleFlow task
// logs to the monitor (passive). The manager and the task schedulers are passive
// groups (§4.3).
var simpleFlow = &rp.Flow{Route: []rp.Hop{
	{Group: "manager", Task: "create"},
	{Group: "SimpleFlow", Task: "SimpleFlow", Calls: []rp.Target{{Group: "monitor"}}},
	{Group: "Start", Task: "Start", Calls: []rp.Target{{Group: "worklist", Active: true}, {Group: "data", Active: true}}},
	{Group: "Process", Task: "Process", Calls: []rp.Target{{Group: "worklist", Active: true}, {Group: "data", Active: true}}},
	{Group: "Stop", Task: "Stop", Calls: []rp.Target{{Group: "worklist", Active: true}, {Group: "data", Active: true}}},
	{Group: "SimpleFlow", Task: "SimpleFlow (end)", Calls: []rp.Target{{Group: "monitor"}}},
	{Group: "manager", Task: "complete"},
}}

var schedulers = []string{"SimpleFlow", "Start", "Process", "Stop"}

// flowKind is one workflow scenario.
type flowKind struct {
	name, help string
	suite      bool
	// table61: the thesis' deployment (Table 6.1) instead of the generic one.
	table61 bool
	trig    func(d *deployment) []*trigger
	plan    func(b *scenarios.Build, d *deployment) (faults.Plan, error)
}

// The §4.5 cases are forced on instance SimpleFlow0 at the transition Start → Process.
const caseInst = "SimpleFlow0"

func taskObs(kind, grp string) func(o sim.Observation) bool {
	return func(o sim.Observation) bool {
		v, ok := o.Value.(rp.Task)
		return ok && o.Kind == kind && v.Group == grp && v.Inst == caseInst
	}
}

func primaryOf(d *deployment, grp string) func(k *sim.Kernel, _ *sim.Observation) []sim.NodeID {
	return func(k *sim.Kernel, _ *sim.Observation) []sim.NodeID {
		return []sim.NodeID{d.primary(k, d.groupNamed(grp))}
	}
}

func observer(k *sim.Kernel, o *sim.Observation) []sim.NodeID { return []sim.NodeID{o.Node} }

var flowKinds = []flowKind{
	{name: "simpleflow", help: "RP-5: SimpleFlow instances flow manager → SimpleFlow → Start → Process → Stop → SimpleFlow → manager over replicated components, no faults", suite: true},
	{name: "case-4.5.1", help: "§4.5.1: the primary predecessor (Start) crashes before invoking the successor (its task ran and is replicated): the new primary makes the transition", suite: true,
		trig: func(d *deployment) []*trigger {
			return []*trigger{{label: "4.5.1", what: "primary Start, before the transition", groups: []string{"Start"}, on: taskObs(rp.ObsTask, "Start"), victims: observer}}
		}},
	{name: "case-4.5.2", help: "§4.5.2: the primary successor (Process) crashes just before it would notify its backups (the transition request is on its way): the predecessor finds the new primary and tries again", suite: true,
		trig: func(d *deployment) []*trigger {
			return []*trigger{{label: "4.5.2", what: "primary Process, transition in flight", groups: []string{"Process"}, on: taskObs(rp.ObsTransition, "Start"), victims: primaryOf(d, "Process")}}
		}},
	{name: "case-4.5.3", help: "§4.5.3: the primary successor (Process) crashes while processing the transition (during its task's calls): the new primary resumes it, and the work is not duplicated", suite: true,
		trig: func(d *deployment) []*trigger {
			return []*trigger{{label: "4.5.3", what: "primary Process, while processing", groups: []string{"Process"}, on: taskObs(rp.ObsSideCall, "Process"), victims: observer}}
		}},
	{name: "case-4.5.4", help: "§4.5.4: the primary predecessor (Start) crashes while waiting for the acknowledgement: the new primary makes the transition again, the successor finds it done and acknowledges", suite: true,
		trig: func(d *deployment) []*trigger {
			return []*trigger{{label: "4.5.4", what: "primary Start, awaiting the ACK", groups: []string{"Start"}, on: func(o sim.Observation) bool {
				v, ok := o.Value.(rp.Exec)
				return ok && o.Kind == rp.ObsExec && v.ID == rp.PrefixTransition+rp.InstKey(caseInst, 3)
			}, victims: primaryOf(d, "Start")}}
		}},
	{name: "case-4.5.5", help: "§4.5.5: the primary predecessor (Start) crashes just before telling its backups \"done\" (the ACK is on its way): the new primary makes the transition again, the successor acknowledges it as done", suite: true,
		trig: func(d *deployment) []*trigger {
			return []*trigger{{label: "4.5.5", what: "primary Start, before \"done\"", groups: []string{"Start"}, on: taskObs(rp.ObsAnswer, "Process"), victims: primaryOf(d, "Start")}}
		}},
	{name: "case-partition", help: "§4.5 item 6, outside the thesis' fault model: the Process group's primary is cut off from everyone for 1.5s while instances flow; what breaks is reported",
		plan: func(b *scenarios.Build, d *deployment) (faults.Plan, error) {
			g := d.groupNamed("Process")
			return faults.Plan{Events: []faults.Event{
				{At: faults.Duration(700 * time.Millisecond), Kind: "partition", Groups: [][]string{{g.names[0]}}},
				{At: faults.Duration(2200 * time.Millisecond), Kind: "heal"},
			}}, nil
		}},
	{name: "chapter6", help: "RP-5, §6.3-6.8: Table 6.1's deployment; kill a registry, the primary monitor, a data server, the primary manager, an ORBWork server with its task schedulers (during a Process task) and a worklist server, one after another, while instances flow; prints the table of failovers", suite: true, table61: true,
		trig: func(d *deployment) []*trigger {
			node := func(n string) func(*sim.Kernel, *sim.Observation) []sim.NodeID {
				return func(*sim.Kernel, *sim.Observation) []sim.NodeID { id, _ := d.byName(n); return []sim.NodeID{id} }
			}
			s := time.Second
			return []*trigger{
				{label: "6.3", what: "registry server on gemini", at: sim.Time(1 * s), victims: node("gemini/registry")},
				{label: "6.4", what: "primary monitor", at: sim.Time(2 * s), groups: []string{"monitor"}, victims: primaryOf(d, "monitor")},
				{label: "6.5", what: "data server on cumming", at: sim.Time(3 * s), groups: []string{"data"}, victims: node("cumming/data")},
				{label: "6.6", what: "primary ORBWork manager", at: sim.Time(4 * s), groups: []string{"manager"}, victims: primaryOf(d, "manager")},
				// §6.7's key case on every seed: the ORBWork server killed is the one
				// hosting the Process primary (greensboro in the thesis), whichever the
				// registration IDs made it.
				killed67(d, 5*s),
				{label: "6.8", what: "worklist server on cumming", at: sim.Time(6 * s), groups: []string{"worklist"}, victims: node("cumming/worklist")},
			}
		}},
}

// killed67 is §6.7's kill at or after at, during a Process task: the ORBWork server
// hosting the Process group's primary, with its task schedulers; the table names it.
func killed67(d *deployment, at time.Duration) *trigger {
	t := &trigger{label: "6.7", what: "ORBWork server of the Process primary (its task schedulers, during a Process task)", at: sim.Time(at), groups: schedulers,
		on: func(o sim.Observation) bool {
			v, ok := o.Value.(rp.Task)
			return ok && o.Kind == rp.ObsSideCall && v.Group == "Process"
		}}
	t.victims = func(k *sim.Kernel, _ *sim.Observation) []sim.NodeID {
		host := "greensboro"
		if p := d.primary(k, d.groupNamed("Process")); p >= 0 {
			host, _, _ = strings.Cut(d.nodes[p].Name, "/")
		}
		t.what = "ORBWork server on " + host + ", the Process primary's (its task schedulers, during a Process task)"
		var out []sim.NodeID
		for _, g := range schedulers {
			id, _ := d.byName(host + "/" + g + ".scd")
			out = append(out, id)
		}
		return out
	}
	return t
}

func flowSetup(b *scenarios.Build, k flowKind) (*scenarios.Setup, error) {
	p := b.Params
	ni, nr := p.IntRange("instances", 1, 200), p.IntRange("replicas", 1, 5)
	every := p.PositiveDuration("every")
	period, lease, retry, bound := p.PositiveDuration("period"), p.PositiveDuration("lease"), p.PositiveDuration("retry"), p.PositiveDuration("bound")
	d, err := deploymentFor(p, period, lease)
	if err != nil {
		return nil, err
	}
	d.flow = simpleFlow
	if k.table61 {
		// the thesis' own membership (§5.2.2), or its future work's notices
		d.notify, d.thesis = p.Bool("notify"), true
	}
	if k.table61 {
		// Table 6.1 (the worklist server has three replicas, everything else two; the
		// ORBWork servers on greensboro and fargo host the task schedulers).
		d.registry("chamblee/registry")
		d.registry("gemini/registry")
		d.replicas("manager", false, "bainbridge/manager", "jekyll/manager")
		d.replicas("monitor", false, "largo/monitor", "cumming/monitor")
		d.replicas("data", true, "greensboro/data", "cumming/data")
		d.replicas("worklist", true, "cumming/worklist", "jekyll/worklist", "bainbridge/worklist")
		for _, g := range schedulers {
			d.replicas(g, false, "greensboro/"+g+".scd", "fargo/"+g+".scd")
		}
	} else {
		d.registry("r1")
		d.registry("r2")
		d.replicas("manager", false, "manager1", "manager2")
		d.replicas("monitor", false, "monitor1", "monitor2")
		d.replicas("data", true, "data1", "data2")
		d.replicas("worklist", true, "worklist1", "worklist2", "worklist3")
		for _, g := range schedulers {
			var ns []string
			for i := 1; i <= nr; i++ {
				ns = append(ns, fmt.Sprintf("%s.scd%d", g, i))
			}
			d.replicas(g, false, ns...)
		}
	}
	flowClients(b, d, ni, every, retry)
	var plan faults.Plan
	if k.plan != nil {
		if plan, err = b.FaultPlan(func() (faults.Plan, error) { return k.plan(b, d) }); err != nil {
			return nil, err
		}
	} else if b.Faults != nil {
		plan = *b.Faults
	}
	e := newEnv(d, plan, period, lease)
	if k.trig != nil {
		e.trig = k.trig(d)
	}
	return e.flowSetup(ni, every, bound), nil
}

// flowClients adds the user creating ni instances, one every every, through the
// manager group, and a clerk calling the worklist twice as often (checked: RP-P3).
func flowClients(b *scenarios.Build, d *deployment, ni int, every, retry time.Duration) {
	var create []rp.Op
	prefix := "SimpleFlow"
	if d.flow != simpleFlow {
		prefix = "flow"
	}
	for i := 0; i < ni; i++ {
		inst := fmt.Sprintf("%s%d", prefix, i)
		d.instances = append(d.instances, inst)
		create = append(create, rp.TransitionRequest(inst, 0, -1).Op)
	}
	d.client("user", d.groupNamed("manager"), create, retry, every, false)
	d.client("clerk", d.groupNamed("worklist"), kvOps(b.Seed, 1, 2*ni), retry, every/2, true)
}

// flowSetup returns a workflow run's setup: the properties every run checks and the
// workflow's own.
func (e *env) flowSetup(ni int, every, bound time.Duration) *scenarios.Setup {
	end := sim.Time(100*time.Millisecond + time.Duration(ni)*every + 3*time.Second)
	until := max(end, e.plan.Settled().At).Add(bound)
	s := e.setup(bound, until)
	s.Properties = append(s.Properties,
		scenarios.Bounded("RP-P1 every instance completes", bound, e.instances),
		checker.Property{Name: "RP-P1 every task once", Class: checker.Safety, NeedsCompleteRun: true, Check: e.tasksOnce},
		checker.Property{Name: "RP-4 one call per step and primary term", Class: checker.Safety, Check: e.callsOnce})
	s.Workload = func(kk *sim.Kernel) {
		for _, c := range e.d.clients {
			kk.Inject(sim.Time(100*time.Millisecond), c.node, rp.Go{})
		}
	}
	return s
}

// instances: each instance the user created completes (the manager runs the route's
// last hop) within the bound after its creation was acknowledged. (An instance may
// complete before the user hears of its creation: a user that crashed re-sends the
// request and gets the stored answer late.)
func (e *env) instances(r *checker.Run) []scenarios.Item {
	last := len(e.d.flow.Route) - 1
	var items []scenarios.Item
	at := map[string]int{}
	done := map[string]sim.Time{}
	for _, o := range r.History() {
		if v, ok := o.Value.(rp.Task); ok && o.Kind == rp.ObsTask && v.Hop == last {
			if _, seen := done[v.Inst]; !seen {
				done[v.Inst] = o.Time
			}
		}
	}
	for _, o := range r.History() {
		v, ok := o.Value.(rp.ClientOp)
		if !ok || o.Kind != rp.ObsReturn || !strings.HasSuffix(v.Op.Key, "#0") {
			continue
		}
		inst, _, _ := rp.ParseInstKey(v.Op.Key)
		if _, ok := at[inst]; !ok {
			at[inst] = len(items)
			it := scenarios.Item{Name: "instance " + inst, Start: o.Time}
			if t, ok := done[inst]; ok {
				it.Completed, it.Done = true, max(t, o.Time)
			}
			items = append(items, it)
		}
	}
	return items
}

// tasksOnce (RP-P1): every completed instance passed each task of the route, and a task
// ran again only where its earlier run was not yet replicated (the at-most-once check
// reads that from the backups); the callees' duplicate tables saw each task's calls
// once.
//
// RP-4 (§4.4 step 2): that at-most-once check sees a task only if its run is its
// hop's "ran" step. §4.4 makes a transition "an application of [the passive
// replication] model", the successor "processes the transition locally", and doc.go
// records each hop's status (queued, ran, handed over) by requests the primary makes
// to itself, replicated by update/done like a client's. So a task's run is observed in
// the step in which its primary executes the hop's ran request (R:instance#hop), right
// after that execution, and every ran request executed is a task's run.
func (e *env) tasksOnce(r *checker.Run) error {
	last := len(e.d.flow.Route) - 1
	ran := map[string]map[int]int{}
	h := r.History()
	steps := 0
	for i, o := range h {
		if v, ok := o.Value.(rp.Exec); ok && o.Kind == rp.ObsExec && strings.HasPrefix(v.ID, rp.PrefixRan) {
			if i+1 >= len(h) || h[i+1].Kind != rp.ObsTask || h[i+1].Node != o.Node || h[i+1].Time != o.Time {
				return fmt.Errorf("%s executed the ran step %s at %v without running its task", r.Final[o.Node].Name, v.ID, o.Time)
			}
		}
		if v, ok := o.Value.(rp.Task); ok && o.Kind == rp.ObsTask {
			steps++
			var x rp.Exec
			if i > 0 {
				x, _ = h[i-1].Value.(rp.Exec)
			}
			if i == 0 || h[i-1].Kind != rp.ObsExec || h[i-1].Node != o.Node || h[i-1].Time != o.Time || x.ID != rp.PrefixRan+rp.InstKey(v.Inst, v.Hop) {
				return fmt.Errorf("%s ran task %s of %s at hop %d at %v outside the hop's ran step (%s)", r.Final[o.Node].Name, v.Name, v.Inst, v.Hop, o.Time, rp.PrefixRan+rp.InstKey(v.Inst, v.Hop))
			}
			if ran[v.Inst] == nil {
				ran[v.Inst] = map[int]int{}
			}
			ran[v.Inst][v.Hop]++
		}
	}
	n, again := 0, 0
	for _, inst := range sortedKeys(ran) {
		h := ran[inst]
		if h[last] == 0 {
			continue
		}
		n++
		for hop := 0; hop <= last; hop++ {
			if h[hop] == 0 {
				return fmt.Errorf("instance %s completed without passing hop %d (%s)", inst, hop, e.d.flow.Route[hop].Task)
			}
			again += h[hop] - 1
		}
	}
	r.Note(fmt.Sprintf("%d completed instances checked, %d task runs each in its ran step, %d repeated before they were replicated", n, steps, again))
	return nil
}

// callsOnce (RP-4, §4.4 step 1): the primary predecessor requests a transition from
// the primary successor once, and a task makes each of its calls once; an unanswered
// request is re-sent to the primary found anew (§4.5.2), as the same call. So within
// one primary term of a replica (from its becoming primary to its next role change;
// a crash ends it too, and a restarted replica is a backup until it becomes primary
// again) each transition and each side call of an instance's hop is started at most
// once. (A repeat is answered from the callee's duplicate table, so RP-P1 does not
// see it: it is a step made twice by the same primary.)
func (e *env) callsOnce(r *checker.Run) error {
	term := map[sim.NodeID]int{}
	seen := map[string]bool{}
	n := 0
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case rp.Role:
			term[o.Node]++
		case rp.Task:
			if o.Kind != rp.ObsSideCall && o.Kind != rp.ObsTransition {
				continue
			}
			n++
			k := fmt.Sprintf("%d/%d %s %s#%d %s", o.Node, term[o.Node], o.Kind, v.Inst, v.Hop, v.To)
			if seen[k] {
				return fmt.Errorf("%s's primary %s started %s of %s at hop %d (%s → %s) twice in one term (at %v)", v.Group, r.Final[o.Node].Name, o.Kind, v.Inst, v.Hop, v.Name, v.To, o.Time)
			}
			seen[k] = true
		}
	}
	r.Note(fmt.Sprintf("%d calls and transitions checked, none exempt", n))
	return nil
}

// table is the chapter-6 table: what was killed, when, who became primary of each
// group it hit and how long the failover took; then the instances.
func (e *env) table(r *checker.Run) string {
	var b strings.Builder
	t := reports.NewTable("", "  §", "killed", "nodes", "at", "group", "primary after", "failover")
	add := func(cells ...string) {
		cells[0] = "  " + cells[0]
		t.Add(toAny(cells)...)
	}
	for _, tr := range e.trig {
		if !tr.fired {
			add(tr.label, tr.what, "-", "not reached", "-", "-", "-")
			continue
		}
		hit := append(slices.Clone(tr.crashed), tr.slowed...)
		nodes := strings.Join(names(e.d, hit), ", ")
		if len(hit) > 2 {
			nodes = fmt.Sprintf("%d nodes", len(hit))
		}
		at := fmt.Sprintf("%.3fs", tr.firedAt.Sub(0).Seconds())
		if len(tr.groups) == 0 {
			add(tr.label, tr.what, nodes, at, "-", "-", "-")
		}
		for i, grp := range tr.groups {
			prim, fo := e.takeover(r, tr, e.d.groupNamed(grp))
			if i == 0 {
				add(tr.label, tr.what, nodes, at, grp, prim, fo)
			} else {
				add("", "", "", "", grp, prim, fo)
			}
		}
	}
	b.WriteString("failovers  what was killed, and who took over\n")
	_ = t.WriteText(&b)
	if e.d.flow == nil {
		return b.String()
	}
	items := e.instances(r)
	done := 0
	for _, it := range items {
		if it.Completed {
			done++
		}
	}
	fmt.Fprintf(&b, "instances  %d created, %d completed\n", len(items), done)
	return b.String()
}

// takeover returns who holds group g's primary role after trigger tr fired (the first
// replica to take it after, or the one that held it before and survived) and how
// long the failover took.
func (e *env) takeover(r *checker.Run, tr *trigger, g *group) (string, string) {
	before := sim.NodeID(-1)
	for _, o := range r.History() {
		v, ok := o.Value.(rp.Role)
		if !ok || e.d.group[o.Node] != g {
			continue
		}
		if o.Time < tr.firedAt || (o.Time == tr.firedAt && slices.Contains(tr.crashed, o.Node)) {
			if v.Primary {
				before = o.Node
			} else if before == o.Node {
				before = -1
			}
			continue
		}
		if v.Primary {
			return r.Final[o.Node].Name, o.Time.Sub(tr.firedAt).Round(time.Millisecond).String()
		}
	}
	if before >= 0 && !slices.Contains(tr.crashed, before) {
		return r.Final[before].Name + " (kept)", "none needed"
	}
	return "no primary", "-"
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, x := range ss {
		out[i] = x
	}
	return out
}
