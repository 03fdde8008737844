package cli

// Swarm verification (issue 35; Holzmann, Joshi and Groce, "Swarm Verification
// Techniques", IEEE TSE 2011): many bitstate searches of one model configuration,
// each with its own seed — its own hash functions and successor order — so that each
// misses other states and together they reach more than one search of the same
// memory. `check M --strategy swarm` runs --members of them one after another;
// `--shard i/n` (or auto, from a batch engine's environment) runs member i only, as
// one task of a job array, and `simrun merge` combines the members' --json results:
// the union of their violations (each with its replayable trace), of the witnesses and
// of the rule coverage.

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/scenarios"
)

// defaultSwarmBits is each member's bit array when --store is not given.
const defaultSwarmBits = "64MiB"

// maxSwarmMembers bounds --members and the n of --shard i/n.
const maxSwarmMembers = 100_000

// checkSwarm runs a swarm verification of one configuration of m: the one -p or
// --config picks, or the model's defaults.
func checkSwarm(e *env, m *model.Model, params map[string]string, configName string, base model.Options, cf checkFlags, tk *ticker, shardS string, members int) error {
	if configName != "" {
		if len(params) > 0 {
			return usageErr("check: --config picks a configuration of the portfolio; -p picks parameters: use one of them")
		}
		i := slices.IndexFunc(m.Portfolio, func(c model.Config) bool { return c.Name == configName })
		if i < 0 {
			return usageErr("check: %s has no configuration %q", m.Name, configName)
		}
		params = m.Portfolio[i].Params
	}
	sys, p, err := m.Instantiate(params)
	if err != nil {
		return usageErr("check: %s", oneLine(err.Error()))
	}
	if shardS != "" {
		if shardS == "auto" {
			if shardS, err = autoShard(os.Getenv); err != nil {
				return usageErr("check: %s", strings.TrimPrefix(err.Error(), "sweep: "))
			}
		}
		if why := shardProblem(shardS); why != "" {
			return usageErr("check: --shard %q: %s", shardS, why)
		}
		i, n, _ := parseShard(shardS)
		if n > maxSwarmMembers {
			return usageErr("check: --shard %q: at most %d members", shardS, maxSwarmMembers)
		}
		o := base
		o.Seed = uint64(i)
		res, trace, err := checkOne(e, m, sys, p, o, cf, tk, fmt.Sprintf("%s member %d/%d", m.Name, i, n))
		if err != nil {
			return err
		}
		if cf.asJSON {
			out, err := checkJSONOf(m, p, res, trace, "")
			if err != nil {
				return err
			}
			out.Swarm, out.Seed = fmt.Sprintf("%d/%d", i, n), o.Seed
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(out); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(e.stdout, "swarm     member %d of %d (seed %d)\n", i, n, o.Seed)
			if err := writeCheckText(e.stdout, m, p, res, trace); err != nil {
				return err
			}
		}
		return checkExit(fmt.Sprintf("%s member %d/%d", m.Name, i, n), res, trace)
	}
	if cf.tracePath != "" || cf.reportDir != "" {
		return usageErr("check: --strategy swarm writes each member's counterexample to its own file: --trace and --report apply to one member (--shard i/n)")
	}
	parts := make([]checkJSON, 0, members)
	for i := 1; i <= members; i++ {
		o := base
		o.Seed = uint64(i)
		res, trace, err := checkOne(e, m, sys, p, o, cf, tk, fmt.Sprintf("%s member %d/%d", m.Name, i, members))
		if err != nil {
			return err
		}
		out, err := checkJSONOf(m, p, res, trace, "")
		if err != nil {
			return err
		}
		out.Swarm, out.Seed = fmt.Sprintf("%d/%d", i, members), o.Seed
		out.Properties = dropSteps(out.Properties)
		parts = append(parts, out)
		// The member's bit array and memo are garbage now: give them back before the
		// next member allocates its own, so that the swarm's peak is one member's
		// (without it, two arrays: 2.2 GB for 1 GiB members).
		debug.FreeOSMemory()
	}
	names := make([]string, len(parts))
	for i := range parts {
		names[i] = "member " + parts[i].Swarm
	}
	sw, err := mergeSwarm(parts, names)
	if err != nil {
		return err
	}
	if cf.coverage && sw.Coverage == nil && !cf.asJSON {
		defer fmt.Fprintf(e.stdout, "coverage  %s declares no protocol rules; property coverage is each member's (--shard i/n --coverage)\n", m.Name)
	}
	return writeSwarm(e, sw, cf.asJSON)
}

