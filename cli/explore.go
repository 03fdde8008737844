package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/simrun-dev/simrun/explore"
	"github.com/simrun-dev/simrun/model"
	"github.com/simrun-dev/simrun/scenarios"
)

func init() {
	register(&command{
		name:  "explore",
		args:  "TRACE.jsonl | MODEL [-p name=value]... [--addr HOST:PORT] [--public] [--max-states N] [--workers N]",
		short: "step through a trace or browse a model's state space in the browser",
		long: `A trace (simrun run --trace, simrun check --trace) is re-executed and shown step by
step: every node's state, stable storage and timers, the messages in flight, the
diff against the previous step, the space-time diagram, the first violating step.
A model is browsed from its initial states: enabled actions as links, properties
in the current state, the path as a sequence diagram, a check on demand. The
server listens on 127.0.0.1 on a free port and prints the URL; stop it with
Ctrl-C. The JSON API under the page is documented in the explore package.`,
		run: cmdExplore,
	})
}

// exploreHook, when set (tests), is called with the page's URL once the server
// listens, and with a function that stops it.
var exploreHook func(url string, stop func())

func cmdExplore(e *env, args []string) error {
	c := commands["explore"]
	fs := newFlags(e, c)
	addr := fs.String("addr", "127.0.0.1:0", "listen on `HOST:PORT` (port 0: a free one)")
	public := fs.Bool("public", false, "allow an address other than loopback (the explorer has no authentication)")
	maxStates := fs.Int64("max-states", 0, "bound the page's model check to `N` distinct states, N > 0 (default: no bound)")
	workers := fs.Int("workers", 1, "BFS workers of the page's model check")
	var ps multiFlag
	fs.Var(&ps, "p", "model parameter `name=value` (repeatable; models only)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := exactlyArgs(c, pos, 1); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["max-states"] && *maxStates <= 0 {
		// as simrun check says: omit it for no bound
		return usageErr("explore: --max-states must be > 0 (got %d; omit it for no bound)", *maxStates)
	}
	if *workers <= 0 || *workers > 255 {
		return usageErr("explore: --workers must be 1 to 255")
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return usageErr("explore: --addr %q: %v", *addr, err)
	}
	loopback := host == "localhost"
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		loopback = true
	}
	if !loopback && !*public {
		return usageErr("explore: --addr %s is not a loopback address: the explorer has no authentication; add --public to serve it there anyway", *addr)
	}
	o := explore.Options{MaxStates: *maxStates, Workers: *workers}
	arg := pos[0]
	var srv *explore.Server
	var what string
	if st, statErr := os.Stat(arg); statErr == nil && !st.IsDir() {
		if len(ps) > 0 {
			return usageErr("explore: -p applies to a model; a trace's header fixes its parameters")
		}
		data, err := scenarios.ReadTrace(arg)
		if err != nil {
			return usageErr("explore: %v", err)
		}
		srv, err = explore.NewTraceServer(arg, data, o)
		if err != nil {
			return exploreErr(err)
		}
		what = "trace " + arg
	} else {
		if _, err := model.Lookup(arg); err != nil {
			if statErr != nil && !errors.Is(statErr, os.ErrNotExist) {
				return usageErr("explore: %v", statErr)
			}
			return usageErr("explore: %q is neither a trace file nor a model (%v)", arg, err)
		}
		params, err := model.ParseAssignments(ps)
		if err != nil {
			return usageErr("explore: %v", err)
		}
		srv, err = explore.NewModelServer(arg, params, o)
		if err != nil {
			return exploreErr(err)
		}
		what = "model " + arg
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return usageErr("explore: %v", err)
	}
	url := "http://" + ln.Addr().String() + "/"
	if !loopback {
		fmt.Fprintf(e.stderr, "explore: warning: serving on %s, reachable from other machines, without authentication\n", ln.Addr())
	}
	fmt.Fprintf(e.stdout, "explore: %s at %s (Ctrl-C to stop)\n", what, url)
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 2 << 20}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	go func() {
		<-ctx.Done()
		sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer scancel()
		hs.Shutdown(sctx)
	}()
	if exploreHook != nil {
		go exploreHook(url, cancel)
	}
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("explore: %w", err)
	}
	fmt.Fprintln(e.stdout, "explore: stopped")
	return nil
}

func exploreErr(err error) error {
	if explore.IsInputError(err) {
		return usageErr("explore: %s", oneLine(err.Error()))
	}
	return fmt.Errorf("explore: %w", err)
}
