package sim

import (
	"fmt"
	"strings"
	"time"
)

// FaultKind names a fault the kernel can inject.
type FaultKind uint8

const (
	// FaultCrash crashes Node: volatile state lost, timers cancelled, messages in flight
	// to it lost.
	FaultCrash FaultKind = iota + 1
	// FaultRestart restarts a crashed Node from its stable storage.
	FaultRestart
	// FaultPartition splits the nodes into Groups (nodes not listed form one more
	// group); messages between groups are lost. It replaces an earlier partition.
	FaultPartition
	// FaultCut cuts the one-way link From→To.
	FaultCut
	// FaultHeal removes every partition and cut.
	FaultHeal
	// FaultSpike adds Extra latency on link From→To (Any for every link) for For.
	FaultSpike
	// FaultSkew steps Node's clock by Step and, if SetDrift, sets its drift.
	FaultSkew
	// FaultBurst raises the loss and duplication probabilities to Loss and Dup on every
	// link for For.
	FaultBurst
	// FaultRestore restores the one-way link From→To cut earlier (other cuts and any
	// partition stay).
	FaultRestore
	// FaultCrashSend crashes Node in the middle of a handler call's sends, within For:
	// the first call of Node that sends a message in [now, now+For) has its stable
	// writes applied, then a seeded prefix of its sends (in a seeded order; possibly
	// none) leaves, then the node crashes — a primary that dies while sending an update
	// to its backups. A node that sends nothing in the window crashes at its end.
	FaultCrashSend
)

// Any stands for every node in a FaultSpike link.
const Any NodeID = -2

// Fault is one fault the kernel injects at a scheduled time.
type Fault struct {
	Kind     FaultKind
	Node     NodeID
	Groups   [][]NodeID
	From, To NodeID
	Extra    time.Duration
	For      time.Duration
	Step     time.Duration
	SetDrift bool
	DriftPPM int64
	Loss     float64
	Dup      float64
}

var faultNames = map[FaultKind]string{
	FaultCrash: "crash", FaultRestart: "restart", FaultPartition: "partition",
	FaultCut: "cut", FaultHeal: "heal", FaultSpike: "spike", FaultSkew: "skew", FaultBurst: "burst", FaultRestore: "restore",
	FaultCrashSend: "crash-send",
}

func (k FaultKind) String() string {
	if s, ok := faultNames[k]; ok {
		return s
	}
	return fmt.Sprintf("fault(%d)", uint8(k))
}

// describe renders the fault for a trace line, with node names.
func (f *Fault) describe(names []string) string {
	name := func(n NodeID) string {
		if n == Any {
			return "*"
		}
		if n >= 0 && int(n) < len(names) {
			return names[n]
		}
		return fmt.Sprint(n)
	}
	switch f.Kind {
	case FaultPartition:
		gs := make([]string, len(f.Groups))
		for i, g := range f.Groups {
			ns := make([]string, len(g))
			for j, n := range g {
				ns[j] = name(n)
			}
			gs[i] = strings.Join(ns, ",")
		}
		return strings.Join(gs, " | ") + " | rest"
	case FaultCut:
		return name(f.From) + " -/-> " + name(f.To)
	case FaultRestore:
		return name(f.From) + " ---> " + name(f.To)
	case FaultHeal:
		return "all links restored"
	case FaultSpike:
		return fmt.Sprintf("%s->%s +%v for %v", name(f.From), name(f.To), f.Extra, f.For)
	case FaultSkew:
		if f.SetDrift {
			return fmt.Sprintf("step %v, drift %dppm", f.Step, f.DriftPPM)
		}
		return fmt.Sprintf("step %v", f.Step)
	case FaultBurst:
		return fmt.Sprintf("loss=%g dup=%g for %v", f.Loss, f.Dup, f.For)
	case FaultCrashSend:
		return fmt.Sprintf("armed for %v: crashes part-way through its next call's sends", f.For)
	}
	return ""
}
