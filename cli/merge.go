package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/simrun-dev/simrun/internal/inputfile"
	"github.com/simrun-dev/simrun/scenarios"
)

func init() {
	register(&command{
		name:  "merge",
		args:  "SHARD.json... [--json FILE]",
		short: "combine the JSON results of 'simrun sweep --shard i/n' into the summary of the unsharded sweep, or those of 'simrun check --strategy swarm --shard i/n' into the swarm's",
		run:   cmdMerge,
	})
}

func cmdMerge(e *env, args []string) error {
	c := commands["merge"]
	fs := newFlags(e, c)
	jsonPath := fs.String("json", "", "write the merged result as JSON to `FILE` ('-' for stdout, instead of the summary)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErr("merge: missing shard files (usage: simrun merge %s)", c.args)
	}
	// Each file is read once (a pipe cannot be read twice); the first says whether
	// these are sweep shards or swarm members.
	data := make([][]byte, len(pos))
	for i, path := range pos {
		if data[i], err = inputfile.Read(path, maxShardBytes); err != nil {
			return usageErr("merge: %v", err)
		}
	}
	if isCheckResult(data[0]) {
		return mergeSwarmFiles(e, pos, data, *jsonPath)
	}
	parts := make([]*scenarios.SweepResult, len(pos))
	for i, path := range pos {
		if parts[i], err = parseSweepResult(path, data[i]); err != nil {
			return err
		}
	}
	res, err := scenarios.MergeSweeps(parts, pos)
	if err != nil {
		return err
	}
	switch *jsonPath {
	case "":
		if err := res.WriteSummary(e.stdout); err != nil {
			return err
		}
	case "-":
		if _, err := e.stdout.Write(res.JSON()); err != nil {
			return err
		}
	default:
		if err := res.WriteSummary(e.stdout); err != nil {
			return err
		}
		if err := os.WriteFile(*jsonPath, res.JSON(), 0o644); err != nil {
			return usageErr("merge: --json: %v", err)
		}
		fmt.Fprintf(e.stdout, "result    %s\n", *jsonPath)
	}
	if !res.Passed() {
		return violated("%s: %d of %d seeds failed", res.Scenario, res.Failed, res.Runs)
	}
	return nil
}

// maxShardBytes bounds a shard file (one lists at most --failures verdicts: a few
// kilobytes each).
const maxShardBytes = 64 << 20

// parseSweepResult parses one shard file; anything not a sweep result is bad input.
func parseSweepResult(path string, b []byte) (*scenarios.SweepResult, error) {
	r, err := scenarios.ParseSweepResult(b)
	if err != nil {
		return nil, usageErr("merge: %s: %s", path, oneLine(err.Error()))
	}
	return r, nil
}

// isCheckResult says whether a file holds a check's --json result (a swarm member's)
// rather than a sweep shard's.
func isCheckResult(b []byte) bool {
	var head struct {
		Model    string `json:"model"`
		Scenario string `json:"scenario"`
	}
	return json.Unmarshal(b, &head) == nil && head.Model != "" && head.Scenario == ""
}
