package saga

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Options configure every agent of a system (shared, read-only once built).
type Options struct {
	Conf *Config
	// Names maps node ids to agent names: node i runs agent Names[i] and its service.
	Names    []string
	Services map[string]Service
	// Retry re-sends unacknowledged requests and notices (0: only when the receiver
	// reconnects or restarts).
	Retry time.Duration
	// Beat is the period of the connectivity exchange (0: no connectivity layer);
	// a neighbour silent for Timeout is lost; Grace is the grace period (SG-4).
	Beat, Timeout, Grace time.Duration
	// AllToAll exchanges connectivity with every agent instead of along the line (the
	// baseline the paper's line is measured against).
	AllToAll bool
	// EndNotices tells the others only at a sub-transaction's end that its sections
	// were processed (§3.3 step 6, as written; a processed section implies its
	// predecessors: learn). Off, every processed section is noticed to every
	// participant, which the protocol's checks read (the saga/sections experiment
	// measures both).
	EndNotices bool
	// Policy plants deliberate bugs (tests and -p bug=…): hooks at the decision
	// points (policy.go); nil is the protocol.
	Policy *Policy

	graphs map[SecKey]*Graph
	ids    map[string]sim.NodeID
	line   []string // agents sorted by name: the connectivity line (Fig. 3)
}

// Prepare validates the options and precomputes every transaction graph.
func (o *Options) Prepare() error {
	o.ids = map[string]sim.NodeID{}
	for i, n := range o.Names {
		o.ids[n] = sim.NodeID(i)
	}
	for _, a := range o.Conf.Order {
		if _, ok := o.ids[a]; !ok {
			return fmt.Errorf("saga: agent %s of the configuration has no node", a)
		}
		if o.Services[a] == nil {
			return fmt.Errorf("saga: agent %s has no service", a)
		}
	}
	o.line = slices.Clone(o.Names)
	slices.Sort(o.line)
	o.graphs = map[SecKey]*Graph{}
	for _, a := range o.Conf.Order {
		for _, st := range sortedKeys(o.Conf.Agents[a].Sections) {
			k := SecKey{a, st}
			g, err := o.Conf.Graph(k)
			if err != nil {
				return err
			}
			o.graphs[k] = g
		}
	}
	return nil
}

// Graph returns the graph of a transaction started at start (nil if none).
func (o *Options) Graph(start SecKey) *Graph { return o.graphs[start] }

// Own is one of the agent's sections in a transaction (Definition 3's IS, less what
// the configuration holds).
type Own struct {
	State Status
	In    Data
	Out   Data
	// Got lists the predecessors whose request arrived (a join waits for all).
	Got []SecKey
}

// Outcome is how a transaction ended at an agent.
type Outcome uint8

// Outcomes.
const (
	Running Outcome = iota
	Committed
	Compensated
)

func (o Outcome) String() string { return [...]string{"running", "committed", "compensated"}[o] }

// Tx is an agent's record of a transaction: its log entry (stable, key "tx/ID"),
// rewritten in the step that changes it.
type Tx struct {
	ID    TrID
	Start SecKey
	Input Data
	Own   map[string]*Own
	// Known is what the agent knows of every section's state (its own and the
	// notices of the others).
	Known   map[string]Status
	Aborted bool
	Why     string
	Outcome Outcome
}

// pend is an unacknowledged message.
type pend struct {
	To  string
	Msg sim.Message
}

// state is everything an agent holds (volatile mirror of its log, plus connectivity).
type state struct {
	Name string
	DB   map[string]int64
	Seq  int64
	Txs  map[TrID]*Tx
	// Pending maps a key (destination, transaction, section, kind) to the message.
	Pending map[string]pend
	// Connectivity (SG-4): the agent's view, when it last heard each neighbour
	// (local time), since when each lost agent is lost, and the agents past their
	// grace period (the line is re-arranged around them).
	View      map[string]Entry
	LastHeard map[string]sim.Time
	LostSince map[string]sim.Time
	Gone      map[string]bool
	// Tried lists the lost agents sent a connectivity message since they were lost.
	Tried map[string]bool
}

