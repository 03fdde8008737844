package reports

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/sim"
)

func sampleRun() Run {
	recs := []sim.TraceRecord{
		{I: 0, T: 0, Ev: "start", Node: "a", Out: []sim.TraceEffect{{Op: "send", To: "b", Kind: "Ping", At: 10}, {Op: "send", To: "c", Kind: "Ping", Lost: "partition"}}},
		{I: 1, T: 0, Ev: "start", Node: "b"},
		{I: 2, T: 5, Ev: "partition", Why: "a | b c"},
		{I: 3, T: 10, Ev: "recv", Node: "b", From: "a", Kind: "Ping", Out: []sim.TraceEffect{{Op: "send", To: "a", Kind: "Pong", At: 30}}},
		{I: 4, T: 20, Ev: "crash", Node: "c"},
		{I: 5, T: 25, Ev: "heal"},
		{I: 6, T: 30, Ev: "recv", Node: "a", From: "b", Kind: "Pong"},
		{I: 7, T: 40, Ev: "restart", Node: "c"},
	}
	return Run{Title: "t seed 1", Scenario: "t", Seed: 1, Repro: "simrun run t --seed 1", Nodes: []string{"a", "b", "c"}, Records: recs,
		Verdicts: []VerdictLine{{Class: "ok", Property: "p"}}}
}

// The page's numbers are the trace's: messages by kind (sent, delivered, lost), the
// fault periods (a down node, a partition), and the sends on the diagram.
func TestRunAnalysis(t *testing.T) {
	r := sampleRun()
	d := analyze(&r)
	if got := d.byKind["Ping"]; got != [3]int{2, 1, 1} {
		t.Fatalf("Ping counts %v, want sent 2, delivered 1, lost 1", got)
	}
	if got := d.byKind["Pong"]; got != [3]int{1, 1, 0} {
		t.Fatalf("Pong counts %v", got)
	}
	if len(d.sends) != 3 || d.sends[1].lost != "partition" || d.sends[2].sent != 10 || d.sends[2].recv != 30 {
		t.Fatalf("sends %+v", d.sends)
	}
	var down, part bool
	for _, s := range d.spans {
		down = down || (s.node == 2 && s.from == 20 && s.to == 40)
		part = part || (s.node == -1 && s.from == 5 && s.to == 25 && s.what == "partition")
	}
	if !down || !part {
		t.Fatalf("spans %+v: want c down 20-40 and a partition 5-25", d.spans)
	}
	// Untimed (a model-checker trace): event order is the time, deliveries matched.
	for i := range r.Records {
		r.Records[i].T = 0
		for j := range r.Records[i].Out {
			r.Records[i].Out[j].At = 0
		}
	}
	d = analyze(&r)
	if !d.logical || d.sends[0].recv != 4 || d.sends[2].sent != 4 || d.sends[2].recv != 7 {
		t.Fatalf("untimed sends %+v", d.sends)
	}
}