// dropSteps leaves out the witnesses' steps (a swarm reports which member witnessed).
func dropSteps(ps []propJSON) []propJSON {
	out := slices.Clone(ps)
	for i := range out {
		out[i].Steps = nil
	}
	return out
}

// swarmJSON is a swarm's result: its members merged.
type swarmJSON struct {
	Model   string            `json:"model"`
	Params  map[string]string `json:"params"`
	Swarm   string            `json:"swarm"` // "k of n members"
	Members int               `json:"members"`
	Of      int               `json:"of"`
	Missing []int             `json:"missing,omitempty"`
	Outcome string            `json:"outcome"` // violation or sampled (as check's)
	// Bounded names the members a bound (max-states, max-depth, max-memory) stopped,
	// with the bound: "2/8 max-states".
	Bounded []string `json:"bounded,omitempty"`
	// DistinctMin/Max are the members' distinct states (each a lower bound of the
	// reachable states).
	DistinctMin int64 `json:"distinct_min"`
	DistinctMax int64 `json:"distinct_max"`
	// BitsBytes is each member's bit array; MissedMax the largest member's estimate of
	// new states taken for seen ones.
	BitsBytes  int64               `json:"bitstate_bytes"`
	MissedMax  float64             `json:"missed_estimate_max"`
	CPUSeconds float64             `json:"cpu_seconds"`
	Violations []swarmViolation    `json:"violations"`
	Properties []swarmProperty     `json:"properties"`
	Coverage   *scenarios.Coverage `json:"coverage,omitempty"`
}

type swarmViolation struct {
	Member   string `json:"member"`
	Property string `json:"property"`
	Kind     string `json:"kind"`
	Trace    string `json:"trace,omitempty"`
}

type swarmProperty struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Status string `json:"status"` // failed, witnessed or unknown (bitstate proves nothing)
	// By names the members that violated or witnessed it.
	By []string `json:"by,omitempty"`
}

