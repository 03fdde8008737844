package reports_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/simrun-dev/simrun/reports"
	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// A run page counts every lost message the run counts (issue 32 §2): demo/faults seed
// 3 loses 6 messages at their send (the receiver down) and 2 in flight (their receiver
// crashed before they arrived); the page once showed 6 against the CLI's and the
// JSON's 8. Both kinds are drawn: the in-flight ones reach their receiver's lane.
func TestRunPageCountsEveryLoss(t *testing.T) {
	sc, err := scenarios.Lookup("demo/faults")
	if err != nil {
		t.Fatal(err)
	}
	col := &sim.RecordCollector{}
	rep, err := scenarios.Run(sc, scenarios.Options{Seed: 3, Tracer: col})
	if err != nil {
		t.Fatal(err)
	}
	inflight := 0
	for _, r := range col.Records {
		if r.Ev == "lost" && r.From != "env" {
			inflight++
		}
	}
	if inflight == 0 || rep.Result.Messages.Lost <= int64(inflight) {
		t.Fatalf("seed 3 no longer loses messages both ways (%d in flight of %d): pick another", inflight, rep.Result.Messages.Lost)
	}
	dir := t.TempDir()
	if _, err := reports.WriteRun(dir, reports.Run{Title: "demo/faults seed 3", Nodes: rep.Result.Names(), Records: col.Records}); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile(`<tr><td>[^<]+</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td></tr>`).FindAllStringSubmatch(string(page), -1)
	var lostByKind, lostByNode, sent int64
	for i, r := range rows {
		n, _ := strconv.ParseInt(r[3], 10, 64)
		s, _ := strconv.ParseInt(r[1], 10, 64)
		if i < len(rep.Result.ByKind) {
			lostByKind += n
			sent += s
		} else {
			lostByNode += n
		}
	}
	if want := rep.Result.Messages.Lost; lostByKind != want || lostByNode != want || sent != rep.Result.Messages.Sent {
		t.Errorf("the page counts %d lost by kind, %d by node, %d sent; the run %d lost, %d sent", lostByKind, lostByNode, sent, want, rep.Result.Messages.Sent)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "messages-1.svg"))
	if got := regexp.MustCompile(`lost on arrival`).FindAll(svg, -1); len(got) != inflight {
		t.Errorf("the diagram draws %d messages lost on arrival, the trace has %d", len(got), inflight)
	}
}
