package explore

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/sim"
)

//go:embed assets
var assets embed.FS

// Limits on requests: the server answers 4xx beyond them, never does the work.
const (
	// MaxQuery is the longest query string accepted (a path of 100 000 steps fits).
	MaxQuery = 1 << 20
	// MaxRecords is the most records one /api/records answer holds.
	MaxRecords = 2000
)

// Server serves the explorer's page and its JSON API (see the package doc) over one
// trace, one model, or both (a model-checker trace: its path and the state space
// around it).
type Server struct {
	mu sync.Mutex // guards the timeline's cursor and the explorer (neither is safe for concurrent use)
	tl *timeline
	ex *model.Explorer

	modelInfo *modelInfo
	sys       model.System
	checkOpts model.Options

	cmu   sync.Mutex
	check checkState
}

type modelInfo struct {
	Name       string            `json:"name"`
	Params     map[string]string `json:"params"`
	Properties []propInfo        `json:"properties"`
	Inits      int               `json:"inits"`
}

type propInfo struct {
	Name string     `json:"name"`
	Kind model.Kind `json:"kind"`
}

// Options configure a model's background check (the page's "check" button).
type Options struct {
	// MaxStates bounds the check (0 = unbounded).
	MaxStates int64
	// Workers for the BFS (0 = 1).
	Workers int
}

// NewTraceServer explores a trace file's contents: a simulator trace re-executed from
// its header, or a model-checker trace re-executed on its model (then the state space
// around its path can be browsed too).
func NewTraceServer(file string, data []byte, o Options) (*Server, error) {
	tl, err := loadTrace(file, data)
	if err != nil {
		return nil, err
	}
	s := &Server{tl: tl}
	if tl.Engine == model.TraceEngine {
		if err := s.setModel(tl.Name, tl.Params, o); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// NewModelServer explores a registered model's state space with the given parameters.
func NewModelServer(name string, params map[string]string, o Options) (*Server, error) {
	s := &Server{}
	if err := s.setModel(name, params, o); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) setModel(name string, params map[string]string, o Options) error {
	m, err := model.Lookup(name)
	if err != nil {
		return inputErr("%v", err)
	}
	sys, p, err := m.Instantiate(params)
	if err != nil {
		return inputErr("%v", err)
	}
	ex, err := model.NewExplorer(sys)
	if err != nil {
		return inputErr("%v", err)
	}
	v, err := ex.View(model.Path{})
	if err != nil {
		return err
	}
	info := &modelInfo{Name: m.Name, Params: p.Values(), Inits: v.Inits, Properties: []propInfo{}}
	for _, pr := range v.Properties {
		info.Properties = append(info.Properties, propInfo{pr.Name, pr.Kind})
	}
	_, actors := sys.(*model.Actors)
	s.ex, s.sys, s.modelInfo = ex, sys, info
	s.checkOpts = model.Options{Strategy: model.BFS, Workers: max(o.Workers, 1), MaxStates: o.MaxStates, Fair: actors}
	s.check.Status = "idle"
	return nil
}

// Handler returns the HTTP handler: the page at /, its assets, the API under /api/.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.static("assets/index.html", "text/html; charset=utf-8"))
	mux.HandleFunc("GET /app.js", s.static("assets/app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /app.css", s.static("assets/app.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /api/info", s.info)
	mux.HandleFunc("GET /api/records", s.needTrace(s.records))
	mux.HandleFunc("GET /api/step", s.needTrace(s.step))
	mux.HandleFunc("GET /api/find", s.needTrace(s.find))
	mux.HandleFunc("GET /api/overview", s.needTrace(s.overview))
	mux.HandleFunc("GET /api/state", s.needModel(s.state))
	mux.HandleFunc("GET /api/check", s.needModel(s.checkStatus))
	mux.HandleFunc("POST /api/check", s.needModel(s.startCheck))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/", "/app.js", "/app.css", "/api/info", "/api/records", "/api/step", "/api/find", "/api/overview", "/api/state":
			w.Header().Set("Allow", "GET")
			fail(w, http.StatusMethodNotAllowed, "%s %s: use GET", short(r.Method), r.URL.Path)
			return
		case "/api/check":
			w.Header().Set("Allow", "GET, POST")
			fail(w, http.StatusMethodNotAllowed, "%s %s: use GET or POST", short(r.Method), r.URL.Path)
			return
		}
		fail(w, http.StatusNotFound, "no such page or API endpoint: %s (the API is /api/info, /api/records, /api/step, /api/find, /api/overview, /api/state, /api/check)", short(r.URL.Path))
	})
	return guard(mux)
}

// guard refuses oversized requests and turns a panic in a handler into a 500 answer
// (the server goes on serving).
func guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if x := recover(); x != nil {
				if x == http.ErrAbortHandler {
					panic(x)
				}
				fail(w, http.StatusInternalServerError, "internal error: %v", x)
			}
		}()
		if len(r.URL.RawQuery) > MaxQuery {
			fail(w, http.StatusRequestURITooLong, "query of %d bytes (at most %d)", len(r.URL.RawQuery), MaxQuery)
			return
		}
		// A malformed query (k=%ZZ) is an error, not a parameter dropped silently (Go's
		// URL.Query drops it, and the page's step 0 answered).
		if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
			fail(w, http.StatusBadRequest, "malformed query: %s", short(err.Error()))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 1<<10)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

