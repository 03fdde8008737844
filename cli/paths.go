package cli

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/simrun-dev/simrun/scenarios"
)

// Path flags by role, over every command: the files a command writes (FILE), the
// directories it writes into (DIR), and the files it reads. --report is checked by
// writableDir (it clears an earlier report), and '-' is standard output.
var (
	outputFiles = map[string]bool{"trace": true, "json": true, "viz": true}
	outputDirs  = map[string]bool{"artifacts": true, "out": true}
	inputFiles  = map[string]bool{"faults": true}
	// commands whose arguments are files they read (an output must not be one)
	readsArgs = map[string]bool{"merge": true, "lincheck": true, "replay": true}
)

// checkPaths checks every path flag given before any work starts, so that a search of
// an hour does not end in "cannot write the trace" (check --trace /proc/x/t.jsonl
// used to exit 0 after its search), a plan is not overwritten by the trace written
// from it (run --faults plan.json --trace plan.json), and a file where a directory is
// wanted is said (--artifacts FILE exited 0, writing nothing). args are the command's
// positional arguments.
func checkPaths(fs *flag.FlagSet, args []string) error {
	if err := emptyPaths(fs); err != nil {
		return err
	}
	var inputs []string
	fs.Visit(func(f *flag.Flag) {
		if inputFiles[f.Name] {
			inputs = append(inputs, f.Value.String())
		}
	})
	if readsArgs[fs.Name()] {
		inputs = append(inputs, args...)
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		kind, _ := flag.UnquoteUsage(f)
		v := f.Value.String()
		if err != nil || v == "" || v == "-" {
			return
		}
		switch {
		case kind == "FILE" && outputFiles[f.Name]:
			if e := writableFile(v, inputs); e != nil {
				err = usageErr("%s: --%s: %v", fs.Name(), f.Name, e)
			}
		case kind == "DIR" && outputDirs[f.Name]:
			if e := dirPath(v); e != nil {
				err = usageErr("%s: --%s: %v", fs.Name(), f.Name, e)
			}
		}
	})
	return err
}

// writableFile says whether path can be written (created, or an existing file
// replaced) without touching it, and is none of the inputs.
func writableFile(path string, inputs []string) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return errors.New(path + " is a directory")
	case err == nil:
		for _, in := range inputs {
			if ist, ierr := os.Stat(in); ierr == nil && os.SameFile(st, ist) {
				return errors.New(path + " is also an input of this command: it would be overwritten")
			}
		}
		if !st.Mode().IsRegular() {
			return nil // a device (/dev/stdout, /dev/null) or a pipe: written as it is
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		return f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	dir := filepath.Dir(path)
	dst, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !dst.IsDir() {
		return errors.New(dir + " is not a directory")
	}
	// Create and remove a file beside it: the directory takes new files.
	f, err := os.CreateTemp(dir, ".simrun-probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// dirPath says whether path is, or can be made, a directory: it is one, or its
// nearest existing ancestor is (MkdirAll makes the rest when a file is written).
func dirPath(path string) error {
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		switch {
		case err == nil && st.IsDir():
			return nil
		case err == nil && p == filepath.Clean(path):
			return errors.New(path + " is a file, not a directory")
		case err == nil:
			return errors.New(p + " is a file, not a directory")
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return err
		}
		if parent := filepath.Dir(p); parent == p {
			return nil
		}
	}
}

// maxSeedsPerProcess bounds the seeds one sweep process runs: a hundred million
// takes a day or more on a machine of a few cores (a fast scenario runs a seed in a
// millisecond a core). A larger range is sharded (--shard i/n, then merge).
const maxSeedsPerProcess = 100_000_000

// checkSweepSize refuses a sweep no machine can finish: more than maxSeedsPerProcess
// seeds in this process's share (the whole range, or its shard's slice). 1-2^64
// used to run silently forever.
func checkSweepSize(seeds scenarios.SeedRange, shard, shards int) error {
	n := seeds.To - seeds.From // one less than the seeds: the full range does not wrap
	what := "seeds"
	if shards > 0 {
		if r, ok := scenarios.ShardRange(seeds, shard, shards); ok {
			n = r.To - r.From
		}
		what = fmt.Sprintf("seeds in shard %d/%d", shard, shards)
	}
	if n >= maxSeedsPerProcess {
		return usageErr("sweep: --seeds %v: %s %s, more than one process can run (at most %s: split the range with --shard i/n and merge the results)",
			seeds, humanCount(n+1), what, humanCount(maxSeedsPerProcess))
	}
	return nil
}

// humanCount writes n with thin groups of three digits ("18 446 744 073 709 551 615").
func humanCount(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ' ')
		}
		b = append(b, s[i])
	}
	return string(b)
}
