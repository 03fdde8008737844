//go:build !linux

package model

// slotAlloc provides the seen-set's slot arrays (on the Go heap on this platform).
type slotAlloc struct{}

func newSlotAlloc() *slotAlloc { return &slotAlloc{} }

func (a *slotAlloc) get(n uint64) ([]uint64, int) { return make([]uint64, n), -1 }

func (a *slotAlloc) put(int) {}

func (a *slotAlloc) close() {}
