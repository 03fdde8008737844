package winkowski

// Observation kinds. The baselines record the same kinds with the same values, so one
// set of checkers (history.go) judges all three protocols.
const (
	// KindCreated (Created): an agent created a task.
	KindCreated = "wk.created"
	// KindStatus (StatusChange): a task changed status.
	KindStatus = "wk.status"
	// KindAcquire (AcquireCall): a task asked a pool for a resource (winning form
	// sent; a lock request in the baselines). The call of a porcupine allocate.
	KindAcquire = "wk.acquire"
	// KindAcquired (Acquired): a task learned the resource it was given at a pool.
	// The return of that allocate.
	KindAcquired = "wk.acquired"
	// KindAccess (Access): a task starts using its resources (status ACCESSING).
	KindAccess = "wk.access"
	// KindAccessEnd (AccessEnd): a task stops using them (status RELEASING). The call
	// of the porcupine releases; their return is the manager's KindFree.
	KindAccessEnd = "wk.access-end"
	// KindDone (Done): a task left the game.
	KindDone = "wk.done"
	// KindBook (Booked): a manager booked a resource for a task.
	KindBook = "wk.book"
	// KindFree (Freed): a manager freed a task's resource.
	KindFree = "wk.free"
	// KindBookFailed (BookFailed): a winning form found no free resource, so it had
	// no effect and its task waits forever (never happens in a correct run).
	KindBookFailed = "wk.book-failed"
)

// Created is observed when an agent creates a task.
type Created struct {
	Task  TaskID
	Agent int
}

// StatusChange is observed on every status change of a task.
type StatusChange struct {
	Task     TaskID
	From, To Status
}

// AcquireCall is observed when a task asks Pool for a resource.
type AcquireCall struct {
	Task TaskID
	Pool PoolID
}

// Acquired is observed when a task learns it was given Unit of Pool.
type Acquired struct {
	Task TaskID
	Pool PoolID
	Unit Unit
}

// PoolUnit is one resource: a unit of a pool.
type PoolUnit struct {
	Pool PoolID
	Unit Unit
}

// Access is observed when a task starts using its resources: one per pool of its
// interest, as the task believes them booked.
type Access struct {
	Task  TaskID
	Units []PoolUnit
}

// AccessEnd is observed when a task stops using its resources.
type AccessEnd struct{ Task TaskID }

// Done is observed when a task leaves the game.
type Done struct{ Task TaskID }

// Booked is observed when a manager books Unit of Pool for Task.
type Booked struct {
	Pool PoolID
	Unit Unit
	Task TaskID
}

// Freed is observed when a manager frees Task's Unit of Pool.
type Freed struct {
	Pool PoolID
	Unit Unit
	Task TaskID
}

// BookFailed is observed when a winning form of Task finds no free resource in Pool.
type BookFailed struct {
	Pool PoolID
	Task TaskID
}
