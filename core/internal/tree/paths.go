package tree

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxSlugBytes keeps generated names well below common file-name limits
// (255 bytes) even after ".md" and a collision suffix are added.
const maxSlugBytes = 80

// Slug turns a title into a snake_case file or folder name (lowercase,
// letters and digits of any script kept, runs of anything else become one
// "_", trimmed, at most 80 bytes on a rune boundary; "entry" when empty).
// Combining marks are kept with their letters so that decomposed accents
// ("e\u0301") survive like precomposed ones.
func Slug(title string) string {
	var b strings.Builder
	pending := false
	for _, r := range strings.ToLower(strings.ToValidUTF8(title, "")) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || (unicode.IsMark(r) && b.Len() > 0 && !pending) {
			if pending && b.Len() > 0 {
				b.WriteByte('_')
			}
			pending = false
			b.WriteRune(r)
			continue
		}
		pending = true
	}
	s := b.String()
	if len(s) > maxSlugBytes {
		cut := maxSlugBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = strings.TrimRight(s[:cut], "_")
	}
	if s == "" {
		return "entry"
	}
	return s
}

// IsEntryPath reports whether p names an entry file: ends in ".md" and is
// not a context.md. The extension is matched case-insensitively because
// notes copied from other tools sometimes end in ".MD".
func IsEntryPath(p string) bool {
	base := p[strings.LastIndexByte(p, '/')+1:]
	if len(base) <= len(".md") || !strings.EqualFold(base[len(base)-3:], ".md") {
		return false
	}
	return base != contextFile
}

// contextFile is the name of the per-folder description file.
const contextFile = "context.md"
