// Package serve keeps one engine open for a memory root and serves it to
// the arbor CLI over a Unix domain socket (`arbor serve`), so that a
// command pays for a connection instead of for starting the engine and
// opening the tree. The CLI uses a server only when one answers for the
// same root with the same build of the engine; otherwise it runs the
// engine itself, as it does without a server.
//
// The protocol (docs/cli.md, "arbor serve") is newline-delimited JSON:
// one request per line, {"id","method","params"} as in docs/ABI.md §3,
// answered by one line in the ABI's envelope. The methods are the ABI's
// (except open and close: the server owns the engine's lifecycle) and
// two of the server's own: serve.hello, which says what the server
// serves, and serve.stop, which asks it to stop. The server is a thin
// pipe to the engine's Call; the engine serializes the calls of all
// clients, and each write still takes the root's lock, so other
// processes keep working on the root beside it.
//
// Servers run on Linux, macOS and the BSDs. Elsewhere (Windows) Claim and
// Dial return ErrUnsupported, and the CLI runs the engine itself.
package serve

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/host/runtime"
)

// MaxRequest is the largest request line the server reads, newline
// excluded. The CLI's largest calls are ingest batches (2 MiB of sources,
// or one file of up to 8 MiB by default, base64 in JSON); a longer line
// is refused, and the connection closed, before it fills the server's
// memory.
const MaxRequest = 64 << 20

// Methods of the server itself; every other method goes to the engine.
const (
	MethodHello = "serve.hello"
	MethodStop  = "serve.stop"
)

// CodeIdle is the error code of the line a server writes, with a null
// id, before it closes a connection that stayed idle too long: a request
// that crossed it was not read.
const CodeIdle = "idle"

// ErrUnsupported is returned by Claim and Dial where servers do not run.
var ErrUnsupported = errors.New("arbor serve runs on Linux, macOS and the BSDs only")

// Hello is what a server says of itself: what it serves and with which
// build of the engine. A client sends calls only to a server whose Hello
// matches its own (Matches).
type Hello struct {
	Version    string `json:"version"`    // api.Version of the server's build
	ABIVersion int    `json:"abiVersion"` // runtime.ABIVersion
	Module     string `json:"module"`     // runtime.ModuleDigest(): the engine module itself
	Root       string `json:"root"`       // the memory root (absolute, symbolic links resolved)
	// FixedTime is the engine's frozen clock (the CLI's hidden
	// --fixed-time), "" for the real one.
	FixedTime string `json:"fixedTime,omitempty"`
	PID       int    `json:"pid"`
	Since     string `json:"since"` // when it started serving, RFC 3339
	Calls     int64  `json:"calls"` // the engine calls it has answered
}

// Expect is the Hello a client of this build wants from the server of
// root, whose engine was opened with fixedTime ("" for the real clock).
func Expect(root, fixedTime string) Hello {
	return Hello{Version: api.Version, ABIVersion: runtime.ABIVersion, Module: runtime.ModuleDigest(), Root: root, FixedTime: fixedTime}
}

// Mismatch says why a server's Hello does not match want, "" when it
// does. What the server did (PID, Since, Calls) is not compared.
func (h Hello) Mismatch(want Hello) string {
	switch {
	case h.Root != want.Root:
		return fmt.Sprintf("it serves %s, not %s", h.Root, want.Root)
	case h.Version != want.Version || h.ABIVersion != want.ABIVersion:
		return fmt.Sprintf("it runs arbor %s (ABI %d), this is %s (ABI %d)", h.Version, h.ABIVersion, want.Version, want.ABIVersion)
	case h.Module != want.Module:
		return fmt.Sprintf("its engine module (%s) is another build than this one's (%s)", h.Module, want.Module)
	case h.FixedTime != want.FixedTime:
		return fmt.Sprintf("its clock is fixed at %q, not %q", h.FixedTime, want.FixedTime)
	}
	return ""
}

// maxSocketPath is the longest socket path used: sun_path holds 104
// bytes on macOS and the BSDs and 108 on Linux, the final NUL included.
const maxSocketPath = 100

// Paths returns where the server of root (absolute, symbolic links
// resolved) listens and the file it locks while it runs: in root's
// .arbor/, or, when that path is too long for a socket, in the temporary
// folder under a name made of the user's id and a hash of root.
func Paths(root string) (socket, lock string) {
	dir := filepath.Join(root, api.StateDir)
	if len(filepath.Join(dir, "serve.sock")) > maxSocketPath {
		sum := sha256.Sum256([]byte(root))
		base := fmt.Sprintf("arbor-%d-%x", os.Getuid(), sum[:8])
		dir = os.TempDir()
		if len(filepath.Join(dir, base+".sock")) > maxSocketPath {
			dir = "/tmp"
		}
		return filepath.Join(dir, base+".sock"), filepath.Join(dir, base+".lock")
	}
	return filepath.Join(dir, "serve.sock"), filepath.Join(dir, "serve.lock")
}
