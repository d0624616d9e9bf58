// Package host declares what the engine needs from the outside world: a
// file system confined to one memory root, a clock and a logger. The engine
// reaches nothing else; in WebAssembly these are backed by the arbor_host
// imports, natively by any implementation of these interfaces (MemFS here).
//
// Paths crossing this interface are relative to the memory root, slash
// separated, with no leading slash; "" names the root itself.
package host

import (
	"errors"
	"time"
)

// Sentinel errors an FS returns; callers branch on them with errors.Is.
// They map one to one onto the negative codes of the host ABI.
var (
	ErrNotFound = errors.New("not found")
	ErrDenied   = errors.New("permission denied")
	ErrInvalid  = errors.New("invalid argument")
	ErrIO       = errors.New("i/o error")
)

// DirEntry is one name in a directory listing.
type DirEntry struct {
	Name    string `json:"name"`
	IsDir   bool   `json:"dir"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime"` // Unix milliseconds
}

// FS is the memory root as the engine sees it.
type FS interface {
	// ReadFile returns the whole content of a file.
	ReadFile(path string) ([]byte, error)
	// WriteFile replaces a file atomically (temporary file, then rename),
	// creating missing parent directories. Readers see the old or the new
	// content, never a mix.
	WriteFile(path string, data []byte) error
	// Remove deletes a file or an empty directory.
	Remove(path string) error
	// Rename moves a file, replacing the destination atomically.
	Rename(from, to string) error
	// ReadDir lists a directory, sorted by name.
	ReadDir(path string) ([]DirEntry, error)
	// Stat describes one path.
	Stat(path string) (DirEntry, error)
}

// Clock tells the time; tests and reproducible runs fix it.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real time of the platform (WASI clock_time_get in wasm).
type SystemClock struct{}

// Now returns the current time.
func (SystemClock) Now() time.Time { return time.Now() }

// FixedClock always returns the same instant.
type FixedClock time.Time

// Now returns the fixed instant.
func (c FixedClock) Now() time.Time { return time.Time(c) }

// Logger receives diagnostic lines; level is one of "debug", "info", "warn", "error".
type Logger interface {
	Log(level, msg string)
}

// NopLogger discards everything.
type NopLogger struct{}

// Log discards the line.
func (NopLogger) Log(string, string) {}