func TestRunPage(t *testing.T) {
	dir := t.TempDir()
	files, err := WriteRun(dir, sampleRun())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 5 {
		t.Fatalf("files %v", files)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	for _, want := range []string{"simrun run t --seed 1", `src="timeline.svg"`, `src="messages-1.svg"`, "<td>Ping</td><td>2</td><td>1</td><td>1</td>"} {
		if !strings.Contains(string(page), want) {
			t.Fatalf("page lacks %q", want)
		}
	}
	if testing.Short() {
		t.Log("-short: the run page without client operations is not opened in Chromium (the page with them is)")
	} else if got := openInBrowser(t, filepath.Join(dir, "index.html")); got != "ok" {
		t.Fatalf("run page in the browser: %s", got)
	}
	if strings.Contains(string(page), `id="latency"`) {
		t.Fatal("a run without client operations has a latency section")
	}
	// With the workload's operations: a latency plot, its points equal to the ops.
	r := sampleRun()
	r.Ops = []Op{{Call: 0, Return: 10e6}, {Call: 20e6, Return: 50e6}, {Call: 30e6, Pending: true}}
	dir = t.TempDir()
	if _, err := WriteRun(dir, r); err != nil {
		t.Fatal(err)
	}
	page, _ = os.ReadFile(filepath.Join(dir, "index.html"))
	if !strings.Contains(string(page), `src="latency.svg"`) || !strings.Contains(string(page), "The 3 client operations") {
		t.Fatal("page lacks the latency plot")
	}
	done, pending, _ := latencyPoints(r.Ops)
	var pts []string
	for _, xy := range append(done, pending...) {
		pts = append(pts, fmt.Sprintf("%g,%g", xy.X, xy.Y))
	}
	if got := strings.Join(pts, " "); got != "0,10 0.02,30 0.03,33" {
		t.Fatalf("latency points %s, want 0,10 0.02,30 and the pending call at the top (0.03,33)", got)
	}
	if got := openInBrowser(t, filepath.Join(dir, "index.html")); got != "ok" {
		t.Fatalf("run page with latency in the browser: %s", got)
	}
}

// A long run's diagram is paged.
func TestRunPaged(t *testing.T) {
	r := Run{Title: "long", Nodes: []string{"a", "b"}}
	for i := range 2*MessagesPerPage + 1 {
		r.Records = append(r.Records, sim.TraceRecord{I: int64(i), T: sim.Time(i * 10), Ev: "recv", Node: "a", From: "b", Kind: "M",
			Out: []sim.TraceEffect{{Op: "send", To: "b", Kind: "M", At: sim.Time(i*10 + 5)}}})
	}
	dir := t.TempDir()
	if _, err := WriteRun(dir, r); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"messages-1.svg", "messages-2.svg", "messages-3.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
}

func TestSweepPage(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteRun(filepath.Join(dir, "seed-7"), sampleRun()); err != nil {
		t.Fatal(err)
	}
	tb := NewTable("", "property", "ok")
	tb.Add("p", 9)
	s := Sweep{Scenario: "t", Seeds: "1-10", Runs: 10, Failed: 1, Command: "simrun sweep t --seeds 1-10",
		ByClass: [][2]string{{"safety", "1"}, {"ok", "9"}}, ByProperty: tb,
		Measures: []Measure{{Name: "events", Values: []float64{5, 6, 7, 7, 9, 10, 11, 12, 12, 13}}},
		Failures: []FailingSeed{{Seed: 7, Verdict: "safety p: broken", Repro: "simrun run t --seed 7", Page: "seed-7/index.html"}}}
	if _, err := WriteSweep(dir, s); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	for _, want := range []string{`href="seed-7/index.html"`, "simrun run t --seed 7", `<img src="hist-1.svg"`, "<td>events</td><td>10</td><td>9.2</td>"} {
		if !strings.Contains(string(page), want) {
			t.Fatalf("sweep page lacks %q", want)
		}
	}
	if got := openInBrowser(t, filepath.Join(dir, "index.html")); got != "ok" {
		t.Fatalf("sweep page in the browser: %s", got)
	}
}

// A long run's report stays bounded: the diagram stops after MaxMessagePages pages and
// says how many messages it did not draw; a prefix of the events (Omitted) is named.
func TestRunPagesCapped(t *testing.T) {
	r := Run{Title: "very long", Nodes: []string{"a", "b"}, Omitted: 12345}
	n := (MaxMessagePages + 3) * MessagesPerPage
	for i := range n {
		r.Records = append(r.Records, sim.TraceRecord{I: int64(i), T: sim.Time(i * 10), Ev: "recv", Node: "a", From: "b", Kind: "M",
			Out: []sim.TraceEffect{{Op: "send", To: "b", Kind: "M", At: sim.Time(i*10 + 5)}}})
	}
	dir := t.TempDir()
	if _, err := WriteRun(dir, r); err != nil {
		t.Fatal(err)
	}
	svgs, _ := filepath.Glob(filepath.Join(dir, "messages-*.svg"))
	if len(svgs) != MaxMessagePages {
		t.Fatalf("%d diagram pages, want %d", len(svgs), MaxMessagePages)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"750 later messages are counted below but not drawn", "12345 later events are left out"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
