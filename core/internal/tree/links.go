package tree

import (
	"regexp"
	"strings"
)

// wikiLinkRe matches [[target]], [[target|alias]], [[target#heading]] and
// embeds (![[...]]).
var wikiLinkRe = regexp.MustCompile(`(!?)\[\[([^\[\]\n]+?)\]\]`)

// inlineCodeRe matches `code` spans, whose brackets are not links.
var inlineCodeRe = regexp.MustCompile("`[^`\n]*`")

// Links returns every relation target the entry declares, raw (as written):
// related:, legacy @path lines and [[wikilinks]], de-duplicated, in order.
//
// Wikilinks are taken from the preamble, Reason, Raw Concept (task,
// changes, flow), Narrative, facts and Other sections, outside code; a
// wikilink contributes its target only ("[[a#h|b]]" gives "a"). Embeds of
// non-markdown files (![[image.png]]) are attachments, not relations, and
// are skipped.
func (e *Entry) Links() []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, r := range e.Related {
		add(r)
	}
	for _, r := range e.LegacyRelations {
		add(r)
	}
	for _, t := range e.linkTexts() {
		for _, w := range wikiLinks(*t) {
			add(w)
		}
	}
	return out
}

// linkTexts points at the free texts of e that may hold wikilinks, in
// file order; Links reads them and RewriteLinks rewrites them.
func (e *Entry) linkTexts() []*string {
	n := &e.Narrative
	texts := []*string{&e.Preamble, &e.Reason, &e.RawConcept.Task, &e.RawConcept.Changes, &e.RawConcept.Flow,
		&n.Text, &n.Structure, &n.Dependencies, &n.Highlights, &n.Rules, &n.Examples, &n.Diagrams}
	for i := range e.Facts {
		texts = append(texts, &e.Facts[i].Subject, &e.Facts[i].Statement)
	}
	for i := range e.Other {
		texts = append(texts, &e.Other[i].Heading, &e.Other[i].Body)
	}
	return texts
}

// linkLines replaces each of lines that may hold a wikilink (outside
// fenced code blocks, holding "[[") by f(line).
func linkLines(lines []string, f func(line string) string) {
	var sc fenceScanner
	for i, l := range lines {
		if sc.outside(l) && strings.Contains(l, "[[") {
			lines[i] = f(l)
		}
	}
}

// wikiLinks returns the wikilink targets in text, skipping code.
func wikiLinks(text string) []string {
	if !strings.Contains(text, "[[") {
		return nil
	}
	var out []string
	linkLines(splitLines(normalizeNewlines(text)), func(l string) string {
		for _, m := range wikiLinkRe.FindAllStringSubmatch(inlineCodeRe.ReplaceAllString(l, ""), -1) {
			t := wikiTarget(m[2])
			if t == "" {
				continue
			}
			if m[1] == "!" && !isNoteTarget(t) {
				continue
			}
			out = append(out, t)
		}
		return l
	})
	return out
}

// Relink maps a raw link (a relation as written, or a wikilink's target
// as Links reports it: "[[a#h|b]]" gives "a") to the entry path it must
// point at instead, and reports false for a link that stays as it is.
type Relink func(raw string) (to string, ok bool)

// RewriteLinks returns a copy of e whose links relink maps point at their
// new paths, and how many links it rewrote; e is not changed. It covers
// what Links reads: related: items and legacy @path lines become the new
// path, and a wikilink outside code becomes [[new path without ".md"]],
// keeping its embed "!", its "#heading" and "|alias" parts and a "\|"
// escape (as written inside tables). Relations are replaced where they
// stand: whether one that now repeats another, or names e itself, is kept
// is the caller's choice.
func (e *Entry) RewriteLinks(relink Relink) (*Entry, int) {
	out := e.Clone()
	n := 0
	for _, list := range [][]string{out.Related, out.LegacyRelations} {
		for i, r := range list {
			if to, ok := relink(r); ok {
				list[i] = to
				n++
			}
		}
	}
	link := wikiRewriter(relink, &n)
	for _, t := range out.linkTexts() {
		*t = mapWikiLinks(*t, link)
	}
	return out, n
}

