package api

import (
	"bytes"
	"encoding/binary"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// binarySniffBytes is how much of a file LooksBinary reads: git decides
// that a file is binary by a NUL byte among its first 8,000 bytes.
const binarySniffBytes = 8 << 10

// Byte-order marks, longest first: UTF-32's begin like UTF-16's.
var boms = []struct {
	mark []byte
	name string
}{
	{[]byte{0xFF, 0xFE, 0, 0}, "UTF-32LE"},
	{[]byte{0, 0, 0xFE, 0xFF}, "UTF-32BE"},
	{[]byte{0xEF, 0xBB, 0xBF}, "UTF-8"},
	{[]byte{0xFF, 0xFE}, "UTF-16LE"},
	{[]byte{0xFE, 0xFF}, "UTF-16BE"},
}

// bomOf names the encoding b's byte-order mark announces and returns the
// mark's length, or "" and 0 when b has none.
func bomOf(b []byte) (string, int) {
	for _, m := range boms {
		if bytes.HasPrefix(b, m.mark) {
			return m.name, len(m.mark)
		}
	}
	return "", 0
}

// LooksBinary reports whether a file's bytes look like a binary file
// rather than text: a NUL byte among the first 8 KiB, as git decides,
// unless a UTF-16 or UTF-32 byte-order mark says that the NULs are the
// high bytes of text. A host walking a folder skips such files before
// sending anything; DecodeText refuses them.
func LooksBinary(b []byte) bool {
	if enc, _ := bomOf(b); enc != "" && enc != "UTF-8" {
		return false
	}
	return bytes.IndexByte(b[:min(len(b), binarySniffBytes)], 0) >= 0
}

// DecodeText returns the text a file's bytes hold, as UTF-8. It detects
// the encoding as editors do when nothing declares it:
//
//   - a byte-order mark: UTF-8 (dropped), UTF-16LE or UTF-16BE (decoded);
//   - else valid UTF-8 (ASCII included) is UTF-8;
//   - else the bytes are single-byte text in Windows-1252, the encoding of
//     Western European text on Windows, which reads Latin-1 (ISO-8859-1)
//     text the same but for 0x80–0x9F, where Latin-1 holds control
//     characters no text uses and Windows-1252 “ ” € – and the like (the
//     WHATWG Encoding Standard decodes a page labelled Latin-1 the same way).
//
// It refuses, with an error wrapping ErrBadInput that says what it found
// and where: NUL bytes (a binary file), UTF-32, malformed UTF-16 or UTF-8
// after its byte-order mark, and bytes that are not UTF-8 and that
// Windows-1252 leaves undefined or makes control characters, which no text
// in it holds (a binary file, or another encoding: Shift-JIS, GB 18030,
// KOI8-R, ... must be converted to UTF-8 first).
func DecodeText(b []byte) (string, error) {
	enc, n := bomOf(b)
	switch enc {
	case "UTF-32LE", "UTF-32BE":
		return "", badInput("%s text (by its byte-order mark): convert it to UTF-8", enc)
	case "UTF-16LE", "UTF-16BE":
		return decodeUTF16(b[n:], enc)
	case "UTF-8":
		b = b[n:]
		if i := invalidUTF8(string(b)); i >= 0 {
			return "", badInput("starts with a UTF-8 byte-order mark but is not valid UTF-8 (at byte %d, line %d)", i+n, bytes.Count(b[:i], []byte("\n"))+1)
		}
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return "", badInput("holds NUL bytes: a binary file, not text")
	}
	if utf8.Valid(b) {
		return string(b), nil
	}
	return decodeWindows1252(b)
}

// decodeUTF16 decodes UTF-16 text after its byte-order mark. golang.org/x/text
// turns an unpaired surrogate into U+FFFD without a word; a file holding one
// is refused instead, so that no character is silently replaced.
func decodeUTF16(b []byte, enc string) (string, error) {
	order, endian := binary.ByteOrder(binary.LittleEndian), unicode.LittleEndian
	if enc == "UTF-16BE" {
		order, endian = binary.BigEndian, unicode.BigEndian
	}
	if len(b)%2 != 0 {
		return "", badInput("%s text with an odd number of bytes: the file is cut short", enc)
	}
	line := 1
	for i := 0; i < len(b); i += 2 {
		switch u := order.Uint16(b[i:]); {
		case u == '\n':
			line++
		case u == 0:
			return "", badInput("holds NUL characters: a binary file, not text")
		case u >= 0xD800 && u < 0xDC00 && i+3 < len(b) && order.Uint16(b[i+2:]) >= 0xDC00 && order.Uint16(b[i+2:]) < 0xE000:
			i += 2 // a surrogate pair
		case u >= 0xD800 && u < 0xE000:
			return "", badInput("not valid %s text: an unpaired surrogate at byte %d (line %d)", enc, i+2, line)
		}
	}
	s, err := unicode.UTF16(endian, unicode.IgnoreBOM).NewDecoder().Bytes(b)
	if err != nil {
		return "", badInput("not valid %s text: %v", enc, err)
	}
	return string(s), nil
}

// decodeWindows1252 decodes bytes that are not UTF-8 as Windows-1252,
// refusing the bytes no Windows-1252 text holds: the five it leaves
// undefined (golang.org/x/text would make each a U+FFFD) and the control
// characters other than tab, line and page breaks.
func decodeWindows1252(b []byte) (string, error) {
	for i, c := range b {
		if c == 0x81 || c == 0x8D || c == 0x8F || c == 0x90 || c == 0x9D || c < 0x20 && !strings.ContainsRune("\t\n\v\f\r", rune(c)) || c == 0x7F {
			return "", badInput("neither UTF-8 nor Windows-1252 text: byte 0x%02X at byte %d (line %d); convert the file to UTF-8", c, i, bytes.Count(b[:i], []byte("\n"))+1)
		}
	}
	s, err := charmap.Windows1252.NewDecoder().Bytes(b)
	if err != nil {
		return "", badInput("not Windows-1252 text: %v", err)
	}
	return string(s), nil
}
