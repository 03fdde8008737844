package eoscen

import (
	"fmt"
	"github.com/simrun-dev/simrun/scenarios"
	"slices"
	"strings"

	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// The deliberately broken variants of the protocol reachable as -p bug=NAME, on every
// exactlyonce scenario and on the model. Each plants a hook of eo.Policy (the protocol
// consults it at one decision point), so the protocol's code holds only the protocol;
// they exist so that tests and users can watch the checkers catch a bug. Never use one
// otherwise.

// bug is one broken variant: its name, what it breaks, and the hooks it sets.
type bug struct {
	name, doc string
	plant     func(p *eo.Policy)
}

var bugs = []bug{
	{"voter-ignores-orchset", "a voter answers every VOTE with YES, whatever its OrchSet holds (breaks EO-5)",
		func(p *eo.Policy) {
			p.Vote = func(b eo.Ballot) eo.Decision { return eo.Decision{Answer: eo.AnswerYes, Keep: b.OrchSet} }
		}},
	{"skip-unvote", "an orchestrator never sends UN_VOTE, neither when it gives up or aborts nor in answer to INQUIRY (breaks liveness: voters keep votes for orchestrators that gave up, and a stage can block for good)",
		func(p *eo.Policy) { p.WithdrawsVote = func(sim.NodeID, eo.StageID, eo.Tid) bool { return false } }},
	{"condyes-as-yes", "an orchestrator counts COND_YES as YES at once (breaks EO-5)",
		func(p *eo.Policy) { p.CondYesHolds = func(_, _ []sim.NodeID) bool { return true } }},
	{"no-local-giveup", "a voter whose highest OrchSet entry is its own node answers as if its local orchestrator had given up, without asking it (HIGHER_PRIO; breaks EO-5: a Ready orchestrator loses its majority guarantee)",
		func(p *eo.Policy) {
			p.Vote = func(b eo.Ballot) eo.Decision {
				d := eo.DecideVote(b)
				if d.Answer == eo.AnswerAskLocal {
					d.Answer = eo.AnswerCondYes // GAVE_UP assumed: YES when nothing is kept
				}
				return d
			}
		}},
	{"put-on-prepare", "next-stage participants activate a Put on PREPARE, not on COMMIT (breaks the atomicity of EO-2)",
		func(p *eo.Policy) { p.ActivatesOnPrepare = func(eo.StageRecord) bool { return true } }},
	{"ready-without-own-vote", "the paper's majority rule taken literally: an orchestrator may become Ready with a majority that excludes its own node's voter (breaks EO-I1; see the protocol's package comment)",
		func(p *eo.Policy) {
			p.Tally = func(t eo.Tally) eo.Outcome {
				switch {
				case len(t.Yes) >= t.Record.Majority():
					return eo.Ready
				case 2*len(t.No) >= len(t.Record.Nodes):
					return eo.Impossible
				}
				return eo.Waiting
			}
		}},
	{"unvote-no-tid", "a voter's UN_VOTE removes the orchestrator's entry whatever its Tid, so a late UN_VOTE of an older transaction withdraws a newer vote (breaks EO-5/EO-6 once a node runs two transactions of a stage)",
		func(p *eo.Policy) {
			p.UnVoteMatches = func(e eo.VoteEntry, m eo.UnVote) bool { return e.Orch == m.Orch }
		}},
	{"status-early", "a coordinator answers STATUS with ABORT while the transaction is still in phase 1, and may commit it afterwards (breaks EO-2/EO-3 atomicity)",
		func(p *eo.Policy) {
			p.Status = func(q eo.StatusQuery) eo.StatusAnswer {
				if q.Logged {
					return eo.StatusCommit
				}
				return eo.StatusAbort
			}
		}},
	{"no-commit-log", "the coordinator does not write its commit record to stable storage, so a crash after the decision forgets it and presumed abort answers ABORT to a participant of a committed transaction (breaks EO-3)",
		func(p *eo.Policy) { p.LogsCommit = func(eo.Tid) bool { return false } }},
	{"no-restart-inquiry", "a restarted voter does not send INQUIRY for the votes it holds (breaks EO-7: a vote for an orchestrator that gave up while the voter was down is withdrawn only at the next periodic INQUIRY)",
		func(p *eo.Policy) { p.InquiresAtRestart = func(eo.StageID) bool { return false } }},
}

// BugNames lists the names -p bug= takes, "none" first.
func BugNames() []string {
	out := []string{"none"}
	for _, b := range bugs {
		out = append(out, b.name)
	}
	return out
}

// BugPolicy returns the policy of broken variant name ("none": the protocol).
func BugPolicy(name string) (eo.Policy, error) {
	var p eo.Policy
	if name == "none" {
		return p, nil
	}
	i := slices.IndexFunc(bugs, func(b bug) bool { return b.name == name })
	if i < 0 {
		return p, fmt.Errorf("unknown bug %q (one of %s)", name, strings.Join(BugNames(), ", "))
	}
	bugs[i].plant(&p)
	return p, nil
}

// BugDoc says what broken variant name breaks ("" for none or an unknown name).
func BugDoc(name string) string {
	for _, b := range bugs {
		if b.name == name {
			return b.doc
		}
	}
	return ""
}

func init() { scenarios.SetBugs(BugNames(), "exactlyonce/swarm") }
