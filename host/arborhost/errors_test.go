package arborhost

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/arbormem/arbor/core/host"
)

// A rename across a mount inside the root (EXDEV) is CROSS_DEVICE (-10),
// which the engine tells from other failures to copy what it would have
// renamed, and an ErrIO still to code that knew no other.
func TestCrossDeviceRenameHasItsCode(t *testing.T) {
	err := osError("rename", "media/clip.mp4", &os.LinkError{Op: "rename", Old: "a", New: "b", Err: syscall.EXDEV})
	if !errors.Is(err, host.ErrCrossDevice) || !errors.Is(err, host.ErrIO) {
		t.Fatalf("%v: not ErrCrossDevice and ErrIO", err)
	}
	if rc := errorCode(err); rc != codeCrossDevice {
		t.Fatalf("code %d, want %d", rc, codeCrossDevice)
	}
	if rc := errorCode(host.ErrIO); rc != codeIO {
		t.Fatalf("another i/o failure: code %d, want %d", rc, codeIO)
	}
}
