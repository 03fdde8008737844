package twophase_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/sim"
)

// ParsePath accepts "0.3.1" and nothing else, with a one-line reason.
func TestParsePath(t *testing.T) {
	p, err := model.ParsePath("2.0.13")
	if err != nil || p.Init != 2 || len(p.Steps) != 2 || p.Steps[1] != 13 || p.String() != "2.0.13" {
		t.Fatalf("%+v %v", p, err)
	}
	if q := p.Then(4); q.String() != "2.0.13.4" || p.String() != "2.0.13" || q.Prefix(1).String() != "2.0" {
		t.Fatalf("Then/Prefix: %s %s", q, p)
	}
	for _, bad := range []string{"", ".", "0.", "a", "0.-1", "0.+1", "0.01", "0. 1", "0.99999999999"} {
		if _, err := model.ParsePath(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

// The explorer agrees with the checker: an action's successor has the fingerprint the
// action lists, the counterexample's path ends where the invariant fails and holds one
// step earlier, and a trace maps back to its path.
func TestExplorerAgreesWithChecker(t *testing.T) {
	m, err := model.Lookup("2pc")
	if err != nil {
		t.Fatal(err)
	}
	sys, p, err := m.Instantiate(nil)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := model.NewExplorer(sys)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ex.View(model.Path{})
	if err != nil {
		t.Fatal(err)
	}
	for depth := 0; depth < 6 && len(v.Actions) > 0; depth++ {
		a := v.Actions[len(v.Actions)-1]
		next, err := ex.View(mustPath(t, a.Path))
		if err != nil {
			t.Fatal(err)
		}
		if next.Fingerprint != a.Fingerprint || next.Depth != depth+1 || len(next.Records) != len(next.Step) {
			t.Fatalf("depth %d: action %q promised %s, got %s", depth, a.Name, a.Fingerprint, next.Fingerprint)
		}
		v = next
	}
	var pe *model.PathError
	if _, err := ex.View(model.Path{Steps: []int{99}}); !errors.As(err, &pe) || !strings.Contains(err.Error(), "enabled actions") {
		t.Fatalf("out-of-range step: %v", err)
	}
	res, err := model.Check(sys, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range res.Properties {
		path, ok := res.PathOf(pr)
		if !ok {
			continue
		}
		end, err := ex.View(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range end.Properties {
			if q.Name == pr.Name && q.Holds != (pr.Kind == model.SometimesKind) {
				t.Fatalf("%s %s: holds=%v at the end of its path", pr.Kind, pr.Name, q.Holds)
			}
		}
		var buf bytes.Buffer
		hdr := model.TraceHeader{Format: sim.TraceFormat, Engine: model.TraceEngine, Scenario: m.Name, Params: p.Values(), Property: pr.Name, Kind: pr.Kind}
		if err := res.WriteTrace(&buf, pr, hdr); err != nil {
			t.Fatal(err)
		}
		back, matched, steps, err := ex.PathOfTrace(buf.Bytes())
		if err != nil || back.String() != path.String() || matched != steps || steps != len(path.Steps) {
			t.Fatalf("trace of %s maps to %s (%d of %d steps, %v), want %s", pr.Name, back, matched, steps, err, path)
		}
	}
}

func mustPath(t *testing.T, s string) model.Path {
	t.Helper()
	p, err := model.ParsePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
