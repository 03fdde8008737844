package lsscen

import (
	"fmt"

	"github.com/simrun-dev/simrun/checker"
	ls "github.com/simrun-dev/simrun/protocols/leasing"
)

// LS-P3: per reference, the grantor takes messages in order, exactly once, each the
// one the holder sent; no message is lost while the reference stays live and the
// devices are in range; and no lease expires by its timer unless its devices were out
// of range (or down) at some point within a lease period before (no false expiry).
func (e *env) transientTolerance(r *checker.Run) error {
	x := e.li.get(r)
	flush := e.flush()
	var fwd []bool
	// Judged: every reference's messages (order, exactly once, none lost) and every
	// lease expiry by timer (no false expiry); exempt: an expiry the lease's holder
	// never saw, abandoned on purpose, after a crash, or after the other side ended.
	checked, exempt := 0, 0
	defer func() { r.Count(checked, exempt) }()
	for id, l := range x.eachRef {
		checked++
		sends, recvs := l.sends, l.recvs
		for i, rv := range recvs {
			if rv.V.Seq != int64(i+1) {
				return fmt.Errorf("reference %s: took message #%d in position %d (order broken)", id, rv.V.Seq, i+1)
			}
			if i >= len(sends) || sends[i].Index > rv.Index {
				return fmt.Errorf("reference %s: took message #%d that was never sent", id, rv.V.Seq)
			}
			if s := sends[i].V; s.Op != rv.V.Op || s.Method != rv.V.Method {
				return fmt.Errorf("reference %s: message #%d sent as %s %s, taken as %s %s", id, rv.V.Seq, s.Op, s.Method, rv.V.Op, rv.V.Method)
			}
		}
		// Which messages were processed: by sequence number 1…len(recvs) (any other
		// number fails below the first time it is seen; the map is for the numbers
		// below 1, which a correct run never has).
		fwd = fwd[:0]
		for range len(recvs) + 1 {
			fwd = append(fwd, false)
		}
		var odd map[int64]bool
		for _, f := range l.forwards {
			seq := f.V.Seq
			inRange := seq >= 1 && seq <= int64(len(recvs))
			if (inRange && fwd[seq]) || (!inRange && odd[seq]) {
				return fmt.Errorf("reference %s: message #%d processed twice", id, f.V.Seq)
			}
			if inRange {
				fwd[seq] = true
			} else {
				if odd == nil {
					odd = map[int64]bool{}
				}
				odd[seq] = true
			}
			if f.V.Seq > int64(len(recvs)) || !recvs[f.V.Seq-1].V.Live {
				return fmt.Errorf("reference %s: message #%d processed without being taken live", id, f.V.Seq)
			}
		}
		until := r.Time
		if se, ok := l.firstEnd(ls.Server); ok {
			until = min(until, se.Time)
		}
		if ce, ok := l.firstEnd(ls.Client); ok {
			until = min(until, ce.Time)
		}
		until = min(until, e.g.incarnationEnd(id.Grantor, id.GBoot)) // addressed to a dead incarnation
		if err := e.timely(r, x, id, sends, recvs, until); err != nil {
			return err
		}
		if len(sends) > len(recvs) {
			// The first message never taken must have had no chance: no time, between its
			// send and the end of either side (or of the run), when the devices were in
			// range long enough to get it across.
			s := sends[len(recvs)]
			switch {
			case e.g.crashedIn(id.Grantor, s.Time, until) || e.g.crashedIn(id.Holder, s.Time, until):
			case !window(e.g.pair(id.Grantor, id.Holder), s.Time, until, flush):
			default:
				return fmt.Errorf("reference %s: message #%d (%s %s) sent at %v was never taken, though the devices were in range for %v or more before %v and both sides were live",
					id, s.V.Seq, s.V.Op, s.V.Method, s.Time, flush, until)
			}
		}
	}
	for id, l := range x.eachLease {
		period := l.period
		m := e.margin(period)
		w := e.g.stretch(period) + m
		for _, side := range []ls.Side{ls.Server, ls.Client} {
			end, ok := l.firstEnd(side)
			if !ok || end.V.How != ls.Expired || end.V.Cause != "timer" {
				continue
			}
			exempt++ // until it is judged below
			if l.idled && l.idle <= end.Time {
				continue // abandoned on purpose before it expired
			}
			if !l.resolved {
				continue // the holder never received it: nobody used or renewed it
			}
			hboot := uint32(1 + e.g.restartsBy(id.Holder, l.resolve.Time)) // the holder's incarnation that took it
			if min(e.g.incarnationEnd(id.Holder, hboot), e.g.incarnationEnd(id.Grantor, id.GBoot)) < end.Time {
				continue // a side's incarnation crashed first: its state for the lease is gone
			}
			other := ls.Client
			if side == ls.Client {
				other = ls.Server
			}
			if oe, ok := l.firstEnd(other); ok && oe.Time < end.Time {
				continue // ended at the other side first (that end is judged on its own)
			}
			exempt--
			checked++
			if !overlaps(e.g.pair(id.Grantor, id.Holder), end.Time.Add(-w), end.Time) {
				return fmt.Errorf("lease %s (%s, %s): %s side expired at %v though its devices stayed in range since %v (its lease period %v plus margin %v): a false expiry",
					id, l.grant.V.Object, l.grant.V.Pattern, side, end.Time, end.Time.Add(-w), period, m)
			}
		}
	}
	return nil
}
