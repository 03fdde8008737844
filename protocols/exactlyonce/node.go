package exactlyonce

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// Timing holds the protocol's timeouts and periods (all on the node's local clock).
// Only liveness depends on them: every safety argument holds whatever fires when.
type Timing struct {
	// Alive is the worker's I_AM_ALIVE period (EO-8).
	Alive time.Duration
	// Monitor is how long an observer waits for I_AM_ALIVE before it starts a
	// selection (EO-8).
	Monitor time.Duration
	// There is how long a selecting observer waits for I_AM_THERE (EO-8).
	There time.Duration
	// SelectedWait is how long an observer that got I_AM_THERE waits for the new
	// worker's I_AM_SELECTED or I_AM_ALIVE before it starts over (EO-8).
	SelectedWait time.Duration
	// ClaimResend is the I_AM_SELECTED re-send period of the majority variant (EO-8).
	ClaimResend time.Duration
	// VoteResend is the orchestrator's VOTE re-send period to voters without a
	// definite answer (EO-5).
	VoteResend time.Duration
	// Prepare bounds phase 1 of a stage transaction's 2PC: a participant (remote queue
	// manager or the orchestrator) that has not voted by then aborts the transaction,
	// and the worker restarts it (EO-3, EO-6).
	Prepare time.Duration
	// Retry is the pause (plus up to as much again of jitter) before a worker restarts
	// an aborted stage transaction.
	Retry time.Duration
	// Inquiry is the voter's INQUIRY period while it holds a vote (EO-7).
	Inquiry time.Duration
	// ForgetResend is the committed orchestrator's FORGET re-send period (EO-6).
	ForgetResend time.Duration
	// CommitResend is the coordinator's COMMIT re-send period (EO-3).
	CommitResend time.Duration
	// Status is an in-doubt participant's STATUS period (EO-3).
	Status time.Duration
}

// Scaled returns t with every duration multiplied by f.
func (t Timing) Scaled(f float64) Timing {
	sc := func(d *time.Duration) { *d = time.Duration(float64(*d) * f) }
	for _, d := range []*time.Duration{&t.Alive, &t.Monitor, &t.There, &t.SelectedWait, &t.ClaimResend,
		&t.VoteResend, &t.Prepare, &t.Retry, &t.Inquiry, &t.ForgetResend, &t.CommitResend, &t.Status} {
		sc(d)
	}
	return t
}

// DefaultTiming suits the default network (1–10ms links).
func DefaultTiming() Timing {
	return Timing{
		Alive:        50 * time.Millisecond,
		Monitor:      200 * time.Millisecond,
		There:        60 * time.Millisecond,
		SelectedWait: 400 * time.Millisecond,
		ClaimResend:  60 * time.Millisecond,
		VoteResend:   60 * time.Millisecond,
		Prepare:      300 * time.Millisecond,
		Retry:        50 * time.Millisecond,
		Inquiry:      250 * time.Millisecond,
		ForgetResend: 100 * time.Millisecond,
		CommitResend: 100 * time.Millisecond,
		Status:       250 * time.Millisecond,
	}
}

