package tree

import (
	"bytes"
	"slices"
	"strings"
)

// StampKey is the front-matter key in which ingest stamps the entries it
// writes (docs/format.md, "Ingested entries"): the Version of the file's
// bytes without that line. The stamp travels with the file, through git
// and onto a teammate's clone, so whether a person edited an ingested
// entry is told by the file alone, not by machine-local state that a lost
// .arbor/ can take with it.
const StampKey = "ingestStamp"

// stampPrefix keeps the stamp a YAML string: 16 hex digits alone may read
// as a number ("1234…", "12e4…") and be written back otherwise.
const stampPrefix = "sha256-"

// Stamp sets e's ingest stamp to the version of e as Render writes it
// without one, then piece (the hash of the source's piece e holds; hex,
// "" for none), replacing any stamp e carried. Render then writes the
// stamp as the last key of the front matter, on its own line, so that
// taking that line out gives the bytes the stamp names (Ingested).
func Stamp(e *Entry, piece string) {
	e.Extra = slices.DeleteFunc(e.Extra, func(kv KeyValue) bool { return kv.Key == StampKey })
	v := stampPrefix + Version(Render(e))
	if piece != "" {
		v += " " + piece
	}
	e.Extra = append(e.Extra, KeyValue{Key: StampKey, Value: v})
}

// Ingested tells whether the file data carries an ingest stamp (stamped)
// and whether its other bytes are still the ones the stamp names (intact):
// stamped and not intact means someone changed the file since ingest wrote
// it, byte for byte (a person's editor, an agent's UPDATE, a reformatting),
// but for line endings: a file whose lines end in CRLF is read as with LF,
// as git's autocrlf checks files out on Windows, a change of form that
// loses nothing when ingest writes the file again. piece is the hash of
// the source's piece the stamp names, when intact.
func Ingested(data []byte) (stamped, intact bool, piece string) {
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(data, []byte("---\n")) {
		return false, false, ""
	}
	end := bytes.Index(data[3:], []byte("\n---\n"))
	if end < 0 {
		return false, false, ""
	}
	front := data[:3+end+1]
	at := bytes.Index(front, []byte("\n"+StampKey+": "))
	if at < 0 {
		return false, false, ""
	}
	line := at + 1
	eol := bytes.IndexByte(data[line:], '\n')
	words := strings.Fields(string(data[line+len(StampKey)+2 : line+eol]))
	rest := slices.Concat(data[:line], data[line+eol+1:])
	if len(words) == 0 || len(words) > 2 || words[0] != stampPrefix+Version(rest) {
		return true, false, ""
	}
	if len(words) == 2 {
		piece = words[1]
	}
	return true, true, piece
}
