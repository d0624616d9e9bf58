//go:build race

package arborhost

// raceOn is set in builds with the race detector, whose instrumentation
// allocates where the code does not.
const raceOn = true
