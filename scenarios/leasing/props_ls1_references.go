package lsscen

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
)

// noSendAfterExpiry (LS-1): a holder sends nothing through a lease at or after its
// own deadline (the reference is expired then, even before its expiry timer runs).
func (e *env) noSendAfterExpiry(r *checker.Run) error {
	checked := 0
	for o := range e.li.get(r).scanned {
		if v, ok := o.Value.(*ls.ObsSend); ok && v.Deadline != 0 {
			checked++
			if v.At >= v.Deadline {
				return fmt.Errorf("%s sent %s #%d through %s at %v, at or after its deadline %v", r.Final[o.Node].Name, v.Op, v.Seq, v.Ref, v.At, v.Deadline)
			}
		}
	}
	r.Note(fmt.Sprintf("%d sends checked", checked))
	return nil
}

// bufferedUntilAcked (LS-1): a message sent through a reference stays in the holder's
// buffer until the grantor acknowledges it, so right after a ping the API's Buffered
// count is at least 1 (that ping cannot have been acknowledged yet) and at most the
// messages sent through the reference so far.
func (e *env) bufferedUntilAcked(r *checker.Run) error {
	x := e.li.get(r)
	views := 0
	for o := range x.scanned {
		if v, ok := o.Value.(ls.ProbeView); ok {
			views++
			// The messages sent through the reference so far: its sends (in history
			// order) before the view.
			sends := x.lease(v.Ref).sends
			sent, _ := slices.BinarySearchFunc(sends, o.Index, func(s obsOf[ls.ObsSend], i int64) int { return cmp.Compare(s.Index, i) })
			if v.Buffered < 1 || v.Buffered > sent {
				return fmt.Errorf("%s: right after a ping through %s, Buffered is %d (sent so far: %d)", r.Final[o.Node].Name, v.Ref, v.Buffered, sent)
			}
		}
	}
	r.Note(fmt.Sprintf("%d views checked", views))
	return nil
}
