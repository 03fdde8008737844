// Command mutate runs a mutation pass over a Go package: it makes small one-token
// changes to the package's non-test source (each a plausible one-line bug: a flipped
// comparison, a swapped logical operator, an off-by-one constant, a dropped negation,
// a flipped boolean), and for each runs the given tests against the mutated package
// through `go test -overlay` (the source tree is never modified). A mutant the tests
// fail on is killed; one they pass is a survivor: a bug the checks would let through
// (or an equivalent change, which only a reader can tell).
//
//	go run ./tools/mutate -pkg ./protocols/winkowski -test ./scenarios/winkowski \
//	    -run 'Seeds|Plans|Model' -n 30 -seed 1
//
// Mutants are enumerated in file and position order and sampled by -seed, so a pass is
// reproducible; -list prints the mutants (the sample marked *) without running
// anything, and -only 12,40 runs the mutants of those numbers (a pass's survivors,
// say, after adding a check). -exclude probe.go,meter.go leaves files out of the pass:
// workload drivers that live in the protocol package but belong to the test harness. A mutant that does
// not compile is reported as invalid and not counted. A test run that exceeds -timeout
// counts as killed (a hang is a detected bug). Exit code: 0 when the pass ran (whatever
// survived), 2 on bad input.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// mutant is one single-token change of one file.
type mutant struct {
	file       string // absolute path
	line       int
	off, end   int // byte range replaced
	from, to   string
	what       string
	sourceLine string
	num        int // its number in the -list order
}

func (m mutant) String() string {
	return fmt.Sprintf("%s:%d: %s: %q -> %q", m.file, m.line, m.what, m.from, m.to)
}

var swaps = map[token.Token][]token.Token{
	token.EQL:  {token.NEQ},
	token.NEQ:  {token.EQL},
	token.LSS:  {token.LEQ},
	token.LEQ:  {token.LSS},
	token.GTR:  {token.GEQ},
	token.GEQ:  {token.GTR},
	token.LAND: {token.LOR},
	token.LOR:  {token.LAND},
	token.ADD:  {token.SUB},
	token.SUB:  {token.ADD},
}

// enumerate lists the mutants of every non-test .go file of dir not named in exclude
// (base names), in order.
func enumerate(dir string, exclude []string) ([]mutant, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []mutant
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || slices.Contains(exclude, filepath.Base(f)) {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		fset := token.NewFileSet()
		af, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		lines := strings.Split(string(src), "\n")
		add := func(pos token.Pos, length int, to, what string) {
			p := fset.Position(pos)
			m := mutant{file: f, line: p.Line, off: p.Offset, end: p.Offset + length, from: string(src[p.Offset : p.Offset+length]), to: to, what: what}
			if p.Line-1 < len(lines) {
				m.sourceLine = strings.TrimSpace(lines[p.Line-1])
			}
			out = append(out, m)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GenDecl:
				if x.Tok == token.CONST || x.Tok == token.IMPORT {
					return false // constants feed array sizes and iota; imports are not logic
				}
			case *ast.BinaryExpr:
				for _, t := range swaps[x.Op] {
					if x.Op == token.ADD || x.Op == token.SUB {
						if _, str := x.X.(*ast.BasicLit); str {
							continue
						}
					}
					add(x.OpPos, len(x.Op.String()), t.String(), "operator")
				}
			case *ast.UnaryExpr:
				if x.Op == token.NOT {
					add(x.OpPos, 1, "", "negation dropped")
				}
			case *ast.Ident:
				switch x.Name {
				case "true":
					add(x.Pos(), 4, "false", "boolean")
				case "false":
					add(x.Pos(), 5, "true", "boolean")
				}
			case *ast.BasicLit:
				if x.Kind == token.INT && (x.Value == "0" || x.Value == "1" || x.Value == "2") {
					add(x.Pos(), len(x.Value), x.Value+"+1", "constant off by one")
				}
			}
			return true
		})
	}
	return out, nil
}

// verdict of one mutant.
type verdict string

const (
	killed   verdict = "killed"
	survived verdict = "SURVIVED"
	invalid  verdict = "invalid (does not compile)"
	timedOut verdict = "killed (timeout)"
)

func run(m mutant, tmp string, testPkgs []string, runRE string, timeout time.Duration) (verdict, string, error) {
	src, err := os.ReadFile(m.file)
	if err != nil {
		return "", "", err
	}
	mutated := append(append(append([]byte{}, src[:m.off]...), m.to...), src[m.end:]...)
	mf := filepath.Join(tmp, "mutant.go")
	if err := os.WriteFile(mf, mutated, 0o644); err != nil {
		return "", "", err
	}
	ov, _ := json.Marshal(map[string]map[string]string{"Replace": {m.file: mf}})
	of := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(of, ov, 0o644); err != nil {
		return "", "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := append([]string{"test", "-overlay", of, "-vet=off", "-count=1", "-failfast"}, testPkgs...)
	if runRE != "" {
		args = append(args, "-run", runRE)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	// Tests that pin state counts compare verdicts only under a mutation pass (see
	// scenariotest.Unpinned): a pinned count changes with any change of behaviour.
	cmd.Env = append(os.Environ(), "SIMRUN_MUTANT=1") // scenariotest.MutantEnv
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		return timedOut, "", nil
	case err == nil:
		return survived, "", nil
	case strings.Contains(string(out), "[build failed]") || strings.Contains(string(out), "[setup failed]"):
		return invalid, "", nil
	}
	// The first failing test names what caught it.
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--- FAIL:") {
			return killed, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "--- FAIL:")), nil
		}
	}
	return killed, "", nil
}

