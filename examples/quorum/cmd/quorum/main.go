// Command quorum is simrun's command line over the quorum register's scenarios and
// model (an outside project: it registers its packages and calls cli.Main).
package main

import (
	"os"

	_ "example.com/quorum/scen"

	"github.com/simrun-dev/simrun/cli"
)

func main() { os.Exit(cli.Main()) }
