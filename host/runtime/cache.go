package runtime

import (
	"os"
	"path/filepath"
	"sync"

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

// writable reports whether files can be created in dir: wazero's file
// cache ignores write errors, which would mean compiling on every start.
func writable(dir string) bool {
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return false
	}
	name := f.Name()
	f.Close()
	return os.Remove(name) == nil
}
