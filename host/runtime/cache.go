package runtime

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
)

// caches holds one compilation cache per folder for the life of the
// process ("" is the in-memory one), so that engines created one after the
// other share compiled code.
var (
	cachesMu sync.Mutex
	caches   = map[string]wazero.CompilationCache{}
)

// DefaultCacheDir is where compiled code is kept unless WithCacheDir says
// otherwise: os.UserCacheDir()/arbor/wazero, or "" (memory only) when the
// platform has no user cache folder.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "arbor", "wazero")
}

// compilationCache returns the shared cache for dir. A folder that cannot
// be created or written falls back to the in-memory cache: a slower start,
// never a failure.
func compilationCache(dir string) wazero.CompilationCache {
	cachesMu.Lock()
	defer cachesMu.Unlock()
	if c, ok := caches[dir]; ok {
		return c
	}
	if dir != "" {
		if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil && writable(dir) {
			pruneCache(dir, keepCompiled)
			caches[dir] = c
			return c
		}
	}
	c, ok := caches[""]
	if !ok {
		c = wazero.NewCompilationCache()
		caches[""] = c
	}
	caches[dir] = c
	return c
}

// forgetCache stops this process from using the cache folder dir, whose
// entries wazero could not use, and removes the compiled modules it holds
// (a file another process is reading stays readable on Unix once removed;
// files being written are left alone). The next process starts afresh.
func forgetCache(dir string) {
	cachesMu.Lock()
	defer cachesMu.Unlock()
	c, ok := caches[""]
	if !ok {
		c = wazero.NewCompilationCache()
		caches[""] = c
	}
	caches[dir] = c
	pruneCache(dir, 0)
}

// writable reports whether files can be created in dir: wazero's file
// cache ignores write errors, which would mean compiling on every start.
func writable(dir string) bool {
	f, err := os.CreateTemp(dir, probePrefix+"*")
	if err != nil {
		return false
	}
	name := f.Name()
	f.Close()
	return os.Remove(name) == nil
}

// probePrefix begins the name of writable's probe files.
const probePrefix = ".probe-"

// keepCompiled is how many compiled modules each of a cache folder's
// wazero folders keeps. Every build of the engine (every Arbor release, and
// every local build) adds one of about 60 MB, and wazero never removes any.
const keepCompiled = 4

// staleTemp is the age past which a temporary file in the cache is taken
// for one a dead process left: compiling and writing an entry takes seconds.
const staleTemp = time.Hour

// checkedSuffix ends the name of the file beside a compiled module that
// marks its code as checked against its checksum (the CLI's wazero,
// host/_patch/wazero-mapped-cache.patch): it goes with its module.
const checkedSuffix = ".checked"

// pruneCache removes all but the keep most recently written compiled
// modules of each folder in dir (wazero keeps one folder per wazero version
// and platform), and the marks of modules it no longer holds. It runs
// before this process compiles anything, so a module in use now is among
// the newest unless keep newer builds ran since; then it is just compiled
// again. Errors are ignored: pruning is housekeeping, and a file another
// process is reading stays readable on Unix once removed.
//
// wazero writes an entry to a temporary file beside it (NAME.*.tmp) and
// renames it into place, and fails the compilation when the rename does:
// a temporary file is another process writing, and is removed only once
// it is older than staleTemp (left behind by a process that died), as is
// a probe of writable's that a process killed at that moment left in dir.
func pruneCache(dir string, keep int) {
	subdirs, _ := os.ReadDir(dir)
	for _, sub := range subdirs {
		if !sub.IsDir() {
			if strings.HasPrefix(sub.Name(), probePrefix) {
				if info, err := sub.Info(); err == nil && info.Mode().IsRegular() && time.Since(info.ModTime()) > staleTemp {
					os.Remove(filepath.Join(dir, sub.Name()))
				}
			}
			continue
		}
		folder := filepath.Join(dir, sub.Name())
		entries, _ := os.ReadDir(folder)
		type file struct {
			name string
			mod  time.Time
		}
		var files []file
		var marked []string
		for _, e := range entries {
			info, err := e.Info()
			if err != nil || !info.Mode().IsRegular() {
				continue
			}
			if strings.HasSuffix(e.Name(), ".tmp") {
				if time.Since(info.ModTime()) > staleTemp {
					os.Remove(filepath.Join(folder, e.Name()))
				}
				continue
			}
			if module, ok := strings.CutSuffix(e.Name(), checkedSuffix); ok {
				marked = append(marked, module)
				continue
			}
			files = append(files, file{e.Name(), info.ModTime()})
		}
		slices.SortFunc(files, func(a, b file) int { return b.mod.Compare(a.mod) })
		kept := make(map[string]bool, keep)
		for i, f := range files {
			if i < keep {
				kept[f.name] = true
			} else {
				os.Remove(filepath.Join(folder, f.name))
			}
		}
		for _, module := range marked {
			if !kept[module] {
				os.Remove(filepath.Join(folder, module+checkedSuffix))
			}
		}
	}
}
