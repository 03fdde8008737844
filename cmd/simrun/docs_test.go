package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/simrun-dev/simrun/scenarios"
)

// repoRoot is the repository's root, seen from this package's directory.
const repoRoot = "../.."

// docCommand is one command of a ```sh block of the README or of a page under docs/.
type docCommand struct {
	file  string // relative to the repository root
	line  int
	shown string // as the page shows it
	exit  int    // expected exit code: "exit N" in the comment, else 0
	block int    // commands of one block run in order, in one directory
}

func (c docCommand) where() string { return c.file + ":" + strconv.Itoa(c.line) }

var exitNote = regexp.MustCompile(`\bexit (\d)\b`)

// docFiles returns README.md and every page under docs/, relative to the root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(repoRoot, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// docCommands extracts every command of the ```sh blocks of the README and docs/: a
// line ending in a backslash continues on the next; a "#" starts a comment (none of
// the commands quotes one).
func docCommands(t *testing.T) []docCommand {
	t.Helper()
	var out []docCommand
	block := -1
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		in, pending, start := false, "", 0
		for i, line := range strings.Split(string(data), "\n") {
			switch {
			case strings.HasPrefix(line, "```sh"):
				in, block = true, block+1
				continue
			case strings.HasPrefix(line, "```"):
				in = false
				continue
			}
			if !in {
				continue
			}
			if pending == "" {
				start = i + 1
			}
			if s, ok := strings.CutSuffix(strings.TrimRight(line, " "), "\\"); ok {
				pending += s + " "
				continue
			}
			line, pending = pending+line, ""
			cmd, comment, _ := strings.Cut(line, "#")
			cmd = strings.Join(strings.Fields(cmd), " ")
			if cmd == "" {
				continue
			}
			c := docCommand{file: f, line: start, shown: cmd, block: block}
			if m := exitNote.FindStringSubmatch(comment); m != nil {
				c.exit, _ = strconv.Atoi(m[1])
			}
			out = append(out, c)
		}
	}
	return out
}

// bounds are the work bounds the test puts on the documented commands in place of a
// clock. A command documented to succeed is cut short: a sweep's seeds to at most
// seeds, a model check that states no bound to states distinct states (its exit 4
// "bound reached" then counts as the documented 0: what the bound left unexplored is
// what a reader's run goes on to do), and under -short an experiment to one seed per
// point and the benchmarks to the kernel's. A command documented to fail runs as
// written: its failure is the point (the docs keep those small).
type bounds struct {
	seeds, states int
	short         bool
}

func testBounds() bounds {
	if testing.Short() {
		return bounds{seeds: 20, states: 50_000, short: true}
	}
	return bounds{seeds: 100, states: 200_000}
}

var (
	seedRange    = regexp.MustCompile(`--seeds (\d+)-(\d+)`)
	benchRunFlag = regexp.MustCompile(` --run \S+`)
	checkCmd     = regexp.MustCompile(`\b((?:simrun|quorum) check) ([a-z0-9][^ ;&|]*)`)
	runCmd       = regexp.MustCompile(`\bsimrun run ([a-z0-9][^ ;&|]*)`)
)

// bound rewrites a simrun (or quorum) command line within b, and reports whether it
// bounded a model check.
func (b bounds) bound(cmd string) (string, bool) {
	cmd = seedRange.ReplaceAllStringFunc(cmd, func(m string) string {
		r := seedRange.FindStringSubmatch(m)
		from, _ := strconv.Atoi(r[1])
		to, _ := strconv.Atoi(r[2])
		return fmt.Sprintf("--seeds %d-%d", from, min(to, from+b.seeds-1))
	})
	checked := false
	if !strings.Contains(cmd, "--max-states") && !strings.Contains(cmd, "--strategy random") {
		cmd = checkCmd.ReplaceAllStringFunc(cmd, func(m string) string {
			checked = true
			return m + " --max-states " + strconv.Itoa(b.states)
		})
	}
	if b.short {
		cmd = runCmd.ReplaceAllStringFunc(cmd, func(m string) string {
			return m + smallExperiment(strings.TrimPrefix(m, "simrun run "), cmd)
		})
		if strings.HasPrefix(cmd, "simrun bench") {
			cmd = benchRunFlag.ReplaceAllString(cmd, "") + " --run ^Kernel$"
		}
	}
	return cmd, checked
}

