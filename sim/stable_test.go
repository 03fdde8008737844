package sim_test

import (
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

// Storage.All visits every record until f says false.
func TestStorageAll(t *testing.T) {
	s := sim.NewStorage()
	if !s.All(func(string, any) bool { return false }) {
		t.Fatal("an empty store: All must hold")
	}
	s.Apply([]sim.Write{{Key: "a", Value: 1}, {Key: "b", Value: 2}, {Key: "c", Value: 3}})
	seen := 0
	if !s.All(func(_ string, v any) bool { seen++; return v.(int) > 0 }) || seen != 3 {
		t.Fatalf("All over three positive records: visited %d", seen)
	}
	seen = 0
	if s.All(func(k string, _ any) bool { seen++; return k != "b" }) {
		t.Fatal("All must fail when one record fails")
	}
	if seen > 3 {
		t.Fatalf("visited %d records of 3", seen)
	}
}
