package rpscen

import (
	"slices"

	"github.com/anishathalye/porcupine"

	"github.com/simrun-dev/simrun/checker"
	rp "github.com/simrun-dev/simrun/protocols/replication"
)

type porcupineModel = porcupine.Model

// registerModel: each key of the worklist store is a register starting at 0 (RP-P3).
func registerModel() porcupine.Model { return checker.Register[int64](0) }

func regOp(group string, v rp.ClientOp, call, ret int64, pending bool) checker.Operation {
	in := checker.RegisterInput[int64]{Op: checker.RegRead}
	var out any = v.Val
	if v.Op.Write {
		in = checker.RegisterInput[int64]{Op: checker.RegWrite, Value: v.Op.Val}
		out = true
	}
	return checker.Operation{Key: group + "/" + v.Op.Key, Client: int(v.Client), Input: in, Output: out, Call: call, Return: ret, Pending: pending}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
