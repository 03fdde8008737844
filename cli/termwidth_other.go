//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package cli

import "os"

// termWidth returns $COLUMNS when it is a positive number, else 0: listings are cut
// to 80 columns.
func termWidth(*os.File) int { return columnsEnv() }
