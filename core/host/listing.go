package host

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// DecodeListing decodes a directory listing in the form of the ABI's
// fs_list (docs/ABI.md §2): a JSON array of objects with the keys name,
// dir, size, mtime, ctime and ino. It gives what encoding/json gives,
// faster on the form every host writes (those keys in that order, ctime
// and ino optional, plain names, integers): reflection-driven decoding is
// most of what listing a tree costs the WebAssembly module, which lists
// every folder at each open. Anything else is left to encoding/json.
func DecodeListing(b []byte) ([]DirEntry, error) {
	if out, ok := fastListing(b); ok {
		return out, nil
	}
	var out []DirEntry
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// DecodeStat decodes the object of fs_stat, as DecodeListing decodes a
// listing.
func DecodeStat(b []byte) (DirEntry, error) {
	s := scanner{b: b}
	if d, ok := s.entry(); ok && s.end() {
		d.Name = strings.Clone(d.Name)
		return d, nil
	}
	var d DirEntry
	if err := json.Unmarshal(b, &d); err != nil {
		return DirEntry{}, err
	}
	return d, nil
}

// fastListing decodes the form hosts write; ok is false for anything
// else. The names share one string: an open lists every folder of the
// tree, and a string per name was an allocation per file.
func fastListing(b []byte) ([]DirEntry, bool) {
	s := scanner{b: b}
	if !s.lit("[") {
		return nil, false
	}
	out := make([]DirEntry, 0, bytes.Count(b, []byte("{")))
	if s.lit("]") {
		return out, s.end()
	}
	for {
		d, ok := s.entry()
		if !ok {
			return nil, false
		}
		out = append(out, d)
		if s.lit("]") {
			if !s.end() {
				return nil, false
			}
			break
		}
		if !s.lit(",") {
			return nil, false
		}
	}
	// The names so far point into b, which the caller may reuse.
	n := 0
	for _, d := range out {
		n += len(d.Name)
	}
	var names strings.Builder
	names.Grow(n)
	for _, d := range out {
		names.WriteString(d.Name)
	}
	all := names.String()
	for i := range out {
		n := len(out[i].Name)
		out[i].Name, all = all[:n], all[n:]
	}
	return out, true
}

// scanner reads JSON tokens of the forms fastListing takes.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\n' || s.b[s.i] == '\r' || s.b[s.i] == '\t') {
		s.i++
	}
}

// lit consumes the literal t after white space.
func (s *scanner) lit(t string) bool {
	s.space()
	if len(s.b)-s.i < len(t) || string(s.b[s.i:s.i+len(t)]) != t {
		return false
	}
	s.i += len(t)
	return true
}

// end reports whether only white space is left.
func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

// entry reads {"name":…,"dir":…,"size":…,"mtime":…,"ctime":…,"ino":…},
// ctime and ino optional; the name points into s.b (str).
func (s *scanner) entry() (DirEntry, bool) {
	var d DirEntry
	var ok bool
	if !s.lit("{") || !s.lit(`"name"`) || !s.lit(":") {
		return d, false
	}
	if d.Name, ok = s.str(); !ok || !s.lit(",") || !s.lit(`"dir"`) || !s.lit(":") {
		return d, false
	}
	switch {
	case s.lit("true"):
		d.IsDir = true
	case s.lit("false"):
	default:
		return d, false
	}
	if !s.lit(",") || !s.lit(`"size"`) || !s.lit(":") {
		return d, false
	}
	if d.Size, ok = s.int(); !ok || !s.lit(",") || !s.lit(`"mtime"`) || !s.lit(":") {
		return d, false
	}
	if d.ModTime, ok = s.int(); !ok {
		return d, false
	}
	// ctime and ino are left out where the storage has none.
	if s.lit(`,"ctime"`) {
		if !s.lit(":") {
			return d, false
		}
		if d.Change, ok = s.int(); !ok {
			return d, false
		}
	}
	if s.lit(`,"ino"`) {
		if !s.lit(":") {
			return d, false
		}
		ino, ok := s.int()
		if !ok || ino < 0 { // past int64: encoding/json reads it
			return d, false
		}
		d.Ino = uint64(ino)
	}
	return d, s.lit("}")
}

// str reads a string without escapes, of valid UTF-8 (encoding/json
// would replace what is not). The string points into s.b, without a copy:
// the caller copies what it keeps.
func (s *scanner) str() (string, bool) {
	if !s.lit(`"`) {
		return "", false
	}
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			return unsafe.String(unsafe.SliceData(v), len(v)), utf8.Valid(v)
		case c == '\\' || c < 0x20:
			return "", false
		}
	}
	return "", false
}

// int reads an integer that an int64 holds, in JSON's form (no leading
// zeros, no plus sign).
func (s *scanner) int() (int64, bool) {
	s.space()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == digits || s.b[digits] == '0' && s.i > digits+1 {
		return 0, false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return 0, false
	}
	if s.i-digits > 18 { // might not fit: strconv says
		v, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
		return v, err == nil
	}
	var v int64
	for _, c := range s.b[digits:s.i] {
		v = v*10 + int64(c-'0')
	}
	if digits > start {
		v = -v
	}
	return v, true
}
