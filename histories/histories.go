// Package histories reads operation histories recorded outside simrun and checks them
// for linearizability with porcupine: Jepsen's EDN histories (one map a line:
// {:process 0, :type :invoke, :f :read, :key "k", :value nil}), Jepsen's log lines
// ("INFO  jepsen.util - 3	:invoke	:write	4"), and JSON Lines, documented here:
//
//	{"process": 0, "type": "invoke", "f": "write", "key": "x", "value": 3}
//	{"process": 0, "type": "ok",     "f": "write", "key": "x", "value": 3}
//	{"process": 1, "type": "invoke", "f": "cas",   "key": "x", "value": [3, 4]}
//	{"process": 1, "type": "fail",   "f": "cas",   "key": "x", "value": [3, 4]}
//
// type is invoke, ok (it returned), fail (it did not happen) or info (it may or may
// not have happened: it stays pending, taking effect at any time after its call, or
// never); a process has at most one operation open at a time. Values are integers,
// strings or nil; cas takes [from, to]. The models: register (read, write),
// cas-register (read, write, cas), kv (get, put, append on string values,
// partitioned by key), counter (add, read) and queue (enqueue, dequeue; a failed
// dequeue found the queue empty, as a failed cas did not apply). A malformed line is an error naming the file's line; files
// larger than MaxBytes are refused.
package histories

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxBytes bounds a history (larger ones are refused, not read into memory).
const MaxBytes = 64 << 20

// Event is one line of a history.
type Event struct {
	Line    int
	Process int
	Type    string // invoke, ok, fail, info
	F       string
	Key     string
	Value   Value
}

// Value is a history value: nil, an integer, a string, or a pair (cas).
type Value struct {
	Nil  bool
	Int  int64
	Str  string
	IsS  bool
	Pair []Value
}

func (v Value) String() string {
	switch {
	case v.Nil:
		return "nil"
	case v.IsS:
		return strconv.Quote(v.Str)
	case v.Pair != nil:
		var ps []string
		for _, p := range v.Pair {
			ps = append(ps, p.String())
		}
		return "[" + strings.Join(ps, " ") + "]"
	}
	return strconv.FormatInt(v.Int, 10)
}

// LineError is a malformed line.
type LineError struct {
	File string
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Parse reads a history in the given format ("edn", "jepsen-log", "jsonl", or "" to
// detect it from the first non-blank line).
func Parse(file string, r io.Reader, format string) ([]Event, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, MaxBytes+1), 1<<16)
	var evs []Event
	n, total := 0, 0
	for {
		line, err := br.ReadString('\n')
		total += len(line)
		if total > MaxBytes {
			return nil, &LineError{file, n + 1, fmt.Sprintf("history larger than %d MiB", MaxBytes>>20)}
		}
		if line == "" && err != nil {
			break
		}
		n++
		if n == 1 && strings.HasPrefix(line, "\uFEFF") {
			return nil, &LineError{file, 1, "the history starts with a UTF-8 byte-order mark; save it as plain UTF-8"}
		}
		if !utf8.ValidString(line) {
			return nil, &LineError{file, n, "the line is not valid UTF-8"}
		}
		text := strings.TrimSpace(line)
		if text == "" {
			if err != nil {
				break
			}
			continue
		}
		if format == "" {
			switch {
			case strings.HasPrefix(text, "{:"):
				format = "edn"
			case strings.HasPrefix(text, "{"):
				format = "jsonl"
			case strings.Contains(text, "jepsen.util"):
				format = "jepsen-log"
			default:
				return nil, &LineError{file, n, "unknown history format (want Jepsen EDN, a Jepsen log or JSON Lines)"}
			}
		}
		var ev Event
		var perr error
		switch format {
		case "edn":
			ev, perr = parseEDN(text)
		case "jsonl":
			ev, perr = parseJSON(text)
		case "jepsen-log":
			var ok bool
			ev, ok, perr = parseLog(text)
			if perr == nil && !ok {
				if err != nil {
					break
				}
				continue // other log lines
			}
		default:
			return nil, fmt.Errorf("%s: unknown format %q (want edn, jepsen-log or jsonl)", file, format)
		}
		if perr != nil {
			return nil, &LineError{file, n, perr.Error()}
		}
		if err != nil && !strings.HasSuffix(line, "\n") && format != "jepsen-log" && !strings.HasSuffix(text, "}") {
			return nil, &LineError{file, n, "the history ends in the middle of a line"}
		}
		ev.Line = n
		if !map[string]bool{"invoke": true, "ok": true, "fail": true, "info": true}[ev.Type] {
			return nil, &LineError{file, n, fmt.Sprintf("type %q: want invoke, ok, fail or info", ev.Type)}
		}
		evs = append(evs, ev)
		if err != nil {
			break
		}
	}
	if len(evs) == 0 {
		return nil, &LineError{file, max(n, 1), "no operations"}
	}
	return evs, nil
}