// smallExperiment returns the -p settings that make an experiment one seed per point
// (its "runs" or "seeds" parameter), unless the command sets them; "" for a single run.
func smallExperiment(name, cmd string) string {
	sc, err := scenarios.Lookup(name)
	if err != nil || sc.Experiment == nil {
		return ""
	}
	add := ""
	for _, p := range sc.Params {
		if (p.Name == "runs" || p.Name == "seeds") && !strings.Contains(cmd, "-p "+p.Name+"=") {
			add += " -p " + p.Name + "=1"
		}
	}
	return add
}

// buildTools builds the binaries the documented commands call into dir: simrun (with
// -buildvcs=false, as a source archive would build it), the outside-user example and
// the mutation tool.
func buildTools(dir string) error {
	for _, b := range []struct{ dir, out, pkg string }{
		{".", "simrun", "."},
		{filepath.Join(repoRoot, "examples", "quorum"), "quorum", "./cmd/quorum"},
		{repoRoot, "mutate", "./tools/mutate"},
	} {
		cmd := exec.Command("go", "build", "-buildvcs=false", "-o", filepath.Join(dir, b.out), b.pkg)
		cmd.Dir = b.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return nil
}

// TestDocCommands (issue 16 item 6; issue 33): every command the README and the pages
// under docs/ show works as written, within work bounds instead of a clock (see
// bounds). simrun commands run through bash (globs and quoting are the reader's) in
// a fresh directory per block holding a copy of docs/ and examples/quorum/faults.json
// — the repository root as a reader has it — with the binaries first on PATH, and
// must end with their documented exit code; `simrun explore` must serve its page and
// stop on Ctrl-C; the mutation tool's commands list their mutants (-list) and name
// tests that exist; `go test` commands name packages and tests that exist.
func TestDocCommands(t *testing.T) {
	cmds := docCommands(t)
	if len(cmds) < 60 {
		t.Fatalf("found %d commands in the README and docs/; the extraction is broken", len(cmds))
	}
	bin := t.TempDir()
	if err := buildTools(bin); err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs(repoRoot)
	b := testBounds()
	blocks := map[int][]docCommand{}
	var order []int
	for _, c := range cmds {
		if _, ok := blocks[c.block]; !ok {
			order = append(order, c.block)
		}
		blocks[c.block] = append(blocks[c.block], c)
	}
	sem := make(chan struct{}, max(1, runtime.NumCPU()))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	var costs []cost
	benchRun := false
	fail := func(c docCommand, format string, a ...any) {
		mu.Lock()
		failures = append(failures, c.where()+": "+c.shown+": "+fmt.Sprintf(format, a...))
		mu.Unlock()
	}
	for _, n := range order {
		wg.Add(1)
		go func(cs []docCommand) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			dir, err := os.MkdirTemp("", "simrun-doc-")
			if err != nil {
				fail(cs[0], "%v", err)
				return
			}
			defer os.RemoveAll(dir)
			if err := seedDir(root, dir); err != nil {
				fail(cs[0], "%v", err)
				return
			}
			for _, c := range cs {
				if b.short && strings.HasPrefix(strings.ReplaceAll(c.shown, "go run ./cmd/simrun", "simrun"), "simrun bench") {
					// Under -short every bench command runs the kernel benchmark
					// only (bounds.bound), which reads no file: once is enough.
					mu.Lock()
					again := benchRun
					benchRun = true
					mu.Unlock()
					if again {
						continue
					}
				}
				msg, cpu := runDocCommand(b, bin, root, dir, c)
				if msg != "" {
					fail(c, "%s", msg)
				}
				mu.Lock()
				costs = append(costs, cost{cpu, c})
				mu.Unlock()
			}
		}(blocks[n])
	}
	wg.Wait()
	slices.Sort(failures)
	for _, f := range failures {
		t.Error(f)
	}
	// The most expensive commands, in CPU time (user + system), for go test -v.
	slices.SortFunc(costs, func(a, b cost) int { return int(b.cpu - a.cpu) })
	var total time.Duration
	for _, c := range costs {
		total += c.cpu
	}
	t.Logf("%d commands, %.1f CPU-seconds; the costliest:", len(costs), total.Seconds())
	for _, c := range costs[:min(12, len(costs))] {
		t.Logf("%6.1fs  %s: %s", c.cpu.Seconds(), c.c.where(), c.c.shown)
	}
}

