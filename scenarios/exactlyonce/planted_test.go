package eoscen

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/simrun-dev/simrun/model"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// Planted bugs: one-line bugs of the protocol written from test code — a hook of
// eo.Policy, or an edit of what a node's handler call does (an input ignored, a send,
// timer or stable write left out or changed) — and the system-level detector that
// catches each: the default swarm (exactlyonce/swarm, seeds 1-2000, as `simrun sweep`
// runs it) or a configuration of the model's portfolio (as `simrun check` runs it).

// call is what one handler call of a node did, for an edit to change.
type call struct {
	sends  []sim.Envelope
	timers []sim.TimerOp
	writes []sim.Write
	obs    []obsRec
}

type obsRec struct {
	kind  string
	value any
}

// editor plants a bug by editing handler calls: ignore (when set) reports inputs the
// node never handles; after edits the effects of a call it handled.
type editor struct {
	ignore func(self sim.NodeID, in sim.Input) bool
	after  func(self sim.NodeID, in sim.Input, c *call)
}

// plantedNode runs a node under an editor.
type plantedNode struct {
	*eo.Node
	ed *editor
}

func (p *plantedNode) Clone() sim.Node {
	return &plantedNode{Node: p.Node.Clone().(*eo.Node), ed: p.ed}
}

func (p *plantedNode) Handle(in sim.Input, out *sim.Outbox) {
	if p.ed.ignore != nil && p.ed.ignore(in.Self, in) {
		return
	}
	var scratch sim.Outbox
	p.Node.Handle(in, &scratch)
	c := call{sends: slices.Clone(scratch.Sends()), timers: slices.Clone(scratch.Timers()), writes: slices.Clone(scratch.Writes())}
	for i := 0; i < scratch.NumObservations(); i++ {
		k, v := scratch.Observation(i)
		c.obs = append(c.obs, obsRec{k, v})
	}
	if p.ed.after != nil {
		p.ed.after(in.Self, in, &c)
	}
	for _, e := range c.sends {
		out.Send(e.To, e.Msg)
	}
	for _, t := range c.timers {
		if t.Cancel {
			out.CancelTimer(t.ID)
		} else {
			out.SetTimer(t.ID, t.After)
		}
	}
	for _, w := range c.writes {
		if w.Delete {
			out.Delete(w.Key)
		} else {
			out.Store(w.Key, w.Value)
		}
	}
	for _, o := range c.obs {
		out.Observe(o.kind, o.value)
	}
}

func (ed *editor) planting(policy func(*eo.Policy)) *planting {
	pl := &planting{policy: policy}
	if ed != nil {
		pl.wrap = func(n sim.Node) sim.Node { return &plantedNode{Node: n.(*eo.Node), ed: ed} }
	}
	return pl
}

// Edits.

// timerKind is a timer's kind ("inq" of "inq/1/2").
func timerKind(id sim.TimerID) string { k, _, _ := strings.Cut(string(id), "/"); return k }

// onTimer reports whether in is the firing of a timer of kind.
func onTimer(in sim.Input, kind string) bool {
	return in.Kind == sim.Timeout && timerKind(in.Timer) == kind
}

// dropTimers leaves out the timers of kind the call sets.
func dropTimers(c *call, kind string) {
	c.timers = slices.DeleteFunc(c.timers, func(t sim.TimerOp) bool { return !t.Cancel && timerKind(t.ID) == kind })
}

// dropSends leaves out the call's sends of message kind.
func dropSends(c *call, kind string) {
	c.sends = slices.DeleteFunc(c.sends, func(e sim.Envelope) bool { return e.Msg.Kind() == kind })
}

// ignoreMsg ignores received messages of kind.
func ignoreMsg(kind string) func(sim.NodeID, sim.Input) bool {
	return func(_ sim.NodeID, in sim.Input) bool { return in.Kind == sim.Receive && in.Msg.Kind() == kind }
}

// Detectors.

var plantedMu sync.Mutex