// Agent is one microservice's agent and the microservice itself (a node).
type Agent struct {
	O *Options
	S state

	now  sim.Time
	self sim.NodeID
	out  *sim.Outbox
	db   DB
}

// New returns the constructor of node i.
func New(o *Options, i int) func() sim.Node {
	return func() sim.Node { return &Agent{O: o, S: state{Name: o.Names[i]}} }
}

// Clone implements sim.Cloner (the options are shared).
func (a *Agent) Clone() sim.Node { return &Agent{O: a.O, S: sim.DeepCopy(a.S)} }

// AppendState implements sim.StateEncoder.
func (a *Agent) AppendState(b []byte) []byte { return sim.AppendCanonical(b, a.S) }

// Handle implements sim.Node.
func (a *Agent) Handle(in sim.Input, out *sim.Outbox) {
	a.now, a.self, a.out = in.Now, in.Self, out
	defer func() { a.out = nil }()
	switch in.Kind {
	case sim.Start:
		a.reset()
		a.startConn()
	case sim.Restart:
		a.reset()
		a.replay(in.Stable)
		a.startConn()
	case sim.Receive:
		a.receive(in.From, in.Msg)
	case sim.Timeout:
		a.timer(string(in.Timer))
	}
}

func (a *Agent) reset() {
	a.S = state{Name: a.S.Name, DB: map[string]int64{}, Txs: map[TrID]*Tx{}, Pending: map[string]pend{},
		View: map[string]Entry{}, LastHeard: map[string]sim.Time{}, LostSince: map[string]sim.Time{}, Gone: map[string]bool{}, Tried: map[string]bool{}}
}

// ---- log (SG-4 crash extension) ----

func txKey(id TrID) string { return "tx/" + id.String() }

// persist writes the transaction's record and the service's changed keys in this
// step: the log and the state change are atomic together.
func (a *Agent) persist(t *Tx) {
	rec := sim.DeepCopy(*t)
	a.logged(&rec)
	a.out.Store(txKey(t.ID), rec)
	a.flushDB()
}

func (a *Agent) flushDB() {
	for _, k := range sortedKeys(a.db.changed) {
		if v, ok := a.S.DB[k]; ok {
			a.out.Store("svc/"+k, v)
		} else {
			a.out.Delete("svc/" + k)
		}
	}
	a.db.changed = nil
}

// replay rebuilds the agent from its log at restart: the transactions, the service's
// database and the sequence number; it then re-sends what the transactions still owe
// (notices and requests; receivers drop duplicates), runs the compensations that are
// due, and says hello so that the others re-send what it missed.
func (a *Agent) replay(st sim.StableView) {
	for _, k := range st.Keys() {
		switch {
		case strings.HasPrefix(k, "svc/"):
			v, _ := sim.Load[int64](st, k)
			a.S.DB[strings.TrimPrefix(k, "svc/")] = v
		case k == "seq":
			a.S.Seq, _ = sim.Load[int64](st, k)
		case strings.HasPrefix(k, "tx/"):
			t, _ := sim.Load[Tx](st, k)
			a.S.Txs[t.ID] = &t
		}
	}
	a.out.Observe(ObsReplayed, Replayed{Agent: a.S.Name, Lines: a.Summary()})
	a.out.Cover(ruleReplay)
	for _, id := range a.txIDs() {
		t := a.S.Txs[id]
		for _, stn := range sortedKeys(t.Own) {
			o := t.Own[stn]
			k := SecKey{a.S.Name, stn}
			if o.State == Processed || o.State == Failed || o.State == ProcessedCompensation || o.State == Null {
				a.out.Cover(ruleReplaySend)
				a.notify(t, k, o.State, false)
			}
			if o.State == Processed {
				a.forward(t, k, o.Out)
			}
		}
		if t.Aborted && t.Why != "" {
			a.notifyAbort(t)
		}
		if t.Outcome == Committed && t.ID.Init == a.S.Name {
			a.out.Cover(ruleReplayDec)
			for _, p := range a.O.Graph(t.Start).Agents {
				if p != a.S.Name {
					a.send(p, pkey(p, "decision", t.ID, SecKey{}, 0), Note{From: a.S.Name, Tr: t.ID, Start: t.Start, Input: t.Input, Decision: Committed})
				}
			}
		}
		a.progress(t)
	}
	for _, n := range a.O.Names {
		if n != a.S.Name {
			a.out.Send(a.O.ids[n], Hello{From: a.S.Name})
		}
	}
}

