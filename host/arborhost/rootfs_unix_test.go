//go:build linux || darwin

package arborhost

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/arbormem/arbor/core/host"
)

// A FIFO would block a naive read forever: it must be refused as invalid.
func TestRootFSRefusesFIFO(t *testing.T) {
	r, dir := newRoot(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err := r.ReadFile("pipe.md")
	wantCode(t, "read fifo", err, codeInvalid)
	wantCode(t, "write fifo", r.WriteFile("pipe.md", []byte("x")), codeInvalid)
}

// deepNote makes note.md 18 folders of 243 bytes below dir: its path, past
// the system's limit (4,096 bytes on Linux), is made one folder at a time,
// from inside the one above. It returns the note's path relative to dir.
func deepNote(t *testing.T, dir string) string {
	t.Helper()
	t.Chdir(dir)
	seg := strings.Repeat("a", 243)
	var rel []string
	for range 18 {
		if err := os.Mkdir(seg, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Chdir(seg)
		rel = append(rel, seg)
	}
	if err := os.WriteFile("note.md", []byte("---\ntitle: Deep\n---\n\n## Narrative\ndeep text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path.Join(append(rel, "note.md")...)
}

// A file past the system's path limit is "path too long" (TOO_LONG, -9),
// which says why, where it was an invalid argument.
func TestRootFSPathTooLong(t *testing.T) {
	r, dir := newRoot(t)
	p := deepNote(t, dir)
	_, err := r.ReadFile(p)
	wantCode(t, "read a note past the path limit", err, codeTooLong)
	if !errors.Is(err, host.ErrTooLong) || !errors.Is(err, host.ErrInvalid) || !strings.Contains(err.Error(), "path too long") {
		t.Errorf("read: %v", err)
	}
	wantCode(t, "write beside it", r.WriteFile(path.Join(path.Dir(p), "other.md"), []byte("x")), codeTooLong)
}
