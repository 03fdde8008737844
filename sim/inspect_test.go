package sim_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

type keyT struct{ K string }

type inspected struct {
	Public  int
	private string
	byNum   map[int]bool
	byKey   map[keyT]int
	ptr     *keyT
	none    *keyT
	wait    time.Duration
	at      sim.Time
	bytes   []byte
	nan     float64
	fn      func()
	list    []any
	cache   []int `inspect:"-"`
}

// Inspect shows unexported fields in declaration order, maps in key order (numbers
// numerically, struct keys as {K:v}), durations as text, and no function nor field
// tagged inspect:"-"; the JSON is the same every time.
func TestInspect(t *testing.T) {
	v := &inspected{
		Public: 1, private: "p", byNum: map[int]bool{10: true, 2: false, -1: true},
		byKey: map[keyT]int{{"b"}: 2, {"a"}: 1}, ptr: &keyT{"x"}, none: nil, wait: 1500 * time.Millisecond,
		at: sim.Time(2 * time.Second), bytes: []byte{0xde, 0xad}, nan: math.NaN(), fn: func() {}, list: []any{nil, 3, "s"},
		cache: []int{1},
	}
	want := `{"Public":1,"private":"p","byNum":{"-1":true,"2":false,"10":true},"byKey":{"{K:a}":1,"{K:b}":2},"ptr":{"K":"x"},"none":null,"wait":"1.5s","at":"2s","bytes":"dead","nan":"NaN","list":[null,3,"s"]}`
	for i := 0; i < 20; i++ {
		b, err := json.Marshal(sim.Inspect(v))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want {
			t.Fatalf("got  %s\nwant %s", b, want)
		}
	}
	// An Object reads back in order.
	var o sim.Object
	if err := json.Unmarshal([]byte(`{"z":1,"a":{"y":[1,{"q":2}],"b":null}}`), &o); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(o)
	if string(b) != `{"z":1,"a":{"y":[1,{"q":2}],"b":null}}` {
		t.Fatalf("round trip: %s", b)
	}
	if err := json.Unmarshal([]byte(`[1]`), &o); err == nil {
		t.Fatal("an array read as an Object")
	}
}

// Snapshot between events: a timer armed, a message in flight with its delivery time,
// stable storage written, a crashed node down with its storage kept.
func TestSnapshot(t *testing.T) {
	k, err := sim.New(sim.Config{Seed: 1, Nodes: []sim.NodeSpec{
		{Name: "s", New: func() sim.Node { return &sender{To: 1, Count: 3, Gap: 10 * ms} }},
		{Name: "r", New: func() sim.Node { return recorder{} }},
	}, Network: sim.Network{Latency: sim.Constant(5 * ms)}})
	if err != nil {
		t.Fatal(err)
	}
	s0 := k.Snapshot()
	if len(s0.Nodes) != 2 || !s0.Nodes[0].Up || len(s0.InFlight) != 0 || s0.Nodes[0].State == nil {
		t.Fatalf("before the first event: %+v", s0)
	}
	for k.Events() < 3 { // start s, start r, s's first tick (sends #0)
		k.Step()
	}
	s := k.Snapshot()
	if len(s.InFlight) != 1 || s.InFlight[0].From != "s" || s.InFlight[0].To != "r" || s.InFlight[0].Kind != "Seq" || s.InFlight[0].At != sim.Time(5*ms) {
		t.Fatalf("in flight after the first send: %+v", s.InFlight)
	}
	if len(s.Nodes[0].Timers) != 1 || s.Nodes[0].Timers[0].ID != "tick" || s.Nodes[0].Timers[0].Due != sim.Time(10*ms) {
		t.Fatalf("timers: %+v", s.Nodes[0].Timers)
	}
	b, _ := json.Marshal(s)
	b2, _ := json.Marshal(k.Snapshot())
	if string(b) != string(b2) {
		t.Fatal("two snapshots of one state differ")
	}
}