// Summary is the agent's transaction state in lines ("order#1 orderCreation
// processed", "order#1 aborted", "order#1 outcome committed"), sorted: the log-replay
// check compares it at a restart with what the agent had done before the crash.
func (a *Agent) Summary() []string {
	var ls []string
	for _, id := range a.txIDs() {
		t := a.S.Txs[id]
		for _, st := range sortedKeys(t.Own) {
			if s := t.Own[st].State; s != Pendant && s != Processing { // a join's wait is not observed
				ls = append(ls, fmt.Sprintf("%s %s %s", id, st, s))
			}
		}
		if t.Aborted {
			ls = append(ls, fmt.Sprintf("%s aborted", id))
		}
		if t.Outcome != Running {
			ls = append(ls, fmt.Sprintf("%s outcome %s", id, t.Outcome))
		}
	}
	slices.Sort(ls)
	return ls
}

func (a *Agent) txIDs() []TrID {
	ids := make([]TrID, 0, len(a.S.Txs))
	for id := range a.S.Txs {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(x, y TrID) int { return cmp.Or(strings.Compare(x.Init, y.Init), cmp.Compare(x.Seq, y.Seq)) })
	return ids
}

// ---- SG-2 normal flow ----

func (a *Agent) receive(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case StartTx:
		a.start(m)
	case Req:
		a.request(m)
	case Note:
		a.note(m)
	case Ack:
		switch {
		case m.Req:
			delete(a.S.Pending, reqKey(a.O.Names[from], m.Tr, m.Sec, m.Join))
		case m.Decision != Running:
			delete(a.S.Pending, pkey(a.O.Names[from], "decision", m.Tr, SecKey{}, 0))
		default:
			delete(a.S.Pending, pkey(a.O.Names[from], "note", m.Tr, m.Sec, m.Status))
		}
	case Beat:
		a.beat(m)
	case Hello:
		a.out.Cover(ruleHello)
		a.hear(m.From)
		a.flush(m.From)
	}
}

// start: SG-2 steps 1-3: the microservice asks its agent to start; the agent knows
// the participants from the configuration (Options.Graph) and makes a unique tr_id.
func (a *Agent) start(m StartTx) {
	if a.O.Graph(m.Start) == nil || m.Start.Agent != a.S.Name {
		a.out.Observe(ObsRefused, Refused{Agent: a.S.Name, Start: m.Start, Why: "no such start section at this agent"})
		return
	}
	a.out.Cover(ruleStart)
	a.S.Seq++
	a.out.Store("seq", a.S.Seq)
	id := TrID{Init: a.S.Name, Seq: a.S.Seq}
	in := m.Input
	if in.Order == 0 {
		in.Order = a.S.Seq
	}
	t := a.record(id, m.Start, in)
	a.out.Observe(ObsBegin, Begin{Tr: id, Start: m.Start, Input: in, Agents: a.O.Graph(m.Start).Agents, Sections: len(a.O.Graph(m.Start).Sections)})
	a.arrive(t, m.Start, SecKey{}, in)
}

