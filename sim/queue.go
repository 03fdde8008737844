package sim

// queue is a binary min-heap of (time, sequence) keys pointing into an event slab. The
// sequence number makes the order total: no ties, no dependence on the Go scheduler.
// Slab slots are recycled through a free list, so a steady-state run allocates nothing.
type queue struct {
	heap []qkey
	slab []event
	free []int32
	seq  uint64
}

type qkey struct {
	at   Time
	seq  uint64
	slot int32
}

func (a qkey) less(b qkey) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (q *queue) len() int { return len(q.heap) }

// push schedules ev at time at and returns its sequence number.
func (q *queue) push(at Time, ev event) uint64 {
	var slot int32
	if n := len(q.free); n > 0 {
		slot = q.free[n-1]
		q.free = q.free[:n-1]
		q.slab[slot] = ev
	} else {
		slot = int32(len(q.slab))
		q.slab = append(q.slab, ev)
	}
	q.seq++
	q.heap = append(q.heap, qkey{at: at, seq: q.seq, slot: slot})
	q.up(len(q.heap) - 1)
	return q.seq
}

// peek returns the earliest key without removing it.
func (q *queue) peek() qkey { return q.heap[0] }

// pop removes the earliest key. Its event stays in its slab slot, not to be reused,
// until release.
func (q *queue) pop() qkey {
	h := q.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	q.heap = h[:last]
	if last > 0 {
		q.down(0)
	}
	return top
}

// release frees a popped key's slot.
func (q *queue) release(slot int32) {
	q.slab[slot] = event{} // drop references for the GC
	q.free = append(q.free, slot)
}

func (q *queue) up(i int) {
	h := q.heap
	x := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if !x.less(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

func (q *queue) down(i int) {
	h := q.heap
	n := len(h)
	x := h[i]
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h[r].less(h[c]) {
			c = r
		}
		if !h[c].less(x) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = x
}
