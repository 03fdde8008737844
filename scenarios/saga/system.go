// Package sagascen holds the saga scenarios (protocols/saga): the paper's order
// example, parallel sub-transactions, crashes with log replay, partitions shorter and
// longer than the grace period, lossy links, a swarm of generated saga graphs (with
// joins, the initiator's own faults, outages around the grace period), the
// orchestrated and all-to-all baselines, the experiments and the model's portfolio
// (model.go); the properties every run checks (props.go lists them; SG-P1 and one
// outcome in props_p1_atomic.go, SG-P2 in props_p2_order.go, SG-P3 in
// props_p3_once.go, SG-P4 in props_p4_live.go, SG-P5 in props_p5_data.go, SG-2's and
// SG-3's steps (unique tr_id, sections in order on their predecessors' output, ends
// announced, ends after every section) in props_sg2_steps.go, null compensation and
// dangling action in props_compensation.go, log replay and nothing owed at the end in
// props_recovery.go; SG-4's "lost connectivity is reported to all" and "no loss once
// the faults settle", which read the fault plan, in detect.go; SG-4's grace period in
// grace.go); and the broken variants of -p bug= (bugs.go).
package sagascen

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/sim"
)

// system is a built saga system: its configuration, options and nodes.
type system struct {
	conf  *saga.Config
	opts  *saga.Options
	nodes []sim.NodeSpec
	// starts is where transactions start; credit is the customer service's initial
	// credit (the paper's example only).
	starts []saga.SecKey
	credit int64
	paper  bool
	// insufficient: every order asks for more than the customer's credit.
	insufficient bool
	// receipts: the generic services' outputs differ from their inputs (StepService).
	receipts bool
}

// timing holds the protocol's periods.
type timing struct {
	retry, beat, timeout, grace time.Duration
	allToAll                    bool
}

// services gives every agent of a configuration its microservice: the paper's order
// and customer services for those names, the generic step service for the others
// (with receipts: outputs that differ from inputs).
func services(conf *saga.Config, credit int64, receipts bool) map[string]saga.Service {
	m := map[string]saga.Service{}
	for _, a := range conf.Order {
		switch a {
		case "order":
			m[a] = saga.OrderService{}
		case "customer":
			m[a] = saga.CustomerService{InitialCredit: credit}
		default:
			m[a] = saga.StepService{Agent: a, Receipts: receipts}
		}
	}
	return m
}

// offers is the parser's check that a service offers each action.
func offers(credit int64) func(agent, action string) bool {
	return func(agent, action string) bool {
		switch agent {
		case "order":
			return saga.OrderService{}.Offers(action)
		case "customer":
			return saga.CustomerService{InitialCredit: credit}.Offers(action)
		}
		return saga.StepService{Agent: agent}.Offers(action)
	}
}

// build parses a configuration and builds the system (every agent a node, in
// configuration order).
func build(file, src string, credit int64, tm timing, policy *saga.Policy) (*system, error) {
	return buildWith(file, src, credit, false, tm, policy)
}

// buildWith is build, with receipts or not.
func buildWith(file, src string, credit int64, receipts bool, tm timing, policy *saga.Policy) (*system, error) {
	conf, err := saga.Parse(file, []byte(src), offers(credit))
	if err != nil {
		return nil, err
	}
	o := &saga.Options{Conf: conf, Names: slices.Clone(conf.Order), Services: services(conf, credit, receipts),
		Retry: tm.retry, Beat: tm.beat, Timeout: tm.timeout, Grace: tm.grace, AllToAll: tm.allToAll, Policy: policy}
	if err := o.Prepare(); err != nil {
		return nil, err
	}
	s := &system{conf: conf, opts: o, credit: credit, receipts: receipts}
	for i, n := range o.Names {
		s.nodes = append(s.nodes, sim.NodeSpec{Name: n, New: saga.New(o, i)})
	}
	return s, nil
}

// chainConfig is a saga of n sections along agents a1…an (one sub-transaction).
func chainConfig(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "// agent a%d\nincoming_action(main, do%d).\ncompensation_action(main, undo%d).\n", i, i, i)
		if i < n {
			fmt.Fprintf(&b, "next(main, a%d).\n", i+1)
		}
	}
	return b.String()
}

