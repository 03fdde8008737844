package sagascen

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/protocols/saga"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// Bugs planted from here, one in the branch of each rule of the map (or of a gap the
// coverage issue listed), each caught by a system-level detector — the default swarm
// (saga/swarm, seeds 1-2000, stopping at the first failure) or a configuration of
// the model's portfolio — by a property of that rule. A planted bug is a Policy hook
// at one of the protocol's decision points, or a wrapper around every agent that
// changes the effects of one kind of step as a one-line bug in that branch would
// (drops a message or a write, retimes a timer, hides an input), named by the line
// it stands for.

// effects are a step's effects, for a wrapper to edit.
type effects struct {
	sends  []sim.Envelope
	timers []sim.TimerOp
	writes []sim.Write
	obs    []struct {
		kind string
		v    any
	}
}

// planted wraps an agent: each step runs the agent on a scratch outbox, then edit
// changes the step's effects (and, rarely, the agent's volatile state), and the
// result goes out. Before, when set, may replace the input first (nil: the step is
// dropped, as if never delivered).
type planted struct {
	A      *saga.Agent
	edit   func(a *saga.Agent, in sim.Input, e *effects)
	before func(a *saga.Agent, in sim.Input) *sim.Input
}

func (p *planted) Unwrap() sim.Node { return p.A }

func (p *planted) Clone() sim.Node {
	return &planted{A: p.A.Clone().(*saga.Agent), edit: p.edit, before: p.before}
}

func (p *planted) AppendState(b []byte) []byte { return p.A.AppendState(b) }

func (p *planted) Handle(in sim.Input, out *sim.Outbox) {
	if p.before != nil {
		x := p.before(p.A, in)
		if x == nil {
			return
		}
		in = *x
	}
	var scratch sim.Outbox
	p.A.Handle(in, &scratch)
	e := &effects{sends: scratch.Sends(), timers: scratch.Timers(), writes: scratch.Writes()}
	for i := 0; i < scratch.NumObservations(); i++ {
		k, v := scratch.Observation(i)
		e.obs = append(e.obs, struct {
			kind string
			v    any
		}{k, v})
	}
	if p.edit != nil {
		p.edit(p.A, in, e)
	}
	for _, w := range e.writes {
		if w.Delete {
			out.Delete(w.Key)
		} else {
			out.Store(w.Key, w.Value)
		}
	}
	for _, t := range e.timers {
		if t.Cancel {
			out.CancelTimer(t.ID)
		} else {
			out.SetTimer(t.ID, t.After)
		}
	}
	for _, s := range e.sends {
		out.Send(s.To, s.Msg)
	}
	for _, o := range e.obs {
		out.Observe(o.kind, o.v)
	}
}

// dropSends removes the sends for which drop is true.
func (e *effects) dropSends(drop func(m sim.Message) bool) {
	e.sends = slices.DeleteFunc(slices.Clone(e.sends), func(s sim.Envelope) bool { return drop(s.Msg) })
}

func wrapWith(edit func(a *saga.Agent, in sim.Input, e *effects)) func(sim.Node) sim.Node {
	return func(n sim.Node) sim.Node { return &planted{A: n.(*saga.Agent), edit: edit} }
}

func wrapBefore(before func(a *saga.Agent, in sim.Input) *sim.Input) func(sim.Node) sim.Node {
	return func(n sim.Node) sim.Node { return &planted{A: n.(*saga.Agent), before: before} }
}

func isNote(m sim.Message, ok func(n saga.Note) bool) bool {
	n, is := m.(saga.Note)
	return is && ok(n)
}

// plantedBug is one planted bug: the rule (tag) whose branch it breaks, the line it
// stands for, the variant, the detector (swarm, or a portfolio configuration) and
// the properties of which one must catch it.
type plantedBug struct {
	tag, line string
	plant     plant
	detector  string
	props     []string
}

// The model's eventually-properties (untimed configurations, connectivity).
const (
	decidedUntimed = "SG-P1/SG-P4 every transaction decided at every participant, sections consistent, nothing owed"
	decidedTimed   = "SG-P1/SG-P4 every transaction decided at every participant once the link is back (by the end of time)"
	witnessGiveUp  = "SG-4 the initiator gives up on a lost agent, and the transaction ends"
)

// stuck are the swarm's properties that a transaction that never ends everywhere
// breaks: whichever a seed shows first.
var stuck = []string{PropLive, PropFinalData, PropOwed, PropAtomic}

func pol(p saga.Policy) plant { return plant{policy: func() *saga.Policy { q := p; return &q }} }

