package cli

import (
	"fmt"
	"io"
)

// checkedWriter remembers the first error writing to w: a command's text output that
// could not be written (a full disk: run … > /dev/full) is an I/O error (exit 2), not
// a success with nothing said.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// outputFailed reports a failed write to standard output on stderr and returns the
// exit code: exitUsage (the environment's fault, as for any file that cannot be
// written), unless the command had already failed with bad input or an internal error
// (and said so).
func outputFailed(e *env, out *checkedWriter, code int) int {
	if out.err == nil || code == exitUsage || code == exitInternal {
		return code // said already (JSON output reports its own write errors)
	}
	fmt.Fprintf(e.stderr, "simrun: I/O error: writing standard output: %s\n", oneLine(out.err.Error()))
	return exitUsage
}