// Config is shared, read-only configuration of every node of a system.
type Config struct {
	// Names are the node names (for messages in panics only).
	Names []string
	// Simple runs the simple protocol of paper §2 (EO-1) instead of the extended one:
	// each stage runs on its highest-priority node only, with no orchestrator, voters
	// or selection.
	Simple bool
	// MajoritySelect turns on the majority-ACK variant of selection (EO-8, end of §5).
	MajoritySelect bool
	// StaticNext makes every stage transaction Put to all itinerary nodes of the next
	// stage. By default (false) the worker leaves out nodes it suspects — nodes that
	// missed a PREPARE deadline and have not been heard from since — as long as a
	// majority of the stage's itinerary nodes remain (paper §3 fn. 4: "the observers
	// for the next stage can be determined on the fly from the set of available
	// nodes").
	StaticNext bool
	// Work is how long a stage's Execute takes (on the worker's clock). The stage
	// transaction holds its locks meanwhile; its voting starts only at Commit.
	Work time.Duration
	// Capacity is the number of seats of every pool of every node's resource service.
	Capacity int32
	Timing   Timing
	// CountMessages records a Sent observation per message, for per-stage counts.
	CountMessages bool
	// MaxAttempts bounds the stage transactions one node begins, and the selections it
	// starts, per stage (0 = no bound); the counts live in stable storage, so a restart
	// does not renew them. A retry or monitor timer that could only start a
	// transaction or selection the bound forbids is not armed. The model checker sets
	// it to keep the state space finite.
	MaxAttempts int
	// AbstractSelection replaces the selection protocol by its weakest form, for model
	// checking: an observer whose monitor times out becomes a worker at once, and
	// workers send no I_AM_ALIVE. Paper §3: "each observer that recognizes a worker
	// failure could select itself without talking to the other observers" — any node
	// may become a worker at any time, a superset of what the selection protocol
	// allows, and the voting protocol alone must keep one commit per stage.
	AbstractSelection bool
	// Selectors, when set, lists the only nodes that may start a selection (model
	// checking: the others observe and vote, their monitor is never armed, so fewer
	// orchestrators compete; with AbstractSelection, fewer nodes may become
	// workers). nil: every node. Off in every simulation.
	Selectors []sim.NodeID
	// NoRecoveryTimers, for model checking without crashes, arms neither an in-doubt
	// participant's STATUS timer nor a voter's INQUIRY timer (EO-3, EO-7). Without a
	// crash every message arrives: a coordinator always sends its outcome (COMMIT,
	// or ABORT as a courtesy), and an orchestrator always withdraws the votes of a
	// transaction it ends (UN_VOTE, at once for a vote that arrives late), so these
	// timers only ask again — and, firing at any moment, multiply the interleavings
	// to explore. Configurations with crashes check them. Off in every simulation.
	NoRecoveryTimers bool
	// Resends bounds, per node (counted in stable storage, like MaxAttempts), the
	// rounds of periodic re-sending (a timer re-arming itself: I_AM_ALIVE, VOTE,
	// INQUIRY, STATUS, COMMIT, FORGET, I_AM_SELECTED, and a selection starting over):
	// 0 = no bound, < 0 = none at all.
	// Re-sends exist for lost messages; the model checker bounds them to keep the
	// state space finite (first transmissions are never bounded).
	Resends int
	// Policy holds the protocol's decision points; the zero Policy is the protocol
	// as specified (tests plant broken variants through it, see Policy).
	Policy Policy
}

// System returns one node spec per name, all sharing cfg.
func System(cfg *Config) []sim.NodeSpec {
	specs := make([]sim.NodeSpec, len(cfg.Names))
	for i, name := range cfg.Names {
		specs[i] = sim.NodeSpec{Name: name, New: func() sim.Node { return &Node{cfg: cfg} }}
	}
	return specs
}

// NewNode returns a node holding only configuration.
func NewNode(cfg *Config) *Node { return &Node{cfg: cfg} }

// Node is one agent-system node: transaction manager, input-queue manager, resource
// service, orchestrator, voter and selection monitor (paper Fig. 4), as one state
// machine. Interactions between a node's own components are function calls or
// messages to itself processed before the handler returns (so they are atomic with
// it); interactions between nodes are network messages.
//
// Fields marked "stable" mirror stable storage: they are rebuilt from it on Restart
// and every change is written through with Outbox.Store in the same handler call.
type Node struct {
	cfg     *Config
	id      sim.NodeID
	owned   uint16 // maps referenced by this node only (copy-on-write, see Clone)
	started bool   // Start or Restart handled: the fields below are the node's state

	// ---- stable ----
	seq        uint32                  // last Tid sequence number (key "tm/seq")
	queue      map[StageID]*queueEntry // input queue: Active stages (key "q/A/H")
	orchSet    map[StageID][]VoteEntry // voter OrchSets, only non-empty (key "v/A/H")
	orch       map[StageID]*orchRecord // orchestrator transaction states (key "o/A/H")
	prepared   map[Tid]*preparedPut    // participant: prepared Puts (key "p/N/S")
	commitLog  map[Tid]*commitRecord   // coordinator: commit decisions (key "c/N/S")
	pools      map[string]*Pool        // resource service (key "r/POOL")
	resPrep    map[Tid]*resPrepared    // resource manager: prepared reservations (key "rp/N/S")
	attempts   map[StageID]int         // stable when bounded: stage transactions begun per stage (MaxAttempts)
	selections map[StageID]int         // stable when bounded: selections started per stage (MaxAttempts)
	txs        map[StageID]*tx         // volatile: stage transactions this node coordinates
	sel        map[StageID]*selection  // volatile: selection state per Active stage
	locks      map[string]Tid          // volatile: resource pool locks (strict 2PL)
	waiters    map[string][]StageID    // volatile: workers waiting for a pool lock
	suspects   map[sim.NodeID]bool     // volatile: nodes that missed a PREPARE deadline and have been silent since
	local      []localMsg              // volatile: messages to self, drained per call
	inq        map[StageID]bool        // volatile: inquiry timer armed
	resends    int                     // stable when bounded: periodic re-arms so far (Config.Resends)
	mark       *shareMark              // set by Clone when it shares owned maps (nil while none is owned)

	out *sim.Outbox // valid during Handle only
	now sim.Time
	rnd uint64
}