// record returns the agent's record of a transaction, making it on first contact.
func (a *Agent) record(id TrID, start SecKey, in Data) *Tx {
	if t := a.S.Txs[id]; t != nil {
		return t
	}
	t := &Tx{ID: id, Start: start, Input: in, Own: map[string]*Own{}, Known: map[string]Status{}}
	for _, k := range a.O.Graph(start).Sections {
		if k.Agent == a.S.Name {
			t.Own[k.St] = &Own{}
		}
	}
	a.S.Txs[id] = t
	return t
}

// request: a section's request arrives (SG-2 step 4).
func (a *Agent) request(m Req) {
	a.hear(m.From.Agent)
	if a.O.Graph(m.Start) == nil {
		return
	}
	t := a.record(m.Tr, m.Start, m.Input)
	a.reply(m.From.Agent, Ack{Tr: m.Tr, Sec: m.Sec, Req: true, Join: a.joinFrom(t, m.Sec, m.From)})
	if m.From != (SecKey{}) {
		a.learn(t, m.From, Processed)
	}
	a.arrive(t, m.Sec, m.From, m.Data)
}

// arrive handles the request for own section k from predecessor from.
func (a *Agent) arrive(t *Tx, k SecKey, from SecKey, data Data) {
	o := t.Own[k.St]
	if o == nil {
		return
	}
	if !a.runs(o.State) {
		if o.State == Null {
			// SG-3: the transaction stopped before this section ran (abort made it
			// null); a late request (a delayed message, a re-send) must not run it.
			a.out.Cover(ruleLate)
			a.out.Observe(ObsLate, Late{Tr: t.ID, Sec: k})
			return
		}
		// SG-P3: a redelivered request runs nothing twice.
		a.out.Cover(ruleDuplicate)
		a.out.Observe(ObsDuplicate, Duplicate{Tr: t.ID, Sec: k, State: o.State})
		return
	}
	if from != (SecKey{}) && !slices.Contains(o.Got, from) {
		o.Got = append(o.Got, from)
	}
	g := a.O.Graph(t.Start)
	for _, p := range g.Preds[k] {
		if !slices.Contains(o.Got, p) {
			// A join: wait for every predecessor's request.
			a.out.Cover(ruleJoinWait)
			o.State, o.In = Processing, data
			a.persist(t)
			return
		}
	}
	if len(g.Preds[k]) > 1 {
		a.out.Cover(ruleJoinRun)
	}
	a.run(t, k, o, data)
}

// run executes the section's incoming action (SG-2 step 4) and passes its output on
// (step 5), or starts the compensation flow if it fails (SG-3 step 1-2).
func (a *Agent) run(t *Tx, k SecKey, o *Own, data Data) {
	sec := a.O.Conf.Section(k)
	o.In = data
	outData, ok, why := a.call(t, k, sec.Incoming, data, false)
	if !ok {
		a.out.Cover(ruleFail)
		o.State = Failed
		t.Known[k.String()] = Failed
		a.out.Observe(ObsSection, SectionEv{Tr: t.ID, Sec: k, State: Failed, Why: why})
		a.abort(t, "section "+k.String()+" failed: "+why)
		a.notify(t, k, Failed, false)
		a.progress(t)
		return
	}
	a.out.Cover(ruleRun)
	o.State, o.Out = Processed, outData
	a.learn(t, k, Processed)
	g := a.O.Graph(t.Start)
	ends := slices.Contains(g.Ends, k)
	if ends {
		a.out.Cover(ruleEnd)
	}
	a.out.Observe(ObsSection, SectionEv{Tr: t.ID, Sec: k, State: Processed, EndsSt: ends})
	a.notify(t, k, Processed, ends)
	if !t.Aborted {
		a.forward(t, k, outData)
	}
	a.progress(t)
}

