package sim

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"slices"
	"time"
)

// TraceFormat is the format version written in every trace header.
const TraceFormat = "simrun-trace/1"

// TraceRecord is one line of a trace: one event and everything it caused. Both engines
// (simulator and model checker) write the same records.
type TraceRecord struct {
	I    int64  `json:"i"`
	T    Time   `json:"t"`
	Ev   string `json:"ev"` // start restart recv timer inject lost crash partition cut heal spike skew burst
	Node string `json:"node,omitempty"`
	// Local is the node's clock reading for handler events.
	Local *Time  `json:"local,omitempty"`
	From  string `json:"from,omitempty"`
	Kind  string `json:"kind,omitempty"`
	Msg   any    `json:"msg,omitempty"`
	Timer string `json:"timer,omitempty"`
	// Why explains a lost message or describes a fault.
	Why string        `json:"why,omitempty"`
	Out []TraceEffect `json:"out,omitempty"`
}

// TraceEffect is one effect of a handler call.
type TraceEffect struct {
	Op    string        `json:"op"` // send set cancel store delete obs
	To    string        `json:"to,omitempty"`
	Kind  string        `json:"kind,omitempty"`
	Msg   any           `json:"msg,omitempty"`
	At    Time          `json:"at,omitempty"`   // send: scheduled delivery time
	Lost  string        `json:"lost,omitempty"` // send: dropped at once, and why
	Dup   bool          `json:"dup,omitempty"`  // send: this copy is a duplicate
	Timer string        `json:"timer,omitempty"`
	After time.Duration `json:"after,omitempty"`
	Key   string        `json:"key,omitempty"`
	Value any           `json:"value,omitempty"`
}

// TraceFooter closes a trace: counts and the hash of every event line.
type TraceFooter struct {
	End       string `json:"end"`
	Events    int64  `json:"events"`
	Time      Time   `json:"time"`
	Sent      int64  `json:"sent"`
	Delivered int64  `json:"delivered"`
	Lost      int64  `json:"lost"`
	Lines     int64  `json:"lines"`
	Hash      string `json:"hash"`
}

// Tracer receives trace records from an engine.
type Tracer interface {
	Record(r *TraceRecord)
	End(f *TraceFooter)
}

// TraceWriter writes a trace as JSON Lines: a header line (written by the caller
// through Header), one line per record, and a footer with the SHA-256 of the record
// lines. Encoding errors are kept and returned by Err; the first one wins.
type TraceWriter struct {
	w     *bufio.Writer
	h     hash.Hash
	lines int64
	err   error
}

// NewTraceWriter returns a writer on w.
func NewTraceWriter(w io.Writer) *TraceWriter {
	return &TraceWriter{w: bufio.NewWriterSize(w, 1<<16), h: sha256.New()}
}

// Header writes the header line (any JSON-encodable value).
func (t *TraceWriter) Header(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("sim: trace header: %w", err)
	}
	t.write(b)
	return t.err
}

func (t *TraceWriter) write(b []byte) {
	if t.err != nil {
		return
	}
	if _, err := t.w.Write(b); err != nil {
		t.err = err
		return
	}
	if err := t.w.WriteByte('\n'); err != nil {
		t.err = err
	}
}

// Record writes one event line.
func (t *TraceWriter) Record(r *TraceRecord) {
	b, err := json.Marshal(r)
	if err != nil {
		if t.err == nil {
			t.err = fmt.Errorf("sim: trace line %d (%s at %s): %w", r.I, r.Ev, r.Node, err)
		}
		return
	}
	t.h.Write(b)
	t.h.Write([]byte{'\n'})
	t.lines++
	t.write(b)
}

// End writes the footer (filling Lines and Hash) and flushes.
func (t *TraceWriter) End(f *TraceFooter) {
	f.Lines = t.lines
	f.Hash = "sha256:" + hex.EncodeToString(t.h.Sum(nil))
	b, err := json.Marshal(f)
	if err != nil && t.err == nil {
		t.err = err
	}
	t.write(b)
	if err := t.w.Flush(); err != nil && t.err == nil {
		t.err = err
	}
}

// Err returns the first error met while writing.
func (t *TraceWriter) Err() error { return t.err }

// RecordCollector keeps records in memory (tests, Mermaid rendering).
type RecordCollector struct {
	Records []TraceRecord
	Footer  *TraceFooter
	// Limit, when > 0, keeps only the first Limit records (a report of a run of ten
	// million events must not hold them all); Dropped counts the rest.
	Limit   int
	Dropped int64
}

// Record implements Tracer.
func (c *RecordCollector) Record(r *TraceRecord) {
	if c.Limit > 0 && len(c.Records) >= c.Limit {
		c.Dropped++
		return
	}
	rr := *r
	rr.Out = slices.Clone(r.Out)
	if r.Local != nil {
		l := *r.Local
		rr.Local = &l
	}
	c.Records = append(c.Records, rr)
}

// End implements Tracer.
func (c *RecordCollector) End(f *TraceFooter) { ff := *f; c.Footer = &ff }

// Tee sends records to every tracer.
type Tee []Tracer

// Record implements Tracer.
func (t Tee) Record(r *TraceRecord) {
	for _, x := range t {
		x.Record(r)
	}
}

// End implements Tracer.
func (t Tee) End(f *TraceFooter) {
	for _, x := range t {
		x.End(f)
	}
}
