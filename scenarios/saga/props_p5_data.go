package sagascen

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/sim"
)

// SG-P5: the services against sequential models.

// serviceOps turns every service call into an operation keyed by agent (each
// microservice its own partition).
func (e *env) serviceOps(r *checker.Run) ([]checker.Operation, error) {
	var ops []checker.Operation
	calls := map[string]int64{}
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case saga.Call:
			if o.Kind == saga.ObsCall {
				calls[v.Agent] = o.Index
			}
		case saga.Return:
			ops = append(ops, checker.Operation{Key: v.Call.Agent, Client: int(o.Node), Input: v.Call,
				Output: v, Call: calls[v.Call.Agent], Return: o.Index})
		}
	}
	return ops, nil
}

// serviceModel is the sequential specification of each microservice, written apart
// from the services (so a service that drifts from it is caught): the order
// service's orders, the customer service's credit and reservations, the generic
// service's applied steps.
func serviceModel(s *system) func(key string) porcupine.Model {
	return func(agent string) porcupine.Model {
		return porcupine.Model{
			Init: func() any { return specState{} },
			Step: func(st, in, out any) (bool, any) {
				next, ret := specStep(st.(specState), agent, in.(saga.Call), s.credit, s.receipts)
				got := out.(saga.Return)
				return ret.Ok == got.Ok, next
			},
			Equal: func(a, b any) bool { return a.(specState).key() == b.(specState).key() },
			DescribeOperation: func(in, out any) string {
				c, rt := in.(saga.Call), out.(saga.Return)
				return fmt.Sprintf("%s(%s order %d) → ok=%v %s", c.Action, c.Tr, c.In.Order, rt.Ok, rt.Why)
			},
		}
	}
}

// specState is a service's abstract state: sorted "key=value" facts.
type specState struct{ facts string }

func (s specState) key() string { return s.facts }

func (s specState) get(k string) (string, bool) {
	for _, f := range strings.Split(s.facts, ";") {
		if kk, v, ok := strings.Cut(f, "="); ok && kk == k {
			return v, true
		}
	}
	return "", false
}

func (s specState) set(k, v string) specState {
	var fs []string
	for _, f := range strings.Split(s.facts, ";") {
		if kk, _, ok := strings.Cut(f, "="); ok && kk != k {
			fs = append(fs, f)
		}
	}
	if v != "" {
		fs = append(fs, k+"="+v)
	}
	slices.Sort(fs)
	return specState{strings.Join(fs, ";")}
}

func specStep(s specState, agent string, c saga.Call, credit int64, receipts bool) (specState, saga.Return) {
	ok := func(st specState) (specState, saga.Return) { return st, saga.Return{Ok: true} }
	fail := saga.Return{Ok: false}
	ord := fmt.Sprint(c.In.Order)
	switch c.Action {
	case "createPendingOrder":
		if _, ex := s.get("o" + ord); ex {
			return s, fail
		}
		return ok(s.set("o"+ord, "pending"))
	case "deleteOrder":
		if _, ex := s.get("o" + ord); !ex {
			return s, fail
		}
		return ok(s.set("o"+ord, ""))
	case "approveOrder":
		if v, _ := s.get("o" + ord); v != "pending" {
			return s, fail
		}
		return ok(s.set("o"+ord, "approved"))
	case "cancelOrder":
		if v, _ := s.get("o" + ord); v != "approved" {
			return s, fail
		}
		return ok(s.set("o"+ord, "cancelled"))
	case "reserveCredit":
		have := credit
		if v, ex := s.get("c" + c.In.Customer); ex {
			fmt.Sscan(v, &have)
		}
		if _, ex := s.get("r" + ord); ex || c.In.Amount > have {
			return s, fail
		}
		return ok(s.set("c"+c.In.Customer, fmt.Sprint(have-c.In.Amount)).set("r"+ord, fmt.Sprint(c.In.Amount)))
	case "cancelReservation":
		v, ex := s.get("r" + ord)
		if !ex {
			return s, fail
		}
		var amt int64
		fmt.Sscan(v, &amt)
		have := credit
		if w, ex := s.get("c" + c.In.Customer); ex {
			fmt.Sscan(w, &have)
		}
		return ok(s.set("c"+c.In.Customer, fmt.Sprint(have+amt)).set("r"+ord, ""))
	}
	switch {
	case strings.HasPrefix(c.Action, "undo"):
		k := "s" + ord + "/do" + strings.TrimPrefix(c.Action, "undo")
		v, ex := s.get(k)
		if !ex || (receipts && v != fmt.Sprint(c.In.Amount)) {
			return s, fail
		}
		return ok(s.set(k, ""))
	case strings.HasPrefix(c.Action, "do"):
		k := "s" + ord + "/" + c.Action
		if c.In.Fail == agent+":"+c.Action {
			return s, fail
		}
		if _, ex := s.get(k); ex {
			return s, fail
		}
		if receipts {
			return ok(s.set(k, fmt.Sprint(saga.Receipt(c.In.Amount, agent, c.Action))))
		}
		return ok(s.set(k, "1"))
	}
	return s, fail
}

