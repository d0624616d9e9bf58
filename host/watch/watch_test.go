package watch

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
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

// A folder a person renames (mv, a file manager, Obsidian) or replaces
// is watched at its new path: every later edit in it, and in the folders
// below it, is reported under the path it has now.
func TestRenamedFolderWatchedAtItsNewPath(t *testing.T) {
	root := t.TempDir()
	write := func(dir, rel, text string) {
		t.Helper()
		full := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(root, "ops/billing/a.md", "a")
	write(root, "ops/billing/late/b.md", "b")
	w, err := New(root)
	if err != nil {
		t.Skipf("cannot watch here: %v", err)
	}
	defer w.Close()
	// editUntilHeard edits each of files until the watcher has reported
	// them all: the events of a rename reach the watcher a moment after
	// it, and an edit before they do is taken in by the folder's scan.
	editUntilHeard := func(step string, files ...string) {
		t.Helper()
		heard := map[string]bool{}
		deadline := time.Now().Add(10 * time.Second)
		for n := 0; ; n++ {
			for _, f := range files {
				write(root, f, fmt.Sprintf("%s, edit %d", f, n))
			}
			wait := time.After(200 * time.Millisecond)
		collect:
			for {
				select {
				case <-w.Changed():
					paths, _ := w.Take()
					for _, p := range paths {
						heard[p] = true
					}
				case <-wait:
					break collect
				}
			}
			if !slices.ContainsFunc(files, func(f string) bool { return !heard[f] }) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: heard %v; want %v among them", step, slices.Sorted(maps.Keys(heard)), files)
			}
		}
	}
	if err := os.Rename(filepath.Join(root, "ops", "billing"), filepath.Join(root, "ops", "payments")); err != nil {
		t.Fatal(err)
	}
	editUntilHeard("edits in the renamed folder", "ops/payments/a.md", "ops/payments/late/b.md")

	// Replaced whole, as a checkout or a sync tool does.
	if err := os.RemoveAll(filepath.Join(root, "ops", "payments")); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	write(elsewhere, "payments/a.md", "a, again")
	write(elsewhere, "payments/late/b.md", "b, again")
	if err := os.Rename(filepath.Join(elsewhere, "payments"), filepath.Join(root, "ops", "payments")); err != nil {
		t.Fatal(err)
	}
	editUntilHeard("edits in the folder replaced", "ops/payments/a.md", "ops/payments/late/b.md")
}

// After Sync every change made before it is recorded: Take returns it at
// once, with no wait for the watcher. Removing the barrier's folder (a
// person deleting .arbor) does not break it: the next Sync makes it again.
func TestSyncRecordsWhatCameBefore(t *testing.T) {
	root := t.TempDir()
	w, err := New(root)
	if err != nil {
		t.Skipf("cannot watch here: %v", err)
	}
	defer w.Close()
	for i := range 50 {
		name := fmt.Sprintf("n%02d.md", i)
		if err := os.WriteFile(filepath.Join(root, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if i == 21 {
			// Removed once more, the watcher cannot have heard yet.
			if err := os.RemoveAll(filepath.Join(root, ".arbor")); err != nil {
				t.Fatal(err)
			}
		}
		if !w.Sync(10 * time.Second) {
			t.Fatalf("Sync %d did not hear its barrier", i)
		}
		if paths, _ := w.Take(); !slices.Contains(paths, name) {
			t.Fatalf("after Sync, Take = %v; want %s in it", paths, name)
		}
		if i == 20 {
			if err := os.RemoveAll(filepath.Join(root, ".arbor")); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The barrier's own files are neither reported nor left behind.
	if paths, _ := w.Take(); len(paths) != 0 {
		t.Fatalf("Take after the last Sync = %v; want nothing", paths)
	}
	if ents, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(syncFolder))); err != nil || len(ents) != 0 {
		t.Fatalf("%s holds %v (%v); want it empty", syncFolder, ents, err)
	}
}

// BenchmarkSync is what a watching engine adds to each call.
func BenchmarkSync(b *testing.B) {
	w, err := New(b.TempDir())
	if err != nil {
		b.Skipf("cannot watch here: %v", err)
	}
	defer w.Close()
	for b.Loop() {
		if !w.Sync(10 * time.Second) {
			b.Fatal("Sync did not hear its barrier")
		}
	}
}

// A folder that cannot be watched (the system's limit of watches) makes
// the watcher Partial and asks for a scan, so that the host scans for
// what it cannot hear. An overflow watches the root's folders again: one
// whose creation went unheard is heard from then on, and a watcher that
// watches every folder again is whole.
func TestPartialAndOverflow(t *testing.T) {
	var refuse atomic.Bool
	defer func(f func(*fsnotify.Watcher, string) error) { addWatch = f }(addWatch)
	addWatch = func(fsw *fsnotify.Watcher, dir string) error {
		if refuse.Load() && filepath.Base(dir) == "late" {
			return fmt.Errorf("inotify_add_watch %s: %w", dir, syscall.ENOSPC)
		}
		return fsw.Add(dir)
	}
	root := t.TempDir()
	w, err := New(root)
	if err != nil {
		t.Skipf("cannot watch here: %v", err)
	}
	defer w.Close()
	if w.Partial() {
		t.Fatal("a watcher of every folder is partial")
	}
	refuse.Store(true)
	late := filepath.Join(root, "late")
	if err := os.Mkdir(late, 0o755); err != nil {
		t.Fatal(err)
	}
	if !w.Sync(10 * time.Second) {
		t.Fatal("Sync did not hear its barrier")
	}
	if _, rescan := w.Take(); !rescan || !w.Partial() {
		t.Fatalf("a folder past the limit: rescan %v, partial %v; want both", rescan, w.Partial())
	}
	refuse.Store(false)
	w.fsw.Errors <- fsnotify.ErrEventOverflow
	if !w.Sync(10 * time.Second) {
		t.Fatal("Sync did not hear its barrier")
	}
	if _, rescan := w.Take(); !rescan || w.Partial() {
		t.Fatalf("after an overflow: rescan %v, partial %v; want a scan, and whole again", rescan, w.Partial())
	}
	if err := os.WriteFile(filepath.Join(late, "a.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !w.Sync(10 * time.Second) {
		t.Fatal("Sync did not hear its barrier")
	}
	if paths, _ := w.Take(); !slices.Contains(paths, "late/a.md") {
		t.Fatalf("an edit in the folder watched after the overflow: Take = %v", paths)
	}
}
