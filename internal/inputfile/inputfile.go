// Package inputfile reads the files a user names, within a bound: a regular file (or a
// pipe, read up to the bound), never a directory or a device. /dev/zero named as a
// configuration used to be read whole before its size was checked, until the machine
// ran out of memory.
package inputfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Open opens path for reading if it is a regular file of at most limit bytes or a
// pipe (whose reader must stop at limit: see Read); anything else is an error naming
// the path and what it is.
func Open(path string, limit int64) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := Check(path, st, limit); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Check says whether a file of this kind and size may be read as input: a regular
// file of at most limit bytes, or a pipe.
func Check(path string, st fs.FileInfo, limit int64) error {
	m := st.Mode()
	switch {
	case m.IsDir():
		return fmt.Errorf("%s is a directory, not a file", path)
	case m&fs.ModeNamedPipe != 0:
		return nil
	case !m.IsRegular():
		return fmt.Errorf("%s is not a regular file (%s)", path, kind(m))
	case st.Size() > limit:
		return fmt.Errorf("%s is %d bytes, more than the limit of %s", path, st.Size(), Size(limit))
	}
	return nil
}

// Read reads the whole of path if it is a regular file (or a pipe) of at most limit
// bytes.
func Read(path string, limit int64) ([]byte, error) {
	f, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is more than the limit of %s", path, Size(limit))
	}
	return b, nil
}

// Size writes a byte count for a reader: "1 MiB", "64 MiB", "4096 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "mode " + m.String()
}