// mergeSwarm combines a swarm's members (names[i] names parts[i] in errors): they must
// be members of one swarm — the same model, parameters and member count, each once.
func mergeSwarm(parts []checkJSON, names []string) (*swarmJSON, error) {
	for k := range parts {
		if _, _, err := memberOf(parts[k].Swarm); err != nil {
			return nil, usageErr("merge: %s: %v", names[k], err)
		}
		if why := memberProblem(parts[k]); why != "" {
			return nil, usageErr("merge: %s: %s", names[k], why)
		}
	}
	// Member order, whatever the files' order (a glob sorts 10/12 before 2/12).
	order := make([]int, len(parts))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int {
		i, _, _ := memberOf(parts[a].Swarm)
		j, _, _ := memberOf(parts[b].Swarm)
		return i - j
	})
	sortedParts, sortedNames := make([]checkJSON, len(parts)), make([]string, len(parts))
	for k, o := range order {
		sortedParts[k], sortedNames[k] = parts[o], names[o]
	}
	parts, names = sortedParts, sortedNames
	first := parts[0]
	_, n, _ := memberOf(first.Swarm)
	sw := &swarmJSON{Model: first.Model, Params: first.Params, Of: n, Outcome: "sampled", Violations: []swarmViolation{}}
	if first.Bitstate != nil {
		sw.BitsBytes = first.Bitstate.Bytes
	}
	seen := map[int]string{}
	props := map[string]*swarmProperty{}
	var propOrder []string
	covs := make([]*scenarios.Coverage, len(parts))
	for k, c := range parts {
		i, ni, _ := memberOf(c.Swarm)
		switch {
		case c.Model != first.Model || !maps.Equal(c.Params, first.Params):
			return nil, usageErr("merge: %s checks %s %s, but %s checks %s %s: members of one swarm check one configuration", names[k], c.Model, paramsText(c.Params), names[0], first.Model, paramsText(first.Params))
		case ni != n:
			return nil, usageErr("merge: %s is a member of a swarm of %d, %s of %d", names[k], ni, names[0], n)
		case seen[i] != "":
			return nil, usageErr("merge: member %d/%d twice: %s and %s", i, n, seen[i], names[k])
		case c.Bitstate.Bytes != first.Bitstate.Bytes:
			return nil, usageErr("merge: %s searched with a bit array of %s, %s with %s: members of one swarm use one size", names[k], formatBytes(c.Bitstate.Bytes), names[0], formatBytes(first.Bitstate.Bytes))
		case c.Strategy != first.Strategy || c.Fair != first.Fair:
			return nil, usageErr("merge: %s and %s searched differently (%s, fair %v; %s, fair %v)", names[k], names[0], c.Strategy, c.Fair, first.Strategy, first.Fair)
		}
		if c.Bound != "" {
			sw.Bounded = append(sw.Bounded, c.Swarm+" "+c.Bound)
		}
		seen[i] = names[k]
		sw.Members++
		if sw.DistinctMin == 0 || c.Distinct < sw.DistinctMin {
			sw.DistinctMin = c.Distinct
		}
		sw.DistinctMax = max(sw.DistinctMax, c.Distinct)
		sw.MissedMax = max(sw.MissedMax, c.Bitstate.Missed)
		sw.CPUSeconds += c.CPUSeconds
		if c.Violation != nil {
			v := swarmViolation{Member: c.Swarm, Property: *c.Violation, Kind: c.Kind}
			if c.Trace != nil {
				v.Trace = *c.Trace
			}
			sw.Violations = append(sw.Violations, v)
			sw.Outcome = "violation"
		}
		for _, pr := range c.Properties {
			sp, ok := props[pr.Name]
			if !ok {
				sp = &swarmProperty{Name: pr.Name, Kind: pr.Kind, Status: "unknown"}
				props[pr.Name] = sp
				propOrder = append(propOrder, pr.Name)
			}
			switch {
			case pr.Status == "failed":
				if sp.Status != "failed" {
					sp.Status, sp.By = "failed", nil
				}
				sp.By = append(sp.By, c.Swarm)
			case pr.Status == "witnessed" && sp.Status != "failed":
				sp.Status = "witnessed"
				sp.By = append(sp.By, c.Swarm)
			}
		}
		covs[k] = c.Coverage
	}
	for i := 1; i <= n; i++ {
		if seen[i] == "" {
			sw.Missing = append(sw.Missing, i)
		}
	}
	sw.Swarm = fmt.Sprintf("%d of %d members", sw.Members, n)
	for _, name := range propOrder {
		sw.Properties = append(sw.Properties, *props[name])
	}
	var err error
	if sw.Coverage, err = scenarios.MergeRuleCoverage(covs, func(i int) string { return names[i] }); err != nil {
		return nil, usageErr("%s", oneLine(err.Error()))
	}
	return sw, nil
}

