// Command tracecmp checks that a change of the code leaves runs as they were: it builds
// simrun at another revision (default HEAD) in a scratch worktree and at the working
// tree, runs every suite scenario on seeds 1..N with --trace under both, and compares
// the traces byte for byte. A refactoring that claims "no behaviour change" proves it
// with this; a difference names the scenario, the seed and the first differing line.
//
//	go run ./tools/tracecmp -base HEAD~3 -seeds 20
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	base := flag.String("base", "HEAD", "the revision to compare the working tree with")
	seeds := flag.Int("seeds", 20, "seeds 1..`N` of every suite scenario")
	only := flag.String("only", "", "a scenario-name prefix (default: every suite scenario)")
	flag.Parse()
	diffs, runs, err := run(*base, *seeds, *only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracecmp:", err)
		os.Exit(2)
	}
	fmt.Printf("%d runs compared, %d differ\n", runs, diffs)
	if diffs > 0 {
		os.Exit(1)
	}
}

func run(base string, seeds int, only string) (int, int, error) {
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return 0, 0, fmt.Errorf("not in a git repository: %w", err)
	}
	repo := strings.TrimSpace(string(root))
	scratch, err := os.MkdirTemp("", "tracecmp-*")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(scratch)
	wt := filepath.Join(scratch, "base")
	if out, err := exec.Command("git", "-C", repo, "worktree", "add", "--detach", wt, base).CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("worktree: %v: %s", err, out)
	}
	defer exec.Command("git", "-C", repo, "worktree", "remove", "--force", wt).Run()
	bins := map[string]string{"base": filepath.Join(scratch, "simrun-base"), "work": filepath.Join(scratch, "simrun-work")}
	for name, dir := range map[string]string{"base": wt, "work": repo} {
		b := exec.Command("go", "build", "-o", bins[name], "./cmd/simrun")
		b.Dir = dir
		if out, err := b.CombinedOutput(); err != nil {
			return 0, 0, fmt.Errorf("build %s: %v: %s", name, err, out)
		}
	}
	list, err := exec.Command(bins["work"], "list", "--suite").Output()
	if err != nil {
		return 0, 0, fmt.Errorf("list: %w", err)
	}
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(list))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 && strings.Contains(f[0], "/") && strings.HasPrefix(f[0], only) {
			names = append(names, f[0])
		}
	}
	diffs, runs := 0, 0
	for _, name := range names {
		for seed := 1; seed <= seeds; seed++ {
			var traces [2][]byte
			for i, which := range []string{"base", "work"} {
				path := filepath.Join(scratch, which+".jsonl")
				os.Remove(path)
				// The exit code is the run's verdict; the trace is what is compared.
				exec.Command(bins[which], "run", name, "--seed", fmt.Sprint(seed), "--trace", path).Run()
				traces[i], _ = os.ReadFile(path)
			}
			runs++
			if !bytes.Equal(traces[0], traces[1]) {
				diffs++
				fmt.Printf("%s seed %d differs at line %d\n", name, seed, firstDiff(traces[0], traces[1]))
			}
		}
	}
	return diffs, runs, nil
}

func firstDiff(a, b []byte) int {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < min(len(la), len(lb)); i++ {
		if !bytes.Equal(la[i], lb[i]) {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}