// RewriteLinksInText makes the rewrite of RewriteLinks in text, the file
// e was parsed from, and changes nothing else, so that a hand-written
// note keeps its layout: a related: item of e that relink maps is
// replaced by its new path wherever it stands as a whole item in the front matter
// (between spaces, brackets, commas or quotes), a legacy relation on its
// "@path" line, and wikilinks outside code as RewriteLinks does. It
// reports false when nothing changed. The edit is textual and may not
// mean what RewriteLinks gives (an item spelled differently in YAML, a
// front matter behind a byte-order mark): a caller parses the result and
// compares it with the rendered rewrite before using it.
func RewriteLinksInText(text string, e *Entry, relink Relink) (string, bool) {
	head, _, closed := frontMatterEnd(text) // text[:head] is the front matter, delimiters included
	if !closed {
		head = 0
	}
	fm, body := text[:head], text[head:]
	for _, r := range e.Related {
		if to, ok := relink(r); ok {
			re := regexp.MustCompile(`(?m)(^|[\s\[,'"])` + regexp.QuoteMeta(r) + `([\s\],'"]|$)`)
			fm = re.ReplaceAllString(fm, "${1}"+strings.ReplaceAll(to, "$", "$$")+"${2}")
		}
	}
	for _, r := range e.LegacyRelations {
		if to, ok := relink(r); ok {
			re := regexp.MustCompile(`(?m)^([ \t]*(?:[-*+][ \t]+)?@[ \t]*)` + regexp.QuoteMeta(r) + `([ \t\r]*)$`)
			body = re.ReplaceAllString(body, "${1}"+strings.ReplaceAll(to, "$", "$$")+"${2}")
		}
	}
	n := 0
	body = mapWikiLinks(body, wikiRewriter(relink, &n))
	out := fm + body
	return out, out != text
}

