//go:build !unix

package main

import (
	"os"
	"time"
)

// cpuTime is not measured here.
func cpuTime() time.Duration { return -1 }

// maxRSS is not measured here.
func maxRSS(*os.ProcessState) int64 { return -1 }
