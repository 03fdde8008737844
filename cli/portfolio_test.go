package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/model"
)

// A model with a portfolio: two configurations of TwoPhase that pass, and one of 2pc
// whose sometimes-witness cannot exist without crashes (exit 1 in the last, so the
// portfolio's exit is the worst).
func init() {
	two, _ := model.Lookup("twophase")
	model.Register(model.Model{
		Name: "test-portfolio", Help: "twophase as a portfolio (tests)", Params: two.Params, Build: two.Build,
		Portfolio: []model.Config{
			{Name: "rm3", Help: "three resource managers", Params: map[string]string{"rm": "3"}},
			{Name: "rm4", Help: "four", Params: map[string]string{"rm": "4"}},
		},
	})
	model.Register(model.Model{
		Name: "test-portfolio-bounded", Help: "a portfolio whose second configuration hits its state bound", Params: two.Params, Build: two.Build,
		Portfolio: []model.Config{
			{Name: "rm2", Params: map[string]string{"rm": "2"}},
			{Name: "rm5-bounded", Params: map[string]string{"rm": "5"}, MaxStates: 100},
		},
	})
}

func TestCheckPortfolio(t *testing.T) {
	var out, errb bytes.Buffer
	code := runMain(&env{stdout: &out, stderr: &errb}, []string{"check", "test-portfolio"})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"portfolio test-portfolio: 2 configurations", "rm3 ", "rm4 ", "288 ", "1568 ", "states/cpu-s", "simrun check test-portfolio -p rm=4: four"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// --config picks one; -p still picks parameters.
	out.Reset()
	if code := runMain(&env{stdout: &out, stderr: &errb}, []string{"check", "test-portfolio", "--config", "rm4"}); code != 0 || !strings.Contains(out.String(), "1568 distinct") {
		t.Fatalf("--config rm4: exit %d\n%s", code, out.String())
	}
	out.Reset()
	if code := runMain(&env{stdout: &out, stderr: &errb}, []string{"check", "test-portfolio", "-p", "rm=2"}); code != 0 || strings.Contains(out.String(), "configurations") {
		t.Fatalf("-p rm=2: exit %d\n%s", code, out.String())
	}
	// JSON: one object per configuration.
	out.Reset()
	if code := runMain(&env{stdout: &out, stderr: &errb}, []string{"check", "test-portfolio", "--json"}); code != 0 {
		t.Fatalf("--json: exit %d", code)
	}
	var js struct {
		Model     string
		Portfolio []struct {
			Config   string
			Distinct int64
		}
	}
	if err := json.Unmarshal(out.Bytes(), &js); err != nil || len(js.Portfolio) != 2 || js.Portfolio[1].Config != "rm4" || js.Portfolio[1].Distinct != 1568 {
		t.Fatalf("JSON %v %+v", err, js)
	}
	// A bounded configuration makes the portfolio inconclusive (exit 4), not ok.
	out.Reset()
	if code := runMain(&env{stdout: &out, stderr: &errb}, []string{"check", "test-portfolio-bounded"}); code != exitInconclusive || !strings.Contains(out.String(), "inconclusive: bound reached (max-states)") {
		t.Fatalf("bounded portfolio: exit %d\n%s", code, out.String())
	}
	for _, bad := range [][]string{
		{"check", "test-portfolio", "--config", "nope"},
		{"check", "test-portfolio", "--config", "rm3", "-p", "rm=2"},
		{"check", "test-portfolio", "--trace", "x.jsonl"},
		{"check", "twophase", "--config", "x"},
		{"check", "twophase", "--progress", "sometimes"},
	} {
		out.Reset()
		errb.Reset()
		if code := runMain(&env{stdout: &out, stderr: &errb}, bad); code != exitUsage || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
			t.Errorf("%q: exit %d stderr %q", bad, code, errb.String())
		}
	}
}

// Without a terminal, --progress auto prints a plain line about every interval;
// never prints nothing; the live line only on a terminal.
func TestProgressLinesWhenPiped(t *testing.T) {
	old, oldc := progressLineEvery, checkProgressEvery
	progressLineEvery, checkProgressEvery = 0, time.Millisecond
	defer func() { progressLineEvery, checkProgressEvery = old, oldc }()
	var out, errb bytes.Buffer
	if code := runMain(&env{stdout: &out, stderr: &errb}, []string{"check", "twophase", "-p", "rm=7"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(errb.String(), "check twophase: ") || strings.Contains(errb.String(), "\r") || !strings.Contains(errb.String(), "done in") {
		t.Fatalf("piped progress: %q", errb.String())
	}
	errb.Reset()
	runMain(&env{stdout: &out, stderr: &errb}, []string{"sweep", "demo/happy", "--seeds", "1-4", "--workers", "1"})
	if !strings.Contains(errb.String(), "demo/happy: ") || !strings.Contains(errb.String(), "seeds/s") || strings.Contains(errb.String(), "\r") {
		t.Fatalf("piped sweep progress: %q", errb.String())
	}
	errb.Reset()
	runMain(&env{stdout: &out, stderr: &errb}, []string{"sweep", "demo/happy", "--seeds", "1-4", "--progress", "never"})
	if errb.Len() != 0 {
		t.Fatalf("--progress never: %q", errb.String())
	}
}

// --store bitstate:SIZE runs a depth-first bitstate search: it finds a violation (exit
// 1, a trace that replays) and otherwise is sampled (exit 4) with its estimate of what
// it missed; bad values exit 2.
func TestCheckBitstate(t *testing.T) {
	var out, errb bytes.Buffer
	code := runMain(&env{stdout: &out, stderr: &errb}, []string{"check", "twophase", "-p", "rm=5", "--store", "bitstate:4MiB"})
	if code != exitInconclusive || !strings.Contains(out.String(), "seen-set  bitstate 4.0 MiB, 3 hash functions") || !strings.Contains(out.String(), "strategy  dfs") {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	code = runMain(&env{stdout: &out, stderr: &errb}, []string{"check", "2pc", "-p", "participants=2", "--store", "bitstate:4MiB", "--seed", "7", "--config", "x"})
	if code != exitUsage {
		t.Fatalf("--config on a model without a portfolio: exit %d", code)
	}
	for _, bad := range [][]string{
		{"check", "twophase", "--store", "bitstate:"},
		{"check", "twophase", "--store", "bitstate:-1MiB"},
		{"check", "twophase", "--store", "exact"},
		{"check", "twophase", "--store", "bitstate:1MiB", "--strategy", "bfs"},
		{"check", "twophase", "--seed", "3"},
	} {
		errb.Reset()
		if code := runMain(&env{stdout: &out, stderr: &errb}, bad); code != exitUsage || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
			t.Errorf("%q: exit %d stderr %q", bad, code, errb.String())
		}
	}
}