type localMsg struct{ m sim.Message }

// queueEntry is an Active stage in the input queue: the stage record and the agent
// (EO-4). Observers read it without removing it; the worker's Get removes it.
type queueEntry struct {
	Record StageRecord
	Agent  Agent
}

// VoteEntry is one vote a voter gave: to orchestrator Orch, for transaction Tid.
type VoteEntry struct {
	Orch sim.NodeID
	Tid  Tid
}

// orchRecord is an orchestrator's stable transaction state (EO-4). Voters lists the
// stage's voters (for UN_VOTE after a restart in Ready, when the volatile YesVotes are
// gone); Pending the voters that have not ACKed FORGET (Committed).
type orchRecord struct {
	State   OrchState
	Tid     Tid
	Voters  []sim.NodeID
	Pending []sim.NodeID
}

// preparedPut is a next-stage queue manager's prepared Put (EO-2, EO-3).
type preparedPut struct {
	Coord  sim.NodeID
	Record StageRecord
	Agent  Agent
}

// commitRecord is the coordinator's logged commit decision (presumed abort: only
// commits are logged) with the remote participants that have not ACKed yet.
type commitRecord struct {
	Stage   StageID
	Pending []sim.NodeID
}

// Handle implements sim.Node.
func (n *Node) Handle(in sim.Input, out *sim.Outbox) {
	n.out, n.now, n.rnd, n.id = out, in.Now, in.Rand, in.Self
	switch in.Kind {
	case sim.Start:
		n.init()
	case sim.Restart:
		n.init()
		n.recover(in.Stable)
	case sim.Receive:
		n.receive(in.From, in.Msg)
	case sim.Timeout:
		n.timeout(in.Timer)
	}
	for len(n.local) > 0 {
		m := n.local[0]
		n.local = n.local[1:]
		n.receive(n.id, m.m)
	}
	// Nothing of the call itself stays in the node: the model checker fingerprints it.
	n.local, n.out, n.now, n.rnd = nil, nil, 0, 0
}

func (n *Node) init() {
	// The node is fresh (NodeSpec.New builds it for Start and for every Restart). Its
	// maps stay nil until first written, and become nil again when emptied (writes go
	// through put and del, see state.go): most maps are empty most of the time.
	n.started = true
}

// send delivers m to node to: through the network, or, for the node itself, through
// the local queue drained before Handle returns (in FIFO order, atomically with it).
func (n *Node) send(to sim.NodeID, m staged) {
	if to == n.id {
		n.local = append(n.local, localMsg{m})
		return
	}
	n.out.Send(to, m)
	if n.cfg.CountMessages {
		n.out.Observe(ObsSent, Sent{Stage: m.stage(), Kind: m.Kind()})
	}
}

func (n *Node) receive(from sim.NodeID, m sim.Message) {
	if from != n.id && from != sim.Env && n.suspects[from] {
		del(n, ownSuspects, &n.suspects, from) // it is alive: no longer left out of Puts
	}
	switch m := m.(type) {
	case kickMsg:
		n.maybeBegin(m.s)
	case Launch:
		n.onLaunch(m)
	// 2PC (EO-2, EO-3)
	case Prepare:
		n.onPrepare(from, m)
	case Prepared:
		n.onPrepared(from, m)
	case Commit:
		n.onCommit(from, m)
	case Abort:
		n.onAbort(m)
	case CommitAck:
		n.onCommitAck(from, m)
	case Status:
		n.onStatus(from, m)
	// voting (EO-5, EO-6, EO-7)
	case Vote:
		n.voterOnVote(m)
	case Yes:
		n.orchOnAnswer(m.Stage, m.Tid, m.Voter, ansYes, nil)
	case No:
		n.orchOnAnswer(m.Stage, m.Tid, m.Voter, ansNo, nil)
	case CondYes:
		n.orchOnAnswer(m.Stage, m.Tid, m.Voter, ansCond, m.OrchSet)
	case UnVote:
		n.voterOnUnVote(m)
	case Forget:
		n.voterOnForget(m)
	case ForgetAck:
		n.orchOnForgetAck(m)
	case Inquiry:
		n.orchOnInquiry(m, true)
	// selection (EO-8)
	case IAmAlive:
		n.selOnAlive(from, m.Stage, false)
	case IAmSelected:
		n.selOnAlive(from, m.Stage, true)
	case AreYouThere:
		n.selOnAreYouThere(from, m.Stage)
	case IAmThere:
		n.selOnIAmThere(m.Stage)
	case SelectedAck:
		n.selOnAck(from, m.Stage)
	default:
		panic(fmt.Sprintf("exactlyonce: unexpected message %s", m.Kind()))
	}
}