// call runs a service action and records its call and return (SG-P5).
func (a *Agent) call(t *Tx, k SecKey, action string, in Data, comp bool) (Data, bool, string) {
	a.db.m = a.S.DB
	svc := a.O.Services[a.S.Name]
	c := Call{Agent: a.S.Name, Tr: t.ID, Sec: k, Action: action, In: in, Comp: comp}
	a.out.Observe(ObsCall, c)
	out, ok, why := svc.Call(&a.db, action, in)
	a.out.Observe(ObsReturn, Return{Call: c, Out: out, Ok: ok, Why: why})
	return out, ok, why
}

// forward sends the section's output to the next sections (SG-2 step 5).
func (a *Agent) forward(t *Tx, k SecKey, data Data) {
	succs := a.O.Graph(t.Start).Succs[k]
	if len(succs) > 1 {
		a.out.Cover(ruleParallel)
	}
	for _, n := range succs {
		if t.Known[n.String()] != Pendant && t.Known[n.String()] != Processing {
			continue
		}
		m := Req{Tr: t.ID, Start: t.Start, Input: t.Input, Sec: n, From: k, Data: data}
		if n.Agent == a.S.Name {
			a.out.Cover(ruleNextLocal)
			a.arrive(t, n, k, data)
			continue
		}
		a.out.Cover(ruleNext)
		a.send(n.Agent, reqKey(n.Agent, t.ID, n, a.joinFrom(t, n, k)), m)
	}
}

// notify tells every other participant what became of section k (SG-2 step 6 for a
// sub-transaction's end, SG-3 steps 2 and 4).
func (a *Agent) notify(t *Tx, k SecKey, s Status, ends bool) {
	if a.O.EndNotices && s == Processed && !slices.Contains(a.O.Graph(t.Start).Ends, k) {
		a.persist(t)
		return
	}
	for _, p := range a.O.Graph(t.Start).Agents {
		if p != a.S.Name {
			a.send(p, pkey(p, "note", t.ID, k, s), Note{From: a.S.Name, Tr: t.ID, Start: t.Start, Input: t.Input, Sec: k, Status: s, EndsSt: ends})
		}
	}
	a.persist(t)
}

func (a *Agent) notifyAbort(t *Tx) {
	for _, p := range a.O.Graph(t.Start).Agents {
		if p != a.S.Name {
			a.send(p, pkey(p, "note", t.ID, SecKey{}, Failed), Note{From: a.S.Name, Tr: t.ID, Start: t.Start, Input: t.Input, Status: Failed, Abort: true})
		}
	}
}

// note: another agent's notice.
func (a *Agent) note(m Note) {
	if a.O.Graph(m.Start) == nil {
		return
	}
	from := m.From
	a.hear(from)
	t := a.record(m.Tr, m.Start, m.Input)
	a.reply(from, Ack{Tr: m.Tr, Sec: m.Sec, Status: m.Status, Abort: m.Abort, Decision: m.Decision})
	if m.Decision == Committed {
		// The initiator's commit decision: every section was processed.
		if t.Outcome == Running {
			a.out.Cover(ruleCommitted)
		}
		for _, k := range a.O.Graph(t.Start).Sections {
			t.Known[k.String()] = Processed
		}
		a.decide(t, Committed)
		return
	}
	if m.Abort {
		if !t.Aborted && t.Outcome != Committed {
			a.out.Cover(ruleAbortNote)
			a.abort(t, "aborted by "+from)
		}
		a.progress(t)
		a.persist(t)
		return
	}
	switch m.Status {
	case Processed:
		a.out.Cover(ruleNotice)
	case ProcessedCompensation, Null:
		a.out.Cover(ruleUndone)
	}
	a.learn(t, m.Sec, m.Status)
	if m.Status == Failed && !t.Aborted {
		// SG-3 step 2: the stop message.
		a.out.Cover(ruleStop)
		a.abort(t, "section "+m.Sec.String()+" failed")
	}
	a.progress(t)
	a.persist(t)
}

