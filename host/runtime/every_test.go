package runtime

import (
	"sync/atomic"
	"testing"
	"time"
)

// Every calls its function until stopped, and stop waits for a call under
// way; a period of zero calls nothing.
func TestEvery(t *testing.T) {
	var calls atomic.Int32
	inCall := make(chan struct{})
	release := make(chan struct{})
	stop := Every(time.Millisecond, func() {
		if calls.Add(1) == 3 {
			close(inCall)
			<-release
		}
	})
	<-inCall // the third call is under way
	stopped := make(chan struct{})
	go func() {
		stop()
		close(stopped)
	}()
	select {
	case <-stopped:
		t.Fatal("stop returned while a call was under way")
	default:
	}
	close(release)
	<-stopped
	// Ticks already due may still make calls before stop returns; after
	// it, the goroutine is gone.
	if n := calls.Load(); n < 3 {
		t.Fatalf("%d calls when stop returned, want 3 or more", n)
	}
	Every(0, func() { t.Error("called with a period of 0") })()
}
