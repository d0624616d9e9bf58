//go:build unix

package main

import "golang.org/x/sys/unix"

// keepStdioFlags records the file status flags of descriptors 0, 1 and 2
// and returns the function that sets back any that changed. Nothing in the
// CLI changes them on purpose (host/runtime keeps the engine module away
// from the descriptors); this catches whatever else might, before the
// shell sees a terminal left non-blocking. A descriptor that was not open
// at start is left alone.
func keepStdioFlags() (restore func()) {
	var saved [3]int
	for fd := range saved {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err != nil {
			flags = -1
		}
		saved[fd] = flags
	}
	return func() {
		for fd, flags := range saved {
			if flags < 0 {
				continue
			}
			if now, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil && now != flags {
				// Nothing useful is left to do if this fails as the
				// process exits.
				_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags)
			}
		}
	}
}