// cost is the CPU time a documented command took (its process and children).
type cost struct {
	cpu time.Duration
	c   docCommand
}

// seedDir gives a block's directory what the repository root has for the commands:
// a copy of docs/ (a command may write into it) and the example's fault plan.
func seedDir(root, dir string) error {
	if err := os.CopyFS(filepath.Join(dir, "docs"), os.DirFS(filepath.Join(root, "docs"))); err != nil {
		return err
	}
	q := filepath.Join(dir, "examples", "quorum")
	if err := os.MkdirAll(q, 0o755); err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(root, "examples", "quorum", "faults.json"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(q, "faults.json"), data, 0o644)
}

// runDocCommand runs or checks one command and returns "" or what is wrong, and the
// CPU time it took.
func runDocCommand(b bounds, bin, root, dir string, c docCommand) (string, time.Duration) {
	cmd := c.shown
	cmd = strings.ReplaceAll(cmd, "go run ./cmd/simrun", "simrun")
	cmd = strings.ReplaceAll(cmd, "go run ./cmd/quorum", "quorum")
	switch {
	case strings.HasPrefix(cmd, "go install "), strings.HasPrefix(cmd, "git clone "):
		return "", 0 // the set-up, which the fresh-clone check in the notes covers
	case strings.HasPrefix(cmd, "go test"):
		return checkGoTest(root, cmd), 0
	case strings.HasPrefix(cmd, "go run ./tools/mutate "):
		return checkMutate(bin, root, cmd), 0
	case strings.HasPrefix(cmd, "go run ./tools/bugpass "):
		return checkBugpass(root, cmd), 0
	case strings.HasPrefix(cmd, "go run ./tools/guidedeval "):
		return checkGuidedeval(root, dir, cmd), 0
	case strings.HasPrefix(cmd, "simrun explore "):
		return runExplore(bin, dir, cmd), 0
	case !strings.Contains(cmd, "simrun") && !strings.Contains(cmd, "quorum "):
		return "a command this test does not know how to check (TestDocCommands)", 0
	}
	checked := false
	if c.exit == 0 {
		cmd, checked = b.bound(cmd)
	}
	run := exec.Command("bash", "-c", cmd)
	run.Dir = dir
	run.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+dir)
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	err := run.Run()
	var cpu time.Duration
	if ps := run.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return err.Error(), cpu
	}
	if checked && code == 4 && strings.Contains(stdout.String()+stderr.String(), "bound reached (max-states)") {
		return "", cpu // the test's bound, not the reader's
	}
	if code != c.exit {
		return fmt.Sprintf("exit %d, the page says %d (ran %q): %s", code, c.exit, cmd, firstLine(stderr.String())), cpu
	}
	return "", cpu
}

