package api

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestCleanPath(t *testing.T) {
	tests := []struct {
		in, want string
		reason   string // substring of the error; "" when valid
	}{
		{"engineering", "engineering", ""},
		{"engineering/billing/invoice_retry_policy.md", "engineering/billing/invoice_retry_policy.md", ""},
		{"engineering/billing/", "engineering/billing", ""},
		{"engineering/billing//", "engineering/billing", ""},
		{"Vault/My Note.md", "Vault/My Note.md", ""},
		{"가치관/정리.md", "가치관/정리.md", ""},
		{"a/b..c.md", "a/b..c.md", ""},
		{"", "", "empty path"},
		{".", "", `"." is not allowed`},
		{"..", "", `".." is not allowed`},
		{"../x", "", `".." is not allowed`},
		{"a/../b", "", `".." is not allowed`},
		{"a/./b", "", `"." is not allowed`},
		{"./a", "", `"." is not allowed`},
		{"/etc/passwd", "", "absolute"},
		{"/", "", "absolute"},
		{"C:/x", "", "absolute"},
		{"c:", "", "absolute"},
		{"a//b", "", "empty segment"},
		{"a\\b", "", "backslash"},
		{"a/\x00b", "", "control"},
		{"a/b\nc", "", "control"},
		{"a/\x7f", "", "control"},
		{"a/\u0085", "", "control"},
		{"a/\xff.md", "", "UTF-8"},
		{".arbor/state.json", "", `segment ".arbor" starts with "."`},
		{"notes/.obsidian/x", "", `segment ".obsidian" starts with "."`},
		{"a/.hidden.md", "", `starts with "."`},
		{"a/...", "", `starts with "."`},
	}
	for _, tt := range tests {
		got, err := CleanPath(tt.in)
		if tt.reason == "" {
			if err != nil || got != tt.want {
				t.Errorf("CleanPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("CleanPath(%q) = %q, want error %q", tt.in, got, tt.reason)
			continue
		}
		if !errors.Is(err, ErrInvalidPath) {
			t.Errorf("CleanPath(%q): error %v does not wrap ErrInvalidPath", tt.in, err)
		}
		var pe *PathError
		if !errors.As(err, &pe) || pe.Path != tt.in {
			t.Errorf("CleanPath(%q): error %#v is not a *PathError for the input", tt.in, err)
		}
		if !strings.Contains(err.Error(), tt.reason) {
			t.Errorf("CleanPath(%q): error %q does not mention %q", tt.in, err, tt.reason)
		}
	}
}

func TestPathErrorMessage(t *testing.T) {
	_, err := CleanPath("../x")
	if got, want := err.Error(), `invalid path "../x": ".." is not allowed`; got != want {
		t.Fatalf("message = %q, want %q", got, want)
	}
}

func TestCheckPortableName(t *testing.T) {
	tests := []struct {
		name   string
		reason string // substring of the error; "" when Windows can hold the name
	}{
		{"billing", ""},
		{"invoice_retry_policy.md", ""},
		{"Daily Note.md", ""},
		{"café", ""},
		{"console", ""},
		{"com10", ""},
		{"lpt0", ""},
		{"auxiliary.md", ""},
		{"con_2.md", ""},
		{"a.b.c", ""},
		{"CON", "device name"},
		{"con", "device name"},
		{"Aux.md", "device name"},
		{"nul.tar.gz", "device name"},
		{"PRN", "device name"},
		{"com1", "device name"},
		{"LPT9.md", "device name"},
		{"com²", "device name"},
		{"conout$", "device name"},
		{"CON .md", "device name"},
		{"billing.", "ends in a dot or a space"},
		{"billing ", "ends in a dot or a space"},
		{"a:b", "holds ':'"},
		{"what?.md", "holds '?'"},
		{"<x>", "holds '<'"},
		{`say "hi"`, `holds '"'`},
		{"a|b", "holds '|'"},
		{"a*", "holds '*'"},
		{"a\tb", "control character"},
	}
	for _, tt := range tests {
		err := CheckPortableName(tt.name)
		switch {
		case tt.reason == "" && err != nil:
			t.Errorf("CheckPortableName(%q) = %v, want nil", tt.name, err)
		case tt.reason != "" && (err == nil || !strings.Contains(err.Error(), tt.reason)):
			t.Errorf("CheckPortableName(%q) = %v, want %q", tt.name, err, tt.reason)
		case err != nil && !strings.Contains(err.Error(), strconv.Quote(tt.name)):
			t.Errorf("CheckPortableName(%q) = %v: does not name it", tt.name, err)
		}
	}
}

// TestPlainPathAgrees checks CleanPath's one-scan form against its rules:
// every string of a small alphabet holding each character a rule looks
// at, up to five long, that plainPath takes is one the rules return as it
// is.
func TestPlainPathAgrees(t *testing.T) {
	alphabet := []string{"a", "C", ":", ".", "/", "\\", " ", "\x00", "\x7f", "é", "\u0085", "\xff"}
	var gen func(prefix string, n int)
	taken := 0
	gen = func(p string, n int) {
		if plainPath(p) {
			taken++
			if got, err := cleanPath(p); err != nil || got != p {
				t.Errorf("plainPath(%q) is true, but the rules give %q, %v", p, got, err)
			}
		}
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(p+c, n-1)
		}
	}
	gen("", 5)
	if taken == 0 {
		t.Fatal("plainPath took no path")
	}
}
