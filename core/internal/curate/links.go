package curate

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/arbormem/arbor/core/host"
	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/tree"
)

// relinkTo returns the tree.Relink of a MERGE: a raw link that cat
// resolves to the entry from (see catalog.Catalog.Resolve) points at to.
func relinkTo(cat *catalog.Catalog, from, to string) tree.Relink {
	return func(raw string) (string, bool) {
		q, ok := cat.Resolve(raw)
		return to, ok && q == from
	}
}

// relinkMoved returns the tree.Relink of a MOVE: moved maps the entries
// that move to their new paths, and pinned holds entries that stay but
// whose base name a moved entry takes. A link that resolves to a moved
// entry points at its new path, unless it names the entry by base name
// alone ([[plan]]) and the entry keeps that name: such a link still
// finds it, and a hand-written note keeps its short links. A base-name
// link to a pinned entry is spelled out as the entry's path, since the
// name would stop naming one entry.
func relinkMoved(cat *catalog.Catalog, moved map[string]string, pinned map[string]bool) tree.Relink {
	return func(raw string) (string, bool) {
		q, ok := cat.Resolve(raw)
		if !ok {
			return "", false
		}
		byName := !strings.Contains(catalog.LinkTarget(raw), "/")
		if to, ok := moved[q]; ok {
			if byName && strings.EqualFold(baseName(to), baseName(q)) {
				return "", false
			}
			return to, true
		}
		if pinned[q] && byName {
			return q, true
		}
		return "", false
	}
}

// noted wraps relink so that each link it points elsewhere is kept for the
// operation's journal (journal.Links).
func (c *Curator) noted(relink tree.Relink) tree.Relink {
	return func(raw string) (string, bool) {
		to, ok := relink(raw)
		if ok {
			if c.current.links == nil {
				c.current.links = map[string]string{}
			}
			c.current.links[raw] = to
		}
		return to, ok
	}
}

// relinking marks p as a file the operation writes only to point its
// links elsewhere (journalFile.Relink).
func (c *Curator) relinking(p string) {
	if c.current.relinked == nil {
		c.current.relinked = map[string]bool{}
	}
	c.current.relinked[p] = true
}

// rewriteLinks returns a copy of e whose links relink maps point at their
// new paths (related:, legacy @path lines and wikilinks outside code, see
// tree.Entry.RewriteLinks), and how many links it rewrote. Relations that
// become duplicates or point at e itself are dropped.
func rewriteLinks(e *tree.Entry, relink tree.Relink) (*tree.Entry, int) {
	out, n := e.RewriteLinks(relink)
	out.Related = appendRelations(nil, withoutKeys(out.Related, out.Path))
	out.LegacyRelations = legacyRelations(out.Related, out.LegacyRelations, out.Path)
	return out, n
}

// rewriteReferrer returns the new bytes of an entry whose links relink
// maps, with those links pointing at their new paths, and how many links
// changed (0: nothing to write). It first tries a minimal edit of the
// file as it is on disk (tree.RewriteLinksInText), so that a hand-written
// note keeps its formatting; the edit is used only when the file parses
// back exactly as the rendered rewrite would, otherwise the rewritten
// entry is rendered.
func (c *Curator) rewriteReferrer(ref *tree.Entry, relink tree.Relink) ([]byte, *tree.Entry, int, error) {
	ne, n := rewriteLinks(ref, relink)
	if n == 0 {
		return nil, nil, 0, nil
	}
	raw, rerr := c.FS.ReadFile(ref.Path)
	if _, intact, piece := tree.Ingested(raw); rerr == nil && intact {
		// Keeping links right is the engine's upkeep, not a person's edit:
		// an entry as ingest wrote it stays the ingest's (its stamp
		// renewed, the minimal edit below then not taken), so that its
		// source's changes still reach it.
		tree.Stamp(ne, piece)
	}
	data, parsed, err := c.render(ne)
	if err != nil {
		return nil, nil, 0, err
	}
	if rerr == nil {
		if edited, ok := tree.RewriteLinksInText(string(raw), ref, relink); ok && len(edited) <= c.maxBytes() {
			if pe, perr := tree.ParseEntry(ref.Path, []byte(edited)); perr == nil && reflect.DeepEqual(pe, parsed) {
				return []byte(edited), pe, n, nil
			}
		}
	}
	return data, parsed, n, nil
}

// linkersSince returns, read again from disk, the entries the catalog does
// not hold as they are now (saved or added since the open or the last
// refresh, when no watcher told) that link where relink points elsewhere,
// skip's left out: the referrers of a MOVE or MERGE that the catalog's
// backlinks, made from what it read, cannot know. The catalog takes each
// one found in, as it does any referrer it rewrites; any other file
// changed stays as the catalog read it, so that an operation giving its
// text still finds it changed (checkUpdate). The tree is listed, and the
// files changed read, once per Apply: an operation after the first of a
// call looks among what that read found.
func (c *Curator) linkersSince(relink tree.Relink, skip func(string) bool) ([]string, error) {
	if c.unread == nil {
		if err := c.readUnread(); err != nil {
			return nil, err
		}
	}
	cat := c.catalog()
	var out []string
	for _, u := range c.unread {
		if u.entry == nil || skip(u.path) {
			continue
		}
		if _, n := u.entry.RewriteLinks(relink); n == 0 {
			continue
		}
		if _, err := c.refresh(u.path); err != nil {
			return nil, err
		}
		if _, ok := cat.Get(u.path); ok {
			out = append(out, u.path)
		}
	}
	return out, nil
}

// unreadFile is a markdown file the catalog does not hold as it is on
// disk, and the entry it holds now: nil when it is gone, over the size
// limit or does not parse, which leaves no link to rewrite.
type unreadFile struct {
	path  string
	entry *tree.Entry
}

// readUnread lists the tree and reads the files the catalog does not hold
// as the listing shows them, for linkersSince.
func (c *Curator) readUnread() error {
	scan := c.catalog().NewScan()
	var paths []string
	limit := int64(c.maxBytes())
	err := host.WalkFiles(c.FS, "", nil, func(dir string, de host.DirEntry) error {
		if tree.IsMarkdown(de.Name) {
			// One over the size limit stays unread, as at open: a note
			// grown into a log may be gigabytes.
			fi := catalog.InfoOf(de)
			if p, unchanged := scan.File(dir, de.Name, fi); !unchanged && fi.Size <= limit {
				paths = append(paths, p)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("look for links saved since the tree was read: %w", err)
	}
	c.unread = make([]unreadFile, 0, len(paths))
	for _, p := range paths {
		u := unreadFile{path: p}
		if data, err := c.FS.ReadFile(p); err == nil && len(data) <= c.maxBytes() {
			if e, err := tree.ParseEntry(p, data); err == nil {
				u.entry = e
			}
		}
		c.unread = append(c.unread, u)
	}
	return nil
}
