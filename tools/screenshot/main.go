// Command screenshot takes a PNG of simrun explore's page, for the README and docs/:
//
//	go run ./cmd/simrun check exactlyonce -p bug=put-on-prepare --trace /tmp/cex.jsonl
//	go run ./tools/screenshot -o docs/figures/explore.png /tmp/cex.jsonl '#step=5'
//
// It serves the explorer in-process on a loopback port (as simrun explore does, with
// the same scenarios and models registered) and has headless Chromium (Debian's
// chromium package) draw the page at the URL fragment given (a step, a path).
package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/simrun-dev/simrun/explore"
	"github.com/simrun-dev/simrun/internal/browsertest"
	_ "github.com/simrun-dev/simrun/model/twophase"
	"github.com/simrun-dev/simrun/scenarios"
	_ "github.com/simrun-dev/simrun/scenarios/exactlyonce"
	_ "github.com/simrun-dev/simrun/scenarios/leasing"
	_ "github.com/simrun-dev/simrun/scenarios/replication"
	_ "github.com/simrun-dev/simrun/scenarios/saga"
	_ "github.com/simrun-dev/simrun/scenarios/winkowski"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "screenshot:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("screenshot", flag.ContinueOnError)
	out := fs.String("o", "explore.png", "write the PNG to `FILE`")
	size := fs.String("size", "1600,1000", "window `WIDTH,HEIGHT`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return errors.New("usage: screenshot [-o FILE] [-size W,H] TRACE.jsonl|MODEL ['#fragment']")
	}
	frag := ""
	if fs.NArg() == 2 {
		frag = fs.Arg(1)
		if !strings.HasPrefix(frag, "#") {
			return fmt.Errorf("fragment %q: want #step=K or #path=P", frag)
		}
	}
	var srv *explore.Server
	var err error
	if data, rerr := scenarios.ReadTrace(fs.Arg(0)); rerr == nil { // bounded, never a device
		srv, err = explore.NewTraceServer(fs.Arg(0), data, explore.Options{})
	} else {
		srv, err = explore.NewModelServer(fs.Arg(0), nil, explore.Options{})
	}
	if err != nil {
		return err
	}
	bin := browsertest.Find()
	if bin == "" {
		return errors.New("no chromium on PATH (apt-get install chromium)")
	}
	abs, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	tmp, err := os.MkdirTemp("", "screenshot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// No wall-clock limit: the page runs on Chromium's virtual time, and a loaded
	// machine only makes the browser slower (Ctrl-C stops a browser that hangs).
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
		"--user-data-dir="+tmp, "--window-size="+*size, "--virtual-time-budget=8000", "--screenshot="+abs, ts.URL+"/"+frag)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("chromium: %v\n%s", err, b)
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("chromium wrote no screenshot: %v", err)
	}
	fmt.Println("wrote", *out)
	return nil
}