// ---- timers ----

// Timer kinds. Stage timers are "K/agent/hop", transaction timers "K/node/seq".
const (
	tAlive   = "alive" // worker: I_AM_ALIVE period
	tMonitor = "mon"   // observer: worker silent
	tSelect  = "sel"   // selection: There / SelectedWait / ClaimResend
	tVote    = "vote"  // orchestrator: VOTE re-send
	tPrepare = "prep"  // TM: phase-1 timeout
	tRetry   = "retry" // worker: restart an aborted stage transaction
	tInquiry = "inq"   // voter: INQUIRY
	tForget  = "fgt"   // orchestrator: FORGET re-send
	tCommit  = "cmt"   // coordinator: COMMIT re-send
	tStatus  = "st"    // participant: STATUS
	tExec    = "exec"  // worker: Execute finished
)

func timerID(kind string, a, b int64) sim.TimerID {
	buf := make([]byte, 0, len(kind)+12)
	buf = append(buf, kind...)
	buf = append(buf, '/')
	buf = strconv.AppendInt(buf, a, 10)
	buf = append(buf, '/')
	buf = strconv.AppendInt(buf, b, 10)
	return sim.TimerID(buf)
}

func stageTimer(kind string, s StageID) sim.TimerID {
	return timerID(kind, int64(s.Agent), int64(s.Hop))
}

func tidTimer(kind string, t Tid) sim.TimerID { return timerID(kind, int64(t.Node), int64(t.Seq)) }

func parseTimer(id sim.TimerID) (kind string, a, b int64) {
	s := string(id)
	i := strings.IndexByte(s, '/')
	j := strings.LastIndexByte(s, '/')
	if i < 0 || j <= i {
		panic("exactlyonce: malformed timer " + s)
	}
	a, err1 := strconv.ParseInt(s[i+1:j], 10, 64)
	b, err2 := strconv.ParseInt(s[j+1:], 10, 64)
	if err1 != nil || err2 != nil {
		panic("exactlyonce: malformed timer " + s)
	}
	return s[:i], a, b
}

func (n *Node) timeout(id sim.TimerID) {
	kind, a, b := parseTimer(id)
	st := StageID{Agent: AgentID(a), Hop: int32(b)}
	t := Tid{Node: sim.NodeID(a), Seq: uint32(b)}
	switch kind {
	case tAlive:
		n.selOnAliveTimer(st)
	case tMonitor:
		n.selOnMonitorTimeout(st)
	case tSelect:
		n.selOnSelectTimer(st)
	case tVote:
		n.orchOnVoteTimer(st)
	case tPrepare:
		n.tmOnPrepareTimeout(st)
	case tRetry:
		n.workerOnRetry(st)
	case tExec:
		n.tmOnExecDone(st)
	case tInquiry:
		n.voterOnInquiryTimer(st)
	case tForget:
		n.orchOnForgetTimer(st)
	case tCommit:
		n.tmOnCommitTimer(t)
	case tStatus:
		n.participantOnStatusTimer(t)
	default:
		panic("exactlyonce: unknown timer " + string(id))
	}
}

// rearm re-arms a periodic timer from its own handler (a re-send round), within
// Config.Resends.
func (n *Node) rearm(id sim.TimerID, d time.Duration) {
	if n.spend() {
		n.out.SetTimer(id, d)
	}
}

// armResend arms a timer whose only job is re-sending (VOTE, COMMIT, FORGET,
// I_AM_SELECTED), unless Config.Resends forbids re-sending.
func (n *Node) armResend(id sim.TimerID, d time.Duration) {
	if n.cfg.Resends >= 0 {
		n.out.SetTimer(id, d)
	}
}

