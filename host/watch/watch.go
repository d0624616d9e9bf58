// Package watch tells a long-lived host which paths of a memory root
// others changed (an editor, git, another process), so that the engine
// reads them again before it answers (the engine's "refresh",
// docs/ABI.md §4.12). It uses fsnotify, which watches one folder at a
// time on Linux: every folder of the tree is added, and folders created
// later as they appear. Dot-folders (.arbor, .git, .obsidian) are not
// watched: they hold no knowledge.
//
// Watching can miss changes: the kernel's queue overflows, a folder
// cannot be added (the inotify limit), a network drive sends nothing.
// Take then asks for a rescan, which the engine does by listing the tree
// and reading only the files whose size or time moved. After an overflow
// the folders whose creation went unheard are watched then; a folder that
// cannot be watched at all leaves the watcher Partial, and the host then
// scans every so often, as it does without a watcher.
//
// The kernel queues an event as the change is made, but the watcher's
// goroutine takes it in a moment later: a host that answers at once after
// a save (in the same process, a few microseconds on) would answer from
// the old text. Sync closes that window (a barrier: see its comment).
package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watcher collects the paths changed below one root.
type Watcher struct {
	root    string
	fsw     *fsnotify.Watcher
	mu      sync.Mutex
	changed map[string]bool
	rescan  bool
	partial bool // a folder could not be watched (under mu)
	// dirs holds the folders watched, by absolute path, so that one
	// renamed or removed is unwatched with everything below it (unwatch);
	// only New and then run use it.
	dirs   map[string]bool
	done   chan struct{}
	signal chan struct{}

	// The barrier of Sync: the folder its files are made in, whether it
	// is watched now (under mu: run forgets it when the folder goes), the
	// barriers waiting for their file's event (under mu) and the counter
	// that names them.
	syncDir     string
	syncWatched bool
	waiting     map[string]chan struct{}
	seq         atomic.Uint64
}

// syncFolder is where Sync makes its files, relative to the root: a folder
// of the engine's own .arbor, which holds nothing else.
const syncFolder = ".arbor/watch"

// New starts watching the folder root (absolute, symbolic links
// resolved). It fails when the root cannot be watched at all; a folder
// that cannot be added later only makes Take ask for a rescan.
func New(root string) (*Watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	w := &Watcher{root: root, fsw: fsw, changed: map[string]bool{}, dirs: map[string]bool{}, done: make(chan struct{}), signal: make(chan struct{}, 1),
		syncDir: filepath.Join(root, filepath.FromSlash(syncFolder)), waiting: map[string]chan struct{}{}}
	if err := w.addTree(root); err != nil {
		fsw.Close()
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	go w.run()
	return w, nil
}

// Take returns the paths changed since the last Take (relative to the
// root, slash separated, sorted) and whether the whole tree must be
// scanned because changes may have been missed.
func (w *Watcher) Take() (paths []string, rescan bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for p := range w.changed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	rescan = w.rescan
	clear(w.changed)
	w.rescan = false
	return paths, rescan
}

// Sync returns once every change made below the root before it was
// called has been recorded, so that the next Take returns it. It makes
// and removes an empty file in syncFolder and waits for the watcher to hear
// of it: inotify keeps one watcher's events in the order of the changes,
// and the watcher records them in that order, so every change made
// before the file is recorded once its event is (on Linux, where this is
// tested; the watchers of macOS, the BSDs and Windows promise no order
// across folders, so there it narrows the window rather than closing
// it). That costs a file made and removed per call, a few tens of
// microseconds.
//
// It reports false when it could not tell: the file could not be made (a
// read-only root, a full disk), and then the window remains, or its event
// did not come within timeout, and then Take asks for a scan.
func (w *Watcher) Sync(timeout time.Duration) bool {
	if !w.watchSyncDir() {
		return false
	}
	name := strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(w.seq.Add(1), 10)
	heard := make(chan struct{})
	w.mu.Lock()
	w.waiting[name] = heard
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.waiting, name)
		w.mu.Unlock()
	}()
	full := filepath.Join(w.syncDir, name)
	f, err := os.OpenFile(full, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		// The folder was removed and the watcher has not heard yet.
		w.mu.Lock()
		w.syncWatched = false
		w.mu.Unlock()
		if !w.watchSyncDir() {
			return false
		}
		f, err = os.OpenFile(full, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	}
	if err != nil {
		return false
	}
	f.Close()
	// Its event is queued already: removing it now changes nothing.
	os.Remove(full)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-heard:
		return true
	case <-t.C:
		w.lost()
		return false
	case <-w.done:
		return false
	}
}

// watchSyncDir makes syncFolder and watches it, when it is not watched
// already (first use, or the folder was removed since: a person deleted
// .arbor). Files a killed process left there are removed.
func (w *Watcher) watchSyncDir() bool {
	w.mu.Lock()
	watched := w.syncWatched
	w.mu.Unlock()
	if watched {
		return true
	}
	if err := os.MkdirAll(w.syncDir, 0o755); err != nil {
		return false
	}
	if err := w.fsw.Add(w.syncDir); err != nil {
		return false
	}
	if ents, err := os.ReadDir(w.syncDir); err == nil {
		for _, e := range ents {
			os.Remove(filepath.Join(w.syncDir, e.Name()))
		}
	}
	w.mu.Lock()
	w.syncWatched = true
	w.mu.Unlock()
	return true
}

