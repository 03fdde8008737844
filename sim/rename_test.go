package sim

import (
	"reflect"
	"testing"
)

type renameInner struct {
	Peer  NodeID
	Count int
}

type renameNode struct {
	Self    NodeID
	Peers   []NodeID
	Votes   map[NodeID]bool
	ByName  map[string]NodeID
	Arr     [2]NodeID
	In      *renameInner
	Any     any
	hidden  NodeID
	Label   string
	Numbers []int
}

func TestRenameNodeIDs(t *testing.T) {
	swap := func(id NodeID) NodeID { // 1 <-> 2
		switch id {
		case 1:
			return 2
		case 2:
			return 1
		}
		return id
	}
	in := &renameNode{
		Self: 1, Peers: []NodeID{0, 1, 2}, Votes: map[NodeID]bool{1: true, 2: false},
		ByName: map[string]NodeID{"x": 2}, Arr: [2]NodeID{2, Env}, In: &renameInner{Peer: 1, Count: 7},
		Any: renameInner{Peer: 2}, hidden: 2, Label: "n1", Numbers: []int{1, 2},
	}
	out := RenameNodeIDs(in, swap)
	want := &renameNode{
		Self: 2, Peers: []NodeID{0, 2, 1}, Votes: map[NodeID]bool{2: true, 1: false},
		ByName: map[string]NodeID{"x": 1}, Arr: [2]NodeID{1, Env}, In: &renameInner{Peer: 2, Count: 7},
		Any: renameInner{Peer: 1}, hidden: 1, Label: "n1", Numbers: []int{1, 2},
	}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("renamed:\n%+v\nwant\n%+v", out, want)
	}
	if in.Self != 1 || in.Peers[1] != 1 || in.In.Peer != 1 || in.hidden != 2 {
		t.Fatalf("the original was modified: %+v", in)
	}
	out.Numbers[0] = 9 // parts without IDs are copies too
	if in.Numbers[0] != 1 {
		t.Fatal("a NodeID-free slice is shared with the original")
	}
	// As an interface value (how the checker calls it).
	var m any = renameInner{Peer: 1}
	if got := RenameNodeIDs(m, swap); got != (renameInner{Peer: 2, Count: 0}) {
		t.Fatalf("interface value: %+v", got)
	}
	if got := RenameNodeIDs[any](nil, swap); got != nil {
		t.Fatalf("nil: %v", got)
	}
}

type renameList struct {
	Next *renameList
	ID   NodeID
}

func TestRenameNodeIDsRecursiveType(t *testing.T) {
	l := &renameList{ID: 1, Next: &renameList{ID: 2}}
	out := RenameNodeIDs(l, func(id NodeID) NodeID { return id + 10 })
	if out.ID != 11 || out.Next.ID != 12 || out.Next.Next != nil {
		t.Fatalf("%+v %+v", out, out.Next)
	}
}
