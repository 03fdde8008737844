package saga

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SG-1: the configuration language of §3.2, exactly its four fact forms:
//
//	incoming_action(st_name, action).
//	compensation_action(st_name, action).
//	next(st_name, agent).
//	next(st_name, new_st_name, agent).
//
// One file holds the sections of several agents: a comment line naming the agent
// ("//Agente order", as in the paper, or "// agent order") opens that agent's section;
// every fact belongs to the last section opened. Comments run from "//" or "%" to the
// end of the line. A fact outside a section, a fact of another form, a missing
// compensation, an unknown agent, a sub-transaction that visits an agent twice
// (a cycle that does not go through a new sub-transaction name) and an action that no
// service offers are errors naming the file and the line.

// SecKey names a section: the agent that runs it and its sub-transaction.
type SecKey struct {
	Agent string
	St    string
}

func (k SecKey) String() string { return k.Agent + "/" + k.St }

// Section is one agent's configuration of one sub-transaction.
type Section struct {
	Incoming, Compensation string
	// Next continues the same sub-transaction at another agent ("" ends it).
	Next string
	// Links start new sub-transactions (next/3): in parallel with Next.
	Links []Link
	// Line is where the incoming_action fact is, for errors.
	Line int
}

// Link is next(st_name, new_st_name, agent).
type Link struct{ St, Agent string }

// AgentConf is one agent's section of the configuration.
type AgentConf struct {
	Name     string
	Line     int
	Sections map[string]*Section // by sub-transaction name
}

// Config is a parsed configuration: every agent's sections.
type Config struct {
	File   string
	Agents map[string]*AgentConf
	// Order is the agents in the order their sections appear (the connectivity line
	// sorts names instead; see Line).
	Order []string
}

