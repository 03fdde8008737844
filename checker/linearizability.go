package checker

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// Operation is one call/return pair taken from a history, ready for porcupine.
type Operation struct {
	// Key partitions the history (a key, agent, pool or lease): operations on
	// different keys are checked independently.
	Key string
	// Client identifies the caller (a row in porcupine's visualization).
	Client int
	Input  any
	// Output is the returned value; for a call that never returned set Pending.
	Output any
	// Call and Return order the operation in real time. Use observation indices
	// (sim.Observation.Index): they are a total order consistent with virtual time.
	Call, Return int64
	// Pending marks a call that never returned: it may take effect at any point after
	// its call, or not at all; the model sees Output == nil.
	Pending bool
}

// DefaultLinTimeout bounds one linearizability check. Reaching it gives the verdict
// Unknown, never OK.
const DefaultLinTimeout = 30 * time.Second

// LinResult is the outcome of a linearizability check.
type LinResult struct {
	Result porcupine.CheckResult
	// Key is the first partition found illegal (or undecided).
	Key string
	// Info allows visualizing the illegal partition.
	Info  porcupine.LinearizationInfo
	Model porcupine.Model
	Ops   int
	Keys  int
}

// CheckLinearizable checks ops against model, partition by partition (keys in sorted
// order, so the reported partition is deterministic), within timeout overall.
func CheckLinearizable(model porcupine.Model, ops []Operation, timeout time.Duration) LinResult {
	byKey := map[string][]porcupine.Operation{}
	for _, o := range ops {
		ret := o.Return
		out := o.Output
		if o.Pending {
			ret, out = math.MaxInt64, nil
		}
		byKey[o.Key] = append(byKey[o.Key], porcupine.Operation{
			ClientId: o.Client, Input: o.Input, Call: o.Call, Output: out, Return: ret,
		})
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	res := LinResult{Result: porcupine.Ok, Model: model, Ops: len(ops), Keys: len(keys)}
	deadline := time.Now().Add(timeout)
	for _, k := range keys {
		left := time.Until(deadline)
		if left <= 0 {
			res.Result, res.Key = porcupine.Unknown, k
			return res
		}
		r, info := porcupine.CheckOperationsVerbose(model, byKey[k], left)
		if r != porcupine.Ok {
			res.Result, res.Key, res.Info = r, k, info
			return res
		}
	}
	return res
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Linearizable returns a safety property: the operations extract takes from a run are
// linearizable against model. On an illegal history it writes porcupine's HTML
// visualization of the failing partition into the run's artifact directory (when one
// is set); a timeout gives an inconclusive verdict, never ok.
func Linearizable(name string, model porcupine.Model, extract func(r *Run) ([]Operation, error), timeout time.Duration) Property {
	if timeout <= 0 {
		timeout = DefaultLinTimeout
	}
	return Property{
		Name:  name,
		Class: Safety,
		Check: func(r *Run) error {
			ops, err := extract(r)
			if err != nil {
				return err
			}
			res := CheckLinearizable(model, ops, timeout)
			switch res.Result {
			case porcupine.Ok:
				return nil
			case porcupine.Unknown:
				return Inconclusive("linearizability check of %d operations on %d keys timed out after %v at key %q", res.Ops, res.Keys, timeout, res.Key)
			}
			msg := fmt.Sprintf("history of key %q is not linearizable", res.Key)
			if r.ArtifactDir != "" {
				path, err := writeVisualization(r, name, res)
				if err != nil {
					return errors.Join(errors.New(msg), err)
				}
				r.AddArtifact(path)
				msg += " (visualization: " + path + ")"
			}
			return errors.New(msg)
		},
	}
}

func writeVisualization(r *Run, name string, res LinResult) (string, error) {
	if err := os.MkdirAll(r.ArtifactDir, 0o755); err != nil {
		return "", err
	}
	file := unsafeName.ReplaceAllString(fmt.Sprintf("%s-seed%d-%s-%s.html", r.Scenario, r.Seed, name, res.Key), "_")
	path := filepath.Join(r.ArtifactDir, file)
	if err := porcupine.VisualizePath(res.Model, res.Info, path); err != nil {
		return "", fmt.Errorf("writing visualization: %w", err)
	}
	return path, nil
}
