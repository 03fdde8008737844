package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/simrun-dev/simrun/scenarios"
	"github.com/simrun-dev/simrun/sim"
)

// replayer re-executes a trace of another engine (the model checker registers one) and
// returns the re-executed trace bytes.
type replayer func(data []byte) ([]byte, error)

var replayers = map[string]replayer{}

func init() {
	register(&command{
		name:  "replay",
		args:  "FILE [--format text|mermaid] [--events N]",
		short: "re-execute a trace from its header; exit 1 naming the first line that differs",
		run:   cmdReplay,
	})
}

func cmdReplay(e *env, args []string) error {
	c := commands["replay"]
	fs := newFlags(e, c)
	format := fs.String("format", "text", "text, or mermaid to also draw the trace as a sequence diagram")
	events := fs.Int("events", 80, "mermaid: draw at most `N` events (0 = all)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := exactlyArgs(c, pos, 1); err != nil {
		return err
	}
	if *format != "text" && *format != "mermaid" {
		return usageErr("replay: --format %q: want text or mermaid", *format)
	}
	if *events < 0 {
		return usageErr("replay: --events must be >= 0 (0 draws every event), got %d", *events)
	}
	f, err := scenarios.OpenTrace(pos[0])
	if err != nil {
		return usageErr("replay: %v", err)
	}
	defer f.Close()
	ts, err := scenarios.NewTraceStream(f)
	if err != nil {
		return usageErr("replay: %s: %v", pos[0], err)
	}
	h := ts.Header
	var res scenarios.ReplayResult
	var data []byte // the whole trace, when it is read whole
	end := ""
	if h.Engine == "sim" && *format == "text" {
		// compared as it is read: a trace of any size
		res, end, err = ts.Replay()
	} else if data, err = ts.ReadAll(); err != nil {
		return usageErr("replay: %s: %v", pos[0], err)
	} else if h.Engine == "sim" {
		res, err = scenarios.Replay(data)
		end = scenarios.FooterEnd(data)
	} else if rp, ok := replayers[h.Engine]; ok {
		var got []byte
		got, err = rp(data)
		if err == nil {
			res = scenarios.CompareLines(data, got)
			end = scenarios.FooterEnd(data)
		}
	} else {
		return usageErr("replay: %s: unknown trace engine %q", pos[0], h.Engine)
	}
	if err != nil {
		return err
	}
	if *format == "mermaid" {
		recs, names, err := readRecords(data)
		if err != nil {
			return usageErr("replay: %s: %v", pos[0], err)
		}
		if err := sim.WriteMermaid(e.stdout, names, recs, *events); err != nil {
			return err
		}
	}
	if !res.Same() {
		fmt.Fprintf(e.stdout, "line %d differs\n  file: %s\n  run:  %s\n", res.Line, orEOF(res.Want), orEOF(res.Got))
		return violated("replay differs at line %d of %s", res.Line, pos[0])
	}
	if *format == "text" {
		fmt.Fprintf(e.stdout, "replay ok: %d lines identical (%s, %s seed %d)\n", res.Lines, pos[0], h.Scenario, h.Seed)
		// The footer's end was re-evaluated on the re-executed path (for a model
		// counterexample: the property re-checked), so identical lines mean the
		// verdict reproduced; say which.
		if end != "" {
			what := "ends"
			if strings.HasPrefix(end, "violation") || strings.HasPrefix(end, "witness") {
				what = "reproduced"
			}
			fmt.Fprintf(e.stdout, "%s: %s\n", what, end)
		}
	}
	return nil
}

func orEOF(s string) string {
	if s == "" {
		return "(end of trace)"
	}
	return s
}

// readRecords parses the event lines of a trace (not the header or footer) and the
// node names in order of first appearance.
func readRecords(data []byte) ([]sim.TraceRecord, []string, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	var recs []sim.TraceRecord
	var names []string
	seen := map[string]bool{}
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			continue
		}
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &probe); err != nil {
			return nil, nil, fmt.Errorf("line %d: %v", line, err)
		}
		if _, ok := probe["ev"]; !ok {
			continue // footer
		}
		var r sim.TraceRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, nil, fmt.Errorf("line %d: %v", line, err)
		}
		for _, n := range []string{r.Node, r.From} {
			if n != "" && n != "env" && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
		recs = append(recs, r)
	}
	return recs, names, sc.Err()
}
