package cli

// The command line's tests run the repository's scenarios and models, registered by
// these packages as in cmd/simrun.
import (
	_ "simrun/scenarios/exactlyonce"
	_ "simrun/scenarios/leasing"
	_ "simrun/scenarios/winkowski"
)
