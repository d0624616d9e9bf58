package ingest

import (
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/curate"
	"github.com/arbormem/arbor/core/internal/tree"
)

// A link is one note's link to another, as written: a markdown link
// "[x](../other.md)" by a path relative to the note, or a wikilink
// "[[other]]" by name (a file name, a path from the root of the notes, or
// an alias), heading and label dropped.
type link struct {
	wiki   bool
	target string
}

// spec writes a link as a note's manifest record keeps it while it names no
// note: "[[name]]" or the path as written.
func (l link) spec() string {
	if l.wiki {
		return "[[" + l.target + "]]"
	}
	return l.target
}

// parseSpec reads a link written by spec.
func parseSpec(s string) link {
	if t, ok := strings.CutPrefix(s, "[["); ok {
		return link{wiki: true, target: strings.TrimSuffix(t, "]]")}
	}
	return link{target: s}
}

var (
	// mdLink matches "[text](target)" and "[text](<target> "title")".
	mdLink = &lazyRegexp{pattern: `\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`}
	// wikiLink matches "[[name]]", "[[name#heading]]", "[[name|label]]"
	// and embeds "![[name]]".
	wikiLink = &lazyRegexp{pattern: `\[\[([^\]|#\n]*)(?:#[^\]|\n]*)?(?:\|[^\]\n]*)?\]\]`}
	// codeSpan matches inline code, whose brackets are not links.
	codeSpan = &lazyRegexp{pattern: "`[^`\n]*`"}
)

// noteLinks lists the links of a note's text to other notes, outside fenced
// and inline code, in order and once each: markdown links to a relative
// ".md" or ".markdown" path (not a URL, not an anchor of the same note) and
// wikilinks.
func noteLinks(text string) []link {
	var out []link
	add := func(l link) {
		if l.target != "" && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	var code fence
	for _, l := range strings.Split(text, "\n") {
		if code.line(l) || code.open() {
			continue
		}
		l = codeSpan.get().ReplaceAllString(l, "")
		// Both kinds, in the order they are written.
		type at struct {
			pos int
			l   link
		}
		var found []at
		for _, m := range wikiLink.get().FindAllStringSubmatchIndex(l, -1) {
			found = append(found, at{m[0], link{wiki: true, target: strings.TrimSpace(l[m[2]:m[3]])}})
		}
		for _, m := range mdLink.get().FindAllStringSubmatchIndex(l, -1) {
			if t, ok := pathLink(l[m[2]:m[3]]); ok {
				found = append(found, at{m[0], link{target: t}})
			}
		}
		slices.SortFunc(found, func(a, b at) int { return a.pos - b.pos })
		for _, f := range found {
			add(f.l)
		}
	}
	return out
}

// pathLink is the note a markdown link's target names, relative to the
// note, and false for a URL (a scheme), a path from elsewhere, an anchor of
// the same note or a file that is not markdown.
func pathLink(t string) (string, bool) {
	if strings.Contains(t, ":") || strings.HasPrefix(t, "/") || strings.HasPrefix(t, "#") {
		return "", false
	}
	t, _, _ = strings.Cut(t, "#")
	t, _, _ = strings.Cut(t, "?")
	if u, err := url.PathUnescape(t); err == nil {
		t = u
	}
	ext := strings.ToLower(path.Ext(t))
	return t, ext == ".md" || ext == ".markdown"
}

// noteRef is a note a link may name: the entry it became (its first, for
// a note cut in parts) and its aliases.
type noteRef struct {
	entry   string
	aliases []string
	// recorded: known from the manifest, not placed by this call; its
	// entry may have moved since (resolve looks for it).
	recorded bool
}

// known records that the note name became entries (paths): a link naming
// it resolves to the first. Other formats are not notes.
func (p *Planner) known(name string, aliases, paths []string) {
	if api.FormatOf(name) != api.FormatMarkdown || len(paths) == 0 {
		return
	}
	if p.notes == nil {
		p.notes, p.byBase, p.byAlias = map[string]noteRef{}, map[string][]string{}, map[string][]string{}
	}
	p.notes[name] = noteRef{entry: paths[0], aliases: aliases}
	index := func(m map[string][]string, k string) {
		if !slices.Contains(m[k], name) {
			m[k] = append(m[k], name)
		}
	}
	index(p.byBase, path.Base(stemOf(name)))
	for _, a := range aliases {
		index(p.byAlias, strings.ToLower(a))
	}
}

// primary is the first of a note's entries, in path order (a note cut in
// parts lists part 1 first).
func primary(paths []string) []string {
	if len(paths) == 0 {
		return nil
	}
	return []string{slices.Min(paths)}
}

// resolve finds the note a link of note from names, and the entry it
// became, and false when it names no note of this call or of the manifest. A path link names a file
// relative to the note. A wikilink names a note by its path from the root
// of the notes, else by the end of its path (its file name), else by an
// alias, case-insensitively, with or without ".md", as Obsidian reads them;
// among several, the one in the note's own folder, else the shortest path,
// else the first by name.
func (p *Planner) resolve(from string, l link) (name, entry string, ok bool) {
	if !l.wiki {
		name = path.Join(path.Dir(from), l.target)
		if _, ok := p.notes[name]; !ok {
			return "", "", false
		}
		return name, p.entryOf(name), true
	}
	want := strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(l.target, ".md"), ".markdown"))
	dir := path.Dir(from)
	// The notes a name may mean, by index (byBase, byAlias), not by a scan
	// of every note: a vault's links are many.
	pick := func(names []string, match func(name string) bool) string {
		best := ""
		for _, name := range names {
			if !match(name) {
				continue
			}
			switch a, b := path.Dir(name) == dir, path.Dir(best) == dir; {
			case best == "", a && !b, a == b && (len(name) < len(best) || len(name) == len(best) && name < best):
				best = name
			}
		}
		return best
	}
	same := p.byBase[path.Base(want)]
	for _, match := range []func(name string) bool{
		func(name string) bool { return stemOf(name) == want },
		func(name string) bool { return strings.HasSuffix(stemOf(name), "/"+want) },
	} {
		if best := pick(same, match); best != "" {
			return best, p.entryOf(best), true
		}
	}
	if best := pick(p.byAlias[strings.ToLower(l.target)], func(name string) bool {
		return slices.ContainsFunc(p.notes[name].aliases, func(a string) bool { return strings.EqualFold(a, l.target) })
	}); best != "" {
		return best, p.entryOf(best), true
	}
	return "", "", false
}

