package sim

import (
	"fmt"
	"slices"
	"sync"
)

// Rule coverage. A protocol declares its rule map — the numbered rules of its paper
// that have a code branch — as data, once, in package variables:
//
//	var rules = sim.NewRuleMap("exactlyonce")
//	var ruleCondYes = rules.Rule("EO-5 cond-yes", "a voter answers COND_YES (OrchId above N, N not its own node)")
//
// and marks the branch where the rule acts with out.Cover(ruleCondYes). An engine that
// tracks coverage (sim.Config.Coverage, model.Options.Coverage) counts every Cover of
// a handler call that took effect: per run in the simulator (Result.Coverage), per
// transition in the model checker. Coverage is not an observation: it is not in the
// trace, never changes a run, and costs one nil test per Cover when it is off.
//
// A rule of the paper that has no branch of its own (it holds by construction, or its
// code is shared with another tag) is declared with RuleMap.Unbranched and a reason,
// so a coverage report can list it without counting it.

// Rule is a handle on one declared rule tag (the zero Rule is invalid).
type Rule struct{ id int32 }

// ID returns the rule's index in the process-wide rule list (AllRules).
func (r Rule) ID() int { return int(r.id) - 1 }

// RuleInfo describes one declared rule.
type RuleInfo struct {
	// Protocol is the rule map's name (a protocol package, "exactlyonce").
	Protocol string `json:"protocol"`
	// Tag is the rule tag: the spec's number and a short name ("EO-5 cond-yes").
	Tag string `json:"tag"`
	// Doc says what the branch does, in a line.
	Doc string `json:"doc,omitempty"`
	// NoBranch, when set, says why the rule has no code branch: it is listed in
	// coverage reports and never counted.
	NoBranch string `json:"no_branch,omitempty"`
}

// RuleMap is a protocol's list of rule tags, in declaration order.
type RuleMap struct{ name string }

var rulesMu sync.Mutex
var allRules []RuleInfo
var ruleMaps = map[string]*RuleMap{}

// NewRuleMap declares the rule map of protocol name. Call it once, from a package
// variable's initialiser; a second map of the same name panics (a programming error).
func NewRuleMap(name string) *RuleMap {
	rulesMu.Lock()
	defer rulesMu.Unlock()
	if name == "" {
		panic("sim: NewRuleMap needs a name")
	}
	if ruleMaps[name] != nil {
		panic(fmt.Sprintf("sim: rule map %q declared twice", name))
	}
	m := &RuleMap{name: name}
	ruleMaps[name] = m
	return m
}

// Name returns the map's name.
func (m *RuleMap) Name() string { return m.name }

// Rule declares a rule tag with a code branch and returns its handle. A tag declared
// twice in one map panics.
func (m *RuleMap) Rule(tag, doc string) Rule {
	return m.add(RuleInfo{Protocol: m.name, Tag: tag, Doc: doc})
}

// Unbranched declares a rule of the paper that has no branch of its own, with the
// reason (it holds by construction, it shares another tag's code, ...).
func (m *RuleMap) Unbranched(tag, why string) {
	if why == "" {
		panic(fmt.Sprintf("sim: rule %s %q: Unbranched needs a reason", m.name, tag))
	}
	m.add(RuleInfo{Protocol: m.name, Tag: tag, NoBranch: why})
}

func (m *RuleMap) add(ri RuleInfo) Rule {
	rulesMu.Lock()
	defer rulesMu.Unlock()
	if ri.Tag == "" {
		panic(fmt.Sprintf("sim: rule map %s: empty tag", m.name))
	}
	for _, o := range allRules {
		if o.Protocol == m.name && o.Tag == ri.Tag {
			panic(fmt.Sprintf("sim: rule map %s: tag %q declared twice", m.name, ri.Tag))
		}
	}
	allRules = append(allRules, ri)
	return Rule{id: int32(len(allRules))}
}

// Rules returns the rules of map m in declaration order.
func (m *RuleMap) Rules() []RuleInfo { return Rules(m.name) }

// Rules returns the rules declared by protocol name, in declaration order (nil when
// there is no such map).
func Rules(name string) []RuleInfo {
	rulesMu.Lock()
	defer rulesMu.Unlock()
	var out []RuleInfo
	for _, r := range allRules {
		if r.Protocol == name {
			out = append(out, r)
		}
	}
	return out
}

// RuleMaps returns the names of the declared rule maps, sorted.
func RuleMaps() []string {
	rulesMu.Lock()
	defer rulesMu.Unlock()
	out := make([]string, 0, len(ruleMaps))
	for n := range ruleMaps {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// AllRules returns every declared rule; a Rule's ID indexes it.
func AllRules() []RuleInfo {
	rulesMu.Lock()
	defer rulesMu.Unlock()
	return slices.Clone(allRules)
}

// NumRules returns how many rules are declared (the length of a coverage vector).
func NumRules() int {
	rulesMu.Lock()
	defer rulesMu.Unlock()
	return len(allRules)
}

// Coverage counts how often each declared rule fired, by rule ID (AllRules order).
// The zero value counts nothing; NewCoverage sizes one for every declared rule.
type Coverage struct {
	Fired []int64
	// Features (simulator runs) are hashes of the shapes of the run's handler calls:
	// a node, the input it handled before and this input, and the rules the call
	// covered. A run with a feature no earlier run had did something new.
	Features map[uint64]struct{}
}

// NewCoverage returns an empty count for every rule declared so far.
func NewCoverage() *Coverage {
	return &Coverage{Fired: make([]int64, NumRules()), Features: map[uint64]struct{}{}}
}

// Add counts the rules of one handler call (Outbox.Covered).
func (c *Coverage) Add(ids []int32) {
	for _, id := range ids {
		if int(id) < len(c.Fired) {
			c.Fired[id]++
		}
	}
}

// Count returns how often the rule with tag tag of protocol name fired (0 when it
// never did or is not declared).
func (c *Coverage) Count(name, tag string) int64 {
	if c == nil {
		return 0
	}
	for i, r := range AllRules() {
		if r.Protocol == name && r.Tag == tag && i < len(c.Fired) {
			return c.Fired[i]
		}
	}
	return 0
}

// ByTag returns the counts of the rules of protocol name that fired, by tag.
func (c *Coverage) ByTag(name string) map[string]int64 {
	out := map[string]int64{}
	if c == nil {
		return out
	}
	for i, r := range AllRules() {
		if r.Protocol == name && i < len(c.Fired) && c.Fired[i] > 0 {
			out[r.Tag] = c.Fired[i]
		}
	}
	return out
}

// Cover records that the branch of rule r ran in this handler call (rule coverage;
// see NewRuleMap). It does nothing unless the engine tracks coverage.
func (o *Outbox) Cover(r Rule) {
	if o.track && r.id > 0 {
		o.cover = append(o.cover, r.id-1)
	}
}

// TrackCoverage makes Cover record rules (engines; Reset keeps the setting).
func (o *Outbox) TrackCoverage(on bool) { o.track = on }

// Covered returns the rule IDs Cover recorded in this call, in call order (engines).
func (o *Outbox) Covered() []int32 { return o.cover }
