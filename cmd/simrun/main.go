// Command simrun replays seeded scenarios, sweeps seeds, model-checks protocols and
// measures what they cost, for the protocols of this repository: its command line is
// package cli (see there for the commands and exit codes); this file chooses which
// scenarios and models it carries (the scen_*.go files add the protocols').
package main

import (
	"os"

	"github.com/simrun-dev/simrun/cli"
	_ "github.com/simrun-dev/simrun/model/twophase" // registers the twophase and 2pc models
)

func main() { os.Exit(cli.Main()) }
