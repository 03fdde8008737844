package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/simrun-dev/simrun/sim"
)

// TraceEngine is the "engine" value in the header of every trace the model checker
// writes; `simrun replay` dispatches on it.
const TraceEngine = "model"

// TraceHeader is the first line of a model-checker trace: everything Replay needs.
type TraceHeader struct {
	Format string `json:"format"`
	Engine string `json:"engine"`
	// Scenario is the model's registered name (the key `simrun replay` prints).
	Scenario string            `json:"scenario"`
	Seed     uint64            `json:"seed"`
	Params   map[string]string `json:"params"`
	// Property and Kind name what the trace shows (a counterexample of an always or
	// eventually property, or the witness of a sometimes property).
	Property string `json:"property"`
	Kind     Kind   `json:"kind"`
	Strategy string `json:"strategy"`
	// Cycle marks a lasso (PropertyResult.Cycle): the fair cycle of an eventually
	// counterexample returns to state Cycle-1.
	Cycle int `json:"cycle,omitempty"`
	// Fairness is the assumption a lasso was found under: "weak" (also when empty) or
	// "none" (every cycle admissible). Replay re-checks the cycle under it.
	Fairness string `json:"fairness,omitempty"`
}

func (c *checker[S]) initRecs(s S) []sim.TraceRecord {
	if c.sp.record != nil {
		return c.sp.record.initRecords(s)
	}
	return []sim.TraceRecord{{Ev: "init", Msg: c.describeState(s)}}
}

func (c *checker[S]) stepRec(s S, a Action, t S) sim.TraceRecord {
	if c.sp.record != nil {
		return c.sp.record.stepRecord(s, a, t)
	}
	return sim.TraceRecord{Ev: "step", Kind: c.actionName(a), Msg: c.describeState(t)}
}

func (c *checker[S]) actionName(a Action) string {
	if c.sp.ActionName != nil {
		return c.sp.ActionName(a)
	}
	return fmt.Sprintf("action-%d", uint64(a))
}

func (c *checker[S]) describeState(s S) any {
	if c.sp.Describe != nil {
		return c.sp.Describe(s)
	}
	return fmt.Sprintf("%v", s)
}

func number(recs []sim.TraceRecord, from int) {
	for i := range recs {
		recs[i].I = int64(from + i)
	}
}

func (c *checker[S]) trace(p *path) ([]sim.TraceRecord, error) {
	c.setup()
	states, acts, err := c.walk(p)
	if err != nil {
		return nil, err
	}
	recs := c.initRecs(states[0])
	for i, a := range acts {
		recs = append(recs, c.stepRec(states[i], a, states[i+1]))
	}
	number(recs, 0)
	return recs, nil
}

func (c *checker[S]) describe(p *path) ([]string, error) {
	recs, err := c.trace(p)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(recs))
	for i := range recs {
		out[i] = summarize(&recs[i])
	}
	return out, nil
}

// verdict re-evaluates, on the path's states, what a trace of property prop shows.
func (c *checker[S]) verdict(p *path, prop string) (string, error) {
	c.setup()
	states, _, err := c.walk(p)
	if err != nil {
		return "", err
	}
	last := states[len(states)-1]
	for _, pr := range c.sp.Properties {
		if pr.Name != prop {
			continue
		}
		switch pr.Kind {
		case AlwaysKind:
			if !pr.Check(last) {
				return "violation of always " + prop, nil
			}
			return "always " + prop + " holds at the end of this path", nil
		case SometimesKind:
			if pr.Check(last) {
				return "witness of sometimes " + prop, nil
			}
			return "no witness of sometimes " + prop + " at the end of this path", nil
		case EventuallyKind:
			if p.cycle > 0 {
				states, acts, err := c.walk(p)
				if err != nil {
					return "", err
				}
				if c.fairVerdict(states, acts, p.cycle-1, pr, !p.nofair) {
					if p.nofair {
						return fmt.Sprintf("violation of eventually %s: a cycle back to state %d where it never holds (no fairness assumed)", prop, p.cycle-1), nil
					}
					return fmt.Sprintf("violation of eventually %s: a fair cycle back to state %d where it never holds", prop, p.cycle-1), nil
				}
				return "eventually " + prop + " is not violated by this path (not a fair cycle)", nil
			}
			held := false
			for _, s := range states {
				held = held || pr.Check(s)
			}
			_, next := c.successors(last)
			if !held && len(next) == 0 && c.expandable(last) {
				return "violation of eventually " + prop, nil
			}
			return "eventually " + prop + " is not violated by this path", nil
		}
	}
	return "", fmt.Errorf("model %s has no property %q", c.sp.Name, prop)
}

