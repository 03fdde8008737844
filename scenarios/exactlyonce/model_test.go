package eoscen

import (
	"fmt"
	"maps"
	"testing"

	"github.com/simrun-dev/simrun/model"
)

// checkModel instantiates the registered "exactlyonce" model with overrides (the CLI's
// path: the same defaults) and explores it with o. o.MaxStates must be set: a
// regression that blows up the space then fails instead of hanging.
func checkModel(t *testing.T, overrides map[string]string, o model.Options) *model.Result {
	t.Helper()
	m, err := model.Lookup("exactlyonce")
	if err != nil {
		t.Fatal(err)
	}
	sys, _, err := m.Instantiate(overrides)
	if err != nil {
		t.Fatal(err)
	}
	if o.MaxStates == 0 {
		t.Fatal("checkModel: set MaxStates")
	}
	res, err := model.Check(sys, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// safe is what every configuration of the model must give: no panic, EO-P1 and
// EO-I1 hold in every reachable state, and the agent can complete.
var safe = map[string]model.Status{
	"no-panic": model.Holds, PropP1: model.Holds, PropI1: model.Holds, PropA: model.Holds,
	PropP5: model.Holds, WitnessP5: model.Witnessed, PropStored: model.Holds, PropRunning: model.Holds,
	"the agent completes": model.Witnessed,
}

// wantClean checks a search that explored everything with the property verdicts of
// safe, every one of extra, and nothing else; with the default extra, two
// orchestrators compete and a voter answers COND_YES, so the bounds do not cut the
// protocol's interesting behaviour away.
func wantClean(t *testing.T, res *model.Result, extra map[string]model.Status) {
	t.Helper()
	if extra == nil {
		extra = map[string]model.Status{"a voter answers COND_YES": model.Witnessed}
	}
	want := maps.Clone(safe)
	maps.Copy(want, extra)
	for _, p := range res.Properties {
		if w, ok := want[p.Name]; !ok || p.Status != w {
			t.Errorf("property %q: %s, want %s", p.Name, p.Status, w)
		}
		delete(want, p.Name)
	}
	for name := range want {
		t.Errorf("property %q not checked", name)
	}
	if res.Bound != "" || (res.Outcome != model.Complete && res.Outcome != model.Violated) {
		t.Fatalf("outcome %s (bound %q): the search did not finish", res.Outcome, res.Bound)
	}
}

type counts struct {
	distinct, total int64
	depth           int
}

func wantCounts(t *testing.T, res *model.Result, want counts) {
	t.Helper()
	if got := (counts{res.Distinct, res.Total, res.Depth}); got != want {
		t.Fatalf("%d workers: distinct %d, total %d, depth %d; pinned %d, %d, %d",
			res.Workers, got.distinct, got.total, got.depth, want.distinct, want.total, want.depth)
	}
}

// The configuration — 1 agent, stages {n0} and {n0,n1,n2}, crash budget 1 on
// any node, FIFO links, EO-P1 and EO-I1 as invariants — explored exhaustively under
// the bounds documented in model.go (the registered defaults). Depth-first: on this
// model DFS needs about 90 MB and is faster than BFS, which holds whole frontiers of
// actor states (BFS: 635 MB, and depth 42 instead of DFS's longest path, 54). The
// distinct and total counts are the same for every strategy and worker count:
// `simrun check exactlyonce` (BFS, one worker) reports them too.
func TestModelExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the exhaustive exactlyonce model (about 110 s) runs in the full suite")
	}
	res := checkModel(t, nil, model.Options{Strategy: model.DFS, MaxStates: 6_000_000})
	wantClean(t, res, nil)
	wantCounts(t, res, counts{4_077_594, 10_588_462, 54})
	t.Logf("%d distinct states, %d total, depth %d, %.1fs", res.Distinct, res.Total, res.Depth, res.Seconds)
}

// The crash-free configuration on one and two workers: the counts are identical.
func TestModelWorkersAgree(t *testing.T) {
	want := counts{242_468, 608_346, 39}
	for _, workers := range []int{1, 2} {
		res := checkModel(t, map[string]string{"crashes": "0"}, model.Options{Workers: workers, MaxStates: 1_000_000})
		wantClean(t, res, nil)
		wantCounts(t, res, want)
	}
}

// The options, crash-free: the resource service (EO-P2 as an invariant: the stage's
// reservation commits at most once), and the selection protocol of EO-8 instead of
// the abstract one. With EO-8 and no crash, no observer ever selects itself (a live
// worker always answers ARE_YOU_THERE), so no voter answers COND_YES. With a crash,
// `simrun check exactlyonce -p selection=protocol` explores 5,027,382 states, all safe.
func TestModelOptions(t *testing.T) {
	for _, tc := range []struct {
		param, value string
		extra        map[string]model.Status
		want         counts
	}{
		{"pool", "true", map[string]model.Status{PropP2: model.Holds, "a voter answers COND_YES": model.Witnessed}, counts{242_476, 608_346, 39}},
		{"selection", "protocol", map[string]model.Status{"a voter answers COND_YES": model.Failed}, counts{38_072, 72_403, 35}},
	} {
		t.Run(tc.param+"="+tc.value, func(t *testing.T) {
			res := checkModel(t, map[string]string{"crashes": "0", tc.param: tc.value}, model.Options{MaxStates: 1_000_000})
			wantClean(t, res, tc.extra)
			wantCounts(t, res, tc.want)
		})
	}
}

