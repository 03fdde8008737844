package exactlyonce

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/simrun-dev/simrun/sim"
)

// AgentID is a globally unique agent identifier (paper §4: the AgentId of a StageId).
type AgentID int32

// StageID identifies one stage of one agent: (AgentId, HopCount) (paper §4). HopCount
// is the index of the stage in the agent's itinerary, 0 for the launch stage.
type StageID struct {
	Agent AgentID
	Hop   int32
}

func (s StageID) String() string { return fmt.Sprintf("a%d/%d", s.Agent, s.Hop) }

// StageNode is one node of a stage with its priority. Rank 1 is the highest priority
// (paper Fig. 2 labels the highest-priority node "1"); ranks within a stage are
// distinct, gaps are allowed.
type StageNode struct {
	Node sim.NodeID
	Rank int32
}

// Stage is one stage of an itinerary: the nodes that may perform it and the resource
// pool its Execute reserves a seat in ("" = the stage touches no resource).
type Stage struct {
	Nodes []StageNode
	Pool  string
}

// Itinerary is an agent's route, fixed before launch (paper §1: a user-defined
// itinerary). Stages[0] is the launch stage: exactly one node, the agent's home, whose
// input queue the owner hands the agent to (paper §2: "Once the agent has been stored
// in the initial queue ... the owner can be informed"; Fig. 2: S1 has no observers).
type Itinerary struct {
	Stages []Stage
}

// Len returns the number of stages.
func (it Itinerary) Len() int { return len(it.Stages) }

// Validate checks an itinerary against a system of n nodes named names: at least one
// stage, no empty stage, known nodes, no node twice in a stage, ranks >= 1 and
// distinct within a stage, and a launch stage of exactly one node. The error names the
// stage (0-based, as HopCount) and the offending node.
func (it Itinerary) Validate(names []string) error {
	name := func(n sim.NodeID) string {
		if n >= 0 && int(n) < len(names) {
			return names[n]
		}
		return strconv.Itoa(int(n))
	}
	if len(it.Stages) == 0 {
		return errors.New("itinerary: no stages")
	}
	for i, st := range it.Stages {
		if len(st.Nodes) == 0 {
			return fmt.Errorf("itinerary stage %d: empty stage", i)
		}
		for j, sn := range st.Nodes {
			if sn.Node < 0 || int(sn.Node) >= len(names) {
				return fmt.Errorf("itinerary stage %d: unknown node %s (nodes: %s)", i, name(sn.Node), strings.Join(names, ", "))
			}
			if sn.Rank < 1 {
				return fmt.Errorf("itinerary stage %d: node %s has priority %d (priorities are ranks >= 1, 1 = highest)", i, name(sn.Node), sn.Rank)
			}
			for _, other := range st.Nodes[:j] {
				if other.Node == sn.Node {
					return fmt.Errorf("itinerary stage %d: node %s listed twice", i, name(sn.Node))
				}
				if other.Rank == sn.Rank {
					return fmt.Errorf("itinerary stage %d: priorities not distinct (%s and %s both have %d)", i, name(other.Node), name(sn.Node), sn.Rank)
				}
			}
		}
	}
	if n := len(it.Stages[0].Nodes); n != 1 {
		return fmt.Errorf("itinerary stage 0: the launch stage is the agent's home queue and must have exactly one node (got %d)", n)
	}
	return nil
}

// Home returns the launch node.
func (it Itinerary) Home() sim.NodeID { return it.Stages[0].Nodes[0].Node }

