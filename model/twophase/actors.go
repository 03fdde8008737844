package twophase

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/sim"
)

// The actor-system 2PC ("2pc"): a coordinator (node 0) and participants (nodes 1..n) as
// sim nodes, the textbook protocol with presumed abort:
//
//   - The workload hands the coordinator Begin. It force-writes "began", sends Prepare
//     to every participant and arms its vote timeout.
//   - A participant that receives Prepare while working force-writes "prepared" and
//     votes yes; one that has already given up (its give-up timer fired: the model's
//     RMChooseToAbort) votes no.
//   - The coordinator decides commit when every vote is yes, abort on a no vote or when
//     its vote timeout fires first; it force-writes the decision before sending it
//     (effects of one handler call are atomic, stable writes first) and observes
//     "decide".
//   - Recovery: a coordinator restarting with a decision re-sends it; one restarting
//     with "began" and no decision presumes abort (decides abort, writes, sends). A
//     participant restarting prepared is in doubt: it sends Inquiry once, and the
//     coordinator answers with its decision when it has one.
//
// Observations: "decide" (coordinator: "commit" or "abort"), "commit" and "abort"
// (participant: its NodeID). The ghost (Ledger) folds them; the properties are about
// it, like a TLA+ history variable: one decision at most, no participant committed
// while another aborted, a participant commits only after the coordinator decided
// commit. The sometimes-property "blocked" is the classic blocking state of 2PC: a
// participant prepared (in its stable storage, undecided) while the coordinator is down;
// with a crash budget of 0 the coordinator never goes down, so the property is not
// asked for there (a witness that cannot exist is no finding).

// Begin starts the transaction (workload input to the coordinator).
type Begin struct{}

// Kind implements sim.Message.
func (Begin) Kind() string { return "Begin" }

// Prepare asks a participant to vote.
type Prepare struct{}

// Kind implements sim.Message.
func (Prepare) Kind() string { return "Prepare" }

// Vote is a participant's vote.
type Vote struct {
	From sim.NodeID
	Yes  bool
}

// Kind implements sim.Message.
func (Vote) Kind() string { return "Vote" }

// Decision is the coordinator's decision.
type Decision struct{ Commit bool }

// Kind implements sim.Message.
func (Decision) Kind() string { return "Decision" }

// Inquiry asks the coordinator for its decision (an in-doubt participant after a
// restart).
type Inquiry struct{ From sim.NodeID }

// Kind implements sim.Message.
func (Inquiry) Kind() string { return "Inquiry" }

// Participant states (volatile and stable).
const (
	PWorking   = "working"
	PPrepared  = "prepared"
	PCommitted = "committed"
	PAborted   = "aborted"
)

// Coordinator is node 0.
type Coordinator struct {
	Parts    []sim.NodeID // participants
	Began    bool
	Yes      []sim.NodeID // yes votes received, sorted
	Decided  bool
	Decision bool // commit?
}

const voteTimer sim.TimerID = "vote-timeout"

// Handle implements sim.Node.
func (c *Coordinator) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Restart:
		c.Began, _ = sim.Load[bool](in.Stable, "began")
		if d, ok := sim.Load[bool](in.Stable, "decision"); ok {
			c.Decided, c.Decision = true, d
			c.broadcast(out) // recovery: re-send the decision
		} else if c.Began {
			c.decide(false, out) // presumed abort
		}
	case sim.Receive:
		switch m := in.Msg.(type) {
		case Begin:
			if c.Began {
				return
			}
			c.Began = true
			out.Store("began", true)
			out.Broadcast(c.Parts, Prepare{})
			out.SetTimer(voteTimer, 0)
		case Vote:
			if c.Decided || !c.Began {
				return
			}
			if !m.Yes {
				c.decide(false, out)
				return
			}
			if i, found := slices.BinarySearch(c.Yes, m.From); !found {
				c.Yes = slices.Insert(c.Yes, i, m.From)
			}
			if len(c.Yes) == len(c.Parts) {
				c.decide(true, out)
			}
		case Inquiry:
			if c.Decided {
				out.Send(m.From, Decision{Commit: c.Decision})
			}
		}
	case sim.Timeout:
		if in.Timer == voteTimer && !c.Decided {
			c.decide(false, out)
		}
	}
}

