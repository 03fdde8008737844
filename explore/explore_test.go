package explore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/model"
	_ "github.com/simrun-dev/simrun/model/twophase" // 2pc
	"github.com/simrun-dev/simrun/scenarios"
	_ "github.com/simrun-dev/simrun/scenarios/exactlyonce" // scenarios and the exactlyonce model
	_ "github.com/simrun-dev/simrun/scenarios/leasing"     // the leasing model (discrete time)
	"github.com/simrun-dev/simrun/sim"
)

// ---- fixtures (built once: the fuzz target and several tests share them) ----

var (
	fixOnce            sync.Once
	simTrace, modTrace []byte
	simRep             *scenarios.Report
	fixErr             error
)

const (
	simScenario = "exactlyonce/coord-crash"
	simBug      = "no-commit-log" // EO-2/EO-3 fails on seed 4
)

func fixtures(t testing.TB) {
	t.Helper()
	fixOnce.Do(func() {
		var buf bytes.Buffer
		simRep, fixErr = scenarios.RunName(simScenario, scenarios.Options{Seed: 4, Params: map[string]string{"bug": simBug}, TraceTo: &buf})
		if fixErr != nil {
			return
		}
		simTrace = buf.Bytes()
		modTrace, fixErr = checkTrace("exactlyonce", map[string]string{"bug": "put-on-prepare"})
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
}

// checkTrace model-checks a registered model and returns its counterexample trace,
// as simrun check --trace writes it.
func checkTrace(name string, params map[string]string) ([]byte, error) {
	m, err := model.Lookup(name)
	if err != nil {
		return nil, err
	}
	sys, p, err := m.Instantiate(params)
	if err != nil {
		return nil, err
	}
	res, err := model.Check(sys, model.Options{})
	if err != nil {
		return nil, err
	}
	v := res.Violation
	if v == nil || !v.HasTrace {
		return nil, fmt.Errorf("%s %v: no counterexample", name, params)
	}
	var buf bytes.Buffer
	hdr := model.TraceHeader{Format: sim.TraceFormat, Engine: model.TraceEngine, Scenario: m.Name, Params: p.Values(), Property: v.Name, Kind: v.Kind, Strategy: "bfs"}
	if err := res.WriteTrace(&buf, v, hdr); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func serve(t testing.TB, s *Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func get(t testing.TB, ts *httptest.Server, url string, want int) []byte {
	t.Helper()
	return do(t, ts, http.MethodGet, url, want)
}

func do(t testing.TB, ts *httptest.Server, method, url string, want int) []byte {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, url, resp.StatusCode, want, b)
	}
	return b
}

func decode[T any](t testing.TB, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

type infoJSON struct {
	Trace *struct {
		Engine    string   `json:"engine"`
		Steps     int      `json:"steps"`
		Nodes     []string `json:"nodes"`
		First     int      `json:"first_violation"`
		Why       string   `json:"first_violation_why"`
		Warning   string   `json:"warning"`
		ModelPath string   `json:"model_path"`
		Verdicts  []struct {
			Class, Property string
		} `json:"verdicts"`
	} `json:"trace"`
	Model *modelInfo `json:"model"`
}

type stepJSON struct {
	Step    int          `json:"step"`
	Index   int          `json:"index"`
	Records []recordJSON `json:"records"`
	State   struct {
		T     sim.Time `json:"t"`
		Nodes []struct {
			Name   string          `json:"name"`
			Up     bool            `json:"up"`
			State  json.RawMessage `json:"state"`
			Stable json.RawMessage `json:"stable"`
		} `json:"nodes"`
		InFlight []sim.InFlight `json:"in_flight"`
	} `json:"state"`
	Diff []change `json:"diff"`
}

// ---- simulator traces ----

// Every step of a simulator trace is rebuilt by re-execution: the last step's node
// states are the run's final states, going back and forth gives the same bytes, a
// stable write shows in the diff, a message sent is in flight until its receipt.
func TestSimTraceSteps(t *testing.T) {
	fixtures(t)
	s, err := NewTraceServer("coord.jsonl", simTrace, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, s)
	info := decode[infoJSON](t, get(t, ts, "/api/info", 200))
	tr := info.Trace
	if tr == nil || info.Model != nil || tr.Engine != "sim" || tr.Warning != "" {
		t.Fatalf("info: %+v", info)
	}
	if int64(tr.Steps) != simRep.Result.Events {
		t.Fatalf("%d steps, the run had %d events", tr.Steps, simRep.Result.Events)
	}
	if len(tr.Nodes) != len(simRep.Result.Final) {
		t.Fatalf("nodes %v, the run had %d", tr.Nodes, len(simRep.Result.Final))
	}
	// The last step is the end of the run.
	last := decode[stepJSON](t, get(t, ts, fmt.Sprintf("/api/step?k=%d", tr.Steps), 200))
	for i, f := range simRep.Result.Final {
		want, _ := json.Marshal(sim.Inspect(f.State))
		if f.State == nil {
			want = []byte("null")
		}
		if got := last.State.Nodes[i].State; !bytes.Equal(got, want) {
			t.Fatalf("node %s at the last step:\n%s\nthe run ended with:\n%s", f.Name, got, want)
		}
	}
	// Determinism: forward, back, forward again.
	a := get(t, ts, "/api/step?k=700", 200)
	get(t, ts, "/api/step?k=12", 200)
	if b := get(t, ts, "/api/step?k=700", 200); !bytes.Equal(a, b) {
		t.Fatal("step 700 differs after going back to 12 and forward again")
	}
	recs := decode[struct {
		Records []recordJSON `json:"records"`
	}](t, get(t, ts, "/api/records?from=0&count=2000", 200)).Records
	// A stable write shows in the diff; a message is in flight between send and receipt.
	sawStore, sawFlight := false, false
	for i, r := range recs {
		for _, e := range r.Out {
			if e.Op == "store" && !sawStore {
				st := decode[stepJSON](t, get(t, ts, fmt.Sprintf("/api/step?k=%d", r.Step), 200))
				if !hasChange(st.Diff, r.Node+".stable."+e.Key) {
					t.Fatalf("step %d stores %s at %s, diff: %+v", r.Step, e.Key, r.Node, st.Diff)
				}
				sawStore = true
			}
		}
		if r.SentBy >= 0 && r.Ev == "recv" && !sawFlight && r.Step > recs[r.SentBy].Step+1 {
			if r.SentBy >= i || !sends(recs[r.SentBy], r.Node, r.Kind) {
				t.Fatalf("record %d (%s from %s) matched to record %d, which sends no such message", i, r.Kind, r.From, r.SentBy)
			}
			before := decode[stepJSON](t, get(t, ts, fmt.Sprintf("/api/step?k=%d", r.Step-1), 200))
			if !inFlight(before.State.InFlight, r.From, r.Node, r.Kind) {
				t.Fatalf("step %d: %s %s→%s not in flight before its receipt: %+v", r.Step-1, r.Kind, r.From, r.Node, before.State.InFlight)
			}
			sawFlight = true
		}
	}
	if !sawStore || !sawFlight {
		t.Fatalf("the trace exercised neither a store (%v) nor a message in flight (%v)", sawStore, sawFlight)
	}
	// The overview counts every event of a node once.
	ov := decode[struct {
		Counts [][]int `json:"counts"`
	}](t, get(t, ts, "/api/overview?width=50", 200))
	total := 0
	for _, row := range ov.Counts {
		if len(row) != 50 {
			t.Fatalf("overview row of %d buckets, want 50", len(row))
		}
		for _, c := range row {
			total += c
		}
	}
	handled := 0
	for _, r := range s.tl.recs {
		if slices.Contains(tr.Nodes, r.Node) {
			handled++
		}
	}
	if total != handled || total == 0 {
		t.Fatalf("overview counts %d events, the trace has %d at nodes", total, handled)
	}
	// find: the next step of node n4 from 0 is its first record.
	f := decode[struct{ Step int }](t, get(t, ts, "/api/find?from=0&dir=next&node=n4", 200))
	for _, r := range recs {
		if r.Node == "n4" || r.From == "n4" || sends(r, "n4", "") {
			if r.Step != f.Step {
				t.Fatalf("find next n4: step %d, want %d", f.Step, r.Step)
			}
			break
		}
	}
}

func hasChange(cs []change, prefix string) bool {
	for _, c := range cs {
		if strings.HasPrefix(c.Path, prefix) {
			return true
		}
	}
	return false
}

func sends(r recordJSON, to, kind string) bool {
	for _, e := range r.Out {
		if e.Op == "send" && e.To == to && (kind == "" || e.Kind == kind) {
			return true
		}
	}
	return false
}

func inFlight(ms []sim.InFlight, from, to, kind string) bool {
	for _, m := range ms {
		if m.From == from && m.To == to && m.Kind == kind {
			return true
		}
	}
	return false
}

// The first violating step of a simulator trace is the shortest prefix on which the
// failed property already fails: the run cut one event earlier passes it.
func TestSimTraceFirstViolation(t *testing.T) {
	fixtures(t)
	s, err := NewTraceServer("coord.jsonl", simTrace, Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := s.tl.First
	if k <= 0 || !strings.HasPrefix(s.tl.FirstWhy, "EO-2/EO-3") {
		t.Fatalf("first violation %d (%s)", k, s.tl.FirstWhy)
	}
	fails := func(events int) bool {
		rep, err := scenarios.RunName(simScenario, scenarios.Options{Seed: 4, Params: map[string]string{"bug": simBug}, CutAt: int64(events)})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range rep.Verdicts {
			if strings.HasPrefix(v.Property, "EO-2/EO-3") {
				return v.Failed()
			}
		}
		t.Fatal("no EO-2/EO-3 verdict")
		return false
	}
	if !fails(k) || fails(k-1) {
		t.Fatalf("step %d: the property fails at %d events: %v, at %d: %v", k, k, fails(k), k-1, fails(k-1))
	}
	// The verdict blames n4's abort: the step is n4 handling the ABORT.
	if r := s.tl.recs[k-1]; r.Node != "n4" || r.Kind != "ABORT" {
		t.Fatalf("step %d is %+v", k, r)
	}
	// A trace without a failure has none.
	var buf bytes.Buffer
	if _, err := scenarios.RunName(simScenario, scenarios.Options{Seed: 4, TraceTo: &buf}); err != nil {
		t.Fatal(err)
	}
	ok, err := NewTraceServer("ok.jsonl", buf.Bytes(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ok.tl.First != -1 {
		t.Fatalf("a passing run has a first violation at %d", ok.tl.First)
	}
}

// A trace this binary no longer reproduces is explored with a warning naming the line.
func TestSimTraceDeparts(t *testing.T) {
	fixtures(t)
	lines := bytes.Split(simTrace, []byte("\n"))
	lines[5] = bytes.Replace(lines[5], []byte(`"t":`), []byte(`"t":1`), 1)
	s, err := NewTraceServer("edited.jsonl", bytes.Join(lines, []byte("\n")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.tl.Warning, "line 6") {
		t.Fatalf("warning %q", s.tl.Warning)
	}
}

// ---- model-checker traces and models ----

// A model-checker counterexample: its first violating step is the first state on the
// path where the property is false, and the state space around it is browsable.
func TestModelTrace(t *testing.T) {
	fixtures(t)
	s, err := NewTraceServer("cex.jsonl", modTrace, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, s)
	info := decode[infoJSON](t, get(t, ts, "/api/info", 200))
	if info.Trace == nil || info.Model == nil || info.Trace.Engine != "model" || info.Trace.Warning != "" {
		t.Fatalf("info %+v", info)
	}
	k := info.Trace.First
	p, err := model.ParsePath(info.Trace.ModelPath)
	if err != nil || len(p.Steps) != info.Trace.Steps || k < 1 {
		t.Fatalf("path %q (%v), %d steps, first violation %d", info.Trace.ModelPath, err, info.Trace.Steps, k)
	}
	holds := func(steps int) bool {
		v := decode[model.View](t, get(t, ts, "/api/state?path="+p.Prefix(steps).String(), 200))
		for _, pr := range v.Properties {
			if strings.HasPrefix(pr.Name, "EO-P1") {
				return pr.Holds
			}
		}
		t.Fatal("no EO-P1")
		return false
	}
	if holds(k) || !holds(k-1) {
		t.Fatalf("first violation %d: EO-P1 holds there %v, one step earlier %v", k, holds(k), holds(k-1))
	}
	// The path's receipts are matched to their sends, as in the trace.
	sb := decode[struct {
		SentBy  []int             `json:"sent_by"`
		Records []sim.TraceRecord `json:"records"`
	}](t, get(t, ts, "/api/state?path="+p.String(), 200))
	matched := 0
	for i, j := range sb.SentBy {
		if j >= 0 {
			matched++
			if j >= i || !sends(recordJSON{TraceRecord: sb.Records[j]}, sb.Records[i].Node, sb.Records[i].Kind) {
				t.Fatalf("record %d matched to %d, which does not send it", i, j)
			}
		}
	}
	if len(sb.SentBy) != len(sb.Records) || matched == 0 {
		t.Fatalf("sent_by %v for %d records", sb.SentBy, len(sb.Records))
	}
	// The trace's state at step k is the model's state at the path's prefix.
	st := decode[stepJSON](t, get(t, ts, fmt.Sprintf("/api/step?k=%d", k), 200))
	v := decode[stepJSON](t, get(t, ts, "/api/state?path="+p.Prefix(k).String(), 200))
	if !bytes.Equal(st.State.Nodes[0].State, v.State.Nodes[0].State) || len(st.State.Nodes[0].State) < 100 {
		t.Fatalf("step %d and path %s disagree on node 0", k, p.Prefix(k))
	}
}

// Browsing: an action's successor is the state its fingerprint names, a self-loop is
// flagged, the check finds each property's counterexample or witness, and the paths
// it gives lead to states where the property shows.
func TestModelBrowseAndCheck(t *testing.T) {
	s, err := NewModelServer("exactlyonce", map[string]string{"bug": "put-on-prepare"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, s)
	v := decode[model.View](t, get(t, ts, "/api/state?path=0", 200))
	if v.Depth != 0 || len(v.Actions) == 0 || v.Inits != 1 {
		t.Fatalf("initial view: %+v", v)
	}
	for i := 0; i < 4; i++ {
		a := v.Actions[0]
		next := decode[model.View](t, get(t, ts, "/api/state?path="+a.Path, 200))
		if next.Fingerprint != a.Fingerprint || next.Depth != v.Depth+1 || (a.Self != (a.Fingerprint == v.Fingerprint)) {
			t.Fatalf("action %+v from %s led to %s at depth %d", a, v.Path, next.Fingerprint, next.Depth)
		}
		v = next
	}
	// The check, started twice, runs once.
	do(t, ts, http.MethodPost, "/api/check", 200)
	do(t, ts, http.MethodPost, "/api/check", 200)
	var c checkState
	// Poll until the check ends (a search of a bounded model: it ends on its own; a
	// hang is the test binary's timeout to report, not a wall-clock budget here).
	for {
		c = decode[checkState](t, get(t, ts, "/api/check", 200))
		if c.Status != "running" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if c.Status != "done" || c.Outcome != "violation" {
		t.Fatalf("check: %+v", c)
	}
	found := 0
	for _, pr := range c.Properties {
		if pr.Path == "" {
			continue
		}
		found++
		v := decode[model.View](t, get(t, ts, "/api/state?path="+pr.Path, 200))
		for _, q := range v.Properties {
			if q.Name == pr.Name && q.Holds != (pr.Kind == model.SometimesKind) {
				t.Fatalf("%s %s: its path %s ends where it holds=%v", pr.Kind, pr.Name, pr.Path, q.Holds)
			}
		}
	}
	if found == 0 {
		t.Fatalf("no counterexample path: %+v", c.Properties)
	}
}

// ---- bad requests ----

// Every bad request gets a 4xx and a JSON error; the server goes on serving.
func TestBadRequests(t *testing.T) {
	fixtures(t)
	trace, err := NewTraceServer("coord.jsonl", simTrace, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mod, err := NewModelServer("2pc", nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tts, mts := serve(t, trace), serve(t, mod)
	long := "0" + strings.Repeat(".0", model.MaxPathSteps+1)
	for _, tc := range []struct {
		ts     *httptest.Server
		method string
		url    string
		want   int
	}{
		{tts, "GET", "/nope", 404},
		{tts, "GET", "/api/nope", 404},
		{tts, "GET", "/api/step?k=-1", 400},
		{tts, "GET", "/api/step?k=abc", 400},
		{tts, "GET", "/api/step?k=99999999999999999999", 400},
		{tts, "GET", "/api/step?k=", 400},    // issue 34: an empty value is not step 0
		{tts, "GET", "/api/step?k=%ZZ", 400}, // nor a malformed escape
		{tts, "GET", "/api/records?from=1&count=%", 400},
		{tts, "GET", "/api/overview?width=", 400},
		{tts, "GET", "/api/records?count=5000", 400},
		{tts, "GET", "/api/records?from=-3", 400},
		{tts, "GET", "/api/find?from=0&dir=sideways", 400},
		{tts, "GET", "/api/find?from=0&dir=next&node=nobody", 400},
		{tts, "GET", "/api/find?from=0&dir=next&kind=NOPE", 400},
		{tts, "GET", "/api/overview?width=5", 400},
		{tts, "GET", "/api/overview?width=x", 400},
		{mts, "GET", "/api/overview", 404},
		{tts, "GET", "/api/state?path=0", 404}, // no model behind a simulator trace
		{tts, "POST", "/api/check", 404},
		{tts, "DELETE", "/api/info", 405},
		{tts, "POST", "/api/step?k=1", 405},
		{tts, "GET", "/api/info?" + strings.Repeat("x", MaxQuery+1), 414},
		{tts, "GET", "/static/..%2f..%2fetc%2fpasswd", 404},
		{tts, "GET", "/app.js/../../../etc/passwd", 404},
		{mts, "GET", "/api/step?k=1", 404}, // no trace behind a model
		{mts, "GET", "/api/state?path=", 200},
		{mts, "GET", "/api/state?path=0.x", 400},
		{mts, "GET", "/api/state?path=-1", 400},
		{mts, "GET", "/api/state?path=0..1", 400},
		{mts, "GET", "/api/state?path=0.999", 404},
		{mts, "GET", "/api/state?path=7", 404},
		{mts, "GET", "/api/state?path=" + long, 400},
	} {
		b := do(t, tc.ts, tc.method, tc.url, tc.want)
		if tc.want != 200 && !bytes.Contains(b, []byte(`"error":`)) {
			t.Fatalf("%s %.60s: no JSON error: %s", tc.method, tc.url, b)
		}
		if bytes.Contains(b, []byte("root:")) {
			t.Fatalf("%s %s served a file outside the page", tc.method, tc.url)
		}
	}
	get(t, tts, "/api/info", 200)
	get(t, mts, "/api/info", 200)
}

// Input errors name what is wrong.
func TestLoadErrors(t *testing.T) {
	fixtures(t)
	for _, tc := range []struct {
		data []byte
		want string
	}{
		{[]byte("hello\n"), "not a simrun trace"},
		{[]byte(`{"format":"simrun-trace/1","engine":"warp"}` + "\n"), "unknown trace engine"},
		{bytes.Replace(simTrace, []byte(simScenario), []byte("no/such"), 1), "unknown scenario"},
		{bytes.Replace(modTrace, []byte(`"scenario":"exactlyonce"`), []byte(`"scenario":"nomodel"`), 1), "unknown model"},
	} {
		_, err := NewTraceServer("f.jsonl", tc.data, Options{})
		if err == nil || !IsInputError(err) || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%.40s: %v (want an input error with %q)", tc.data, err, tc.want)
		}
	}
	if _, err := NewModelServer("exactlyonce", map[string]string{"nope": "1"}, Options{}); err == nil || !IsInputError(err) {
		t.Fatalf("unknown parameter: %v", err)
	}
}

// Same trace, same answers: two servers over one trace answer byte for byte alike.
func TestDeterministicAnswers(t *testing.T) {
	fixtures(t)
	var bodies [2][]byte
	for i := range bodies {
		s, err := NewTraceServer("coord.jsonl", simTrace, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ts := serve(t, s)
		bodies[i] = append(get(t, ts, "/api/info", 200), get(t, ts, "/api/step?k=900", 200)...)
	}
	if !bytes.Equal(bodies[0], bodies[1]) {
		t.Fatal("two servers over one trace answer differently")
	}
}

// ---- the API under fuzzing ----

var (
	fuzzOnce     sync.Once
	fuzzHandlers []http.Handler
)

// FuzzAPI sends arbitrary paths and queries to a trace server and a model server: the
// answer is a 4xx or a 200, never a 5xx or a crash, and an error is JSON.
func FuzzAPI(f *testing.F) {
	for _, s := range []string{"/api/info", "/api/step?k=3", "/api/records?from=1&count=3", "/api/find?from=2&dir=prev&node=n1&kind=VOTE",
		"/api/state?path=0.1.0", "/api/state?path=0.99", "/api/check", "/../x", "/api/step?k=%ff", "/api/state?path=0." + strings.Repeat("1.", 50) + "0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		fuzzOnce.Do(func() {
			var buf bytes.Buffer
			if _, err := scenarios.RunName("exactlyonce/in-doubt", scenarios.Options{Seed: 1, TraceTo: &buf}); err != nil {
				t.Fatal(err)
			}
			ts, err := NewTraceServer("t.jsonl", buf.Bytes(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			ms, err := NewModelServer("2pc", nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			fuzzHandlers = []http.Handler{ts.Handler(), ms.Handler()}
		})
		if !strings.HasPrefix(u, "/") {
			u = "/" + u
		}
		req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1"+u, nil)
		if err != nil {
			return // not a request a client could send
		}
		for _, h := range fuzzHandlers {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code >= 500 {
				t.Fatalf("GET %q: %d %s", u, w.Code, w.Body.Bytes())
			}
			if w.Code >= 400 && !json.Valid(w.Body.Bytes()) {
				t.Fatalf("GET %q: %d with a body that is not JSON: %s", u, w.Code, w.Body.Bytes())
			}
		}
	})
}
