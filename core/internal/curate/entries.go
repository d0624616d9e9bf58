package curate

import (
	"cmp"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/tree"
)

// titleFromName makes a title from an entry file name: "invoice_retry.md"
// gives "invoice retry".
func titleFromName(p string) string {
	name := strings.TrimSuffix(path.Base(p), path.Ext(p))
	t := strings.TrimSpace(strings.ReplaceAll(name, "_", " "))
	if t == "" {
		return name
	}
	return t
}

// newEntry builds the entry an ADD writes.
func newEntry(p string, op api.Operation, v valid, now time.Time) *tree.Entry {
	title := strings.TrimSpace(op.Title)
	if title == "" {
		title = titleFromName(cmp.Or(v.given, p))
	}
	e := &tree.Entry{
		Path:      p,
		Title:     title,
		Summary:   strings.TrimSpace(op.Summary),
		Reason:    strings.TrimSpace(op.Reason),
		CreatedAt: now,
		UpdatedAt: now,
	}
	c := op.Content
	e.Related = withoutKeys(v.relations, p)
	e.Tags = uniqueStrings(nil, c.Tags)
	e.Keywords = uniqueStrings(nil, c.Keywords)
	e.Snippets = uniqueSnippets(nil, c.Snippets)
	e.Facts = uniqueFacts(nil, c.Facts)
	if c.Narrative != nil {
		e.Narrative = trimNarrative(*c.Narrative)
	}
	if c.RawConcept != nil {
		e.RawConcept = trimRawConcept(*c.RawConcept)
	}
	applyNote(e, op.Note)
	return e
}

// applyNote sets what an ingested note's own front matter says (the
// note's dates, its keys the entry has no field for) over what the engine
// set; keys of the entry that the note does not name are kept.
func applyNote(e *tree.Entry, n *api.NoteMeta) {
	if n == nil {
		return
	}
	if !n.CreatedAt.IsZero() {
		e.CreatedAt = n.CreatedAt.UTC()
	}
	if !n.UpdatedAt.IsZero() {
		e.UpdatedAt = n.UpdatedAt.UTC()
	}
	for _, kv := range n.Extra {
		i := slices.IndexFunc(e.Extra, func(x tree.KeyValue) bool { return x.Key == kv.Key })
		if i < 0 {
			e.Extra = append(e.Extra, kv)
		} else {
			e.Extra[i] = kv
		}
	}
}

// updateEntry applies an operation on top of an existing entry: the title,
// summary and content the operation gives replace the old ones, and
// whatever the old entry had that the new content lacks is carried over and
// named in the returned list. Unknown front-matter keys, the preamble and
// unknown sections are kept; createdAt is kept (set to now when missing).
// self lists paths that must not appear as relations (the entry itself).
func updateEntry(old *tree.Entry, op api.Operation, rels []string, now time.Time, self ...string) (*tree.Entry, []string) {
	e := old.Clone()
	var carried []string
	if t := strings.TrimSpace(op.Title); t != "" {
		e.Title = t
	}
	if s := strings.TrimSpace(op.Summary); s != "" {
		e.Summary = s
	}
	e.Reason = strings.TrimSpace(op.Reason)
	if e.CreatedAt.IsZero() {
		e.CreatedAt = now
	}
	e.UpdatedAt = now
	c := op.Content
	self = append(self, e.Path)

	// Relations: the new ones first, then every old one the new list lacks.
	related := withoutKeys(rels, self...)
	n := len(related)
	related = appendRelations(related, withoutKeys(old.Related, self...))
	legacy := legacyRelations(related, old.LegacyRelations, self...)
	if len(related) > n || len(legacy) > 0 {
		carried = append(carried, "relations")
	}
	e.Related, e.LegacyRelations = related, legacy

	union := func(name string, oldList, newList []string, uniq func(a, b []string) []string) []string {
		out := uniq(nil, newList)
		k := len(out)
		out = uniq(out, oldList)
		if len(out) > k {
			carried = append(carried, name)
		}
		return out
	}
	e.Snippets = union("snippets", old.Snippets, c.Snippets, uniqueSnippets)
	facts := uniqueFacts(nil, c.Facts)
	k := len(facts)
	if facts = uniqueFacts(facts, old.Facts); len(facts) > k {
		carried = append(carried, "facts")
	}
	e.Facts = facts
	e.Tags = union("tags", old.Tags, c.Tags, uniqueStrings)
	e.Keywords = union("keywords", old.Keywords, c.Keywords, uniqueStrings)

	// Narrative and raw concept: each part the operation gives replaces the
	// old one; the others are carried.
	var nn api.Narrative
	if c.Narrative != nil {
		nn = trimNarrative(*c.Narrative)
	}
	for _, p := range api.NarrativeParts {
		nv, ov := p.Get(&nn), p.Get(&old.Narrative)
		if *nv == "" && strings.TrimSpace(*ov) != "" {
			*nv = *ov
			carried = append(carried, "narrative."+p.Name)
		}
	}
	e.Narrative = nn
	var nr api.RawConcept
	if c.RawConcept != nil {
		nr = trimRawConcept(*c.RawConcept)
	}
	for _, f := range rawConceptFields {
		nv, ov := f.get(&nr), f.get(&old.RawConcept)
		if *nv == "" && strings.TrimSpace(*ov) != "" {
			*nv = *ov
			carried = append(carried, "rawConcept."+f.name)
		}
	}
	if len(nr.Files) == 0 && len(old.RawConcept.Files) > 0 {
		nr.Files = slices.Clone(old.RawConcept.Files)
		carried = append(carried, "rawConcept.files")
	}
	e.RawConcept = nr
	applyNote(e, op.Note)
	return e, carried
}