var plantedBugs = []plantedBug{
	// SG-2
	{"SG-2 start", `a.out.Store("seq", a.S.Seq) left out: a restarted initiator makes a tr_id again`,
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			e.writes = slices.DeleteFunc(slices.Clone(e.writes), func(w sim.Write) bool { return w.Key == "seq" })
		})}, "paper", []string{mTrID}},
	{"SG-2 start", `a.out.Store("seq", a.S.Seq) left out (the swarm: the initiator's own crashes)`,
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			e.writes = slices.DeleteFunc(slices.Clone(e.writes), func(w sim.Write) bool { return w.Key == "seq" })
		})}, "swarm", []string{PropTrID}},
	{"SG-2 next", "forward skips the successors that start a new sub-transaction (next/3): parallel branches never start",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			e.dropSends(func(m sim.Message) bool { r, ok := m.(saga.Req); return ok && r.Sec.St != r.From.St })
		})}, "swarm", stuck},
	{"SG-2 join run", "a join runs on its first predecessor's request, without waiting for the others",
		plant{wrap: wrapBefore(func(a *saga.Agent, in sim.Input) *sim.Input {
			if r, ok := in.Msg.(saga.Req); ok && in.Kind == sim.Receive && a.S.Txs[r.Tr] != nil {
				if o := a.S.Txs[r.Tr].Own[r.Sec.St]; o != nil && len(a.O.Graph(r.Start).Preds[r.Sec]) > 1 {
					o.Got = slices.Clone(a.O.Graph(r.Start).Preds[r.Sec]) // as if every request had come
				}
			}
			return &in
		})}, "join", []string{mFlow}},
	{"SG-2 end", "ends := len(g.Succs[k]) == 0: a section that links a new sub-transaction does not say it ends its own",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			for i, o := range e.obs {
				if v, ok := o.v.(saga.SectionEv); ok && o.kind == saga.ObsSection && v.State == saga.Processed && v.EndsSt {
					if t := a.S.Txs[v.Tr]; t != nil && len(a.O.Graph(t.Start).Succs[v.Sec]) > 0 {
						v.EndsSt = false
						e.obs[i].v = v
					}
				}
			}
		})}, "swarm", []string{PropEnds}},
	{"SG-2 notice", "notify leaves out the processed notices: the initiator never knows a parallel branch ran (in a chain it infers it)",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			e.dropSends(func(m sim.Message) bool {
				return isNote(m, func(n saga.Note) bool { return n.Status == saga.Processed && n.Decision == saga.Running })
			})
		})}, "swarm", stuck},
	{"SG-2 commit", "the initiator's commit decision is not sent: only it ever ends the transaction (every participant's liveness and log)",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			e.dropSends(func(m sim.Message) bool {
				return isNote(m, func(n saga.Note) bool { return n.Decision == saga.Committed })
			})
		})}, "swarm", stuck},
	{"SG-2 commit learned", "a participant does not log the commit it learns: its log says running (every participant's end data)",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			if isNote(in.Msg, func(n saga.Note) bool { return n.Decision == saga.Committed }) {
				e.writes = slices.DeleteFunc(slices.Clone(e.writes), func(w sim.Write) bool { return strings.HasPrefix(w.Key, "tx/") })
			}
		})}, "swarm", []string{PropFinalData, PropOneOut, PropReplay}},
	// SG-3
	{"SG-3 fail", "a failed section is not told to the others: they never stop",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			e.dropSends(func(m sim.Message) bool { return isNote(m, func(n saga.Note) bool { return n.Status == saga.Failed }) })
		})}, "branch", []string{decidedUntimed}},
	{"SG-3 stop", "a failure notice does not stop the transaction at its receiver",
		plant{wrap: wrapBefore(func(a *saga.Agent, in sim.Input) *sim.Input {
			if isNote(in.Msg, func(n saga.Note) bool { return n.Status == saga.Failed && !n.Abort }) {
				return nil
			}
			return &in
		})}, "branch", []string{decidedUntimed}},
	{"SG-3 null", "abort calls the compensation of a section that never ran (-p bug=compensate-never-run)",
		plant{policy: bugs[2].policy}, "swarm", []string{PropNull, PropOrder}},
	{"SG-3 late", "a request after the abort runs its section (-p bug=run-after-abort)",
		plant{policy: bugs[3].policy}, "swarm", []string{PropDangling, PropFinalData, PropData}},
	{"SG-3 reverse wait", "compensates without waiting for the sections after it (-p bug=eager-compensation)",
		plant{policy: bugs[0].policy}, "swarm", []string{PropOrder}},
	{"SG-3 compensate", "a compensation is not told to the others: they never end",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			e.dropSends(func(m sim.Message) bool {
				return isNote(m, func(n saga.Note) bool { return n.Status == saga.ProcessedCompensation })
			})
		})}, "swarm", stuck},
	{"SG-3 undone", "another agent's compensation notice is ignored",
		plant{wrap: wrapBefore(func(a *saga.Agent, in sim.Input) *sim.Input {
			if isNote(in.Msg, func(n saga.Note) bool { return n.Status == saga.ProcessedCompensation }) {
				return nil
			}
			return &in
		})}, "swarm", stuck},
	{"SG-P3 duplicate", "a redelivered request runs its section again (-p bug=rerun-duplicates)",
		plant{policy: bugs[1].policy}, "swarm", []string{PropOnce, PropData, PropOrder}},
	// SG-4
	{"SG-4 exchange", "the exchange sends the view to the left neighbour only",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			e.sends = slices.DeleteFunc(slices.Clone(e.sends), func(s sim.Envelope) bool {
				_, beat := s.Msg.(saga.Beat)
				return beat && a.O.Names[s.To] > a.S.Name
			})
		})}, "swarm", []string{PropLost, PropQuiet}},
	{"SG-4 spread", "beat adopts only the sender's own entry: news does not cross the line (reported to all)",
		plant{wrap: wrapBefore(func(a *saga.Agent, in sim.Input) *sim.Input {
			if b, ok := in.Msg.(saga.Beat); ok {
				b.View = slices.DeleteFunc(slices.Clone(b.View), func(e saga.Entry) bool { return e.Agent != b.From && e.Agent != a.S.Name })
				in.Msg = b
			}
			return &in
		})}, "swarm", []string{PropLost}},
	{"SG-4 detect", "hearing a neighbour does not reset its silence: losses that never happened",
		plant{wrap: func(n sim.Node) sim.Node {
			p := &planted{A: n.(*saga.Agent)}
			var last map[string]sim.Time
			p.before = func(a *saga.Agent, in sim.Input) *sim.Input {
				last = maps.Clone(a.S.LastHeard)
				return &in
			}
			p.edit = func(a *saga.Agent, in sim.Input, e *effects) {
				if b, ok := in.Msg.(saga.Beat); ok && last != nil && !a.S.View[b.From].Lost {
					if t, ok := last[b.From]; ok {
						a.S.LastHeard[b.From] = t
					}
				}
			}
			return p
		}}, "swarm", []string{PropQuiet}},
	{"SG-4 lost", "no grace timer is set for a lost agent: the grace period never runs out",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			e.timers = slices.DeleteFunc(slices.Clone(e.timers), func(t sim.TimerOp) bool { return strings.HasPrefix(string(t.ID), "grace/") && !t.Cancel })
		})}, "swarm", []string{PropGrace}},
	{"SG-4 grace", "the grace timer is set for 1ms (as -p grace=1ms would)",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			for i, t := range e.timers {
				if strings.HasPrefix(string(t.ID), "grace/") && !t.Cancel {
					e.timers[i].After = time.Millisecond
				}
			}
		})}, "swarm", []string{PropGrace}},
	{"SG-4 give up", "the initiator never gives up on a lost agent's part",
		pol(saga.Policy{GivesUp: func(*saga.Tx, string, bool) bool { return false }}), "swarm", []string{PropGrace}},
	{"SG-4 initiator lost", "every participant gives up on a lost agent, the paper read literally (not only the initiator)",
		pol(saga.Policy{GivesUp: func(t *saga.Tx, gone string, stop bool) bool { return true }}), "swarm", []string{PropGrace}},
	{"SG-4 initiator lost", "every participant gives up on a lost agent (the connectivity configuration)",
		pol(saga.Policy{GivesUp: func(t *saga.Tx, gone string, stop bool) bool { return true }}), "connectivity", []string{mGiveUp}},
	{"SG-4 give-up learned", "the initiator's give-up notice is ignored: the participants never stop",
		plant{wrap: wrapBefore(func(a *saga.Agent, in sim.Input) *sim.Input {
			if isNote(in.Msg, func(n saga.Note) bool { return n.Abort }) {
				return nil
			}
			return &in
		})}, "connectivity", []string{decidedTimed, witnessGiveUp}},
	{"SG-4 give-up learned", "the initiator's give-up notice is ignored (the swarm: re-sent forever)",
		plant{wrap: wrapBefore(func(a *saga.Agent, in sim.Input) *sim.Input {
			if isNote(in.Msg, func(n saga.Note) bool { return n.Abort }) {
				return nil
			}
			return &in
		})}, "swarm", stuck},
	{"SG-4 resume", "paused messages are not sent when the lost agent is back",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			if slices.ContainsFunc(e.obs, func(o struct {
				kind string
				v    any
			}) bool {
				return o.kind == saga.ObsBack
			}) {
				e.dropSends(func(m sim.Message) bool { _, beat := m.(saga.Beat); return !beat })
			}
		})}, "connectivity", []string{decidedTimed, witnessGiveUp}},
	{"SG-4 no wait", "the compensation waits for the sections of a gone agent too",
		pol(saga.Policy{Ready: func(t *saga.Tx, k saga.SecKey, succs []saga.SecKey, ready bool) bool {
			return ready && !slices.ContainsFunc(succs, func(n saga.SecKey) bool {
				s := t.Known[n.String()]
				return s != saga.ProcessedCompensation && s != saga.Null && s != saga.Failed
			})
		}}), "swarm", []string{PropGrace}},
	{"SG-4 retry", "nothing is re-sent: a message lost to a partition never arrives",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			if in.Kind == sim.Timeout && in.Timer == "retry" {
				e.sends = nil
			}
		})}, "swarm", stuck},
	{"SG-4 replay", "the sequence is not reloaded at a restart: a tr_id made again",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			if in.Kind == sim.Restart {
				a.S.Seq = 0
			}
		})}, "paper", []string{mTrID}},
	{"SG-4 replay", "compensations are left out of the log (-p bug=forget-compensation)",
		plant{policy: bugs[4].policy}, "swarm", []string{PropReplay, PropOnce, PropData}},
	{"SG-4 replay resend", "a restarted agent does not re-send the notices its log owes",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			if in.Kind == sim.Restart {
				e.dropSends(func(m sim.Message) bool {
					return isNote(m, func(n saga.Note) bool { return n.Decision == saga.Running })
				})
			}
		})}, "branch", []string{decidedUntimed}},
	{"SG-4 replay decision", "a restarted initiator does not re-send its commit",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			if in.Kind == sim.Restart {
				e.dropSends(func(m sim.Message) bool {
					return isNote(m, func(n saga.Note) bool { return n.Decision == saga.Committed })
				})
			}
		})}, "paper", []string{decidedUntimed}},
	{"SG-4 reconnect", "a restarted agent's hello makes no one re-send",
		plant{wrap: wrapWith(func(a *saga.Agent, in sim.Input, e *effects) {
			if _, ok := in.Msg.(saga.Hello); ok {
				e.sends = nil
			}
		})}, "paper", []string{decidedUntimed}},
}

func TestPlantedBugsCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("sweeps and model checks of every planted bug")
	}
	m, err := model.Lookup("saga")
	if err != nil {
		t.Fatal(err)
	}
	for i, pb := range plantedBugs {
		name := "planted-" + strings.ReplaceAll(strings.ToLower(pb.tag), " ", "-") + "-" + string(rune('a'+i))
		testBugs[name] = pb.plant
		t.Run(pb.tag+"/"+pb.detector, func(t *testing.T) {
			defer delete(testBugs, name)
			got := ""
			if pb.detector == "swarm" {
				res, err := scenarios.Sweep(scenarios.SweepOptions{Scenario: "saga/swarm", Params: map[string]string{"bug": name},
					From: 1, To: 2000, StopAtFailure: true, FailureLimit: 1})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Failures) == 0 {
					t.Fatalf("%s (%s): 2000 swarm seeds pass", pb.tag, pb.line)
				}
				got = res.Failures[0].Property
				t.Logf("seed %d: %s: %s", res.Failures[0].Seed, got, res.Failures[0].Detail)
			} else {
				i := slices.IndexFunc(m.Portfolio, func(c model.Config) bool { return c.Name == pb.detector })
				params := maps.Clone(m.Portfolio[i].Params)
				params["bug"] = name
				res := checkModel(t, params, model.Options{Workers: 1, MaxStates: 2_000_000})
				if res.Violation == nil {
					t.Fatalf("%s (%s): configuration %s passes (%v)", pb.tag, pb.line, pb.detector, res.Outcome)
				}
				got = res.Violation.Name
				t.Logf("depth %d: %s", res.Violation.Depth, got)
			}
			if !slices.Contains(pb.props, got) {
				t.Errorf("%s (%s): caught by %q, want one of %q", pb.tag, pb.line, got, pb.props)
			}
		})
	}
}