// spend takes one re-send round from Config.Resends and reports whether one was left
// (always, when unbounded).
func (n *Node) spend() bool {
	if n.cfg.Resends == 0 {
		return true
	}
	if n.cfg.Resends < 0 || n.resends >= n.cfg.Resends {
		return false
	}
	n.resends++
	n.storeBounds()
	return true
}

// bound reports whether Config.MaxAttempts forbids this node another stage transaction
// (counts = n.attempts) or selection (counts = n.selections) for stage s. A timer whose
// only effect would be to start one is then not armed: its firing would change
// nothing, and a pending no-op timer only doubles the model checker's states.
func (n *Node) bound(counts map[StageID]int, s StageID) bool {
	return n.cfg.MaxAttempts > 0 && counts[s] >= n.cfg.MaxAttempts
}

// bounded reports whether a model-checking bound is on; the counters of the bounds
// then live in stable storage (key "bound"), so a restart does not renew them.
func (n *Node) bounded() bool { return n.cfg.MaxAttempts > 0 || n.cfg.Resends != 0 }

// boundRecord is the stable form of the bound counters.
type boundRecord struct {
	Attempts   []stageCount
	Selections []stageCount
	Resends    int
}

type stageCount struct {
	Stage StageID
	N     int
}

func countsOf(m map[StageID]int) []stageCount {
	var out []stageCount
	for _, s := range sortedStages(m) {
		out = append(out, stageCount{s, m[s]})
	}
	return out
}

func (n *Node) storeBounds() {
	if n.bounded() {
		n.out.Store(keyBound, boundRecord{Attempts: countsOf(n.attempts), Selections: countsOf(n.selections), Resends: n.resends})
	}
}

// jitter returns a duration in [0, d) from this call's random bits.
func (n *Node) jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(n.rnd % uint64(d))
}

// ---- stable storage ----

func stageKey(prefix string, s StageID) string {
	return prefix + strconv.Itoa(int(s.Agent)) + "/" + strconv.Itoa(int(s.Hop))
}

func tidKey(prefix string, t Tid) string {
	return prefix + strconv.Itoa(int(t.Node)) + "/" + strconv.FormatUint(uint64(t.Seq), 10)
}

const (
	keySeq     = "tm/seq"
	keyBound   = "bound"
	preQueue   = "q/"
	preOrchSet = "v/"
	preOrch    = "o/"
	prePrep    = "p/"
	preCommit  = "c/"
	prePool    = "r/"
	preResPrep = "rp/"
)

func parseStageKey(k, prefix string) StageID {
	a, b := parseTwo(k[len(prefix):])
	return StageID{Agent: AgentID(a), Hop: int32(b)}
}

func parseTidKey(k, prefix string) Tid {
	a, b := parseTwo(k[len(prefix):])
	return Tid{Node: sim.NodeID(a), Seq: uint32(b)}
}

func parseTwo(s string) (int64, int64) {
	x, y, ok := strings.Cut(s, "/")
	a, err1 := strconv.ParseInt(x, 10, 64)
	b, err2 := strconv.ParseInt(y, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		panic("exactlyonce: malformed stable key part " + s)
	}
	return a, b
}

func (n *Node) storeQueue(s StageID) {
	if e, ok := n.queue[s]; ok {
		n.out.Store(stageKey(preQueue, s), *e)
	} else {
		n.out.Delete(stageKey(preQueue, s))
	}
}

func (n *Node) storeOrchSet(s StageID) {
	if set := n.orchSet[s]; len(set) > 0 {
		n.out.Store(stageKey(preOrchSet, s), set)
	} else {
		del(n, ownOrchSet, &n.orchSet, s)
		n.out.Delete(stageKey(preOrchSet, s))
	}
}

func (n *Node) storeOrch(s StageID) {
	if o, ok := n.orch[s]; ok && o.State != OrchUnknown {
		n.out.Store(stageKey(preOrch, s), *o)
	} else {
		del(n, ownOrch, &n.orch, s)
		n.out.Delete(stageKey(preOrch, s))
	}
}