// wikiRewriter returns a function that rewrites one wikilink, as matched
// by wikiLinkRe, when relink maps its target, to [[new path without .md]],
// keeping its "!", "#heading", "|alias" and "\|" parts, and counts the
// rewrites in n.
func wikiRewriter(relink Relink, n *int) func(string) string {
	return func(link string) string {
		sub := wikiLinkRe.FindStringSubmatch(link)
		name, rest := sub[2], ""
		if i := strings.IndexAny(name, "#|"); i >= 0 {
			name, rest = name[:i], name[i:]
		}
		t := wikiTarget(name)
		if t == "" {
			return link
		}
		to, ok := relink(t)
		if !ok {
			return link
		}
		*n++
		if strings.HasSuffix(name, `\`) {
			rest = `\` + rest
		}
		return sub[1] + "[[" + strings.TrimSuffix(to, ".md") + rest + "]]"
	}
}

// mapWikiLinks replaces every wikilink of text that is outside fenced
// code blocks and inline code spans by f(link). Lines are cut at "\n"
// only, so CRLF line endings are kept.
func mapWikiLinks(text string, f func(link string) string) string {
	if !strings.Contains(text, "[[") {
		return text
	}
	lines := strings.Split(text, "\n")
	linkLines(lines, func(l string) string {
		var b strings.Builder
		last := 0
		for _, span := range inlineCodeRe.FindAllStringIndex(l, -1) {
			b.WriteString(wikiLinkRe.ReplaceAllStringFunc(l[last:span[0]], f))
			b.WriteString(l[span[0]:span[1]])
			last = span[1]
		}
		b.WriteString(wikiLinkRe.ReplaceAllStringFunc(l[last:], f))
		return b.String()
	})
	return strings.Join(lines, "\n")
}

// wikiTarget is the part of a wikilink's inside before "#" or "|" (a
// "\|" escape, as written inside tables, counts as "|").
func wikiTarget(inner string) string {
	if i := strings.IndexAny(inner, "#|"); i >= 0 {
		inner = inner[:i]
	}
	return strings.TrimSpace(strings.TrimSuffix(inner, `\`))
}

// isNoteTarget reports a target naming a note (no extension, or .md).
func isNoteTarget(t string) bool {
	base := t[strings.LastIndexByte(t, '/')+1:]
	dot := strings.LastIndexByte(base, '.')
	return dot < 0 || isMD(base[dot:])
}

// Text returns the searchable body text of the entry (all sections, without
// markup noise): preamble, every section's text, facts and snippets, one
// per line. The reason comes last: it says why the entry was written, not
// what it knows, so an excerpt should reach it only when nothing else
// matches. Title, summary, tags and keywords are left out: the index holds
// them in fields of their own, and repeating them here would count every
// title word twice and fill excerpts with the title. Heading marks, "**" and
// wikilink brackets are removed; snippets are kept verbatim (code is what
// people search for).
func (e *Entry) Text() string {
	var parts []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	addText := func(s string) { add(plainText(s)) }
	addText(e.Preamble)
	rc := e.RawConcept
	addText(rc.Task)
	addText(rc.Changes)
	add(strings.Join(rc.Files, " "))
	addText(rc.Flow)
	add(rc.Author)
	n := e.Narrative
	for _, s := range []string{n.Text, n.Structure, n.Dependencies, n.Highlights, n.Rules, n.Examples, n.Diagrams} {
		addText(s)
	}
	for _, f := range e.Facts {
		if f.Subject != "" {
			addText(f.Subject + ": " + f.Statement)
		} else {
			addText(f.Statement)
		}
	}
	for _, s := range e.Snippets {
		add(s)
	}
	for _, o := range e.Other {
		addText(o.Heading)
		addText(o.Body)
	}
	addText(e.Reason)
	return strings.Join(parts, "\n")
}

// plainText strips the markdown marks that carry no words: a heading's
// marks, "**" and wikilink brackets ("[[a#h|b]]" reads "a h b"). It scans
// by hand rather than with wikiLinkRe: every entry's text goes through it
// when the index is built, and a line without marks is passed as it is.
func plainText(s string) string {
	if s == "" {
		return ""
	}
	s = normalizeNewlines(s)
	var b strings.Builder
	changed := false
	for pos := 0; pos <= len(s); {
		end := strings.IndexByte(s[pos:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += pos
		}
		line, ok := plainLine(s[pos:end])
		if ok && !changed {
			changed = true
			b.Grow(len(s))
			b.WriteString(s[:pos])
		}
		if changed {
			b.WriteString(line)
			if end < len(s) {
				b.WriteByte('\n')
			}
		}
		pos = end + 1
	}
	if !changed {
		return s
	}
	return b.String()
}

// plainLine is plainText of one line; ok reports a change.
func plainLine(l string) (string, bool) {
	changed := false
	if _, t, ok := parseHeading(l); ok {
		l, changed = t, true
	}
	if strings.Contains(l, "**") {
		l, changed = strings.ReplaceAll(l, "**", ""), true
	}
	if strings.Contains(l, "[[") {
		if w, ok := plainWikiLinks(l); ok {
			l, changed = w, true
		}
	}
	return l, changed
}

// plainWikiLinks replaces each wikilink of a line (what wikiLinkRe
// matches: "[[", then at least one character that is no bracket, then
// "]]", with an embed's "!" before it) by its words: the target with "#"
// read as a space, then the alias. ok reports a replacement.
func plainWikiLinks(l string) (string, bool) {
	var b strings.Builder
	last := 0 // l[:last] is written, or holds no wikilink
	for i := 0; ; {
		j := strings.Index(l[i:], "[[")
		if j < 0 {
			break
		}
		j += i
		k := j + 2
		for k < len(l) && l[k] != '[' && l[k] != ']' && l[k] != '\n' {
			k++
		}
		if k == j+2 || !strings.HasPrefix(l[k:], "]]") {
			i = j + 1
			continue
		}
		start := j
		if j > last && l[j-1] == '!' {
			start = j - 1
		}
		target, alias, _ := strings.Cut(l[j+2:k], "|")
		target = strings.ReplaceAll(strings.TrimSuffix(target, `\`), "#", " ")
		b.WriteString(l[last:start])
		b.WriteString(strings.TrimSpace(target + " " + alias))
		last = k + 2
		i = last
	}
	if last == 0 {
		return l, false
	}
	b.WriteString(l[last:])
	return b.String(), true
}
