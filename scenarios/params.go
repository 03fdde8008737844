package scenarios

import "github.com/simrun-dev/simrun/internal/params"

// Param documents one scenario parameter (-p name=value).
type Param = params.Def

// Params holds a scenario's parameters: defaults overridden by -p name=value. Typed
// getters (String, Int, IntMin, IntRange, Float, Prob, Duration, PositiveDuration,
// Bool, List, DurationList, IntList, ProbList) record the first malformed value, and
// Reject records a check of the scenario's own; Err reports it (Run checks it after
// Build, so a scenario may read everything first and fail once). Every getter bounds
// its value: counts read by IntMin at MaxCount, durations at MaxDuration, numbers at
// MaxFloat; parameters that size a system use IntRange with bounds of their own.
type Params = params.Set

// The bounds every parameter getter applies (see Params).
const (
	MaxCount    = params.MaxCount
	MaxDuration = params.MaxDuration
	MaxFloat    = params.MaxFloat
)

// NewParams resolves overrides against the scenario's declared parameters. An unknown
// name is an error naming the known ones.
func NewParams(defs []Param, overrides map[string]string) (*Params, error) {
	return params.New("scenario", defs, overrides)
}

// ParseAssignments parses "name=value" strings (the -p flags).
func ParseAssignments(as []string) (map[string]string, error) {
	return params.ParseAssignments(as)
}
