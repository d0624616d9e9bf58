package api

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// utf16Bytes encodes s as UTF-16 with a byte-order mark.
func utf16Bytes(s string, bigEndian bool) []byte {
	var b []byte
	put := func(u uint16) {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	put(0xFEFF)
	for _, u := range utf16.Encode([]rune(s)) {
		put(u)
	}
	return b
}

func TestDecodeText(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, ""},
		{"ASCII", []byte("plain\ntext\n"), "plain\ntext\n"},
		{"UTF-8", []byte("café 가치관 𝄞"), "café 가치관 𝄞"},
		{"UTF-8 with controls", []byte("\x1b[31mred\x1b[0m\f"), "\x1b[31mred\x1b[0m\f"},
		{"UTF-8 byte-order mark dropped", []byte("\xEF\xBB\xBFcafé"), "café"},
		{"UTF-16LE", utf16Bytes("café\r\n€ 𝄞 가", false), "café\r\n€ 𝄞 가"},
		{"UTF-16BE", utf16Bytes("café\r\n€ 𝄞 가", true), "café\r\n€ 𝄞 가"},
		{"UTF-16 byte-order mark alone", []byte{0xFF, 0xFE}, ""},
		// Not UTF-8: Windows-1252, whose 0x80–0x9F are printable.
		{"Windows-1252", []byte("caf\xe9 \x93quoted\x94 \x80 5 \x96 \x85"), "café “quoted” € 5 – …"},
		{"Latin-1 text reads the same", []byte("na\xefve \xa3 10, \xbd\xb0C\r\n"), "naïve £ 10, ½°C\r\n"},
		{"Windows-1252 with tabs and page breaks", []byte("a\tb\f\xe9\v"), "a\tb\fé\v"},
	}
	for _, tt := range tests {
		got, err := DecodeText(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("%s: DecodeText(%q) = %q, %v; want %q", tt.name, tt.in, got, err, tt.want)
		}
	}
}

func TestDecodeTextRefuses(t *testing.T) {
	odd := utf16Bytes("ab", false)
	tests := []struct {
		name string
		in   []byte
		msg  string
	}{
		{"NUL in UTF-8", []byte("a\x00b"), "holds NUL bytes: a binary file, not text"},
		{"NUL in a binary file", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "holds NUL bytes: a binary file, not text"},
		{"UTF-32LE", []byte{0xFF, 0xFE, 0, 0, 'a', 0, 0, 0}, "UTF-32LE text (by its byte-order mark): convert it to UTF-8"},
		{"UTF-32BE", []byte{0, 0, 0xFE, 0xFF, 0, 0, 0, 'a'}, "UTF-32BE text"},
		{"UTF-8 mark, then not UTF-8", []byte("\xEF\xBB\xBFab\ncaf\xe9"), "starts with a UTF-8 byte-order mark but is not valid UTF-8 (at byte 9, line 2)"},
		{"UTF-16 cut short", odd[:len(odd)-1], "UTF-16LE text with an odd number of bytes"},
		{"UTF-16 unpaired surrogate", append(utf16Bytes("a\nb", false), 0x00, 0xD8, 'c', 0), "not valid UTF-16LE text: an unpaired surrogate at byte 8 (line 2)"},
		{"UTF-16 lone low surrogate", append(utf16Bytes("a", true), 0xDC, 0x00), "not valid UTF-16BE text: an unpaired surrogate at byte 4 (line 1)"},
		{"UTF-16 NUL", append(utf16Bytes("a", false), 0, 0), "holds NUL characters"},
		{"undefined in Windows-1252", []byte("caf\xe9\nab\x81"), "neither UTF-8 nor Windows-1252 text: byte 0x81 at byte 7 (line 2); convert the file to UTF-8"},
		{"control byte in a non-UTF-8 file", []byte("\xe9\x01"), "byte 0x01 at byte 1 (line 1)"},
		{"DEL in a non-UTF-8 file", []byte("\xe9\x7f"), "byte 0x7F"},
	}
	for _, tt := range tests {
		got, err := DecodeText(tt.in)
		if err == nil || !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: DecodeText(%q) = %q, %v; want an error with %q", tt.name, tt.in, got, err, tt.msg)
		}
	}
}

