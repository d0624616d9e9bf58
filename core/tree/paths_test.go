package tree

import (
	"errors"
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

func TestSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Auth-Billing Circular Dependency", "auth_billing_circular_dependency"},
		{"Invoice retry policy", "invoice_retry_policy"},
		{"가치관 정리", "가치관_정리"},
		{"Café Notes", "café_notes"},
		{"Cafe\u0301 Notes", "cafe\u0301_notes"},
		{"  --Hello,   World!!  ", "hello_world"},
		{"v1.8 release", "v1_8_release"},
		{"日本語のメモ", "日本語のメモ"},
		{"ÀÉÎ", "àéî"},
		{"", "entry"},
		{"!!!", "entry"},
		{"\u0301abc", "abc"},
		{strings.Repeat("ab ", 50), strings.TrimSuffix(strings.Repeat("ab_", 27), "_")},
		{strings.Repeat("가", 40), strings.Repeat("가", 26)}, // 26*3 = 78 bytes, rune boundary
		{"bad \xff bytes", "bad_bytes"},
	}
	for _, tt := range tests {
		got := Slug(tt.in)
		if got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if len(got) > 80 {
			t.Errorf("Slug(%q) is %d bytes", tt.in, len(got))
		}
		if _, err := CleanPath(got + ".md"); err != nil {
			t.Errorf("Slug(%q) = %q is not a valid path: %v", tt.in, got, err)
		}
	}
}

func TestIsEntryPath(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"a/b/c.md", true},
		{"note.md", true},
		{"Vault/Note.MD", true},
		{"a/context.md", false},
		{"context.md", false},
		{"a/b/c.txt", false},
		{"a/b", false},
		{".md", false},
		{"a/.md", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsEntryPath(tt.in); got != tt.want {
			t.Errorf("IsEntryPath(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
