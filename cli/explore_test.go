package cli

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// explore serves until stopped: the hook fetches the page and the API from the URL it
// printed, then stops it; the command ends with exit 0.
func TestExploreServesAndStops(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "cex.jsonl")
	if code, _, stderr := cli(t, "run", "exactlyonce/in-doubt", "--seed", "2", "--trace", trace); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{{"explore", trace}, {"explore", "2pc", "-p", "participants=3"}} {
		var mu sync.Mutex
		var got []string
		exploreHook = func(url string, stop func()) {
			defer stop()
			for _, p := range []string{"", "app.js", "api/info"} {
				resp, err := http.Get(url + p)
				if err != nil {
					t.Error(err)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				got = append(got, resp.Status+" "+string(b))
				mu.Unlock()
			}
		}
		code, stdout, stderr := cli(t, args...)
		exploreHook = nil
		if code != 0 || !strings.Contains(stdout, "at http://127.0.0.1:") || !strings.Contains(stdout, "explore: stopped") {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		if len(got) != 3 || !strings.Contains(got[0], "<title>simrun explore</title>") || !strings.HasPrefix(got[2], "200 OK {") {
			t.Fatalf("%v: answers %.300q", args, got)
		}
		if args[1] == "2pc" && !strings.Contains(got[2], `"participants":"3"`) {
			t.Fatalf("the -p parameter did not reach the model: %.300s", got[2])
		}
	}
}

// Bad input: one line, exit 2, and nothing served.
func TestExploreBadInput(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.jsonl")
	if err := os.WriteFile(junk, []byte("not a trace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exploreHook = func(url string, stop func()) { t.Errorf("served %s on bad input", url); stop() }
	defer func() { exploreHook = nil }()
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"missing argument", []string{"explore"}},
		{"neither a trace file nor a model", []string{"explore", "no-such-thing"}},
		{"not a simrun trace", []string{"explore", junk}},
		{"-p applies to a model", []string{"explore", junk, "-p", "x=1"}},
		{"unknown", []string{"explore", "2pc", "-p", "nope=1"}},
		{"not a loopback address", []string{"explore", "2pc", "--addr", "0.0.0.0:0"}},
		{"--addr", []string{"explore", "2pc", "--addr", "nonsense"}},
		{"--workers", []string{"explore", "2pc", "--workers", "0"}},
		{"--max-states", []string{"explore", "2pc", "--max-states", "-5"}},
		{"--max-states must be > 0 (got 0; omit it for no bound)", []string{"explore", "2pc", "--max-states", "0"}}, // as check says
	} {
		oneLineErr(t, tc.want, tc.args...)
	}
}

// A non-loopback address with --public is served, with a warning.
func TestExplorePublicWarns(t *testing.T) {
	exploreHook = func(url string, stop func()) { stop() }
	defer func() { exploreHook = nil }()
	var out, errb bytes.Buffer
	code := runMain(&env{stdout: &out, stderr: &errb}, []string{"explore", "2pc", "--addr", "0.0.0.0:0", "--public"})
	if code != 0 || !strings.Contains(errb.String(), "warning") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}
