package cli

// The command line's tests run the repository's scenarios and models, registered by
// these packages as in cmd/simrun.
import (
	_ "github.com/simrun-dev/simrun/scenarios/exactlyonce"
	_ "github.com/simrun-dev/simrun/scenarios/leasing"
	_ "github.com/simrun-dev/simrun/scenarios/winkowski"
)
