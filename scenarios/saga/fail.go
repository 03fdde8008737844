package sagascen

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/protocols/saga"
)

// checkFail validates saga/parallel's fail parameter: none, or AGENT:ACTION naming
// the incoming action of one of the agent's sections in conf (only do-actions fail).
// A name that matches nothing used to be accepted, and then nothing failed.
func checkFail(p interface{ Reject(name, want string) }, conf *saga.Config, f string) {
	if f == "none" {
		return
	}
	var actions []string
	for _, a := range conf.Order {
		for _, st := range slices.Sorted(maps.Keys(conf.Agents[a].Sections)) {
			actions = append(actions, a+":"+conf.Agents[a].Sections[st].Incoming)
		}
	}
	for _, x := range actions {
		if f == x {
			return
		}
	}
	p.Reject("fail", fmt.Sprintf("none or AGENT:ACTION, an incoming action of %s (%s)", conf.File, strings.Join(actions, ", ")))
}
