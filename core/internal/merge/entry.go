package merge

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/tree"
)

// partConflict is one part of an entry that both sides changed
// differently: which part, and what each side had there.
type partConflict struct {
	Part         string
	Ours, Theirs string
}

// entries merges two versions of an entry with their common ancestor (nil
// when both sides added it) by the rules of docs/sync.md: the front matter
// by rule, facts as a union by statement, text three-way. It returns the
// merged entry (ours where a part conflicts) and the conflicts.
func entries(base, ours, theirs *tree.Entry) (*tree.Entry, []partConflict) {
	if base == nil {
		base = &tree.Entry{}
	}
	m := &entryMerger{}
	e := ours.Clone()
	e.Title = m.scalar("title", base.Title, ours.Title, theirs.Title)
	e.Summary = m.scalar("summary", base.Summary, ours.Summary, theirs.Summary)
	e.Tags = list3(base.Tags, ours.Tags, theirs.Tags)
	e.Related = list3(base.Related, ours.Related, theirs.Related)
	e.Keywords = list3(base.Keywords, ours.Keywords, theirs.Keywords)
	e.CreatedAt = ours.CreatedAt
	if e.CreatedAt.IsZero() || (!theirs.CreatedAt.IsZero() && theirs.CreatedAt.Before(e.CreatedAt)) {
		e.CreatedAt = theirs.CreatedAt
	}
	e.UpdatedAt = ours.UpdatedAt
	if theirs.UpdatedAt.After(e.UpdatedAt) {
		e.UpdatedAt = theirs.UpdatedAt
	}
	e.Extra = m.extra(base.Extra, ours.Extra, theirs.Extra)
	e.Comments = comments3(base.Comments, ours.Comments, theirs.Comments)

	e.Reason = reason3(base.Reason, ours.Reason, theirs.Reason)
	rc := &e.RawConcept
	rc.Task = m.text("rawConcept.task", base.RawConcept.Task, ours.RawConcept.Task, theirs.RawConcept.Task)
	rc.Changes = m.text("rawConcept.changes", base.RawConcept.Changes, ours.RawConcept.Changes, theirs.RawConcept.Changes)
	rc.Files = list3(base.RawConcept.Files, ours.RawConcept.Files, theirs.RawConcept.Files)
	rc.Flow = m.text("rawConcept.flow", base.RawConcept.Flow, ours.RawConcept.Flow, theirs.RawConcept.Flow)
	rc.Timestamp = m.scalar("rawConcept.timestamp", base.RawConcept.Timestamp, ours.RawConcept.Timestamp, theirs.RawConcept.Timestamp)
	rc.Author = m.text("rawConcept.author", base.RawConcept.Author, ours.RawConcept.Author, theirs.RawConcept.Author)
	for _, p := range api.NarrativeParts {
		part := "narrative." + p.Name
		if p.Name == "text" {
			part = "narrative" // the narrative's own text
		}
		*p.Get(&e.Narrative) = m.text(part, *p.Get(&base.Narrative), *p.Get(&ours.Narrative), *p.Get(&theirs.Narrative))
	}
	e.Facts = m.facts(base.Facts, ours.Facts, theirs.Facts)
	e.Snippets = list3(base.Snippets, ours.Snippets, theirs.Snippets)
	e.LegacyRelations = list3(base.LegacyRelations, ours.LegacyRelations, theirs.LegacyRelations)
	e.Preamble = m.text("preamble", base.Preamble, ours.Preamble, theirs.Preamble)
	e.Other = m.sections(base.Other, ours.Other, theirs.Other)
	return e, m.conflicts
}

// entryMerger collects the conflicts of one entry's merge.
type entryMerger struct {
	conflicts []partConflict
}

func (m *entryMerger) conflict(part, ours, theirs string) {
	m.conflicts = append(m.conflicts, partConflict{Part: part, Ours: ours, Theirs: theirs})
}

// scalar merges a one-line value: a change on one side wins, the same
// change on both is taken once, two different changes conflict (ours kept).
func (m *entryMerger) scalar(part, base, ours, theirs string) string {
	switch {
	case ours == theirs || theirs == base:
		return ours
	case ours == base:
		return theirs
	}
	m.conflict(part, ours, theirs)
	return ours
}