// Changed receives a value when changes were recorded since the last
// value was received, for a host that acts on changes as they happen
// rather than before its next call; Take then returns them. It is closed
// by Close.
func (w *Watcher) Changed() <-chan struct{} { return w.signal }

// Close stops watching.
func (w *Watcher) Close() error {
	err := w.fsw.Close()
	<-w.done
	return err
}

func (w *Watcher) run() {
	defer close(w.done)
	defer close(w.signal)
	for {
		select {
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			w.event(ev)
		case _, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.lost()
			// An overflow loses the events of folders made meanwhile
			// too: watch them now, or they stay unheard for good.
			w.addTree(w.root)
		}
	}
}

func (w *Watcher) event(ev fsnotify.Event) {
	if w.barrier(ev) {
		return
	}
	rel, ok := w.rel(ev.Name)
	if !ok {
		return
	}
	if ev.Has(fsnotify.Rename) || ev.Has(fsnotify.Remove) {
		w.unwatch(ev.Name)
	}
	if ev.Has(fsnotify.Create) {
		// A new folder: watch it and what it already holds (files may
		// have landed before the watch did; the engine scans the folder).
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			w.addTree(ev.Name)
		}
	}
	if ev.Op == fsnotify.Chmod {
		return // a permission change changes no text
	}
	w.mu.Lock()
	w.changed[rel] = true
	w.mu.Unlock()
	w.notify()
}

// barrier takes in an event of syncFolder, releasing the Sync that made the
// file, and reports whether the event was one of syncFolder's.
func (w *Watcher) barrier(ev fsnotify.Event) bool {
	switch {
	case ev.Name == w.syncDir:
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			w.mu.Lock()
			w.syncWatched = false
			w.mu.Unlock()
		}
		return true
	case filepath.Dir(ev.Name) != w.syncDir:
		return false
	}
	if ev.Has(fsnotify.Create) {
		w.mu.Lock()
		heard := w.waiting[filepath.Base(ev.Name)]
		delete(w.waiting, filepath.Base(ev.Name))
		w.mu.Unlock()
		if heard != nil {
			close(heard)
		}
	}
	return true
}

// lost records that events may have been lost (an overflow, any other
// failure, a folder that could not be watched) and says so on Changed:
// a host acting on changes as they happen must scan now, not at its next
// event, which may never come.
func (w *Watcher) lost() {
	w.mu.Lock()
	w.rescan = true
	w.mu.Unlock()
	w.notify()
}

func (w *Watcher) notify() {
	select {
	case w.signal <- struct{}{}:
	default: // one pending value covers every change until it is taken
	}
}

// rel turns an event's path into a root-relative one; false for the root
// itself and for paths in or of dot-names.
func (w *Watcher) rel(name string) (string, bool) {
	rel, err := filepath.Rel(w.root, name)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, ".") {
			return "", false
		}
	}
	return rel, true
}

// Partial reports whether some folder of the root could not be watched
// (the system's limit of watches): changes there raise no event, and the
// host must scan for them every so often.
func (w *Watcher) Partial() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.partial
}

// addTree watches dir and every folder below it, dot-folders aside (a
// folder watched already is added again: after an overflow the path may
// name another folder). A folder that cannot be watched after New makes
// the watcher Partial and asks for a scan; the whole root watched again
// makes it whole.
func (w *Watcher) addTree(dir string) error {
	err := w.walkAdd(dir)
	switch {
	case err != nil && w.dirs[w.root]:
		w.mu.Lock()
		w.partial = true
		w.mu.Unlock()
		w.lost()
	case err == nil && dir == w.root:
		// Every folder is watched again (after an overflow, with watches
		// freed since): the watcher hears of every change once more.
		w.mu.Lock()
		w.partial = false
		w.mu.Unlock()
	}
	return err
}

func (w *Watcher) walkAdd(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != dir {
				return nil // gone while walking
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if err := addWatch(w.fsw, p); err != nil {
			return err
		}
		w.dirs[p] = true
		return nil
	})
}

// addWatch adds a folder to the watch; a test makes it fail as the
// system's limit of watches does.
var addWatch = func(fsw *fsnotify.Watcher, dir string) error { return fsw.Add(dir) }

// unwatch stops watching the folder name and every folder below it, when
// it is one watched: it was renamed or removed. inotify watches a
// folder, not its path: a folder renamed within the root keeps its
// watches under the old paths, and fsnotify, which maps watches by path,
// would report its changes under those paths, then drop the watch when
// the kernel reports the move, after the new path was added (the same
// folder, so the same watch): edits in a renamed folder went unheard.
// Its new path's Create event watches it afresh (addTree).
func (w *Watcher) unwatch(name string) {
	if !w.dirs[name] {
		return
	}
	prefix := name + string(filepath.Separator)
	for d := range w.dirs {
		if d == name || strings.HasPrefix(d, prefix) {
			delete(w.dirs, d)
			// A folder removed was unwatched by the kernel already.
			_ = w.fsw.Remove(d)
		}
	}
}