func (s *Server) static(name, ctype string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := assets.ReadFile(name)
		if err != nil {
			fail(w, http.StatusInternalServerError, "asset %s: %v", name, err)
			return
		}
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
		w.Write(b)
	}
}

func (s *Server) needTrace(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.tl == nil {
			fail(w, http.StatusNotFound, "this explorer has no trace (it was started on a model)")
			return
		}
		h(w, r)
	}
}

func (s *Server) needModel(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.ex == nil {
			fail(w, http.StatusNotFound, "this explorer has no model (it was started on a simulator trace)")
			return
		}
		h(w, r)
	}
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	out := struct {
		Trace *timeline  `json:"trace,omitempty"`
		Model *modelInfo `json:"model,omitempty"`
	}{s.tl, s.modelInfo}
	reply(w, out)
}

// ---- trace API ----

type recordJSON struct {
	sim.TraceRecord
	Step int `json:"step"`
	// SentBy is the index of the record that sent the message this record receives
	// (or loses), -1 when there is none.
	SentBy int `json:"sent_by"`
}

func (s *Server) records(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	from, err := intParam(q, "from", 0, 0, len(s.tl.recs))
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	count, err := intParam(q, "count", 200, 1, MaxRecords)
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	out := []recordJSON{}
	for i := from; i < len(s.tl.recs) && i < from+count; i++ {
		out = append(out, recordJSON{s.tl.recs[i], s.tl.recStep[i], s.tl.sentAt[i]})
	}
	reply(w, struct {
		From    int          `json:"from"`
		Total   int          `json:"total"`
		Records []recordJSON `json:"records"`
	}{from, len(s.tl.recs), out})
}

func (s *Server) step(w http.ResponseWriter, r *http.Request) {
	k, err := intParam(r.URL.Query(), "k", 0, 0, s.tl.Steps)
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	// Step k-1 first, then k: the cursor only moves forward, so stepping forward
	// re-executes one event per request (going back re-executes from the start).
	s.mu.Lock()
	var before, now sim.Snapshot
	if k > 0 {
		before, err = s.tl.snapshot(k - 1)
	}
	if err == nil {
		now, err = s.tl.snapshot(k)
	}
	s.mu.Unlock()
	if err != nil {
		fail(w, http.StatusInternalServerError, "re-executing to step %d: %v", k, err)
		return
	}
	lines := flatten(now)
	changes := []change{}
	if k > 0 {
		changes = diff(flatten(before), lines)
	}
	recs := []recordJSON{}
	index := -1
	for i, st := range s.tl.recStep {
		if st == k {
			if index < 0 {
				index = i
			}
			recs = append(recs, recordJSON{s.tl.recs[i], st, s.tl.sentAt[i]})
		}
	}
	reply(w, struct {
		Step    int          `json:"step"`
		Index   int          `json:"index"`
		Records []recordJSON `json:"records"`
		State   sim.Snapshot `json:"state"`
		Lines   []line       `json:"lines"`
		Diff    []change     `json:"diff"`
		Changed []string     `json:"changed_nodes"`
	}{k, index, recs, now, lines, changes, changedNodes(changes, s.tl.Nodes)})
}

func (s *Server) find(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	from, err := intParam(q, "from", 0, 0, s.tl.Steps)
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	dir := q.Get("dir")
	if dir != "next" && dir != "prev" {
		fail(w, http.StatusBadRequest, "dir %q: want next or prev", short(dir))
		return
	}
	node, kind := q.Get("node"), q.Get("kind")
	if node != "" && !slices.Contains(s.tl.Nodes, node) {
		fail(w, http.StatusBadRequest, "no node %q in this trace", short(node))
		return
	}
	if kind != "" && !slices.Contains(s.tl.Kinds, kind) {
		fail(w, http.StatusBadRequest, "no message kind %q in this trace", short(kind))
		return
	}
	found := -1
	if dir == "next" {
		for i := range s.tl.recs {
			if st := s.tl.recStep[i]; st > from && s.tl.matches(i, node, kind) {
				found = st
				break
			}
		}
	} else {
		for i := len(s.tl.recs) - 1; i >= 0; i-- {
			if st := s.tl.recStep[i]; st < from && s.tl.matches(i, node, kind) {
				found = st
				break
			}
		}
	}
	reply(w, struct {
		Step int `json:"step"`
	}{found})
}

