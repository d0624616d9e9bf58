//go:build !unix

// Package measure reads what the benchmarks report of a process besides
// wall time: processor time and peak memory.
package measure

import (
	"os"
	"time"
)

// CPUTime is not measured here: -1, which reports show as n/a.
func CPUTime() time.Duration { return -1 }

// MaxRSS is not measured here: -1.
func MaxRSS(*os.ProcessState) int64 { return -1 }

// SelfMaxRSS is not measured here: -1.
func SelfMaxRSS() int64 { return -1 }