// runExplore starts `simrun explore`, waits for the address it prints, loads the page
// and the API's info, then stops it as a reader would (Ctrl-C): event by event, no
// clock.
func runExplore(bin, dir, cmd string) string {
	run := exec.Command("bash", "-c", "exec "+cmd)
	run.Dir = dir
	run.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+dir)
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.StdoutPipe()
	if err != nil {
		return err.Error()
	}
	if err := run.Start(); err != nil {
		return err.Error()
	}
	lines := bufio.NewScanner(out)
	url := ""
	if lines.Scan() {
		if _, after, ok := strings.Cut(lines.Text(), " at http://"); ok {
			url = "http://" + strings.Fields(after)[0]
		}
	}
	if url == "" {
		run.Wait()
		return fmt.Sprintf("no address printed: %q %s", lines.Text(), firstLine(stderr.String()))
	}
	msg := ""
	for _, path := range []string{"", "api/info"} {
		resp, err := http.Get(url + path)
		if err != nil {
			msg = err.Error()
			break
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			msg = fmt.Sprintf("GET /%s: %s", path, resp.Status)
			break
		}
	}
	run.Process.Signal(syscall.SIGINT)
	rest, _ := io.ReadAll(out)
	err = run.Wait()
	switch {
	case msg != "":
		return msg
	case err != nil:
		return fmt.Sprintf("after Ctrl-C: %v %s", err, firstLine(stderr.String()))
	case !strings.Contains(string(rest), "explore: stopped"):
		return fmt.Sprintf("after Ctrl-C: %q", rest)
	}
	return ""
}

var (
	runFlag  = regexp.MustCompile(`-run '?([^' ]+)'?`)
	testFlag = regexp.MustCompile(`-test (\S+)`)
	pkgArg   = regexp.MustCompile(`(?:^| )(\./\S*)`)
)

// checkGoTest checks a `go test` command without running it (the suite is what runs
// the documented commands): its packages exist and every test its -run names does.
func checkGoTest(root, cmd string) string {
	pkgs := pkgArg.FindAllStringSubmatch(cmd, -1)
	if len(pkgs) == 0 {
		return "no package"
	}
	for _, p := range pkgs {
		dir := strings.TrimSuffix(p[1], "/...")
		if fi, err := os.Stat(filepath.Join(root, dir)); err != nil || !fi.IsDir() {
			return fmt.Sprintf("no package %s", p[1])
		}
		if msg := testsExist(root, dir, cmd); msg != "" {
			return msg
		}
	}
	return ""
}

// checkMutate runs a mutation pass's command with -list (the mutants, not their
// tests: a pass takes minutes) and checks that the tests its -run names exist.
func checkMutate(bin, root, cmd string) string {
	args := strings.Fields(strings.TrimPrefix(cmd, "go run ./tools/mutate "))
	for i := range args {
		args[i] = strings.Trim(args[i], "'")
	}
	run := exec.Command(filepath.Join(bin, "mutate"), append(args, "-list")...)
	run.Dir = root
	if out, err := run.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("*")) {
		return fmt.Sprintf("-list: %v: %s", err, firstLine(string(out)))
	}
	m := testFlag.FindStringSubmatch(cmd)
	if m == nil {
		return "no -test package"
	}
	return testsExist(root, m[1], cmd)
}

// checkBugpass runs a bug pass's command with -dry (every patch must apply to this
// tree; the pass itself takes half an hour per protocol).
func checkBugpass(root, cmd string) string {
	out, err := goRunTool(root, "bugpass", cmd, "-dry")
	if err != nil || !strings.Contains(out, " patches apply") {
		return fmt.Sprintf("-dry: %v: %s", err, lastLineOf(out))
	}
	return ""
}

// goRunTool runs the documented command of ./tools/NAME (its comment cut) with extra
// arguments, from the repository root.
func goRunTool(root, name, cmd string, extra ...string) (string, error) {
	args := strings.Fields(strings.TrimPrefix(cmd, "go run ./tools/"+name+" "))
	if i := slices.Index(args, "#"); i >= 0 {
		args = args[:i]
	}
	run := exec.Command("go", append([]string{"run", "./tools/" + name}, append(args, extra...)...)...)
	run.Dir = root
	out, err := run.CombinedOutput()
	return string(out), err
}

// checkGuidedeval runs the guided-sweep measurement scaled down: one protocol, 10
// runs per sweep, 20 candidate runs per shrink, its page written under dir.
func checkGuidedeval(root, dir, cmd string) string {
	fields := strings.Fields(cmd)
	for i := 0; i+1 < len(fields); i++ {
		switch fields[i] {
		case "-out":
			fields[i+1] = filepath.Join(dir, fields[i+1])
		case "-budget":
			fields[i+1] = "10"
		}
	}
	out, err := goRunTool(root, "guidedeval", strings.Join(fields, " "), "-only", "saga", "-shrink-runs", "20")
	if err != nil || !strings.Contains(out, "median ratio") {
		return fmt.Sprintf("guidedeval: %v: %s", err, lastLineOf(out))
	}
	return ""
}