var ednPair = regexp.MustCompile(`:([a-z-]+)\s+("(?:[^"\\]|\\.)*"|\[[^\]]*\]|:?[^\s,}]+)`)

func parseEDN(text string) (Event, error) {
	if !strings.HasPrefix(text, "{") || !strings.HasSuffix(text, "}") {
		return Event{}, fmt.Errorf("not an EDN map")
	}
	var ev Event
	seen := map[string]bool{}
	for _, m := range ednPair.FindAllStringSubmatch(text[1:len(text)-1], -1) {
		k, v := m[1], m[2]
		if seen[k] {
			return ev, fmt.Errorf(":%s appears twice", k)
		}
		seen[k] = true
		switch k {
		case "process":
			p, err := strconv.Atoi(v)
			if err != nil {
				return ev, fmt.Errorf(":process %q is not an integer", v)
			}
			ev.Process = p
		case "type":
			ev.Type = strings.TrimPrefix(v, ":")
		case "f":
			ev.F = strings.TrimPrefix(v, ":")
		case "key":
			s, err := strconv.Unquote(v)
			if err != nil {
				s = strings.TrimPrefix(v, ":")
			}
			if !utf8.ValidString(s) {
				return ev, fmt.Errorf(":key %s is not valid UTF-8", v)
			}
			ev.Key = s
		case "value":
			val, err := ednValue(v)
			if err != nil {
				return ev, err
			}
			ev.Value = val
		}
	}
	for _, k := range []string{"process", "type", "f"} {
		if !seen[k] {
			return ev, fmt.Errorf("missing :%s", k)
		}
	}
	return ev, nil
}

func ednValue(v string) (Value, error) {
	switch {
	case v == "nil":
		return Value{Nil: true}, nil
	case strings.HasPrefix(v, `"`):
		s, err := strconv.Unquote(v)
		if err != nil {
			return Value{}, fmt.Errorf("bad string %s", v)
		}
		if !utf8.ValidString(s) {
			return Value{}, fmt.Errorf("string %s is not valid UTF-8", v)
		}
		return Value{Str: s, IsS: true}, nil
	case strings.HasPrefix(v, "["):
		var pair []Value
		for _, f := range strings.Fields(strings.Trim(v, "[]")) {
			x, err := ednValue(strings.Trim(f, ","))
			if err != nil {
				return Value{}, err
			}
			pair = append(pair, x)
		}
		if pair == nil {
			pair = []Value{}
		}
		return Value{Pair: pair}, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return Value{}, fmt.Errorf("bad value %q (want nil, an integer, a string or [a b])", v)
	}
	return Value{Int: n}, nil
}

