package inputfile

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Devices and directories are refused before a byte is read; a file over the limit is
// refused by its size; a pipe is read up to the limit and no further.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(small, 5); err != nil || string(b) != "hello" {
		t.Fatalf("small file: %q, %v", b, err)
	}
	for _, c := range []struct {
		path  string
		limit int64
		want  string
	}{
		{small, 4, "is 5 bytes, more than the limit of 4 bytes"},
		{dir, 1 << 20, "is a directory"},
		{"/dev/zero", 1 << 20, "not a regular file (a character device)"},
		{"/dev/urandom", 1 << 20, "not a regular file (a character device)"},
		{filepath.Join(dir, "missing"), 1, "no such file"},
	} {
		if _, err := os.Stat(c.path); c.path[:5] == "/dev/" && err != nil {
			continue // no such device here
		}
		_, err := Read(c.path, c.limit)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		w.Write(make([]byte, 1<<16))
		w.Close()
	}()
	if _, err := Read("/dev/fd/"+strconv.Itoa(int(r.Fd())), 1000); err == nil || !strings.Contains(err.Error(), "more than the limit of 1000 bytes") {
		t.Errorf("pipe over the limit: %v", err)
	}
	r.Close()
	if got := Size(64 << 20); got != "64 MiB" {
		t.Errorf("Size: %s", got)
	}
}
