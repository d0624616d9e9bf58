package watch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A change is taken once; lost events (an overflow) ask for a scan and
// say so on Changed at once, not at the next event.
func TestChangedAndLost(t *testing.T) {
	root := t.TempDir()
	w, err := New(root)
	if err != nil {
		t.Skipf("cannot watch here: %v", err)
	}
	defer w.Close()
	if err := os.WriteFile(filepath.Join(root, "a.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Changed():
	case <-time.After(30 * time.Second):
		t.Fatal("no signal for a new file")
	}
	paths, rescan := w.Take() // an event is recorded before it signals
	if !slices.Equal(paths, []string{"a.md"}) || rescan {
		t.Fatalf("Take = %v, %v; want [a.md], no scan", paths, rescan)
	}
	// Drain a signal left by the file's further events.
	select {
	case <-w.Changed():
		w.Take()
	case <-time.After(100 * time.Millisecond):
	}
	w.lost()
	select {
	case <-w.Changed():
	default:
		t.Fatal("lost events do not signal Changed")
	}
	if _, rescan := w.Take(); !rescan {
		t.Fatal("lost events do not ask for a scan")
	}
	if _, rescan := w.Take(); rescan {
		t.Fatal("the scan is asked for again")
	}
}