// memberProblem says what makes a member's result impossible ("" if nothing): a file
// edited by hand, or not a bitstate search's.
func memberProblem(c checkJSON) string {
	i, _, _ := memberOf(c.Swarm)
	switch {
	case c.Bitstate == nil:
		return "not a bitstate search (a swarm's members are)"
	case c.Seed != uint64(i):
		return fmt.Sprintf("member %s ran with seed %d, not %d", c.Swarm, c.Seed, i)
	case c.Bitstate.Bytes <= 0 || c.Bitstate.HashFunctions <= 0 || !(c.Bitstate.Fill >= 0 && c.Bitstate.Fill <= 1) || !(c.Bitstate.Missed >= 0):
		return "impossible bit-array figures"
	case c.Distinct < 0 || c.Total < c.Distinct || !(c.CPUSeconds >= 0) || c.Depth < 0:
		return fmt.Sprintf("impossible counts (distinct %d, total %d, CPU %g s, depth %d)", c.Distinct, c.Total, c.CPUSeconds, c.Depth)
	case c.Outcome != "violation" && c.Outcome != "sampled" && c.Outcome != "bound reached":
		return fmt.Sprintf("outcome %q (want violation, sampled or bound reached)", c.Outcome)
	case (c.Outcome == "bound reached") != (c.Bound != ""):
		return fmt.Sprintf("outcome %q with bound %q", c.Outcome, c.Bound)
	case (c.Outcome == "violation") != (c.Violation != nil):
		return fmt.Sprintf("outcome %q, but violation %v", c.Outcome, c.Violation != nil)
	}
	failed := 0
	for _, pr := range c.Properties {
		switch pr.Status {
		case "unknown", "witnessed":
		case "failed":
			failed++
			if c.Violation == nil || *c.Violation != pr.Name || c.Kind != pr.Kind {
				return fmt.Sprintf("property %q failed, but the violation is another", pr.Name)
			}
		default:
			return fmt.Sprintf("property %q: status %q (a bitstate search decides nothing: want unknown, witnessed or failed)", pr.Name, pr.Status)
		}
	}
	if c.Violation != nil && (failed != 1 || c.Kind == "") {
		return fmt.Sprintf("violation %q without its property", *c.Violation)
	}
	return ""
}

// paramsText writes parameters as -p would take them, sorted.
func paramsText(p map[string]string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k+"="+p[k])
	}
	slices.Sort(keys)
	return strings.Join(keys, " ")
}

// memberOf reads a member's "i/n".
func memberOf(s string) (i, n int, err error) {
	if s == "" {
		return 0, 0, fmt.Errorf("not a swarm member's result (check --strategy swarm --shard i/n --json)")
	}
	if why := shardProblem(s); why != "" {
		return 0, 0, fmt.Errorf("swarm member %q: %s", s, why)
	}
	i, n, _ = parseShard(s)
	if n > maxSwarmMembers {
		return 0, 0, fmt.Errorf("swarm member %q: at most %d members", s, maxSwarmMembers)
	}
	return i, n, nil
}

// writeSwarm prints a swarm's merged result and returns its exit.
func writeSwarm(e *env, sw *swarmJSON, asJSON bool) error {
	if err := writeSwarmOut(e, sw, asJSON); err != nil {
		return err
	}
	return swarmExit(sw)
}

func writeSwarmOut(e *env, sw *swarmJSON, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(sw)
	}
	return writeSwarmText(e.stdout, sw)
}

// swarmExit is a swarm's exit: 1 when a member found a violation, 4 otherwise (a
// bitstate search proves nothing).
func swarmExit(sw *swarmJSON) error {
	if len(sw.Violations) > 0 {
		v := sw.Violations[0]
		return violated("%s: swarm: %d of the %d members found a violation; member %s: %s %s (replay: simrun replay %s)",
			sw.Model, len(sw.Violations), sw.Members, v.Member, v.Kind, v.Property, scenarios.ShellQuote(v.Trace))
	}
	why := ""
	if len(sw.Bounded) > 0 {
		why = fmt.Sprintf("; %d stopped at a bound", len(sw.Bounded))
	}
	return inconclusive("%s: swarm: sampled by %s%s, no violation (bitstate searches prove nothing)", sw.Model, sw.Swarm, why)
}

