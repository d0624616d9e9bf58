package curate

import (
	"reflect"

	"github.com/arbormem/arbor/core/internal/catalog"
	"github.com/arbormem/arbor/core/internal/tree"
)

// linksTo returns a link matcher for tree.Entry.RewriteLinks: a raw link
// matches when cat resolves it to the entry p (see catalog.Catalog.Resolve).
func linksTo(cat *catalog.Catalog, p string) func(raw string) bool {
	return func(raw string) bool {
		q, ok := cat.Resolve(raw)
		return ok && q == p
	}
}

// rewriteLinks returns a copy of e whose links that match accepts point
// at to instead (related:, legacy @path lines and wikilinks outside code,
// see tree.Entry.RewriteLinks), and how many links it rewrote. Relations
// that become duplicates or point at e itself are dropped.
func rewriteLinks(e *tree.Entry, match func(string) bool, to string) (*tree.Entry, int) {
	out, n := e.RewriteLinks(match, to)
	out.Related = appendRelations(nil, withoutKeys(out.Related, out.Path))
	out.LegacyRelations = legacyRelations(out.Related, out.LegacyRelations, out.Path)
	return out, n
}

// rewriteReferrer returns the new bytes of an entry whose links match
// accepts, with those links pointing at to, and how many links changed
// (0: nothing to write). It first tries a minimal edit of the file as it
// is on disk (tree.RewriteLinksInText), so that a hand-written note keeps
// its formatting; the edit is used only when the file parses back exactly
// as the rendered rewrite would, otherwise the rewritten entry is
// rendered.
func (c *Curator) rewriteReferrer(ref *tree.Entry, match func(string) bool, to string) ([]byte, *tree.Entry, int, error) {
	ne, n := rewriteLinks(ref, match, to)
	if n == 0 {
		return nil, nil, 0, nil
	}
	data, parsed, err := c.render(ne)
	if err != nil {
		return nil, nil, 0, err
	}
	if raw, rerr := c.FS.ReadFile(ref.Path); rerr == nil {
		if edited, ok := tree.RewriteLinksInText(string(raw), ref, match, to); ok && len(edited) <= c.maxBytes() {
			if pe, perr := tree.ParseEntry(ref.Path, []byte(edited)); perr == nil && reflect.DeepEqual(pe, parsed) {
				return []byte(edited), pe, n, nil
			}
		}
	}
	return data, parsed, n, nil
}
