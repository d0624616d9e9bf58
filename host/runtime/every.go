package runtime

import "time"

// Every calls fn every d, in a goroutine of its own, until the stop it
// returns is called; stop waits for a call under way. A d of 0 or less
// calls nothing. Long-lived hosts (arbor mcp, arbor serve) flush their
// engine with it, so that a process that is killed loses little.
func Every(d time.Duration, fn func()) (stop func()) {
	if d <= 0 {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fn()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
