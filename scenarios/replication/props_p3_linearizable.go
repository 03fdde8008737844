package rpscen

import (
	"fmt"

	"github.com/simrun-dev/simrun/checker"
	rp "github.com/simrun-dev/simrun/protocols/replication"
	"github.com/simrun-dev/simrun/sim"
)

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
