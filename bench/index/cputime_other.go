//go:build !unix

package main

import "time"

// cpuTime is unknown here: the report shows n/a.
func cpuTime() time.Duration { return -1 }
