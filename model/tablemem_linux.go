//go:build linux

package model

import (
	"syscall"
	"unsafe"
)

// slotAlloc provides the seen-set's slot arrays outside the Go heap, in transparent
// huge pages when the kernel allows it (THP "madvise" mode is common): the table is
// probed at random, and 2 MiB pages cut the TLB misses of a table far larger than the
// TLB's reach.
//
// A growing table needs the old and the new array at once, so the allocator keeps two
// regions and alternates between them: the new array reuses the region the table lived
// in two growths ago, cleared with memclr, instead of faulting in fresh pages (on a
// virtual machine, first-touch page faults cost far more than clearing memory). A
// region is mapped with room for the next two growths, so it is rarely remapped.
type slotAlloc struct {
	regions [2]region
}

type region struct {
	mem   []byte
	dirty int // bytes that may be non-zero
	inUse bool
}

// smallSlots are allocated on the Go heap.
const smallSlots = 1 << 19

func newSlotAlloc() *slotAlloc { return &slotAlloc{} }

// get returns n zeroed slots and a handle for put (-1: Go heap).
func (a *slotAlloc) get(n uint64) ([]uint64, int) {
	if n < smallSlots {
		return make([]uint64, n), -1
	}
	size := int(n * 8)
	for i := range a.regions {
		r := &a.regions[i]
		if r.inUse {
			continue
		}
		if len(r.mem) < size {
			if r.mem != nil {
				_ = syscall.Munmap(r.mem)
				r.mem, r.dirty = nil, 0
			}
			capacity := (size*9/4 + 2<<20 - 1) &^ (2<<20 - 1) // two growths of 1.5×
			mem, err := syscall.Mmap(-1, 0, capacity, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|syscall.MAP_NORESERVE)
			if err != nil {
				return make([]uint64, n), -1
			}
			_ = syscall.Madvise(mem, 14) // MADV_HUGEPAGE; an error only means small pages
			r.mem = mem
		}
		slots := unsafe.Slice((*uint64)(unsafe.Pointer(&r.mem[0])), n)
		if r.dirty > 0 {
			clear(slots[:min(uint64(r.dirty/8), n)])
		}
		r.dirty = max(r.dirty, size)
		r.inUse = true
		return slots, i
	}
	return make([]uint64, n), -1
}

// put returns the slots of handle h.
func (a *slotAlloc) put(h int) {
	if h >= 0 {
		a.regions[h].inUse = false
	}
}

// close unmaps everything; no slots may be used afterwards.
func (a *slotAlloc) close() {
	for i := range a.regions {
		if r := &a.regions[i]; r.mem != nil {
			_ = syscall.Munmap(r.mem)
			*r = region{}
		}
	}
}