// overview summarizes the whole run for the page's overview strip: the steps cut into
// width buckets, and per node how many of its events fall in each, and in which
// buckets it crashed.
func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	width, err := intParam(r.URL.Query(), "width", 600, 10, 4000)
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	idx := map[string]int{}
	for i, n := range s.tl.Nodes {
		idx[n] = i
	}
	counts := make([][]int, len(s.tl.Nodes))
	crashes := make([][]int, len(s.tl.Nodes))
	for i := range counts {
		counts[i] = make([]int, width)
		crashes[i] = []int{}
	}
	steps := max(s.tl.Steps, 1)
	bucket := func(step int) int { return min(max(step-1, 0)*width/steps, width-1) }
	for i, rec := range s.tl.recs {
		n, ok := idx[rec.Node]
		if !ok {
			continue
		}
		b := bucket(s.tl.recStep[i])
		counts[n][b]++
		if rec.Ev == "crash" {
			crashes[n] = append(crashes[n], b)
		}
	}
	reply(w, struct {
		Width   int      `json:"width"`
		Steps   int      `json:"steps"`
		Nodes   []string `json:"nodes"`
		Counts  [][]int  `json:"counts"`
		Crashes [][]int  `json:"crashes"`
	}{width, s.tl.Steps, s.tl.Nodes, counts, crashes})
}

// ---- model API ----

func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	raw := r.URL.Query().Get("path")
	if raw == "" {
		raw = "0" // the initial state
	}
	p, err := model.ParsePath(raw)
	if err != nil {
		fail(w, http.StatusBadRequest, "path: %v", err)
		return
	}
	s.mu.Lock()
	v, err := s.ex.View(p)
	var parent *model.View
	if err == nil && len(p.Steps) > 0 {
		parent, err = s.ex.View(p.Prefix(len(p.Steps) - 1))
	}
	s.mu.Unlock()
	var pe *model.PathError
	switch {
	case errors.As(err, &pe):
		fail(w, http.StatusNotFound, "path %s: %v", short(raw), pe)
		return
	case err != nil:
		fail(w, http.StatusInternalServerError, "path %s: %v", short(raw), err)
		return
	}
	lines := flatten(v.State)
	changes := []change{}
	if parent != nil {
		changes = diff(flatten(parent.State), lines)
	}
	var nodes []string
	for _, n := range v.State.Nodes {
		nodes = append(nodes, n.Name)
	}
	reply(w, struct {
		*model.View
		SentBy  []int    `json:"sent_by"`
		Lines   []line   `json:"lines"`
		Diff    []change `json:"diff"`
		Changed []string `json:"changed_nodes"`
	}{v, sentBy(v.Records), lines, changes, changedNodes(changes, nodes)})
}

// checkState is the background check's progress and result.
type checkState struct {
	Status     string      `json:"status"` // idle, running, done, error
	Error      string      `json:"error,omitempty"`
	Stats      model.Stats `json:"stats"`
	Outcome    string      `json:"outcome,omitempty"`
	Bound      string      `json:"bound,omitempty"`
	Properties []checkProp `json:"properties,omitempty"`
}

type checkProp struct {
	Name   string     `json:"name"`
	Kind   model.Kind `json:"kind"`
	Status string     `json:"status"`
	// Path is the counterexample's or witness' path ("" when there is none).
	Path  string `json:"path,omitempty"`
	Depth int    `json:"depth,omitempty"`
	Cycle int    `json:"cycle,omitempty"`
	Why   string `json:"why,omitempty"`
}

func (s *Server) checkStatus(w http.ResponseWriter, r *http.Request) {
	s.cmu.Lock()
	c := s.check
	s.cmu.Unlock()
	reply(w, c)
}

// startCheck starts the model check once (a second POST reports the running or
// finished check).
func (s *Server) startCheck(w http.ResponseWriter, r *http.Request) {
	s.cmu.Lock()
	if s.check.Status == "idle" {
		s.check.Status = "running"
		go s.runCheck()
	}
	c := s.check
	s.cmu.Unlock()
	reply(w, c)
}

func (s *Server) runCheck() {
	o := s.checkOpts
	o.ProgressEvery = 500 * time.Millisecond
	o.Progress = func(st model.Stats) {
		s.cmu.Lock()
		s.check.Stats = st
		s.cmu.Unlock()
	}
	res, err := model.Check(s.sys, o)
	s.cmu.Lock()
	defer s.cmu.Unlock()
	if err != nil {
		s.check.Status, s.check.Error = "error", err.Error()
		return
	}
	s.check.Status, s.check.Stats, s.check.Outcome, s.check.Bound = "done", res.Stats, res.Outcome.String(), res.Bound
	for _, pr := range res.Properties {
		cp := checkProp{Name: pr.Name, Kind: pr.Kind, Status: pr.Status.String(), Depth: pr.Depth, Cycle: pr.Cycle, Why: pr.Why}
		if p, ok := res.PathOf(pr); ok {
			cp.Path = p.String()
		}
		s.check.Properties = append(s.check.Properties, cp)
	}
}

// ---- helpers ----

func reply(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fail(w, http.StatusInternalServerError, "encoding the answer: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(b, '\n'))
}

func fail(w http.ResponseWriter, code int, format string, a ...any) {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{fmt.Sprintf(format, a...)})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// intParam reads an integer query parameter: def when absent, an error when given
// empty (k=) or not an integer in [lo, hi].
func intParam(q url.Values, name string, def, lo, hi int) (int, error) {
	if !q.Has(name) {
		return def, nil
	}
	v := q.Get(name)
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want an integer", name, short(v))
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%s=%d: want %d to %d", name, n, lo, hi)
	}
	return n, nil
}

func short(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