// Follow plans, in the plan of each file of the call, the UPDATEs that give
// the entries of notes ingested before (not in sent) the relations their
// pending links now resolve to, to the notes of that file: a note whose
// link named a note not yet ingested (one the CLI sends in a later call of
// the same folder) is linked once that note comes. The entry keeps its
// text and its times; the reason stays the note's.
func (p *Planner) Follow(plans []FilePlan, sent map[string]bool) {
	byName := map[string]int{}
	for i, fp := range plans {
		if fp.taken != nil {
			byName[fp.Name] = i
		}
	}
	for _, source := range slices.Sorted(maps.Keys(p.Manifest.Sources)) {
		rec := p.Manifest.Sources[source]
		if sent[source] || len(rec.Pending) == 0 {
			continue
		}
		for _, at := range slices.Sorted(maps.Keys(rec.Pending)) {
			e, ok := p.Catalog.Get(at)
			if !ok {
				continue // gone or moved: the note's next ingest links it
			}
			per := map[int]*followUp{}
			rels := map[int][]string{}
			for _, spec := range rec.Pending[at] {
				name, entry, ok := p.resolve(source, parseSpec(spec))
				i, here := byName[name]
				if !ok || !here || entry == at {
					continue
				}
				if per[i] == nil {
					read, intact, piece := p.stamp(at)
					if piece == "" {
						piece = rec.Entries[at]
					}
					per[i] = &followUp{source: source, path: at, fresh: !read || intact, piece: piece}
				}
				per[i].resolved = append(per[i].resolved, spec)
				if !slices.Contains(rels[i], entry) {
					rels[i] = append(rels[i], entry)
				}
			}
			for _, i := range slices.Sorted(maps.Keys(per)) {
				fp := &plans[i]
				fp.Follow = append(fp.Follow, api.Operation{
					Type: api.OpUpdate, Path: at, Content: api.Content{Relations: rels[i]},
					Reason: tree.IngestReason + source, Note: &api.NoteMeta{UpdatedAt: e.UpdatedAt},
					Stamp: per[i].stamp(),
				})
				fp.follows = append(fp.follows, *per[i])
			}
		}
	}
}

// RecordFollow drops from the records of the notes that Follow linked the
// pending links it resolved (applied[i] for Follow[i]); a failed UPDATE
// keeps them for the next ingest. It returns the number that failed.
func (p *Planner) RecordFollow(fp FilePlan, applied []curate.Applied) int {
	failed := 0
	for i, f := range fp.follows {
		if i >= len(applied) || applied[i].Status != api.StatusSuccess {
			failed++
			continue
		}
		rec := p.Manifest.Sources[f.source]
		left := slices.DeleteFunc(slices.Clone(rec.Pending[f.path]), func(s string) bool { return slices.Contains(f.resolved, s) })
		if len(left) == 0 {
			delete(rec.Pending, f.path)
		} else {
			rec.Pending[f.path] = left
		}
		if len(rec.Pending) == 0 {
			rec.Pending = nil
		}
	}
	return failed
}

// entryOf is the entry the note name became, where it lives now: an entry
// the manifest records that is no longer there was moved (a MOVE keeps its
// file name), and is found by its provenance as followMoves finds it.
func (p *Planner) entryOf(name string) string {
	n := p.notes[name]
	if !n.recorded || p.Catalog.Has(n.entry) {
		return n.entry
	}
	for _, q := range p.provenanceIndex()[name] {
		if _, recorded := p.owners[q]; !recorded && path.Base(q) == path.Base(n.entry) && p.Catalog.Has(q) {
			return q
		}
	}
	return n.entry
}

// stemOf is a note's name without its extension, lowercase.
func stemOf(name string) string {
	return strings.ToLower(strings.TrimSuffix(name, path.Ext(name)))
}