// parallelConfig: a booking at a1 continues at a2 then a4 (sub-transaction booking)
// and starts a parallel payment at a3 then a4 (next/3, sub-transaction payment).
const parallelConfig = `// agent a1
incoming_action(booking, doBook).
compensation_action(booking, undoBook).
next(booking, a2).
next(booking, payment, a3).

// agent a2
incoming_action(booking, doHotel).
compensation_action(booking, undoHotel).
next(booking, a4).

// agent a3
incoming_action(payment, doPay).
compensation_action(payment, undoPay).
next(payment, a4).

// agent a4
incoming_action(booking, doConfirm).
compensation_action(booking, undoConfirm).
incoming_action(payment, doReceipt).
compensation_action(payment, undoReceipt).
`

// genConfig draws a saga graph from r: of maxAgents agents (all of them in the
// configuration, some without sections), a main sub-transaction along distinct
// agents, and branches (next/3) from some of its sections, each a short path of its
// own, the first of which may join the main sub-transaction again further on (a
// section with two predecessors). It returns the configuration text (which goes through the parser) and the
// start section.
func genConfig(r *sim.Rand, maxAgents, maxLen int) (string, saga.SecKey) {
	// Every agent is a node (the connectivity line has them all, and fault plans name
	// a fixed node set); the graph uses the first n.
	all := make([]string, maxAgents)
	for i := range all {
		all[i] = fmt.Sprintf("a%d", i+1)
	}
	n := 2 + int(r.Int64Range(0, int64(maxAgents-2)))
	agents := all[:n]
	type sec struct {
		st, next  string
		links     [][2]string
		inc, comp string
	}
	secs := map[string]map[string]*sec{} // agent → st → section
	add := func(a, st string) *sec {
		if secs[a] == nil {
			secs[a] = map[string]*sec{}
		}
		s := &sec{st: st, inc: "do_" + st + "_" + a, comp: "undo_" + st + "_" + a}
		secs[a][st] = s
		return s
	}
	// path draws a simple path of length up to max over the agents, starting at from.
	path := func(st, from string, max int) []string {
		p := []string{from}
		rest := slices.DeleteFunc(slices.Clone(agents), func(x string) bool { return x == from })
		l := 1 + int(r.Int64Range(0, int64(min(max, len(rest)+1)-1)))
		for len(p) < l {
			i := int(r.Int64Range(0, int64(len(rest)-1)))
			p = append(p, rest[i])
			rest = slices.Delete(rest, i, i+1)
		}
		return p
	}
	mainPath := path("main", agents[0], maxLen)
	for i, a := range mainPath {
		s := add(a, "main")
		if i+1 < len(mainPath) {
			s.next = mainPath[i+1]
		}
	}
	branches := int(r.Int64Range(0, 2))
	joins := r.Float64() < 0.5 // the draw is made whatever the graph, so graphs stay comparable
	for b := 1; b <= branches; b++ {
		at := int(r.Int64Range(0, int64(len(mainPath)-1)))
		from := mainPath[at]
		st := fmt.Sprintf("br%d", b)
		first := agents[int(r.Int64Range(0, int64(n-1)))]
		bp := path(st, first, max(1, maxLen/2))
		secs[from]["main"].links = append(secs[from]["main"].links, [2]string{st, first})
		for i, a := range bp {
			s := add(a, st)
			if i+1 < len(bp) {
				s.next = bp[i+1]
			}
		}
		// A join: the branch's last section links back (next/3) into a later section
		// of the main sub-transaction, which then has two predecessors and waits for
		// both requests.
		to := at + 1 + int(r.Int64Range(0, int64(max(0, len(mainPath)-at-2))))
		local := r.Float64() < 0.5
		if joins && to < len(mainPath) {
			last := secs[bp[len(bp)-1]][st]
			if local && !slices.Contains(bp, mainPath[to]) {
				// the branch ends at the join's own agent: one of the join's requests is
				// local (the same agent runs both sections)
				last.next = mainPath[to]
				last = add(mainPath[to], st)
			}
			last.links = append(last.links, [2]string{"main", mainPath[to]})
			joins = false
		}
	}
	var b strings.Builder
	for _, a := range all {
		fmt.Fprintf(&b, "// agent %s\n", a)
		for _, st := range sortedStrings(secs[a]) {
			s := secs[a][st]
			fmt.Fprintf(&b, "incoming_action(%s, %s).\ncompensation_action(%s, %s).\n", st, s.inc, st, s.comp)
			if s.next != "" {
				fmt.Fprintf(&b, "next(%s, %s).\n", st, s.next)
			}
			for _, l := range s.links {
				fmt.Fprintf(&b, "next(%s, %s, %s).\n", st, l[0], l[1])
			}
		}
	}
	return b.String(), saga.SecKey{Agent: agents[0], St: "main"}
}

func sortedStrings[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
