package curate

import (
	"reflect"
	"strings"

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
