package host

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// MemFS is an in-memory FS. Directories exist implicitly while they hold a
// file, or explicitly once created by a write beneath them; it serves the
// native tests, the conformance runner and embedders that keep memory in RAM.
type MemFS struct {
	mu    sync.Mutex
	files map[string][]byte
	dirs  map[string]bool
	mtime map[string]int64
	now   func() int64
}

// NewMemFS returns an empty root.
func NewMemFS() *MemFS {
	return &MemFS{files: map[string][]byte{}, dirs: map[string]bool{"": true}, mtime: map[string]int64{}, now: func() int64 { return 0 }}
}

// SetNow sets the clock that stamps modification times (Unix
// milliseconds); by default every file's time is 0, which the engine reads
// as "the storage keeps none".
func (m *MemFS) SetNow(now func() int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = now
}

// FileTime implements FileClock: the time of the clock SetNow set.
func (m *MemFS) FileTime() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now()
}

func checkMemPath(p string) error {
	if strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.Contains(p, "//") || strings.HasSuffix(p, "/") {
		return fmt.Errorf("memfs %q: %w", p, ErrInvalid)
	}
	for _, s := range strings.Split(p, "/") {
		if s == "." || s == ".." {
			return fmt.Errorf("memfs %q: %w", p, ErrDenied)
		}
	}
	return nil
}

// checkWritePath refuses what no file can be written at.
func checkWritePath(p string) error {
	if p == "" {
		return fmt.Errorf("write: empty path: %w", ErrInvalid)
	}
	return checkMemPath(p)
}

func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// ReadFile implements FS.
func (m *MemFS) ReadFile(p string) ([]byte, error) {
	if err := checkMemPath(p); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[p]
	if !ok {
		return nil, fmt.Errorf("read %s: %w", p, ErrNotFound)
	}
	return append([]byte(nil), b...), nil
}

// WriteFile implements FS.
func (m *MemFS) WriteFile(p string, data []byte) error {
	if err := checkWritePath(p); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.write(p, data)
}

// write is WriteFile holding m.mu.
func (m *MemFS) write(p string, data []byte) error {
	if m.dirs[p] {
		return fmt.Errorf("write %s: is a directory: %w", p, ErrInvalid)
	}
	for d := parentDir(p); ; d = parentDir(d) {
		if _, isFile := m.files[d]; isFile {
			return fmt.Errorf("write %s: %s is a file: %w", p, d, ErrInvalid)
		}
		m.dirs[d] = true
		if d == "" {
			break
		}
	}
	m.files[p] = append([]byte(nil), data...)
	m.mtime[p] = m.now()
	return nil
}

// Remove implements FS.
func (m *MemFS) Remove(p string) error {
	if err := checkMemPath(p); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[p]; ok {
		delete(m.files, p)
		delete(m.mtime, p)
		return nil
	}
	if p == "" || !m.dirs[p] {
		return fmt.Errorf("remove %s: %w", p, ErrNotFound)
	}
	prefix := p + "/"
	for k := range m.files {
		if strings.HasPrefix(k, prefix) {
			return fmt.Errorf("remove %s: directory not empty: %w", p, ErrInvalid)
		}
	}
	for k := range m.dirs {
		if strings.HasPrefix(k, prefix) {
			return fmt.Errorf("remove %s: directory not empty: %w", p, ErrInvalid)
		}
	}
	delete(m.dirs, p)
	return nil
}

// Rename implements FS for files.
func (m *MemFS) Rename(from, to string) error {
	if err := checkMemPath(from); err != nil {
		return err
	}
	m.mu.Lock()
	b, ok := m.files[from]
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("rename %s: %w", from, ErrNotFound)
	}
	if err := m.WriteFile(to, b); err != nil {
		return err
	}
	m.mu.Lock()
	delete(m.files, from)
	delete(m.mtime, from)
	m.mu.Unlock()
	return nil
}

// Swap implements Swapper: the check and the write happen under one lock.
func (m *MemFS) Swap(p string, data, old []byte, existed bool) error {
	if err := checkWritePath(p); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if now, ok := m.files[p]; ok != existed || (ok && !bytes.Equal(now, old)) {
		return fmt.Errorf("write %s: %w", p, ErrChanged)
	}
	return m.write(p, data)
}

// Append implements FS; nothing comes between the read and the write.
func (m *MemFS) Append(p string, data []byte) error {
	if err := checkWritePath(p); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.write(p, append(m.files[p], data...))
}

// ReadDir implements FS.
func (m *MemFS) ReadDir(p string) ([]DirEntry, error) {
	if err := checkMemPath(p); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[p] {
		if _, isFile := m.files[p]; isFile {
			return nil, fmt.Errorf("list %s: not a directory: %w", p, ErrInvalid)
		}
		return nil, fmt.Errorf("list %s: %w", p, ErrNotFound)
	}
	prefix := p + "/"
	if p == "" {
		prefix = ""
	}
	seen := map[string]DirEntry{}
	for k, b := range m.files {
		if rest, ok := strings.CutPrefix(k, prefix); ok && !strings.Contains(rest, "/") {
			seen[rest] = DirEntry{Name: rest, Size: int64(len(b)), ModTime: m.mtime[k]}
		}
	}
	for k := range m.dirs {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" && !strings.Contains(rest, "/") {
			seen[rest] = DirEntry{Name: rest, IsDir: true}
		}
	}
	out := make([]DirEntry, 0, len(seen))
	for _, e := range seen {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Stat implements FS.
func (m *MemFS) Stat(p string) (DirEntry, error) {
	if err := checkMemPath(p); err != nil {
		return DirEntry{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	name := p[strings.LastIndexByte(p, '/')+1:]
	if b, ok := m.files[p]; ok {
		return DirEntry{Name: name, Size: int64(len(b)), ModTime: m.mtime[p]}, nil
	}
	if m.dirs[p] {
		return DirEntry{Name: name, IsDir: true}, nil
	}
	return DirEntry{}, fmt.Errorf("stat %s: %w", p, ErrNotFound)
}

// Files returns a copy of every file, for tests and snapshots.
func (m *MemFS) Files() map[string][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string][]byte, len(m.files))
	for k, v := range m.files {
		out[k] = append([]byte(nil), v...)
	}
	return out
}

// Walk implements Walker: a folder removed during the walk (by fn) is
// left out.
func (m *MemFS) Walk(dir string, fn func(dir string, list []DirEntry) error) error {
	return walkByReadDir(m, dir, fn, true)
}