// sweepPlanted sweeps exactlyonce/swarm seeds 1..to with pl planted (a scenario of its
// own, registered once per name, with the swarm's every draw) and returns the lowest
// failing seed's property ("" if none failed).
func sweepPlanted(t *testing.T, name string, pl *planting, to uint64) (uint64, string, string) {
	t.Helper()
	sc := "exactlyonce/swarm~" + name
	plantedMu.Lock()
	if _, err := scenarios.Lookup(sc); err != nil {
		scenarios.Register(&scenarios.Scenario{Name: sc, Help: "exactlyonce/swarm with a planted bug (tests)", Params: Params(nil),
			Build: func(b *scenarios.Build) (*scenarios.Setup, error) { return build(b, nil, nil, pl) }})
	}
	plantedMu.Unlock()
	res, err := scenarios.Sweep(scenarios.SweepOptions{Scenario: sc, From: 1, To: to, StopAtFailure: true, FailureLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed == 0 {
		return 0, "", ""
	}
	f := res.Failures[0]
	return f.Seed, f.Property, f.Detail
}

// checkPlanted checks the portfolio configuration named config with pl planted.
func checkPlanted(t *testing.T, config string, pl *planting) *model.Result {
	t.Helper()
	i := slices.IndexFunc(Portfolio, func(c model.Config) bool { return c.Name == config })
	if i < 0 {
		t.Fatalf("no portfolio configuration %q", config)
	}
	p, err := model.NewParams(ModelParams, Portfolio[i].Params)
	if err != nil {
		t.Fatal(err)
	}
	o, err := modelOptions(p)
	if err != nil {
		t.Fatal(err)
	}
	o.plant = pl
	sys, err := ModelSystem(o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := model.Check(sys, model.Options{MaxStates: 4_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Violation == nil {
		// A sometimes-property the search completed without witnessing fails too.
		for i, p := range res.Properties {
			if p.Status == model.Failed {
				res.Violation = res.Properties[i]
				break
			}
		}
	}
	return res
}

// plantedBug is one planted bug: the rule whose branch it breaks, the bug, and where
// it must be caught: by the swarm (seeds 1..Seeds) or a portfolio configuration, with
// one of the properties named.
type plantedBug struct {
	rule, name string
	policy     func(*eo.Policy)
	edit       *editor
	// swarm: the lowest failing seed must be at most this; model: the portfolio
	// configuration that must find a violation.
	swarm uint64
	model string
	// props lists the properties that may report it (any of them).
	props []string
	// slow: the detector takes a second or more (a swarm seed past 200, the largest
	// portfolio configuration); -short leaves it out.
	slow bool
}

// Edit builders.

// onMsg matches the receipt of a message of kind; onTimerOf the firing of a timer of
// kind; onRestart a restart; anyInput every input.
func onMsg(kind string) func(sim.Input) bool {
	return func(in sim.Input) bool { return in.Kind == sim.Receive && in.Msg.Kind() == kind }
}
func onTimerOf(kind string) func(sim.Input) bool {
	return func(in sim.Input) bool { return onTimer(in, kind) }
}
func onRestart(in sim.Input) bool { return in.Kind == sim.Restart }
func anyInput(sim.Input) bool     { return true }

// edits applies f to the calls whose input matches when.
func edits(when func(sim.Input) bool, f func(c *call)) *editor {
	return &editor{after: func(_ sim.NodeID, in sim.Input, c *call) {
		if when(in) {
			f(c)
		}
	}}
}

// ignores makes nodes ignore received messages of kind.
func ignores(kind string) *editor { return &editor{ignore: ignoreMsg(kind)} }

// noSends leaves out the sends of kind of the calls when matches.
func noSends(when func(sim.Input) bool, kind string) *editor {
	return edits(when, func(c *call) { dropSends(c, kind) })
}

// noTimers leaves out the timers of kind the calls when matches set.
func noTimers(when func(sim.Input) bool, kind string) *editor {
	return edits(when, func(c *call) { dropTimers(c, kind) })
}

// noWrites leaves out the stable writes (stores and deletes) of keys with prefix.
func noWrites(when func(sim.Input) bool, prefix string) *editor {
	return edits(when, func(c *call) {
		c.writes = slices.DeleteFunc(c.writes, func(w sim.Write) bool { return strings.HasPrefix(w.Key, prefix) })
	})
}

// plantedBugs is the catalogue; TestPlantedBugsCaught runs every one.
var plantedBugs = []plantedBug{
	// EO-5 conditional votes over a partial set: COND_YES({A,B}) must wait for both.
	{rule: "EO-5 cond-yes partial", name: "condyes-any",
		policy: func(p *eo.Policy) {
			p.CondYesHolds = func(set, yes []sim.NodeID) bool {
				return len(set) == 0 || slices.ContainsFunc(set, func(n sim.NodeID) bool { return slices.Contains(yes, n) })
			}
		},
		model: "three-orchestrators", props: []string{PropCondYes, PropSupport}, slow: true},
	// EO-5 ties of an even stage: exactly half NO makes a majority impossible.
	{rule: "EO-5 tie", name: "tie-waits",
		policy: func(p *eo.Policy) {
			p.Tally = func(t eo.Tally) eo.Outcome {
				if 2*len(t.No) == len(t.Record.Nodes) && !slices.Contains(t.No, t.Self) {
					return eo.Waiting
				}
				return eo.CountVotes(t)
			}
		},
		model: "four-nodes", props: []string{PropDecide}},
	// EO-7 periodic INQUIRY: sent once, never repeated.
	{rule: "EO-7 inquiry", name: "inquiry-once",
		edit: &editor{after: func(_ sim.NodeID, in sim.Input, c *call) {
			if onTimer(in, "inq") {
				dropTimers(c, "inq")
			}
		}},
		swarm: 2000, props: []string{PropInquiryRepeat}},
	{rule: "EO-7 inquiry", name: "inquiry-once/model",
		edit: &editor{after: func(_ sim.NodeID, in sim.Input, c *call) {
			if onTimer(in, "inq") {
				dropTimers(c, "inq")
			}
		}},
		model: "inquiry-rounds", props: []string{PropInquiryDue}},
	// EO-8 whom a selection asks.
	{rule: "EO-8 ask", name: "ask-lower",
		policy: func(p *eo.Policy) {
			p.Ask = func(rec eo.StageRecord, self sim.NodeID) []sim.NodeID {
				var out []sim.NodeID
				for _, sn := range rec.Nodes {
					if rec.Higher(self, sn.Node) {
						out = append(out, sn.Node)
					}
				}
				return out
			}
		},
		swarm: 2000, props: []string{PropAskAll}},
	{rule: "EO-8 ask", name: "ask-top-only",
		policy: func(p *eo.Policy) {
			p.Ask = func(rec eo.StageRecord, self sim.NodeID) []sim.NodeID {
				if h := eo.HigherNodes(rec, self); len(h) > 0 {
					return h[:1]
				}
				return nil
			}
		},
		swarm: 2000, props: []string{PropAskAll}},
	{rule: "EO-8 top", name: "top-asks-the-others",
		policy: func(p *eo.Policy) {
			p.Ask = func(rec eo.StageRecord, self sim.NodeID) []sim.NodeID {
				if h := eo.HigherNodes(rec, self); len(h) > 0 {
					return h
				}
				var out []sim.NodeID
				for _, n := range rec.NodeIDs() {
					if n != self {
						out = append(out, n)
					}
				}
				return out
			}
		},
		swarm: 2000, props: []string{PropAskAll}},
	// EO-8 an answered selection waits for the new worker.
	{rule: "EO-8 answered", name: "ignores-i-am-there",
		edit:  &editor{ignore: ignoreMsg("I_AM_THERE")},
		swarm: 2000, props: []string{PropAnswered}},

	// EO-1 simple protocol.
	{rule: "EO-1 simple put", name: "simple-puts-to-all",
		policy: func(p *eo.Policy) {
			p.PutTargets = func(q eo.PutQuery) []eo.StageNode { q.Simple = false; return eo.ChoosePutTargets(q) }
		},
		swarm: 2000, props: []string{PropP1, PropP2, PropVariant, PropA}},

	// EO-2 stage transaction.
	{rule: "EO-2 launch", name: "launch-ignored", edit: ignores("LAUNCH"),
		swarm: 2000, props: []string{PropP3}},
	{rule: "EO-2 put on the fly", name: "put-to-suspects-only",
		policy: func(p *eo.Policy) {
			p.PutTargets = func(q eo.PutQuery) []eo.StageNode {
				got := eo.ChoosePutTargets(q)
				if len(got) < len(q.Next) {
					return got[:1] // a minority: a stage that cannot vote
				}
				return got
			}
		},
		swarm: 2000, props: []string{PropP1}},
	{rule: "EO-2 put all suspected", name: "put-minority",
		policy: func(p *eo.Policy) {
			p.PutTargets = func(q eo.PutQuery) []eo.StageNode {
				if q.Simple || q.Static || len(q.Suspects) == 0 {
					return eo.ChoosePutTargets(q)
				}
				var keep []eo.StageNode
				for _, sn := range q.Next {
					if !slices.Contains(q.Suspects, sn.Node) {
						keep = append(keep, sn)
					}
				}
				if len(keep) == 0 {
					return q.Next
				}
				return keep // even when no majority of the stage remains
			}
		},
		swarm: 2000, props: []string{PropP1}},
	{rule: "EO-2 put", name: "put-misses-one", edit: edits(anyInput, func(c *call) {
		for i := len(c.sends) - 1; i >= 0; i-- {
			if c.sends[i].Msg.Kind() == "PREPARE" {
				c.sends = slices.Delete(c.sends, i, i+1)
				return
			}
		}
	}),
		swarm: 2000, props: []string{PropP3}},

	// EO-3 transaction manager.
	{rule: "EO-3 commit", name: "no-commit-log", edit: noWrites(anyInput, "c/"),
		swarm: 2000, props: []string{PropA, PropP1, PropP2, PropP3}, slow: true},
	{rule: "EO-3 commit acked", name: "ignores-commit-ack", edit: ignores("COMMIT_ACK"),
		swarm: 2000, props: []string{PropP5}},
	{rule: "EO-3 put commit", name: "ignores-commit", edit: ignores("COMMIT"),
		swarm: 2000, props: []string{PropP3, PropP5}},
	{rule: "EO-3 put abort", name: "ignores-abort", edit: ignores("ABORT"),
		swarm: 2000, props: []string{PropP5, PropA}},
	{rule: "EO-3 status ask", name: "never-asks-status", edit: noSends(anyInput, "STATUS"),
		swarm: 2000, props: []string{PropP3, PropP5}},
	{rule: "EO-3 status commit", name: "status-logged-aborts",
		policy: func(p *eo.Policy) {
			p.Status = func(q eo.StatusQuery) eo.StatusAnswer {
				if q.Logged {
					return eo.StatusAbort
				}
				return eo.AnswerStatus(q)
			}
		},
		swarm: 2000, props: []string{PropA}},
	{rule: "EO-3 status wait", name: "status-early", policy: func(p *eo.Policy) {
		p.Status = func(q eo.StatusQuery) eo.StatusAnswer {
			if q.Logged {
				return eo.StatusCommit
			}
			return eo.StatusAbort
		}
	},
		model: "three-nodes", props: []string{PropA}},
	{rule: "EO-3 status abort", name: "status-never-aborts", policy: func(p *eo.Policy) {
		p.Status = func(q eo.StatusQuery) eo.StatusAnswer {
			if q.Logged {
				return eo.StatusCommit
			}
			return eo.StatusWait
		}
	},
		swarm: 2000, props: []string{PropP5, PropP3}},
	{rule: "EO-3 prepare timeout", name: "no-prepare-timeout", edit: noTimers(anyInput, "prep"),
		swarm: 2000, props: []string{PropP3}},
	{rule: "EO-3 retry", name: "no-retry", edit: noTimers(anyInput, "retry"),
		swarm: 2000, props: []string{PropP3}},
	{rule: "EO-3 recover rollback", name: "restart-keeps-reservations", edit: noWrites(onRestart, "rp/"),
		swarm: 2000, props: []string{PropP5, PropP2}},
	{rule: "EO-3 recover in-doubt", name: "restart-no-status", edit: noTimers(onRestart, "st"),
		swarm: 2000, props: []string{PropP3, PropP5}},

	// EO-5 voting, phase 1.
	{rule: "EO-5 vote", name: "no-vote-sent", edit: noSends(anyInput, "VOTE"),
		swarm: 2000, props: []string{PropP3}},
	{rule: "EO-5 yes", name: "yes-becomes-no",
		policy: func(p *eo.Policy) {
			p.Vote = func(b eo.Ballot) eo.Decision {
				d := eo.DecideVote(b)
				if d.Answer == eo.AnswerYes {
					d.Answer = eo.AnswerNo
				}
				return d
			}
		},
		swarm: 2000, props: []string{PropP3, PropStepDown}},
	{rule: "EO-5 no", name: "no-becomes-yes",
		policy: func(p *eo.Policy) {
			p.Vote = func(b eo.Ballot) eo.Decision {
				d := eo.DecideVote(b)
				if d.Answer == eo.AnswerNo {
					d = eo.Decision{Answer: eo.AnswerYes, Keep: b.OrchSet}
				}
				return d
			}
		},
		model: "three-nodes", props: []string{PropSupport, PropI1, PropP1}},
	{rule: "EO-5 cond-yes", name: "cond-yes-becomes-yes",
		policy: func(p *eo.Policy) {
			p.Vote = func(b eo.Ballot) eo.Decision {
				d := eo.DecideVote(b)
				if d.Answer == eo.AnswerCondYes {
					d.Answer = eo.AnswerYes
				}
				return d
			}
		},
		model: "three-nodes", props: []string{PropSupport, PropCondYes, PropI1, PropP1}},
	{rule: "EO-5 already-done", name: "no-local-giveup", policy: func(p *eo.Policy) {
		p.Vote = func(b eo.Ballot) eo.Decision {
			d := eo.DecideVote(b)
			if d.Answer == eo.AnswerAskLocal {
				d.Answer = eo.AnswerCondYes
			}
			return d
		}
	},
		model: "three-nodes", props: []string{PropSupport, PropI1, PropP1}},
	{rule: "EO-5 gave-up cond-yes", name: "gave-up-yes-for-all",
		policy: func(p *eo.Policy) {
			p.Vote = func(b eo.Ballot) eo.Decision {
				d := eo.DecideVote(b)
				if d.Answer == eo.AnswerAskLocal {
					d.Keep = nil // GAVE_UP: a plain YES, the others forgotten
				}
				return d
			}
		},
		model: "three-orchestrators", props: []string{PropSupport, PropCondYes, PropI1, PropP1}, slow: true},
	{rule: "EO-5 cond-yes convert", name: "cond-yes-never-converts",
		policy: func(p *eo.Policy) { p.CondYesHolds = func(set, yes []sim.NodeID) bool { return len(set) == 0 } },
		model:  "three-nodes", props: []string{PropDecide}},
	{rule: "EO-5 ready", name: "ready-at-half",
		policy: func(p *eo.Policy) {
			p.Tally = func(t eo.Tally) eo.Outcome {
				if 2*len(t.Yes) >= len(t.Record.Nodes) && slices.Contains(t.Yes, t.Self) {
					return eo.Ready
				}
				return eo.CountVotes(t)
			}
		},
		model: "two-nodes", props: []string{PropSupport, PropI1, PropP1}},
	{rule: "EO-5 impossible", name: "impossible-waits",
		policy: func(p *eo.Policy) {
			p.Tally = func(t eo.Tally) eo.Outcome {
				if o := eo.CountVotes(t); o != eo.Impossible || slices.Contains(t.No, t.Self) || 2*len(t.No) == len(t.Record.Nodes) {
					return o
				}
				return eo.Waiting
			}
		},
		model: "three-nodes", props: []string{PropDecide}},
	{rule: "EO-5 own no", name: "own-no-waits",
		policy: func(p *eo.Policy) {
			p.Tally = func(t eo.Tally) eo.Outcome {
				if 2*len(t.No) < len(t.Record.Nodes) && slices.Contains(t.No, t.Self) {
					return eo.Waiting
				}
				return eo.CountVotes(t)
			}
		},
		model: "three-nodes", props: []string{PropDecide}},

	// EO-6 voting, phase 2.
	{rule: "EO-6 committed", name: "no-forget-sent", edit: noSends(anyInput, "FORGET"),
		swarm: 2000, props: []string{PropP5, PropP3}},
	{rule: "EO-6 forget acked", name: "ignores-forget-ack", edit: ignores("ACK"),
		swarm: 2000, props: []string{PropP5}},
	{rule: "EO-6 forget", name: "ignores-forget", edit: ignores("FORGET"),
		swarm: 2000, props: []string{PropP5, PropP3}},
	{rule: "EO-6 un-vote", name: "ignores-un-vote", edit: ignores("UN_VOTE"),
		swarm: 2000, props: []string{PropP3, PropInquiryRepeat}, slow: true},
	{rule: "EO-6 un-vote other", name: "unvote-no-tid",
		policy: func(p *eo.Policy) {
			p.UnVoteMatches = func(e eo.VoteEntry, m eo.UnVote) bool { return e.Orch == m.Orch }
		},
		model: "retries", props: []string{PropSupport, PropI1, PropP1}},

	// EO-7 failure recovery.
	{rule: "EO-7 inquiry ready", name: "inquiry-ready-unvotes",
		policy: func(p *eo.Policy) {
			p.Inquiry = func(q eo.InquiryQuery) eo.InquiryAnswer {
				if a := eo.AnswerInquiry(q); a != eo.InquiryJoin {
					return a
				}
				return eo.InquiryUnVote
			}
		},
		model: "three-stages", props: []string{PropSupport, PropI1, PropP1}},
	{rule: "EO-7 inquiry running", name: "inquiry-running-unvotes",
		policy: func(p *eo.Policy) {
			p.Inquiry = func(q eo.InquiryQuery) eo.InquiryAnswer {
				if a := eo.AnswerInquiry(q); a != eo.InquiryIgnore {
					return a
				}
				return eo.InquiryUnVote
			}
		},
		model: "three-nodes", props: []string{PropSupport, PropI1, PropP1}},
	{rule: "EO-7 inquiry unknown", name: "inquiry-unknown-ignored",
		policy: func(p *eo.Policy) {
			p.Inquiry = func(q eo.InquiryQuery) eo.InquiryAnswer {
				if a := eo.AnswerInquiry(q); a != eo.InquiryUnVote {
					return a
				}
				return eo.InquiryIgnore
			}
		},
		swarm: 2000, props: []string{PropP3, PropInquiryRepeat}},
	{rule: "EO-7 recover committed", name: "restart-forgets-forget", edit: edits(onRestart, func(c *call) {
		dropSends(c, "FORGET")
		dropTimers(c, "fgt")
	}),
		swarm: 2000, props: []string{PropP5}},
	{rule: "EO-7 recover voter", name: "no-restart-inquiry",
		policy: func(p *eo.Policy) { p.InquiresAtRestart = func(eo.StageID) bool { return false } },
		model:  "inquiry-rounds", props: []string{PropInquiryDue}},

	// EO-8 selection.
	{rule: "EO-8 alive", name: "no-i-am-alive", edit: noSends(onTimerOf("alive"), "I_AM_ALIVE"),
		swarm: 2000, props: []string{PropNoSuspicion}, slow: true},
	{rule: "EO-8 monitor", name: "ignores-i-am-alive", edit: ignores("I_AM_ALIVE"),
		swarm: 2000, props: []string{PropNoSuspicion}, slow: true},
	{rule: "EO-8 suspect", name: "never-suspects", edit: noTimers(anyInput, "mon"),
		swarm: 2000, props: []string{PropP3}},
	{rule: "EO-8 there", name: "never-there", edit: noSends(anyInput, "I_AM_THERE"),
		swarm: 2000, props: []string{PropAnswered}},
	{rule: "EO-8 no answer", name: "never-selected", edit: edits(anyInput, func(c *call) {
		if slices.ContainsFunc(c.sends, func(e sim.Envelope) bool { return e.Msg.Kind() == "ARE_YOU_THERE" }) {
			dropTimers(c, "sel")
		}
	}),
		swarm: 2000, props: []string{PropP3}},
	{rule: "EO-6 forget resend", name: "forget-once", edit: noTimers(onTimerOf("fgt"), "fgt"),
		swarm: 2000, props: []string{PropP5, PropP3}},
	{rule: "EO-8 initial observer", name: "observer-never-monitors", edit: noTimers(onMsg("COMMIT"), "mon"),
		swarm: 2000, props: []string{PropP3}, slow: true},
	{rule: "EO-8 restart observer", name: "restart-never-monitors", edit: noTimers(onRestart, "mon"),
		swarm: 2000, props: []string{PropP3}},
	{rule: "EO-8 claim", name: "claim-once", edit: noTimers(onTimerOf("sel"), "sel"),
		swarm: 2000, props: []string{PropP3}},
	{rule: "EO-8 selected", name: "no-i-am-selected", edit: noSends(anyInput, "I_AM_SELECTED"),
		swarm: 2000, props: []string{PropP3, PropNoSuspicion}},
	{rule: "EO-3 commit resend", name: "commit-once", edit: noTimers(onTimerOf("cmt"), "cmt"),
		swarm: 2000, props: []string{PropP3, PropP5}},
	{rule: "EO-8 claim ack", name: "no-selected-ack", edit: noSends(anyInput, "SELECTED_ACK"),
		swarm: 2000, props: []string{PropP3}},
}

// Every planted bug is caught by its detector, reported by one of its properties.
func TestPlantedBugsCaught(t *testing.T) {
	for _, b := range plantedBugs {
		if !slices.ContainsFunc(sim.Rules("exactlyonce"), func(r sim.RuleInfo) bool { return r.Tag == b.rule && r.NoBranch == "" }) {
			t.Errorf("planted bug %s: %q is no branched rule of the rule map", b.name, b.rule)
		}
	}
	for _, b := range plantedBugs {
		t.Run(b.rule+"/"+b.name, func(t *testing.T) {
			if b.slow && testing.Short() {
				t.Skip("-short: its detector takes a second or more")
			}
			pl := b.edit.planting(b.policy)
			if b.model != "" {
				res := checkPlanted(t, b.model, pl)
				if res.Violation == nil {
					t.Fatalf("%s not caught by portfolio configuration %s (%d states, outcome %s)", b.name, b.model, res.Distinct, res.Outcome)
				}
				if !slices.Contains(b.props, res.Violation.Name) {
					t.Fatalf("%s: %s %q violated at depth %d; want one of %q", b.name, res.Violation.Kind, res.Violation.Name, res.Violation.Depth, b.props)
				}
				t.Logf("%s: %s at depth %d (%s)", b.model, res.Violation.Name, res.Violation.Depth, b.rule)
				return
			}
			seed, prop, detail := sweepPlanted(t, b.name, pl, b.swarm)
			if seed == 0 {
				t.Fatalf("%s not caught by exactlyonce/swarm seeds 1-%d", b.name, b.swarm)
			}
			if !slices.Contains(b.props, prop) {
				t.Fatalf("%s: seed %d: %s: %s; want one of %q", b.name, seed, prop, detail, b.props)
			}
			t.Logf("swarm seed %d: %s (%s)", seed, prop, b.rule)
		})
	}
}