func writeSwarmText(w io.Writer, sw *swarmJSON) error {
	ew := &swarmWriter{w: w}
	fmt.Fprintf(ew, "model     %s  %s\n", sw.Model, paramsText(sw.Params))
	fmt.Fprintf(ew, "swarm     %s, each a bitstate search of %s with its own seed", sw.Swarm, formatBytes(sw.BitsBytes))
	if len(sw.Missing) > 0 {
		fmt.Fprintf(ew, " (missing: %s)", joinInts(sw.Missing))
	}
	fmt.Fprintf(ew, "\noutcome   %s", sw.Outcome)
	if len(sw.Bounded) > 0 {
		fmt.Fprintf(ew, "; %d members stopped at a bound before the end of their search: %s", len(sw.Bounded), strings.Join(sw.Bounded, ", "))
	}
	fmt.Fprintf(ew, "\nstates    %d–%d distinct per member; each member took at most %.3g new states for seen ones\n",
		sw.DistinctMin, sw.DistinctMax, sw.MissedMax)
	fmt.Fprintf(ew, "CPU       %.2fs in all\n", sw.CPUSeconds)
	if len(sw.Violations) > 0 {
		fmt.Fprintf(ew, "violations\n")
		for _, v := range sw.Violations {
			fmt.Fprintf(ew, "  member %-7s %s %s", v.Member, v.Kind, v.Property)
			if v.Trace != "" {
				fmt.Fprintf(ew, " (trace %s; replay: simrun replay %s)", v.Trace, scenarios.ShellQuote(v.Trace))
			}
			fmt.Fprintln(ew)
		}
	}
	fmt.Fprintf(ew, "properties\n")
	for _, pr := range sw.Properties {
		fmt.Fprintf(ew, "  %-10s %s: %s", pr.Kind, pr.Name, pr.Status)
		switch {
		case len(pr.By) == 1:
			fmt.Fprintf(ew, " (member %s)", pr.By[0])
		case len(pr.By) > 1:
			fmt.Fprintf(ew, " (members %s)", strings.Join(pr.By, ", "))
		}
		fmt.Fprintln(ew)
	}
	if sw.Coverage != nil {
		fmt.Fprintf(ew, "coverage  the members' rule coverage, summed (property coverage is each member's: --shard i/n --coverage)\n")
		if err := sw.Coverage.WriteText(ew); err != nil {
			return err
		}
	}
	return ew.err
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// formatBytes writes a size as parseMemory reads it.
func formatBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"GiB", 30}, {"MiB", 20}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.suffix)
		}
	}
	return fmt.Sprintf("%gKiB", float64(n)/1024)
}

// readCheckMember reads a swarm member's --json result for merge.
func readCheckMember(path string, data []byte) (checkJSON, error) {
	var c checkJSON
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, usageErr("merge: %s: not a check result: %s", path, oneLine(err.Error()))
	}
	return c, nil
}

// mergeSwarmFiles is merge over swarm members' results (data: the files' bytes).
func mergeSwarmFiles(e *env, paths []string, data [][]byte, jsonPath string) error {
	parts := make([]checkJSON, len(paths))
	for i, p := range paths {
		var err error
		if parts[i], err = readCheckMember(p, data[i]); err != nil {
			return err
		}
		parts[i].Properties = dropSteps(parts[i].Properties)
	}
	sw, err := mergeSwarm(parts, paths)
	if err != nil {
		return err
	}
	if jsonPath != "" && jsonPath != "-" {
		data, _ := json.MarshalIndent(sw, "", "  ")
		if err := os.WriteFile(jsonPath, append(data, '\n'), 0o644); err != nil {
			return usageErr("merge: --json: %v", err)
		}
	}
	if err := writeSwarmOut(e, sw, jsonPath == "-"); err != nil {
		return err
	}
	if jsonPath != "" && jsonPath != "-" {
		fmt.Fprintf(e.stdout, "result    %s\n", jsonPath)
	}
	return swarmExit(sw)
}

// swarmWriter keeps the first write error.
type swarmWriter struct {
	w   io.Writer
	err error
}

func (s *swarmWriter) Write(b []byte) (int, error) {
	if s.err != nil {
		return len(b), nil
	}
	_, s.err = s.w.Write(b)
	return len(b), nil
}
