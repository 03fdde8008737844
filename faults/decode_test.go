package faults_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/faults"
)

// Inputs a lenient decoder used to accept (issue 16, item 3): each is refused with one
// short line naming what is wrong, never with the JSON decoder's own wording.
func TestParseRefusesPermissiveInputs(t *testing.T) {
	huge := strings.Repeat("n", 50<<20)
	for _, tc := range []struct {
		name, plan, want string
	}{
		{"null", `null`, "not null"},
		{"bare empty array", `[]`, "not an array"},
		{"bare array", `[{"at":"1s","kind":"crash","node":"a"}]`, "not an array"},
		{"empty object", `{}`, `missing "events"`},
		{"events null", `{"events":null}`, `"events" must be an array, not null`},
		{"bare number at", `{"events":[{"at":2000000000,"kind":"crash","node":"a"}]}`, `entry 0 (crash): field "at": a duration is a string`},
		{"missing at", `{"events":[{"kind":"crash","node":"a"}]}`, `entry 0 (crash): field "at": missing time`},
		{"duplicate events", `{"events":[{"at":"1s","kind":"crash","node":"a"}],"events":[]}`, `line 1, column 51: key "events" appears twice`},
		{"duplicate field", `{"events":[{"at":"1s","at":"2s","kind":"crash","node":"a"}]}`, `key "at" appears twice`},
		{"field of another kind", `{"events":[{"at":"1s","kind":"crash","node":"a","groups":[["a"]]}]}`, `entry 0 (crash): field "groups": does not belong to a crash entry`},
		{"unknown field", `{"events":[{"at":"1s","kind":"heal","why":"x"}]}`, `field "why": unknown field`},
		{"top-level extra", `{"events":[],"seed":1}`, `unknown top-level field "seed"`},
		{"drift 9e18", `{"events":[{"at":"1s","kind":"skew","node":"a","drift_ppm":9000000000000000000}]}`, `field "drift_ppm": "9000000000000000000" is not a whole number in [-500000, 500000]`},
		{"drift float", `{"events":[{"at":"1s","kind":"skew","node":"a","drift_ppm":1.5}]}`, `not a whole number`},
		{"crash at 100000h", `{"events":[{"at":"100000h","kind":"crash","node":"a"}]}`, `field "at": 100000h0m0s is outside [0, 24h0m0s]`},
		{"spike of an hour and more", `{"events":[{"at":"1s","kind":"spike","from":"*","to":"a","extra":"2h","for":"1s"}]}`, `field "extra": 2h0m0s is outside [0, 1h0m0s]`},
		{"lone high surrogate", `{"events":[{"at":"1s","kind":"crash","node":"a\ud800"}]}`, `line 1, column 47: \u escape of a lone UTF-16 surrogate`},
		{"lone low surrogate", `{"events":[{"at":"1s","kind":"crash","node":"\udc00a"}]}`, `lone UTF-16 surrogate`},
		{"reversed pair", `{"events":[{"at":"1s","kind":"crash","node":"\udc00\ud800"}]}`, `lone UTF-16 surrogate`},
		{"byte-order mark", "\xef\xbb\xbf{\"events\":[]}", "byte-order mark"},
		{"not utf-8", "{\"events\":[{\"at\":\"1s\",\"kind\":\"crash\",\"node\":\"\xff\"}]}", "not valid UTF-8"},
		{"trailing data", `{"events":[]} {}`, "line 1, column 15: trailing data"},
		{"truncated", "{\"events\":[\n{\"at\":\"1s\",\"kind\":\"cr", "line 2, column 22: the plan ends early"},
		{"syntax", "{\"events\":[\n  {\"at\":\"1s\" \"kind\":\"crash\"}]}", "line 2, column 14: not valid JSON"},
		{"huge node name", `{"events":[{"at":"1s","kind":"crash","node":"` + huge + `"}]}`, "more than the limit"},
		{"long node name", `{"events":[{"at":"1s","kind":"crash","node":"` + strings.Repeat("n", 300) + `"}]}`, `is longer than 256 bytes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := faults.Parse([]byte(tc.plan))
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("error %q does not contain %q", msg, tc.want)
			}
			checkOneShortLine(t, msg)
		})
	}
}

func checkOneShortLine(t *testing.T, msg string) {
	t.Helper()
	if !strings.HasPrefix(msg, "faults: ") || strings.Contains(msg, "\n") || len(msg) > 300 {
		t.Fatalf("error is not one short line with the package prefix: %q", msg)
	}
	for _, internal := range []string{"json:", "Go struct", "Go value", "invalid character"} {
		if strings.Contains(msg, internal) {
			t.Fatalf("error leaks the decoder's wording (%q): %q", internal, msg)
		}
	}
}

// The explicit empty plan, and every field of every kind, are read.
func TestParseAcceptsEveryKind(t *testing.T) {
	p, err := faults.Parse([]byte(`{"events": [
		{"at":"1s","kind":"crash","node":"a"},
		{"at":"1s","kind":"partition","groups":[["b"]]},
		{"at":"1.5s","kind":"cut","from":"a","to":"c"},
		{"at":"1.6s","kind":"restore","from":"a","to":"c"},
		{"at":"2s","kind":"heal"},
		{"at":"2s","kind":"restart","node":"a"},
		{"at":"3s","kind":"spike","from":"*","to":"b","extra":"5ms","for":"1s"},
		{"at":"4s","kind":"skew","node":"c","step":"-2ms","drift_ppm":-300},
		{"at":"5s","kind":"burst","loss":0.2,"dup":0,"for":"500ms"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(names); err != nil {
		t.Fatal(err)
	}
	q, err := faults.Parse(p.JSON())
	if err != nil || !bytes.Equal(q.JSON(), p.JSON()) {
		t.Fatalf("round trip: %v\n%s\nvs\n%s", err, q.JSON(), p.JSON())
	}
	empty, err := faults.Parse([]byte(`{"events": []}`))
	if err != nil || empty.Len() != 0 {
		t.Fatalf("empty plan: %v %v", empty, err)
	}
}

// Load refuses a file over the limit without reading it whole.
func TestLoadLimit(t *testing.T) {
	f := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(f, bytes.Repeat([]byte(" "), faults.MaxPlanBytes+10), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := faults.Load(f)
	if err == nil || !strings.Contains(err.Error(), "more than the limit") {
		t.Fatalf("Load of an oversized file: %v", err)
	}
}

// Whatever the bytes, Parse returns a plan or one short line; an accepted plan writes
// JSON that parses back to the same plan.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"events": []}`,
		`{"events":[{"at":"1s","kind":"crash","node":"a"},{"at":"2s","kind":"restart","node":"a"}]}`,
		`{"events":[{"at":"1s","kind":"partition","groups":[["a","b"],["c"]]},{"at":"2s","kind":"heal"}]}`,
		`{"events":[{"at":"1s","kind":"spike","from":"*","to":"a","extra":"5ms","for":"1s"}]}`,
		`{"events":[{"at":"1s","kind":"skew","node":"a","step":"-2ms","drift_ppm":300}]}`,
		`{"events":[{"at":"1s","kind":"burst","loss":0.5,"dup":0.1,"for":"1s"}]}`,
		`{"events":[{"at":"1s","kind":"cut","from":"a","to":"b"},{"at":"1s","kind":"restore","from":"a","to":"b"}]}`,
		`null`, `[]`, `{"events":[{"at":1}]}`, "\xef\xbb\xbf{}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := faults.Parse(b)
		if err != nil {
			checkOneShortLine(t, err.Error())
			return
		}
		q, err := faults.Parse(p.JSON())
		if err != nil {
			t.Fatalf("accepted plan does not re-parse: %v\n%s", err, p.JSON())
		}
		if !bytes.Equal(q.JSON(), p.JSON()) {
			t.Fatalf("round trip changed the plan:\n%s\nvs\n%s", p.JSON(), q.JSON())
		}
	})
}

// Surrogate pairs and an escaped backslash before "u" are fine; only a lone surrogate
// (which encoding/json turns into U+FFFD silently) is refused.
func TestParseSurrogates(t *testing.T) {
	for _, name := range []string{`c\ud83d\ude00`, `c\\ud800`, `c\"\\u0041`} {
		p, err := faults.Parse([]byte(`{"events":[{"at":"1s","kind":"crash","node":"` + name + `"}]}`))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.ContainsRune(p.Events[0].Node, '\uFFFD') {
			t.Fatalf("%s decoded to %q", name, p.Events[0].Node)
		}
	}
}
