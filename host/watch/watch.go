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
// and reading only the files whose size or time moved.
package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Watcher collects the paths changed below one root.
type Watcher struct {
	root    string
	fsw     *fsnotify.Watcher
	mu      sync.Mutex
	changed map[string]bool
	rescan  bool
	// dirs holds the folders watched, by absolute path, so that one
	// renamed or removed is unwatched with everything below it (unwatch);
	// only New and then run use it.
	dirs   map[string]bool
	done   chan struct{}
	signal chan struct{}
}

// New starts watching the folder root (absolute, symbolic links
// resolved). It fails when the root cannot be watched at all; a folder
// that cannot be added later only makes Take ask for a rescan.
func New(root string) (*Watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	w := &Watcher{root: root, fsw: fsw, changed: map[string]bool{}, dirs: map[string]bool{}, done: make(chan struct{}), signal: make(chan struct{}, 1)}
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
		}
	}
}

func (w *Watcher) event(ev fsnotify.Event) {
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
			if err := w.addTree(ev.Name); err != nil {
				w.lost()
			}
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

// addTree watches dir and every folder below it, dot-folders aside.
func (w *Watcher) addTree(dir string) error {
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
		if err := w.fsw.Add(p); err != nil {
			return err
		}
		w.dirs[p] = true
		return nil
	})
}

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