// RenameNodes implements model.NodeRenamer (symmetry reduction over the
// participants): the ID lists stay sorted, as the coordinator keeps them.
func (c *Coordinator) RenameNodes(p func(sim.NodeID) sim.NodeID) any {
	r := sim.RenameNodeIDs(c, p)
	slices.Sort(r.Parts)
	slices.Sort(r.Yes)
	return r
}

func (c *Coordinator) decide(commit bool, out *sim.Outbox) {
	c.Decided, c.Decision = true, commit
	out.CancelTimer(voteTimer)
	out.Store("decision", commit) // force-write before the decision leaves
	v := "abort"
	if commit {
		v = "commit"
	}
	out.Observe("decide", v)
	c.broadcast(out)
}

func (c *Coordinator) broadcast(out *sim.Outbox) {
	out.Broadcast(c.Parts, Decision{Commit: c.Decision})
}

// Participant is a resource manager.
type Participant struct {
	Coord sim.NodeID
	State string
}

const giveUpTimer sim.TimerID = "give-up"

// Handle implements sim.Node.
func (p *Participant) Handle(in sim.Input, out *sim.Outbox) {
	switch in.Kind {
	case sim.Start:
		p.State = PWorking
		out.SetTimer(giveUpTimer, 0) // the model's RMChooseToAbort
	case sim.Restart:
		p.State, _ = sim.Load[string](in.Stable, "state")
		if p.State == "" {
			// Nothing was written: the participant had not prepared, so it may
			// abort unilaterally (presumed abort).
			p.State = PAborted
			out.Store("state", p.State)
		}
		if p.State == PPrepared {
			out.Send(p.Coord, Inquiry{From: in.Self}) // in doubt
		}
	case sim.Receive:
		switch m := in.Msg.(type) {
		case Prepare:
			switch p.State {
			case PWorking:
				p.State = PPrepared
				out.Store("state", p.State) // force-write before voting yes
				out.CancelTimer(giveUpTimer)
				out.Send(p.Coord, Vote{From: in.Self, Yes: true})
			case PAborted:
				out.Send(p.Coord, Vote{From: in.Self, Yes: false})
			}
		case Decision:
			if p.State == PCommitted || p.State == PAborted {
				return
			}
			p.State = PAborted
			if m.Commit {
				p.State = PCommitted
			}
			out.Store("state", p.State)
			out.Observe(map[bool]string{true: "commit", false: "abort"}[m.Commit], in.Self)
		}
	case sim.Timeout:
		if in.Timer == giveUpTimer && p.State == PWorking {
			p.State = PAborted
			out.Store("state", p.State)
			out.Observe("abort", in.Self)
		}
	}
}

// Ledger is the 2PC ghost: what has been observed so far.
type Ledger struct {
	Decisions []string     // distinct "decide" values, sorted
	Committed []sim.NodeID // participants that observed commit, sorted
	Aborted   []sim.NodeID // participants that observed abort, sorted
}

// RenameNodes implements model.NodeRenamer: the ID lists stay sorted.
func (l Ledger) RenameNodes(p func(sim.NodeID) sim.NodeID) any {
	r := sim.RenameNodeIDs(l, p)
	slices.Sort(r.Committed)
	slices.Sort(r.Aborted)
	return r
}

// Fold adds one observation (a model.Ghost Fold).
func Fold(g any, o sim.Observation) any {
	l := g.(Ledger)
	add := func(xs []sim.NodeID, v sim.NodeID) []sim.NodeID {
		if i, ok := slices.BinarySearch(xs, v); !ok {
			return slices.Insert(xs, i, v)
		}
		return xs
	}
	switch o.Kind {
	case "decide":
		v := o.Value.(string)
		if i, ok := slices.BinarySearch(l.Decisions, v); !ok {
			l.Decisions = slices.Insert(l.Decisions, i, v)
		}
	case "commit":
		l.Committed = add(l.Committed, o.Value.(sim.NodeID))
	case "abort":
		l.Aborted = add(l.Aborted, o.Value.(sim.NodeID))
	}
	return l
}