// ConfigError is a configuration error at a line of a file.
type ConfigError struct {
	File string
	Line int
	Msg  string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// MaxConfigBytes bounds a configuration file.
const MaxConfigBytes = 1 << 20

// Bounds on what a configuration describes, checked as it is read, before anything is
// built from it: a small file can describe a system far too large to run (one section
// linking 2 000 agents by next/3 took 4.3 GB to prepare; a 2 000-agent chain 3.2 GB).
// A transaction's graph is computed from every section (sections² entries at most).
const (
	MaxAgents   = 200 // agent sections (the connectivity experiment's largest line)
	MaxSections = 500 // sections in all, over every agent
	MaxLinks    = 64  // next/3 facts of one section (its fan-out)
)

// Parse reads a configuration. offers, when set, says whether some service offers an
// action at an agent (an action nobody offers is an error); nil accepts every name.
func Parse(file string, src []byte, offers func(agent, action string) bool) (*Config, error) {
	if len(src) > MaxConfigBytes {
		return nil, &ConfigError{file, 1, fmt.Sprintf("configuration is %d bytes, more than the limit of %d", len(src), MaxConfigBytes)}
	}
	if line, msg := unreadable(src); msg != "" {
		return nil, &ConfigError{file, line, msg}
	}
	sections := 0
	c := &Config{File: file, Agents: map[string]*AgentConf{}}
	var cur *AgentConf
	type ref struct {
		line         int
		agent, st    string
		target, newS string
	}
	var nexts []ref
	comps := map[SecKey]int{}
	for i, raw := range strings.Split(string(src), "\n") {
		line := i + 1
		text := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if name, ok, bad := agentHeader(text); ok || bad != "" {
			if bad != "" {
				return nil, &ConfigError{file, line, fmt.Sprintf("a section header names one agent, // agent NAME: got %s (a comment must not start with agent)", show(bad))}
			}
			if !ident(name) {
				return nil, &ConfigError{file, line, fmt.Sprintf("agent name %s is not an identifier", show(name))}
			}
			if len(c.Agents) == MaxAgents {
				return nil, &ConfigError{file, line, fmt.Sprintf("more than %d agents (the most a configuration may have)", MaxAgents)}
			}
			if _, dup := c.Agents[name]; dup {
				return nil, &ConfigError{file, line, fmt.Sprintf("agent %s has a second section (the first is at line %d)", name, c.Agents[name].Line)}
			}
			cur = &AgentConf{Name: name, Line: line, Sections: map[string]*Section{}}
			c.Agents[name] = cur
			c.Order = append(c.Order, name)
			continue
		}
		if k := strings.Index(text, "//"); k >= 0 {
			text = strings.TrimSpace(text[:k])
		}
		if k := strings.Index(text, "%"); k >= 0 {
			text = strings.TrimSpace(text[:k])
		}
		if text == "" {
			continue
		}
		pred, args, err := fact(text)
		if err != nil {
			return nil, &ConfigError{file, line, err.Error()}
		}
		if cur == nil {
			return nil, &ConfigError{file, line, "a fact before any agent section (open one with a comment line: //Agente NAME)"}
		}
		if sections == MaxSections && cur.Sections[args[0]] == nil {
			return nil, &ConfigError{file, line, fmt.Sprintf("more than %d sections (the most a configuration may have)", MaxSections)}
		}
		sec := func(st string) *Section {
			s := cur.Sections[st]
			if s == nil {
				s = &Section{}
				cur.Sections[st] = s
				sections++
			}
			return s
		}
		switch {
		case pred == "incoming_action" && len(args) == 2:
			s := sec(args[0])
			if s.Incoming != "" {
				return nil, &ConfigError{file, line, fmt.Sprintf("a second incoming_action for %s at agent %s (the first at line %d)", args[0], cur.Name, s.Line)}
			}
			s.Incoming, s.Line = args[1], line
		case pred == "compensation_action" && len(args) == 2:
			s := sec(args[0])
			if s.Compensation != "" {
				return nil, &ConfigError{file, line, fmt.Sprintf("a second compensation_action for %s at agent %s", args[0], cur.Name)}
			}
			s.Compensation = args[1]
			comps[SecKey{cur.Name, args[0]}] = line
		case pred == "next" && len(args) == 2:
			s := sec(args[0])
			if s.Next != "" {
				return nil, &ConfigError{file, line, fmt.Sprintf("a second next/2 for %s at agent %s: a sub-transaction is a simple path (use next/3 to start a parallel one)", args[0], cur.Name)}
			}
			s.Next = args[1]
			nexts = append(nexts, ref{line, cur.Name, args[0], args[1], ""})
		case pred == "next" && len(args) == 3:
			s := sec(args[0])
			l := Link{St: args[1], Agent: args[2]}
			switch {
			case slices.Contains(s.Links, l):
				return nil, &ConfigError{file, line, fmt.Sprintf("next(%s, %s, %s) a second time at agent %s", args[0], args[1], args[2], cur.Name)}
			case len(s.Links) == MaxLinks:
				return nil, &ConfigError{file, line, fmt.Sprintf("sub-transaction %s at agent %s starts more than %d others (next/3)", args[0], cur.Name, MaxLinks)}
			}
			s.Links = append(s.Links, l)
			nexts = append(nexts, ref{line, cur.Name, args[0], args[2], args[1]})
		case pred == "incoming_action" || pred == "compensation_action" || pred == "next":
			return nil, &ConfigError{file, line, fmt.Sprintf("%s takes %s arguments, not %d", pred, map[string]string{"incoming_action": "2", "compensation_action": "2", "next": "2 or 3"}[pred], len(args))}
		default:
			return nil, &ConfigError{file, line, fmt.Sprintf("unknown fact %s (the facts are incoming_action/2, compensation_action/2, next/2, next/3)", pred)}
		}
	}
	if len(c.Agents) == 0 {
		return nil, &ConfigError{file, 1, "no agent section (open one with a comment line: //Agente NAME)"}
	}
	for _, name := range c.Order {
		a := c.Agents[name]
		for _, st := range sortedKeys(a.Sections) {
			s := a.Sections[st]
			switch {
			case s.Incoming == "":
				l := comps[SecKey{name, st}]
				if l == 0 {
					l = a.Line
				}
				return nil, &ConfigError{file, l, fmt.Sprintf("sub-transaction %s at agent %s has no incoming_action", st, name)}
			case s.Compensation == "":
				return nil, &ConfigError{file, s.Line, fmt.Sprintf("missing compensation: incoming_action(%s, %s) at agent %s has no compensation_action", st, s.Incoming, name)}
			}
			if offers != nil {
				if !offers(name, s.Incoming) {
					return nil, &ConfigError{file, s.Line, fmt.Sprintf("action %s: no service at agent %s offers it", s.Incoming, name)}
				}
				if !offers(name, s.Compensation) {
					return nil, &ConfigError{file, comps[SecKey{name, st}], fmt.Sprintf("action %s: no service at agent %s offers it", s.Compensation, name)}
				}
			}
		}
	}
	for _, n := range nexts {
		target, ok := c.Agents[n.target]
		if !ok {
			return nil, &ConfigError{file, n.line, fmt.Sprintf("unknown agent %s", n.target)}
		}
		st := n.st
		if n.newS != "" {
			st = n.newS
		}
		if target.Sections[st] == nil {
			return nil, &ConfigError{file, n.line, fmt.Sprintf("agent %s has no section for sub-transaction %s", n.target, st)}
		}
	}
	// A sub-transaction is a simple path: following next/2 never comes back to an
	// agent (a revisit needs a new sub-transaction name, next/3).
	for _, n := range nexts {
		if n.newS != "" {
			continue
		}
		seen := map[string]bool{n.agent: true}
		for at := n.target; at != ""; at = c.Agents[at].Sections[n.st].Next {
			if seen[at] {
				return nil, &ConfigError{file, n.line, fmt.Sprintf("sub-transaction %s visits agent %s twice: a cycle must go through a new sub-transaction name (next/3)", n.st, at)}
			}
			seen[at] = true
		}
	}
	// Links between sub-transactions must not loop either (the graph of sections is
	// acyclic, so every transaction ends).
	if cyc := c.linkCycle(); cyc != nil {
		return nil, &ConfigError{file, cyc.line, fmt.Sprintf("sections loop back to %s: a transaction would never end", cyc.sec)}
	}
	return c, nil
}

type cycleAt struct {
	line int
	sec  SecKey
}

// linkCycle finds a cycle in the section graph, if any.
func (c *Config) linkCycle() *cycleAt {
	const (
		white = iota
		grey
		black
	)
	color := map[SecKey]int{}
	var found *cycleAt
	var visit func(k SecKey)
	visit = func(k SecKey) {
		if found != nil {
			return
		}
		color[k] = grey
		for _, n := range c.Successors(k) {
			switch color[n] {
			case grey:
				found = &cycleAt{c.Agents[k.Agent].Sections[k.St].Line, n}
				return
			case white:
				visit(n)
			}
		}
		color[k] = black
	}
	for _, name := range c.Order {
		for _, st := range sortedKeys(c.Agents[name].Sections) {
			if k := (SecKey{name, st}); color[k] == white {
				visit(k)
			}
		}
	}
	return found
}

// Successors returns the sections that follow k: the next agent of its
// sub-transaction, then the sub-transactions it links, in configuration order.
func (c *Config) Successors(k SecKey) []SecKey {
	a := c.Agents[k.Agent]
	if a == nil {
		return nil
	}
	s := a.Sections[k.St]
	if s == nil {
		return nil
	}
	var out []SecKey
	if s.Next != "" {
		out = append(out, SecKey{s.Next, k.St})
	}
	for _, l := range s.Links {
		out = append(out, SecKey{l.Agent, l.St})
	}
	return out
}

// Section returns the configuration of section k (nil if none).
func (c *Config) Section(k SecKey) *Section {
	if a := c.Agents[k.Agent]; a != nil {
		return a.Sections[k.St]
	}
	return nil
}

// Graph is the sections a transaction started at Start runs (SG-2 step 2: the
// participating agents and sub-transactions), in a topological order, with each
// section's predecessors.
type Graph struct {
	Start    SecKey
	Sections []SecKey // topological order: every section after its predecessors
	Preds    map[SecKey][]SecKey
	Succs    map[SecKey][]SecKey
	Agents   []string // participants, sorted
	// Ends are the sections that end a sub-transaction (no next/2): SG-2 step 6.
	Ends []SecKey
}

// Graph computes the transaction graph from a start section.
func (c *Config) Graph(start SecKey) (*Graph, error) {
	if c.Section(start) == nil {
		return nil, fmt.Errorf("no section %s in the configuration", start)
	}
	g := &Graph{Start: start, Preds: map[SecKey][]SecKey{}, Succs: map[SecKey][]SecKey{}}
	seen := map[SecKey]bool{start: true}
	queue := []SecKey{start}
	var all []SecKey
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		all = append(all, k)
		for _, n := range c.Successors(k) {
			g.Succs[k] = append(g.Succs[k], n)
			g.Preds[n] = append(g.Preds[n], k)
			if !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	// Kahn's algorithm in discovery order: a deterministic topological order.
	indeg := map[SecKey]int{}
	for _, k := range all {
		indeg[k] = len(g.Preds[k])
	}
	ready := []SecKey{start}
	for len(ready) > 0 {
		k := ready[0]
		ready = ready[1:]
		g.Sections = append(g.Sections, k)
		for _, n := range g.Succs[k] {
			indeg[n]--
			if indeg[n] == 0 {
				ready = append(ready, n)
			}
		}
	}
	if len(g.Sections) != len(all) {
		return nil, fmt.Errorf("the sections reachable from %s form a cycle", start)
	}
	agents := map[string]bool{}
	for _, k := range g.Sections {
		agents[k.Agent] = true
		if c.Section(k).Next == "" {
			g.Ends = append(g.Ends, k)
		}
	}
	g.Agents = sortedKeys(agents)
	return g, nil
}

// agentHeader recognizes a section header: "//Agente NAME", "// agent NAME" (any
// case). A comment line that starts with the word but is not one ("// agent 1 car")
// is returned in bad: read as a comment, it would put the next facts in the previous
// section, and the error would blame a later line.
func agentHeader(text string) (name string, ok bool, bad string) {
	if !strings.HasPrefix(text, "//") {
		return "", false, ""
	}
	f := strings.Fields(strings.TrimPrefix(text, "//"))
	if len(f) == 0 || !(strings.EqualFold(f[0], "agente") || strings.EqualFold(f[0], "agent")) {
		return "", false, ""
	}
	if len(f) == 2 {
		return f[1], true, ""
	}
	return "", false, text
}

// unreadable finds what no configuration holds: invalid UTF-8, a byte-order mark, a
// control or invisible character (binary data would otherwise be echoed in errors).
// It returns the line and what is wrong ("" if nothing).
func unreadable(src []byte) (int, string) {
	if bytes.HasPrefix(src, []byte("\uFEFF")) {
		return 1, "the file starts with a UTF-8 byte-order mark; save it as plain UTF-8"
	}
	line := 1
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRune(src[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return line, fmt.Sprintf("byte 0x%02x is not UTF-8 (is this a configuration file?)", src[i])
		case r == '\n':
			line++
		case r == '\t' || r == '\r':
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return line, fmt.Sprintf("control or invisible character %U (is this a configuration file?)", r)
		}
		i += n
	}
	return 0, ""
}

// fact parses "name(arg, arg...)." into its predicate and arguments.
func fact(text string) (string, []string, error) {
	if !strings.HasSuffix(text, ".") {
		return "", nil, fmt.Errorf("syntax error: a fact ends with a period: %s", show(text))
	}
	if i := strings.Index(text, ")."); i >= 0 && i+2 < len(text) {
		return "", nil, fmt.Errorf("one fact a line: %s is followed by %s", show(text[:i+2]), show(strings.TrimSpace(text[i+2:])))
	}
	body := strings.TrimSpace(strings.TrimSuffix(text, "."))
	open := strings.IndexByte(body, '(')
	if open <= 0 || !strings.HasSuffix(body, ")") {
		return "", nil, fmt.Errorf("syntax error: want name(arguments).: %s", show(text))
	}
	pred := strings.TrimSpace(body[:open])
	if !ident(pred) {
		return "", nil, fmt.Errorf("syntax error: %s is not a predicate name", show(pred))
	}
	inner := body[open+1 : len(body)-1]
	if strings.ContainsAny(inner, "()") {
		return "", nil, fmt.Errorf("syntax error: nested parentheses in %s", show(text))
	}
	var args []string
	for _, a := range strings.Split(inner, ",") {
		a = strings.TrimSpace(a)
		if !ident(a) {
			return "", nil, fmt.Errorf("syntax error: argument %s of %s is not an identifier", show(a), pred)
		}
		args = append(args, a)
	}
	return pred, args, nil
}

func ident(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// show quotes s for an error message, cut to 60 characters: what a user wrote, never
// raw bytes that would garble a terminal.
func show(s string) string {
	if r := []rune(s); len(r) > 60 {
		return strconv.Quote(string(r[:60])) + "…"
	}
	return strconv.Quote(s)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// PaperConfig is the paper's own example (§3.2): agents order and customer, an order
// created pending, credit reserved, the order approved.
const PaperConfig = `//Agente order
incoming_action(orderCreation, createPendingOrder).
compensation_action(orderCreation, deleteOrder).
next(orderCreation, customer).
incoming_action(orderApproval, approveOrder).
compensation_action(orderApproval, cancelOrder).

//Agente customer
incoming_action(orderCreation, reserveCredit).
compensation_action(orderCreation, cancelReservation).
next(orderCreation, orderApproval, order).
`