// text merges a section's text line by line (Text3); each conflicting
// region is a conflict.
func (m *entryMerger) text(part, base, ours, theirs string) string {
	out, cs := field3(base, ours, theirs)
	for _, c := range cs {
		m.conflict(part, strings.TrimSuffix(c.Ours, "\n"), strings.TrimSuffix(c.Theirs, "\n"))
	}
	return out
}

// field3 is Text3 on the trimmed text of a field: each text gets a final
// line break, so that a line added after a last line without one does not
// change that line too.
func field3(base, ours, theirs string) (string, []Conflict) {
	nl := func(s string) string {
		if s != "" && !strings.HasSuffix(s, "\n") {
			return s + "\n"
		}
		return s
	}
	out, cs := Text3(nl(base), nl(ours), nl(theirs))
	return strings.TrimSuffix(out, "\n"), cs
}

// reason3 merges the Reason section: it says why the entry was last
// written, so when both sides wrote it differently both reasons are kept
// (in a fixed order), which is no conflict.
func reason3(base, ours, theirs string) string {
	out, cs := field3(base, ours, theirs)
	if len(cs) == 0 {
		return out
	}
	a, b := strings.TrimSpace(ours), strings.TrimSpace(theirs)
	if b < a {
		a, b = b, a
	}
	return a + "\n\n" + b
}

// maturityRank orders the maturity levels; unknown values rank lowest.
var maturityRank = map[string]int{"draft": 1, "validated": 2, "core": 3}

// extra merges the unknown front-matter keys: the keys as a list3, each
// value three-way, except the lifecycle keys a ByteRover tree keeps, which
// take the larger value (importance, accessCount, updateCount) or the
// higher maturity. A key one side removed and the other changed is kept.
func (m *entryMerger) extra(base, ours, theirs []tree.KeyValue) []tree.KeyValue {
	val := func(l []tree.KeyValue) ([]string, map[string]string) {
		keys := make([]string, 0, len(l))
		vals := map[string]string{}
		for _, kv := range l {
			if _, dup := vals[kv.Key]; !dup {
				keys = append(keys, kv.Key)
				vals[kv.Key] = kv.Value
			}
		}
		return keys, vals
	}
	bk, bv := val(base)
	ok, ov := val(ours)
	tk, tv := val(theirs)
	keys := list3(bk, ok, tk)
	keys = keepEdited(keys, bv, ov, tv)
	out := make([]tree.KeyValue, 0, len(keys))
	for _, k := range keys {
		o, inO := ov[k]
		t, inT := tv[k]
		var v string
		switch {
		case !inT:
			v = o
		case !inO:
			v = t
		default:
			v = m.lifecycleValue(k, bv[k], o, t)
		}
		out = append(out, tree.KeyValue{Key: k, Value: v})
	}
	return out
}

// lifecycleValue merges one front-matter value present on both sides.
func (m *entryMerger) lifecycleValue(key, base, ours, theirs string) string {
	switch strings.ToLower(key) {
	case "importance", "accesscount", "updatecount":
		a, errA := strconv.ParseFloat(ours, 64)
		b, errB := strconv.ParseFloat(theirs, 64)
		if errA == nil && errB == nil {
			if b > a {
				return theirs
			}
			return ours
		}
	case "maturity":
		a, b := maturityRank[strings.ToLower(ours)], maturityRank[strings.ToLower(theirs)]
		if a > 0 && b > 0 {
			if b > a {
				return theirs
			}
			return ours
		}
	}
	return m.scalar("front matter key "+key, base, ours, theirs)
}

// keepEdited adds to keys, sorted, the keys list3 dropped because one side
// removed them while the other changed their value: a change beats a
// delete. Sorting keeps the merge symmetric.
func keepEdited(keys []string, base, ours, theirs map[string]string) []string {
	var back []string
	for _, side := range []map[string]string{ours, theirs} {
		for k := range side {
			if slices.Contains(keys, k) || slices.Contains(back, k) {
				continue
			}
			b, inB := base[k]
			o, inO := ours[k]
			t, inT := theirs[k]
			if inB && ((inO && o != b && !inT) || (inT && t != b && !inO)) {
				back = append(back, k)
			}
		}
	}
	slices.Sort(back)
	return append(keys, back...)
}

