package arborhost

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
)

// privateDir is the one dot-folder a path may start with: the engine's own
// state (docs/ABI.md §2). Below it the engine names what it likes
// (".arbor/.gitignore"); elsewhere a dot segment would reach .git or an
// editor's settings.
const privateDir = api.StateDir

// checkPath enforces the path rules of docs/ABI.md §2 on a path that comes
// from the guest: relative, slash separated, no empty, "." or ".." segment,
// no backslash, no control character, valid UTF-8, and no segment starting
// with "." outside a leading ".arbor". The empty string names the root. A
// violation wraps host.ErrInvalid.
func checkPath(p string) error {
	if p == "" {
		return nil
	}
	bad := func(why string) error {
		return fmt.Errorf("path %q: %s: %w", p, why, host.ErrInvalid)
	}
	if !utf8.ValidString(p) {
		return bad("not valid UTF-8")
	}
	if strings.HasPrefix(p, "/") || filepath.IsAbs(p) || filepath.VolumeName(p) != "" {
		return bad("absolute paths are not allowed")
	}
	if strings.ContainsRune(p, '\\') {
		return bad("backslashes are not allowed")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return bad("control characters are not allowed")
		}
	}
	first, _, _ := strings.Cut(p, "/")
	private := first == privateDir
	// Segment by segment, not strings.Split: a walk checks the path of
	// every folder it lists.
	for rest, more := p, true; more; {
		var seg string
		seg, rest, more = strings.Cut(rest, "/")
		switch {
		case seg == "":
			return bad("empty segment")
		case seg == "." || seg == "..":
			return bad(fmt.Sprintf("%q segment", seg))
		case strings.HasPrefix(seg, ".") && !private:
			return bad(fmt.Sprintf("dot segment %q (only under a leading %s)", seg, privateDir))
		}
	}
	return nil
}
