package curate

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/tree"
)

// Paths the engine creates are lowercase snake_case and NFC, and hold no
// name Windows cannot hold; but trees are opened as people keep them (an
// Obsidian vault's "Projects/Plan.md"), and two names that differ only in
// case or Unicode form are one name to Windows and macOS. So a path an
// operation names is first matched against the tree (docs/format.md,
// "Paths"):
//
//   - a file the session knows at exactly that path is that file;
//   - else a known file whose path equals the given one, its normal form
//     (normalPath) or, for a folder and a title, the title as a file name,
//     but for case and Unicode form (tree.FoldKey) is that file, when there
//     is one; several, none spelt as given, are ambiguous and refused;
//   - else an operation that creates (ADD, UPSERT) walks the folders: each
//     one that exists in another spelling keeps that spelling, each new
//     one, and the new file, take the normal form, and must be a name
//     Windows can hold (api.CheckPortableName);
//   - else (UPDATE, MERGE, DELETE of something that is not there) the path
//     stays as given, and the operation says it is not found.

// spell resolves the paths of v against the tree's spellings.
func (c *Curator) spell(typ string, v valid) (valid, error) {
	create := typ == api.OpAdd || typ == api.OpUpsert
	v.given = v.path
	alias := ""
	if v.title != "" {
		// A title names the entry as people name notes: "Q3 Goals" finds
		// "Q3 Goals.md" as well as q3_goals.md.
		alias = v.title + ".md"
	}
	p, err := c.spellPath(v.path, alias, v.folder, create)
	if err != nil {
		return v, err
	}
	v.path = p
	if v.target == "" || typ == api.OpMove {
		return v, nil // a MOVE's destination depends on what the source is (move.go)
	}
	t, err := c.spellPath(v.target, "", false, false)
	if err != nil {
		return v, err
	}
	if t == v.path {
		return v, fmt.Errorf("cannot merge %s into itself", t)
	}
	v.target = t
	return v, nil
}

// Spell returns the path an ADD or UPSERT of the entry p writes: p as the
// tree spells it, or in the form the engine creates paths in; an error
// when it refuses the name (a name Windows cannot hold, or ambiguous
// twins). Nothing is written.
func (c *Curator) Spell(p string) (string, error) { return c.spellPath(p, "", false, true) }

// Locate returns the file p names by the rules above, for reading it: p
// when the session knows it or knows no other spelling of it; an error
// when several spellings match.
func (c *Curator) Locate(p string) (string, error) { return c.spellPath(p, "", false, false) }

// spellPath resolves p, an entry path or (folder) a folder, by the rules
// above. alias, when not "", is another name of the file to look for (a
// title), never a name to create.
func (c *Curator) spellPath(p, alias string, folder, create bool) (string, error) {
	cat := c.catalog()
	if _, ok := cat.Stamp(p); ok && !folder {
		return p, nil
	}
	n, nerr := normalPath(p, folder)
	if nerr != nil {
		n = p
	}
	look := []string{p, n}
	if alias != "" {
		look = append(look, joinPath(parentDir(p), alias))
	}
	q, err := pick(p, n, c.twins(folder, look...))
	if q != "" || err != nil || !create {
		if q == "" {
			q = p
		}
		return q, err
	}
	if nerr != nil {
		return "", &api.PathError{Path: p, Reason: nerr.Error()}
	}
	given, norm := strings.Split(p, "/"), strings.Split(n, "/")
	at, from := "", 0
	if dir := parentDir(p); !folder && dir != "" && slices.Contains(c.twins(true, dir), dir) {
		// The folder exists as named, so each folder above it resolves to itself.
		at, from = dir, len(given)-1
	}
	for i := from; i < len(given); i++ {
		dir := folder || i < len(given)-1
		a := ""
		if !dir {
			a = alias
		}
		seg, err := c.spellNew(at, given[i], norm[i], a, dir)
		if err != nil {
			return "", &api.PathError{Path: p, Reason: err.Error()}
		}
		at = joinPath(at, seg)
	}
	return at, nil
}

