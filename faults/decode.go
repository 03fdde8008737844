package faults

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of a plan file. They are far above anything a simulated run needs and keep a
// hostile or mistaken file from running away with memory or virtual time.
const (
	// MaxPlanBytes is the largest plan file Parse reads.
	MaxPlanBytes = 4 << 20
	// MaxEvents is the most entries a plan may hold.
	MaxEvents = 100_000
	// MaxAt is the latest time ("at") an entry may have, and the longest "for".
	MaxAt = 24 * time.Hour
	// MaxMagnitude bounds "extra" and the size of a clock "step".
	MaxMagnitude = time.Hour
	// MaxDriftPPM bounds |drift_ppm| (a clock running 1.5× or 0.5× real speed).
	MaxDriftPPM = 500_000
	// MaxName is the longest node name, in bytes.
	MaxName = 256
)

// fieldsOf lists, for each kind, the fields an entry of that kind may carry ("at" and
// "kind" are required of every entry and not listed). A field of another kind is an
// error: it would otherwise be silently ignored.
var fieldsOf = map[string][]string{
	"crash":      {"node"},
	"crash-send": {"node", "for"},
	"restart":    {"node"},
	"partition":  {"groups"},
	"cut":        {"from", "to"},
	"restore":    {"from", "to"},
	"heal":       {},
	"spike":      {"from", "to", "extra", "for"},
	"skew":       {"node", "step", "drift_ppm"},
	"burst":      {"loss", "dup", "for"},
}

// kv is one member of a JSON object, in document order.
type kv struct {
	key string
	val any // string, json.Number, bool, nil, []any, []kv
}

// Parse reads a plan from JSON under strict rules, so that a mistaken file is an error
// rather than a different plan:
//   - the file is UTF-8 without a byte-order mark, at most MaxPlanBytes, and holds one
//     JSON object whose only member is "events", an array ({"events": []} is the
//     explicit empty plan; null, a bare array or anything after the object is refused);
//   - no object has a key twice;
//   - every entry has "at" and "kind"; times and durations are strings in Go's syntax
//     ("1.5s", "-20ms" for a step), never bare numbers; an entry carries only the
//     fields of its kind (see the package doc);
//   - magnitudes are bounded: at and for ≤ MaxAt, extra and |step| ≤ MaxMagnitude,
//     |drift_ppm| ≤ MaxDriftPPM, node names ≤ MaxName bytes, at most MaxEvents entries.
//
// Errors are one line: a position (line and column) for malformed JSON, or the entry
// and field, as Validate reports them; offending values are shortened before they are
// echoed. Validation against a system's node names is Validate's job.
func Parse(b []byte) (Plan, error) {
	if len(b) > MaxPlanBytes {
		return Plan{}, fmt.Errorf("faults: plan is %d bytes, more than the limit of %d", len(b), MaxPlanBytes)
	}
	if bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
		return Plan{}, errors.New("faults: the plan starts with a UTF-8 byte-order mark; save it as plain UTF-8")
	}
	if !utf8.Valid(b) {
		return Plan{}, errors.New("faults: the plan is not valid UTF-8")
	}
	if off := loneSurrogate(b); off >= 0 {
		// encoding/json would turn it into U+FFFD silently: a name would not match
		return Plan{}, fmt.Errorf("faults: %s: \\u escape of a lone UTF-16 surrogate", position(b, off))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	root, err := readValue(dec, b, 0)
	if err != nil {
		return Plan{}, err
	}
	if off := dec.InputOffset(); skipSpace(b, off, false) < int64(len(b)) {
		return Plan{}, fmt.Errorf("faults: %s: trailing data after the plan", position(b, skipSpace(b, off, false)))
	}
	obj, ok := root.([]kv)
	if !ok {
		return Plan{}, fmt.Errorf(`faults: a plan is an object {"events": [...]}, not %s`, describe(root))
	}
	var events []any
	found := false
	for _, m := range obj {
		if m.key != "events" {
			return Plan{}, fmt.Errorf(`faults: unknown top-level field %s (a plan has only "events")`, short(m.key))
		}
		found = true
		if events, ok = m.val.([]any); !ok {
			return Plan{}, fmt.Errorf(`faults: "events" must be an array, not %s`, describe(m.val))
		}
	}
	if !found {
		return Plan{}, errors.New(`faults: missing "events" (write {"events": []} for a plan without faults)`)
	}
	if len(events) > MaxEvents {
		return Plan{}, fmt.Errorf("faults: %d entries, more than the limit of %d", len(events), MaxEvents)
	}
	p := Plan{Events: make([]Event, 0, len(events))}
	for i, v := range events {
		e, err := readEvent(i, v)
		if err != nil {
			return Plan{}, err
		}
		p.Events = append(p.Events, e)
	}
	return p, nil
}

