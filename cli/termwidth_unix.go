//go:build linux || darwin || freebsd || netbsd || openbsd

package cli

import (
	"os"
	"syscall"
	"unsafe"
)

// termWidth returns the width in columns of the terminal f is, or 0 when f is not a
// terminal. $COLUMNS, when a positive number, wins (as for ls).
func termWidth(f *os.File) int {
	if w := columnsEnv(); w > 0 {
		return w
	}
	var ws struct{ Row, Col, X, Y uint16 }
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws))); errno != 0 {
		return 0
	}
	return int(ws.Col)
}