// spellNew resolves one segment of a path being created, below the
// resolved folder at: given as named, norm its normal form, alias another
// name to look for.
func (c *Curator) spellNew(at, given, norm, alias string, dir bool) (string, error) {
	g, n := joinPath(at, given), joinPath(at, norm)
	look := []string{g, n}
	if alias != "" {
		look = append(look, joinPath(at, alias))
	}
	cands := c.twins(dir, look...)
	if len(cands) == 0 && dir {
		// A folder the session knows no file in (attachments only, or made
		// since it opened) is still a folder: the disk says how it is spelt.
		var err error
		if cands, err = c.listTwins(at, look...); err != nil {
			return "", err
		}
	}
	q, err := pick(g, n, cands)
	if err != nil {
		return "", err
	}
	if q != "" {
		return baseName(q), nil
	}
	if !dir && given != norm {
		// A file as named that appeared since the session read the tree.
		if st, ok, err := c.exists(g); err != nil {
			return "", err
		} else if ok && !st.IsDir {
			return given, nil
		}
	}
	for _, name := range []string{given, norm} {
		if err := api.CheckPortableName(name); err != nil {
			return "", err
		}
	}
	return norm, nil
}

// twins returns the entry files (or, folders, the folders) the catalog
// knows whose path is one of ps but for case and Unicode form.
func (c *Curator) twins(folders bool, ps ...string) []string {
	cat := c.catalog()
	var out []string
	for i, p := range ps {
		if slices.Contains(ps[:i], p) {
			continue
		}
		for _, q := range cat.Spellings(p) {
			_, isFile := cat.Stamp(q)
			switch {
			case isFile == folders, slices.Contains(out, q):
				continue
			case isFile && !tree.IsEntryPath(q):
				continue // a context.md is the folder's, never an entry's twin
			}
			out = append(out, q)
		}
	}
	return out
}

// listTwins returns the folders in at, on disk, whose path is one of ps
// but for case and Unicode form.
func (c *Curator) listTwins(at string, ps ...string) ([]string, error) {
	list, cached := c.lists[at]
	if !cached {
		var err error
		list, err = c.FS.ReadDir(at)
		if err != nil && !errors.Is(err, host.ErrNotFound) {
			return nil, fmt.Errorf("list %q: %w", at, err)
		}
		if c.lists == nil {
			c.lists = map[string][]host.DirEntry{}
		}
		c.lists[at] = list
	}
	keys := map[string]bool{}
	for _, p := range ps {
		keys[tree.FoldKey(p)] = true
	}
	var out []string
	for _, de := range list {
		if q := joinPath(at, de.Name); de.IsDir && !strings.HasPrefix(de.Name, ".") && keys[tree.FoldKey(q)] {
			out = append(out, q)
		}
	}
	return out, nil
}

// pick chooses among the existing spellings of a path: the path as given,
// else its normal form, else the only one; several others are ambiguous.
// It returns "" when there is none.
func pick(given, norm string, cands []string) (string, error) {
	switch {
	case slices.Contains(cands, given):
		return given, nil
	case slices.Contains(cands, norm):
		return norm, nil
	case len(cands) == 1:
		return cands[0], nil
	case len(cands) > 1:
		slices.Sort(cands)
		return "", fmt.Errorf("%s could be any of %s, which differ only in case or Unicode form: name one of them exactly",
			given, strings.Join(cands, ", "))
	}
	return "", nil
}

// normalPath is p in the form the engine creates paths in: every folder
// segment tree.Slug of itself, and (unless folder) the file name
// tree.EntryName of its stem plus ".md". A segment with no letter or digit has
// no such form.
func normalPath(p string, folder bool) (string, error) {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		stem, ext := s, ""
		if !folder && i == len(segs)-1 && tree.IsEntryPath(s) {
			stem, ext = s[:len(s)-len(".md")], ".md"
		}
		if i == 0 && stem == api.ArchiveFolder && len(segs) > 1 {
			continue // the archive's name is not a slug: it sorts apart from the domains
		}
		if strings.IndexFunc(stem, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
			return "", fmt.Errorf("%q has no letter or digit to make a name of", s)
		}
		segs[i] = tree.Slug(stem)
		if ext != "" {
			// "Context.md" names a note, not the folder's context.md.
			segs[i] = tree.EntryName(stem) + ext
		}
	}
	return strings.Join(segs, "/"), nil
}

// baseName is the last segment of p.
func baseName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// parentDir is the folder holding p, "" at the root.
func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}