// replay re-executes a trace's record lines: at each step it takes the successor whose
// record is byte-identical to the file's line, or, if none is, the first successor of
// the same kind of event (its record shows the difference) and stops there.
func (c *checker[S]) replay(lines [][]byte) ([]sim.TraceRecord, *path, error) {
	c.setup()
	inits := c.sp.Init()
	if len(inits) == 0 {
		return nil, nil, errors.New("model: no initial state")
	}
	p := &path{}
	var recs []sim.TraceRecord
	for i, s := range inits {
		ir := c.initRecs(s)
		number(ir, 0)
		if matches(ir, lines) {
			p.init, recs = i, ir
			break
		}
	}
	if recs == nil {
		recs = c.initRecs(inits[0])
		number(recs, 0)
		return recs, p, nil
	}
	cur := inits[p.init]
	for pos := len(recs); pos < len(lines); pos++ {
		acts, next := c.successors(cur)
		if len(next) == 0 {
			break
		}
		want := parseRecord(lines[pos])
		pick, pickRec := -1, sim.TraceRecord{}
		for k := range next {
			r := c.stepRec(cur, acts[k], next[k])
			r.I = int64(pos)
			if b, err := json.Marshal(&r); err == nil && bytes.Equal(b, lines[pos]) {
				pick, pickRec = k, r
				break
			}
			if pick < 0 && sameEvent(&r, want) {
				pick, pickRec = -(k + 2), r
			}
		}
		switch {
		case pick >= 0:
			recs = append(recs, pickRec)
			p.steps = append(p.steps, int32(pick))
			cur = next[pick]
			continue
		case pick < -1:
			recs = append(recs, pickRec)
		default:
			r := c.stepRec(cur, acts[0], next[0])
			r.I = int64(pos)
			recs = append(recs, r)
		}
		break
	}
	return recs, p, nil
}

func matches(recs []sim.TraceRecord, lines [][]byte) bool {
	if len(recs) > len(lines) {
		return false
	}
	for i := range recs {
		b, err := json.Marshal(&recs[i])
		if err != nil || !bytes.Equal(b, lines[i]) {
			return false
		}
	}
	return true
}

func parseRecord(line []byte) *sim.TraceRecord {
	var r sim.TraceRecord
	if json.Unmarshal(line, &r) != nil {
		return nil
	}
	return &r
}

func sameEvent(a, b *sim.TraceRecord) bool {
	return b != nil && a.Ev == b.Ev && a.Node == b.Node && a.From == b.From && a.Kind == b.Kind && a.Timer == b.Timer
}

// Replay re-executes a model-checker trace against sys and returns the trace it
// produces now: the header line as it is, one record per step (each step is the
// successor whose record matches the file's line), and a footer whose End is
// re-evaluated on the re-executed path. Comparing the result with data line by line
// (simrun replay) shows whether the counterexample still happens, and where it departs.
func Replay(sys System, data []byte) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, &InternalError{Value: p, Stack: string(debug.Stack())}
		}
	}()
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) < 2 {
		return nil, errors.New("model: trace has no records")
	}
	var h TraceHeader
	if err := json.Unmarshal(lines[0], &h); err != nil {
		return nil, fmt.Errorf("model: trace header: %v", err)
	}
	if h.Format != sim.TraceFormat || h.Engine != TraceEngine {
		return nil, fmt.Errorf("model: not a model-checker trace (format %q, engine %q)", h.Format, h.Engine)
	}
	body := lines[1:]
	if n := len(body); n > 0 && !bytes.Contains(body[n-1], []byte(`"ev":`)) {
		body = body[:n-1] // footer
	}
	r, err := sys.compile()
	if err != nil {
		return nil, err
	}
	recs, p, err := r.replay(body)
	if err != nil {
		return nil, err
	}
	p.cycle, p.nofair = h.Cycle, h.Fairness == "none"
	end, err := r.verdict(p, h.Property)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeTrace(&buf, json.RawMessage(lines[0]), recs, end); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// summarize renders a record as one short line.
func summarize(r *sim.TraceRecord) string {
	var b strings.Builder
	js := func(v any) string {
		x, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(x)
	}
	switch r.Ev {
	case "init":
		fmt.Fprintf(&b, "init %s", js(r.Msg))
	case "step":
		fmt.Fprintf(&b, "%s -> %s", r.Kind, js(r.Msg))
	case "recv", "inject":
		fmt.Fprintf(&b, "%s %s <- %s %s %s", r.Ev, r.Node, r.From, r.Kind, js(r.Msg))
	case "timer":
		fmt.Fprintf(&b, "timer %s %s", r.Node, r.Timer)
	case "lost", "dup":
		fmt.Fprintf(&b, "%s %s -> %s %s (%s)", r.Ev, r.From, r.Node, r.Kind, r.Why)
	default:
		fmt.Fprintf(&b, "%s %s", r.Ev, r.Node)
		if r.Why != "" {
			fmt.Fprintf(&b, " (%s)", r.Why)
		}
	}
	for _, e := range r.Out {
		switch e.Op {
		case "send":
			fmt.Fprintf(&b, "; send %s %s", e.To, e.Kind)
			if e.Lost != "" {
				fmt.Fprintf(&b, " (lost: %s)", e.Lost)
			}
		case "obs":
			fmt.Fprintf(&b, "; observe %s %s", e.Kind, js(e.Value))
		case "store":
			fmt.Fprintf(&b, "; store %s", e.Key)
		}
	}
	switch r.Ev {
	case "recv", "inject", "timer":
		if r.Why != "" && r.Why != "duplicate" {
			fmt.Fprintf(&b, "; %s", r.Why) // a mid-send crash
		}
	}
	if r.T != 0 {
		fmt.Fprintf(&b, " @%s", r.T)
	}
	return b.String()
}