// SG-P5 at quiescence: the services' data agrees with the transactions' outcomes. For
// the paper's example: a committed order is approved and its credit reserved; a
// compensated one left no order (or a cancelled one) and no reservation; every
// customer's credit is the initial credit less the committed reservations. For the
// generic services: a committed transaction's every step is applied, a compensated
// one's none. A transaction's outcome is the one its agents decided (any of them: one
// outcome is checked apart). And every participant's log agrees: a transaction that
// is not excused (SG-P4) has, in each participant's log, the outcome decided and its
// sections processed (committed) or settled (compensated).
func (e *env) finalData(r *checker.Run) error {
	h := e.h(r)
	dbs := map[string]map[string]int64{}
	for _, f := range r.Final {
		db := map[string]int64{}
		for _, k := range f.Stable.Keys() {
			if strings.HasPrefix(k, "svc/") {
				v, _ := sim.Load[int64](f.Stable.View(), k)
				db[strings.TrimPrefix(k, "svc/")] = v
			}
		}
		dbs[f.Name] = db
	}
	checked, exempt := 0, 0
	defer func() { r.Count(checked, exempt) }()
	for _, id := range h.trs() {
		b := h.begins[id].Value.(saga.Begin)
		var out saga.Outcome
		for _, o := range h.outcomes[id] {
			out = o.Value.(saga.OutcomeEv).Outcome
		}
		if out == saga.Running {
			exempt++
			continue
		}
		checked++
		g := e.sys.opts.Graph(b.Start)
		var errs []error
		if !e.excused(r, id) {
			for _, f := range r.Final {
				if !slices.Contains(g.Agents, f.Name) {
					continue
				}
				rec, ok := sim.Load[saga.Tx](f.Stable.View(), "tx/"+id.String())
				if !ok || rec.Outcome != out {
					errs = append(errs, fmt.Errorf("transaction %s ended %s, but %s's log says %s", id, out, f.Name, rec.Outcome))
					continue
				}
				for _, st := range sortedStrings(rec.Own) {
					if s := rec.Own[st].State; (out == saga.Committed && s != saga.Processed) || (out == saga.Compensated && !settled(s)) {
						errs = append(errs, fmt.Errorf("transaction %s ended %s, but %s's log has its section %s %s", id, out, f.Name, st, s))
					}
				}
			}
		}
		for _, k := range g.Sections {
			db := dbs[k.Agent]
			ord := b.Input.Order
			switch k.Agent {
			case "order":
				st, ok := db[fmt.Sprintf("order/%d", ord)]
				if out == saga.Committed && (!ok || st != saga.OrderApproved) {
					errs = append(errs, fmt.Errorf("committed order %d is not approved (state %d)", ord, st))
				}
				if out == saga.Compensated && ok && st != saga.OrderCancelled {
					errs = append(errs, fmt.Errorf("compensated order %d is still there (state %d)", ord, st))
				}
			case "customer":
				amt, ok := db[fmt.Sprintf("resv/%d", ord)]
				if out == saga.Committed && !ok {
					errs = append(errs, fmt.Errorf("committed order %d has no credit reserved", ord))
				}
				if out == saga.Compensated && ok {
					errs = append(errs, fmt.Errorf("compensated order %d still holds %d of credit", ord, amt))
				}
			default:
				sec := e.sys.conf.Section(k)
				_, ok := db[fmt.Sprintf("step/%d/%s", ord, sec.Incoming)]
				if out == saga.Committed && !ok {
					errs = append(errs, fmt.Errorf("committed transaction %s lacks step %s at %s", id, sec.Incoming, k.Agent))
				}
				if out == saga.Compensated && ok {
					errs = append(errs, fmt.Errorf("compensated transaction %s still has step %s at %s", id, sec.Incoming, k.Agent))
				}
			}
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	if e.sys.paper {
		// Credit is conserved: a customer's credit plus the reservations its orders
		// hold equals the initial credit.
		held := map[string]int64{}
		for _, id := range h.trs() {
			b := h.begins[id].Value.(saga.Begin)
			if amt, ok := dbs["customer"][fmt.Sprintf("resv/%d", b.Input.Order)]; ok {
				held[b.Input.Customer] += amt
			}
		}
		for _, c := range sortedStrings(held) {
			credit, ok := dbs["customer"]["credit/"+c]
			if !ok {
				credit = e.sys.credit
			}
			if credit+held[c] != e.sys.credit {
				return fmt.Errorf("customer %s: credit %d plus reservations %d is not the initial %d", c, credit, held[c], e.sys.credit)
			}
		}
	}
	r.Note(fmt.Sprintf("%d ended transactions checked, %d unfinished exempt", checked, exempt))
	return nil
}

func settled(s saga.Status) bool {
	return s == saga.ProcessedCompensation || s == saga.Null || s == saga.Failed
}
