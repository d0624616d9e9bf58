package curate

import (
	"reflect"
	"regexp"
	"strings"

	"github.com/arbormem/arbor/core/tree"
)

// wikiLink matches [[target]], [[target|alias]], [[target#heading]] and
// embeds (![[...]]), as core/tree reads them.
var wikiLink = regexp.MustCompile(`(!?)\[\[([^\[\]\n]+?)\]\]`)

// inlineCode matches `code` spans, whose brackets are not links.
var inlineCode = regexp.MustCompile("`[^`\n]*`")

// linkMatcher tells whether a raw link, as written in an entry, resolves
// to one entry path. It resolves exactly as tree.Catalog does: the entry
// with that path; that path + ".md"; the only entry matching ignoring case,
// ".md" and spaces-vs-underscores (links holding a "/"); or the only entry
// with such a base name (links without "/"); a leading "@", "/" or "./"
// is ignored.
type linkMatcher struct {
	path    string
	entries map[string]bool
	byPath  map[string]int // link key -> number of entries
	byBase  map[string]int
	pathOf  map[string]string // link key -> the entry, when unique
	baseOf  map[string]string
}

func newLinkMatcher(cat *tree.Catalog, p string) *linkMatcher {
	m := &linkMatcher{path: p, entries: map[string]bool{}, byPath: map[string]int{}, byBase: map[string]int{},
		pathOf: map[string]string{}, baseOf: map[string]string{}}
	for _, q := range cat.Paths() {
		m.entries[q] = true
		k, b := linkKey(q), linkKey(q[strings.LastIndexByte(q, '/')+1:])
		m.byPath[k]++
		m.pathOf[k] = q
		m.byBase[b]++
		m.baseOf[b] = q
	}
	return m
}

// linkKey is the loose form links are matched in: lowercase, no ".md",
// spaces as underscores.
func linkKey(s string) string {
	s = strings.TrimSuffix(strings.ToLower(s), ".md")
	return strings.ReplaceAll(s, " ", "_")
}

// linkTarget strips a link's surrounding space, legacy "@" and leading
// "/" or "./".
func linkTarget(raw string) string {
	t := strings.TrimPrefix(strings.TrimSpace(raw), "@")
	for {
		switch {
		case strings.HasPrefix(t, "./"):
			t = t[2:]
		case strings.HasPrefix(t, "/"):
			t = t[1:]
		default:
			return t
		}
	}
}

// resolve returns the entry a raw link points at.
func (m *linkMatcher) resolve(raw string) (string, bool) {
	t := linkTarget(raw)
	switch {
	case t == "":
		return "", false
	case m.entries[t]:
		return t, true
	case m.entries[t+".md"]:
		return t + ".md", true
	}
	k := linkKey(t)
	if strings.Contains(t, "/") {
		if m.byPath[k] == 1 {
			return m.pathOf[k], true
		}
	} else if m.byBase[k] == 1 {
		return m.baseOf[k], true
	}
	return "", false
}

// matches reports whether a raw link resolves to the matcher's entry.
func (m *linkMatcher) matches(raw string) bool {
	p, ok := m.resolve(raw)
	return ok && p == m.path
}

// rewriteLinks returns a copy of e whose links to m's entry point at to
// instead (related:, legacy @path lines and wikilinks outside code), and
// how many links it rewrote. Relations that become duplicates or point at
// e itself are dropped.
func rewriteLinks(e *tree.Entry, m *linkMatcher, to string) (*tree.Entry, int) {
	n := 0
	out := cloneEntry(e)
	rel := func(list []string) []string {
		var res []string
		for _, r := range list {
			if m.matches(r) {
				n++
				r = to
			}
			res = append(res, r)
		}
		return res
	}
	related := appendRelations(nil, withoutKeys(rel(out.Related), out.Path))
	var legacy []string
	for _, r := range withoutKeys(rel(out.LegacyRelations), out.Path) {
		if !containsKey(related, r) && !containsKey(legacy, r) {
			legacy = append(legacy, r)
		}
	}
	out.Related, out.LegacyRelations = related, legacy

	link := wikiRewriter(m, to, &n)
	forEachText(out, func(s string) string { return mapOutsideCode(s, link) })
	return out, n
}

