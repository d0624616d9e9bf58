//go:build unix

// Package measure reads what the benchmarks report of a process besides
// wall time: processor time and peak memory.
package measure

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// CPUTime is the user and system time this process has used, or -1 when
// it cannot be read.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// MaxRSS is the maximum resident set of a finished process in bytes, or
// -1 when the platform does not say.
func MaxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return -1
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss // bytes on macOS
	}
	return ru.Maxrss << 10 // KiB elsewhere
}

// SelfMaxRSS is this process's maximum resident set in bytes, or -1. On
// Linux a child started by os/exec begins with this as its own maximum
// (the high-water mark survives exec), so it is the floor of MaxRSS.
func SelfMaxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss
	}
	return ru.Maxrss << 10
}