// mergeEntries folds source into target (docs/design.md, Curation): relations, tags,
// keywords, facts, snippets and front-matter comments unioned, target's
// first (the source's comments after the last key); narratives,
// preambles and same-named sections concatenated, target first; the
// summary kept from the target (or the source when the target has none);
// the source's title, summary and unknown keys that the target's replace
// kept as comments ("# <source> had title: …");
// the earliest createdAt. Relations between the two are dropped.
func mergeEntries(target, source *tree.Entry, now time.Time) *tree.Entry {
	e := target.Clone()
	self := []string{target.Path, source.Path}
	e.Related = appendRelations(withoutKeys(target.Related, self...), withoutKeys(source.Related, self...))
	e.LegacyRelations = legacyRelations(e.Related, append(slices.Clone(target.LegacyRelations), source.LegacyRelations...), self...)
	e.Tags = uniqueStrings(uniqueStrings(nil, target.Tags), source.Tags)
	e.Keywords = uniqueStrings(uniqueStrings(nil, target.Keywords), source.Keywords)
	e.Facts = uniqueFacts(uniqueFacts(nil, target.Facts), source.Facts)
	e.Snippets = uniqueSnippets(uniqueSnippets(nil, target.Snippets), source.Snippets)
	for _, p := range api.NarrativeParts {
		*p.Get(&e.Narrative) = joinText(*p.Get(&target.Narrative), *p.Get(&source.Narrative), "\n\n")
	}
	rc := &e.RawConcept
	rc.Task = joinText(rc.Task, source.RawConcept.Task, "\n")
	rc.Changes = joinText(rc.Changes, source.RawConcept.Changes, "\n")
	rc.Flow = joinText(rc.Flow, source.RawConcept.Flow, "\n")
	rc.Author = joinText(rc.Author, source.RawConcept.Author, ", ")
	if rc.Timestamp == "" {
		rc.Timestamp = source.RawConcept.Timestamp
	}
	rc.Files = uniqueStrings(uniqueStrings(nil, rc.Files), source.RawConcept.Files)
	had := func(key, v string) {
		if v = strings.TrimSpace(v); v != "" {
			e.Comments = append(e.Comments, tree.KeyValue{Value: " " + source.Path + " had " + key + ": " + v})
		}
	}
	if !strings.EqualFold(strings.TrimSpace(source.Title), strings.TrimSpace(target.Title)) {
		had("title", source.Title)
	}
	if strings.TrimSpace(e.Summary) == "" {
		e.Summary = source.Summary
	} else if strings.TrimSpace(source.Summary) != strings.TrimSpace(e.Summary) {
		had("summary", source.Summary)
	}
	if e.CreatedAt.IsZero() || (!source.CreatedAt.IsZero() && source.CreatedAt.Before(e.CreatedAt)) {
		e.CreatedAt = source.CreatedAt
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = now
	}
	e.UpdatedAt = now
	for _, kv := range source.Extra {
		i := slices.IndexFunc(e.Extra, func(x tree.KeyValue) bool { return x.Key == kv.Key })
		switch {
		case i < 0:
			e.Extra = append(e.Extra, kv)
		case e.Extra[i].Value != kv.Value:
			had(kv.Key, kv.Value) // the target's value stays; the source's is not dropped
		}
	}
	for _, kv := range source.Comments {
		// After the target's keys: they spoke of the source's.
		if kv.Key = ""; !slices.Contains(e.Comments, kv) {
			e.Comments = append(e.Comments, kv)
		}
	}
	e.Preamble = joinText(e.Preamble, source.Preamble, "\n\n")
	for _, s := range source.Other {
		i := slices.IndexFunc(e.Other, func(x tree.Section) bool { return strings.EqualFold(x.Heading, s.Heading) })
		if i < 0 {
			e.Other = append(e.Other, s)
			continue
		}
		e.Other[i].Body = joinText(e.Other[i].Body, s.Body, "\n\n")
	}
	return e
}

