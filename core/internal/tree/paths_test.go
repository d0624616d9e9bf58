package tree

import (
	"strings"
	"testing"

	"github.com/arbormem/arbor/core/api"
)

func TestEntryName(t *testing.T) {
	for in, want := range map[string]string{
		"Context":        "context_entry", // context.md is the folder's
		"CONTEXT":        "context_entry",
		"context.md":     "context_md",
		"Context switch": "context_switch",
		"Reason":         "reason",
		"":               "entry",
	} {
		if got := EntryName(in); got != want {
			t.Errorf("EntryName(%q) = %q, want %q", in, got, want)
		}
		if !IsEntryPath("a/b/" + EntryName(in) + ".md") {
			t.Errorf("EntryName(%q) does not name an entry", in)
		}
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Auth-Billing Circular Dependency", "auth_billing_circular_dependency"},
		{"Invoice retry policy", "invoice_retry_policy"},
		{"가치관 정리", "가치관_정리"},
		{"Café Notes", "café_notes"},
		{"Cafe\u0301 Notes", "café_notes"}, // NFC: one name however the accent was typed
		{"A\u030a\u0301", "ǻ"},
		{"e\u20dd", "e\u20dd"}, // a mark with no precomposed form stays with its letter
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
		if _, err := api.CleanPath(got + ".md"); err != nil {
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

func TestFoldKey(t *testing.T) {
	same := [][2]string{
		{"Projects", "projects"},
		{"PROJECTS/Plan.md", "projects/plan.md"},
		{"café", "cafe\u0301"}, // composed, decomposed
		{"CAFE\u0301", "café"}, // and case
		{"Straße", "STRAẞE"},
		{"ΣΊΣΥΦΟΣ", "σίσυφος"},
		{"K", "\u212a"}, // Kelvin sign
		{"Å", "\u212b"}, // Angstrom sign
	}
	for _, p := range same {
		if FoldKey(p[0]) != FoldKey(p[1]) {
			t.Errorf("FoldKey(%q) = %q, FoldKey(%q) = %q: want one key", p[0], FoldKey(p[0]), p[1], FoldKey(p[1]))
		}
	}
	// The ASCII fast path gives what the general one does.
	for _, s := range []string{"", "Projects/Plan.md", "a_b-c.d/E~F", "kKsS", "\x01\x7f"} {
		if got, want := FoldKey(s), strings.Map(foldRune, s); got != want {
			t.Errorf("FoldKey(%q) = %q, want %q", s, got, want)
		}
	}
	differ := [][2]string{
		{"straße", "strasse"}, // full case folding would join them; file systems do not
		{"retry_policy.md", "retry policy.md"},
		{"cafe", "café"},
		{"a/b", "a_b"},
	}
	for _, p := range differ {
		if FoldKey(p[0]) == FoldKey(p[1]) {
			t.Errorf("FoldKey(%q) = FoldKey(%q) = %q: want two keys", p[0], p[1], FoldKey(p[0]))
		}
	}
}

// isMD answers as strings.EqualFold(ext, ".md") for every string of three
// bytes (and for the Unicode letters near m and d: none folds to them).
func TestIsMDMatchesEqualFold(t *testing.T) {
	b := []byte{0, 0, 0}
	for i := range 1 << 24 {
		b[0], b[1], b[2] = byte(i>>16), byte(i>>8), byte(i)
		if s := string(b); isMD(s) != strings.EqualFold(s, ".md") {
			t.Fatalf("isMD(%q) = %v", s, isMD(s))
		}
	}
	for _, s := range []string{".md", ".MD", ".Md", ".ｍd", ".\u1e3fd", "md", ".mdx", ""} {
		if isMD(s) != strings.EqualFold(s, ".md") {
			t.Errorf("isMD(%q) = %v", s, isMD(s))
		}
	}
}
