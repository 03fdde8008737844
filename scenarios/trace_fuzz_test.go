package scenarios_test

import (
	"bytes"
	"maps"
	"testing"

	"github.com/simrun-dev/simrun/scenarios"
)

// FuzzTraceReader: whatever the bytes, reading a trace returns a header or an input
// error, and replaying one (when its header is the seed corpus' own run, so the work is
// bounded) reports the first differing line or a match, never a panic.
func FuzzTraceReader(f *testing.F) {
	params := map[string]string{"clients": "2", "ops": "3"}
	var buf bytes.Buffer
	sc, err := scenarios.Lookup("demo/happy")
	if err != nil {
		f.Fatal(err)
	}
	if _, err := scenarios.Run(sc, scenarios.Options{Seed: 4, Params: params, TraceTo: &buf}); err != nil {
		f.Fatal(err)
	}
	good := buf.Bytes()
	f.Add(good)
	f.Add(bytes.Replace(good, []byte(`"ev":"recv"`), []byte(`"ev":"timer"`), 1))
	f.Add(good[:len(good)/2])
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"format":"simrun-trace/1","engine":"sim","scenario":"nope"}` + "\n"))
	f.Add([]byte("\x00\xff"))
	f.Add(bytes.ReplaceAll(good, []byte("\n"), []byte("\r\n"))) // CRLF: the same lines
	f.Add(append(append([]byte{}, good...), good[:40]...))      // a line more, cut short
	f.Add(bytes.Replace(good, []byte(`"clients":"2"`), []byte(`"clients":"200000"`), 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := scenarios.ReadHeader(b)
		if err != nil {
			if !scenarios.IsInputError(err) {
				t.Fatalf("a malformed trace is not an input error: %v", err)
			}
			return
		}
		if h.Engine != "sim" || h.Scenario != "demo/happy" || h.Seed != 4 || len(h.Params) != 7 {
			return
		}
		want := maps.Clone(h.Params)
		for k, v := range params {
			if want[k] != v {
				return
			}
		}
		res, err := scenarios.Replay(b)
		if err != nil {
			return
		}
		if bytes.Equal(b, good) && !res.Same() {
			t.Fatalf("the recorded trace does not replay: line %d", res.Line)
		}
	})
}