// wikiRewriter returns a function that rewrites one wikilink, when it
// points at m's entry, to [[to without .md]], keeping its "#heading" and
// "|alias" parts, and counts the rewrites in n.
func wikiRewriter(m *linkMatcher, to string, n *int) func(string) string {
	toName := strings.TrimSuffix(to, ".md")
	return func(s string) string {
		sub := wikiLink.FindStringSubmatch(s)
		name, rest := sub[2], ""
		if i := strings.IndexAny(name, "#|"); i >= 0 {
			name, rest = name[:i], name[i:]
		}
		if !m.matches(strings.TrimSuffix(name, `\`)) {
			return s
		}
		*n++
		if strings.HasSuffix(name, `\`) {
			rest = `\` + rest
		}
		return sub[1] + "[[" + toName + rest + "]]"
	}
}

// mapOutsideCode replaces every wikilink of text that is outside fenced
// code blocks and inline code spans by f(link).
func mapOutsideCode(text string, f func(string) string) string {
	if !strings.Contains(text, "[[") {
		return text
	}
	lines := strings.Split(text, "\n")
	var fc fenceScanner
	for i, l := range lines {
		if !fc.outside(l) || !strings.Contains(l, "[[") {
			continue
		}
		var b strings.Builder
		last := 0
		for _, span := range inlineCode.FindAllStringIndex(l, -1) {
			b.WriteString(wikiLink.ReplaceAllStringFunc(l[last:span[0]], f))
			b.WriteString(l[span[0]:span[1]])
			last = span[1]
		}
		b.WriteString(wikiLink.ReplaceAllStringFunc(l[last:], f))
		lines[i] = b.String()
	}
	return strings.Join(lines, "\n")
}

// forEachText replaces every free text of e that core/tree reads
// wikilinks from by f(text).
func forEachText(e *tree.Entry, f func(string) string) {
	e.Preamble = f(e.Preamble)
	e.Reason = f(e.Reason)
	e.RawConcept.Task = f(e.RawConcept.Task)
	e.RawConcept.Changes = f(e.RawConcept.Changes)
	e.RawConcept.Flow = f(e.RawConcept.Flow)
	for _, p := range narrativeParts {
		s := p.get(&e.Narrative)
		*s = f(*s)
	}
	for i := range e.Facts {
		e.Facts[i].Subject = f(e.Facts[i].Subject)
		e.Facts[i].Statement = f(e.Facts[i].Statement)
	}
	for i := range e.Other {
		e.Other[i].Heading = f(e.Other[i].Heading)
		e.Other[i].Body = f(e.Other[i].Body)
	}
}

// fenceScanner tracks whether successive lines are inside a fenced code
// block (``` or ~~~, CommonMark rules), as core/tree does.
type fenceScanner struct {
	open bool
	ch   byte
	n    int
}

// outside consumes a line and reports whether it is ordinary markdown.
func (s *fenceScanner) outside(line string) bool {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if s.open {
		j := i
		for j < len(line) && line[j] == s.ch {
			j++
		}
		if j-i >= s.n && strings.TrimSpace(line[j:]) == "" {
			s.open = false
		}
		return false
	}
	if i >= len(line) || (line[i] != '`' && line[i] != '~') {
		return true
	}
	c, j := line[i], i
	for j < len(line) && line[j] == c {
		j++
	}
	if j-i < 3 || (c == '`' && strings.IndexByte(line[j:], '`') >= 0) {
		return true
	}
	s.open, s.ch, s.n = true, c, j-i
	return false
}

// rewriteReferrer returns the new bytes of an entry that links to m's
// entry, with those links pointing at to, and how many links changed
// (0: nothing to write). It first tries a minimal edit of the file as it
// is on disk, so that a hand-written note keeps its formatting; the edit
// is used only when the file parses back exactly as the rendered rewrite
// would, otherwise the rewritten entry is rendered.
func (c *Curator) rewriteReferrer(ref *tree.Entry, m *linkMatcher, to string) ([]byte, *tree.Entry, int, error) {
	ne, n := rewriteLinks(ref, m, to)
	if n == 0 {
		return nil, nil, 0, nil
	}
	data, parsed, err := c.render(ne)
	if err != nil {
		return nil, nil, 0, err
	}
	if raw, rerr := c.FS.ReadFile(ref.Path); rerr == nil {
		if edited, ok := editLinks(string(raw), ref, m, to); ok && len(edited) <= c.maxBytes() {
			if pe, perr := tree.ParseEntry(ref.Path, []byte(edited)); perr == nil && reflect.DeepEqual(pe, parsed) {
				return []byte(edited), pe, n, nil
			}
		}
	}
	return data, parsed, n, nil
}

// editLinks rewrites, in the text of a file, the related: items of its
// front matter, its legacy @path lines and its wikilinks that point at m's
// entry. It reports false when it found nothing to change.
func editLinks(text string, e *tree.Entry, m *linkMatcher, to string) (string, bool) {
	lines := strings.Split(text, "\n")
	fmEnd := 0 // lines[:fmEnd] are the front matter, delimiters included
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if strings.TrimSpace(l) == "---" {
			for j := i + 1; j < len(lines); j++ {
				if strings.TrimSpace(lines[j]) == "---" {
					fmEnd = j + 1
					break
				}
			}
		}
		break
	}
	fm := strings.Join(lines[:fmEnd], "\n")
	body := strings.Join(lines[fmEnd:], "\n")
	repl := strings.ReplaceAll(to, "$", "$$")
	for _, r := range e.Related {
		if m.matches(r) {
			re := regexp.MustCompile(`(?m)(^|[\s\[,'"])` + regexp.QuoteMeta(r) + `([\s\],'"]|$)`)
			fm = re.ReplaceAllString(fm, "${1}"+repl+"${2}")
		}
	}
	for _, r := range e.LegacyRelations {
		if m.matches(r) {
			re := regexp.MustCompile(`(?m)^([ \t]*(?:[-*+][ \t]+)?@[ \t]*)` + regexp.QuoteMeta(r) + `([ \t\r]*)$`)
			body = re.ReplaceAllString(body, "${1}"+repl+"${2}")
		}
	}
	n := 0
	body = mapOutsideCode(body, wikiRewriter(m, to, &n))
	out := body
	if fmEnd > 0 {
		out = fm + "\n" + body
	}
	return out, out != text
}