// facts merges the facts as a union by statement: a fact either side
// added is in, a fact one side removed is out, and a fact whose subject or
// category both sides changed differently conflicts (ours kept).
func (m *entryMerger) facts(base, ours, theirs []api.Fact) []api.Fact {
	idx := func(l []api.Fact) ([]string, map[string]string, map[string]api.Fact) {
		keys := make([]string, 0, len(l))
		lines := map[string]string{}
		byKey := map[string]api.Fact{}
		for _, f := range l {
			k := strings.TrimSpace(f.Statement)
			if k == "" {
				k = strings.TrimSpace(f.Subject)
			}
			if _, dup := byKey[k]; dup {
				continue
			}
			keys = append(keys, k)
			byKey[k] = f
			lines[k] = tree.FactText(f)
		}
		return keys, lines, byKey
	}
	bk, bl, _ := idx(base)
	ok, ol, of := idx(ours)
	tk, tl, tf := idx(theirs)
	keys := keepEdited(list3(bk, ok, tk), bl, ol, tl)
	out := make([]api.Fact, 0, len(keys))
	for _, k := range keys {
		o, inO := of[k]
		t, inT := tf[k]
		switch {
		case !inT:
			out = append(out, o)
		case !inO:
			out = append(out, t)
		case m.scalar("facts", bl[k], ol[k], tl[k]) == tl[k]:
			out = append(out, t)
		default:
			out = append(out, o)
		}
	}
	return out
}

// sections merges the unknown "## " sections, matched by heading (and the
// how-manieth of that heading): the sections as a list3, each body
// three-way, a section one side removed and the other changed kept. Two
// sides' merge conflict sections are joined, never a conflict themselves.
func (m *entryMerger) sections(base, ours, theirs []tree.Section) []tree.Section {
	idx := func(l []tree.Section) ([]string, map[string]string, map[string]string) {
		keys := make([]string, 0, len(l))
		bodies, heads := map[string]string{}, map[string]string{}
		seen := map[string]int{}
		for _, s := range l {
			h := strings.ToLower(strings.TrimSpace(s.Heading))
			seen[h]++
			k := h + "\x00" + strconv.Itoa(seen[h])
			keys = append(keys, k)
			bodies[k], heads[k] = s.Body, s.Heading
		}
		return keys, bodies, heads
	}
	bk, bb, _ := idx(base)
	ok, ob, oh := idx(ours)
	tk, tb, th := idx(theirs)
	keys := keepEdited(list3(bk, ok, tk), bb, ob, tb)
	out := make([]tree.Section, 0, len(keys))
	for _, k := range keys {
		o, inO := ob[k]
		t, inT := tb[k]
		h, hasO := oh[k]
		if !hasO {
			h = th[k]
		}
		var body string
		switch {
		case !inT:
			body = o
		case !inO:
			body = t
		case tree.IsConflictSection(h):
			var cs []Conflict
			if body, cs = field3(bb[k], o, t); len(cs) > 0 {
				body = union(o+"\n", t+"\n")
				body = strings.TrimSuffix(body, "\n")
			}
		default:
			body = m.text(fmt.Sprintf("section %q", h), bb[k], o, t)
		}
		out = append(out, tree.Section{Heading: h, Body: body})
	}
	return out
}

// comments3 merges the front matter's comments as a list: one added or
// removed on either side is added or removed (two equal comments of one
// key are one).
func comments3(base, ours, theirs []tree.KeyValue) []tree.KeyValue {
	enc := func(l []tree.KeyValue) []string {
		out := make([]string, len(l))
		for i, kv := range l {
			out[i] = kv.Value + "\n" + kv.Key // a comment ends at its line; a key may hold a line break
		}
		return out
	}
	var out []tree.KeyValue
	for _, s := range list3(enc(base), enc(ours), enc(theirs)) {
		v, k, _ := strings.Cut(s, "\n")
		out = append(out, tree.KeyValue{Key: k, Value: v})
	}
	return out
}
