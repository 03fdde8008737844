package winkowski

import (
	"time"

	"github.com/simrun-dev/simrun/sim"
)

// JobState is an agent's progress through one of its jobs. The game's agents and the
// baselines' (package baseline) drive their jobs alike, with the helpers below.
type JobState struct {
	// Job is the job's index in Config.Jobs; Next the index of its next task to create.
	Job  int
	Next int
	// Waiting: the next task is due at At (agent clock); JobTimer(Job) is set.
	Waiting bool
	At      sim.Time
}

// JobTimer is the timer on which job j's next task is due.
func JobTimer(j int) sim.TimerID { return timerID(jobPrefix, j) }

// wait makes js wait d for its next task (JobTimer set).
func (js *JobState) wait(now sim.Time, d time.Duration, out *sim.Outbox) {
	js.Waiting, js.At = true, now.Add(d)
	out.SetTimer(JobTimer(js.Job), d)
}

// StartJob returns the initial progress of job j (at an agent's start) and whether its
// first task is due now; if not, the job waits for its start time (JobTimer set).
func (s *System) StartJob(j int, now sim.Time, out *sim.Outbox) (js JobState, due bool) {
	js = JobState{Job: j}
	if d := s.Jobs[j].Start; d > 0 {
		js.wait(now, d, out)
		return js, false
	}
	return js, true
}

// NextTask moves js past the task of its job that just left the game and reports
// whether the job's next task is due now. If the job has a next task with a think
// time, js waits for it (JobTimer set); if it has none, the job is over.
func (s *System) NextTask(js *JobState, now sim.Time, out *sim.Outbox) (due bool) {
	js.Next++
	job := &s.Jobs[js.Job]
	switch {
	case js.Next >= len(job.Tasks):
		return false
	case job.Think > 0:
		js.wait(now, job.Think, out)
		return false
	}
	return true
}

// RearmJob sets again, after a restart, the timer of a job waiting for its next task.
func RearmJob(js JobState, now sim.Time, out *sim.Outbox) {
	if js.Waiting {
		out.SetTimer(JobTimer(js.Job), js.At.Sub(now))
	}
}
