package scenarios

import "github.com/simrun-dev/simrun/internal/params"

// Param documents one scenario parameter (-p name=value).
type Param = params.Def

// Params holds a scenario's parameters: defaults overridden by -p name=value. Typed
// getters (String, Int, IntMin, IntRange, Float, Prob, Duration, PositiveDuration,
// Bool, List) record the first malformed value; Err reports it (Run checks it after
// Build, so a scenario may read everything first and fail once).
type Params = params.Set

// NewParams resolves overrides against the scenario's declared parameters. An unknown
// name is an error naming the known ones.
func NewParams(defs []Param, overrides map[string]string) (*Params, error) {
	return params.New("scenario", defs, overrides)
}

// ParseAssignments parses "name=value" strings (the -p flags).
func ParseAssignments(as []string) (map[string]string, error) {
	return params.ParseAssignments(as)
}
