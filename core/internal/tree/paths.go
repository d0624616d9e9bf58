package tree

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/arbormem/arbor/core/api"
	"golang.org/x/text/unicode/norm"
)

// maxSlugBytes keeps generated names well below common file-name limits
// (255 bytes) even after ".md" and a collision suffix are added.
const maxSlugBytes = 80

// Slug turns a title into a snake_case file or folder name (lowercase,
// NFC, letters and digits of any script kept, runs of anything else become
// one "_", trimmed, at most 80 bytes on a rune boundary; "entry" when
// empty). Decomposed accents ("e\u0301") are composed first, so that a
// title typed on macOS and one typed elsewhere give one name; a combining
// mark that has no precomposed form stays with its letter.
func Slug(title string) string {
	var b strings.Builder
	pending := false
	for _, r := range norm.NFC.String(strings.ToLower(strings.ToValidUTF8(title, ""))) {
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

// EntryName is the file name, without ".md", of an entry titled title:
// its Slug, except that an entry titled "Context" is named
// "context_entry", since context.md is the folder's own description.
func EntryName(title string) string {
	s := Slug(title)
	if s+".md" == contextFile {
		return s + "_entry"
	}
	return s
}

// IsMarkdown reports whether the file name or path p ends in ".md", in
// any case: notes copied from other tools sometimes end in ".MD".
func IsMarkdown(p string) bool { return len(p) >= 3 && isMD(p[len(p)-3:]) }

// isMD reports whether ext is ".md" in any case, as strings.EqualFold
// would (no other rune folds to m or d): an open asks it of every file of
// the tree, and EqualFold is a call and a loop.
func isMD(ext string) bool {
	return len(ext) == 3 && ext[0] == '.' && ext[1]|0x20 == 'm' && ext[2]|0x20 == 'd'
}

// IsEntryPath reports whether p names an entry file: ends in ".md" and is
// not a context.md. The extension is matched case-insensitively because
// notes copied from other tools sometimes end in ".MD".
func IsEntryPath(p string) bool {
	base := p[strings.LastIndexByte(p, '/')+1:]
	if len(base) <= len(".md") || !isMD(base[len(base)-3:]) {
		return false
	}
	return base != contextFile
}

// contextFile is the name of the per-folder description file.
const contextFile = "context.md"

// FoldKey is the form in which two names, or two paths, are the same name
// to a case-insensitive or normalization-insensitive file system (Windows,
// macOS): NFC, then every rune replaced by the smallest rune of its simple
// case-folding orbit (strings.EqualFold's folding). Full case folding
// (golang.org/x/text/cases.Fold) is not used: it makes "straße" and
// "strasse" one name, which no file system does.
func FoldKey(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Map(foldRune, norm.NFC.String(s))
		}
	}
	// ASCII, the common case: every letter's orbit starts at its capital
	// ("k" also holds the Kelvin sign, "s" the long s, both above it).
	return strings.ToUpper(s)
}

// foldRune is the smallest rune of r's simple case-folding orbit.
func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

// folderDepth is the number of folder levels of p's parent ("" and "." are 0).
func folderDepth(dir string) int {
	if dir == "" || dir == "." {
		return 0
	}
	return strings.Count(dir, "/") + 1
}

// CheckNewEntryPath enforces the tree's shape for entries the engine
// creates: under domain/topic, at most one subtopic level; an archived
// entry keeps its path under api.ArchiveFolder, one level more.
func CheckNewEntryPath(p string) error {
	dir := path.Dir(p)
	d := folderDepth(dir)
	if api.IsArchived(dir) {
		d--
	}
	switch {
	case d < 2:
		if d == 0 {
			dir = "the root"
		}
		return fmt.Errorf("cannot create %s: entries live under domain/topic[/subtopic], not in %s", p, dir)
	case d > 3:
		return fmt.Errorf("cannot create %s: %d folder levels, at most 3 (domain/topic/subtopic)", p, d)
	}
	return nil
}
