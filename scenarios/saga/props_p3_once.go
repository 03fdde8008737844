package sagascen

import (
	"fmt"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/protocols/saga"
)

// SG-P3 / duplicate effect: each incoming action and each compensation action runs at
// most once per (transaction, section), across crashes, retries and redelivery.
func (e *env) once(r *checker.Run) error {
	seen := map[string]int64{}
	n := 0
	for _, o := range e.h(r).calls {
		c := o.Value.(saga.Return).Call
		key := fmt.Sprintf("%s %s %s", c.Tr, c.Sec, c.Action)
		if first, dup := seen[key]; dup {
			return fmt.Errorf("transaction %s: %s ran %s twice (observations %d and %d)", c.Tr, c.Sec, c.Action, first, o.Index)
		}
		seen[key] = o.Index
		n++
	}
	r.Count(n, 0)
	r.Note(fmt.Sprintf("%d service calls checked", n))
	return nil
}
