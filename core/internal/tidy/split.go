package tidy

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/tree"
)

// partOverhead is what a part's file takes besides its text (front matter,
// headings, reason), subtracted from the size limit when parts are packed.
const partOverhead = 600

// unit is a piece of an entry that stays whole in a split: the text under
// one "##" heading, one narrative part, one group of facts, or a
// paragraph-aligned piece of one of them that is over the limit alone.
type unit struct {
	label     string // names the part it opens
	narrative api.Narrative
	facts     []api.Fact
	size      int
}

// splits proposes splitting every entry of over (scan: those whose
// rendered size is over limit) not claimed yet into parts of at most
// limit each, by its sections and fact groups (units), every line of the
// entry in one part. It returns the entries it read.
func splits(t Tree, paths []string, over []int, limit int, claimed map[string]bool, emit func(api.TidySuggestion)) int {
	taken := map[string]bool{}
	reads := 0
	for _, i := range over {
		q := paths[i]
		if claimed[q] {
			continue
		}
		reads++
		e, ok := t.Catalog.Get(q)
		if !ok {
			continue
		}
		// The file may have changed since the scan read it.
		size := len(tree.Render(e))
		if size <= limit || !splittable(t, e) {
			continue
		}
		s, ok := split(t, e, size, limit, taken)
		if !ok {
			continue
		}
		claimed[q] = true
		emit(s)
	}
	return reads
}

// splittable reports whether curate operations can carry everything e
// holds into parts: not when its front matter has keys curate does not
// write or comments, a relation is not a path, or it came from an
// ingested source (the next ingest of which would write it whole again).
func splittable(t Tree, e *tree.Entry) bool {
	if len(e.Extra)+len(e.Comments) > 0 || len(t.Catalog.Sources(e.Path)) > 0 {
		return false
	}
	for _, r := range append(slices.Clone(e.Related), e.LegacyRelations...) {
		if _, err := api.CleanPath(strings.TrimPrefix(strings.TrimSpace(r), "@")); err != nil {
			return false
		}
	}
	return true
}

// units cuts e into its units, in the order the entry holds them.
func units(e *tree.Entry, limit int) []unit {
	var out []unit
	text := func(label, part, s string) {
		for _, chunk := range chunks(s, limit) {
			u := unit{label: label, size: len(chunk)}
			*partOf(&u.narrative, part) = chunk
			out = append(out, u)
		}
	}
	text("", "text", joinNonEmpty(e.Preamble, e.Narrative.Text))
	for _, p := range api.NarrativeParts[1:] {
		text(p.Name, p.Name, *p.Get(&e.Narrative))
	}
	for _, s := range e.Other {
		text(s.Heading, "text", "**"+strings.TrimSpace(s.Heading)+"**\n\n"+strings.TrimSpace(s.Body))
	}
	// Facts by category, in the order the categories first appear.
	var cats []string
	byCat := map[string][]api.Fact{}
	for _, f := range e.Facts {
		k := strings.ToLower(strings.TrimSpace(f.Category))
		if _, ok := byCat[k]; !ok {
			cats = append(cats, k)
		}
		byCat[k] = append(byCat[k], f)
	}
	for _, c := range cats {
		label := "facts"
		if c != "" {
			label = "facts: " + c
		}
		u := unit{label: label}
		for _, f := range byCat[c] {
			n := len(tree.FactText(f)) + 1
			if u.size+n > limit-partOverhead && len(u.facts) > 0 {
				out = append(out, u)
				u = unit{label: label}
			}
			u.facts = append(u.facts, f)
			u.size += n
		}
		out = append(out, u)
	}
	return out
}

func partOf(n *api.Narrative, name string) *string {
	for _, p := range api.NarrativeParts {
		if p.Name == name {
			return p.Get(n)
		}
	}
	panic("tidy: no narrative part " + name)
}

