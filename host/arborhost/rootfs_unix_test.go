//go:build linux || darwin

package arborhost

import (
	"path/filepath"
	"syscall"
	"testing"
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