func main() {
	pkg := flag.String("pkg", "", "package `DIR` to mutate (e.g. ./protocols/winkowski)")
	test := flag.String("test", "", "comma-separated test packages to run (default: the mutated package)")
	runRE := flag.String("run", "", "go test -run `REGEXP` (default: every test)")
	n := flag.Int("n", 20, "mutants to run, sampled by -seed (0 = all)")
	seed := flag.Uint64("seed", 1, "sampling seed")
	timeout := flag.Duration("timeout", 3*time.Minute, "per-mutant test time limit (exceeding it counts as killed)")
	list := flag.Bool("list", false, "list the mutants (the sampled ones marked *) and exit")
	only := flag.String("only", "", "run only the mutants `N,N,...` numbered as -list prints them (overrides -n)")
	exclude := flag.String("exclude", "", "comma-separated `FILES` (base names) not to mutate: workload drivers that are part of the test harness, say")
	flag.Parse()
	if *pkg == "" || flag.NArg() > 0 || *n < 0 || *timeout <= 0 {
		fmt.Fprintln(os.Stderr, "mutate: usage: go run ./tools/mutate -pkg DIR [-test PKGS] [-run REGEXP] [-n N] [-seed S] [-only N,N] [-timeout D] [-list]")
		os.Exit(2)
	}
	dir, err := filepath.Abs(*pkg)
	if err != nil {
		fail(err)
	}
	var skip []string
	if *exclude != "" {
		skip = strings.Split(*exclude, ",")
	}
	ms, err := enumerate(dir, skip)
	if err != nil {
		fail(err)
	}
	if len(ms) == 0 {
		fail(errors.New("no mutants: no non-test Go source in " + *pkg))
	}
	idx, err := sample(len(ms), *n, *seed, *only)
	if err != nil {
		fail(err)
	}
	if *list {
		chosen := map[int]bool{}
		for _, i := range idx {
			chosen[i] = true
		}
		for i, m := range ms {
			mark := " "
			if chosen[i] && len(idx) < len(ms) {
				mark = "*"
			}
			fmt.Printf("%s%4d %v\n", mark, i, m)
		}
		return
	}
	var pick []mutant
	for _, i := range idx {
		pick = append(pick, ms[i])
	}
	tests := []string{*pkg}
	if *test != "" {
		tests = strings.Split(*test, ",")
	}
	tmp, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(tmp)
	excl := ""
	if *exclude != "" {
		excl = " (not " + *exclude + ")"
	}
	fmt.Printf("mutate %s%s: %d mutants in all, running %d (seed %d) against %s -run %q\n", *pkg, excl, len(ms), len(pick), *seed, strings.Join(tests, ","), *runRE)
	counts := map[verdict]int{}
	var survivors []mutant
	start := time.Now()
	for i, m := range pick {
		v, by, err := run(m, tmp, tests, *runRE, *timeout)
		if err != nil {
			fail(err)
		}
		counts[v]++
		rel, _ := filepath.Rel(dir, m.file)
		line := fmt.Sprintf("[%d/%d] #%d %s:%d %s %q->%q: %s", i+1, len(pick), idx[i], rel, m.line, m.what, m.from, m.to, v)
		if by != "" {
			line += " by " + by
		}
		fmt.Println(line)
		if v == survived {
			m.num = idx[i]
			survivors = append(survivors, m)
		}
	}
	valid := len(pick) - counts[invalid]
	fmt.Printf("\n%d mutants run in %v: %d killed, %d killed by timeout, %d survived, %d invalid", len(pick), time.Since(start).Round(time.Second), counts[killed], counts[timedOut], counts[survived], counts[invalid])
	if valid > 0 {
		fmt.Printf("; mutation score %.0f%%", 100*float64(valid-counts[survived])/float64(valid))
	}
	fmt.Println()
	for _, m := range survivors {
		rel, _ := filepath.Rel(dir, m.file)
		fmt.Printf("  survivor #%d %s:%d: %q -> %q in: %s\n", m.num, rel, m.line, m.from, m.to, m.sourceLine)
	}
}

// sample returns the numbers of the mutants to run, in order: those listed in only,
// or n of all (every one when n is 0 or at least all) drawn by seed.
func sample(all, n int, seed uint64, only string) ([]int, error) {
	if only != "" {
		var idx []int
		for _, f := range strings.Split(only, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 || i >= all {
				return nil, fmt.Errorf("-only: %q is not a mutant number (0 to %d)", f, all-1)
			}
			idx = append(idx, i)
		}
		sort.Ints(idx)
		return slices.Compact(idx), nil
	}
	if n == 0 || n >= all {
		idx := make([]int, all)
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	r := rand.New(rand.NewPCG(seed, 0x6d75746174650a))
	idx := r.Perm(all)[:n]
	sort.Ints(idx)
	return idx, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mutate:", err)
	os.Exit(2)
}