func joinNonEmpty(a, b string) string {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// chunks cuts text at blank lines (outside code blocks) into pieces of at most limit −
// partOverhead bytes where it can (a paragraph over it stays whole).
func chunks(text string, limit int) []string {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	max := limit - partOverhead
	if len(text) <= max {
		return []string{text}
	}
	var out []string
	var cur strings.Builder
	for _, para := range tree.Paragraphs(text) {
		if cur.Len() > 0 && cur.Len()+2+len(para) > max {
			out = append(out, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteString("\n\n")
		}
		cur.WriteString(para)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// split is the suggestion that splits e. The first part keeps e's title,
// summary, raw concept, snippets, relations and reason and ends at e's path, so
// that what linked to e links to it; the others are new entries beside
// it, related both ways. The operations: ADD each other part, ADD the
// first at a new path, DELETE e, MOVE the first part to e's path: a
// failure before the DELETE leaves e whole (the engine removes the parts
// added), and after it the first part is at its new path; nothing is
// lost either way.
func split(t Tree, e *tree.Entry, size, limit int, taken map[string]bool) (api.TidySuggestion, bool) {
	var parts [][]unit
	cur, curSize := []unit(nil), partOverhead+len(e.Summary)+len(e.Title)
	for _, s := range e.Snippets {
		curSize += len(s)
	}
	for _, u := range units(e, limit) {
		if len(cur) > 0 && curSize+u.size > limit {
			parts = append(parts, cur)
			cur, curSize = nil, partOverhead
		}
		cur = append(cur, u)
		curSize += u.size
	}
	if len(cur) > 0 {
		parts = append(parts, cur)
	}
	if len(parts) < 2 {
		return api.TidySuggestion{}, false
	}
	folder, stem := path.Dir(e.Path), strings.TrimSuffix(path.Base(e.Path), ".md")
	reason := fmt.Sprintf("tidy: %s is %d bytes, over %d: split into %d entries by its sections and fact groups", e.Path, size, limit, len(parts))
	s := api.TidySuggestion{Kind: api.TidySplit, Paths: []string{e.Path}, Reason: reason[len("tidy: "):]}
	var rest []string
	for i, p := range parts[1:] {
		title := fmt.Sprintf("%s (%s)", e.Title, p[0].label)
		if p[0].label == "" {
			title = fmt.Sprintf("%s (part %d)", e.Title, i+2)
		}
		at := uniquePath(t.Catalog, taken, folder, tree.EntryName(title))
		rest = append(rest, at)
		c := content(p)
		c.Relations = []string{e.Path}
		c.Tags, c.Keywords = e.Tags, e.Keywords
		s.Operations = append(s.Operations, api.Operation{Type: api.OpAdd, Path: at, Title: title, Content: c, Reason: reason})
	}
	first := content(parts[0])
	if rc := e.RawConcept; rc.Task+rc.Changes+rc.Flow+rc.Timestamp+rc.Author != "" || len(rc.Files) > 0 {
		first.RawConcept = &rc
	}
	first.Snippets = e.Snippets
	first.Tags, first.Keywords = e.Tags, e.Keywords
	for _, r := range append(slices.Clone(e.Related), e.LegacyRelations...) {
		first.Relations = append(first.Relations, strings.TrimPrefix(strings.TrimSpace(r), "@"))
	}
	first.Relations = append(first.Relations, rest...)
	tmp := uniquePath(t.Catalog, taken, folder, stem+"_part_1")
	// The first part's reason keeps the entry's own, which a split
	// would otherwise replace.
	firstReason := reason
	if r := strings.TrimSpace(e.Reason); r != "" {
		firstReason += "\n\n" + r
	}
	// Curate writes an entry under its name's slug: a name a person gave
	// ("My Runbook.md"), or one over a slug's length, would not be the
	// path the first part ends at, and links to the entry would break.
	// Nor does curate create an entry outside domain/topic[/subtopic]: the
	// parts of an entry kept elsewhere could never be written.
	for _, p := range append([]string{e.Path, tmp}, rest...) {
		if stem := strings.TrimSuffix(path.Base(p), ".md"); tree.EntryName(stem) != stem || (p != e.Path && tree.CheckNewEntryPath(p) != nil) {
			return api.TidySuggestion{}, false
		}
	}
	s.Operations = append(s.Operations,
		api.Operation{Type: api.OpAdd, Path: tmp, Title: e.Title, Summary: e.Summary, Content: first, Reason: firstReason},
		api.Operation{Type: api.OpDelete, Path: e.Path, Reason: reason},
		api.Operation{Type: api.OpMove, Path: tmp, To: e.Path, Reason: reason})
	s.Paths = append(s.Paths, rest...)
	return s, true
}

// content is the content of a part made of us.
func content(us []unit) api.Content {
	var c api.Content
	var n api.Narrative
	for _, u := range us {
		for _, p := range api.NarrativeParts {
			*p.Get(&n) = joinNonEmpty(*p.Get(&n), *p.Get(&u.narrative))
		}
		c.Facts = append(c.Facts, u.facts...)
	}
	if n != (api.Narrative{}) {
		c.Narrative = &n
	}
	return c
}
