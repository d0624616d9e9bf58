//go:build unix

package runtime

import (
	"context"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// The module's request for non-blocking stdio (Go's wasip1 runtime makes
// it as it starts) must not reach a descriptor given as its stderr: the
// flag belongs to the open file, shared with every process writing there.
func TestStderrFlagsUntouched(t *testing.T) {
	needModule(t)
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(p[0]), "pipe-r"), os.NewFile(uintptr(p[1]), "pipe-w")
	defer r.Close()
	defer w.Close()
	before, err := unix.FcntlInt(w.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e, err := New(ctx, t.TempDir(), WithStderr(w))
	if err != nil {
		t.Fatal(err)
	}
	during, err := unix.FcntlInt(w.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if during != before {
		t.Fatalf("stderr flags %#x while the engine runs, %#x before (O_NONBLOCK is %#x)", during, before, unix.O_NONBLOCK)
	}
}
