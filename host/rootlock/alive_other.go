//go:build !unix

package rootlock

import "os"

// alive reports whether process pid exists on this machine: on Windows
// FindProcess opens the process and fails when there is none. Elsewhere
// (wasip1, plan9) there is no way to ask, so the owner is taken as alive
// and only StaleAfter frees its lock.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