func lastLineOf(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

// testsExist checks that every name of the command's -run alternatives is a test
// function of the package in dir.
func testsExist(root, dir, cmd string) string {
	m := runFlag.FindStringSubmatch(cmd)
	if m == nil {
		return ""
	}
	files, _ := filepath.Glob(filepath.Join(root, dir, "*_test.go"))
	var src []byte
	for _, f := range files {
		data, _ := os.ReadFile(f)
		src = append(src, data...)
	}
	for _, name := range strings.Split(strings.Trim(m[1], "^$"), "|") {
		if !bytes.Contains(src, []byte("func "+name+"(")) {
			return fmt.Sprintf("-run names %s, which is not a test of %s", name, dir)
		}
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// The README's "How it fits together" table matches the tree: every row names a
// directory that exists, and every top-level directory holding Go code has a row.
func TestReadmePackageTable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "## How it fits together\n")
	if !ok {
		t.Fatal(`README.md has no "How it fits together" section`)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	rows := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(table, -1)
	if len(rows) < 10 {
		t.Fatalf("%d rows in the package table", len(rows))
	}
	listed := map[string]bool{}
	for _, r := range rows {
		dir := strings.TrimSuffix(r[1], "/")
		if d, ok := strings.CutSuffix(dir, "/<name>"); ok {
			dir = d
		}
		if fi, err := os.Stat(filepath.Join(repoRoot, dir)); err != nil || !fi.IsDir() {
			t.Errorf("the table names %s, which is not a directory", r[1])
		}
		listed[strings.Split(dir, "/")[0]] = true
	}
	entries, err := os.ReadDir(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "docs" || listed[e.Name()] {
			continue
		}
		goCode := false
		filepath.WalkDir(filepath.Join(repoRoot, e.Name()), func(p string, d fs.DirEntry, err error) error {
			goCode = goCode || err == nil && strings.HasSuffix(p, ".go")
			return err
		})
		if goCode || e.Name() == "deploy" {
			t.Errorf("top-level directory %s/ has no row in the README's package table", e.Name())
		}
	}
}

// CI runs exactly the README's test command (the whole suite), after gofmt, go vet,
// staticcheck and the example module's tests.
func TestCIRunsTheReadmeTestCommand(t *testing.T) {
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^go test \./\.\.\. +# the whole suite, what CI runs`).Match(readme) {
		t.Fatal("the README does not show `go test ./...` as the whole suite CI runs")
	}
	for _, want := range []string{"\ngo test ./...\n", "gofmt -l", "go vet ./...", "staticcheck", "cd examples/quorum"} {
		if !strings.Contains(string(ci), want) {
			t.Errorf(".ci/run does not run %q", strings.TrimSpace(want))
		}
	}
}

// Every relative link of the README and docs/ leads to a file, and every #anchor to a
// heading of that page (GitHub's slugs: lower case, punctuation dropped, spaces as -).
func TestDocLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading := regexp.MustCompile(`(?m)^#+ (.+)$`)
	slug := func(h string) string {
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	anchors := func(file string) map[string]bool {
		data, _ := os.ReadFile(file)
		out := map[string]bool{}
		for _, m := range heading.FindAllStringSubmatch(string(data), -1) {
			out[slug(m[1])] = true
		}
		return out
	}
	for _, f := range docFiles(t) {
		path := filepath.Join(repoRoot, f)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := path
			if file != "" {
				dest = filepath.Join(filepath.Dir(path), file)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link to %s: no such file", f, target)
					continue
				}
			}
			if anchor != "" && !anchors(dest)[anchor] {
				t.Errorf("%s: link to %s: no heading with that anchor", f, target)
			}
		}
	}
}