// recover rebuilds the node from stable storage after a crash and performs the
// recovery actions of every component (EO-3 TM and RM recovery, EO-7 orchestrator and
// voter recovery). Volatile state — running transactions, votes collected, roles — is
// gone: a running stage transaction that had not logged its commit is aborted
// (presumed abort).
func (n *Node) recover(st sim.StableView) {
	n.load(st)
	// EO-3: the TM resends the outcome of every logged commit; prepared local
	// resource managers without a logged commit roll back (presumed abort).
	n.tmRecover()
	// EO-7: orchestrator recovery (Ready -> the TM's outcome, here abort; Committed ->
	// FORGET until every voter ACKs).
	n.orchRecover()
	// EO-3: in-doubt participants ask their coordinators.
	for _, t := range sortedTids(n.prepared) {
		n.out.Cover(ruleRecoverDoubt)
		n.out.SetTimer(tidTimer(tStatus, t), 0)
	}
	// EO-7 (voter) and EO-8: every Active stage resumes; the node is an observer until
	// the selection protocol says otherwise (the simple protocol has no observers: the
	// node resumes as the stage's worker).
	for _, s := range sortedStages(n.queue) {
		if len(n.orchSet[s]) > 0 && n.cfg.Policy.inquiresAtRestart(s) {
			n.out.Cover(ruleRecoverVoter)
			n.voterInquire(s, false)
		}
		if n.cfg.Simple {
			n.out.Cover(ruleSimpleResume)
			n.becomeWorker(s, false)
		} else {
			n.out.Cover(ruleRestartObserver)
			n.becomeObserver(s)
		}
	}
}

// load fills the fields that mirror stable storage from it.
func (n *Node) load(st sim.StableView) {
	for _, k := range st.Keys() {
		switch {
		case k == keySeq:
			n.seq, _ = sim.Load[uint32](st, k)
		case k == keyBound:
			b, _ := sim.Load[boundRecord](st, k)
			for _, c := range b.Attempts {
				put(n, ownAttempts, &n.attempts, c.Stage, c.N)
			}
			for _, c := range b.Selections {
				put(n, ownSelections, &n.selections, c.Stage, c.N)
			}
			n.resends = b.Resends
		case strings.HasPrefix(k, preQueue):
			e, _ := sim.Load[queueEntry](st, k)
			put(n, ownQueue, &n.queue, parseStageKey(k, preQueue), &e)
		case strings.HasPrefix(k, preOrchSet):
			set, _ := sim.Load[[]VoteEntry](st, k)
			put(n, ownOrchSet, &n.orchSet, parseStageKey(k, preOrchSet), set)
		case strings.HasPrefix(k, preOrch):
			o, _ := sim.Load[orchRecord](st, k)
			put(n, ownOrch, &n.orch, parseStageKey(k, preOrch), &o)
		case strings.HasPrefix(k, prePrep):
			p, _ := sim.Load[preparedPut](st, k)
			put(n, ownPrepared, &n.prepared, parseTidKey(k, prePrep), &p)
		case strings.HasPrefix(k, preCommit):
			c, _ := sim.Load[commitRecord](st, k)
			put(n, ownCommitLog, &n.commitLog, parseTidKey(k, preCommit), &c)
		case strings.HasPrefix(k, preResPrep):
			r, _ := sim.Load[resPrepared](st, k)
			put(n, ownResPrep, &n.resPrep, parseTidKey(k, preResPrep), &r)
		case strings.HasPrefix(k, prePool):
			p, _ := sim.Load[Pool](st, k)
			put(n, ownPools, &n.pools, k[len(prePool):], &p)
		default:
			panic("exactlyonce: unknown stable key " + k)
		}
	}
}

// ---- deterministic iteration ----

func sortedStages[V any](m map[StageID]V) []StageID {
	ks := make([]StageID, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b StageID) int {
		if a.Agent != b.Agent {
			return int(a.Agent - b.Agent)
		}
		return int(a.Hop - b.Hop)
	})
	return ks
}

func sortedTids[V any](m map[Tid]V) []Tid {
	ks := make([]Tid, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b Tid) int {
		if a.Node != b.Node {
			return int(a.Node - b.Node)
		}
		if a.Seq < b.Seq {
			return -1
		}
		if a.Seq > b.Seq {
			return 1
		}
		return 0
	})
	return ks
}

func removeNode(s []sim.NodeID, x sim.NodeID) []sim.NodeID {
	i := slices.Index(s, x)
	if i < 0 {
		return s
	}
	out := make([]sim.NodeID, 0, len(s)-1)
	out = append(out, s[:i]...)
	return append(out, s[i+1:]...)
}

func addNode(s []sim.NodeID, x sim.NodeID) []sim.NodeID {
	if slices.Contains(s, x) {
		return s
	}
	out := make([]sim.NodeID, len(s), len(s)+1)
	copy(out, s)
	return append(out, x)
}