// learn records what became of a section. A processed section's predecessors were
// processed too (a section runs only on its predecessors' requests): knowing it
// spares waiting for their own notices.
func (a *Agent) learn(t *Tx, k SecKey, s Status) {
	if rank(s) > rank(t.Known[k.String()]) {
		t.Known[k.String()] = s
	}
	if s != Processed && s != ProcessedCompensation {
		return
	}
	g := a.O.Graph(t.Start)
	stack := slices.Clone(g.Preds[k])
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if rank(t.Known[p.String()]) < rank(Processed) {
			t.Known[p.String()] = Processed
			stack = append(stack, g.Preds[p]...)
		}
	}
}

// rank orders section states as they progress (a late notice never moves one back).
func rank(s Status) int {
	switch s {
	case Pendant:
		return 0
	case Processing:
		return 1
	case Processed, Failed, Null:
		return 2
	}
	return 3
}

// ---- SG-3 compensation flow ----

// abort stops the transaction at this agent: sections that never ran become null
// (compensating them is a recorded no-op), processed ones are compensated in reverse
// order as progress finds them ready.
func (a *Agent) abort(t *Tx, why string) {
	t.Aborted, t.Why = true, why
	a.out.Observe(ObsAbort, AbortEv{Tr: t.ID, Agent: a.S.Name, Why: why})
	for _, st := range sortedKeys(t.Own) {
		o := t.Own[st]
		k := SecKey{a.S.Name, st}
		if (o.State == Pendant || o.State == Processing) && !a.compensates(o.State) {
			a.out.Cover(ruleNull)
			o.State = Null
			t.Known[k.String()] = Null
			a.out.Observe(ObsSection, SectionEv{Tr: t.ID, Sec: k, State: Null})
			a.notify(t, k, Null, false)
		}
	}
	a.persist(t)
}

// progress compensates what is due and decides the outcome once (SG-2 step 7, SG-3
// step 5).
func (a *Agent) progress(t *Tx) {
	g := a.O.Graph(t.Start)
	if t.Aborted {
		for again := true; again; {
			again = false
			// Reverse topological order: a section is compensated only after every
			// section after it is settled (SG-3 step 3; for parallel branches, the
			// reverse of the dependency order). A section of an agent gone past its
			// grace period does not hold the others up (SG-4): it is cleaned up when
			// its agent comes back.
			for i := len(g.Sections) - 1; i >= 0; i-- {
				k := g.Sections[i]
				o := t.Own[k.St]
				if k.Agent != a.S.Name || o == nil || o.State.settled() || !a.compensates(o.State) {
					continue
				}
				ready, gone := true, false
				for _, n := range g.Succs[k] {
					if !t.Known[n.String()].settled() {
						if a.S.Gone[n.Agent] {
							gone = true
						} else {
							ready = false
						}
					}
				}
				if !a.ready(t, k, ready) {
					a.out.Cover(ruleReverse)
					continue
				}
				if ready && gone {
					a.out.Cover(ruleNoWait)
				}
				a.compensate(t, k, o)
				again = true
			}
		}
	}
	if t.Outcome != Running {
		return
	}
	all := true
	for _, k := range g.Sections {
		s := t.Known[k.String()]
		if (t.Aborted && !s.settled()) || (!t.Aborted && s != Processed) {
			all = false
		}
	}
	if !all {
		return
	}
	if t.Aborted {
		a.out.Cover(ruleEnded)
		a.decide(t, Compensated)
		return
	}
	// Only the initiator decides a commit (and tells the others): an abort for a lost
	// agent is the initiator's too (graceOver), so the two never cross; an abort for
	// a failed section needs no decider (a failed section can never be processed).
	if a.S.Name != t.ID.Init {
		return
	}
	a.out.Cover(ruleCommit)
	a.decide(t, Committed)
	for _, p := range g.Agents {
		if p != a.S.Name {
			a.send(p, pkey(p, "decision", t.ID, SecKey{}, 0), Note{From: a.S.Name, Tr: t.ID, Start: t.Start, Input: t.Input, Decision: Committed})
		}
	}
}

