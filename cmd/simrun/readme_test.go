package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// readmeCommand is one `simrun …` line of a ```sh block of the README.
type readmeCommand struct {
	line  int
	cmd   string // without the trailing comment; "go run ./cmd/simrun" read as "simrun"
	exit  int    // expected exit code: "exit N" in the comment, else 0
	block int    // index of the block (commands of one block run in order, in one directory)
}

var exitNote = regexp.MustCompile(`\bexit (\d)\b`)

// readmeCommands extracts every simrun command of the README's ```sh blocks.
func readmeCommands(t *testing.T) []readmeCommand {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []readmeCommand
	in, block := false, -1
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
		cmd, comment, _ := strings.Cut(line, "#")
		cmd = strings.TrimSpace(cmd)
		if rest, ok := strings.CutPrefix(cmd, "go run ./cmd/simrun"); ok {
			cmd = "simrun" + rest
		}
		if !strings.HasPrefix(cmd, "simrun") && !(strings.HasPrefix(cmd, "for ") && strings.Contains(cmd, "do simrun")) {
			continue // go test ./... is CI itself
		}
		c := readmeCommand{line: i + 1, cmd: cmd, block: block}
		if m := exitNote.FindStringSubmatch(comment); m != nil {
			c.exit, _ = strconv.Atoi(m[1])
		}
		out = append(out, c)
	}
	return out
}

// Issue 16, item 6: every command the README shows works as written. Each runs (through
// bash, so globs and quoting are the reader's) from the directory of its block, a
// fresh one holding a copy of the repository's docs/, with the binary first on PATH. A command
// that ends must end with its documented exit code (0 unless its comment says "exit
// N"); one still running after readmeBudget (a million-seed sweep) must have printed
// no error by then — what goes stale in a README is a flag, a name or a path, and
// those fail at once.
func TestReadmeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the README commands are run by the full test suite")
	}
	cmds := readmeCommands(t)
	if len(cmds) < 10 {
		t.Fatalf("found %d simrun commands in the README; the extraction is broken", len(cmds))
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "simrun"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	docs, _ := filepath.Abs("../../docs")
	blocks := map[int][]readmeCommand{}
	var order []int
	for _, c := range cmds {
		if _, ok := blocks[c.block]; !ok {
			order = append(order, c.block)
		}
		blocks[c.block] = append(blocks[c.block], c)
	}
	// Blocks run two at a time; the commands of one block in order.
	sem := make(chan struct{}, max(1, runtime.NumCPU()))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for _, b := range order {
		wg.Add(1)
		go func(cs []readmeCommand) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			dir := t.TempDir()
			// A copy, not a link: a command may write into docs/ (figures).
			if err := os.CopyFS(filepath.Join(dir, "docs"), os.DirFS(docs)); err != nil {
				mu.Lock()
				failures = append(failures, err.Error())
				mu.Unlock()
				return
			}
			for _, c := range cs {
				if msg := runReadmeCommand(bin, dir, c); msg != "" {
					mu.Lock()
					failures = append(failures, msg)
					mu.Unlock()
				}
			}
		}(blocks[b])
	}
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
}

// readmeBudget is how long one README command may run before it is stopped.
const readmeBudget = 8 * time.Second

func runReadmeCommand(bin, dir string, c readmeCommand) string {
	ctx, cancel := context.WithTimeout(context.Background(), readmeBudget)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", c.cmd)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+dir)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		if bytes.Contains(stderr.Bytes(), []byte("simrun: ")) {
			return "README.md:" + strconv.Itoa(c.line) + ": " + c.cmd + ": " + firstLine(stderr.String())
		}
		return "" // still going after the budget, no error so far
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return "README.md:" + strconv.Itoa(c.line) + ": " + c.cmd + ": " + err.Error()
	}
	if code != c.exit {
		return "README.md:" + strconv.Itoa(c.line) + ": " + c.cmd + ": exit " + strconv.Itoa(code) + ", README says " + strconv.Itoa(c.exit) + ": " + firstLine(stderr.String())
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