func TestLooksBinary(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   []byte
		want bool
	}{
		{"text", []byte("# Notes\n"), false},
		{"empty", nil, false},
		{"PNG", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), true},
		{"UTF-16 text", utf16Bytes("notes", false), false},
		{"UTF-8 mark, then NUL", []byte("\xEF\xBB\xBFa\x00"), true},
		{"NUL past 8 KiB", append([]byte(strings.Repeat("a", 8<<10)), 0), false},
		{"Windows-1252 text", []byte("caf\xe9"), false},
	} {
		if got := LooksBinary(tt.in); got != tt.want {
			t.Errorf("%s: LooksBinary = %v", tt.name, got)
		}
	}
}

func TestSourceFileText(t *testing.T) {
	if s, err := (SourceFile{Name: "a.txt", Data: []byte("caf\xe9")}).Text(); err != nil || s != "café" {
		t.Errorf("data: %q, %v", s, err)
	}
	if s, err := (SourceFile{Name: "a.txt", Data: []byte{}}).Text(); err != nil || s != "" {
		t.Errorf("empty data: %q, %v", s, err)
	}
	if s, err := (SourceFile{Name: "a.txt", Content: "café"}).Text(); err != nil || s != "café" {
		t.Errorf("content: %q, %v", s, err)
	}
	for _, tt := range []struct {
		f   SourceFile
		msg string
	}{
		{SourceFile{Name: "a.txt", Content: "x", Data: []byte("x")}, "both content and data"},
		{SourceFile{Name: "a.txt", Content: "ab\ncaf\xe9"}, "not valid UTF-8 text (at byte 6, line 2): send the file's bytes as data"},
		{SourceFile{Name: "a.txt", Content: "a\x00"}, "holds NUL bytes"},
		{SourceFile{Name: "a.txt", Data: []byte("\x81")}, "neither UTF-8 nor Windows-1252"},
	} {
		if _, err := tt.f.Text(); err == nil || !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%+v: %v, want %q", tt.f, err, tt.msg)
		}
	}
}

func TestSourceText(t *testing.T) {
	// The limit counts the bytes sent: Windows-1252 text at the limit
	// grows as UTF-8 and still passes.
	f := SourceFile{Name: "a.txt", Data: []byte(strings.Repeat("\xe9", 10))}
	if s, err := SourceText(f, 10); err != nil || s != strings.Repeat("é", 10) {
		t.Errorf("at the limit: %q, %v", s, err)
	}
	if _, err := SourceText(f, 9); err == nil || !strings.Contains(err.Error(), "10 bytes is over the 9-byte limit") {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := SourceText(SourceFile{Name: "../a.txt", Content: "x"}, 0); err == nil || !errors.Is(err, ErrBadInput) {
		t.Errorf("bad name: %v", err)
	}
}

// FuzzDecodeText: any bytes are decoded to valid UTF-8 or refused with
// ErrBadInput; UTF-8 without a mark or NUL comes back as it is.
func FuzzDecodeText(f *testing.F) {
	for _, s := range []string{"plain", "caf\xe9", "\xEF\xBB\xBFx", "\xFF\xFEa\x00", "\xFE\xFF\x00a", "\xFF\xFE\x00\xD8", "a\x00", "\x81"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeText(b)
		if err != nil {
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("error without ErrBadInput: %v", err)
			}
			return
		}
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			t.Fatalf("DecodeText(%q) = %q", b, s)
		}
		if enc, _ := bomOf(b); enc == "" && utf8.Valid(b) && s != string(b) {
			t.Fatalf("UTF-8 %q came back as %q", b, s)
		}
	})
}
