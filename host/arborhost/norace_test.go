//go:build !race

package arborhost

// raceOn is set in builds with the race detector (race_test.go).
const raceOn = false