// readValue reads one JSON value into the generic tree, refusing duplicate keys.
func readValue(dec *json.Decoder, src []byte, depth int) (any, error) {
	if depth > 16 {
		return nil, fmt.Errorf("faults: %s: nested too deeply", position(src, dec.InputOffset()))
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(src, dec, err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var obj []kv
			seen := map[string]bool{}
			for dec.More() {
				off := skipSpace(src, dec.InputOffset(), true)
				kt, err := dec.Token()
				if err != nil {
					return nil, syntaxError(src, dec, err)
				}
				key := kt.(string) // the decoder only yields string keys inside an object
				if seen[key] {
					return nil, fmt.Errorf("faults: %s: key %s appears twice in one object", position(src, off), short(key))
				}
				seen[key] = true
				v, err := readValue(dec, src, depth+1)
				if err != nil {
					return nil, err
				}
				obj = append(obj, kv{key, v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxError(src, dec, err)
			}
			if obj == nil {
				obj = []kv{}
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := readValue(dec, src, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxError(src, dec, err)
			}
			return arr, nil
		}
	}
	return tok, nil
}

func syntaxError(src []byte, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("faults: %s: not valid JSON", position(src, se.Offset))
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("faults: %s: the plan ends early (truncated file?)", position(src, int64(len(src))))
	}
	return fmt.Errorf("faults: %s: not valid JSON", position(src, dec.InputOffset()))
}

// skipSpace returns the offset of the first byte at or after off that is not JSON
// white space (nor, with comma, a separating comma).
func skipSpace(src []byte, off int64, comma bool) int64 {
	for off < int64(len(src)) {
		switch src[off] {
		case ' ', '\t', '\r', '\n':
		case ',':
			if !comma {
				return off
			}
		default:
			return off
		}
		off++
	}
	return off
}

// position turns a byte offset into "line L, column C".
// loneSurrogate returns the offset of the first \u escape of a UTF-16 surrogate that is
// not a high surrogate followed by a low one, or -1. (Backslashes occur only inside
// JSON strings, so the bytes can be scanned without parsing.)
func loneSurrogate(b []byte) int64 {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range b[i+2 : i+6] {
			switch {
			case c >= '0' && c <= '9':
				r = r<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // an escaped character (\\, \", …): skip it
			continue
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if lo, ok := hex4(i + 6); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				i += 11
				continue
			}
			return int64(i)
		case r >= 0xDC00 && r <= 0xDFFF:
			return int64(i)
		}
		i += 5
	}
	return -1
}

func position(src []byte, off int64) string {
	off = min(max(off, 0), int64(len(src)))
	before := src[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return fmt.Sprintf("line %d, column %d", line, col)
}

// describe names a JSON value's type for an error.
func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + short(string(t))
	case string:
		return "the string " + short(t)
	case []any:
		return "an array"
	case []kv:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// short quotes s, cut to 40 runes, so that an error line stays one short line.
func short(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return strconv.Quote(s)
	}
	r := []rune(s)
	return strconv.Quote(string(r[:40])) + fmt.Sprintf("… (%d bytes)", len(s))
}

func readEvent(i int, v any) (Event, error) {
	var e Event
	obj, ok := v.([]kv)
	if !ok {
		return e, &ValidationError{Entry: i, Field: "", Msg: "an entry must be an object, not " + describe(v)}
	}
	// The kind first, so every later error can name it.
	for _, m := range obj {
		if m.key == "kind" {
			s, ok := m.val.(string)
			if !ok {
				return e, &ValidationError{Entry: i, Field: "kind", Msg: "must be a string, not " + describe(m.val)}
			}
			e.Kind = s
		}
	}
	bad := func(field, format string, a ...any) error {
		return &ValidationError{Entry: i, Kind: e.Kind, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	allowed, known := fieldsOf[e.Kind]
	switch {
	case e.Kind == "":
		return e, bad("kind", "missing kind (one of %s)", strings.Join(Kinds, ", "))
	case !known:
		return e, bad("kind", "unknown kind %s (one of %s)", short(e.Kind), strings.Join(Kinds, ", "))
	}
	hasAt := false
	for _, m := range obj {
		var err error
		switch {
		case m.key == "kind":
			continue
		case m.key == "at":
			hasAt = true
			e.At, err = duration(m.val, 0, MaxAt)
		case !contains(allowed, m.key):
			if contains([]string{"node", "groups", "from", "to", "extra", "for", "step", "drift_ppm", "loss", "dup"}, m.key) {
				return e, bad(m.key, "does not belong to a %s entry (its fields: %s)", e.Kind, fieldList(allowed))
			}
			return e, bad(m.key, "unknown field (a %s entry has: %s)", e.Kind, fieldList(allowed))
		case m.key == "node":
			e.Node, err = name(m.val)
		case m.key == "from":
			e.From, err = name(m.val)
		case m.key == "to":
			e.To, err = name(m.val)
		case m.key == "groups":
			e.Groups, err = groups(m.val)
		case m.key == "extra":
			e.Extra, err = duration(m.val, 0, MaxMagnitude)
		case m.key == "for":
			e.For, err = duration(m.val, 0, MaxAt)
		case m.key == "step":
			e.Step, err = duration(m.val, -MaxMagnitude, MaxMagnitude)
		case m.key == "drift_ppm":
			var d int64
			d, err = integer(m.val, -MaxDriftPPM, MaxDriftPPM)
			e.DriftPPM = &d
		case m.key == "loss":
			e.Loss, err = probability(m.val)
		case m.key == "dup":
			e.Dup, err = probability(m.val)
		}
		if err != nil {
			return e, bad(m.key, "%v", err)
		}
	}
	if !hasAt {
		return e, bad("at", `missing time (e.g. "at": "1s")`)
	}
	return e, nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func fieldList(fs []string) string {
	return strings.Join(append([]string{"at", "kind"}, fs...), ", ")
}

func duration(v any, lo, hi time.Duration) (Duration, error) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf(`a duration is a string such as "1.5s", not %s`, describe(v))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf(`%s is not a duration (e.g. "1.5s", "20ms")`, short(s))
	}
	if d < lo || d > hi {
		if lo == 0 {
			return 0, fmt.Errorf("%v is outside [0, %v]", d, hi)
		}
		return 0, fmt.Errorf("%v is outside [%v, %v]", d, lo, hi)
	}
	return Duration(d), nil
}

func name(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("a node name is a string, not %s", describe(v))
	}
	if len(s) > MaxName {
		return "", fmt.Errorf("node name %s is longer than %d bytes", short(s), MaxName)
	}
	return s, nil
}

func groups(v any) ([][]string, error) {
	outer, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf(`groups are an array of arrays of node names ([["a","b"],["c"]]), not %s`, describe(v))
	}
	gs := make([][]string, 0, len(outer))
	for _, g := range outer {
		inner, ok := g.([]any)
		if !ok {
			return nil, fmt.Errorf("a group is an array of node names, not %s", describe(g))
		}
		ns := make([]string, 0, len(inner))
		for _, n := range inner {
			s, err := name(n)
			if err != nil {
				return nil, err
			}
			ns = append(ns, s)
		}
		gs = append(gs, ns)
	}
	return gs, nil
}

func integer(v any, lo, hi int64) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("want a whole number, not %s", describe(v))
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || i < lo || i > hi {
		return 0, fmt.Errorf("%s is not a whole number in [%d, %d]", short(string(n)), lo, hi)
	}
	return i, nil
}

func probability(v any) (float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("a probability is a number in [0, 1], not %s", describe(v))
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
		return 0, fmt.Errorf("probability %s not in [0, 1]", short(string(n)))
	}
	return f, nil
}
