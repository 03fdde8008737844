package histories

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// porcupineDir finds the porcupine module's directory (its test data is read from
// there, not copied into this repository).
func porcupineDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-json", "github.com/anishathalye/porcupine").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("porcupine's module directory: %v %q", err, out)
	}
	return m.Dir
}

func check(t *testing.T, path, model string) porcupine.CheckResult {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, err := Parse(path, f, "")
	if err != nil {
		t.Fatal(err)
	}
	ops, err := Operations(path, model, evs)
	if err != nil {
		t.Fatal(err)
	}
	return Check(model, ops, time.Minute).Result
}

// Every Jepsen etcd history porcupine ships gets the verdict porcupine's own tests
// expect (read from its porcupine_test.go), and so do its 1- and 10-client key-value
// histories.
func TestPorcupineHistories(t *testing.T) {
	dir := porcupineDir(t)
	src, err := os.ReadFile(filepath.Join(dir, "porcupine_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	cases := regexp.MustCompile(`checkJepsen\(t, (\d+), (true|false)\)`).FindAllStringSubmatch(string(src), -1)
	if len(cases) < 100 {
		t.Fatalf("found %d Jepsen cases in porcupine's tests", len(cases))
	}
	for _, c := range cases {
		var n int
		fmt.Sscan(c[1], &n)
		want := porcupine.Illegal
		if c[2] == "true" {
			want = porcupine.Ok
		}
		path := filepath.Join(dir, "test_data", "jepsen", fmt.Sprintf("etcd_%03d.log", n))
		if got := check(t, path, "cas-register"); got != want {
			t.Errorf("etcd_%03d: %v, porcupine's tests expect %v", n, got, want)
		}
	}
	for _, c := range []struct {
		name string
		want porcupine.CheckResult
	}{{"c01-ok", porcupine.Ok}, {"c01-bad", porcupine.Illegal}, {"c10-ok", porcupine.Ok}, {"c10-bad", porcupine.Illegal}} {
		// (the 50-client histories take 35 s and more; `simrun lincheck` checks them by hand)
		if got := check(t, filepath.Join(dir, "test_data", "kv", c.name+".txt"), "kv"); got != c.want {
			t.Errorf("kv %s: %v, want %v", c.name, got, c.want)
		}
	}
}

// The JSON Lines format, info operations (pending) and fail (did not happen).
func TestJSONLines(t *testing.T) {
	h := `{"process": 0, "type": "invoke", "f": "write", "key": "x", "value": 1}
{"process": 0, "type": "ok", "f": "write", "key": "x", "value": 1}
{"process": 1, "type": "invoke", "f": "write", "key": "x", "value": 2}
{"process": 1, "type": "info", "f": "write", "key": "x", "value": 2}
{"process": 2, "type": "invoke", "f": "read", "key": "x", "value": null}
{"process": 2, "type": "ok", "f": "read", "key": "x", "value": 2}
{"process": 3, "type": "invoke", "f": "write", "key": "x", "value": 9}
{"process": 3, "type": "fail", "f": "write", "key": "x", "value": 9}
`
	evs, err := Parse("h.jsonl", strings.NewReader(h), "")
	if err != nil {
		t.Fatal(err)
	}
	ops, err := Operations("h.jsonl", "register", evs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 3 || !ops[1].Pending {
		t.Fatalf("ops %+v: want 3 (the failed write dropped), the info write pending", ops)
	}
	if r := Check("register", ops, time.Second).Result; r != porcupine.Ok {
		t.Fatalf("the info write explains the read of 2: %v", r)
	}
	bad := strings.Replace(h, `"value": 2}
{"process": 3`, `"value": 9}
{"process": 3`, 1)
	evs, _ = Parse("h.jsonl", strings.NewReader(bad), "")
	ops, _ = Operations("h.jsonl", "register", evs)
	if r := Check("register", ops, time.Second).Result; r != porcupine.Illegal {
		t.Fatalf("a read of the failed write's 9: %v, want illegal", r)
	}
}

// Malformed histories: one error naming the file and line.
func TestMalformed(t *testing.T) {
	for _, c := range []struct{ name, h, model, want string }{
		{"return without call", `{:process 0, :type :ok, :f :read, :value 1}`, "register", "h:1: process 0 completes read without an invocation"},
		{"second invoke", "{:process 0, :type :invoke, :f :read, :value nil}\n{:process 0, :type :invoke, :f :write, :value 1}", "register", "h:2: process 0 invokes write with read (line 1) still open"},
		{"bad value", `{:process 0, :type :invoke, :f :write, :value 1.5x}`, "register", "h:1: bad value"},
		{"unknown op", `{:process 0, :type :invoke, :f :dequeue, :value nil}`, "register", `h:1: operation "dequeue" is not one of model register's`},
		{"bad type", `{"process": 0, "type": "done", "f": "read"}`, "register", `h:1: type "done"`},
		{"truncated json", `{"process": 0, "type": "invoke", "f": "wri`, "register", "h:1: not a history line"},
		{"unknown format", "hello", "register", "h:1: unknown history format"},
		{"empty", "\n\n", "register", "h:2: no operations"},
		{"cas without pair", `{:process 0, :type :invoke, :f :cas, :value 3}`, "cas-register", "h:1: cas takes [from to]"},
	} {
		evs, err := Parse("h", strings.NewReader(c.h), "")
		if err == nil {
			_, err = Operations("h", c.model, evs)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := Operations("h", "stack", nil); err == nil {
		t.Error("unknown model accepted")
	}
}

// A history larger than MaxBytes is refused after reading MaxBytes, in bounded memory.
// -short pads each operation to a quarter MiB with trailing blanks: a few hundred
// operations to parse instead of a million.
func TestTooLarge(t *testing.T) {
	pad := ""
	if testing.Short() {
		pad = strings.Repeat(" ", 1<<18)
	}
	line := `{"process": 0, "type": "invoke", "f": "read", "key": "x", "value": null}` + pad + "\n" + `{"process": 0, "type": "ok", "f": "read", "key": "x", "value": null}` + pad + "\n"
	r := &repeat{s: line, n: MaxBytes/len(line) + 10}
	_, err := Parse("big", r, "")
	if err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Fatalf("%v", err)
	}
}

type repeat struct {
	s   string
	n   int
	off int
}

func (r *repeat) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, fmt.Errorf("EOF")
	}
	k := copy(p, r.s[r.off:])
	r.off += k
	if r.off == len(r.s) {
		r.off, r.n = 0, r.n-1
	}
	return k, nil
}

// FuzzParse: any input is a history or one error line naming the file.
func FuzzParse(f *testing.F) {
	f.Add(`{:process 0, :type :invoke, :f :read, :value nil}`)
	f.Add(`{"process": 1, "type": "ok", "f": "cas", "value": [1, 2]}`)
	f.Add("INFO  jepsen.util - 0\t:invoke\t:cas\t[1 2]")
	// issue 34's inputs
	f.Add("\uFEFF{:process 0, :type :invoke, :f :read, :value nil}")
	f.Add(`{"process": 0, "type": "invoke", "f": "read", "type": "ok", "key": "\ud800"}`)
	f.Add("{\"process\": 0, \"type\": \"invoke\", \"f\": \"read\", \"key\": \"\xff\"}")
	f.Add("INFO  jepsen.util - 0\t:invoke\t:write\nINFO  jepsen.util - :nemesis\t:info\t:start\tnil")
	f.Add("{:process 0, :type :invoke, :f :write, :value 1}\n{:process 0, :type :ok, :f :read, :value 1}")
	f.Fuzz(func(t *testing.T, h string) {
		evs, err := Parse("f", strings.NewReader(h), "")
		if err == nil {
			_, err = Operations("f", "cas-register", evs)
		}
		if err != nil && (!strings.HasPrefix(err.Error(), "f:") || strings.Contains(err.Error(), "\n")) {
			t.Fatalf("error %q", err)
		}
	})
}

// The counter and queue models.
func TestCounterAndQueue(t *testing.T) {
	for _, c := range []struct {
		name, model, h string
		want           porcupine.CheckResult
	}{
		{"counter ok", "counter", "{:process 0, :type :invoke, :f :add, :value 2}\n{:process 1, :type :invoke, :f :read, :value nil}\n{:process 1, :type :ok, :f :read, :value 2}\n{:process 0, :type :ok, :f :add, :value 2}\n", porcupine.Ok},
		{"counter bad", "counter", "{:process 0, :type :invoke, :f :add, :value 2}\n{:process 0, :type :ok, :f :add, :value 2}\n{:process 1, :type :invoke, :f :read, :value nil}\n{:process 1, :type :ok, :f :read, :value 3}\n", porcupine.Illegal},
		{"queue ok", "queue", "{:process 0, :type :invoke, :f :enqueue, :value 1}\n{:process 0, :type :ok, :f :enqueue, :value 1}\n{:process 0, :type :invoke, :f :enqueue, :value 2}\n{:process 0, :type :ok, :f :enqueue, :value 2}\n{:process 1, :type :invoke, :f :dequeue, :value nil}\n{:process 1, :type :ok, :f :dequeue, :value 1}\n", porcupine.Ok},
		{"queue out of order", "queue", "{:process 0, :type :invoke, :f :enqueue, :value 1}\n{:process 0, :type :ok, :f :enqueue, :value 1}\n{:process 0, :type :invoke, :f :enqueue, :value 2}\n{:process 0, :type :ok, :f :enqueue, :value 2}\n{:process 1, :type :invoke, :f :dequeue, :value nil}\n{:process 1, :type :ok, :f :dequeue, :value 2}\n", porcupine.Illegal},
		{"queue empty refused", "queue", "{:process 0, :type :invoke, :f :enqueue, :value 1}\n{:process 0, :type :ok, :f :enqueue, :value 1}\n{:process 1, :type :invoke, :f :dequeue, :value nil}\n{:process 1, :type :fail, :f :dequeue, :value nil}\n", porcupine.Illegal},
	} {
		evs, err := Parse("h", strings.NewReader(c.h), "")
		if err != nil {
			t.Fatal(err)
		}
		ops, err := Operations("h", c.model, evs)
		if err != nil {
			t.Fatal(err)
		}
		if got := Check(c.model, ops, time.Second).Result; got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// Issue 34: histories that used to be accepted (or blamed the wrong thing) are refused
// with one line naming the line and the fault.
func TestMalformedRefused(t *testing.T) {
	inv := func(f, v string) string {
		return `{"process": 0, "type": "invoke", "f": "` + f + `", "key": "x", "value": ` + v + "}\n"
	}
	ok := func(f, v string) string {
		return `{"process": 0, "type": "ok", "f": "` + f + `", "key": "x", "value": ` + v + "}\n"
	}
	for _, c := range []struct {
		name, model, h, want string
	}{
		{"ok of another operation", "register", inv("write", "1") + ok("read", "1"), "h:2: process 0 completes read, but its open invocation (line 1) is write"},
		{"counter add of a string", "counter", inv("add", `"abc"`) + ok("add", `"abc"`), `h:1: add takes an integer, got "abc"`},
		{"counter read of a string", "counter", inv("read", "null") + ok("read", `"abc"`), `h:2: a counter's read returns an integer`},
		{"kv put of an integer", "kv", inv("put", "3") + ok("put", "3"), "h:1: put takes a string"},
		{"malformed jepsen.util line", "register", "INFO  jepsen.util - 0\t:invoke\t:write\t1\nINFO  jepsen.util - 0\t:okay\t:write\t1\n", "h:2: a jepsen.util operation line that does not read"},
		{"missing value in a jepsen.util line", "register", "INFO  jepsen.util - 0\t:invoke\t:write\n", "h:1: a jepsen.util operation line"},
		{"invalid UTF-8 in a key", "register", "{\"process\": 0, \"type\": \"invoke\", \"f\": \"read\", \"key\": \"\xff\", \"value\": null}\n", "h:1: the line is not valid UTF-8"},
		{"lone surrogate in a key", "register", `{"process": 0, "type": "invoke", "f": "read", "key": "\ud800", "value": null}` + "\n", "h:1: a \\u escape of a lone UTF-16 surrogate"},
		{"invalid UTF-8 escaped in an EDN key", "register", `{:process 0, :type :invoke, :f :read, :key "\xff", :value nil}` + "\n", `h:1: :key "\xff" is not valid UTF-8`},
		{"byte-order mark", "register", "\uFEFF" + inv("read", "null"), "h:1: the history starts with a UTF-8 byte-order mark"},
		{"duplicated JSON key", "register", inv("write", "1") + `{"process": 0, "type": "ok", "f": "write", "type": "fail", "value": 1}` + "\n", `h:2: key "type" appears twice`},
		{"the same key in another case", "register", `{"process": 0, "type": "invoke", "f": "read", "TYPE": "ok", "value": null}` + "\n", `h:1: key "TYPE" appears twice`},
		{"duplicated EDN key", "register", `{:process 0, :type :invoke, :f :read, :process 1, :value nil}` + "\n", "h:1: :process appears twice"},
	} {
		evs, err := Parse("h", strings.NewReader(c.h), "")
		if err == nil {
			_, err = Operations("h", c.model, evs)
		}
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// the nemesis's operations and other jepsen.util lines are not the clients'
	evs, err := Parse("h", strings.NewReader("INFO  jepsen.util - :nemesis\t:info\t:start\tnil\nINFO  jepsen.util - Relative time begins now\nINFO  jepsen.util - 0\t:invoke\t:read\tnil\n"), "")
	if err != nil || len(evs) != 1 {
		t.Fatalf("nemesis and other lines: %v, %d events", err, len(evs))
	}
}

// Explain gives, key by key, an order the model accepts: on a kv history of two keys,
// a pending append placed before the get that saw it.
func TestExplain(t *testing.T) {
	h := `{"process": 0, "type": "invoke", "f": "put", "key": "a", "value": "x"}
{"process": 0, "type": "ok", "f": "put", "key": "a", "value": "x"}
{"process": 1, "type": "invoke", "f": "append", "key": "a", "value": "y"}
{"process": 2, "type": "invoke", "f": "get", "key": "a", "value": null}
{"process": 2, "type": "ok", "f": "get", "key": "a", "value": "xy"}
{"process": 3, "type": "invoke", "f": "put", "key": "b", "value": "z"}
{"process": 3, "type": "ok", "f": "put", "key": "b", "value": "z"}
`
	evs, err := Parse("h.jsonl", strings.NewReader(h), "")
	if err != nil {
		t.Fatal(err)
	}
	ops, err := Operations("h.jsonl", "kv", evs)
	if err != nil {
		t.Fatal(err)
	}
	steps, ok := Explain("kv", ops, time.Minute)
	var got []string
	for _, s := range steps {
		got = append(got, s.Key+" "+s.Does+" "+s.State)
	}
	want := []string{`a put("x") x`, `a append("y") xy`, `a get() → "xy" xy`, `b put("z") z`}
	if !ok || !slices.Equal(got, want) || !steps[1].Op.Pending {
		t.Fatalf("%v %q", ok, got)
	}
	// not linearizable: no order
	bad := append(ops[:0:0], ops...)
	for i := range bad {
		if bad[i].Input.(in).F == "get" {
			bad[i].Output = out{Ok: true, Val: Value{Str: "q", IsS: true}}
		}
	}
	if _, ok := Explain("kv", bad, time.Minute); ok {
		t.Fatal("explained a history that is not linearizable")
	}
}
