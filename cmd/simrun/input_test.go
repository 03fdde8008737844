package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simrun-dev/simrun/cli"
)

// Experiments' list parameters are input errors (one line, exit 2), not internal ones
// (exit 3): they ran the scenarios registered here, which the cli package's own tests
// do not link.
func TestExperimentListParameters(t *testing.T) {
	for _, c := range []struct {
		want string
		args []string
	}{
		{`leases="abc": want a comma-separated list of distinct durations from 1ms to 24h`, []string{"run", "replication/failover", "-p", "leases=abc"}},
		{`replicas="0,3": want a comma-separated list of distinct integers in 1..9`, []string{"run", "replication/passive-active", "-p", "replicas=0,3"}},
		{`replicas="": want a comma-separated list of distinct integers in 2..9`, []string{"run", "replication/notify", "-p", "replicas="}},
		{`agents="1": want a comma-separated list of distinct integers in 2..200`, []string{"run", "saga/connectivity", "-p", "agents=1"}},
		{"parameter graces: 2m0s is longer than 1m", []string{"run", "saga/grace", "-p", "graces=2m"}},
	} {
		var out, errb bytes.Buffer
		code := cli.Run(c.args, &out, &errb)
		msg := errb.String()
		if code != 2 || !strings.Contains(msg, c.want) || strings.Count(strings.TrimSpace(msg), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, msg, c.want)
		}
	}
}