// joinText joins two texts with sep, skipping empty ones and a b equal to a.
func joinText(a, b, sep string) string {
	ta, tb := strings.TrimSpace(a), strings.TrimSpace(b)
	switch {
	case tb == "" || tb == ta:
		return a
	case ta == "":
		return b
	}
	return strings.TrimRight(a, " \t\n") + sep + strings.TrimLeft(b, " \t\n")
}

func trimNarrative(n api.Narrative) api.Narrative {
	for _, p := range api.NarrativeParts {
		s := p.Get(&n)
		*s = strings.TrimSpace(*s)
	}
	return n
}

func trimRawConcept(r api.RawConcept) api.RawConcept {
	for _, f := range rawConceptFields {
		s := f.get(&r)
		*s = strings.TrimSpace(*s)
	}
	r.Files = uniqueStrings(nil, r.Files)
	return r
}

// relKey is the comparable form of a relation: without a legacy "@", spaces
// or a leading "/".
func relKey(r string) string {
	return strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(r), "@"), "/")
}

// sameRelation reports whether two relations name the same entry, with or
// without the ".md" suffix.
func sameRelation(a, b string) bool {
	ka, kb := relKey(a), relKey(b)
	return ka == kb || ka+".md" == kb || ka == kb+".md"
}

func containsKey(list []string, r string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return sameRelation(x, r) })
}

// withoutKeys returns list without empty relations and those naming one of drop.
func withoutKeys(list []string, drop ...string) []string {
	var out []string
	for _, r := range list {
		if relKey(r) == "" || slices.ContainsFunc(drop, func(d string) bool { return sameRelation(r, d) }) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// appendRelations appends the relations of add that dst lacks.
func appendRelations(dst, add []string) []string {
	for _, r := range add {
		if relKey(r) != "" && !containsKey(dst, r) {
			dst = append(dst, r)
		}
	}
	return dst
}

// legacyRelations returns the relations of list, in order and without
// duplicates, that related lacks and that name none of drop: the legacy
// @path lines kept beside a related: list.
func legacyRelations(related, list []string, drop ...string) []string {
	var out []string
	for _, r := range withoutKeys(list, drop...) {
		if !containsKey(related, r) && !containsKey(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// uniqueStrings appends the trimmed, non-empty strings of add that dst lacks.
func uniqueStrings(dst, add []string) []string {
	for _, s := range add {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(dst, s) {
			dst = append(dst, s)
		}
	}
	return dst
}

// uniqueSnippets is uniqueStrings for snippets, whose inner whitespace
// matters: only surrounding blank lines are dropped.
func uniqueSnippets(dst, add []string) []string {
	for _, s := range add {
		s = strings.Trim(s, "\n")
		if strings.TrimSpace(s) == "" {
			continue
		}
		if !slices.ContainsFunc(dst, func(x string) bool { return strings.TrimSpace(x) == strings.TrimSpace(s) }) {
			dst = append(dst, s)
		}
	}
	return dst
}

// uniqueFacts appends the facts of add that dst lacks (same subject and
// statement, ignoring case and surrounding spaces).
func uniqueFacts(dst, add []api.Fact) []api.Fact {
	for _, f := range add {
		f = api.Fact{Subject: strings.TrimSpace(f.Subject), Statement: strings.TrimSpace(f.Statement), Category: strings.TrimSpace(f.Category)}
		if f.Statement == "" && f.Subject == "" {
			continue
		}
		if !slices.ContainsFunc(dst, func(x api.Fact) bool {
			return strings.EqualFold(x.Subject, f.Subject) && strings.EqualFold(x.Statement, f.Statement)
		}) {
			dst = append(dst, f)
		}
	}
	return dst
}