// ParseItinerary reads an itinerary written as stages separated by "|", each a
// comma-separated list of node names with an optional ":rank" (default: the position
// in the list, so the first node listed is the initial worker), e.g.
//
//	n0 | n1,n2,n3 | n4:2,n5:1
//
// Every stage but the launch stage reserves a seat in pool (pass "" for none). The
// result is validated.
func ParseItinerary(s string, names []string, pool string) (Itinerary, error) {
	var it Itinerary
	if strings.TrimSpace(s) == "" {
		return it, errors.New("itinerary: no stages")
	}
	for i, part := range strings.Split(s, "|") {
		var st Stage
		if i > 0 {
			st.Pool = pool
		}
		if strings.TrimSpace(part) == "" {
			it.Stages = append(it.Stages, st) // Validate reports the empty stage
			continue
		}
		for j, f := range strings.Split(part, ",") {
			nm, rk, hasRank := strings.Cut(strings.TrimSpace(f), ":")
			nm = strings.TrimSpace(nm)
			if nm == "" {
				return it, fmt.Errorf("itinerary stage %d: empty node name at position %d (stray comma?)", i, j+1)
			}
			idx := slices.Index(names, nm)
			if idx < 0 {
				return it, fmt.Errorf("itinerary stage %d: unknown node %q (nodes: %s)", i, nm, strings.Join(names, ", "))
			}
			rank := int32(j + 1)
			if hasRank {
				r, err := strconv.ParseInt(strings.TrimSpace(rk), 10, 32)
				if err != nil {
					return it, fmt.Errorf("itinerary stage %d: node %s: priority %q is not a 32-bit integer", i, nm, rk)
				}
				rank = int32(r)
			}
			st.Nodes = append(st.Nodes, StageNode{Node: sim.NodeID(idx), Rank: rank})
		}
		it.Stages = append(it.Stages, st)
	}
	return it, it.Validate(names)
}

// String renders the itinerary in ParseItinerary's syntax (ranks always written).
func (it Itinerary) String(names []string) string {
	parts := make([]string, len(it.Stages))
	for i, st := range it.Stages {
		ns := make([]string, len(st.Nodes))
		for j, sn := range st.Nodes {
			ns[j] = names[sn.Node] + ":" + strconv.Itoa(int(sn.Rank))
		}
		parts[i] = strings.Join(ns, ",")
	}
	return strings.Join(parts, " | ")
}

// StageRecord is the stable record of an Active stage (paper §4): the StageId and the
// stage's nodes with their priorities, sorted by rank (highest priority first). It is
// Put, together with the agent, into the input queue of every node of the stage in
// one transaction (EO-2, EO-4). Records are immutable once built.
type StageRecord struct {
	ID    StageID
	Nodes []StageNode
}

// makeRecord builds a record from nodes (copied and sorted by rank).
func makeRecord(id StageID, nodes []StageNode) StageRecord {
	ns := slices.Clone(nodes)
	slices.SortFunc(ns, func(a, b StageNode) int { return int(a.Rank - b.Rank) })
	return StageRecord{ID: id, Nodes: ns}
}

// Worker returns the initial worker: the highest-priority node (paper §3).
func (r StageRecord) Worker() sim.NodeID { return r.Nodes[0].Node }

// Rank returns n's rank in the stage, 0 if n is not a stage node.
func (r StageRecord) Rank(n sim.NodeID) int32 {
	for _, sn := range r.Nodes {
		if sn.Node == n {
			return sn.Rank
		}
	}
	return 0
}

// Has reports whether n is a node of the stage.
func (r StageRecord) Has(n sim.NodeID) bool { return r.Rank(n) != 0 }

// Higher reports whether a has a higher priority than b (both stage nodes).
func (r StageRecord) Higher(a, b sim.NodeID) bool { return r.Rank(a) < r.Rank(b) }

// Majority is the number of votes a stage transaction needs: more than half of the
// stage's nodes (paper §4: "only if a majority of voters vote yes").
func (r StageRecord) Majority() int { return len(r.Nodes)/2 + 1 }

// NodeIDs returns the stage's nodes in priority order.
func (r StageRecord) NodeIDs() []sim.NodeID {
	out := make([]sim.NodeID, len(r.Nodes))
	for i, sn := range r.Nodes {
		out[i] = sn.Node
	}
	return out
}

// Result is what an agent's stage produced: the seat its Execute reserved at a node's
// resource service (0 = the pool was full, -1 = the stage touched no resource).
type Result struct {
	Hop  int32
	Node sim.NodeID
	Pool string
	Seat int32
}

// Agent is a mobile agent's state: identity, itinerary, the stage it is in (HopCount)
// and the results of the stages done so far. It travels in Put operations and stage
// records; values are immutable once built (every change makes a copy), because
// messages and stored records share slices.
type Agent struct {
	ID        AgentID
	Itinerary Itinerary
	Hop       int32
	Results   []Result
}
