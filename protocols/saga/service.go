package saga

import (
	"fmt"
	"strings"
)

// Data is a section's input_data or output_data (§3.1 leaves its form to the
// implementation): the order, the customer, the amount; Fail names a section whose
// incoming action must fail (the generic services of generated workloads).
type Data struct {
	Order    int64
	Customer string
	Amount   int64
	Fail     string
}

// DB is a microservice's database: integer values by key, kept in the node's stable
// storage (each key under "svc/") and written in the same step as the agent's log
// (SG-4's crash extension: log and state change atomic together).
type DB struct {
	m       map[string]int64
	changed map[string]bool
}

// Get returns the value under k (0 and false if absent).
func (d *DB) Get(k string) (int64, bool) { v, ok := d.m[k]; return v, ok }

// Put sets k.
func (d *DB) Put(k string, v int64) { d.m[k] = v; d.mark(k) }

// Del removes k.
func (d *DB) Del(k string) { delete(d.m, k); d.mark(k) }

func (d *DB) mark(k string) {
	if d.changed == nil {
		d.changed = map[string]bool{}
	}
	d.changed[k] = true
}

// Service is a microservice: the actions it offers, run against its database. Call
// returns the output data, or ok false and why when the action fails (a business
// failure, like insufficient credit: the compensation flow follows, SG-3).
type Service interface {
	Offers(action string) bool
	Call(db *DB, action string, in Data) (out Data, ok bool, why string)
}

// Order states in the order service's database.
const (
	OrderPending   = 1
	OrderApproved  = 2
	OrderCancelled = 3
)

// OrderService is the paper's order microservice.
type OrderService struct{}

// Offers implements Service.
func (OrderService) Offers(a string) bool {
	switch a {
	case "createPendingOrder", "deleteOrder", "approveOrder", "cancelOrder":
		return true
	}
	return false
}

// Call implements Service.
func (OrderService) Call(db *DB, a string, in Data) (Data, bool, string) {
	k := fmt.Sprintf("order/%d", in.Order)
	st, ok := db.Get(k)
	switch a {
	case "createPendingOrder":
		if ok {
			return in, false, "order exists"
		}
		db.Put(k, OrderPending)
	case "deleteOrder":
		if !ok {
			return in, false, "no such order"
		}
		db.Del(k)
	case "approveOrder":
		if st != OrderPending {
			return in, false, "order not pending"
		}
		db.Put(k, OrderApproved)
	case "cancelOrder":
		if st != OrderApproved {
			return in, false, "order not approved"
		}
		db.Put(k, OrderCancelled)
	default:
		return in, false, "unknown action " + a
	}
	return in, true, ""
}

// CustomerService is the paper's customer microservice: credit per customer and
// reservations per order. Credit starts at InitialCredit for a customer never seen.
type CustomerService struct{ InitialCredit int64 }

// Offers implements Service.
func (CustomerService) Offers(a string) bool { return a == "reserveCredit" || a == "cancelReservation" }

// Call implements Service.
func (c CustomerService) Call(db *DB, a string, in Data) (Data, bool, string) {
	ck, rk := "credit/"+in.Customer, fmt.Sprintf("resv/%d", in.Order)
	credit, ok := db.Get(ck)
	if !ok {
		credit = c.InitialCredit
	}
	switch a {
	case "reserveCredit":
		if _, dup := db.Get(rk); dup {
			return in, false, "reservation exists"
		}
		if in.Amount > credit {
			return in, false, "insufficient credit"
		}
		db.Put(ck, credit-in.Amount)
		db.Put(rk, in.Amount)
	case "cancelReservation":
		amt, ok := db.Get(rk)
		if !ok {
			return in, false, "no such reservation"
		}
		db.Put(ck, credit+amt)
		db.Del(rk)
	default:
		return in, false, "unknown action " + a
	}
	return in, true, ""
}

// StepService is the generic microservice of generated workloads: any action named
// do… applies a step of the transaction (key "step/ORDER/ACTION"), any action named
// undo… removes the step its name mirrors (undoX undoes doX). A do-action fails when
// the input's Fail names it ("agent:action"), as the workload draws it.
//
// With Receipts, an action's output_data differs from its input_data (§3.1): a
// do-action stores and returns (as Amount) a receipt made of its input's Amount and its
// own name, and its undo takes the receipt (the output data, as compensation_action
// does) and fails on any other. So a section run on data other than its
// predecessor's output, or compensated with data other than its own output, shows.
type StepService struct {
	Agent    string
	Receipts bool
}

// Receipt is the receipt a do-action of agent returns for input amount in.
func Receipt(in int64, agent, action string) int64 {
	h := uint64(14695981039346656037)
	for _, c := range []byte(agent + ":" + action) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return int64((uint64(in)*1_000_003+h)%(1<<31)) + 1
}

// Offers implements Service.
func (StepService) Offers(a string) bool {
	return strings.HasPrefix(a, "do") || strings.HasPrefix(a, "undo")
}

// Call implements Service.
func (s StepService) Call(db *DB, a string, in Data) (Data, bool, string) {
	switch {
	case strings.HasPrefix(a, "undo"):
		k := fmt.Sprintf("step/%d/do%s", in.Order, strings.TrimPrefix(a, "undo"))
		v, ok := db.Get(k)
		if !ok {
			return in, false, "nothing to undo"
		}
		if s.Receipts && in.Amount != v {
			return in, false, fmt.Sprintf("receipt %d is not the step's output %d", in.Amount, v)
		}
		db.Del(k)
	case strings.HasPrefix(a, "do"):
		k := fmt.Sprintf("step/%d/%s", in.Order, a)
		if in.Fail != "" && in.Fail == s.Agent+":"+a {
			return in, false, "failure planted by the workload"
		}
		if _, ok := db.Get(k); ok {
			return in, false, "step applied twice"
		}
		if s.Receipts {
			out := in
			out.Amount = Receipt(in.Amount, s.Agent, a)
			db.Put(k, out.Amount)
			return out, true, ""
		}
		db.Put(k, 1)
	default:
		return in, false, "unknown action " + a
	}
	return in, true, ""
}
