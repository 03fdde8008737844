package model_test

import (
	"fmt"
	"os"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/sim"
)

// Ball is hit back and forth; N counts the hits so far.
type Ball struct{ N int }

func (Ball) Kind() string { return "Ball" }

// Go is the workload input that makes the server serve.
type Go struct{}

func (Go) Kind() string { return "Go" }

// Player returns the ball until it has hit Max times. Its hit count is in stable
// storage, so it survives a crash; a ball in flight to a crashed player is lost.
type Player struct {
	Peer sim.NodeID
	Max  int
	Hits int
}

func (p *Player) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Restart:
		p.Hits, _ = sim.Load[int](in.Stable, "hits")
	case sim.Receive:
		switch m := in.Msg.(type) {
		case Go:
			p.hit(0, out)
		case Ball:
			p.hit(m.N+1, out)
		}
	}
}

func (p *Player) hit(n int, out *sim.Outbox) {
	if p.Hits < p.Max {
		p.Hits++
		out.Store("hits", p.Hits)
		out.Observe("hit", n)
		out.Send(p.Peer, Ball{N: n})
	}
}

// PingPong is the actor system of the package documentation.
func PingPong(max int) *model.Actors {
	return &model.Actors{
		Name: "pingpong",
		Nodes: []sim.NodeSpec{
			{Name: "a", New: func() sim.Node { return &Player{Peer: 1, Max: max} }},
			{Name: "b", New: func() sim.Node { return &Player{Peer: 0, Max: max} }},
		},
		Inject:  []model.Injection{{To: 0, Msg: Go{}}},
		Crashes: model.Crashes{Budget: 1, Nodes: []sim.NodeID{1}},
		Ghost: model.Ghost{Init: 0, Fold: func(g any, o sim.Observation) any {
			if o.Kind == "hit" {
				return g.(int) + 1
			}
			return g
		}},
		Properties: []model.Property[*model.State]{
			model.Always("hits bounded", func(s *model.State) bool { return model.GhostAs[int](s) <= 2*max }),
			model.Sometimes("b crashed with the ball in flight", func(s *model.State) bool {
				return !s.Up(1) && len(s.InFlight()) > 0
			}),
			model.Eventually("game over", func(s *model.State) bool { return model.GhostAs[int](s) == 2*max }),
		},
	}
}

// The ball is lost when b crashes while it is in flight to b, so "game over" fails on a
// maximal path: the checker finds the shortest such path.
func Example_actors() {
	res, err := model.Check(PingPong(2), model.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Outcome, res.Distinct, res.Total, res.Depth)
	for _, p := range res.Properties {
		fmt.Println(p.Kind, p.Name, p.Status, p.Depth)
	}
	steps, _ := res.Steps(res.Violation)
	for _, s := range steps {
		fmt.Println(s)
	}
	// A counterexample is a trace the simulator's tools read.
	_ = res.WriteTrace(os.Stdout, res.Violation, model.TraceHeader{Format: sim.TraceFormat, Engine: model.TraceEngine, Scenario: "pingpong", Property: res.Violation.Name, Kind: res.Violation.Kind})
	// Output:
	// violation 20 26 8
	// always no-panic holds 0
	// always hits bounded holds 0
	// sometimes b crashed with the ball in flight witnessed 4
	// eventually game over failed 4
	// start a
	// start b
	// inject a <- env Go {}; store hits; send b Ball; observe hit 0
	// crash b (1 message(s) in flight to it lost)
	// restart b
	// {"format":"simrun-trace/1","engine":"model","scenario":"pingpong","seed":0,"params":null,"property":"game over","kind":"eventually","strategy":""}
	// {"i":0,"t":0,"ev":"start","node":"a","local":0}
	// {"i":1,"t":0,"ev":"start","node":"b","local":0}
	// {"i":2,"t":0,"ev":"inject","node":"a","local":0,"from":"env","kind":"Go","msg":{},"out":[{"op":"store","key":"hits","value":1},{"op":"send","to":"b","kind":"Ball","msg":{"N":0}},{"op":"obs","kind":"hit","value":0}]}
	// {"i":3,"t":0,"ev":"crash","node":"b","why":"1 message(s) in flight to it lost"}
	// {"i":4,"t":0,"ev":"restart","node":"b","local":0}
	// {"end":"violation of eventually game over","events":5,"time":0,"sent":1,"delivered":0,"lost":0,"lines":5,"hash":"sha256:fd7cc09ae4c2b6da1b899161b883db8eaf193d0c39b4db6d96b35be4bca3489b"}
}