// decide records the transaction's outcome at this agent, once.
func (a *Agent) decide(t *Tx, o Outcome) {
	if t.Outcome != Running {
		return
	}
	t.Outcome = o
	a.out.Observe(ObsOutcome, OutcomeEv{Tr: t.ID, Agent: a.S.Name, Outcome: o})
	a.persist(t)
}

// compensate runs a processed section's compensation action with its output data
// (SG-3 step 3) and tells the others (step 4).
func (a *Agent) compensate(t *Tx, k SecKey, o *Own) {
	a.out.Cover(ruleCompensate)
	sec := a.O.Conf.Section(k)
	_, ok, why := a.call(t, k, sec.Compensation, o.Out, true)
	if !ok {
		// A compensation must not fail (the services' compensations are total on
		// what their action did); if it does, it is reported and not retried.
		a.out.Observe(ObsCompFailed, SectionEv{Tr: t.ID, Sec: k, State: o.State, Why: why})
	}
	o.State = ProcessedCompensation
	t.Known[k.String()] = ProcessedCompensation
	a.out.Observe(ObsSection, SectionEv{Tr: t.ID, Sec: k, State: ProcessedCompensation})
	a.notify(t, k, ProcessedCompensation, false)
}

// ---- messages: acknowledgements, re-sends, pauses ----

func pkey(to, kind string, tr TrID, k SecKey, s Status) string {
	return fmt.Sprintf("%s|%s|%s|%s|%d", to, kind, tr, k, s)
}

// reqKey keys the request for section k (from predecessor join, when k is a join).
func reqKey(to string, tr TrID, k SecKey, join string) string {
	key := pkey(to, "req", tr, k, 0)
	if join != "" {
		key += "|" + join
	}
	return key
}

// joinFrom names predecessor from when k is a join (its requests are told apart),
// and is empty otherwise.
func (a *Agent) joinFrom(t *Tx, k, from SecKey) string {
	if len(a.O.Graph(t.Start).Preds[k]) > 1 {
		return from.String()
	}
	return ""
}

// send sends m and keeps it until it is acknowledged; to an agent thought lost it is
// only kept: the transaction pauses there (SG-4) until the agent reconnects.
func (a *Agent) send(to, key string, m sim.Message) {
	a.S.Pending[key] = pend{To: to, Msg: m}
	if a.S.View[to].Lost {
		a.out.Cover(rulePause)
		return
	}
	a.out.Send(a.O.ids[to], m)
	a.armRetry()
}

func (a *Agent) reply(to string, m sim.Message) { a.out.Send(a.O.ids[to], m) }

func (a *Agent) armRetry() {
	if a.O.Retry > 0 {
		a.out.SetTimer("retry", a.O.Retry)
	}
}

// flush re-sends everything pending to one agent (it reconnected or restarted), and
// keeps re-sending it until acknowledged: a flush can be lost too (a link cut again
// as it goes out).
func (a *Agent) flush(to string) {
	sent := false
	for _, k := range sortedKeys(a.S.Pending) {
		if p := a.S.Pending[k]; p.To == to {
			a.out.Send(a.O.ids[to], p.Msg)
			sent = true
		}
	}
	if sent {
		a.armRetry()
	}
}

func (a *Agent) timer(id string) {
	switch {
	case id == "retry":
		any := false
		for _, k := range sortedKeys(a.S.Pending) {
			p := a.S.Pending[k]
			if !a.S.View[p.To].Lost {
				a.out.Send(a.O.ids[p.To], p.Msg)
				any = true
			}
		}
		if any {
			a.out.Cover(ruleRetry)
		}
		if any || len(a.S.Pending) > 0 {
			a.armRetry()
		}
	case id == "beat":
		a.tick()
	case strings.HasPrefix(id, "grace/"):
		a.graceOver(strings.TrimPrefix(id, "grace/"))
	}
}
