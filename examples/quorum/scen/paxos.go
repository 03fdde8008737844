package scen

import (
	"fmt"
	"slices"
	"time"

	"example.com/quorum/paxos"

	"github.com/simrun-dev/simrun/checker"
	"github.com/simrun-dev/simrun/faults"
	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// Paxos's scenario (a swarm) and model: agreement — at most one value is chosen.
func init() {
	scenarios.Register(&scenarios.Scenario{
		Name: "paxos/swarm", Help: "single-decree Paxos, 2 proposers, 3 acceptors; crashes, partitions and spikes drawn from the seed",
		Params: []scenarios.Param{{Name: "attempts", Default: "4", Help: "ballots each proposer may start"}},
		Build: func(b *scenarios.Build) (*scenarios.Setup, error) {
			attempts := b.Params.IntRange("attempts", 1, 50)
			if err := b.Params.Err(); err != nil {
				return nil, err
			}
			nodes := paxos.Nodes(paxos.Config{Proposers: 2, Acceptors: 3, Attempts: attempts, Retry: 50 * time.Millisecond})
			names := make([]string, len(nodes))
			for i, n := range nodes {
				names[i] = n.Name
			}
			plan, err := b.FaultPlan(func() (faults.Plan, error) {
				p := faults.DefaultParams(time.Second)
				p.Crashable = names[:5]
				p.MaxDown = 1
				p.CrashSendFrac = 0.5
				return faults.Generate(b.Seed, names, faults.Swarm(b.Seed, p))
			})
			if err != nil {
				return nil, err
			}
			return &scenarios.Setup{Nodes: nodes, Faults: plan, Until: sim.Time(3 * time.Second),
				Properties: []checker.Property{agreement}}, nil
		},
	})
	model.Register(model.Model{
		Name: "paxos",
		Help: "single-decree Paxos (an outside user's model, no declarations): proposers, 3 acceptors, a learner; agreement",
		Params: []model.Param{
			{Name: "proposers", Default: "2", Help: "proposers (1..3)"},
			{Name: "attempts", Default: "1", Help: "ballots each proposer may start (1..4)"},
			{Name: "crashes", Default: "0", Help: "crash budget over the acceptors, crashes mid-send included (0..2; 1 gives 4.9 million states)"},
		},
		Build: func(p *model.Params) (model.System, error) {
			props, att, cr := p.IntRange("proposers", 1, 3), p.IntRange("attempts", 1, 4), p.IntRange("crashes", 0, 2)
			if p.Err() != nil {
				return nil, p.Err()
			}
			return PaxosModel(paxos.Config{Proposers: props, Acceptors: 3, Attempts: att, Retry: time.Second}, cr), nil
		},
	})
}

// agreement: every value the learner learns is the same.
var agreement = checker.Property{Name: "paxos/agreement", Class: checker.Safety, Check: func(r *checker.Run) error {
	var first *paxos.Chosen
	n := 0
	for _, c := range checker.Values[paxos.Chosen](r.History(), "chosen") {
		n++
		if first == nil {
			first = &c
		} else if c.V != first.V {
			return fmt.Errorf("%s chosen in ballot %v, then %s in ballot %v", first.V, first.B, c.V, c.B)
		}
	}
	r.Count(n, 0)
	return nil
}}

// PaxosModel is the model checker's system: the same nodes, a crash budget over the
// acceptors, a ghost of the values chosen.
func PaxosModel(c paxos.Config, crashes int) *model.Actors {
	nodes := paxos.Nodes(c)
	var acc []sim.NodeID
	for i := 0; i < c.Acceptors; i++ {
		acc = append(acc, sim.NodeID(c.Proposers+i))
	}
	chosen := func(s *model.State) []string { return model.GhostAs[[]string](s) }
	return &model.Actors{
		Name: "paxos", Nodes: nodes,
		Crashes: model.Crashes{Budget: crashes, Nodes: acc, MidSend: true},
		Ghost: model.Ghost{Init: []string(nil), Fold: func(g any, o sim.Observation) any {
			vs := g.([]string)
			if c, ok := o.Value.(paxos.Chosen); ok && !slices.Contains(vs, c.V) {
				vs = append(vs, c.V)
				slices.Sort(vs)
			}
			return vs
		}},
		Properties: []model.Property[*model.State]{
			model.Always("agreement", func(s *model.State) bool { return len(chosen(s)) <= 1 }).
				When(func(s *model.State) bool { return len(chosen(s)) > 0 }),
			model.Sometimes("a value is chosen", func(s *model.State) bool { return len(chosen(s)) > 0 }),
		},
	}
}
