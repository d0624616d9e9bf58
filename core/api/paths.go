package api

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrInvalidPath is wrapped by every path-rule violation (errors.Is).
var ErrInvalidPath = errors.New("invalid path")

// PathError reports a path refused by CleanPath and the rule it broke.
// It unwraps to ErrInvalidPath so callers can test with errors.Is without
// caring which rule failed.
type PathError struct {
	Path   string // the path as given
	Reason string // the rule it broke, e.g. `".." is not allowed`
}

// Error returns a message naming the path and the rule.
func (e *PathError) Error() string {
	return fmt.Sprintf("invalid path %q: %s", e.Path, e.Reason)
}

// Unwrap returns ErrInvalidPath.
func (e *PathError) Unwrap() error { return ErrInvalidPath }

// CleanPath validates a path that comes from outside (docs/ABI.md §3) and returns
// it in canonical form (no trailing slash). Refused: empty, "..", ".",
// absolute, empty segments, backslashes, control characters, invalid UTF-8,
// segments starting with ".". The error is a *PathError that names the path
// and the rule.
//
// Trailing slashes are trimmed because callers naturally write folders as
// "engineering/"; a "//" inside a path is refused rather than collapsed,
// since silently rewriting it could address a different file than intended.
// Dot segments are refused outright (not resolved) so that ".arbor/" and
// other hidden folders can never be reached through a path from outside.
func CleanPath(p string) (string, error) {
	if plainPath(p) {
		return p, nil
	}
	return cleanPath(p)
}

// cleanPath is CleanPath by its rules, one at a time.
func cleanPath(p string) (string, error) {
	bad := func(reason string) (string, error) {
		return "", &PathError{Path: p, Reason: reason}
	}
	if p == "" {
		return bad("empty path")
	}
	if !utf8.ValidString(p) {
		return bad("not valid UTF-8")
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return bad("control characters are not allowed")
		}
	}
	if strings.ContainsRune(p, '\\') {
		return bad("backslashes are not allowed")
	}
	if strings.HasPrefix(p, "/") || isDriveLetter(p) {
		return bad("absolute paths are not allowed")
	}
	q := strings.TrimRight(p, "/")
	for rest := q; rest != ""; {
		seg := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			seg, rest = rest[:i], rest[i+1:] // never "": q ends in no "/"
		} else {
			rest = ""
		}
		switch {
		case seg == "":
			return bad("empty segment")
		case seg == "..":
			return bad(`".." is not allowed`)
		case seg == ".":
			return bad(`"." is not allowed`)
		case strings.HasPrefix(seg, "."):
			return bad(fmt.Sprintf("segment %q starts with \".\"", seg))
		}
	}
	return q, nil
}

// plainPath reports whether p is a path CleanPath returns as it is, on
// the form nearly every path has (printable ASCII): one scan, where the
// rules in turn take several. An open checks every path of the persisted
// catalog, and the module hashes and scans strings in software.
func plainPath(p string) bool {
	if p == "" || p[0] == '/' || isDriveLetter(p) {
		return false
	}
	segStart := true
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c < 0x20 || c >= 0x7f || c == '\\':
			return false
		case segStart && (c == '.' || c == '/'):
			return false // a dot segment, a hidden name or an empty segment
		}
		segStart = c == '/'
	}
	return !segStart // a trailing "/" is trimmed by the rules
}

// isDriveLetter reports a Windows drive prefix ("C:" or "C:/..."), which a
// Windows host would treat as absolute.
func isDriveLetter(p string) bool {
	if len(p) < 2 || p[1] != ':' {
		return false
	}
	c := p[0] | 0x20
	return c >= 'a' && c <= 'z' && (len(p) == 2 || p[2] == '/')
}

// CheckPortableName reports a file or folder name that Windows cannot
// hold, with the rule it breaks: a device name (CON, PRN, AUX, NUL, COM1–9,
// LPT1–9, COM¹–³, LPT¹–³, CONIN$, CONOUT$; in any case, with or without an
// extension, as Windows 10 and earlier read "nul.txt"), a trailing dot or
// space, one of < > : " | ? * or a control character. The engine refuses
// such names in the paths it creates, so that a tree synced or cloned to
// Windows keeps every file; names already in a tree are read as they are.
// The device names are the ones Go's path/filepath refuses on Windows.
func CheckPortableName(name string) error {
	for _, r := range name {
		switch {
		case unicode.IsControl(r):
			return fmt.Errorf("%q holds a control character, which Windows does not allow in names", name)
		case strings.ContainsRune(`<>:"|?*`, r):
			return fmt.Errorf("%q holds %q, which Windows does not allow in names (< > : \" | ? *)", name, r)
		}
	}
	if strings.HasSuffix(name, ".") || strings.HasSuffix(name, " ") {
		return fmt.Errorf("%q ends in a dot or a space, which Windows drops from names", name)
	}
	base, _, _ := strings.Cut(name, ".")
	if isDeviceName(strings.TrimRight(base, " ")) {
		return fmt.Errorf("%q is a device name Windows reserves (CON, PRN, AUX, NUL, COM1–9, LPT1–9, with or without an extension)", name)
	}
	return nil
}

// isDeviceName reports a Windows device name, in any case.
func isDeviceName(s string) bool {
	u := strings.ToUpper(s)
	switch u {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(u) < 4 || (u[:3] != "COM" && u[:3] != "LPT") {
		return false
	}
	switch n := u[3:]; n {
	case "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
		return true
	}
	return false
}