// The model checker catches the broken variants as invariant violations, already
// without crashes (a crash-free behaviour is one of the crash budget's). The property
// reported and the shortest counterexample's length (BFS, one worker) are pinned. The
// voting bugs show as EO-P1 (two commits of stage 1): stage 1 is the last stage, so a
// Ready orchestrator commits in the same step, and EO-I1 breaks in that same state
// (EO-P1 is listed first).
func TestModelCatchesBrokenVariants(t *testing.T) {
	for _, tc := range []struct {
		bug      string
		property string
		depth    int
	}{
		{"voter-ignores-orchset", PropP1, 24},
		{"condyes-as-yes", PropP1, 23},
		{"no-local-giveup", PropP1, 17},
		{"ready-without-own-vote", PropP1, 25},
		{"put-on-prepare", PropP1, 6},
		// A participant's STATUS timer fires while the coordinator still votes; the
		// early ABORT reaches it after the commit (EO-2/EO-3 ghost). (no-commit-log
		// needs every remote participant to miss COMMIT and the coordinator to crash:
		// beyond the crash budget; exactlyonce/coord-crash catches it.)
		{"status-early", PropA, 10},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			res := checkModel(t, map[string]string{"crashes": "0", "bug": tc.bug}, model.Options{MaxStates: 1_000_000})
			if res.Outcome != model.Violated || res.Violation == nil {
				t.Fatalf("bug %s not caught: outcome %s", tc.bug, res.Outcome)
			}
			if v := res.Violation; v.Name != tc.property || v.Kind != model.AlwaysKind || v.Depth != tc.depth {
				t.Fatalf("bug %s: %s %q violated at depth %d; pinned always %q at depth %d",
					tc.bug, v.Kind, v.Name, v.Depth, tc.property, tc.depth)
			}
		})
	}
}

// The UN_VOTE Tid match (voter.go voterOnUnVote) matters only when a node runs two
// transactions of a stage, so the default bound (attempts=1) cannot tell it from a
// match on the orchestrator alone. With attempts=2 and no crash, depth-first search
// finds the EO-P1 violation of unvote-no-tid: an UN_VOTE of n1's first transaction
// arrives after n1's second VOTE and withdraws that newer vote, and n2 collects a
// majority while n1's second transaction is still alive. The correct protocol
// explores the same number of states (the bounded check: attempts=2 is more than 2
// million states, not exhausted here) without a violation.
func TestModelCatchesUnvoteWithoutTid(t *testing.T) {
	const maxStates = 110_000
	params := map[string]string{"crashes": "0", "attempts": "2"}
	bug := maps.Clone(params)
	bug["bug"] = "unvote-no-tid"
	res := checkModel(t, bug, model.Options{Strategy: model.DFS, MaxStates: maxStates})
	if res.Outcome != model.Violated || res.Violation == nil {
		t.Fatalf("unvote-no-tid not caught within %d states: outcome %s", maxStates, res.Outcome)
	}
	if v := res.Violation; v.Name != PropP1 || v.Kind != model.AlwaysKind || res.Distinct != 106_604 {
		t.Fatalf("unvote-no-tid: %s %q violated after %d states; pinned always %q after 106,604",
			v.Kind, v.Name, res.Distinct, PropP1)
	}
	ok := checkModel(t, params, model.Options{Strategy: model.DFS, MaxStates: maxStates})
	if ok.Outcome == model.Violated || ok.Bound != "max-states" {
		t.Fatalf("correct protocol, attempts=2: outcome %s after %d states (violation %+v); want the bound hit without a violation",
			ok.Outcome, ok.Distinct, ok.Violation)
	}
	for _, p := range ok.Properties {
		if p.Kind == model.AlwaysKind && p.Status == model.Failed {
			t.Fatalf("correct protocol, attempts=2: %q failed", p.Name)
		}
	}
}

// The model's properties (not its counts) in small configurations that finish in
// seconds, for the system-level checks (the mutation pass runs them with the sweeps;
// see internal/mutate): the default stage {n0,n1,n2} without crashes; EO-8 itself,
// basic and majority variants; a two-node stage (even size: its majority is both
// nodes) with a crash, abstract and real selection; and a re-send bound (resends=1),
// which must keep the space finite.
func TestModelProperties(t *testing.T) {
	noCond := map[string]model.Status{"a voter answers COND_YES": model.Failed}
	for _, tc := range []struct {
		params map[string]string
		extra  map[string]model.Status
	}{
		{map[string]string{"crashes": "0"}, nil},
		{map[string]string{"crashes": "0", "selection": "protocol"}, noCond},
		{map[string]string{"crashes": "0", "selection": "protocol", "majority-select": "true"}, nil},
		{map[string]string{"crashes": "1", "observers": "1"}, noCond},
		{map[string]string{"crashes": "1", "observers": "1", "selection": "protocol"}, noCond},
		{map[string]string{"crashes": "0", "observers": "1", "resends": "1"}, noCond},
	} {
		t.Run(fmt.Sprint(tc.params), func(t *testing.T) {
			res := checkModel(t, tc.params, model.Options{MaxStates: 1_000_000})
			wantClean(t, res, tc.extra)
		})
	}
}
