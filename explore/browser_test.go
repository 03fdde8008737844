package explore

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/internal/browsertest"
)

// The page in a real browser: headless Chromium opens it with ?selftest=1, and the
// page's own script steps through the trace (forward, back, to the first violation,
// with a node filter), follows three actions in the state space, and checks that the
// step label, URL, event list, diagram, diff and state cards render — failing on any
// console or script error.
func TestExplorerInBrowser(t *testing.T) {
	fixtures(t)
	simSrv, err := NewTraceServer("coord.jsonl", simTrace, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cexSrv, err := NewTraceServer("cex.jsonl", modTrace, Options{})
	if err != nil {
		t.Fatal(err)
	}
	modSrv, err := NewModelServer("2pc", nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	specSrv, err := NewModelServer("twophase", map[string]string{"rm": "2"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A discrete-time counterexample: its clock ticks change no node (an empty diff
	// once broke the page).
	lsTrace, err := checkTrace("leasing", map[string]string{"bug": "grantor-late"})
	if err != nil {
		t.Fatal(err)
	}
	lsSrv, err := NewTraceServer("ls.jsonl", lsTrace, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		srv   *Server
		short bool // runs under -short: one page of each view
	}{{"simulator trace", simSrv, true}, {"model-checker counterexample", cexSrv, false}, {"actor model", modSrv, true}, {"plain spec", specSrv, false}, {"discrete-time counterexample", lsSrv, false}} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && !tc.short {
				t.Skip("-short: one Chromium self-check per view (simulator trace, actor model); this page's runs in the full suite")
			}
			ts := serve(t, tc.srv)
			if got := browsertest.SelfCheck(t, ts.URL+"/?selftest=1", 20*time.Second); got != "ok" {
				t.Fatalf("self-check: %s", got)
			}
		})
	}
	// The self-check can fail: an API that answers 500 for every step is caught.
	t.Run("broken API is caught", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: the check that a broken API fails the self-check runs in the full suite")
		}
		h := simSrv.Handler()
		ts := serve(t, &Server{})
		ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/api/step") {
				fail(w, http.StatusInternalServerError, "broken on purpose")
				return
			}
			h.ServeHTTP(w, r)
		})
		if got := browsertest.SelfCheck(t, ts.URL+"/?selftest=1", 20*time.Second); got == "ok" {
			t.Fatal("a page whose steps fail to load passed its self-check")
		}
	})
}
