package reports

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/simrun-dev/simrun/internal/inputfile"
)

// ManifestName is the file every report directory holds: the files the report wrote,
// one relative path a line. It marks the directory as simrun's, so that writing a new
// report there first removes the old one's files (no stale page or figure survives,
// say messages-9.svg of a longer earlier run), and nothing else is ever deleted.
const ManifestName = ".simrun-report"

// PrepareDir makes dir ready for a report: it creates it if needed; if it holds an
// earlier report (a manifest), it removes the files that report wrote, and the
// reports nested in its subdirectories (a sweep's failing seeds); a directory that is
// not empty and holds no report is refused, so a mistyped path never mixes a report
// into someone's files or loses them.
func PrepareDir(dir string) error {
	if dir == "" {
		return errors.New("empty directory name")
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	old, err := readManifest(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s is not empty and holds no simrun report (no %s): choose a new or empty directory", dir, ManifestName)
	}
	if err != nil {
		return err
	}
	return clearReport(dir, old)
}

// clearReport removes the files of dir's report (listed in its manifest), the reports
// in its subdirectories, the directories left empty, and the manifest.
func clearReport(dir string, files []string) error {
	for _, f := range files {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if inner, err := readManifest(sub); err == nil {
			if err := clearReport(sub, inner); err != nil {
				return err
			}
		}
		if rest, err := os.ReadDir(sub); err == nil && len(rest) == 0 {
			os.Remove(sub)
		}
	}
	if err := os.Remove(filepath.Join(dir, ManifestName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// maxManifestBytes bounds a manifest (one line per file a report wrote).
const maxManifestBytes = 16 << 20

// readManifest returns the files a report in dir wrote (relative paths inside dir).
func readManifest(dir string) ([]string, error) {
	f, err := inputfile.Open(filepath.Join(dir, ManifestName), maxManifestBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var files []string
	sc := bufio.NewScanner(io.LimitReader(f, maxManifestBytes))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		// Only plain names below dir: a tampered manifest deletes nothing outside.
		if filepath.IsAbs(l) || !filepath.IsLocal(l) {
			continue
		}
		files = append(files, l)
	}
	return files, sc.Err()
}

// writeManifest records the files written into dir (paths as written, absolute or
// relative to the working directory; those outside dir are left out) as dir's manifest, merged with the manifest there
// (several writers may share a directory: a run's artifacts and its page).
func writeManifest(dir string, files []string) error {
	old, _ := readManifest(dir)
	set := slices.Clone(old)
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(absDir, abs); err == nil && filepath.IsLocal(rel) {
			set = append(set, filepath.ToSlash(rel))
		}
	}
	slices.Sort(set)
	set = slices.Compact(set)
	body := "# files written by simrun for this report; the next report written here removes them\n" + strings.Join(set, "\n") + "\n"
	return os.WriteFile(filepath.Join(dir, ManifestName), []byte(body), 0o644)
}
