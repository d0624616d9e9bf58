package arborhost

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/arbormem/arbor/core/host"
)

// Return codes of the arbor_host imports (docs/ABI.md §2).
const (
	codeOK       int32 = 0
	codeNotFound int32 = -1
	codeDenied   int32 = -2
	codeInvalid  int32 = -3
	codeIO       int32 = -4
	codeBusy     int32 = -5
	codeChanged  int32 = -6
	// codeUnavailable: embed only, the host has no embedding model.
	codeUnavailable int32 = -7
	codeNoSpace     int32 = -8
	codeTooLong     int32 = -9
	// codeCrossDevice: fs_rename only, the paths are on different devices.
	codeCrossDevice int32 = -10
)

// osError wraps an error from the os package with the host sentinel it
// maps to, keeping the original for the message.
func osError(op, p string, err error) error {
	var kind error
	switch {
	case errors.Is(err, host.ErrNotFound), errors.Is(err, host.ErrDenied),
		errors.Is(err, host.ErrInvalid), errors.Is(err, host.ErrIO), errors.Is(err, host.ErrBusy), errors.Is(err, host.ErrChanged):
		return err
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		kind = host.ErrNoSpace
	case errors.Is(err, syscall.ENAMETOOLONG):
		kind = host.ErrTooLong
	case errors.Is(err, syscall.EXDEV):
		kind = host.ErrCrossDevice
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		// ENOTDIR: a segment of the path is a file, so the path does not exist.
		kind = host.ErrNotFound
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ELOOP):
		kind = host.ErrDenied
	case errors.Is(err, syscall.EISDIR),
		errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, fs.ErrExist),
		errors.Is(err, syscall.EINVAL):
		kind = host.ErrInvalid
	default:
		kind = host.ErrIO
	}
	return fmt.Errorf("%s %q: %w: %w", op, p, kind, err)
}

// errorCode is the ABI return code of an error from RootFS.
func errorCode(err error) int32 {
	switch {
	case err == nil:
		return codeOK
	case errors.Is(err, host.ErrNotFound):
		return codeNotFound
	case errors.Is(err, host.ErrDenied):
		return codeDenied
	case errors.Is(err, host.ErrTooLong):
		return codeTooLong // an ErrInvalid too: asked first
	case errors.Is(err, host.ErrInvalid):
		return codeInvalid
	case errors.Is(err, host.ErrBusy):
		return codeBusy
	case errors.Is(err, host.ErrChanged):
		return codeChanged
	case errors.Is(err, host.ErrNoSpace):
		return codeNoSpace
	case errors.Is(err, host.ErrCrossDevice):
		return codeCrossDevice // an ErrIO too: asked before the default
	}
	return codeIO
}
