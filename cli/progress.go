package cli

import (
	"fmt"
	"sync"
	"time"
)

// Progress of long work (sweep, check, coverage, experiments) goes to stderr, chosen by
// --progress:
//   - auto (default): on a terminal, one line rewritten in place about ten times a
//     second; otherwise (piped, in CI) a plain line about every 10 s, so a log shows
//     the work is alive;
//   - always: a plain line about every 10 s even on a terminal;
//   - never: nothing.
//
// The final line ends with the elapsed time: always on a terminal, otherwise only when
// a line was printed before (a run too short for one stays silent in a log).

// progressLineEvery is the interval of plain progress lines (tests lower it).
var progressLineEvery = 10 * time.Second

const progressModes = "auto, always or never"

// ticker prints progress lines; nil prints nothing. Its methods may be called from
// several goroutines.
type ticker struct {
	e     *env
	live  bool // rewrite one line in place (a terminal)
	every time.Duration
	start time.Time

	mu      sync.Mutex
	last    time.Time
	printed bool
	text    string
}

// newTicker returns the ticker for --progress mode (nil for never), or a usage error.
func newTicker(e *env, cmd, mode string) (*ticker, error) {
	t := &ticker{e: e, start: time.Now()}
	switch mode {
	case "auto":
		t.live = e.tty
	case "always":
	case "never":
		return nil, nil
	default:
		return nil, usageErr("%s: --progress %q: want %s", cmd, mode, progressModes)
	}
	t.every = progressLineEvery
	if t.live {
		t.every = 100 * time.Millisecond
	}
	if !t.live {
		t.last = t.start // the first plain line comes after one interval; a live one at once
	}
	return t, nil
}

// update sets the current text (f is called only when a line is due) and prints it
// when one is due.
func (t *ticker) update(f func() string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if now.Sub(t.last) < t.every {
		return
	}
	t.last = now
	t.text = f()
	t.print()
}

func (t *ticker) print() {
	el := time.Since(t.start).Round(time.Second)
	if t.live {
		fmt.Fprintf(t.e.stderr, "\r%s   ", t.text)
	} else {
		fmt.Fprintf(t.e.stderr, "%s (%v elapsed)\n", t.text, el)
	}
	t.printed = true
}

// finish prints the last state (f) with the elapsed time, if anything was printed
// before (a run short enough to print nothing stays silent).
func (t *ticker) finish(f func() string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.printed && !t.live {
		return
	}
	el := time.Since(t.start).Round(time.Millisecond)
	if t.live {
		fmt.Fprintf(t.e.stderr, "\r%s, done in %v\n", f(), el)
	} else {
		fmt.Fprintf(t.e.stderr, "%s, done in %v\n", f(), el)
	}
}