// Config configures the actor 2PC.
type Config struct {
	Participants int
	Crashes      int
	// Coordinator, when set, builds the coordinator node instead of *Coordinator
	// (tests plug broken variants in here).
	Coordinator func(parts []sim.NodeID) sim.Node
	// Symmetry declares the participants interchangeable (symmetry reduction: one
	// state per orbit of their permutations; every property treats them alike).
	Symmetry bool
}

// Properties of the actor 2PC with the given crash budget: "blocked" only when a
// crash can happen (without one the blocking state is unreachable by construction).
func Properties(crashes int) []model.Property[*model.State] {
	ps := []model.Property[*model.State]{
		model.Always("one decision", func(s *model.State) bool {
			return len(model.GhostAs[Ledger](s).Decisions) <= 1
		}),
		model.Always("atomic", func(s *model.State) bool {
			l := model.GhostAs[Ledger](s)
			return len(l.Committed) == 0 || len(l.Aborted) == 0
		}),
		model.Always("commit only if decided", func(s *model.State) bool {
			l := model.GhostAs[Ledger](s)
			return len(l.Committed) == 0 || slices.Equal(l.Decisions, []string{"commit"})
		}),
		model.Sometimes("all committed", func(s *model.State) bool {
			return len(model.GhostAs[Ledger](s).Committed) == s.NumNodes()-1
		}),
	}
	if crashes > 0 {
		ps = append(ps, model.Sometimes("blocked", Blocked))
	}
	return ps
}

// Blocked is the classic blocking state: some participant has prepared (its stable
// state says so) and not learned the outcome, while the coordinator is down.
func Blocked(s *model.State) bool {
	if s.Up(0) {
		return false
	}
	for n := 1; n < s.NumNodes(); n++ {
		if v, ok := s.Stable(sim.NodeID(n)).Peek("state"); ok && v == PPrepared {
			return true
		}
	}
	return false
}

// Actors returns the actor-system 2PC: FIFO links, crash budget cfg.Crashes over every
// node, the workload one Begin.
func Actors(cfg Config) (*model.Actors, error) {
	if cfg.Participants < 1 || cfg.Participants > 8 {
		return nil, fmt.Errorf("participants=%d: want 1..8", cfg.Participants)
	}
	if cfg.Crashes < 0 || cfg.Crashes > 3 {
		return nil, fmt.Errorf("crashes=%d: want 0..3", cfg.Crashes)
	}
	parts := make([]sim.NodeID, cfg.Participants)
	for i := range parts {
		parts[i] = sim.NodeID(i + 1)
	}
	coord := cfg.Coordinator
	if coord == nil {
		coord = func(ps []sim.NodeID) sim.Node { return &Coordinator{Parts: ps} }
	}
	nodes := []sim.NodeSpec{{Name: "c", New: func() sim.Node { return coord(parts) }}}
	for _, p := range parts {
		nodes = append(nodes, sim.NodeSpec{Name: fmt.Sprintf("p%d", p), New: func() sim.Node { return &Participant{Coord: 0} }})
	}
	var sym model.Symmetry
	if cfg.Symmetry && len(parts) > 1 {
		sym.Nodes = parts
	}
	return &model.Actors{
		Symmetry:   sym,
		Name:       "2pc",
		Nodes:      nodes,
		Inject:     []model.Injection{{To: 0, Msg: Begin{}}},
		Crashes:    model.Crashes{Budget: cfg.Crashes},
		Ghost:      model.Ghost{Init: Ledger{}, Fold: Fold},
		Properties: Properties(cfg.Crashes),
	}, nil
}

func init() {
	model.Register(model.Model{
		Name: "2pc",
		Help: "two-phase commit as sim nodes (coordinator + participants), FIFO links, crash budget",
		Params: []model.Param{
			{Name: "participants", Default: "2", Help: "number of participants (1..8)"},
			{Name: "crashes", Default: "1", Help: "crash budget (0..3)"},
			{Name: "symmetry", Default: "false", Help: "symmetry reduction: the participants are interchangeable, one state per orbit (participants <= 7)"},
		},
		Build: func(p *model.Params) (model.System, error) {
			n := p.IntRange("participants", 1, 8)
			c := p.IntRange("crashes", 0, 3)
			sym := p.Bool("symmetry")
			if p.Err() != nil {
				return nil, p.Err()
			}
			return Actors(Config{Participants: n, Crashes: c, Symmetry: sym})
		},
	})
}
