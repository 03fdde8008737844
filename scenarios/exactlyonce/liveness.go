package eoscen

import (
	"fmt"
	"slices"

	"github.com/simrun-dev/simrun/checker"
	eo "github.com/simrun-dev/simrun/protocols/exactlyonce"
	"github.com/simrun-dev/simrun/sim"
)

// required reports whether EO-P3 requires agent a to complete. With every node
// eventually up and connected (the paper's model), always. A plan that leaves a
// partition exempts every agent. With nodes down for good (Run.Down), the protocol
// can block for reasons it shares with two-phase commit, and the agent is exempt when
//   - an up voter of one of its stages still holds a vote for an orchestrator that is
//     down for good, and that orchestrator either crashed with the voted transaction
//     open (it may be Ready: nobody may commit the stage) or did send its UN_VOTE,
//     which was lost (the voter was down or cut off) — a voter can never tell such a
//     vote from one for a Ready orchestrator; or it withdrew the transaction's votes
//     (UN_VOTE to its YesVotes and CondYesVotes) but this one's YES never reached it
//     in time (lost to a partition, or arriving after the crash: swarm seed 8877). (A
//     vote the orchestrator never tried to withdraw is no excuse: that is the bug
//     skip-unvote, which this catches.)
//   - a node down for good logged the commit of one of its stages and a next-stage
//     participant never ACKed it: that participant stays in doubt; or
//   - a stage of its route that it had not committed (from the history) keeps no
//     majority of up nodes: its committed record where one exists, else its itinerary
//     nodes (the simple protocol's one node per stage; with static-next every node of
//     the next stage). A stage committed before its nodes went down is behind the
//     agent and excuses nothing: exempting on the final down set alone let an agent
//     that lost its majority only after it moved on go unchecked (issue 16).
func (w *workload) required(r *checker.Run, a eo.Agent, records map[eo.StageID][]sim.NodeID, committed map[eo.StageID]bool, blocked map[eo.AgentID]string) (bool, string) {
	if r.Split {
		return false, "the plan leaves a partition"
	}
	if len(r.Down) == 0 {
		return true, ""
	}
	if why, ok := blocked[a.ID]; ok {
		return false, why
	}
	down := func(n sim.NodeID) bool { return slices.Contains(r.Down, r.Final[n].Name) }
	for h, st := range a.Itinerary.Stages {
		if committed[eo.StageID{Agent: a.ID, Hop: int32(h)}] {
			continue
		}
		var nodes []sim.NodeID
		if rec, ok := records[eo.StageID{Agent: a.ID, Hop: int32(h)}]; ok {
			nodes = rec
		} else if w.simple {
			best := st.Nodes[0]
			for _, sn := range st.Nodes {
				if sn.Rank < best.Rank {
					best = sn
				}
			}
			nodes = []sim.NodeID{best.Node}
		} else {
			for _, sn := range st.Nodes {
				nodes = append(nodes, sn.Node)
			}
			if w.static {
				for _, n := range nodes {
					if down(n) {
						return false, fmt.Sprintf("stage %d node %s is down for good (static Puts need every node)", h, r.Final[n].Name)
					}
				}
			}
		}
		alive := 0
		for _, n := range nodes {
			if !down(n) {
				alive++
			}
		}
		if alive < len(nodes)/2+1 {
			return false, fmt.Sprintf("stage %d keeps no majority of up nodes", h)
		}
	}
	return true, ""
}

// blockedForGood finds the agents that nodes down for good block the way two-phase
// commit blocks (see required), with the reason.
func (w *workload) blockedForGood(r *checker.Run) map[eo.AgentID]string {
	out := map[eo.AgentID]string{}
	if len(r.Down) == 0 {
		return out
	}
	names := r.Names()
	isDown := func(n sim.NodeID) bool { return slices.Contains(r.Down, names[n]) }
	crashAt := map[sim.NodeID]sim.Time{}
	for _, c := range w.permanent {
		crashAt[sim.NodeID(slices.Index(names, c.node))] = c.at
	}
	type txKey struct {
		n sim.NodeID
		t eo.Tid
	}
	type unvote struct {
		orch, voter sim.NodeID
		t           eo.Tid
	}
	open := map[txKey]bool{} // transactions in their commit phase (ended ones removed)
	tried := map[unvote]bool{}
	withdrew := map[txKey]bool{} // ended uncommitted, UN_VOTE sent for it to some voter
	for _, o := range r.History() {
		switch v := o.Value.(type) {
		case eo.Preparing:
			if at, ok := crashAt[v.Node]; !ok || o.Time < at {
				open[txKey{v.Node, v.Tid}] = true
			}
		case eo.TxEnded:
			delete(open, txKey{v.Node, v.Tid})
		case eo.UnVoteSent:
			tried[unvote{v.Orch, v.Voter, v.Tid}] = true
			withdrew[txKey{v.Orch, v.Tid}] = true
		}
	}
	note := func(a eo.AgentID, why string) {
		if _, seen := out[a]; !seen {
			out[a] = why
		}
	}
	for i, f := range r.Final {
		items := eo.Inspect(f.Stable)
		if isDown(sim.NodeID(i)) {
			for _, it := range items {
				if it.Kind == eo.StableCommit {
					note(it.Stage.Agent, fmt.Sprintf("%s crashed for good with the commit of stage %v not ACKed by %s", names[i], it.Stage, nodeNames(r, it.Waits)))
				}
			}
			continue
		}
		for _, it := range items {
			if it.Kind != eo.StableOrchSet {
				continue
			}
			for _, v := range it.Votes {
				k := txKey{v.Orch, v.Tid}
				if isDown(v.Orch) && (open[k] || tried[unvote{v.Orch, sim.NodeID(i), v.Tid}] || withdrew[k]) {
					note(it.Stage.Agent, fmt.Sprintf("%s holds a vote for %s (down for good) in stage %v", f.Name, names[v.Orch], it.Stage))
				}
			}
		}
	}
	return out
}