func parseJSON(text string) (Event, error) {
	var raw struct {
		Process *int            `json:"process"`
		Type    string          `json:"type"`
		F       string          `json:"f"`
		Key     string          `json:"key"`
		Value   json.RawMessage `json:"value"`
	}
	if k, ok := duplicateKey(text); ok {
		return Event{}, fmt.Errorf("key %q appears twice", k)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Event{}, fmt.Errorf("not a history line: %v", err)
	}
	if raw.Process == nil || raw.F == "" {
		return Event{}, fmt.Errorf("missing process or f")
	}
	ev := Event{Process: *raw.Process, Type: raw.Type, F: raw.F, Key: raw.Key}
	v, err := jsonValue(raw.Value)
	if err != nil {
		return ev, err
	}
	if replaced(text, raw.Key, raw.F, raw.Type, v.Str) {
		// a \u escape of a lone UTF-16 surrogate, which encoding/json turns into
		// U+FFFD silently: a key would not match its other operations
		return ev, fmt.Errorf("a \\u escape of a lone UTF-16 surrogate: not valid Unicode")
	}
	ev.Value = v
	return ev, nil
}

// duplicateKey returns a key the JSON object text has twice at its top level, if any
// (encoding/json keeps the last value silently). One pass over the bytes: a key is a
// string at depth 1 that follows '{' or ','. Keys are compared as encoding/json
// matches them to fields, ignoring case (a key written with \u escapes is not
// unescaped: such a line is not one a recorder writes).
func duplicateKey(text string) (string, bool) {
	var keys [8]string // a history line has at most five
	n, depth, expectKey := 0, 0, false
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '"':
			j := i + 1
			for j < len(text) && text[j] != '"' {
				if text[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(text) {
				return "", false
			}
			if depth == 1 && expectKey {
				k := text[i+1 : j]
				for _, seen := range keys[:n] {
					if strings.EqualFold(seen, k) { // encoding/json matches fields so
						return k, true
					}
				}
				if n < len(keys) {
					keys[n], n = k, n+1
				}
				expectKey = false
			}
			i = j
		case '{', '[':
			depth++
			expectKey = c == '{' && depth == 1
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		}
	}
	return "", false
}

// replaced reports whether a decoded string has a U+FFFD that the line does not write
// (literally or as \ufffd): the decoder made it up.
func replaced(line string, decoded ...string) bool {
	if strings.ContainsRune(line, utf8.RuneError) || strings.Contains(strings.ToLower(line), `\ufffd`) {
		return false
	}
	for _, d := range decoded {
		if strings.ContainsRune(d, utf8.RuneError) {
			return true
		}
	}
	return false
}

func jsonValue(b json.RawMessage) (Value, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return Value{Nil: true}, nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err == nil {
		return Value{Int: n}, nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		return Value{Str: s, IsS: true}, nil
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(b, &arr); err == nil {
		pair := []Value{}
		for _, x := range arr {
			v, err := jsonValue(x)
			if err != nil {
				return Value{}, err
			}
			pair = append(pair, v)
		}
		return Value{Pair: pair}, nil
	}
	return Value{}, fmt.Errorf("bad value %s (want null, an integer, a string or [a, b])", string(b))
}

var logLine = regexp.MustCompile(`jepsen\.util\s+-\s+(\d+)\s+:(invoke|ok|fail|info)\s+:([a-z-]+)\s+(.*)$`)

// opLine recognizes what a jepsen.util line logging an operation starts with: a
// process number, or any process followed by the operation's type.
var opLine = regexp.MustCompile(`jepsen\.util\s+-\s+(?:\d|\S+\s+:(?:invoke|ok|fail|info)\b)`)

func parseLog(text string) (Event, bool, error) {
	m := logLine.FindStringSubmatch(text)
	if m == nil {
		if strings.Contains(text, "jepsen.util - :nemesis") || !opLine.MatchString(text) {
			return Event{}, false, nil // the nemesis's operations, other log lines
		}
		return Event{}, true, fmt.Errorf("a jepsen.util operation line that does not read as PROCESS :TYPE :F VALUE (TYPE invoke, ok, fail or info)")
	}
	p, _ := strconv.Atoi(m[1])
	ev := Event{Process: p, Type: m[2], F: m[3]}
	v := strings.TrimSpace(m[4])
	if v == ":timed-out" {
		// a timed-out call: it may or may not have happened
		ev.Type, ev.Value = "info", Value{Nil: true}
		return ev, true, nil
	}
	val, err := ednValue(v)
	if err != nil {
		return ev, true, err
	}
	ev.Value = val
	return ev, true, nil
}
